"""The pooling families beyond windows: adaptive pooling, reductions (global pooling), Lp
pooling, max unpooling and onnxruntime's quantised global average.

A family is one kernel path (`irpool/kernel/<family>.py`, run by `kernel.family.execute`) plus
registry entries whose `path` is the family's `Family` object.  The object is what `bind` and
the commands ask of a layer of the family:

* `read(spec, layer, rank, values)`: the layer's attributes and the values of its constant
  integer inputs (an adaptive pool's output size, a reduction's axes) into the family's params,
  checked as the runtime checks them;
* `infer(params, shape, convention)`: the output shape on interval dims and one formula per
  output axis (what `check` prints);
* `plan(params, shape, dtype, convention)`: the immutable, dtype-complete plan the kernel
  executes and `explain` prints (every runtime choice resolved into named fields);
* `explain(plan)`: the plan in words and JSON;
* `allowance(plan, inputs, expected)`: where a runtime's order of operations cannot be matched
  bit for bit, the stated bound of the difference it may make (None: exact).

Conventions (openvino, onnx, torch) decide the plans as for windowed pooling: each family
keeps its switches per convention, with the measurement behind each, in its own module.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..conventions import Convention
from ..model import Plan, Shape

if TYPE_CHECKING:
    from ..geometry import PoolParams
    from ..model import Layer
    from ..ops.registry import OpSpec

Array = npt.NDArray[Any]
Values = Mapping[int, tuple[int, ...]]
"""Integer values of a layer's constant (or given) inputs, by input index."""
Marks = tuple[bool, ...]
"""Per input dim: written -1 (unknown) in the file."""


@dataclass(frozen=True, kw_only=True)
class FamilyParams:
    """What one layer of a family asks for (its attributes and constant inputs)."""

    op: str
    notes: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True, kw_only=True)
class FamilyPlan(Plan):
    """Everything a family kernel needs, resolved; subclasses add the family's fields."""

    output_shape: tuple[int, ...]
    dtype: str
    """numpy name of the data the plan takes (and gives back, for output 0)."""
    compute: str = "float32"
    """numpy name of the type the kernel computes in."""
    refused_by: str | None = None
    """The convention's runtime refuses this layer (irpool still computes what the layer means
    under the convention's rules): the runtime and its words."""

    @property
    def family(self) -> str:
        return type(self).__name__.removesuffix("Plan").lower()


def plan_head(
    params: FamilyParams,
    convention: Convention | str,
    shape: tuple[int, ...],
    output_shape: tuple[int, ...],
    dtype: str,
    compute: str = "float32",
    refused_by: str | None = None,
) -> dict[str, Any]:
    """FamilyPlan's fields, the ones every family plan starts with: `XPlan(**plan_head(...),
    <the family's own fields>)`."""
    name = convention if isinstance(convention, str) else convention.name
    return {
        "op": params.op,
        "convention": name,
        "input_shape": tuple(shape),
        "output_shape": tuple(output_shape),
        "dtype": dtype,
        "compute": compute,
        "refused_by": refused_by,
    }


@dataclass
class Explained:
    """A plan in words (`lines`, indented by the caller) and as JSON (`data`)."""

    lines: list[str]
    data: dict[str, Any]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Diagnosing:
    """How compare diagnoses a layer of the family whose numbers differ from its runtime's: which
    conventions it tries, when an order-of-operations allowance applies, how it computes the
    values under another convention, and how it words the outcome."""

    order_first: bool = False
    """Where summation order may differ (compare's `rounding`, ONNX input), first ask whether
    the used plan's differences are all within the family's allowance."""
    every_convention: bool = True
    """Try every convention, including those marked `diagnosed=False`."""
    allowance_always: bool = True
    """Hold another convention's values to the family's allowance even without `rounding`."""
    held: bool = False
    """Compute another convention's values as the runtime holds the layer's tensors (the
    windowed path, `run.pool_held`), rather than by running the layer and rounding to the
    expected type."""
    many: str = "reproduces"
    """The verb after two or more conventions that reproduce the numbers."""
    unmatched: str = (
        "no convention reproduces {oracle}'s numbers (first differing cells: {cells}){hint}; "
        "if no divergence explains it, this is a runtime bug or an irpool bug: please report it"
    )
    """The text when no convention reproduces them ({oracle}, {cells}, and {hint}: the
    divergences the input exercises, when `lists_touched`)."""
    lists_touched: bool = True


class Family(ABC):
    """One pooling family: how its layers are read, inferred, planned and explained."""

    name = "family"
    title = "pooling"
    """How explain names what the layer does ("adaptive pooling", "reduction", ...)."""
    value_inputs: tuple[int, ...] = ()
    """Inputs whose integer values are part of the params (constants in the file, or given at
    run time)."""
    data_inputs: tuple[int, ...] = (0,)
    """Inputs that are tensors the kernel takes (the rest are constants such as sizes)."""
    conventions: tuple[str, ...] = ("openvino", "onnx", "torch")
    windows = False
    """The family's plans are windowed pooling's PoolPlans (per-axis windows: explain draws
    them, compare names the window divergences between two of them)."""
    diagnosing = Diagnosing()
    """How compare diagnoses a mismatch of one of the family's layers."""
    channels_first = False
    """The family's rules are written for N, C, *spatial data: `bind` transposes the shapes of
    a channels-last layer around them (a family that reads channels_last itself leaves this
    False)."""

    @abstractmethod
    def read(
        self, spec: OpSpec, layer: Layer, rank: int | None, values: Values
    ) -> FamilyParams | PoolParams:
        """The layer's attributes and constant integer inputs as the family's params, checked
        as the runtime checks them."""

    def infer(
        self, params: FamilyParams, shape: Shape | None, convention: Convention, unknown: Marks = ()
    ) -> tuple[Shape | None, tuple[str, ...]]:
        """The output shape and one formula per output axis; nothing where the input shape is
        unknown (a family whose output shape can come from elsewhere overrides this).
        `unknown` marks input dims written as -1 (a family whose formulas say so uses it)."""
        if shape is None:
            return None, ()
        return self.infer_known(params, shape, convention)

    @abstractmethod
    def infer_known(
        self, params: FamilyParams, shape: Shape, convention: Convention
    ) -> tuple[Shape | None, tuple[str, ...]]:
        """`infer` for an input whose rank is known."""

    @abstractmethod
    def plan(
        self, params: FamilyParams, shape: tuple[int, ...], dtype: str, convention: Convention
    ) -> Plan:
        """The immutable, dtype-complete plan the kernel executes (a FamilyPlan, or windowed
        pooling's PoolPlan)."""

    def with_use(self, params: Any, indices_used: bool) -> Any:
        """The params of a layer whose indices output is used (or not), where the params say
        so (a max pool's)."""
        if hasattr(params, "indices_used"):
            return replace(params, indices_used=indices_used)
        return params

    def output_types(self, params: FamilyParams, input_type: str | None) -> list[str | None]:
        """Element types of the outputs for an input of `input_type`."""
        return [input_type]

    @abstractmethod
    def explain(self, plan: FamilyPlan) -> Explained:
        """The plan in words and JSON."""

    def allowance(self, plan: Any, inputs: Sequence[Array | None], expected: Array) -> Array | None:
        """The largest difference another order of operations may make in each value of
        output 0 (None: the values are compared exactly); `plan` is one this family made."""
        return None


def int_values(array: Array | None) -> tuple[int, ...] | None:
    """The integer values of a small constant input (None where it is not integral)."""
    if array is None:
        return None
    a = np.asarray(array)
    if a.dtype.kind not in "iuf" or a.ndim > 1:
        return None
    if a.dtype.kind == "f" and not bool(np.all(np.isfinite(a) & (a == np.trunc(a)))):
        return None
    return tuple(int(v) for v in a.reshape(-1))


F32_EPS = float(np.finfo(np.float32).eps)
