"""What the PyTorch oracle's two routes share (torch.export programs: torch_export; TorchScript:
torch_script): importing torch quietly, moving values between torch and numpy, and reading
openvino's value of a port of the converted model."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..errors import OracleMissing, OracleRefused, Where
from ..source_ops import IrLayer
from . import openvino_rt, refusals

Array = npt.NDArray[Any]


def load() -> Any:
    """The torch module, or OracleMissing saying how to install it."""
    try:
        import torch
    except ImportError:
        raise OracleMissing("torch is not installed; pip install 'irpool[torch]'") from None
    return torch


def version() -> str:
    return str(load().__version__)


@contextmanager
def quiet() -> Iterator[None]:
    """Silence openvino's FX decoder (tracebacks through the root logger) and torch's warnings."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous)


def divisor_refusal(path: str, what: str) -> OracleRefused:
    return OracleRefused(
        f"{what} has divisor_override: openvino's PyTorch front end cannot convert it "
        '("Translation for aten::avg_pool2d do not support divisor_override input"), so there '
        "is no conversion to audit (torch.onnx drops divisor_override silently, too)",
        Where(file=path),
    )


def as_tensor(torch: Any, x: Array) -> Any:
    return torch.from_numpy(np.ascontiguousarray(x))


def to_numpy(value: Any) -> Array:
    return np.asarray(value.detach().cpu().numpy())


def value_kind(value: Any) -> Literal["values", "indices"]:
    floating = getattr(value, "is_floating_point", None)
    return "values" if floating is None or floating() else "indices"


def ir_layer(op: Any) -> IrLayer:
    return IrLayer(op.get_friendly_name(), openvino_rt.op_label(op), openvino_rt.attributes(op))


def port_key(port: Any) -> tuple[str, int]:
    return port.get_node().get_friendly_name(), port.get_index()


def probe(model: Any, ports: list[Any], arrays: list[Array]) -> dict[tuple[str, int], Array]:
    unique = list({port_key(p): p for p in ports}.values())
    with refusals("openvino"):
        values = openvino_rt.probe(model, unique, openvino_rt.parameter_inputs(model, arrays))
    return {port_key(p): v for p, v in zip(unique, values, strict=True)}


def fit(value: Array | None, like: Any) -> Array | None:
    """openvino's value in torch's shape when only the layout of dims differs (a 1-D pool that
    openvino computes as a 2-D layer between Unsqueeze and Squeeze)."""
    if value is None:
        return None
    shape = tuple(like.shape)
    if value.shape != shape and value.size == int(np.prod(shape)):
        return value.reshape(shape)
    return value


def non_finite(values: list[Any]) -> bool:
    for v in values:
        if v is not None and v.dtype.kind == "f" and not bool(np.isfinite(v).all()):
            return True
    return False
