"""openvino's CPU plugin on an AVX-512 CPU with AMX (IRPOOL_OV_ISA=avx512_amx), against 176
layers measured there (tests/data/openvino_cpu_amx): integer MaxPool-8/AvgPool-1 layers with one
and two channels, with and without a window wholly in the padding or the ceil overhang, and u8
pools read through a Convert to f32.  The machine running the tests need not have AMX: the
measurements are the truth, and irpool models that CPU whatever it runs on."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from test_fidelity import agree, irpool_outputs, openvino_outputs

from irpool.api import load
from irpool.cpu import ISAS, detect, plugin_isa
from irpool.errors import IrpoolError
from irpool.frontends.ir_writer import NetBuilder
from irpool.run import run_graph

DATA = Path(__file__).parent / "data" / "openvino_cpu_amx"
MEASURED = json.loads((DATA / "cases.json").read_text())
ARRAYS = dict(np.load(DATA / "arrays.npz"))


def _array(dtype: str, at: int, shape: list[int]) -> np.ndarray:
    flat = ARRAYS[dtype]
    return flat[at : at + int(np.prod(shape))].reshape(shape)


def _net(case: dict[str, Any]) -> tuple[str, bytes]:
    net = NetBuilder("probe")
    x = net.parameter("x", case["shape"], case["et"])
    data = {
        "strides": ",".join(map(str, case["strides"])),
        "pads_begin": ",".join(map(str, case["pads_begin"])),
        "pads_end": ",".join(map(str, case["pads_end"])),
        "kernel": ",".join(map(str, case["kernel"])),
        "rounding_type": case["rounding"],
        "auto_pad": "explicit",
    }
    any_shape = (-1,) * len(case["shape"])
    if case["op"] == "max":
        data.update(dilations="1,1", index_element_type="i32", axis="0")
        outs = [(any_shape, case["et"]), (any_shape, "i32")]
        y = net.op("MaxPool", "opset8", "pool", data, [x], outs)[0]
    else:
        data["exclude-pad"] = "false"
        y = net.op("AvgPool", "opset1", "pool", data, [x], [(any_shape, case["et"])])[0]
    if case.get("then") == "Convert f32":
        y = net.op(
            "Convert", "opset1", "cvt", {"destination_type": "f32"}, [y], [(any_shape, "f32")]
        )[0]
    net.result("out", y)
    return net.xml(), net.bin()


def _disagreements(tmp_path: Path) -> list[str]:
    """The measured layers irpool does not reproduce bit for bit (or refuse where openvino
    refused), under the ISA the environment names."""
    bad = []
    for case in MEASURED["cases"]:
        xml, weights = _net(case)
        (tmp_path / "net.xml").write_text(xml)
        (tmp_path / "net.bin").write_bytes(weights)
        x = _array(case["x"][0], case["x"][1], case["shape"])
        try:
            got: Any = run_graph(load(str(tmp_path / "net.xml")), {"x": x}).outputs["out"]
        except IrpoolError as e:
            got = e.message
        if "refused" in case:
            if not (isinstance(got, str) and "no kernel" in got):
                bad.append(f"{case['id']}: openvino refused, irpool {got!r}")
            continue
        want = _array(*case["out"])
        if isinstance(got, str) or got.dtype != want.dtype or not np.array_equal(got, want):
            bad.append(f"{case['id']}: irpool {got!r}, openvino {want.ravel().tolist()}")
    return bad


def test_the_measurements_are_whole() -> None:
    cases = MEASURED["cases"]
    assert len(cases) == 176
    assert sum("refused" in c for c in cases) == 14
    assert {"amx_tile", "amx_bf16", "avx512_bf16"} <= set(MEASURED["cpu_flags"])


def test_irpool_reproduces_every_measured_layer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IRPOOL_OV_ISA", "avx512_amx")
    assert plugin_isa().name == "avx512_amx" and plugin_isa().bf16_instructions
    assert _disagreements(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("isa,wrong", [("avx512_bf16", 0), ("avx512", 0), ("avx2", 24)])
def test_the_other_models_against_that_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isa: str, wrong: int
) -> None:
    """AVX-512 without AMX pools these layers as that CPU does (measured here on openvino
    itself, test_the_same_layers_against_the_openvino_here); AVX2's own rules (its integer jit's
    size condition, u8 pooled in u8) miss 24 of them, so the measurements tell the models
    apart."""
    monkeypatch.setenv("IRPOOL_OV_ISA", isa)
    bad = _disagreements(tmp_path)
    assert len(bad) == wrong, bad


@pytest.mark.oracle
@pytest.mark.slow
def test_the_same_layers_against_the_openvino_here(ov: ModuleType, tmp_path: Path) -> None:
    """The 176 layers on this machine's openvino, with irpool modelling this machine's CPU (AMX,
    AVX-512 or AVX2 alike): bit for bit, or both refuse."""
    bad = []
    for case in MEASURED["cases"]:
        xml, weights = _net(case)
        x = {"x": _array(case["x"][0], case["x"][1], case["shape"])}
        why = agree(irpool_outputs(tmp_path, xml, weights, x), openvino_outputs(xml, weights, x))
        if why is not None:
            bad.append(f"{case['id']}: {why}")
    assert bad == [], f"{plugin_isa().name}: {bad}"


FLAGS = frozenset(MEASURED["cpu_flags"])
AVX512 = {"AVX512F": True, "AVX512BW": True, "AVX512VL": True, "AVX512DQ": True}


@pytest.mark.parametrize(
    "features,flags,isa",
    [
        ({**AVX512, "AVX512BF16": True}, FLAGS, "avx512_amx"),
        ({**AVX512, "AVX512BF16": True}, FLAGS - {"amx_tile"}, "avx512_bf16"),
        ({**AVX512, "AVX512BF16": True}, frozenset(), "avx512_bf16"),
        (AVX512, FLAGS, "avx512"),
        ({**AVX512, "AVX512DQ": False}, FLAGS, "avx2"),
        ({"AVX2": True}, frozenset({"avx2"}), "avx2"),
    ],
)
def test_detection_from_the_cpu_flags(
    features: dict[str, bool], flags: frozenset[str], isa: str
) -> None:
    assert detect(features, flags) == isa
    assert isa in ISAS
