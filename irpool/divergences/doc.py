"""docs/divergences.md: the table as markdown, and the matrix of what irpool computes for each
named case under each system's convention (`python -m irpool.divergences`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import conventions as conv
from ..cases import CASES, Case, ir_net
from ..errors import IrpoolError
from ..frontends.ir_xml import parse_text
from ..geometry import plan
from ..kernel import pool
from ..model import element_type_of_numpy
from ..ops import onnx as onnx_ops
from ..ops import torch as torch_ops
from ..shapes import infer
from . import TABLE


def table_markdown() -> list[str]:
    """The table of docs/divergences.md (what each id means)."""
    lines = [
        "## Known divergences",
        "",
        "| id | what differs | between | measured |",
        "|---|---|---|---|",
    ]
    for d in TABLE:
        lines.append(f"| {d.id} | {d.title} | {d.separates} | {d.measured} |")
    return lines


SYSTEMS = (("openvino", "OpenVINO"), ("onnxruntime", "onnxruntime"), ("torch", "PyTorch"))


def _input(case: Case) -> np.ndarray:
    return np.array(case.input, dtype=case.dtype).reshape(case.shape)


def compute(case: Case, system: str) -> list[np.ndarray] | str | None:
    """What irpool computes for `case` as `system` would, or a refusal, or None if the system
    cannot express the case."""
    x = _input(case)
    try:
        if system == "openvino" and case.openvino is not None:
            layer = infer(
                parse_text(
                    ir_net(case.openvino, x.shape, element_type_of_numpy(case.dtype) or "f32"),
                    "case",
                )
            )
            p = layer.pooling[0].bound.plan(x.shape, x.dtype)
        elif system == "onnxruntime" and case.onnx is not None:
            expected = case.expected.get("onnxruntime")
            if expected is not None and expected.refuses:
                return f"refuses ({expected.refuses})"
            spec = onnx_ops.select(case.onnx.op, case.onnx.domain, case.onnx.opset)
            p = plan(onnx_ops.params(spec, case.onnx.attrs, x.ndim), x.shape, "onnx", dtype=x.dtype)
        elif system == "torch" and case.torch is not None:
            params = torch_ops.params(case.torch.function, **case.torch.kwargs)
            p = plan(params, x.shape, "torch", dtype=x.dtype)
        else:
            return None
    except IrpoolError as e:
        return f"refuses ({e.message})"
    values, indices = pool(x, p)
    return [values] + ([indices] if indices is not None else [])


def _format(values: np.ndarray, digits: int = 4) -> str:
    flat = values.astype(np.float64).ravel()

    def one(v: float) -> str:
        if math.isnan(v):
            return "NaN"
        if v == 0 and math.copysign(1, v) < 0:
            return "-0"
        if abs(v) > 1e30:  # a type's lowest value: four digits say which
            return f"{v:.4g}"
        return f"{v:.{digits}g}"

    return "[" + ", ".join(one(float(v)) for v in flat) + "]"


def _cell(result: list[np.ndarray] | str | None, digits: int = 4) -> str:
    if result is None:
        return "-"
    if isinstance(result, str):
        return result
    text = _format(result[0], digits)
    if len(result) > 1:
        text += f" idx {_format(result[1])}"
    return text


@dataclass(frozen=True)
class KernelRow:
    """One ONNX node whose numbers depend on the onnxruntime kernel that runs it."""

    key: str
    op: str
    attrs: dict[str, object]
    shape: tuple[int, ...]
    input: tuple[float, ...]


NAN = math.nan


NAN_ROWS = (
    KernelRow("D8-1d", "MaxPool", {"kernel_shape": [2]}, (1, 1, 4), (5, NAN, 1, 2)),
    KernelRow(
        "D8-2d",
        "MaxPool",
        {"kernel_shape": [1, 4], "pads": [0, 1, 0, 0]},
        (1, 1, 1, 4),
        (5, NAN, 1, 2),
    ),
    KernelRow(
        "D8-2d-last",
        "MaxPool",
        {"kernel_shape": [1, 2], "strides": [1, 2]},
        (1, 1, 1, 4),
        (5, NAN, 1, 2),
    ),
    KernelRow(
        "D8-2d-restart",
        "MaxPool",
        {"kernel_shape": [1, 3]},
        (1, 1, 1, 7),
        (NAN, 1, 2, 3, 4, NAN, 6),
    ),
    KernelRow("D8-global", "MaxPool", {"kernel_shape": [1, 4]}, (1, 1, 1, 4), (5, NAN, 1, 2)),
    KernelRow(
        "D8-inf",
        "MaxPool",
        {"kernel_shape": [1, 2], "pads": [0, 0, 0, 1]},
        (1, 1, 1, 3),
        (-math.inf, -math.inf, -math.inf),
    ),
)
"""MaxPool-12 on float32: the same taps through each kernel (docs/semantics.md, max pooling)."""


VERSION_ROWS = (
    KernelRow(
        "D16",
        "AveragePool",
        {"kernel_shape": [4], "strides": [3], "count_include_pad": 1},
        (1, 1, 3),
        (1, 1, 1),
    ),
    KernelRow(
        "D16-ceil",
        "AveragePool",
        {"kernel_shape": [4], "strides": [3], "count_include_pad": 1, "ceil_mode": 1},
        (1, 1, 3),
        (1, 1, 1),
    ),
    KernelRow(
        "D5",
        "AveragePool",
        {"kernel_shape": [1], "strides": [3], "auto_pad": "SAME_UPPER"},
        (1, 1, 5),
        (1, 2, 3, 4, 5),
    ),
    KernelRow(
        "D5-ceil-cip",
        "AveragePool",
        {
            "kernel_shape": [1],
            "strides": [3],
            "auto_pad": "SAME_UPPER",
            "ceil_mode": 1,
            "count_include_pad": 1,
        },
        (1, 1, 5),
        (1, 2, 3, 4, 5),
    ),
)
"""float32 AveragePool-11 (MLAS unless ceil_mode and count_include_pad) against AveragePool-19."""


def kernel_row(row: KernelRow, opset: int, indices: bool = False) -> list[np.ndarray] | str:
    """What irpool computes for an ONNX node under the onnx convention, or its refusal."""
    x = np.array(row.input, dtype=np.float32).reshape(row.shape)
    spec = onnx_ops.select(row.op, "", opset)
    try:
        params = onnx_ops.params(spec, row.attrs, x.ndim, indices=indices)
        p = plan(params, x.shape, "onnx", dtype=x.dtype)
        values, idx = pool(x, p)
    except IrpoolError as e:
        return "refuses (" + e.message.split(" (")[0].removeprefix("onnxruntime refuses: ") + ")"
    return [values] + ([idx] if idx is not None else [])


def _attrs_text(attrs: dict[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in attrs.items()).replace(" ", "")


def kernel_tables() -> list[str]:
    lines = [
        "",
        "## onnxruntime: the kernel decides",
        "",
        "The same float32 taps through each of onnxruntime's MaxPool-12 paths: without the",
        "Indices output an MLAS kernel, chosen by the geometry, runs; with them, the reference",
        "loop.  Computed by irpool's `onnx` convention; the test suite checks every cell against",
        "onnxruntime 1.32.",
        "",
        "| case | input | attributes | MLAS kernel | without Indices | with Indices |",
        "|---|---|---|---|---|---|",
    ]
    for row in NAN_ROWS:
        spec = onnx_ops.select(row.op, "", 12)
        shape = row.shape
        p = plan(onnx_ops.params(spec, row.attrs, len(shape), indices=False), shape, "onnx")
        cells = [_cell(kernel_row(row, 12)), _cell(kernel_row(row, 12, indices=True))]
        data = _format(np.array(row.input))
        lines.append(
            f"| {row.key} | {data} | {_attrs_text(row.attrs)} | {p.nan_max} | "
            + " | ".join(cells)
            + " |"
        )
    lines += [
        "",
        "AveragePool on float32 by version: 7..18 run MLAS unless ceil_mode and",
        "count_include_pad are both set; 19 and later run onnxruntime's own loop.",
        "",
        "| case | input | attributes | AveragePool-11 | AveragePool-19 |",
        "|---|---|---|---|---|",
    ]
    for row in VERSION_ROWS:
        cells = [_cell(kernel_row(row, 11)), _cell(kernel_row(row, 19))]
        data = _format(np.array(row.input))
        lines.append(
            f"| {row.key} | {data} | {_attrs_text(row.attrs)} | " + " | ".join(cells) + " |"
        )
    return lines


@dataclass(frozen=True)
class FamilyRow:
    """One family divergence shown on a small input: per system (openvino, onnxruntime,
    torch), the family layer it runs (family, params) and, for MaxUnpool, its indices."""

    key: str
    title: str
    shape: tuple[int, ...]
    input: tuple[float, ...]
    systems: Mapping[str, tuple[Any, Any]]
    dtype: str = "float32"
    indices: Mapping[str, tuple[int, ...]] | None = None
    """MaxUnpool: the indices each system's MaxPool gives (flat over the tensor, per plane)."""


def _family_entries() -> dict[str, Any]:
    """The family entries and parameters the rows of the family table run, by name."""
    from ..families.adaptive import ADAPTIVE, AdaptiveParams
    from ..families.lp import LP, LpParams
    from ..families.reduce import GLOBAL_MAX, REDUCE_MAX, REDUCE_MEAN, ReduceParams
    from ..families.unpool import UNPOOL, UnpoolParams

    def rmax(keep: bool = False) -> tuple[Any, Any]:
        return REDUCE_MAX, ReduceParams(op="ReduceMax-1", kind="max", axes=(2, 3), keep=keep)

    gmax = (
        GLOBAL_MAX,
        ReduceParams(op="GlobalMaxPool-1", kind="max", axes=(2, 3), keep=True, global_op=True),
    )
    amax = (
        ADAPTIVE,
        AdaptiveParams(
            op="AdaptiveMaxPool-8", reduce="max", sizes=(1, 1), indices=True, index_dtype="int32"
        ),
    )
    mean = (REDUCE_MEAN, ReduceParams(op="ReduceMean-1", kind="mean", axes=(2, 3), keep=False))

    def everywhere(entry: tuple[Any, Any]) -> dict[str, tuple[Any, Any]]:
        return dict.fromkeys(FAMILY_SYSTEMS, entry)

    def lp(ceil: bool, p: int) -> tuple[Any, Any]:
        window = onnx_ops.params(
            onnx_ops.select("AveragePool", "", 19),
            {"kernel_shape": [3], "strides": [2], "ceil_mode": int(ceil)},
            3,
        )
        return LP, LpParams(op="LpPool-18", p=float(p), window=window)

    unpool = (
        UNPOOL,
        UnpoolParams(
            op="MaxUnpool-11",
            kernel=(2, 2),
            strides=(2, 2),
            pads=((0, 0), (0, 0)),
            output_shape=None,
        ),
    )
    aavg = (ADAPTIVE, AdaptiveParams(op="AdaptiveAvgPool-8", reduce="mean", sizes=(1, 2)))
    return {
        "maxima": {"openvino": rmax(), "onnxruntime": gmax, "torch": rmax()},
        "amax": {"openvino": amax, "torch": amax},
        "partial_lp": everywhere(lp(True, 2)),
        "signed_lp": everywhere(lp(False, 1)),
        "mean": everywhere(mean),
        "unpool": {"onnxruntime": unpool, "torch": unpool},
        "aavg": {"openvino": aavg, "torch": aavg},
    }


def _family_rows() -> tuple[FamilyRow, ...]:
    e = _family_entries()
    maxima = e["maxima"]
    alternating = (1, -2, 3, -4, 5, -6)
    nan = math.nan
    inf = math.inf
    return (
        FamilyRow(
            "D17", "NaN as the 16th element of a max", (1, 1, 1, 16), (1,) * 15 + (nan,), maxima
        ),
        FamilyRow("D18", "global max of [1, NaN]", (1, 1, 1, 2), (1, nan), maxima),
        FamilyRow("D18-first", "global max of [NaN, 1]", (1, 1, 1, 2), (nan, 1), maxima),
        FamilyRow(
            "D18-adaptive",
            "adaptive max to 1x1 of [1, NaN]",
            (1, 1, 1, 2),
            (1, nan),
            e["amax"],
        ),
        FamilyRow("D19", "global max of [-inf, -inf]", (1, 1, 1, 2), (-inf, -inf), maxima),
        FamilyRow(
            "D20",
            "LpPool k3 s2 ceil p2 (a partial last window)",
            (1, 1, 6),
            alternating,
            e["partial_lp"],
        ),
        FamilyRow("D21", "LpPool k3 s2 p1 (signed power)", (1, 1, 6), alternating, e["signed_lp"]),
        FamilyRow("D23", "mean over an empty axis", (1, 2, 0, 3), (), e["mean"]),
        FamilyRow(
            "D24",
            "MaxUnpool k2 s2 of a 5x4 pooling (plane 1 of two)",
            (1, 2, 2, 2),
            (10, 11, 12, 13, 20, 21, 22, 23),
            e["unpool"],
            indices={"onnxruntime": (0, 2, 8, 10, 20, 22, 28, 30), "torch": (0, 2, 8, 10) * 2},
        ),
        FamilyRow(
            "D27", "u8 mean of 20 x 200", (1, 1, 4, 5), (200,) * 20, e["mean"], dtype="uint8"
        ),
        FamilyRow(
            "D32",
            "adaptive average 3x6 -> 1x2 (window sums 5 and 9)",
            (1, 1, 3, 6),
            (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, -1, 1, 1, 1),
            e["aavg"],
        ),
    )


FAMILY_SYSTEMS = {"openvino": "openvino", "onnxruntime": "onnx", "torch": "torch"}


def family_cell(row: FamilyRow, system: str) -> list[np.ndarray] | str | None:
    """What irpool computes for a family row as `system` would (its convention), a refusal,
    or None when the system has no such op."""
    from ..kernel.family import execute

    if system not in row.systems:
        return None
    family, params = row.systems[system]
    x = np.array(row.input, dtype=row.dtype).reshape(row.shape)
    try:
        p = family.plan(params, x.shape, row.dtype, conv.get(FAMILY_SYSTEMS[system]))
        ins: list[np.ndarray | None] = [x]
        if row.indices is not None:
            ins.append(np.array(row.indices[system], dtype=np.int64).reshape(row.shape))
        return execute(p, ins)
    except IrpoolError as e:
        return f"refuses ({e.message.split(';')[0]})"


def family_table() -> list[str]:
    lines = [
        "",
        "## The pooling families",
        "",
        "Adaptive pooling, reductions (global pooling), Lp pooling and max unpooling: the same",
        "small input through each system, computed by irpool's conventions (OpenVINO: the IR op",
        "or what its converters write; onnxruntime: the ONNX op; PyTorch: the torch function).",
        "The test suite checks every cell against openvino 2026.4, onnxruntime 1.32 and torch",
        "2.13 (tests/test_family_divergences.py).",
        "",
        "| case | what differs | input | OpenVINO | onnxruntime | PyTorch |",
        "|---|---|---|---|---|---|",
    ]
    for row in FAMILY_ROWS:
        cells = [_cell(family_cell(row, system), 9) for system, _ in SYSTEMS]
        data = _format(np.array(row.input, dtype=np.float64)) if row.input else "(empty)"
        lines.append(f"| {row.key} | {row.title} | {data} | " + " | ".join(cells) + " |")
    return lines


FAMILY_ROWS = _family_rows()


def markdown() -> str:
    lines = [
        "# Divergences",
        "",
        "Generated by `python -m irpool.divergences` from irpool's divergence table (the one",
        "`compare`, `convert-report`, `check`, `explain` and `fixtures` read) and its",
        "conventions; the test suite regenerates it and checks every cell of the matrix against",
        "openvino 2026.4 (CPU), onnxruntime 1.31 and torch 2.13 (tests/test_divergences.py).",
        "The story behind each row: [semantics.md](semantics.md).",
        "",
        *table_markdown(),
        "",
        "## The matrix",
        "",
        "Inputs and layers: `irpool/cases.py`. Values are flattened; `-` means the system",
        "cannot express the case.",
        "",
        "| case | what differs | OpenVINO | onnxruntime | PyTorch |",
        "|---|---|---|---|---|",
    ]
    for case in CASES:
        cells = [_cell(compute(case, system)) for system, _ in SYSTEMS]
        lines.append(f"| {case.key} | {case.title} | " + " | ".join(cells) + " |")
    lines += kernel_tables()
    lines += family_table()
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    print(markdown(), end="")
    return 0
