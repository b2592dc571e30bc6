"""Windowed pooling (openvino AvgPool-1/14/16, MaxPool-1/8/14; ONNX AveragePool, MaxPool) and
com.microsoft QLinearAveragePool as families, like adaptive pooling or the reductions.

The rules themselves are geometry's (`geometry.plan`, `geometry.infer_shape`) and the readers
are the front ends' (each entry's `read`); this module is the `Family` face `bind` asks:

* read: the entry's reader, with the runtime's checks, into a `PoolParams`;
* infer / plan: geometry's shape inference and planner, on N, C, *spatial (a channels-last
  QLinear layer is transposed around them by `bind`, see `Family.channels_first`);
* explain: the resolved axes in words;
* allowance: the summation-order bound of a float mean (`comparison.rounding_bound`).
* diagnosing: how compare diagnoses a mismatch (summation order first with ONNX input, only
  the conventions marked diagnosed, the values as the runtime holds the tensors).

QLinearAveragePool is the same window family: its plan is the float32 plan of the pooling
between the dequantisation and the requantisation (irpool/quant.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import geometry
from ..comparison import rounding_bound
from ..conventions import Convention
from ..geometry import PoolParams, PoolPlan
from ..model import Shape
from . import Array, Diagnosing, Explained, Family, Marks, Values

if TYPE_CHECKING:
    from ..model import Layer
    from ..ops.registry import OpSpec


class Windows(Family):
    name = "window"
    title = "windowed pooling"
    channels_first = True
    windows = True
    conventions = ("openvino", "onnx", "torch", "tf")
    diagnosing = Diagnosing(
        order_first=True,
        every_convention=False,
        allowance_always=False,
        held=True,
        many="reproduce",
        unmatched=(
            "no convention reproduces {oracle}'s numbers: this is a runtime bug or an irpool "
            "bug (first differing cells: {cells}); please report it"
        ),
        lists_touched=False,
    )

    def read(self, spec: OpSpec, layer: Layer, rank: int | None, values: Values) -> PoolParams:
        reader = spec.read
        assert reader is not None
        return reader(spec, layer, rank)

    def infer(
        self, params: Any, shape: Shape | None, convention: Convention, unknown: Marks = ()
    ) -> tuple[Shape | None, tuple[str, ...]]:
        return geometry.infer_shape(params, shape, convention, unknown)

    def infer_known(
        self, params: Any, shape: Shape, convention: Convention
    ) -> tuple[Shape | None, tuple[str, ...]]:
        return geometry.infer_shape(params, shape, convention)

    def plan(
        self, params: Any, shape: tuple[int, ...], dtype: str, convention: Convention
    ) -> PoolPlan:
        return geometry.plan(params, shape, convention, params.indices_used, dtype)

    def output_types(self, params: Any, input_type: str | None) -> list[str | None]:
        index = "i32" if params.index_dtype == "int32" else "i64"
        return [input_type, index]

    def explain(self, plan: Any) -> Explained:
        assert isinstance(plan, PoolPlan)
        lines = [
            f"axis {i}: size {a.size}, window {a.window}, stride {a.stride}, dilation "
            f"{a.dilation}, pads {a.pad_begin},{a.pad_end} -> {a.out}"
            for i, a in enumerate(plan.axes)
        ]
        data = {
            "family": self.name,
            "reduce": plan.reduce,
            "divisor": plan.divisor,
            "output_shape": list(plan.output_shape),
        }
        return Explained(lines, data)

    def allowance(self, plan: Any, inputs: Sequence[Array | None], expected: Array) -> Array | None:
        x = inputs[0] if inputs else None
        if x is None or not isinstance(plan, PoolPlan):
            return None
        return rounding_bound(plan, x, expected)


class QLinear(Windows):
    name = "qlinear"
    title = "quantised windowed average pooling"

    def allowance(self, plan: Any, inputs: Sequence[Array | None], expected: Array) -> Array | None:
        return None  # integer outputs are compared exactly


WINDOWS = Windows()
QLINEAR = QLinear()
