"""The machine modelled is a value the plan is made from (Convention.target), chosen once where
irpool is entered: a plan made on a convention carrying a target does not read the CPU or the
environment, and --ov-isa on the command line is the same choice as IRPOOL_OV_ISA."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import irpool

from irpool import conventions as conv
from irpool.families.reduce import ReduceParams, Reduction
from irpool.geometry import PoolParams, plan
from irpool.target import Target, isa_named

ROOT = Path(__file__).resolve().parents[1]


def _on(isa: str) -> conv.Convention:
    return replace(conv.CONVENTIONS["openvino"], target=Target(isa_named(isa, "test")))


def test_windowed_plan_follows_the_target_not_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """AVX2 rounds bfloat16 as ov::bfloat16 does (half up where the kept half is odd) and has
    no AVX512_BF16 flush; an AVX512_BF16 CPU rounds to nearest even and flushes (the measured
    rules in conventions.py's cpu_plugin_kernels).  IRPOOL_OV_ISA names the other one: the
    plan takes what its convention carries."""
    params = PoolParams("t", "mean", (2, 2), (2, 2), (1, 1), ((0, 0), (0, 0)))  # type: ignore[arg-type]
    for isa, other, round_, flush in (
        ("avx2", "avx512_bf16", "half_up_if_odd", False),
        ("avx512_bf16", "avx2", "nearest_even", True),
    ):
        monkeypatch.setenv("IRPOOL_OV_ISA", other)
        p = plan(params, (1, 3, 4, 4), _on(isa), dtype="bfloat16")
        assert (p.plugin_isa, p.bf16_round, p.bf16_flush) == (isa, round_, flush)


def test_reduction_plan_follows_the_target(monkeypatch: pytest.MonkeyPatch) -> None:
    """openvino's reduction folds in as many float32 lanes as one vector holds: 8 with AVX2,
    16 with AVX-512, whatever IRPOOL_OV_ISA says."""
    params = ReduceParams(op="ReduceSum-1", kind="sum", axes=(3,), keep=True)
    for isa, other, lanes in (("avx2", "avx512", 8), ("avx512", "avx2", 16)):
        monkeypatch.setenv("IRPOOL_OV_ISA", other)
        p = Reduction("sum").plan(params, (1, 3, 4, 64), "float32", _on(isa))
        assert (p.plugin_isa, p.lanes) == (isa, lanes)


def test_use_target_is_what_a_named_convention_carries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRPOOL_OV_ISA", "avx512")
    machine = Target(isa_named("avx2", "test"), tf_onednn=False, tf_onednn_bf16=False)
    with conv.use_target(machine):
        assert conv.get("openvino").target == machine
        assert conv.get("tf").target == machine
    assert conv.get("openvino").target is not None
    assert conv.get("openvino").target.isa.name == "avx512"  # type: ignore[union-attr]


@pytest.mark.parametrize("command", ["run", "explain"])
def test_ov_isa_option_is_the_environment_variable(command: str, tmp_path: Path) -> None:
    """`--ov-isa avx2` gives the bytes IRPOOL_OV_ISA=avx2 gives (the explain text names where
    the choice came from, so JSON is compared)."""
    model = str(ROOT / "fixtures" / "ir" / "families.xml")
    extra = ["-o", str(tmp_path / "o.npz"), "--force"] if command == "run" else []
    base = [sys.executable, "-m", "irpool", command, model, "--json", *extra]
    env = {k: v for k, v in __import__("os").environ.items() if k != "IRPOOL_OV_ISA"}
    by_env = subprocess.run(
        base, env={**env, "IRPOOL_OV_ISA": "avx2"}, capture_output=True, text=True
    )
    by_option = subprocess.run([*base, "--ov-isa", "avx2"], env=env, capture_output=True, text=True)
    assert by_env.returncode == by_option.returncode == 0, by_option.stderr
    assert by_env.stdout == by_option.stdout
    layers = json.loads(by_option.stdout)
    assert "avx2" in json.dumps(layers)


EMPTY_BF16_MAX = """[[sweep]]
name = "empty"
op = "MaxPool"
version = 1
shape = [1, 1, 4]
kernel = 2
strides = 2
pads_begin = 2
dtype = "bf16"
"""
"""One bfloat16 MaxPool whose first window lies wholly in the padding."""


@pytest.mark.parametrize(("isa", "first"), [("avx2", 0xFF80), ("avx512_bf16", 0xFF7F)])
def test_fixtures_ov_isa_writes_that_machines_outputs(isa: str, first: int, tmp_path: Path) -> None:
    """`fixtures --ov-isa` writes what openvino computes on the CPU named, over IRPOOL_OV_ISA:
    a bfloat16 max of an empty window is bfloat16's lowest (0xFF7F) on AVX-512 and float32's
    lowest rounded to bfloat16, -inf (0xFF80), on AVX2 (docs/semantics.md, "What the machine
    changes", measured on both), and index.json names the choice."""
    pytest.importorskip("ml_dtypes")
    from irpool.arrays import load_arrays

    grid = tmp_path / "g.toml"
    grid.write_text(EMPTY_BF16_MAX)
    other = "avx512_bf16" if isa == "avx2" else "avx2"
    env = {**os.environ, "IRPOOL_OV_ISA": other}
    out = tmp_path / "fx"
    done = irpool("fixtures", str(out), "--grid", str(grid), "--ov-isa", isa, env=env)
    assert done.returncode == 0, done.stderr
    index = json.loads((out / "index.json").read_text())
    assert index["openvino_cpu"] == {"isa": isa, "source": "--ov-isa"}
    values = load_arrays(str(out / "empty" / "expected.npz"))["values"]
    assert values.dtype.itemsize == 2 and int(values.view("<u2").flat[0]) == first


def test_check_takes_ov_isa_and_refuses_an_unknown_one() -> None:
    """check's findings are shapes, the same on every machine: --ov-isa is accepted and
    changes nothing; a name irpool does not model is one line and exit 2."""
    model = str(ROOT / "fixtures" / "ir" / "pool_zoo.xml")
    plain = irpool("check", model, "--json")
    chosen = irpool("check", model, "--json", "--ov-isa", "avx2")
    assert plain.returncode == chosen.returncode == 0, chosen.stderr
    assert plain.stdout == chosen.stdout
    for command in ("check", "fixtures"):
        where = [model] if command == "check" else ["out"]
        bad = irpool(command, *where, "--ov-isa", "avx9")
        assert bad.returncode == 2 and bad.stdout == ""
        assert bad.stderr.count("\n") == 1 and "--ov-isa" in bad.stderr
        assert "avx9" in bad.stderr and "Traceback" not in bad.stderr
