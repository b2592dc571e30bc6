"""onnx's reference evaluator as an oracle, and where it is known to be wrong (D12 and friends).

The reference evaluator (onnx.reference) defines what the ONNX operator text means in Python,
but in onnx 1.23 its pooling has bugs measured against onnxruntime, PyTorch and openvino
(docs/semantics.md, D12).  `known_wrong` says, for one pooling node and input shape, whether the
reference is known to compute something else; callers then trust onnxruntime instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import OracleMissing


def run(model: Any, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    try:
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        raise OracleMissing("onnx is not installed; pip install 'irpool[onnx]'") from None
    return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, dict(feeds))]


def version() -> str:
    try:
        import onnx
    except ImportError:
        raise OracleMissing("onnx is not installed; pip install 'irpool[onnx]'") from None
    return str(onnx.__version__)


def probe_tensors(
    model: Any,
    names: list[str],
    feeds: Mapping[str, np.ndarray],
    new_ops: Sequence[Any] = (),
) -> dict[str, np.ndarray]:
    """Run a ModelProto with onnx's reference evaluator and return the named tensors (any
    computed tensor of the graph, not only its outputs); `new_ops` are OpRun classes of ops
    the evaluator does not know (registry entries' `reference` rows)."""
    try:
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        raise OracleMissing("onnx is not installed; pip install 'irpool[onnx]'") from None
    evaluator = ReferenceEvaluator(model, new_ops=list(new_ops) or None)
    values = evaluator.run(list(names), dict(feeds))
    return {n: np.asarray(v) for n, v in zip(names, values, strict=True)}


def known_wrong(
    op: str,
    attrs: Mapping[str, Any],
    input_shape: tuple[int, ...],
    has_nan: bool = False,
    since: int | None = None,
) -> str | None:
    """Why onnx's reference evaluator is known to get this node (of op type `op`, of the
    version first in opset `since`) wrong, or None."""
    from ..ops import REGISTRY

    spec = REGISTRY.versions("ai.onnx", op)
    is_max = bool(spec) and spec[0].reduce == "max"
    spatial = input_shape[2:]
    rank = len(spatial)
    kernel = list(attrs.get("kernel_shape", [1] * rank))
    strides = list(attrs.get("strides") or [1] * rank)
    dilations = list(attrs.get("dilations") or [1] * rank)
    pads = list(attrs.get("pads") or [0] * (2 * rank))
    auto = attrs.get("auto_pad", "NOTSET")
    ceil = bool(attrs.get("ceil_mode", 0))
    padded = any(pads) or auto in ("SAME_UPPER", "SAME_LOWER")
    if not is_max and since is not None and since < 7 and padded:
        # AveragePool-1 has no count_include_pad: its text excludes the padding (as
        # onnxruntime's and irpool's AveragePool-7 default do); onnx 1.23's evaluator divides
        # every window by the whole kernel (measured: 16 of 24 cells of a 3x3, stride 2, pads 1
        # pool on [1,1,7,11])
        return (
            "AveragePool-1 excludes the padding; the evaluator divides padded windows by the "
            "whole kernel"
        )
    if auto in ("SAME_UPPER", "SAME_LOWER") and ceil:
        return "D5: the reference refuses ceil_mode with auto_pad"
    if auto in ("SAME_UPPER", "SAME_LOWER") and any(d > 1 for d in dilations):
        return "D4: SAME pads with dilations"
    if is_max and auto == "SAME_LOWER" and any(s > 1 for s in strides):
        return "D12c: MaxPool SAME_LOWER with stride > 1 uses floor(n / s)"
    if is_max and auto == "VALID" and ceil:
        return "D12d: MaxPool VALID with ceil_mode gives the spec formula's size"
    stride_one = all(s == 1 for s in strides)
    if is_max and stride_one and any(pads) and (rank > 2 or (rank == 2 and pads[1] != pads[2])):
        return "D12b: the MaxPool stride-1 path reads pads in another order"
    if is_max and all(s == 1 for s in strides) and rank == 1 and auto != "NOTSET":
        return "D12b: 1-D MaxPool with auto_pad and stride 1 fails"
    if any(pads[i] >= kernel[i] or pads[rank + i] >= kernel[i] for i in range(rank)):
        return "D11: pads >= kernel"
    if ceil and auto == "NOTSET":
        for i, n in enumerate(spatial):
            k_eff = (kernel[i] - 1) * dilations[i] + 1
            span = n + pads[i] + pads[rank + i] - k_eff
            out = -(-span // strides[i]) + 1
            extra = (out - 1) * strides[i] + k_eff - (n + pads[i] + pads[rank + i])
            if extra >= 2:
                return "D12a: ceil needing 2 or more extra pad elements shifts the windows"
    if is_max and has_nan:
        return "D8: NaN in a max window (the reference's index points at the NaN)"
    return None
