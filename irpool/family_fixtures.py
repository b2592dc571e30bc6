"""Golden fixtures of the pooling families openvino's IRs hold besides windows: AdaptiveAvgPool-8,
AdaptiveMaxPool-8 and ReduceMean/Max/Sum-1, ReduceL1/L2-4.

The cases are FixtureSpecs like the windowed ones, with their constant inputs (the output size,
the axes) in `consts`; `fixtures.build` writes them with those Consts in model.bin and hands the
meta record to `built` here.  Expected outputs are irpool's openvino convention, which
reproduces openvino's CPU plugin bit for bit on them (tests/test_family_*.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from . import __version__

if TYPE_CHECKING:
    from .fixtures import Built, FixtureSpec
    from .frontends.ir_writer import NetBuilder
    from .run import RunResult

Array = npt.NDArray[Any]

# (name, op, opset, data, consts, element type, shape, first-seed offset)
Row = tuple[
    str, str, int, Mapping[str, str], tuple[tuple[str, tuple[int, ...]], ...], str, tuple[int, ...]
]

SMOKE: tuple[Row, ...] = (
    (
        "adaptiveavgpool8-2d-down-f32",
        "AdaptiveAvgPool",
        8,
        {},
        (("i64", (3, 3)),),
        "f32",
        (1, 3, 7, 9),
    ),
    (
        "adaptivemaxpool8-2d-up-i32-f32",
        "AdaptiveMaxPool",
        8,
        {"index_element_type": "i32"},
        (("i32", (5, 11)),),
        "f32",
        (2, 2, 4, 6),
    ),
    (
        "reducemean1-hw-f32",
        "ReduceMean",
        1,
        {"keep_dims": "false"},
        (("i64", (2, 3)),),
        "f32",
        (2, 8, 7, 7),
    ),
    (
        "reducemax1-keep-f16",
        "ReduceMax",
        1,
        {"keep_dims": "true"},
        (("i64", (-1,)),),
        "f16",
        (1, 4, 5, 19),
    ),
)

CORNERS: tuple[Row, ...] = (
    ("adaptiveavgpool8-1d-f32", "AdaptiveAvgPool", 8, {}, (("i64", (4,)),), "f32", (2, 3, 11)),
    (
        "adaptiveavgpool8-3d-f32",
        "AdaptiveAvgPool",
        8,
        {},
        (("i64", (2, 3, 4)),),
        "f32",
        (1, 2, 5, 6, 7),
    ),
    (
        "adaptiveavgpool8-2d-one-i32",
        "AdaptiveAvgPool",
        8,
        {},
        (("i64", (1, 1)),),
        "i32",
        (1, 3, 6, 5),
    ),
    (
        "adaptivemaxpool8-3d-i32-u8",
        "AdaptiveMaxPool",
        8,
        {"index_element_type": "i32"},
        (("i64", (2, 2, 3)),),
        "u8",
        (1, 2, 5, 6, 7),
    ),
    (
        "reducesum1-c-keep-f32",
        "ReduceSum",
        1,
        {"keep_dims": "true"},
        (("i64", (1,)),),
        "f32",
        (2, 6, 5, 5),
    ),
    (
        "reducel1-4-all-f32",
        "ReduceL1",
        4,
        {"keep_dims": "false"},
        (("i64", (0, 1, 2, 3)),),
        "f32",
        (2, 3, 4, 17),
    ),
    (
        "reducel2-4-last-bf16",
        "ReduceL2",
        4,
        {"keep_dims": "true"},
        (("i64", (-1, 0)),),
        "bf16",
        (2, 5, 6, 19),
    ),
    (
        "reducemean1-u8-saturates",
        "ReduceMean",
        1,
        {"keep_dims": "false"},
        (("i64", (2, 3)),),
        "u8",
        (1, 2, 4, 5),
    ),
)

FULL: tuple[Row, ...] = tuple(
    (
        f"{op.lower()}{opset}-{'-'.join(str(a) for a in axes)}-{'keep' if keep else 'drop'}-{et}",
        op,
        opset,
        {"keep_dims": "true" if keep else "false"},
        (("i64", axes),),
        et,
        (2, 3, 5, 21),
    )
    for op, opset in (
        ("ReduceMean", 1),
        ("ReduceMax", 1),
        ("ReduceSum", 1),
        ("ReduceL1", 4),
        ("ReduceL2", 4),
    )
    for axes in ((3,), (2, 3), (1,), (0, 1, 2, 3))
    for keep in (False, True)
    for et in ("f32",)
) + tuple(
    (
        f"{op.lower()}8-{'x'.join(map(str, size))}-{et}",
        op,
        8,
        {"index_element_type": "i32"} if op == "AdaptiveMaxPool" else {},
        (("i64", size),),
        et,
        (1, 3, 13, 10),
    )
    for op in ("AdaptiveAvgPool", "AdaptiveMaxPool")
    for size in ((1, 1), (2, 3), (7, 5), (13, 10), (20, 17))
    for et in ("f32", "f16", "i8")
)


def preset_cases() -> list[FixtureSpec]:
    """The `family` preset: a few cases of every op (1-D to 3-D adaptive pools, output sizes
    below, at and above the input, i32 and u8 data, i32 indices; reductions over one, two and
    every axis both ways, f16/bf16/u8), then every reduction kind over four axis sets both
    ways and adaptive sizes 1x1 to 20x17 in f32, f16 and i8."""
    from .fixtures import FixtureSpec

    rows = (*SMOKE, *CORNERS, *FULL)
    return [
        FixtureSpec(
            name,
            op,
            opset,
            dict(data),
            et,
            shape,
            "family",
            title=f"{op}-{opset} over {list(shape)}",
            consts=consts,
        )
        for name, op, opset, data, consts, et, shape in rows
    ]


def constants_of(graph: Any, layer: Any) -> tuple[tuple[str, tuple[int, ...]], ...] | None:
    """A family layer's constant inputs (element type, values) as a case takes them, or None
    when one is computed (the case cannot be built alone)."""
    from .families import int_values
    from .model import element_type_of_numpy
    from .ops import bind

    bound = bind(graph, layer)
    family = bound.family
    if family is None:
        return ()
    out = []
    for k in range(1, len(layer.inputs)):
        value = bound.constants[k] if k < len(bound.constants) else None
        values = int_values(value)
        if value is None or values is None:
            return None
        out.append((element_type_of_numpy(np.asarray(value).dtype.name) or "i64", values))
    return tuple(out)


def built(
    spec: FixtureSpec,
    net: NetBuilder,
    x: Array,
    result: RunResult,
    layer: str,
    record: Mapping[str, Any],
    tolerance: Mapping[str, Any],
    files: Mapping[str, Any],
) -> Built:
    """A family case computed in memory (fixtures.build's family branch): its meta record
    describes the family plan instead of window geometry."""
    from .divergences import touched_family
    from .fixtures import Built
    from .frontends.ir_writer import ordered_data

    bound = result.bound[layer]
    plan = result.family_plans[layer]
    family = bound.family
    assert family is not None
    explained = family.explain(plan)
    outputs = dict(result.outputs)
    meta: dict[str, Any] = {
        "schema": "irpool.fixture/1",
        "irpool": __version__,
        "name": spec.name,
        "title": spec.title,
        "origin": spec.origin,
        "op": spec.op,
        "version": f"opset{spec.opset}",
        "op_version": bound.spec.label,
        "attributes": dict(ordered_data(spec.op, spec.data)),
        "constants": {f"input{k}": list(v) for k, (_, v) in enumerate(spec.consts, start=1)},
        "element_type": spec.element_type,
        "dtype": x.dtype.name,
        "input_shape": list(x.shape),
        "output_shape": list(plan.output_shape),
        "outputs": {
            key: {"dtype": a.dtype.name, "shape": list(a.shape)} for key, a in outputs.items()
        },
        "convention": "openvino",
        "tolerance": dict(tolerance),
        "divergences": sorted(set(spec.divergences) | set(touched_family(plan, x))),
        "spec_error": spec.spec_error,
        "plan": explained.data,
        "input": {"stored_as": "uint16" if x.dtype.name == "bfloat16" else x.dtype.name, **record},
        "files": dict(files),
        "note": spec.note,
    }
    return Built(spec, net, x, outputs, meta)
