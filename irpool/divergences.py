"""The divergence matrix of docs/divergences.md, computed from irpool's conventions.

    python -m irpool.divergences > docs/divergences.md

Every cell is what irpool computes for the case under that system's convention (the OpenVINO
column runs the IR layer, the onnxruntime column the ONNX node, the PyTorch column the torch
call).  The test suite regenerates the file and compares, and checks each cell against the
measured numbers in irpool.cases and, where installed, against the runtimes themselves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .cases import CASES, Case, ir_net
from .errors import IrpoolError
from .frontends.ir_xml import parse_text
from .geometry import plan
from .kernel import pool
from .model import ELEMENT_TYPES
from .ops import onnx as onnx_ops
from .ops import torch as torch_ops
from .shapes import infer

ET = {numpy: short for short, numpy in ELEMENT_TYPES.items()}
SYSTEMS = (("openvino", "OpenVINO"), ("onnxruntime", "onnxruntime"), ("torch", "PyTorch"))


def _input(case: Case) -> np.ndarray:
    return np.array(case.input, dtype=case.dtype).reshape(case.shape)


def compute(case: Case, system: str) -> list[np.ndarray] | str | None:
    """What irpool computes for `case` as `system` would, or a refusal, or None if the system
    cannot express the case."""
    x = _input(case)
    try:
        if system == "openvino" and case.openvino is not None:
            layer = infer(parse_text(ir_net(case.openvino, x.shape, ET[case.dtype]), "case"))
            p = plan(layer.pooling[0].params, x.shape, "openvino")
        elif system == "onnxruntime" and case.onnx is not None:
            expected = case.expected.get("onnxruntime")
            if expected is not None and expected.refuses:
                return f"refuses ({expected.refuses})"
            spec = onnx_ops.select(case.onnx.op, case.onnx.domain, case.onnx.opset)
            p = plan(onnx_ops.params(spec, case.onnx.attrs, x.ndim), x.shape, "onnx")
        elif system == "torch" and case.torch is not None:
            p = plan(torch_ops.params(case.torch.function, **case.torch.kwargs), x.shape, "torch")
        else:
            return None
    except IrpoolError as e:
        return f"refuses ({e.message})"
    values, indices = pool(x, p)
    return [values] + ([indices] if indices is not None else [])


def _format(values: np.ndarray) -> str:
    flat = values.astype(np.float64).ravel()

    def one(v: float) -> str:
        if math.isnan(v):
            return "NaN"
        if v == 0 and math.copysign(1, v) < 0:
            return "-0"
        if abs(v) > 1e30:
            return f"{v:.4g}"
        return f"{v:.4g}"

    return "[" + ", ".join(one(float(v)) for v in flat) + "]"


def _cell(result: list[np.ndarray] | str | None) -> str:
    if result is None:
        return "-"
    if isinstance(result, str):
        return result
    text = _format(result[0])
    if len(result) > 1:
        text += f" idx {_format(result[1])}"
    return text


# -- onnxruntime: the kernel decides (D5, D8, D16) ---------------------------------------------


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
        p = plan(onnx_ops.params(spec, row.attrs, x.ndim, indices=indices), x.shape, "onnx")
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


def markdown() -> str:
    lines = [
        "# Divergence matrix",
        "",
        "Generated by `python -m irpool.divergences` from irpool's conventions; the test suite",
        "regenerates it and checks every cell against openvino 2026.4 (CPU), onnxruntime 1.31",
        "and torch 2.13 (tests/test_divergences.py). Inputs and layers: `irpool/cases.py`;",
        "the story behind each row: [semantics.md](semantics.md). Values are flattened;",
        "`-` means the system cannot express the case.",
        "",
        "| case | what differs | OpenVINO | onnxruntime | PyTorch |",
        "|---|---|---|---|---|",
    ]
    for case in CASES:
        cells = [_cell(compute(case, system)) for system, _ in SYSTEMS]
        lines.append(f"| {case.key} | {case.title} | " + " | ".join(cells) + " |")
    lines += kernel_tables()
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    print(markdown(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
