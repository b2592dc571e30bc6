"""Fuzzing: mutated IR files never crash a command.

Every command either succeeds or exits 2 with exactly one line on stderr: never a traceback, never
an internal error (exit 70), within a time bound.  The default run draws a few hundred mutants
in-process; `pytest -m fuzz` (or IRPOOL_FUZZ=N) runs a long campaign through the real `irpool`
command with a memory limit (docs/testing.md).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import ROOT, sweep
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irpool.cli import main

BASES = [
    ROOT / "fixtures" / "ir" / "pool_zoo.xml",
    ROOT / "fixtures" / "ir" / "dynamic.xml",
    ROOT / "fixtures" / "ir" / "ranks.xml",
    ROOT / "fixtures" / "ir" / "integer_types.xml",
    ROOT / "fixtures" / "spec" / "avgpool-1-examples.xml",
    ROOT / "fixtures" / "divergences" / "d1_avgpool_ceil.xml",
]
TEXTS = [p.read_text() for p in BASES]
VALUES = [
    "",
    "-1",
    "0",
    "1",
    "2, 2",
    "2,2,2",
    "3, 0",
    "abc",
    "1e9",
    "99999999999999999999",
    " ",
    "ceil_torch",
    "CEIL",
    "same_upper",
    "valid",
    "notset",
    "true",
    "false",
    "?",
    "1..3",
    "opset0",
    "opset14",
    "opset99",
    "f16",
    "i64",
    "bf16",
    "&amp;",
    "...",
]


@st.composite
def mutants(draw: st.DrawFn) -> bytes:
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["attribute", "dim", "edge", "delete", "bytes", "truncate"]))
        if kind == "attribute":
            spans = [m.span(2) for m in re.finditer(r'(\s[\w-]+=")([^"]*)"', text)]
            if spans:
                lo, hi = draw(st.sampled_from(spans))
                text = text[:lo] + draw(st.sampled_from(VALUES)) + text[hi:]
        elif kind == "dim":
            spans = [m.span(1) for m in re.finditer(r"<dim>([^<]*)</dim>", text)]
            if spans:
                lo, hi = draw(st.sampled_from(spans))
                text = text[:lo] + draw(st.sampled_from([*VALUES, "7", "1000000"])) + text[hi:]
        elif kind == "edge":
            spans = [m.span(1) for m in re.finditer(r'(?:from|to)-(?:layer|port)="(\d+)"', text)]
            if spans:
                lo, hi = draw(st.sampled_from(spans))
                text = text[:lo] + str(draw(st.integers(0, 20))) + text[hi:]
        elif kind == "delete":
            tags = [m.span() for m in re.finditer(r"<(edge|dim|port|data)\b[^>]*/?>", text)]
            if tags:
                lo, hi = draw(st.sampled_from(tags))
                text = text[:lo] + text[hi:]
        elif kind == "bytes":
            at = draw(st.integers(0, max(0, len(text) - 1)))
            text = (
                text[:at]
                + draw(st.sampled_from(["<", ">", "&", '"', "\x00", "é", "]]>"]))
                + text[at + 1 :]
            )
        else:
            text = text[: draw(st.integers(0, len(text)))]
    return text.encode("utf-8", "replace")


def _in_process(args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(args)
    return code, err.getvalue()


def _commands(path: str, out: str) -> list[list[str]]:
    return [
        ["check", path],
        ["check", "--json", path],
        ["explain", path],
        ["run", path, "-o", out, "--force", "--max-elements", "100000"],
    ]


@settings(
    max_examples=int(os.environ.get("IRPOOL_FUZZ_QUICK", sweep(quick=40, full=150))),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
@given(mutant=mutants())
def test_mutated_ir_in_process(mutant: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.xml")
        with open(path, "wb") as handle:
            handle.write(mutant)
        for args in _commands(path, os.path.join(tmp, "o.npz")):
            code, err = _in_process(args)
            assert code in (0, 1, 2), f"{args[0]} exit {code}: {err}"
            if code == 2:
                assert err.count("\n") == 1 and "Traceback" not in err, err


def _limit_memory() -> None:
    limit = 2 * 1024**3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.fuzz
def test_mutated_ir_campaign(tmp_path: Path) -> None:
    """The long run: the real command, a 2 GiB address-space limit and 60 s per call."""
    count = int(os.environ.get("IRPOOL_FUZZ", "1000"))

    @settings(max_examples=count, deadline=None, suppress_health_check=list(HealthCheck))
    @given(mutant=mutants())
    def campaign(mutant: bytes) -> None:
        path = tmp_path / "m.xml"
        path.write_bytes(mutant)
        for args in _commands(str(path), str(tmp_path / "o.npz")):
            out = subprocess.run(
                [sys.executable, "-m", "irpool", *args],
                capture_output=True,
                text=True,
                timeout=60,
                preexec_fn=_limit_memory,
                cwd=ROOT,
            )
            assert out.returncode in (0, 1, 2), f"{args[0]}: {out.returncode} {out.stderr}"
            if out.returncode == 2:
                assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr

    campaign()
