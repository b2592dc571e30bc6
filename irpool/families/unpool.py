"""Max unpooling: ONNX MaxUnpool-9/11/22 (PyTorch's max_unpool1d/2d/3d), the partial inverse
of MaxPool: a zero tensor with each value of X written at the position its index I names.

Measured with onnxruntime 1.32, onnx 1.23 and torch 2.13 (docs/semantics.md "Max
unpooling"):

* default output size per axis: (in - 1) * stride - (pad_begin + pad_end) + kernel;
* onnxruntime: indices are flat over the whole output tensor (ONNX MaxPool's convention);
  Y.flat[I[e]] = X.flat[e] in element order (a later duplicate wins); `output_shape` may be
  any shape of the input's rank with at least the default's element count (D25); refusals:
  "Index value out of bounds. Got: 33. Valid range is [0, 32).", "output_shape is smaller than
  minimum required...", "Computed output dimension is not positive for axis 2...", "Index
  tensor shape should be same as that of the input data tensor to unpool."  After a MaxPool of
  an odd size the flat indices, computed for the larger plane, land in the wrong plane or out
  of range (D24).
* PyTorch: indices flat within each (N, C) plane; symmetric padding; output_size strictly
  between default - stride and default + stride; an index outside the plane is refused
  ("Found an invalid max index: 18 (output volumes are of size 4x4)", the last such index).
* openvino converts MaxUnpool from neither ONNX ("No conversion rule found for operations:
  MaxUnpool-11") nor traced PyTorch; irpool is the only runtime that checks and runs it there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..conventions import Convention
from ..errors import SpecError
from ..geometry import FLOAT_DTYPES
from ..model import Dim, Shape
from . import Explained, Family, FamilyParams, FamilyPlan, Marks, Values, plan_head

if TYPE_CHECKING:
    from ..model import Layer
    from ..ops.registry import OpSpec

Layout = Literal["tensor", "plane"]


@dataclass(frozen=True, kw_only=True)
class UnpoolParams(FamilyParams):
    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    pads: tuple[tuple[int, int], ...]
    output_shape: tuple[int, ...] | None
    """The third input's value (None: absent, or computed)."""
    shape_input: bool = False
    """The node lists an output_shape input."""


@dataclass(frozen=True, kw_only=True)
class UnpoolPlan(FamilyPlan):
    default_shape: tuple[int, ...]
    layout: Layout
    """Where an index points: flat over the output tensor (onnxruntime) or within its (N, C)
    plane (PyTorch)."""


def default_size(n: int, k: int, s: int, pb: int, pe: int) -> int:
    return (n - 1) * s - (pb + pe) + k


def _braces(shape: tuple[int, ...]) -> str:
    return "{" + ",".join(map(str, shape)) + "}"


class Unpool(Family):
    name = "unpool"
    title = "max unpooling"
    value_inputs = (2,)
    data_inputs = (0, 1)
    conventions = ("onnx", "torch")

    def read(self, spec: OpSpec, layer: Layer, rank: int | None, values: Values) -> UnpoolParams:
        from ..ops import onnx_attrs as onnx_ops

        known = onnx_ops.read_attrs(spec, layer.attrs)
        kernel = onnx_ops._ints(spec, "kernel_shape", known["kernel"])
        n = len(kernel)
        if rank is not None and n != rank - 2:
            raise SpecError(
                "[ShapeInferenceError] Attribute kernel_shape has incorrect size: "
                f'"kernel_shape" has {n} values; expected {rank - 2}'
            )
        given_strides = known.get("strides") or (1,) * n
        given_pads = known.get("pads") or (0,) * (2 * n)
        assert isinstance(given_strides, tuple) and isinstance(given_pads, tuple)
        strides = tuple(int(v) for v in given_strides)
        flat = tuple(int(v) for v in given_pads)
        if len(strides) != n or len(flat) != 2 * n:
            raise SpecError(
                f'"strides" and "pads" take {n} and {2 * n} values (one per spatial axis, pads '
                "as begins then ends)"
            )
        shape_input = len(layer.inputs) > 2 and bool(layer.inputs[2].names)
        given = values.get(2) if shape_input else None
        notes = []
        if shape_input and given is None:
            notes.append("output_shape (input 2) is computed, not a constant of the file")
        return UnpoolParams(
            op=spec.label,
            kernel=kernel,
            strides=strides,
            pads=onnx_ops.pads_from_onnx(flat),
            output_shape=given,
            shape_input=shape_input,
            notes=tuple(notes),
        )

    def infer(
        self, params: FamilyParams, shape: Shape | None, convention: Convention, unknown: Marks = ()
    ) -> tuple[Shape | None, tuple[str, ...]]:
        assert isinstance(params, UnpoolParams)
        if params.output_shape is not None:
            out = tuple(Dim.of(d) for d in params.output_shape)
            return out, tuple(
                f"output_shape (input 2) [{i}] = {d}" for i, d in enumerate(params.output_shape)
            )
        return super().infer(params, shape, convention)

    def infer_known(
        self, params: FamilyParams, shape: Shape, convention: Convention
    ) -> tuple[Shape | None, tuple[str, ...]]:
        assert isinstance(params, UnpoolParams)
        if params.shape_input:
            return tuple(Dim.dynamic() for _ in shape), tuple(
                "output_shape (input 2) is not a constant: ?" for _ in shape
            )
        dims: list[Dim] = [shape[0], shape[1]]
        texts = [f"N: {shape[0]}", f"C: {shape[1]}"]
        for i, n in enumerate(shape[2:]):
            k, s = params.kernel[i], params.strides[i]
            pb, pe = params.pads[i]
            lo = default_size(n.lo, k, s, pb, pe)
            hi = None if n.hi is None else default_size(n.hi, k, s, pb, pe)
            dims.append(Dim(max(lo, 0), hi))
            texts.append(f"({n} - 1) * {s} - ({pb} + {pe}) + {k} = {dims[-1]}")
        return tuple(dims), tuple(texts)

    def plan(
        self, params: FamilyParams, shape: tuple[int, ...], dtype: str, convention: Convention
    ) -> UnpoolPlan:
        assert isinstance(params, UnpoolParams)
        if convention.onnx_front_end:
            raise SpecError(
                "openvino has no conversion rule for MaxUnpool ('No conversion rule found for "
                f"operations: {params.op}'): the openvino convention has no meaning for it"
            )
        if len(shape) != len(params.kernel) + 2:
            raise SpecError(
                f"kernel_shape has {len(params.kernel)} values for a rank-{len(shape)} input"
            )
        if dtype not in FLOAT_DTYPES:
            raise SpecError(f"{params.op} takes float data, not {dtype}")
        default = [*shape[:2]]
        for i, n in enumerate(shape[2:]):
            pb, pe = params.pads[i]
            if convention.torch_checks and pb != pe:
                raise SpecError("PyTorch's max_unpool pads symmetrically; the pads differ")
            size = default_size(n, params.kernel[i], params.strides[i], pb, pe)
            if size <= 0:
                raise SpecError(
                    f"Computed output dimension is not positive for axis {i + 2}. Check "
                    "kernel_shape, strides, and pads attributes."
                )
            default.append(size)
        out = tuple(default)
        if params.shape_input and params.output_shape is None:
            raise SpecError(
                "output_shape (input 2) is computed, not a constant; run the whole model"
            )
        if params.output_shape is not None:
            given = tuple(params.output_shape)
            if len(given) != len(shape):
                raise SpecError(
                    "output_shape must have the same number of elements as the rank of input "
                    f"tensor X ({len(shape)}); got {list(given)}"
                )
            if convention.onnxruntime_kernels and math.prod(given) < math.prod(out):
                raise SpecError(
                    f"output_shape is smaller than minimum required. output_shape:"
                    f"{_braces(given)} inferred output shape:{_braces(out)}"
                )
            if convention.torch_checks:
                for i in range(2, len(shape)):
                    lo, hi = out[i] - params.strides[i - 2], out[i] + params.strides[i - 2]
                    if not lo < given[i] < hi:
                        raise SpecError(
                            f'invalid output_size "{tuple(given[2:])}" (dim {i - 2} must be '
                            f"between {lo} and {hi})"
                        )
            out = given
        refused = None
        if convention.onnxruntime_kernels and dtype != "float32":
            refused = f"onnxruntime's MaxUnpool kernel takes float32, not {dtype}"
        return UnpoolPlan(
            **plan_head(params, convention, shape, out, dtype, refused_by=refused),
            default_shape=tuple(default),
            layout="tensor" if convention.onnxruntime_kernels else "plane",
        )

    def explain(self, plan: FamilyPlan) -> Explained:
        assert isinstance(plan, UnpoolPlan)
        where = (
            "flat over the whole output tensor (onnxruntime; after a MaxPool of an odd size "
            "they can land in another plane: D24)"
            if plan.layout == "tensor"
            else "flat within each (N, C) plane (PyTorch)"
        )
        lines = [
            f"default output {list(plan.default_shape)}: (in - 1) * stride - (pad_begin + "
            "pad_end) + kernel per spatial axis",
            f"output {list(plan.output_shape)}"
            + (" (output_shape)" if plan.output_shape != plan.default_shape else ""),
            f"indices: {where}",
            "each value of X written at its index in element order (a later duplicate wins); "
            "every other element 0",
        ]
        data = {
            "family": "unpool",
            "reduce": "unpool",
            "default_shape": list(plan.default_shape),
            "index_layout": plan.layout,
        }
        return Explained(lines, data, [plan.refused_by] if plan.refused_by else [])


UNPOOL = Unpool()
