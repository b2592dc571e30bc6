"""The machine modelled is a value the plan is made from (Convention.target), chosen once where
irpool is entered: a plan made on a convention carrying a target does not read the CPU or the
environment, and --ov-isa on the command line is the same choice as IRPOOL_OV_ISA."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

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
