"""Golden fixtures: one folder per pooling case with the model, an input, the expected outputs
and a description, plus an `index.json` manifest (format: docs/fixtures.md).

Cases come from a preset (`smoke`, `corners`, `full`), from a user's TOML grid, or from a
pooling layer of a real model.  Expected outputs are computed by irpool's `openvino`
convention, which reproduces openvino's CPU plugin bit for bit; `verify` runs every case on
that plugin and records whether it confirms the numbers.

Files are written the safe way: each case is built in a temporary folder inside OUTDIR and
renamed into place when complete, so an interrupted run leaves whole cases or none, and
`resume` finishes it.  The same settings and seed give byte-identical files.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import math
import os
import re
import shutil
import tempfile
import time
import tomllib
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from . import __version__
from .arrays import check_elements, load_arrays, mismatches, save_npy, save_npz
from .cases import CASES, Case, IrLayer, ir_builder
from .divergences import TABLE
from .errors import IrpoolError, OutputError, UsageError, Where
from .files import UMASK, atomic_write_text, is_temporary_file
from .frontends.ir_writer import NetBuilder, int_list, ordered_data
from .frontends.ir_xml import load, parse_text
from .geometry import PoolParams, PoolPlan
from .kernel import empty_windows
from .model import Graph, Layer, bfloat16, element_type_of_numpy, numpy_dtype
from .ops import REGISTRY
from .ops import openvino as ov_ops
from .run import run_graph
from .shapes import infer

Array = npt.NDArray[Any]

META_SCHEMA = "irpool.fixture/1"
INDEX_SCHEMA = "irpool.fixtures/1"
PRESETS = ("smoke", "corners", "full")
MODEL, WEIGHTS, INPUT, EXPECTED, META, INDEX = (
    "model.xml",
    "model.bin",
    "input.npy",
    "expected.npz",
    "meta.json",
    "index.json",
)
CASE_FILES = (MODEL, INPUT, EXPECTED, META)
TEMP_PREFIX = ".irpool-tmp-"
"""Folders being written (or being replaced) inside OUTDIR; `resume` and `force` remove them,
and the temporary files `.irpool-*.tmp` of index.json (irpool.files.atomic_open)."""
LAYER = "pool"
MAX_GRID_CASES = 20000

CONVENTION = "openvino"
TOLERANCE: Mapping[str, Any] = {
    "atol": 0.0,
    "rtol": 0.0,
    "nan_equal": True,
    "signed_zero": False,
    "indices": "exact",
}
"""irpool's openvino convention equals openvino's CPU plugin exactly (docs/semantics.md,
"Tolerance"): compare values with atol = rtol = 0, NaN equal to NaN, the sign of a zero not
compared, indices exactly."""

DTYPES = ("f32", "f16", "bf16", "i8", "u8", "i32")
"""Element types of the `full` sweep (the grid also takes f64 and i64)."""
GRID_DTYPES = (*DTYPES, "f64", "i64")

FLOAT_STEP = 1 / 16
"""Random float inputs are multiples of 1/16 in [-8, 8]: exact in bfloat16, float16 and
float32, and every window sum is exact in float32, so the order of summation cannot change
a mean (a user's implementation may add in any order)."""
DEFAULT_RANGES: Mapping[str, tuple[float, float]] = {
    "f64": (-8.0, 8.0),
    "f32": (-8.0, 8.0),
    "f16": (-8.0, 8.0),
    "bf16": (-8.0, 8.0),
    "i8": (-128, 127),
    "u8": (0, 255),
    # sums of up to a few hundred taps stay below 2^24, exact in openvino's float32 mean
    "i32": (-50000, 50000),
    "i64": (-50000, 50000),
}


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

LOG = logging.getLogger("irpool")
"""Where `generate` reports its notes (Report.notes): without a logging configuration,
Python's last-resort handler writes each on stderr as one line."""


# -- what a case is ----------------------------------------------------------------------------


@dataclass(frozen=True)
class FixtureSpec:
    """One case to generate: a pooling layer, its input and what it is meant to show."""

    name: str
    op: str
    opset: int
    data: Mapping[str, str]
    element_type: str
    shape: tuple[int, ...]
    origin: str
    title: str = ""
    given: Any = None
    """Input values as nested lists (a table case), else None for a random input."""
    array: Array | None = field(default=None, compare=False, repr=False)
    """The input itself (a layer's real input taken from openvino), else None."""
    input_range: tuple[float, float] | None = None
    input_source: Mapping[str, Any] = field(default_factory=dict)
    divergences: tuple[str, ...] = ()
    spec_error: str | None = None
    note: str = ""

    @property
    def layer(self) -> IrLayer:
        return IrLayer(self.op, self.opset, self.data)


@dataclass
class Built:
    """A case computed in memory: the net, the arrays and the description."""

    spec: FixtureSpec
    net: NetBuilder
    input: Array
    outputs: dict[str, Array]
    meta: dict[str, Any]


@dataclass
class CaseStatus:
    """What openvino says about a case: confirmed, or diverges with the reason; `known` when
    the reason is a documented refusal (KNOWN_REFUSALS)."""

    name: str
    status: str  # confirmed | diverges
    reason: str | None = None
    known: bool = False


@dataclass
class Report:
    """What `generate` did; `index` is the manifest as written."""

    outdir: str
    written: int = 0
    kept: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    statuses: list[CaseStatus] = field(default_factory=list)
    seconds: float = 0.0
    verify_seconds: float = 0.0
    index: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """Remarks on the set that are not errors (a layer of a model that got a random input
    instead of its real one); `generate` also logs each as a warning of the "irpool" logger,
    which Python prints on stderr when the application configures no logging."""


# -- inputs and expected outputs ----------------------------------------------------------------


def _case_rng(seed: int, name: str) -> np.random.Generator:
    # one stream per case: adding or removing a case leaves the inputs of the others unchanged
    return np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])


def input_range(element_type: str, given: tuple[float, float] | None = None) -> tuple[float, float]:
    return given if given is not None else DEFAULT_RANGES.get(element_type, (-8.0, 8.0))


FLOAT_LIMIT = 2.0**53
"""Largest magnitude of a float input range (beyond it consecutive multiples of 1/16, and even
of 1, are no longer distinct in float64)."""
_FLOAT_MAX: Mapping[str, float] = {
    "f16": 65504.0,
    "bf16": 3.3895313892515355e38,
    "f32": 3.4028234663852886e38,
    "f64": 1.7976931348623157e308,
}
_INT_RANGE: Mapping[str, tuple[int, int]] = {
    "i8": (-(2**7), 2**7 - 1),
    "u8": (0, 2**8 - 1),
    "i32": (-(2**31), 2**31 - 1),
    "i64": (-(2**63), 2**63 - 1),
}


_FLOAT_BITS: Mapping[str, int] = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}
"""Significand bits (the implicit one included) of the float element types."""


def _round_up(value: float, bits: int) -> float:
    """The smallest number >= `value` with `bits` significant bits (exact float64 arithmetic;
    subnormals and overflow do not arise within the ranges range_problem accepts)."""
    if value == 0:
        return 0.0
    _, exponent = math.frexp(value)
    ulp = math.ldexp(1.0, exponent - bits)
    return math.ceil(value / ulp) * ulp


def range_problem(low: float, high: float, element_type: str) -> str | None:
    """Why random_input cannot draw `element_type` values from [low, high], or None: the bounds
    must be finite with low < high; a float range must lie within the type's finite values (and
    within +-2^53) and hold a multiple of 1/16 that the type holds; an integer range must hold
    an integer of the type (integer bounds are clipped to the type's range)."""
    if not (math.isfinite(low) and math.isfinite(high)) or not low < high:
        return "expected finite numbers low < high"
    if element_type in _INT_RANGE:
        t_min, t_max = _INT_RANGE[element_type]
        if max(math.ceil(low), t_min) > min(math.floor(high), t_max):
            return f"holds no {element_type} value (whole numbers in [{t_min}, {t_max}])"
        return None
    if element_type in _FLOAT_MAX:
        limit = min(_FLOAT_MAX[element_type], FLOAT_LIMIT)
        if low < -limit or high > limit:
            return f"expected low and high within [-{limit:.0f}, {limit:.0f}] for {element_type}"
        first = math.ceil(low / FLOAT_STEP) * FLOAT_STEP
        if first > high:
            return "holds no multiple of 1/16 (random float inputs are multiples of 1/16)"
        # the first multiple of 1/16 from low on that the type holds: `first` itself, or (when
        # the type's spacing there is 1/8 or more) `first` rounded up, a multiple of 1/8
        held = _round_up(first, _FLOAT_BITS[element_type])
        if held > high:
            return (
                f"holds no {element_type} value that is a multiple of 1/16 (random float inputs "
                f"are; the first {element_type} value from {low!r} on is {held!r})"
            )
    return None


def random_input(
    shape: tuple[int, ...],
    element_type: str,
    seed: int,
    name: str,
    value_range: tuple[float, float] | None = None,
) -> Array:
    """A deterministic random input within [low, high]: floats are multiples of 1/16 that the
    element type holds, integers whole numbers."""
    dtype = numpy_dtype(element_type)
    low, high = input_range(element_type, value_range)
    rng = _case_rng(seed, name)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(math.ceil(low), int(info.min)), min(math.floor(high), int(info.max))
        values: Array = rng.integers(lo, hi, size=shape, endpoint=True, dtype=np.int64)
    else:
        lo_k, hi_k = math.ceil(low / FLOAT_STEP), math.floor(high / FLOAT_STEP)
        drawn = (rng.integers(lo_k, hi_k, size=shape, endpoint=True) * FLOAT_STEP).astype(dtype)
        # a multiple of 1/16 the type cannot hold is rounded to a neighbour (faithfully, also
        # through float64 first); one rounded past an end of the range takes the other
        # neighbour, which lies within it (range_problem: the range holds a value of the type)
        as_f64 = drawn.astype(np.float64)
        for outside, toward in ((as_f64 > high, -np.inf), (as_f64 < low, np.inf)):
            if outside.any():
                drawn[outside] = np.nextafter(drawn[outside], np.asarray(toward, dtype=dtype))
        values = drawn
    return np.asarray(values.astype(dtype))


def _input_of(spec: FixtureSpec, seed: int) -> Array:
    if spec.array is not None:
        return spec.array
    dtype = numpy_dtype(spec.element_type)
    if spec.given is not None:
        return np.asarray(np.array(spec.given, dtype=np.float64).astype(dtype).reshape(spec.shape))
    return random_input(spec.shape, spec.element_type, seed, spec.name, spec.input_range)


def exercised(params: PoolParams, plan: PoolPlan, x: Array) -> list[str]:
    """The named divergences this layer and input exercise (the divergence table): where
    openvino's numbers or shapes differ from another runtime's, or from the specification's
    formulas."""
    from .divergences import touched

    return sorted(touched(params, plan, x), key=_divergence_order)


def _divergence_order(key: str) -> tuple[int, str]:
    m = re.match(r"D(\d+)(.*)", key)
    return (int(m.group(1)), m.group(2)) if m else (10**6, key)


def build(spec: FixtureSpec, seed: int) -> Built:
    """Compute a case in memory: the net, its input, irpool's outputs and the meta record."""
    net = ir_builder(spec.layer, spec.shape, spec.element_type, LAYER)
    net.name = f"irpool_fixture_{spec.name}"
    graph = parse_text(net.xml(), f"{spec.name}/{MODEL}")
    x = _input_of(spec, seed)
    # irpool's semantics also for layers openvino has no kernel for (KNOWN_REFUSALS)
    result = run_graph(graph, {"x": x}, refuse=False)
    bound = result.bound[LAYER]
    plan = result.plans[LAYER]
    params = bound.params_for(x.ndim)
    divergences = sorted(
        set(spec.divergences) | set(exercised(params, plan, x)), key=_divergence_order
    )
    outputs = dict(result.outputs)
    empty = empty_windows(plan)
    meta: dict[str, Any] = {
        "schema": META_SCHEMA,
        "irpool": __version__,
        "name": spec.name,
        "title": spec.title,
        "origin": spec.origin,
        "op": spec.op,
        "version": f"opset{spec.opset}",
        "op_version": bound.spec.label,
        "attributes": dict(ordered_data(spec.op, spec.data)),
        "element_type": spec.element_type,
        "dtype": x.dtype.name,
        "input_shape": list(x.shape),
        "output_shape": list(plan.output_shape),
        "outputs": {
            key: {"dtype": a.dtype.name, "shape": list(a.shape)} for key, a in outputs.items()
        },
        "convention": CONVENTION,
        "tolerance": dict(TOLERANCE),
        "divergences": divergences,
        "spec_error": spec.spec_error,
        "plan": {
            "pads": [[a.pad_begin, a.pad_end] for a in plan.axes],
            "shape_rule": plan.shape_rule,
            "divisor": plan.divisor,
            "empty_windows": 0 if empty is None else int(np.count_nonzero(empty)),
        },
        "input": {
            "stored_as": "uint16" if x.dtype.name == "bfloat16" else x.dtype.name,
            **_input_record(spec, seed),
        },
        "files": {
            "model": MODEL,
            "weights": WEIGHTS if net.bin() else None,
            "input": INPUT,
            "expected": EXPECTED,
        },
        "note": spec.note,
    }
    return Built(spec, net, x, outputs, meta)


def _input_record(spec: FixtureSpec, seed: int) -> dict[str, Any]:
    if spec.input_source:
        return dict(spec.input_source)
    if spec.given is not None:
        return {"source": "table"}
    low, high = input_range(spec.element_type, spec.input_range)
    kind = "integers" if numpy_dtype(spec.element_type).kind in "iu" else "multiples of 1/16"
    return {
        "source": "random",
        "seed": seed,
        "low": float(low),
        "high": float(high),
        "values": kind,
    }


# -- presets ------------------------------------------------------------------------------------


VERSIONS: tuple[tuple[str, int], ...] = (
    ("AvgPool", 1),
    ("AvgPool", 14),
    ("AvgPool", 16),
    ("MaxPool", 1),
    ("MaxPool", 8),
    ("MaxPool", 14),
)
AUTO_PADS = ("explicit", "same_upper", "same_lower", "valid")
INDEX_VARIANTS = ((0, "i64"), (0, "i32"), (2, "i64"), (2, "i32"))


@dataclass(frozen=True)
class Geometry:
    """Per-axis window values of the sweep; a rank-r case takes the first r of each."""

    key: str
    kernel: tuple[int, int, int]
    strides: tuple[int, int, int]
    pads_begin: tuple[int, int, int]
    pads_end: tuple[int, int, int]
    dilations: tuple[int, int, int]


GEOMETRIES = (
    Geometry("a", (3, 2, 3), (2, 1, 2), (1, 0, 1), (1, 1, 0), (1, 1, 1)),
    Geometry("b", (2, 3, 2), (2, 2, 1), (0, 1, 0), (1, 1, 1), (2, 1, 2)),
    Geometry("c", (3, 3, 2), (1, 2, 3), (1, 1, 0), (0, 2, 1), (1, 2, 1)),
    Geometry("d", (1, 2, 3), (3, 2, 2), (0, 0, 1), (0, 1, 1), (1, 1, 2)),
    Geometry("e", (4, 2, 2), (3, 3, 2), (2, 1, 0), (2, 0, 1), (1, 2, 1)),
    # a pad as large as the window (D11): refused by AvgPool with exclude-pad=true
    Geometry("f", (2, 2, 3), (1, 2, 2), (2, 0, 1), (0, 2, 1), (1, 1, 1)),
    # a dilated axis whose last ceil window starts in the right padding (D2, D15 for MaxPool)
    Geometry("g", (3, 3, 2), (5, 2, 4), (0, 1, 1), (3, 1, 2), (2, 1, 2)),
)
SHAPES: Mapping[int, tuple[int, ...]] = {1: (2, 1, 9), 2: (1, 3, 7, 6), 3: (1, 2, 5, 6, 4)}
"""Input shapes of the sweep by spatial rank; the 1-D one has a single channel, which some
integer AvgPool configurations of openvino's CPU plugin do not support (KNOWN_REFUSALS)."""


def _has(op: str, opset: int, attribute: str) -> bool:
    spec, _ = ov_ops.select(op, f"opset{opset}", {})
    return attribute in spec.wire_names()


def layer_data(
    op: str,
    opset: int,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads_begin: Sequence[int],
    pads_end: Sequence[int],
    dilations: Sequence[int] | None = None,
    rounding_type: str = "floor",
    auto_pad: str = "explicit",
    exclude_pad: bool | None = None,
    index_element_type: str | None = None,
    axis: int | None = None,
) -> dict[str, str]:
    """`<data>` strings of a pooling layer as openvino writes them: pads zeroed unless
    auto_pad is explicit (its serializer does so), dilations always written where the version
    has them (openvino 2026.4's CPU plugin crashes or fails without)."""
    explicit = auto_pad == "explicit"
    rank = len(kernel)
    data = {
        "kernel": int_list(kernel),
        "strides": int_list(strides),
        "pads_begin": int_list(pads_begin if explicit else (0,) * rank),
        "pads_end": int_list(pads_end if explicit else (0,) * rank),
        "rounding_type": rounding_type,
        "auto_pad": auto_pad,
    }
    if op == "AvgPool":
        data["exclude-pad"] = "true" if exclude_pad or exclude_pad is None else "false"
    if _has(op, opset, "dilations"):
        data["dilations"] = int_list(dilations if dilations is not None else (1,) * rank)
    if _has(op, opset, "index_element_type"):
        data["index_element_type"] = index_element_type or "i64"
        data["axis"] = str(0 if axis is None else axis)
    return ordered_data(op, data)


def _valid(op: str, opset: int, data: Mapping[str, str], shape: tuple[int, ...]) -> str | None:
    """None when openvino's rules accept the layer on this input shape, else why not."""
    from .geometry import plan

    try:
        spec, _ = ov_ops.select(op, f"opset{opset}", data)
        plan(ov_ops.params(spec, data, len(shape)), shape, CONVENTION)
    except IrpoolError as e:
        return e.message
    return None


def _variants(op: str, opset: int) -> list[tuple[str, dict[str, Any]]]:
    if op == "AvgPool":
        return [("exclude_pad", {"exclude_pad": True}), ("count_pad", {"exclude_pad": False})]
    if _has(op, opset, "index_element_type"):
        return [
            (f"axis{axis}-{it}", {"axis": axis, "index_element_type": it})
            for axis, it in INDEX_VARIANTS
        ]
    return [("", {})]


def _sweep_case(
    name: str,
    op: str,
    opset: int,
    rank: int,
    rounding: str,
    auto_pad: str,
    extra: Mapping[str, Any],
    element_type: str,
    first: int,
    origin: str,
) -> FixtureSpec | None:
    """A sweep case with the first geometry, from `first` on, that openvino accepts."""
    shape = SHAPES[rank]
    for step in range(len(GEOMETRIES)):
        g = GEOMETRIES[(first + step) % len(GEOMETRIES)]
        data = layer_data(
            op,
            opset,
            g.kernel[:rank],
            g.strides[:rank],
            g.pads_begin[:rank],
            g.pads_end[:rank],
            g.dilations[:rank],
            rounding,
            auto_pad,
            **extra,
        )
        if _valid(op, opset, data, shape) is None:
            return FixtureSpec(
                name,
                op,
                opset,
                data,
                element_type,
                shape,
                origin,
                title=f"{op}-{opset} {rank}-D, rounding {rounding}, auto_pad {auto_pad}, "
                f"{element_type}, geometry {g.key}",
            )
    return None


def full_cases() -> list[FixtureSpec]:
    """Op versions x ranks x rounding x auto_pad x (exclude-pad | index axis and type), each
    with a rotating geometry and element type; then every version x element type x rank once
    with padding and ceil rounding."""
    out: list[FixtureSpec] = []
    counter = 0
    for op, opset in VERSIONS:
        roundings = ov_ops.select(op, f"opset{opset}", {})[0].roundings
        for rank in (1, 2, 3):
            for rounding in roundings:
                for auto_pad in AUTO_PADS:
                    for label, extra in _variants(op, opset):
                        # the element type steps backwards through DTYPES and shifts by one
                        # every len(DTYPES) cases, so that no type stays tied to one variant
                        # of these loops (their lengths are multiples of len(DTYPES))
                        et = DTYPES[(counter * 5 + counter // len(DTYPES)) % len(DTYPES)]
                        parts = [f"{op.lower()}{opset}", f"{rank}d", rounding, auto_pad, label, et]
                        name = "-".join(p for p in parts if p)
                        case = _sweep_case(
                            name, op, opset, rank, rounding, auto_pad, extra, et, counter, "full"
                        )
                        counter += 1
                        if case is not None:
                            out.append(case)
    for op, opset in VERSIONS:
        for et in DTYPES:
            for rank in (1, 2, 3):
                label, extra = _variants(op, opset)[-1]
                parts = ["types", f"{op.lower()}{opset}", f"{rank}d", "ceil", label, et]
                name = "-".join(p for p in parts if p)
                case = _sweep_case(name, op, opset, rank, "ceil", "explicit", extra, et, 0, "full")
                if case is not None:
                    out.append(case)
    return out


def smoke_cases() -> list[FixtureSpec]:
    """One small case per op version (and rank, and a few element types)."""
    rows: tuple[tuple[str, int, int, str, str, dict[str, Any], str, int], ...] = (
        ("AvgPool", 1, 2, "ceil", "explicit", {"exclude_pad": False}, "f32", 0),
        ("AvgPool", 14, 1, "ceil_torch", "explicit", {"exclude_pad": True}, "f16", 0),
        ("AvgPool", 16, 3, "floor", "same_upper", {"exclude_pad": True}, "bf16", 1),
        ("MaxPool", 1, 2, "floor", "same_lower", {}, "i8", 2),
        ("MaxPool", 8, 2, "ceil", "explicit", {"axis": 0, "index_element_type": "i64"}, "f32", 0),
        (
            "MaxPool",
            14,
            1,
            "ceil_torch",
            "valid",
            {"axis": 2, "index_element_type": "i32"},
            "u8",
            3,
        ),
    )
    out = []
    for op, opset, rank, rounding, auto_pad, extra, et, first in rows:
        name = f"{op.lower()}{opset}-{rank}d-{rounding}-{auto_pad}-{et}"
        case = _sweep_case(name, op, opset, rank, rounding, auto_pad, extra, et, first, "smoke")
        assert case is not None
        out.append(case)
    return out


def _table_case(case: Case) -> FixtureSpec:
    assert case.openvino is not None
    et = element_type_of_numpy(case.dtype)
    assert et is not None
    key = case.key.split("-")[0]
    return FixtureSpec(
        case.key,
        case.openvino.type,
        case.openvino.opset,
        dict(case.openvino.data),
        et,
        tuple(case.shape),
        "corners",
        title=case.title,
        given=case.input,
        divergences=(key,),
        note=case.note,
        input_source={"source": "table", "case": case.key},
    )


@dataclass(frozen=True)
class SpecExample:
    """An example of the AvgPool-1 specification (avg-pool-1.rst; fixtures/spec/)."""

    number: int
    data: Mapping[str, str]
    declared: tuple[int, int]


SPEC_EXAMPLES = (
    SpecExample(
        1,
        {
            "auto_pad": "same_upper",
            "exclude-pad": "true",
            "kernel": "2,2",
            "pads_begin": "0,0",
            "pads_end": "1,1",
            "strides": "2,2",
        },
        (32, 32),
    ),
    SpecExample(
        2,
        {
            "auto_pad": "same_upper",
            "exclude-pad": "false",
            "kernel": "5,5",
            "pads_begin": "0,0",
            "pads_end": "1,1",
            "strides": "2,2",
        },
        (32, 32),
    ),
    SpecExample(
        3,
        {
            "auto_pad": "explicit",
            "exclude-pad": "true",
            "kernel": "5,5",
            "pads_begin": "1,1",
            "pads_end": "1,1",
            "strides": "3,3",
        },
        (10, 10),
    ),
    SpecExample(
        4,
        {
            "auto_pad": "explicit",
            "exclude-pad": "false",
            "kernel": "5,5",
            "pads_begin": "1,1",
            "pads_end": "1,1",
            "strides": "2,2",
        },
        (15, 15),
    ),
    SpecExample(
        5,
        {
            "auto_pad": "valid",
            "exclude-pad": "true",
            "kernel": "5,5",
            "pads_begin": "1,1",
            "pads_end": "1,1",
            "strides": "2,2",
        },
        (14, 14),
    ),
)
SPEC_INPUT = (1, 3, 32, 32)


def _spec_case(example: SpecExample) -> FixtureSpec:
    from .geometry import plan

    # the attributes as the spec writes them, in openvino's list format ("2, 2")
    data = {
        key: int_list(int(v) for v in value.split(",")) if "," in value else value
        for key, value in example.data.items()
    }
    spec, _ = ov_ops.select("AvgPool", "opset1", data)
    p = plan(ov_ops.params(spec, data, 4), SPEC_INPUT, CONVENTION)
    computed = tuple(a.out for a in p.axes)
    error = None
    divergences: tuple[str, ...] = ()
    if computed != example.declared:
        a = p.axes[0]
        pads = ", ".join(f"({a.pad_begin}, {a.pad_end})" for a in p.axes)
        error = (
            f"avg-pool-1.rst example {example.number} declares output 1x3x"
            f"{example.declared[0]}x{example.declared[1]}; openvino computes 1x3x"
            f"{computed[0]}x{computed[1]}: {data['auto_pad']} gives ceil(input / stride) = "
            f"ceil({a.size} / {a.stride}) = {a.out} per axis, with pads {pads}"
            + ("; the written pads are ignored" if data["auto_pad"] != "explicit" else "")
        )
        divergences = ("D13",)
    return FixtureSpec(
        f"spec-avgpool1-example{example.number}",
        "AvgPool",
        1,
        data,
        "f32",
        SPEC_INPUT,
        "corners",
        title=f"AvgPool-1 specification, example {example.number}",
        divergences=divergences,
        spec_error=error,
        note="" if error else "the specification's declared output shape is right",
    )


def _ramp(shape: tuple[int, ...]) -> list[Any]:
    values: list[Any] = np.arange(math.prod(shape), dtype=np.float64).reshape(shape).tolist()
    return values


# Divergences of docs/semantics.md that are IR layers but have no IR row in irpool/cases.py
# (there they are written for the other runtime only).
EXTRA_CORNERS = (
    FixtureSpec(
        "D3",
        "AvgPool",
        14,
        layer_data(
            "AvgPool", 14, (3, 3), (2, 2), (1, 1), (1, 1), None, "ceil_torch", "explicit", False
        ),
        "f32",
        (1, 1, 6, 6),
        "corners",
        title="the AvgPool-14 openvino's PyTorch front end makes of avg_pool2d(k=3, s=2, p=1, "
        "ceil_mode=True, count_include_pad=True); on this ramp PyTorch differs by up to 17/3",
        given=_ramp((1, 1, 6, 6)),
        divergences=("D3",),
        input_source={"source": "table", "case": "D3"},
    ),
    FixtureSpec(
        "D15",
        "MaxPool",
        8,
        layer_data(
            "MaxPool", 8, (3, 2), (2, 3), (1, 1), (1, 1), (2, 2), "ceil", "explicit", axis=2
        ),
        "f32",
        (1, 1, 9, 11),
        "corners",
        title="MaxPool-8 ceil with dilations: 4x5 outputs where PyTorch (MaxPool-14 ceil_torch) "
        "gives 4x4",
        given=_ramp((1, 1, 9, 11)),
        divergences=("D15",),
        input_source={"source": "table", "case": "D15"},
    ),
)


def corner_cases() -> list[FixtureSpec]:
    """Every named divergence an IR layer can express (irpool.cases and EXTRA_CORNERS), and
    the five examples of the AvgPool-1 specification with the shapes openvino computes."""
    table = [_table_case(c) for c in CASES if c.openvino is not None]
    return table + list(EXTRA_CORNERS) + [_spec_case(e) for e in SPEC_EXAMPLES]


def preset_cases(preset: str) -> list[FixtureSpec]:
    if preset == "smoke":
        return smoke_cases()
    if preset == "corners":
        return corner_cases()
    if preset == "full":
        return full_cases()
    raise UsageError(f"unknown preset {preset!r}; expected one of {', '.join(PRESETS)}")


# -- grid files ---------------------------------------------------------------------------------


GRID_KEYS: Mapping[str, str] = {
    "name": "prefix of the case folder names (letters, digits, '.', '_', '-'); required",
    "op": '"AvgPool" or "MaxPool"; required',
    "version": "opset number(s): 1, 14, 16 (AvgPool); 1, 8, 14 (MaxPool); required",
    "shape": "input shape [N, C, spatial...] or a list of shapes; required",
    "kernel": "window per spatial axis, one integer for every axis, or a list; required",
    "strides": "default 1",
    "pads_begin": "default 0",
    "pads_end": "default 0",
    "dilations": "default 1; written for AvgPool-16 and MaxPool-8/14",
    "rounding_type": '"floor", "ceil", "ceil_torch" or a list; default "floor"',
    "auto_pad": '"explicit", "same_upper", "same_lower", "valid" or a list; default "explicit"',
    "exclude_pad": "AvgPool: true, false or [true, false]; default true",
    "index_element_type": 'MaxPool-8/14: "i64", "i32" or a list; default "i64"',
    "axis": "MaxPool-8/14: index axis (0 = flat, 2 = per plane) or a list; default 0",
    "dtype": f"element type(s): {', '.join(GRID_DTYPES)}; default f32",
    "range": "[low, high] of the random input; default by element type",
}
_LIST_KEYS = ("kernel", "strides", "pads_begin", "pads_end", "dilations")
_CHOICES: Mapping[str, tuple[str, ...]] = {
    "rounding_type": ("floor", "ceil", "ceil_torch"),
    "auto_pad": AUTO_PADS,
    "index_element_type": ("i64", "i32"),
    "dtype": GRID_DTYPES,
}
_DEFAULTS: Mapping[str, Any] = {
    "strides": 1,
    "pads_begin": 0,
    "pads_end": 0,
    "dilations": 1,
    "rounding_type": "floor",
    "auto_pad": "explicit",
    "exclude_pad": True,
    "index_element_type": "i64",
    "axis": 0,
    "dtype": "f32",
}


def _grid_error(path: str, sweep: int | None, message: str) -> UsageError:
    where = f"[[sweep]] #{sweep}: " if sweep is not None else ""
    return UsageError(f"{where}{message}", Where(file=path))


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _alternatives(path: str, n: int, key: str, value: object) -> list[Any]:
    """A grid value as a list of alternatives (ints for every axis stay ints)."""
    if key in _LIST_KEYS or key == "shape":
        if _is_int(value):
            if key == "shape":
                raise _grid_error(path, n, f"{key} = {value}: expected a list [N, C, ...]")
            return [value]
        if isinstance(value, list) and value and all(_is_int(v) for v in value):
            return [tuple(value)]
        if (
            isinstance(value, list)
            and value
            and all(
                (_is_int(v) and key != "shape")
                or (isinstance(v, list) and v and all(_is_int(w) for w in v))
                for v in value
            )
        ):
            return [v if _is_int(v) else tuple(v) for v in value]
        raise _grid_error(
            path,
            n,
            f"{key} = {value!r}: expected an integer, a list of integers or a list of lists",
        )
    if key == "range":
        if (
            isinstance(value, list)
            and len(value) == 2
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
            and all(math.isfinite(v) for v in value)
            and value[0] < value[1]
        ):
            return [(float(value[0]), float(value[1]))]
        raise _grid_error(
            path, n, f"range = {value!r}: expected [low, high], finite numbers with low < high"
        )
    items = value if isinstance(value, list) else [value]
    if not items:
        raise _grid_error(path, n, f"{key} is an empty list; expected at least one value")
    kinds: Mapping[str, type | tuple[type, ...]] = {
        "version": int,
        "exclude_pad": bool,
        "axis": int,
        "rounding_type": str,
        "auto_pad": str,
        "index_element_type": str,
        "dtype": str,
    }
    for item in items:
        want = kinds[key]
        if not isinstance(item, want) or (want is int and isinstance(item, bool)):
            raise _grid_error(path, n, f"{key} = {value!r}: expected {GRID_KEYS[key]}")
    allowed = _CHOICES.get(key)
    if allowed is not None:
        bad = [v for v in items if v not in allowed]
        if bad:
            raise _grid_error(
                path, n, f"{key} {bad[0]!r} is not supported; expected {', '.join(allowed)}"
            )
    return list(items)


def _per_axis(value: int | tuple[int, ...], rank: int) -> tuple[int, ...]:
    return (value,) * rank if isinstance(value, int) else value


def _slug(value: object) -> str:
    if isinstance(value, tuple):
        return "x".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def grid_cases(path: str) -> tuple[list[FixtureSpec], list[tuple[str, str]], str]:
    """The cases a TOML grid describes, the combinations skipped (with openvino's reason), and
    the file's SHA-256.  Keys: GRID_KEYS (docs/fixtures.md)."""
    from .frontends.safe_io import read_regular_file

    raw = read_regular_file(path, 1 << 20, what="grid")
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"not a readable TOML file: {e}", Where(file=path)) from None
    unknown = sorted(set(doc) - {"sweep"})
    if unknown:
        raise _grid_error(path, None, f"unknown key(s) {', '.join(unknown)}; expected [[sweep]]")
    sweeps = doc.get("sweep")
    if not isinstance(sweeps, list) or not sweeps or not all(isinstance(s, dict) for s in sweeps):
        raise _grid_error(path, None, "no [[sweep]] tables; expected at least one")
    cases: list[FixtureSpec] = []
    skipped: list[tuple[str, str]] = []
    seen_names: set[str] = set()
    seen_layers: set[tuple[Any, ...]] = set()
    for n, sweep in enumerate(sweeps, start=1):
        bad = sorted(set(sweep) - set(GRID_KEYS))
        if bad:
            raise _grid_error(
                path, n, f"unknown key(s) {', '.join(bad)}; known: {', '.join(GRID_KEYS)}"
            )
        for key in ("name", "op", "version", "shape", "kernel"):
            if key not in sweep:
                raise _grid_error(path, n, f'"{key}" is missing; {key}: {GRID_KEYS[key]}')
        prefix, op = sweep["name"], sweep["op"]
        if not isinstance(prefix, str) or not _NAME.match(prefix):
            raise _grid_error(path, n, f"name = {prefix!r}: expected {GRID_KEYS['name']}")
        if op not in ("AvgPool", "MaxPool"):
            raise _grid_error(path, n, f'op = {op!r}: expected "AvgPool" or "MaxPool"')
        keys = [k for k in GRID_KEYS if k not in ("name", "op")]
        options = {
            k: _alternatives(path, n, k, sweep.get(k, _DEFAULTS.get(k)))
            for k in keys
            if k in sweep or k in _DEFAULTS
        }
        options.setdefault("range", [None])
        total = math.prod(len(v) for v in options.values())
        if len(cases) + total > MAX_GRID_CASES:
            raise _grid_error(
                path, n, f"the grid has more than {MAX_GRID_CASES} combinations; split it"
            )
        swept = [k for k, v in options.items() if len(v) > 1]
        for combo in itertools.product(*options.values()):
            chosen = dict(zip(options, combo, strict=True))
            if chosen.get("range") is not None:
                low, high = chosen["range"]
                problem = range_problem(low, high, chosen["dtype"])
                if problem is not None:
                    raise _grid_error(
                        path,
                        n,
                        f"range = [{low!r}, {high!r}] with dtype {chosen['dtype']}: {problem}",
                    )
            label = "-".join([prefix] + [_slug(chosen[k]) for k in swept])
            case, reason = _grid_case(op, chosen, label)
            if case is None:
                skipped.append((label, reason))
                continue
            identity = (
                case.opset,
                tuple(case.data.items()),
                case.shape,
                case.element_type,
                case.input_range,
            )
            if identity in seen_layers:
                continue  # a key that does not apply to this version made a duplicate
            seen_layers.add(identity)
            name, k = label, 2
            while name in seen_names:
                name, k = f"{label}-{k}", k + 1
            seen_names.add(name)
            cases.append(case if name == label else _renamed(case, name))
    return cases, skipped, hashlib.sha256(raw).hexdigest()


def _renamed(case: FixtureSpec, name: str) -> FixtureSpec:
    from dataclasses import replace

    return replace(case, name=name)


def _grid_case(op: str, chosen: Mapping[str, Any], name: str) -> tuple[FixtureSpec | None, str]:
    shape = tuple(chosen["shape"])
    opset = chosen["version"]
    if not 3 <= len(shape) <= 5:
        return None, f"shape {list(shape)} has rank {len(shape)}; expected 3 to 5"
    if any(d < 1 for d in shape):
        return None, f"shape {list(shape)} has a dim below 1"
    try:
        check_elements(shape, f"input of {name}", None)
        ov_ops.select(op, f"opset{opset}", {})
    except IrpoolError as e:
        return None, e.message
    rank = len(shape) - 2
    lists = {k: _per_axis(chosen[k], rank) for k in _LIST_KEYS}
    data = layer_data(
        op,
        opset,
        lists["kernel"],
        lists["strides"],
        lists["pads_begin"],
        lists["pads_end"],
        lists["dilations"],
        chosen["rounding_type"],
        chosen["auto_pad"],
        exclude_pad=chosen.get("exclude_pad") if op == "AvgPool" else None,
        index_element_type=chosen["index_element_type"],
        axis=chosen["axis"],
    )
    reason = _valid(op, opset, data, shape)
    if reason is not None:
        return None, reason
    return (
        FixtureSpec(
            name,
            op,
            opset,
            data,
            chosen["dtype"],
            shape,
            "grid",
            title=f"{op}-{opset} from the grid",
            input_range=chosen.get("range"),
        ),
        "",
    )


# -- from a real model --------------------------------------------------------------------------


def _canonical_data(op: str, version: str, data: Mapping[str, str]) -> tuple[dict[str, str], str]:
    """A real layer's attributes in openvino's written form (lists "2, 2", enums lower case),
    with dilations added where the version needs them; and a note on what changed."""
    spec, _ = ov_ops.select(op, version, data)
    out: dict[str, str] = {}
    changed: list[str] = []
    for key, value in data.items():
        attr = next((a for a in spec.attrs if a.wire == key), None)
        text = value.strip()
        if attr is not None and attr.kind == "ints":
            text = int_list(int(v) for v in text.split(",") if v.strip())
        elif attr is not None and attr.kind == "enum":
            text = text.lower()
        out[key] = text
    if "dilations" in spec.wire_names() and not out.get("dilations"):
        out["dilations"] = int_list(1 for _ in out.get("kernel", "1").split(","))
        changed.append(
            'dilations="' + out["dilations"] + '" added (the model has none; openvino 2026.4 '
            "reads none as all 1 but its CPU plugin crashes or fails without)"
        )
    return ordered_data(op, out), "; ".join(changed)


def model_cases(
    path: str, names: Sequence[str] | None, seed: int, use_openvino: bool = True
) -> list[FixtureSpec]:
    """Standalone cases of pooling layers of a real model: the layer's attributes, and its
    real input as openvino computes it inside the model (random model inputs from `seed`).
    A layer openvino cannot give its input for (openvino is not installed, cannot read or run
    the model, or drops the layer) gets a random input of the shape irpool infers for it, and
    `input_source["why"]` says why; only a layer irpool cannot build is refused."""
    from .frontends.onnx_model import is_onnx_path
    from .run import find_layer

    if is_onnx_path(path):
        raise UsageError(
            "--from takes an OpenVINO IR (.xml): fixtures are IR layers; convert the ONNX model "
            "first (openvino's ovc writes an IR)",
            Where(file=path),
        )
    graph = load(path)
    if graph.fragment:
        raise UsageError(f"{path} holds layer fragments; --from needs a full net")
    pooling = [la for la in graph.layers if REGISTRY.is_pooling(la)]
    layers = [find_layer(graph, n) for n in names] if names else pooling
    if not layers:
        raise UsageError(f"{path} has no pooling layer (AvgPool, MaxPool)")
    for layer in layers:
        if not REGISTRY.is_pooling(layer):
            raise UsageError(
                f'layer "{layer.label}" is of type {layer.type}; --layer takes pooling layers '
                f"(AvgPool, MaxPool): {', '.join(la.label for la in pooling) or 'none'}"
            )
    # the same layer named twice (by name and by #N, say) is one case
    unique = list({layer.index: layer for layer in layers}.values())
    labels = [la.name or la.label for la in unique]
    real, runtime, why = _real_inputs(path, graph, labels, seed) if use_openvino else ({}, None, {})
    model = os.path.basename(path)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.splitext(model)[0])
    out: list[FixtureSpec] = []
    used: set[str] = set()
    for layer, label in zip(unique, labels, strict=True):
        version = layer.version or "opset1"
        spec, _ = ov_ops.select(layer.type, layer.version, layer.data)
        data, note = _canonical_data(layer.type, version, layer.data)
        name = f"{stem}-{re.sub(r'[^A-Za-z0-9._-]+', '_', label)}"
        while name in used:
            name += "_"
        used.add(name)
        source: dict[str, Any] = {"model": model, "layer": label, "seed": seed}
        if label in real:
            x = real[label]
            if x.dtype.name == "float64":
                x = x.astype(np.float32)
            et = element_type_of_numpy(x.dtype.name) or "f32"
            source.update(source="openvino", runtime=runtime)
            array: Array = x
            shape = tuple(x.shape)
        else:
            shape, et = _declared_input(graph, layer)
            array = random_input(shape, et, seed, name)
            low, high = input_range(et)
            kind = "integers" if numpy_dtype(et).kind in "iu" else "multiples of 1/16"
            source.update(source="random", low=float(low), high=float(high), values=kind)
            if use_openvino:
                source["why"] = why.get(label, "openvino is not installed")
        out.append(
            FixtureSpec(
                name,
                spec.family,
                spec.since,
                data,
                et,
                shape,
                "model",
                title=f'layer "{label}" of {model}',
                array=array,
                input_source=source,
                note=note,
            )
        )
    return out


def _real_inputs(
    path: str, graph: Graph, labels: Sequence[str], seed: int
) -> tuple[dict[str, Array], str | None, dict[str, str]]:
    """The input of each named layer inside the whole model as openvino computes it from
    random model inputs; openvino's version; and, for the layers it cannot give an input
    for, why not (one complete line).  Never raises for what openvino does."""
    from .errors import OracleMissing
    from .run import random_inputs

    model = os.path.basename(path)
    try:
        from .oracles import openvino_rt

        runtime = openvino_rt.version()
    except OracleMissing:
        return {}, None, {}
    try:
        inputs = random_inputs(graph, seed)
    except IrpoolError as e:
        reason = f"openvino cannot run {model} on random inputs: {e.message.split('; ')[0]}"
        return {}, runtime, dict.fromkeys(labels, reason)
    try:
        found, missing = _inputs_in_openvino(path, labels, inputs)
    except IrpoolError as e:
        reason = f"openvino cannot run {model}: {e.message}"
        return {}, runtime, dict.fromkeys(labels, reason)
    except Exception as e:  # openvino's own exceptions: it cannot read, compile or run it
        reason = f"openvino cannot run {model}: {openvino_words(str(e))}"
        return {}, runtime, dict.fromkeys(labels, reason)
    why = {
        name: f"openvino's graph of {model} has no layer {name!r} (openvino drops layers that "
        "reach no Result)"
        for name in missing
    }
    return found, runtime, why


def _inputs_in_openvino(
    path: str, labels: Sequence[str], inputs: Mapping[str, Array]
) -> tuple[dict[str, Array], list[str]]:
    """Run the whole model in openvino and return the tensor feeding each named layer (as its
    element type says: f16 rounded); and the names openvino's graph does not have (it drops
    layers that reach no Result).  Only the layers' inputs are asked for (see
    openvino_rt.probe_layers)."""
    from .oracles import openvino_rt

    found, missing = openvino_rt.probe_layers(path, list(labels), inputs, held=False, outputs=False)
    return {name: ins[0] for name, (ins, _) in found.items()}, missing


def _declared_input(graph: Graph, layer: Layer) -> tuple[tuple[int, ...], str]:
    """The static input shape irpool infers for a layer, and its element type."""
    from .model import format_shape

    found = next(pl for pl in infer(graph).pooling if pl.layer.index == layer.index)
    shape = found.input_shape
    if shape is None or not all(d.is_static for d in shape):
        raise UsageError(
            f"the layer's input {format_shape(shape)} is not static; a fixture needs a static "
            "input shape",
            layer.where(),
        )
    et = (layer.inputs[0].element_type or "f32") if layer.inputs else "f32"
    return tuple(d.lo for d in shape), et


def notes_of(cases: Sequence[FixtureSpec]) -> list[str]:
    """One line per reason some layers of a model got a random input instead of their real
    one (input_source["why"]), naming the layers."""
    layers: dict[str, list[str]] = {}
    for c in cases:
        why = c.input_source.get("why")
        if why:
            layers.setdefault(str(why), []).append(str(c.input_source.get("layer", c.name)))
    out = []
    for why, names in layers.items():
        which = ", ".join(f'"{n}"' for n in names)
        takes = f"layers {which} get" if len(names) > 1 else f"layer {which} gets"
        out.append(
            f"{why}; {takes} a random input instead (meta.json: input.source random, input.why)"
        )
    return out


# -- writing --------------------------------------------------------------------------------------


def _json_text(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def _umask() -> int:
    return UMASK


def _share(path: str, mask: int) -> None:
    """Give a written file or folder the permissions a plain open() or mkdir() would (temporary
    files and folders are created private)."""
    os.chmod(path, (0o777 if os.path.isdir(path) else 0o666) & ~mask)


def _write_folder(folder: str, built: Built, mask: int) -> None:
    """The files of a case in `folder`, each through a temporary name."""
    built.net.save(os.path.join(folder, MODEL))
    save_npy(os.path.join(folder, INPUT), built.input)
    save_npz(os.path.join(folder, EXPECTED), built.outputs)
    atomic_write_text(os.path.join(folder, META), _json_text(built.meta))
    for entry in os.listdir(folder):
        _share(os.path.join(folder, entry), mask)
    _share(folder, mask)


def _is_case_folder(path: str) -> bool:
    try:
        with open(os.path.join(path, META), encoding="utf-8") as handle:
            return bool(json.load(handle).get("schema") == META_SCHEMA)
    except (OSError, ValueError, AttributeError):
        return False


def _complete(path: str) -> bool:
    return os.path.isdir(path) and all(os.path.isfile(os.path.join(path, f)) for f in CASE_FILES)


def write_case(outdir: str, built: Built, force: bool, mask: int | None = None) -> None:
    """Build the case in a temporary folder inside `outdir`, then rename it into place (with
    `force`, an existing case folder of the same name is replaced)."""
    final = os.path.join(outdir, built.spec.name)
    if os.path.lexists(final):
        if not force:
            raise OutputError(f"{final} exists; pass --force to replace it", Where(file=final))
        if os.path.islink(final) or not os.path.isdir(final) or not _is_case_folder(final):
            raise OutputError(
                f"{final} exists and is not an irpool fixture case; it is never replaced",
                Where(file=final),
            )
    tmp = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{built.spec.name}-", dir=outdir)
    try:
        _write_folder(tmp, built, _umask() if mask is None else mask)
        if os.path.lexists(final):
            old = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}old-{built.spec.name}-", dir=outdir)
            os.rename(final, os.path.join(old, "case"))
            os.rename(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _is_temporary(outdir: str, entry: str) -> bool:
    """Whether OUTDIR/entry is something an interrupted run left: a case folder being written
    (TEMP_PREFIX) or a file being written through a temporary name (index.json's)."""
    path = os.path.join(outdir, entry)
    if entry.startswith(TEMP_PREFIX):
        return os.path.isdir(path) and not os.path.islink(path)
    return is_temporary_file(outdir, entry)


def _remove_temporaries(outdir: str) -> None:
    for entry in os.listdir(outdir):
        if _is_temporary(outdir, entry):
            path = os.path.join(outdir, entry)
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(path)


def prepare_outdir(outdir: str, force: bool, resume: bool) -> None:
    """Check OUTDIR (created when missing, if its parent exists); refuse a non-empty one
    unless `force` or `resume`."""
    where = Where(file=outdir)
    if force and resume:
        raise UsageError("--force and --resume exclude each other; choose one")
    parent = os.path.dirname(os.path.abspath(outdir))
    if not os.path.lexists(outdir):
        if not os.path.isdir(parent):
            raise OutputError(
                f"the folder {parent} does not exist; create it first (irpool creates only "
                "OUTDIR itself)",
                where,
            )
        os.mkdir(outdir)
        return
    if not os.path.isdir(outdir):
        raise OutputError("OUTDIR exists and is not a directory; expected a folder", where)
    if os.listdir(outdir) and not (force or resume):
        raise OutputError(
            "OUTDIR exists and is not empty; pass --resume to complete an interrupted run or "
            "--force to write into it",
            where,
        )
    index = os.path.join(outdir, INDEX)
    if os.path.lexists(index) and (os.path.islink(index) or not os.path.isfile(index)):
        raise OutputError(f"{INDEX} exists and is not a regular file; refusing", Where(file=index))
    if force and os.path.lexists(index) and not _is_index(index):
        raise OutputError(
            f"{INDEX} exists and is not an irpool fixtures manifest (schema {INDEX_SCHEMA}); "
            "it is never replaced, even with --force",
            Where(file=index),
        )


def _is_index(path: str) -> bool:
    """Whether `path` is an index.json irpool wrote (a JSON object with its schema key)."""
    try:
        with open(path, encoding="utf-8") as handle:
            index = json.load(handle)
    except (OSError, ValueError):
        return False
    return isinstance(index, dict) and index.get("schema") == INDEX_SCHEMA


def _read_index(outdir: str) -> dict[str, Any] | None:
    path = os.path.join(outdir, INDEX)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            index = json.load(handle)
    except (OSError, ValueError) as e:
        raise OutputError(f"unreadable {INDEX} ({e}); cannot resume", Where(file=path)) from None
    if not isinstance(index, dict) or index.get("schema") != INDEX_SCHEMA:
        raise OutputError(f"not an irpool {INDEX}; cannot resume", Where(file=path))
    return index


# -- verification ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """A configuration openvino's CPU plugin is known not to compile (measured, 2026.4.1):
    the cases it `applies` to, and the words of openvino's error that identify it (`says`, a
    regular expression searched in the error on one line).  A case counts as this refusal
    only when both hold: another error on such a case is a new finding."""

    reason: str
    applies: Callable[[Mapping[str, Any]], bool]
    says: re.Pattern[str]


KNOWN_REFUSALS = (
    Refusal(
        "openvino's CPU plugin does not compile bfloat16 MaxPool-8/14 with its indices output",
        lambda m: (
            m["op"] == "MaxPool" and m["element_type"] == "bf16" and "indices" in m["outputs"]
        ),
        # measured: the plugin's pooling node takes MaxPool-8/14 with one output only, and the
        # reference fallback has no bfloat16 evaluate
        re.compile(
            r"MaxPool from opset8 and opset14 is supported only with one output.*"
            r"Cannot fallback on ngraph reference implementation.*opset(8|14)::MaxPool"
        ),
    ),
    Refusal(
        "openvino's CPU plugin has no i32/i64 AvgPool kernel for some single-channel (C = 1) "
        "configurations",
        lambda m: (
            m["op"] == "AvgPool"
            and m["element_type"] in ("i32", "i64")
            and m["input_shape"][1] == 1
        ),
        re.compile(r"Supported primitive descriptors list is empty for node: \S+ type: Pooling"),
    ),
)


def openvino_words(message: str) -> str:
    """An openvino error on one line, complete, without the source locations it prefixes its
    messages with ("Exception from src/...:224:", "Check '...' failed at src/...:21:")."""
    text = " ".join(message.split())
    text = re.sub(r"Exception from \S+:\d+:\s*", "", text)
    return re.sub(r"Check '.*?' failed at \S+:\d+:\s*", "", text).strip()


def refusal_reason(meta: Mapping[str, Any], message: str) -> tuple[str, bool]:
    """Why openvino does not compile a case, with openvino's words; and whether it is a known
    refusal: a case KNOWN_REFUSALS describes, refused with the error that names it."""
    text = " ".join(message.split())
    words = openvino_words(message)
    for known in KNOWN_REFUSALS:
        if known.applies(meta) and known.says.search(text):
            return f"{known.reason} (openvino: {words})", True
    return f"openvino's CPU plugin refuses it (openvino: {words})", False


def _ordered_bits(value: Any) -> int:
    """A float's bit pattern as an integer that counts representable values in order (+0 and
    -0 both 0), so that the difference of two is their distance in ulps."""
    bits = int(np.asarray(value).reshape(1).view(f"u{value.dtype.itemsize}")[0])
    sign = 1 << (8 * value.dtype.itemsize - 1)
    return -(bits - sign) if bits & sign else bits


def _distance(got: Any, want: Any) -> str:
    """How far apart two differing elements are: in ulps of their float type, or as integers."""
    if got.dtype.kind in "iu":
        return f"{abs(int(got) - int(want))} apart"
    g, w = float(got), float(want)
    if not (math.isfinite(g) and math.isfinite(w)):
        return "not both finite"
    return f"{abs(_ordered_bits(got) - _ordered_bits(want))} ulp of {got.dtype.name}"


def _same(got: Array, want: Array) -> tuple[bool, str]:
    """Whether openvino's array equals the expected one exactly (NaN equal, zero's sign not
    compared); else what differs, with the worst cell: its index, both values and how far."""
    if got.shape != want.shape:
        return False, f"shape {list(got.shape)} instead of {list(want.shape)}"
    if got.dtype != want.dtype:
        return False, f"dtype {got.dtype.name} instead of {want.dtype.name}"
    bad = mismatches(got, want, exact=True)
    count = int(np.count_nonzero(bad))
    if not count:
        return True, ""
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.abs(got.astype(np.float64) - want.astype(np.float64))
    gap = np.where(bad, np.nan_to_num(gap, nan=np.inf), -1.0)
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(gap)), gap.shape))
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    where = f"worst at {list(worst)}"
    if first != worst:
        where += f" (first at {list(first)})"
    return False, (
        f"{count} of {bad.size} values differ; {where}: openvino {_scalar(got[worst])}, "
        f"expected {_scalar(want[worst])}, {_distance(got[worst], want[worst])}"
    )


def _scalar(value: Any) -> str:
    """An element as a number: integers as they are, floats (bfloat16 too) by the repr of their
    exact value as a Python float."""
    if value.dtype.kind in "iu":
        return str(int(value))
    return repr(float(value))


def verify_case(folder: str, meta: Mapping[str, Any]) -> CaseStatus:
    """Run a written case on openvino's CPU plugin (f32 inference precision) from its files
    and compare with expected.npz."""
    from .oracles import openvino_rt

    name = str(meta["name"])
    try:
        model = openvino_rt.read_path(os.path.join(folder, MODEL))
    except Exception as e:  # openvino raises RuntimeError subclasses of its own
        return CaseStatus(
            name, "diverges", f"openvino cannot read {MODEL}: {openvino_words(str(e))}"
        )
    try:
        compiled = openvino_rt.compile_model(model, "f32")
    except Exception as e:
        reason, known = refusal_reason(meta, str(e))
        return CaseStatus(name, "diverges", reason, known)
    x = load_arrays(os.path.join(folder, INPUT))[""]
    if meta["dtype"] == "bfloat16":
        from .arrays import bfloat16_dtype

        x = x.view(bfloat16_dtype())
    expected = load_arrays(os.path.join(folder, EXPECTED))
    try:
        got = openvino_rt.infer(compiled, [x])
    except Exception as e:
        return CaseStatus(
            name, "diverges", f"openvino fails while running it: {openvino_words(str(e))}"
        )
    by_name = {
        next(iter(sorted(out.get_names())), str(i)): got[i]
        for i, out in enumerate(compiled.outputs)
    }
    for key, want in expected.items():
        if key not in by_name:
            return CaseStatus(name, "diverges", f"openvino has no output {key!r}")
        ok, why = _same(by_name[key], want)
        if not ok:
            return CaseStatus(name, "diverges", f"openvino computes other {key}: {why}")
    return CaseStatus(name, "confirmed")


# -- the run -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """What a set is generated from: recorded in index.json, compared by `resume`."""

    source: str  # preset | grid | model
    seed: int
    preset: str | None = None
    grid: str | None = None
    grid_sha256: str | None = None
    model: str | None = None
    model_sha256: str | None = None
    layers: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "seed": self.seed}
        if self.preset is not None:
            out["preset"] = self.preset
        if self.grid is not None:
            out.update(grid=self.grid, grid_sha256=self.grid_sha256)
        if self.model is not None:
            out.update(model=self.model, model_sha256=self.model_sha256, layers=list(self.layers))
        return out


def _sha256_of(path: str) -> str:
    from .frontends.safe_io import read_regular_file

    return hashlib.sha256(read_regular_file(path, 1 << 34, what="model")).hexdigest()


NO_BFLOAT16 = "bfloat16 needs ml_dtypes, which is not installed; pip install 'irpool[bf16]'"


def plan_cases(
    preset: str | None,
    grid: str | None,
    model: str | None,
    layers: Sequence[str] | None,
    seed: int,
) -> tuple[list[FixtureSpec], list[tuple[str, str]], Settings]:
    """The cases a command line asks for (one of preset, grid, model) and their settings."""
    if seed < 0:
        raise UsageError(f"--seed {seed}: expected an integer >= 0")
    chosen = [x for x in (preset, grid, model) if x is not None]
    if len(chosen) > 1:
        raise UsageError("--preset, --grid and --from exclude each other; choose one")
    if layers and model is None:
        raise UsageError("--layer needs --from MODEL.xml")
    skipped: list[tuple[str, str]] = []
    if grid is not None:
        cases, skipped, digest = grid_cases(grid)
        settings = Settings("grid", seed, grid=os.path.basename(grid), grid_sha256=digest)
    elif model is not None:
        cases = model_cases(model, layers, seed)
        settings = Settings(
            "model",
            seed,
            model=os.path.basename(model),
            model_sha256=_sha256_of(model),
            layers=tuple(layers or ()),
        )
    else:
        name = preset or "smoke"
        cases, settings = preset_cases(name), Settings("preset", seed, preset=name)
    if bfloat16() is None:
        # bfloat16 arrays need ml_dtypes, an optional dependency: leave those cases out, say so
        skipped += [(c.name, NO_BFLOAT16) for c in cases if c.element_type == "bf16"]
        cases = [c for c in cases if c.element_type != "bf16"]
    return cases, skipped, settings


def _entry(meta: Mapping[str, Any], status: CaseStatus | None) -> dict[str, Any]:
    return {
        "name": meta["name"],
        "op": meta["op"],
        "version": meta["version"],
        "element_type": meta["element_type"],
        "input_shape": meta["input_shape"],
        "output_shape": meta["output_shape"],
        "divergences": meta["divergences"],
        "spec_error": meta["spec_error"] is not None,
        "status": status.status if status else "unverified",
        "reason": status.reason if status else None,
    }


def _index(
    settings: Settings,
    metas: Sequence[Mapping[str, Any]],
    statuses: Mapping[str, CaseStatus],
    skipped: Sequence[tuple[str, str]],
    verification: Mapping[str, Any] | None,
    complete: bool,
) -> dict[str, Any]:
    entries = [_entry(m, statuses.get(str(m["name"]))) for m in metas]
    counts = {"cases": len(entries), "confirmed": 0, "diverges": 0, "unverified": 0}
    reasons: dict[str, int] = {}
    for e in entries:
        counts[e["status"]] += 1
        if e["reason"]:
            key = e["reason"].split(" (openvino: ")[0]
            reasons[key] = reasons.get(key, 0) + 1
    return {
        "schema": INDEX_SCHEMA,
        "irpool": __version__,
        "complete": complete,
        "settings": settings.to_json(),
        "verification": dict(verification) if verification else None,
        "counts": counts,
        "reasons": reasons,
        "divergences": {d.id: d.explained for d in TABLE if d.explained},
        "skipped": [{"name": n, "reason": r} for n, r in skipped],
        "cases": entries,
    }


def _write_index(outdir: str, index: Mapping[str, Any], mask: int) -> None:
    path = os.path.join(outdir, INDEX)
    atomic_write_text(path, _json_text(index))
    _share(path, mask)


def _read_meta(folder: str) -> dict[str, Any]:
    with open(os.path.join(folder, META), encoding="utf-8") as handle:
        meta: dict[str, Any] = json.load(handle)
    return meta


Progress = Callable[[int, int, str], None]

WRITERS = 8
"""Threads writing case folders: most of the time of a case is the fsync of its files, which
threads overlap (measured: 564 cases in 8.3 s with one writer, 0.9 s with eight)."""


def _write_cases(
    outdir: str,
    cases: Sequence[FixtureSpec],
    seed: int,
    force: bool,
    resume: bool,
    mask: int,
    report: Report,
    progress: Progress | None,
    verify: bool,
) -> list[dict[str, Any]]:
    """Build every case in order (or read a complete one back when resuming) and hand the
    folders to writer threads; the meta records in case order."""
    metas: list[dict[str, Any]] = []
    pending: deque[tuple[str, Future[None]]] = deque()
    total = len(cases) * (2 if verify else 1)
    done = 0

    def finish(keep: int) -> None:
        """Collect finished writes in order; wait while more than `keep` are pending."""
        nonlocal done
        while pending and (len(pending) > keep or pending[0][1].done()):
            name, future = pending.popleft()
            future.result()
            done += 1
            if progress is not None:
                progress(done, total, name)

    with ThreadPoolExecutor(WRITERS, thread_name_prefix="irpool-fixtures") as pool:
        try:
            for case in cases:
                folder = os.path.join(outdir, case.name)
                if resume and os.path.lexists(folder):
                    if not _complete(folder) or not _is_case_folder(folder):
                        raise OutputError(
                            f"{folder} is not a complete irpool case; remove it and resume",
                            Where(file=folder),
                        )
                    metas.append(_read_meta(folder))
                    report.kept += 1
                    pending.append((case.name, _finished()))
                else:
                    built = build(case, seed)
                    metas.append(built.meta)
                    future = pool.submit(write_case, outdir, built, force, mask)
                    pending.append((case.name, future))
                    report.written += 1
                finish(keep=4 * WRITERS)
            finish(keep=0)
        except BaseException:
            # cases not started are dropped; those being written finish whole
            for _, future in pending:
                future.cancel()
            raise
    return metas


def _finished() -> Future[None]:
    future: Future[None] = Future()
    future.set_result(None)
    return future


def generate(
    outdir: str,
    cases: Sequence[FixtureSpec],
    settings: Settings,
    skipped: Sequence[tuple[str, str]] = (),
    force: bool = False,
    resume: bool = False,
    verify: bool = False,
    progress: Progress | None = None,
) -> Report:
    """Write every case to OUTDIR and the manifest; with `verify`, run each on openvino.

    With `resume`, complete case folders of an earlier run with the same settings are kept and
    the rest written.  With `force`, a non-empty OUTDIR is written into: case folders of the same
    name are replaced, but only irpool case folders (with an irpool meta.json); index.json is
    rewritten, but only if it is an irpool manifest (schema INDEX_SCHEMA); leftover temporary
    folders (TEMP_PREFIX) and files (`.irpool-*.tmp`) are removed; nothing else is touched.
    `resume` does the same with the temporaries, and starts over when OUTDIR holds nothing
    else (a run killed while writing its first index.json).  A case folder or index.json
    that is not irpool's, or a case whose input range cannot be drawn, is refused before
    anything in OUTDIR is written.
    """
    started = time.perf_counter()
    names = [c.name for c in cases]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UsageError(f"two cases are named {dupes[0]!r}; case names must be unique")
    for c in cases:
        if not _NAME.match(c.name) or c.name == INDEX:
            raise UsageError(f"case name {c.name!r} is not a plain folder name")
        if c.given is None and c.array is None:
            low, high = input_range(c.element_type, c.input_range)
            problem = range_problem(low, high, c.element_type)
            if problem is not None:
                raise UsageError(f"case {c.name!r}: input range [{low!r}, {high!r}]: {problem}")
    verification = None
    if verify:
        from .oracles import openvino_rt

        openvino_rt.load()  # OracleMissing (exit 3) before anything is written
        verification = {
            "runtime": "openvino",
            "version": openvino_rt.version(),
            "device": "CPU",
            "inference_precision": "f32",
        }
    prepare_outdir(outdir, force, resume)
    if resume:
        previous = _read_index(outdir)
        # without index.json, a run was killed before its first manifest was in place (or
        # OUTDIR was empty): nothing complete was written, so resume starts over
        if previous is None and [e for e in os.listdir(outdir) if not _is_temporary(outdir, e)]:
            raise OutputError(
                f"OUTDIR has no {INDEX} of an earlier run; cannot resume (use --force to write "
                "into it anyway)",
                Where(file=outdir),
            )
        if previous is not None and previous.get("settings") != settings.to_json():
            raise UsageError(
                f"{os.path.join(outdir, INDEX)} was written with other settings "
                f"({json.dumps(previous.get('settings'), sort_keys=True)}); resume with the "
                "same options, or write a new folder"
            )
    if force:
        for c in cases:
            final = os.path.join(outdir, c.name)
            if os.path.lexists(final) and (
                os.path.islink(final) or not os.path.isdir(final) or not _is_case_folder(final)
            ):
                raise OutputError(
                    f"{final} exists and is not an irpool fixture case; it is never replaced",
                    Where(file=final),
                )
    if resume or force:
        _remove_temporaries(outdir)
    report = Report(outdir=outdir, skipped=list(skipped))
    mask = _umask()
    # the manifest says "incomplete" until every case is written
    _write_index(outdir, _index(settings, [], {}, skipped, verification, complete=False), mask)
    metas = _write_cases(
        outdir, cases, settings.seed, force, resume, mask, report, progress, verify
    )
    report.seconds = time.perf_counter() - started
    statuses: dict[str, CaseStatus] = {}
    if verify:
        t0 = time.perf_counter()
        for i, meta in enumerate(metas):
            status = verify_case(os.path.join(outdir, str(meta["name"])), meta)
            statuses[status.name] = status
            if progress is not None:
                progress(len(cases) + i + 1, 2 * len(cases), f"verify {status.name}")
        report.verify_seconds = time.perf_counter() - t0
    report.statuses = [statuses[str(m["name"])] for m in metas] if verify else []
    report.index = _index(settings, metas, statuses, skipped, verification, complete=True)
    _write_index(outdir, report.index, mask)
    report.notes = notes_of(cases)
    for note in report.notes:
        LOG.warning("irpool: note: %s", note)
    return report


def format_summary(report: Report) -> str:
    """The lines `irpool fixtures` prints on stdout."""
    index = report.index
    counts = index["counts"]
    settings = index["settings"]
    source = {
        "preset": f"preset {settings.get('preset')}",
        "grid": f"grid {settings.get('grid')}",
        "model": f"model {settings.get('model')}",
    }[settings["source"]]
    lines = [
        f"{counts['cases']} cases in {report.outdir} ({source}, seed {settings['seed']}): "
        f"{report.written} written, {report.kept} kept from the earlier run, "
        f"{report.seconds:.2f} s"
    ]
    if report.skipped:
        lines.append(f"{len(report.skipped)} cases skipped (listed in {INDEX})")
        no_bf16 = sum(reason == NO_BFLOAT16 for _, reason in report.skipped)
        if no_bf16:
            lines.append(f"  {no_bf16} of them bfloat16: {NO_BFLOAT16}")
    if index["verification"]:
        v = index["verification"]
        lines.append(
            f"openvino {v['version']} ({v['device']}): {counts['confirmed']} confirmed, "
            f"{counts['diverges']} diverge ({report.verify_seconds:.2f} s)"
        )
        for reason, n in sorted(index["reasons"].items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  {n:4d} {reason}")
    return "\n".join(lines)


# -- reading a set back --------------------------------------------------------------------------


def iter_case_folders(outdir: str) -> Iterator[str]:
    """Case folders of a set in manifest order (or sorted by name without a manifest)."""
    index = _read_index(outdir)
    if index is not None and index.get("cases"):
        for entry in index["cases"]:
            yield os.path.join(outdir, str(entry["name"]))
        return
    for entry in sorted(os.listdir(outdir)):
        path = os.path.join(outdir, entry)
        if not entry.startswith(".") and _complete(path):
            yield path
