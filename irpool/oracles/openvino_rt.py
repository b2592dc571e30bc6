"""openvino as an oracle: read or build a model, compile it on CPU, run it.

openvino is imported lazily; without it every entry point raises OracleMissing (exit code 3).
Models compile with `INFERENCE_PRECISION_HINT=f32` unless told otherwise, so that openvino's CPU
plugin does not lower float32 work to bfloat16 on CPUs that have it.  bfloat16 tensors cross the
boundary as uint16 bit patterns (numpy has no bfloat16 of its own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import OracleMissing

DEFAULT_PRECISION = "f32"


def load() -> Any:
    """The openvino module, or OracleMissing saying how to install it."""
    try:
        import openvino
    except ImportError:
        raise OracleMissing("openvino is not installed; pip install 'irpool[openvino]'") from None
    return openvino


def version() -> str:
    return str(load().get_version())


_CORE: Any = None


def core() -> Any:
    global _CORE
    if _CORE is None:
        _CORE = load().Core()
    return _CORE


def config(precision: str = DEFAULT_PRECISION, threads: int | None = None) -> dict[str, Any]:
    cfg: dict[str, Any] = {"INFERENCE_PRECISION_HINT": precision}
    if threads:
        cfg["INFERENCE_NUM_THREADS"] = threads
    return cfg


def read_xml(xml: str | bytes, weights: bytes = b"") -> Any:
    """A model from IR text (and the bytes of its .bin)."""
    data = xml.encode() if isinstance(xml, str) else xml
    return core().read_model(data, weights)


def read_path(path: str) -> Any:
    return core().read_model(path)


def compile_model(
    model: Any, precision: str = DEFAULT_PRECISION, threads: int | None = None
) -> Any:
    return core().compile_model(model, "CPU", config(precision, threads))


def is_bfloat16(array: np.ndarray) -> bool:
    return bool(array.dtype.name == "bfloat16")


def to_tensor(array: np.ndarray) -> Any:
    """An openvino Tensor holding `array` (bfloat16 copied through its bits)."""
    ov = load()
    if is_bfloat16(array):
        tensor = ov.Tensor(ov.Type.bf16, list(array.shape))
        tensor.data.view(np.uint16)[...] = np.ascontiguousarray(array).view(np.uint16)
        return tensor
    return ov.Tensor(np.ascontiguousarray(array))


def from_tensor(tensor: Any) -> np.ndarray:
    """A numpy copy of an openvino output tensor (bfloat16 as ml_dtypes.bfloat16)."""
    ov = load()
    if tensor.element_type == ov.Type.bf16:
        from ..kernel import bfloat16

        bf = bfloat16()
        bits = np.array(tensor.data, copy=True).view(np.uint16)
        if bf is None:
            raise OracleMissing("ml_dtypes is needed for bfloat16 outputs; pip install ml_dtypes")
        return bits.view(bf).reshape(tuple(tensor.shape))
    return np.array(tensor.data, copy=True)


def infer(
    compiled: Any, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Run a compiled model; inputs by tensor/Parameter name or in order; outputs in order."""
    request = compiled.create_infer_request()
    if isinstance(inputs, Mapping):
        for name, array in inputs.items():
            request.set_tensor(name, to_tensor(array))
    else:
        for i, array in enumerate(inputs):
            request.set_input_tensor(i, to_tensor(array))
    request.infer()
    return [from_tensor(request.get_output_tensor(i)) for i in range(len(compiled.outputs))]
