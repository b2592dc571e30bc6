"""One fuzz case, as plain data: the pooling op (described once, independently of any runtime),
its input's element type and shape, and how the input's values are made.

A `Spec` is what hypothesis draws (irpool.fuzz.space), what a bundle's meta.json stores and what
its repro.py rebuilds: `values(spec)` is deterministic.  `realize` turns it into each runtime's
own form (an IR layer, an ONNX node, a PyTorch call).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

DTYPES = ("float32", "float16", "bfloat16", "float64", "int8", "uint8", "int32")
FLOATS = ("float32", "float16", "bfloat16", "float64")
SPECIALS = ("nan", "inf", "-inf", "-0.0", "subnormal", "huge", "-huge", "max", "min", "tie")
"""The odd values a case may plant in its input (integer types take max, min and tie)."""


@dataclass(frozen=True)
class Spec:
    """A pooling op and its input.

    kind: `window` (AvgPool/MaxPool, AveragePool/MaxPool, avg_pool/max_pool), `global` (IR
    Reduce* over the spatial axes, ONNX GlobalAveragePool/GlobalMaxPool, torch mean/amax/sum).
    """

    kind: str
    reduce: str
    dtype: str
    shape: tuple[int, ...]
    window: tuple[int, ...] = ()
    strides: tuple[int, ...] = ()
    pads_begin: tuple[int, ...] = ()
    pads_end: tuple[int, ...] = ()
    dilations: tuple[int, ...] = ()
    ceil: bool = False
    ov_ceil: str = "ceil"
    """The IR rounding_type a ceil op is written with: ceil or ceil_torch (-14 and later)."""
    count_pad: bool = False
    auto_pad: str = "explicit"
    ov_version: int = 8
    onnx_opset: int = 22
    fill: str = "uniform"
    """uniform (in [-1, 1)), ints (small integers: ties), ramp (1, 2, 3, ...), constant."""
    fill_seed: int = 0
    specials: tuple[tuple[int, str], ...] = ()
    """(flat index mod size, special value name) planted after the fill."""

    @property
    def rank(self) -> int:
        return len(self.shape) - 2

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        for k, v in d.items():
            if isinstance(v, tuple):
                d[k] = [list(e) if isinstance(e, tuple) else e for e in v]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Spec:
        names = {f.name for f in fields(cls)}
        kw: dict[str, Any] = {}
        for k, v in d.items():
            if k not in names:
                continue
            if isinstance(v, list):
                v = tuple(tuple(e) if isinstance(e, list) else e for e in v)
            kw[k] = v
        return cls(**kw)

    def label(self) -> str:
        dims = "x".join(map(str, self.shape))
        if self.kind == "global":
            return f"global {self.reduce} {self.dtype} {dims}"
        attrs = (
            f"k{','.join(map(str, self.window))} s{','.join(map(str, self.strides))} "
            f"p{','.join(map(str, self.pads_begin))}/{','.join(map(str, self.pads_end))}"
        )
        if any(d > 1 for d in self.dilations):
            attrs += f" d{','.join(map(str, self.dilations))}"
        if self.ceil:
            attrs += " ceil"
        if self.reduce == "mean":
            attrs += " count_pad" if self.count_pad else " exclude_pad"
        if self.auto_pad != "explicit":
            attrs += f" {self.auto_pad}"
        return f"{self.reduce} {attrs} {self.dtype} {dims}"

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)


def numpy_dtype(name: str) -> np.dtype[Any]:
    if name == "bfloat16":
        from ..model import bfloat16

        bf = bfloat16()
        if bf is None:
            from ..errors import OracleMissing

            raise OracleMissing("ml_dtypes is needed for bfloat16 cases; pip install ml_dtypes")
        return np.dtype(bf)
    return np.dtype(name)


def _special(name: str, dtype: str) -> float:
    if dtype in FLOATS:
        info = np.finfo(np.float32 if dtype == "bfloat16" else np.dtype(dtype))
        big = float(info.max) if dtype != "bfloat16" else 3.3895313892515355e38
        table = {
            "nan": float("nan"),
            "inf": float("inf"),
            "-inf": float("-inf"),
            "-0.0": -0.0,
            "subnormal": float(info.smallest_subnormal) * 3,
            "huge": big,
            "-huge": -big,
            "max": big,
            "min": -big,
            "tie": 0.5,
        }
        return table[name]
    ii = np.iinfo(np.dtype(dtype))
    return float({"max": ii.max, "min": ii.min, "tie": 1}.get(name, 0))


def values(spec: Spec) -> Array:
    """The case's input: the fill drawn from its seed, then the specials planted."""
    n = int(np.prod(spec.shape))
    rng = np.random.default_rng(spec.fill_seed)
    integer = spec.dtype not in FLOATS
    if spec.fill == "ramp":
        base = np.arange(1, n + 1, dtype=np.float64)
    elif spec.fill == "constant":
        base = np.full(n, 1.0)
    elif spec.fill == "ints" or integer:
        base = rng.integers(-4, 5, n).astype(np.float64)
    else:
        base = rng.uniform(-1.0, 1.0, n)
    if integer:
        ii = np.iinfo(np.dtype(spec.dtype))
        if spec.fill == "uniform":
            base = rng.integers(max(ii.min, -1000), min(ii.max, 1000) + 1, n).astype(np.float64)
        base = np.clip(base, ii.min, ii.max)
    for index, name in spec.specials:
        if n:
            base[index % n] = _special(name, spec.dtype)
    target = numpy_dtype(spec.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if spec.dtype == "bfloat16":
            out = base.astype(np.float32).astype(target)
        else:
            out = base.astype(target)
    return np.asarray(out).reshape(spec.shape)
