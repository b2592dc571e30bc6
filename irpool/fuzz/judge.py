"""Run one fuzz case on every runtime asked for and on irpool's convention for each, and sort
what disagrees.

A *side* is one runtime's computation of the case: openvino running the IR layer, onnxruntime
the ONNX node, PyTorch its functional call, `openvino-onnx` openvino running the ONNX node
through its ONNX front end (the conversion).  Each side is computed twice: by the runtime, and
by irpool under its convention for that runtime (for `openvino-onnx`: irpool reads the IR openvino
converted the node into).

The verdict, per disagreement:

* **irpool-bug**: irpool's convention for a runtime does not give that runtime's numbers (or
  refuses what the runtime computes);
* **explained**: two runtimes differ, each reproduced by irpool's convention for it, and the
  divergence table names the rule that separates them (`between` on the two plans for this
  input; `in_conversion` for openvino's ONNX front end): the ids;
* **new**: two runtimes differ, each reproduced by irpool, and no row of the table names why.

A runtime that refuses what irpool computes, or irpool refusing what a runtime computes, is
counted per runtime (`refused`, `irpool_refused`) and is not a finding: irpool's conventions
model values, and the runtimes' refusals only in part (D11, D40-D42 are refusals).

Means that two runtimes sum in different orders are compared with the allowance `compare` uses
(rounding_bound, Family.allowance): a difference within it is not a disagreement.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..arrays import mismatches
from ..errors import IrpoolError, OracleMissing
from . import realize
from .spec import Spec, values

Array = npt.NDArray[Any]

RUNTIMES = ("openvino", "onnxruntime", "torch", "openvino-onnx", "tf", "openvino-torch")
"""The sides a campaign may run (tf: windowed pools only, SAME or VALID; openvino-torch: the
PyTorch call as a module converted by openvino's PyTorch front end, seconds per conversion)."""

INDEX_ONLY = ("D6", "D7", "D33", "D39")
"""Divergences of the indices output alone: never the explanation of the values, which are
what two runtimes are compared on."""

PAIRS = (
    ("openvino", "onnxruntime"),
    ("openvino", "torch"),
    ("onnxruntime", "torch"),
    ("openvino-onnx", "onnxruntime"),
    ("openvino-torch", "torch"),
    ("openvino", "tf"),
    ("onnxruntime", "tf"),
    ("torch", "tf"),
)


@dataclass
class Side:
    runtime: str
    outputs: list[Array] | None = None
    refused: str | None = None
    irpool: list[Array] | None = None
    irpool_refused: str | None = None
    plan: Any = None
    allowance: Array | None = None
    agrees: bool | None = None
    """None: not both computed."""


@dataclass
class Finding:
    category: str
    """explained, new or irpool-bug."""
    runtimes: tuple[str, ...]
    ids: tuple[str, ...]
    text: str

    @property
    def signature(self) -> str:
        if self.category == "explained":
            return f"explained:{'+'.join(self.ids)}:{'/'.join(self.runtimes)}"
        return f"{self.category}:{'/'.join(self.runtimes)}"


@dataclass
class Verdict:
    spec: Spec
    sides: dict[str, Side] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def reportable(self) -> list[Finding]:
        return [f for f in self.findings if f.category in ("new", "irpool-bug")]


def _refusal(e: BaseException) -> str:
    from ..oracles import _reason

    text = e.message if isinstance(e, IrpoolError) else _reason(e)
    return " ".join(str(text).split())[:300]


def same(got: Array, want: Array, allowance: Array | None = None) -> bool:
    """Bit for bit (NaN matches NaN, -0 only -0), or within `allowance` where given."""
    if got.shape != want.shape:
        return False
    if got.size == 0:
        return True
    bad = mismatches(got, want, exact=True, signed_zero=True)
    if allowance is not None and bad.any():
        g, w = got.astype(np.float64), want.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            finite = np.isfinite(g) & np.isfinite(w)
            covered = finite & (np.abs(g - w) <= np.broadcast_to(allowance, g.shape))
        bad = bad & ~covered
    return not bool(bad.any())


class Workspace:
    """Where a case's model files are written (one folder per worker, reused)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        os.makedirs(folder, exist_ok=True)

    def path(self, name: str) -> str:
        return os.path.join(self.folder, name)


def _irpool_file(
    path: str, feeds: dict[str, Array], convention: str | None = None
) -> tuple[list[Array], Any, Any]:
    """irpool.run on a model file: its outputs in order, the pooling layer's plan and bound."""
    from .. import api
    from ..shapes import infer

    report = api.run(path, inputs=feeds, convention=convention)
    plans = [p for p in report.all_plans().values() if p is not None]
    pooling = infer(api.load(path)).pooling
    bound = pooling[0].bound if pooling else None
    return [np.asarray(v) for v in report.outputs.values()], (plans[0] if plans else None), bound


def _allowance(plan: Any, bound: Any, x: Array, expected: Array) -> Array | None:
    from ..compare import rounding_bound
    from ..geometry import PoolPlan

    try:
        if isinstance(plan, PoolPlan):
            return rounding_bound(plan, x, expected)
        if bound is not None and not bound.family.windows and plan is not None:
            a: Array | None = bound.family.allowance(plan, [x], expected)
            return a
    except (IrpoolError, ValueError, AssertionError):
        return None
    return None


def _runtime_values(side: Side, compute: Callable[[], list[Array]]) -> bool:
    """The runtime's outputs into `side`; False (its refusal kept) when the runtime refuses."""
    try:
        side.outputs = compute()
    except OracleMissing:
        raise
    except Exception as e:
        side.refused = _refusal(e)
        return False
    return True


_UNMODELLED: Any = object()
"""What a side returns when the case has no form in its runtime (or irpool does not model it)."""


def _irpool_values(
    side: Side, compute: Callable[[], tuple[list[Array], Any, Any]], glue: bool = False
) -> Any:
    """irpool's outputs and plan into `side`; the bound layer (None when irpool refuses, its
    refusal kept).  With `glue`, a converted model whose glue irpool does not execute gives
    _UNMODELLED: the side is not modelled."""
    try:
        side.irpool, side.plan, bound = compute()
    except IrpoolError as e:
        if glue and "does not execute" in e.message:
            return _UNMODELLED
        side.irpool_refused = _refusal(e)
        return None
    return bound


def _openvino_side(side: Side, spec: Spec, x: Array, ws: Workspace) -> Any:
    if not realize.ir_expressible(spec):
        return _UNMODELLED
    from ..oracles import direct

    path = ws.path("model.xml")
    xml, weights = realize.write_ir(spec, path)
    _runtime_values(side, lambda: direct.openvino_run_ir(xml, weights, [x]))
    return _irpool_values(side, lambda: _irpool_file(path, {"x": x}))


def _onnx_side(side: Side, spec: Spec, x: Array, ws: Workspace) -> Any:
    """onnxruntime on the ONNX node, or (openvino-onnx) openvino through its ONNX front end."""
    node = realize.onnx_node(spec)
    if node is None:
        return _UNMODELLED
    from ..oracles import direct, onnxruntime_rt

    try:
        model = onnxruntime_rt.node_model(node.op, node.attrs, [x], node.opset)
    except OracleMissing:
        raise
    except Exception as e:
        side.refused = side.irpool_refused = _refusal(e)
        return None
    path = ws.path("model.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    if side.runtime == "onnxruntime":
        _runtime_values(side, lambda: direct.onnxruntime_run(model, {"in0": x}))
        return _irpool_values(side, lambda: _irpool_file(path, {"in0": x}))
    converted = ws.path("converted.xml")

    def run() -> list[Array]:
        # the outputs are kept even when saving the conversion fails
        side.outputs = outputs = direct.openvino_run_onnx(path, [x])
        direct.save_converted(path, converted)
        return outputs

    if not _runtime_values(side, run):
        return None
    return _irpool_values(side, lambda: _converted_file(converted, x), glue=True)


def _converted_file(path: str, x: Array) -> tuple[list[Array], Any, Any]:
    return _irpool_file(path, {_first_input(path): x})


def _torch_side(side: Side, spec: Spec, x: Array, ws: Workspace) -> Any:
    call = realize.torch_call(spec)
    if call is None:
        return _UNMODELLED
    from ..oracles import direct

    _runtime_values(side, lambda: direct.torch_call(call.function, x, call.kwargs))
    return _irpool_values(side, lambda: _irpool_torch(spec, x, call, ws))


def _openvino_torch_side(side: Side, spec: Spec, x: Array, ws: Workspace) -> Any:
    call = realize.torch_call(spec)
    if call is None or spec.kind != "window" or spec.dtype not in ("float32", "float16"):
        return _UNMODELLED
    from ..oracles import direct

    converted = ws.path("converted_torch.xml")
    if not _runtime_values(
        side, lambda: direct.openvino_torch(call.function, call.kwargs, x, converted)
    ):
        return None
    return _irpool_values(side, lambda: _converted_file(converted, x), glue=True)


def _tf_side(side: Side, spec: Spec, x: Array, ws: Workspace) -> Any:
    tcall = realize.tf_call(spec)
    if tcall is None:
        return _UNMODELLED
    from ..oracles import direct

    _runtime_values(
        side,
        lambda: [direct.tf_pool(tcall.op_type, x, tcall.ksize, tcall.strides, tcall.padding)],
    )
    _irpool_values(side, lambda: (*_irpool_tf(x, tcall), None))
    return None


_SIDES: dict[str, Callable[[Side, Spec, Array, Workspace], Any]] = {
    "openvino": _openvino_side,
    "onnxruntime": _onnx_side,
    "openvino-onnx": _onnx_side,
    "torch": _torch_side,
    "openvino-torch": _openvino_torch_side,
    "tf": _tf_side,
}
"""Each runtime's side: fills a Side, returns the bound layer irpool ran (for the allowance),
or _UNMODELLED when the case has no form in that runtime."""


def _side(runtime: str, spec: Spec, x: Array, ws: Workspace) -> Side | None:
    side = Side(runtime)
    fill = _SIDES.get(runtime)
    if fill is None:
        raise ValueError(runtime)
    bound = fill(side, spec, x, ws)
    if bound is _UNMODELLED:
        return None
    if side.outputs is not None and side.irpool is not None:
        n = min(len(side.outputs), len(side.irpool))
        if runtime != "openvino":
            side.allowance = _allowance(side.plan, bound, x, side.outputs[0])
        side.agrees = n > 0 and all(
            same(side.irpool[k], side.outputs[k], side.allowance if k == 0 else None)
            and (side.irpool[k].dtype == side.outputs[k].dtype)
            for k in range(n)
        )
    return side


def _first_input(xml_path: str) -> str:
    from .. import api

    graph = api.load(xml_path)
    params = [layer for layer in graph.layers if layer.type == "Parameter"]
    return str(params[0].name) if params else "in0"


def _irpool_torch(
    spec: Spec, x: Array, call: realize.TorchCallSpec, ws: Workspace
) -> tuple[list[Array], Any, Any]:
    from ..geometry import plan
    from ..kernel import pool
    from ..ops import torch as torch_ops

    if spec.kind == "global":
        path = ws.path("model_torch.xml")
        realize.write_ir(spec, path)
        return _irpool_file(path, {"x": x}, "torch")
    params = torch_ops.params(call.function, **call.kwargs)
    p = plan(params, tuple(x.shape), "torch", dtype=x.dtype)
    out, _ = pool(x, p)
    return [np.asarray(out)], p, None


def _irpool_tf(x: Array, call: realize.TfCallSpec) -> tuple[list[Array], Any]:
    from ..geometry import plan
    from ..kernel import pool
    from ..ops import tensorflow as tf_ops

    params = tf_ops.params(call.op_type, call.ksize, call.strides, call.padding, "NHWC")
    assert params is not None
    p = plan(params, tuple(x.shape), "tf", dtype=x.dtype)
    out, _ = pool(x, p)
    return [np.asarray(out)], p


def _ids_between(a: Side, b: Side, x: Array) -> list[str]:
    from .. import divergences as dv
    from ..families import FamilyPlan
    from ..geometry import PoolPlan

    ids: list[str] = []
    for d in dv.TABLE:
        if d.id in INDEX_ONLY:
            continue
        try:
            said: str | None = None
            windows = isinstance(a.plan, PoolPlan) and isinstance(b.plan, PoolPlan)
            families = isinstance(a.plan, FamilyPlan) and isinstance(b.plan, FamilyPlan)
            if windows and d.between is not None:
                said = d.between(a.plan, b.plan, x)
            elif families and d.family_between is not None:
                said = d.family_between(a.plan, b.plan, x)
            if said:
                # a row may name a sibling (D18's predicate says D17 for openvino's lane rule)
                named = re.match(r"(D\d+[a-z]?):", said)
                found = named.group(1) if named else d.id
                if found not in ids:
                    ids.append(found)
        except (IrpoolError, ValueError, TypeError, AttributeError):
            continue
    # the cross comparison already allows what two summation orders can do (D31's own
    # measurement: all within (n + 1) * eps * mean|x|): D31 explains what is left only alone
    if "D31" in ids and len(ids) > 1:
        ids.remove("D31")
    return ids


def _ids_converted(spec: Spec, ov: Side, ort: Side, x: Array) -> list[str]:
    from .. import divergences as dv
    from ..geometry import PoolPlan

    node = realize.onnx_node(spec)
    assert node is not None and ov.outputs is not None and ort.outputs is not None
    layer = getattr(ov.plan, "op", "") or "?"
    facts = dv.Conversion(
        kind="window" if spec.kind == "window" else "family",
        reduce=spec.reduce,
        attrs=node.attrs,
        shapes_differ=ov.outputs[0].shape != ort.outputs[0].shape,
        indices_differ=False,
        openvino_layer=str(layer),
        nan_input=bool(x.dtype.kind == "f" and np.isnan(x.astype(np.float32)).any()),
        family="window" if spec.kind == "window" else "global",
    )
    said = dv.in_conversion(facts)
    ids = [said.split(":")[0]] if said.startswith("D") else []
    if isinstance(ov.plan, PoolPlan) or ov.plan is not None:
        ids += [i for i in _ids_between(ov, ort, x) if i not in ids]
    return ids


_QUIET: list[bool] = []


def _ids_torch_converted(spec: Spec, ov: Side, pt: Side, x: Array) -> list[str]:
    """What the conversion audit names for a PyTorch op converted unfaithfully (D3, D8, ...),
    then what separates the two plans."""
    from .. import divergences as dv
    from ..geometry import PoolPlan

    call = realize.torch_call(spec)
    assert call is not None and ov.outputs is not None and pt.outputs is not None
    overhang: tuple[str, ...] = ()
    if isinstance(ov.plan, PoolPlan):
        overhang = tuple(
            k
            for k in ("D1", "D1c", "D1d")
            if dv._overhang_kind(None, ov.plan, x, k)  # type: ignore[arg-type]
        )
    facts = dv.Conversion(
        kind="window",
        reduce=spec.reduce,
        attrs=call.kwargs,
        shapes_differ=ov.outputs[0].shape != pt.outputs[0].shape,
        indices_differ=False,
        openvino_layer=str(getattr(ov.plan, "op", "?")),
        front_end="torch",
        op=f"aten.{call.function}.default",
        nan_input=bool(x.dtype.kind == "f" and np.isnan(x.astype(np.float32)).any()),
        overhang=overhang,
    )
    said = dv.in_source_conversion(facts)
    ids = [said.split(" ")[0].rstrip(":")] if said.startswith("D") else []
    ids += [i for i in _ids_between(ov, pt, x) if i not in ids]
    return ids


def judge(spec: Spec, runtimes: tuple[str, ...], ws: Workspace) -> Verdict:
    """Run `spec` on each runtime of `runtimes` and on irpool; the verdict."""
    start = time.perf_counter()
    verdict = Verdict(spec)
    x = values(spec)
    if "onnxruntime" in runtimes and not _QUIET:
        from ..oracles import direct

        direct.quiet_onnxruntime()
        _QUIET.append(True)
    for runtime in runtimes:
        side = _side(runtime, spec, x, ws)
        if side is not None:
            verdict.sides[runtime] = side
    for side in verdict.sides.values():
        if side.agrees is False:
            verdict.findings.append(
                Finding(
                    "irpool-bug",
                    (side.runtime,),
                    (),
                    f"irpool's convention for {side.runtime} does not reproduce it: "
                    + _diff_text(side.irpool, side.outputs),
                )
            )
    for a_name, b_name in PAIRS:
        a, b = verdict.sides.get(a_name), verdict.sides.get(b_name)
        if a is None or b is None or not (a.agrees and b.agrees):
            continue
        assert a.outputs is not None and b.outputs is not None
        allowance = _wider(a.allowance, b.allowance, a.outputs[0], b.outputs[0])
        if same(a.outputs[0], b.outputs[0], allowance):
            continue
        with np.errstate(over="ignore", invalid="ignore"):
            if a_name == "openvino-onnx":
                ids = _ids_converted(spec, a, b, x)
            elif a_name == "openvino-torch":
                ids = _ids_torch_converted(spec, a, b, x)
            else:
                ids = _ids_between(a, b, x)
        what = _diff_text([a.outputs[0]], [b.outputs[0]], (a_name, b_name))
        if ids:
            verdict.findings.append(Finding("explained", (a_name, b_name), tuple(ids), what))
        else:
            verdict.findings.append(
                Finding(
                    "new",
                    (a_name, b_name),
                    (),
                    f"{what}; irpool reproduces both, and no known divergence names the rule",
                )
            )
    verdict.seconds = time.perf_counter() - start
    return verdict


def _wider(a: Array | None, b: Array | None, x: Array, y: Array) -> Array | None:
    if x.shape != y.shape:
        return None
    if a is None:
        return b
    if b is None:
        return a
    return np.maximum(a, b)


def _diff_text(
    got: list[Array] | None,
    want: list[Array] | None,
    names: tuple[str, str] = ("irpool", "runtime"),
) -> str:
    if not got or not want:
        return "no outputs"
    g, w = got[0], want[0]
    if g.shape != w.shape:
        return f"shapes differ: {names[0]} {list(g.shape)}, {names[1]} {list(w.shape)}"
    if g.dtype != w.dtype:
        return f"dtypes differ: {names[0]} {g.dtype}, {names[1]} {w.dtype}"
    bad = mismatches(g, w, exact=True, signed_zero=True)
    if len(got) > 1 and len(want) > 1 and not bad.any():
        first, second = got[1].ravel()[:6].tolist(), want[1].ravel()[:6].tolist()
        return f"indices differ: {names[0]} {first}, {names[1]} {second}"
    idx = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.any() else ()
    if not idx:
        return "outputs differ"
    return (
        f"{int(bad.sum())}/{bad.size} values differ; at {list(idx)}: {names[0]} "
        f"{g[idx].item()!r}, {names[1]} {w[idx].item()!r}"
    )


Judge = Callable[[Spec], Verdict]
