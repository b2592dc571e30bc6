"""Fuzzing the pooling families: mutants of fixtures/ir/families.xml (adaptive pools, reductions
and openvino's LPPool2d decomposition, its .bin beside each mutant) never crash a command: each
succeeds, reports findings or exits 2 with one line on stderr."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import test_fuzz as base
from conftest import sweep
from hypothesis import HealthCheck, given, settings

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = ROOT / "fixtures" / "ir" / "families.xml"


@settings(
    max_examples=int(os.environ.get("IRPOOL_FUZZ_QUICK", sweep(quick=25, full=80))),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
@given(mutant=base.mutants())
def test_mutated_family_ir_in_process(mutant: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.xml")
        with open(path, "wb") as handle:
            handle.write(mutant)
        shutil.copy(FAMILIES.with_suffix(".bin"), os.path.join(tmp, "m.bin"))
        for args in base._commands(path, os.path.join(tmp, "o.npz")):
            code, err = base._in_process(args)
            assert code in (0, 1, 2), f"{args[0]} exit {code}: {err}"
            if code == 2:
                assert err.count("\n") == 1 and "Traceback" not in err, err


def setup_module() -> None:
    """Draw the mutants from the families IR only (test_fuzz's own list stays as it is)."""
    base.TEXTS[:] = [FAMILIES.read_text()]


def teardown_module() -> None:
    base.TEXTS[:] = [p.read_text() for p in base.BASES]
