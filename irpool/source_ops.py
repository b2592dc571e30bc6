"""What a source framework's oracle hands the conversion audit: each pooling op of the source
model, the converted model's layer(s) it became, and the values of both on the same input.

The oracles (`oracles/torch_rt.py`, `oracles/tensorflow_rt.py`) fill these records; the audit
(`irpool/audit.py`) compares them and names the divergences.  Nothing here imports a runtime.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .geometry import PoolParams

Array = npt.NDArray[Any]
Framework = Literal["torch", "tf", "onnx"]
FRAMEWORK_TITLES: dict[str, str] = {"torch": "PyTorch", "tf": "TensorFlow", "onnx": "ONNX"}


@dataclass(kw_only=True)
class DeclaredInputs:
    """What a framework's model says of its inputs, in order (a Program of a runtime oracle
    extends it)."""

    input_names: list[str]
    input_shapes: list[tuple[int, ...] | None]
    """None where the model leaves a dim unknown (then given or drawn)."""
    input_dtypes: list[np.dtype[Any]]


@dataclass(frozen=True)
class IrLayer:
    """A layer of the converted model: its friendly name, type-version and attributes."""

    name: str
    op: str
    attributes: dict[str, str]


@dataclass
class TracedOutput:
    """One output of a source op (values or indices) and the converted layer's counterpart."""

    name: str
    """The framework's name of the tensor (an FX node, a TorchScript value, a TF tensor)."""
    kind: Literal["values", "indices"]
    framework: Array | None
    """The framework's op run again on the input openvino gave the converted layer (None when
    that input is not in the converted model: then `own` is compared)."""
    own: Array | None
    """The framework's value of the op when it runs the whole model on the model input."""
    openvino: Array | None
    """The converted model's value (None: the converted model has no such tensor)."""


@dataclass
class TracedOp:
    """One pooling op of a source model, as its framework names it, and what it became."""

    name: str
    """The framework's name of the op: the node of the saved program, a TorchScript value, a TF
    op name."""
    op: str
    """The framework's operator: aten.avg_pool2d.default, aten::max_pool2d, AvgPool, ..."""
    function: str = ""
    """The Python-level call it came from (avg_pool1d for a 1-D pool torch decomposes into 2-D)."""
    module: str = ""
    """The module path that issued it ('' is the model's own forward); a TF name scope."""
    module_class: str = ""
    code: str = ""
    """`file:line: code` of the user's call, when the model file keeps it."""
    attributes: dict[str, Any] = field(default_factory=dict)
    layers: list[IrLayer] = field(default_factory=list)
    outputs: list[TracedOutput] = field(default_factory=list)
    mapping: str = ""
    """How the converted layer was found (tensor names, module scope, attributes, order)."""
    params: PoolParams | None = None
    """The op in irpool's terms (a windowed average or max), for naming divergences."""
    reduce: str | None = None
    """mean or max (None: neither)."""
    family: str = "window"
    """window (average or max pooling over windows), adaptive, or global (a mean or max over
    every spatial axis)."""
    input_shape: tuple[int, ...] | None = None
    nan_input: bool = False
    """Whether the op's input held NaN or infinities (a max then depends on the NaN rule)."""
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    """Why the op could not be compared (then `outputs` may be empty)."""
    merged_with: list[str] = field(default_factory=list)
    """The other ops of the source that became the same layer: openvino keeps one node for
    identical computations on one tensor."""


@dataclass
class Traced:
    """What an oracle found in one source model."""

    framework: Framework
    route: str
    """How the model reached openvino: 'torch.export program', 'TorchScript', 'Keras model',
    'SavedModel', ..."""
    framework_version: str
    inputs: dict[str, tuple[int, ...]]
    """The model inputs used, by the framework's name, with their shapes."""
    ops: list[TracedOp]
    notes: list[str] = field(default_factory=list)
