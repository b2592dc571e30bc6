"""The op registry and the binder: every op version irpool knows is an entry (`registry`),
added by its front end's module (`openvino`, `onnx`, `glue`); `bind` turns a layer into the plan
every command uses."""

from . import glue, onnx, openvino, qdq, quantize
from .binding import Bound, bind
from .registry import REGISTRY, OpSpec, is_pooling, lookup, spec_of

__all__ = [
    "REGISTRY",
    "Bound",
    "OpSpec",
    "bind",
    "glue",
    "is_pooling",
    "lookup",
    "onnx",
    "openvino",
    "qdq",
    "quantize",
    "spec_of",
]
