"""Shared helpers of the pooling-family tests: one-layer IR nets with their constant inputs,
written where irpool and openvino both read them, and runs of both."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from conftest import irpool

from irpool.frontends.ir_writer import NetBuilder
from irpool.frontends.ir_xml import load
from irpool.model import Graph, element_type_of_numpy
from irpool.run import run_graph


def et(dtype: Any) -> str:
    name = np.dtype(dtype).name
    found = element_type_of_numpy(name)
    assert found is not None, name
    return found


def adaptive_net(
    reduce: str,
    shape: Sequence[int],
    sizes: Sequence[int],
    element_type: str = "f32",
    index: str = "i32",
    size_type: Any = np.int64,
    declared: Sequence[int] | None = None,
) -> NetBuilder:
    """Parameter -> AdaptiveAvgPool-8 / AdaptiveMaxPool-8 (output size a Const) -> Result(s);
    `declared` overrides the output dims the layer declares."""
    net = NetBuilder("adaptive")
    x = net.parameter("x", list(shape), element_type)
    size = net.const("size", np.asarray(sizes, dtype=size_type))
    dims = list(declared) if declared is not None else [*shape[:2], *sizes]
    if reduce == "mean":
        out = net.op("AdaptiveAvgPool", "opset8", "pool", {}, [x, size], [(dims, element_type)])
        net.result("values", out[0])
    else:
        outs = net.op(
            "AdaptiveMaxPool",
            "opset8",
            "pool",
            {"index_element_type": index},
            [x, size],
            [(dims, element_type), (dims, index)],
        )
        net.result("values", outs[0])
        net.result("indices", outs[1])
    return net


def reduce_net(
    kind: str,
    shape: Sequence[int],
    axes: Sequence[int],
    keep: bool,
    element_type: str = "f32",
    declared: Sequence[int] | None = None,
) -> NetBuilder:
    """Parameter -> Reduce<kind> (axes a Const) -> Result."""
    op, version = {
        "mean": ("ReduceMean", "opset1"),
        "max": ("ReduceMax", "opset1"),
        "sum": ("ReduceSum", "opset1"),
        "l1": ("ReduceL1", "opset4"),
        "l2": ("ReduceL2", "opset4"),
    }[kind]
    rank = len(shape)
    norm = {a % rank for a in axes} if rank else set()
    if keep:
        dims = [1 if i in norm else d for i, d in enumerate(shape)]
    else:
        dims = [d for i, d in enumerate(shape) if i not in norm]
    net = NetBuilder("reduce")
    x = net.parameter("x", list(shape), element_type)
    a = net.const("axes", np.asarray(axes, dtype=np.int64))
    out = net.op(
        op,
        version,
        "pool",
        {"keep_dims": "true" if keep else "false"},
        [x, a],
        [(list(declared) if declared is not None else dims, element_type)],
    )
    net.result("values", out[0])
    return net


def save(net: NetBuilder, folder: Any, name: str = "model") -> str:
    path = os.path.join(str(folder), f"{name}.xml")
    net.save(path, force=True)
    return path


def irpool_run(path: str, x: np.ndarray, convention: str | None = None) -> dict[str, np.ndarray]:
    graph: Graph = load(path)
    return run_graph(graph, x, convention).outputs


def openvino_run(path: str, inputs: Mapping[str, np.ndarray] | np.ndarray) -> dict[str, Any]:
    """Outputs of openvino's CPU plugin (f32 precision) by Result name."""
    import openvino as ov

    from irpool.oracles import openvino_rt

    model = openvino_rt.read_path(path)
    compiled = openvino_rt.compile_model(model)
    feeds = [inputs] if isinstance(inputs, np.ndarray) else list(inputs.values())
    values = openvino_rt.infer(compiled, feeds)
    names = [o.get_node().get_friendly_name() for o in compiled.outputs]
    del ov
    return dict(zip(names, values, strict=True))


def ov_lanes() -> int:
    """float32 lanes of openvino's reduction kernel on this machine (or under IRPOOL_OV_ISA):
    16 with AVX-512, 8 with AVX2."""
    from irpool.cpu import plugin_isa

    return plugin_isa().lanes


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes, dtypes and bits (any NaN equals any NaN; -0 differs from +0)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "f":
        nan = np.isnan(a) & np.isnan(b)
        bits = a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}")
        return bool(np.all(nan | bits))
    return bool(np.array_equal(a, b))


def random_values(rng: np.random.Generator, shape: Sequence[int], special: bool = False) -> Any:
    """float32 values of all magnitudes, with ties (small integers) mixed in; with `special`,
    NaN and -inf too."""
    shape = tuple(shape)
    x = (rng.standard_normal(shape) * np.exp(rng.standard_normal(shape) * 2)).astype(np.float32)
    ties = rng.random(shape) < 0.3
    x[ties] = rng.integers(-3, 4, int(ties.sum())).astype(np.float32)
    if special:
        x[rng.random(shape) < 0.1] = np.nan
        x[rng.random(shape) < 0.1] = -np.inf
    return x


def cli_run_layer(path: str, x: np.ndarray, folder: Path) -> Any:
    """`irpool run PATH --layer pool -i x.npy -o out.npz` on `x` (saved in `folder`): the
    arrays it saved."""
    np.save(folder / "x.npy", x)
    out = folder / "out.npz"
    proc = irpool("run", path, "--layer", "pool", "-i", str(folder / "x.npy"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    return np.load(out)


def cli_explain_layer(path: str) -> dict[str, Any]:
    """The layer `pool` as `irpool explain PATH --layer pool --json` describes it."""
    proc = irpool("explain", path, "--layer", "pool", "--json")
    assert proc.returncode == 0, proc.stderr
    layer: dict[str, Any] = json.loads(proc.stdout)["layers"][0]
    return layer
