"""openvino as an oracle: read or build a model, compile it on CPU, run it.

openvino is imported lazily; without it every entry point raises OracleMissing (exit code 3).
Models compile with `INFERENCE_PRECISION_HINT=f32` unless told otherwise, so that openvino's CPU
plugin does not lower float32 work to bfloat16 on CPUs that have it.  bfloat16 tensors cross the
boundary as uint16 bit patterns (numpy has no bfloat16 of its own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import OracleMissing, OracleRefused, UsageError, Where
from . import refusals

DEFAULT_PRECISION = "f32"


MEASURED = "2026.4"
"""The openvino release irpool's rules were measured on (2026.4.1): pyproject pins
openvino>=2026.4,<2026.5, and another release gets one warning line."""
_WARNED: list[str] = []


def load() -> Any:
    """The openvino module, or OracleMissing saying how to install it.  An openvino of another
    release than MEASURED gets one warning on stderr, the first time (the "irpool" logger)."""
    try:
        import openvino
    except ImportError:
        raise OracleMissing("openvino is not installed; pip install 'irpool[openvino]'") from None
    if not _WARNED:
        release = str(openvino.get_version()).split("-")[0]
        _WARNED.append(release)
        warn_release(release)
    return openvino


def warn_release(release: str) -> None:
    """One line on stderr (the "irpool" logger) when `release` is not the measured one."""
    if release == MEASURED or release.startswith(MEASURED + "."):
        return
    import logging

    logging.getLogger("irpool").warning(
        "irpool: warning: openvino %s is installed; irpool's rules were measured on openvino "
        "%s (pip install 'openvino>=%s,<2026.5'), so other results may differ",
        release,
        MEASURED,
        MEASURED,
    )


def version() -> str:
    """openvino's release, e.g. 2026.4.1 (without the build suffix)."""
    return str(load().get_version()).split("-")[0]


_CORE: Any = None


def core() -> Any:
    global _CORE
    if _CORE is None:
        _CORE = load().Core()
    return _CORE


def config(precision: str = DEFAULT_PRECISION, threads: int | None = None) -> dict[str, Any]:
    cfg: dict[str, Any] = {"INFERENCE_PRECISION_HINT": precision}
    if threads:
        cfg["INFERENCE_NUM_THREADS"] = threads
    return cfg


def read_xml(xml: str | bytes, weights: bytes = b"") -> Any:
    """A model from IR text (and the bytes of its .bin)."""
    data = xml.encode() if isinstance(xml, str) else xml
    return core().read_model(data, weights)


def read_path(path: str) -> Any:
    return core().read_model(path)


def compile_model(
    model: Any, precision: str = DEFAULT_PRECISION, threads: int | None = None
) -> Any:
    """A model compiled for the CPU plugin, once `guard` has found nothing that would crash it."""
    guard(model)
    return core().compile_model(model, "CPU", config(precision, threads))


# What openvino 2026.4.1 does with a pooling op whose `dilations` list is empty (an IR that
# writes dilations="" or leaves it out; openvino.opset16.avg_pool(dilations=None) saves one),
# measured in a child process per case: the reader and the shape rules take it as all ones, but
# the CPU plugin does not.  AvgPool-16: compile_model dies with SIGSEGV or never returns.
# MaxPool-8/14: fine while the indices output is unused; with it used, inference fails ("One of
# the MaxPool params does not match the 3D implementation").  Every other attribute shape tried
# (missing, empty, short, long or blank lists, zero or negative values, kernels larger than the
# padded input) ends in an exception the reader or the plugin raises, which `refusals` turns
# into one line.


def _dilations_missing(op: Any) -> bool:
    from ..ops import REGISTRY

    if not REGISTRY.is_pooling_type("openvino", op.get_type_name()):
        return False
    attrs = op.get_attributes()
    return "dilations" in attrs and len(attrs["dilations"]) == 0


def op_label(op: Any) -> str:
    """How irpool names an openvino op: type and version, e.g. AvgPool-16."""
    return f"{op.get_type_name()}-{op.get_type_info().version_id.removeprefix('opset')}"


def indices_unusable(op: Any) -> bool:
    """A MaxPool whose indices output the CPU plugin cannot compute (empty `dilations`)."""
    return op.get_output_size() > 1 and _dilations_missing(op)


def _i64_adaptive(op: Any) -> bool:
    from ..ops.openvino import pooling_like

    return bool(
        pooling_like(op.get_type_name()) == ("adaptive", "max")
        and op.get_output_size() > 1
        and op.get_output_element_type(1) == load().Type.i64
    )


def _adaptive_as_i32(op: Any) -> list[Any]:
    """Replace an AdaptiveMaxPool-8 with i64 indices (which the CPU plugin refuses) by one with
    i32 indices and a Convert to i64, in place; its (values, indices) outputs."""
    from openvino import opset1, opset8

    same = opset8.adaptive_max_pool(op.input_value(0), op.input_value(1), index_element_type="i32")
    same.set_friendly_name(op.get_friendly_name())
    wide = opset1.convert(same.output(1), "i64")
    for target in list(op.output(0).get_target_inputs()):
        target.replace_source_output(same.output(0))
    for target in list(op.output(1).get_target_inputs()):
        target.replace_source_output(wide.output(0))
    return [same.output(0), wide.output(0)]


def bf16_indices_uncompilable(op: Any) -> bool:
    """A bfloat16 MaxPool-8/14: the CPU plugin runs it while its indices output is unused,
    and refuses to compile it when they are ("Cannot fallback on ngraph reference
    implementation"; measured, openvino 2026.4.1)."""
    return bool(
        op.get_output_size() > 1
        and op.get_output_element_type(0) == load().Type.bf16
        and _is_pooling(op)
    )


def _is_pooling(op: Any) -> bool:
    from ..ops import REGISTRY

    return REGISTRY.is_pooling_type("openvino", op.get_type_name())


def unusable(op: Any) -> str | None:
    """Why openvino's CPU plugin cannot be given this op as it stands, or None."""
    if _i64_adaptive(op) and op.output(1).get_target_inputs():
        return (
            f"openvino {version()}'s CPU plugin does not compile an AdaptiveMaxPool-8 with "
            "index_element_type=i64 ('CPU plugin does not support i64 for use with oneDNN'); "
            "irpool still checks, runs and explains the layer (its PyTorch front end writes "
            "i32 and a Convert)"
        )
    if not _dilations_missing(op):
        return None
    ones = ",".join("1" for _ in op.get_attributes().get("kernel", ())) or "1"
    expected = f'expected dilations="{ones}", one value per spatial axis'
    if op.get_output_size() == 1:
        return (
            f'"dilations" is missing or empty: openvino {version()} crashes (segmentation '
            f"fault) or hangs compiling an {op_label(op)} without dilations, so irpool does not "
            f"hand it over; {expected}"
        )
    if indices_unusable(op) and op.output(1).get_target_inputs():
        return (
            f'"dilations" is missing or empty: openvino {version()} fails computing the '
            f'indices of a {op_label(op)} without dilations ("One of the MaxPool params does '
            f'not match the 3D implementation"); {expected}'
        )
    return None


def guard(model: Any) -> None:
    """Raise OracleRefused (naming the layer) for an op openvino cannot be given (see above)."""
    for op in model.get_ordered_ops():
        why = unusable(op)
        if why is not None:
            where = Where(
                layer=op.get_friendly_name(),
                op=op.get_type_name(),
                version=op.get_type_info().version_id,
            )
            raise OracleRefused(why, where)


def is_bfloat16(array: np.ndarray) -> bool:
    return bool(array.dtype.name == "bfloat16")


def to_tensor(array: np.ndarray) -> Any:
    """An openvino Tensor holding `array` (bfloat16 copied through its bits)."""
    ov = load()
    if is_bfloat16(array):
        tensor = ov.Tensor(ov.Type.bf16, list(array.shape))
        tensor.data.view(np.uint16)[...] = np.ascontiguousarray(array).view(np.uint16)
        return tensor
    return ov.Tensor(np.ascontiguousarray(array))


def from_tensor(tensor: Any) -> np.ndarray:
    """A numpy copy of an openvino output tensor (bfloat16 as ml_dtypes.bfloat16)."""
    ov = load()
    if tensor.element_type == ov.Type.bf16:
        from ..model import bfloat16

        bf = bfloat16()
        bits = np.array(tensor.data, copy=True).view(np.uint16)
        if bf is None:
            raise OracleMissing("ml_dtypes is needed for bfloat16 outputs; pip install ml_dtypes")
        return bits.view(bf).reshape(tuple(tensor.shape))
    return np.array(tensor.data, copy=True)


def infer(
    compiled: Any, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Run a compiled model; inputs by tensor/Parameter name or in order; outputs in order."""
    request = compiled.create_infer_request()
    if isinstance(inputs, Mapping):
        for name, array in inputs.items():
            request.set_tensor(name, to_tensor(array))
    else:
        for i, array in enumerate(inputs):
            request.set_input_tensor(i, to_tensor(array))
    request.infer()
    return [from_tensor(request.get_output_tensor(i)) for i in range(len(compiled.outputs))]


def _source_key(output: Any) -> tuple[str, int]:
    return output.get_node().get_friendly_name(), output.get_index()


def _read_held(output: Any) -> Any:
    """At f32 precision the plugin holds f16 tensors in float32 between layers (a layer's input
    is not rounded to f16): an f16 tensor is read through a Convert to f32, which shows the
    value the next layer really gets."""
    if output.get_element_type() != load().Type.f16:
        return output
    from openvino import opset1

    return opset1.convert(output, "f32").output(0)


def _fit(model: Any, inputs: Mapping[str, np.ndarray]) -> None:
    """Reshape the Parameters whose declared shape the given arrays do not fit (shapes given
    with --input-shape replace the declared ones, as Model.reshape does)."""
    ov = load()
    new = {}
    for param in model.get_parameters():
        names = {param.get_friendly_name(), *param.output(0).get_names()}
        key = next((n for n in sorted(names) if n in inputs), None)
        if key is None:
            continue
        shape = ov.PartialShape([int(d) for d in inputs[key].shape])
        if not param.get_partial_shape().compatible(shape):
            new[param.output(0)] = shape
    if new:
        model.reshape(new)


def default_precision() -> tuple[str, str]:
    """The CPU plugin's own INFERENCE_PRECISION_HINT on this machine, and why: bf16 where the
    CPU has AVX512_BF16 or AMX (the plugin's OPTIMIZATION_CAPABILITIES name BF16), else f32."""
    raw = core().get_property("CPU", "INFERENCE_PRECISION_HINT")
    name = raw.get_type_name() if hasattr(raw, "get_type_name") else str(raw)
    try:
        caps = [str(c).upper() for c in core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")]
    except Exception:  # pragma: no cover - a plugin without the property
        caps = []
    why = (
        "the CPU plugin's default on this machine: its CPU has AVX512_BF16 or AMX"
        if "BF16" in caps
        else "the CPU plugin's default on this machine: no AVX512_BF16 or AMX"
    )
    return name, why


def final_outputs(path: str, inputs: Mapping[str, np.ndarray], precision: str) -> list[np.ndarray]:
    """The model's own outputs, run as it is (no probe)."""
    finals: list[np.ndarray] = []
    probe(read_path(path), [], inputs, precision, finals=finals)
    return finals


def probe(
    model: Any,
    taps: Sequence[Any],
    inputs: Mapping[str, np.ndarray],
    precision: str = DEFAULT_PRECISION,
    held: Sequence[bool] | None = None,
    finals: list[np.ndarray] | None = None,
) -> list[np.ndarray]:
    """The one openvino probe: run `model` once, with each of `taps` (outputs of its ops) made
    an output of the model too, and return their values in order.  `held[i]` reads tap i as
    the value the plugin holds (see _read_held).  The model's Parameters take their inputs by
    friendly name or any tensor name of theirs; a missing one is a UsageError naming it.
    The model is changed (its extra outputs stay).  `finals` receives the model's own outputs
    of that run."""
    _fit(model, inputs)
    own = len(model.get_results())
    shown = [_read_held(tap) if held is not None and held[i] else tap for i, tap in enumerate(taps)]
    if shown:
        model.add_outputs(shown)
    position: dict[tuple[str, int], int] = {}
    for i, result in enumerate(model.get_results()):
        position.setdefault(_source_key(result.input(0).get_source_output()), i)
    compiled = compile_model(model, precision)
    request = compiled.create_infer_request()
    for param in model.get_parameters():
        names = {param.get_friendly_name(), *param.output(0).get_names()}
        key = next((n for n in sorted(names) if n in inputs), None)
        if key is None:
            raise UsageError(
                f"no input array for openvino's Parameter {param.get_friendly_name()!r} "
                f"(names: {', '.join(sorted(names))}); expected one of them"
            )
        request.set_tensor(param.output(0), to_tensor(inputs[key]))
    request.infer()
    if finals is not None:
        finals.extend(from_tensor(request.get_output_tensor(i)) for i in range(own))
    return [from_tensor(request.get_output_tensor(position[_source_key(o)])) for o in shown]


def _indices_left_out(op: Any) -> str | None:
    """Why the probe leaves out an op's unused indices output (the CPU plugin cannot compute
    them, or cannot compile the op with them asked for); None where it asks for them."""
    if indices_unusable(op):
        return (
            f"indices not compared: openvino {version()} fails computing the indices of "
            f"a {op_label(op)} whose dilations are empty"
        )
    if bf16_indices_uncompilable(op):
        return (
            f"indices not compared: openvino {version()}'s CPU plugin cannot compile a "
            f"bfloat16 {op_label(op)} whose indices output is used, so the probe leaves "
            "them unused (the values are compared)"
        )
    return None


@dataclass(frozen=True)
class LayerProbe:
    """How `probe_layers` runs a model and reads its layers.

    `precision`: the plugin's inference precision.  `held`: f16 inputs come as the float32
    values the plugin holds (_read_held); without, rounded to f16 as their type says.
    `outputs`: the layers' outputs are read too, not only their inputs; asking for a
    MaxPool-8/14's unused indices moves it to another implementation of the CPU plugin, one
    that fails without dilations or with bfloat16 (measured, 2026.4.1).  `instead` names, for a
    layer, another op whose first output is read in place of the layer's outputs (a
    FakeQuantize the plugin fuses into it).  What the run hands back besides the layers:
    `skipped` (when given) receives, by layer, why an output was left out, and `finals` (when
    given) the model's own outputs."""

    precision: str = DEFAULT_PRECISION
    held: bool = True
    outputs: bool = True
    instead: Mapping[str, str] | None = None
    skipped: dict[str, str] | None = None
    finals: list[np.ndarray] | None = None


INPUTS_AS_TYPED = LayerProbe(held=False, outputs=False)
"""Only the layers' inputs, rounded to their declared type."""


def probe_layers(
    path: str, names: list[str], inputs: Mapping[str, np.ndarray], how: LayerProbe | None = None
) -> tuple[dict[str, tuple[list[np.ndarray], list[np.ndarray]]], list[str]]:
    """Run the model at `path` once and return, for every named layer that openvino's graph
    still has, (its input tensors, its output tensors); and the names it does not have
    (openvino drops layers that reach no Result).  `how` (default: LayerProbe()) says how the
    model runs and what is read of each layer.  Outputs the plugin cannot compute
    (`indices_unusable`) are left out, and `how.skipped` says why."""
    how = how or LayerProbe()
    skipped, instead = how.skipped, how.instead
    model = read_path(path)
    ops = {op.get_friendly_name(): op for op in model.get_ordered_ops()}
    wanted: dict[str, tuple[list[Any], list[Any]]] = {}
    missing = []
    for name in names:
        op = ops.get(name)
        if op is None:
            missing.append(name)
            continue
        ins = [op.input(i).get_source_output() for i in range(op.get_input_size())]
        outs = [op.output(i) for i in range(op.get_output_size())] if how.outputs else []
        other = ops.get(instead[name]) if instead and name in instead else None
        if other is not None and outs:
            wanted[name] = (ins, [other.output(0)])
            continue
        if _i64_adaptive(op):
            outs = _adaptive_as_i32(op)[: len(outs)]
            if skipped is not None:
                skipped[name] = (
                    f"openvino {version()}'s CPU plugin does not compile index_element_type=i64: "
                    "compared with openvino's AdaptiveMaxPool-8 i32 followed by a Convert to i64 "
                    "(what its PyTorch front end writes)"
                )
        left_out = _indices_left_out(op) if outs else None
        if left_out is not None and not op.output(1).get_target_inputs():
            outs = outs[:1]
            if skipped is not None:
                skipped[name] = left_out
        wanted[name] = (ins, outs)
    taps = [o for ins, outs in wanted.values() for o in (*ins, *outs)]
    flags: list[bool] = []
    for ins, outs in wanted.values():
        flags += [how.held and how.precision == "f32"] * len(ins) + [False] * len(outs)
    values = iter(probe(model, taps, inputs, how.precision, flags, how.finals))
    found = {}
    for name, (ins, outs) in wanted.items():
        found[name] = ([next(values) for _ in ins], [next(values) for _ in outs])
    return found, missing


def reshape(model: Any, shapes: Mapping[str, Sequence[int]]) -> None:
    """Give the model's Parameters (by friendly name or tensor name) new static shapes, as
    `Model.reshape` does; openvino's shape inference then carries them through every layer."""
    if not shapes:
        return
    ov = load()
    new = {}
    for param in model.get_parameters():
        names = [param.get_friendly_name(), *sorted(param.output(0).get_names())]
        key = next((n for n in names if n in shapes), None)
        if key is not None:
            new[param.output(0)] = ov.PartialShape([int(d) for d in shapes[key]])
    if new:
        model.reshape(new)


def _bounds(shape: Any) -> list[tuple[int, int | None]]:
    """A PartialShape as (lo, hi) per dim, hi None for no upper bound."""
    out: list[tuple[int, int | None]] = []
    for d in shape:
        if d.is_static:
            out.append((d.get_length(), d.get_length()))
        else:
            hi = d.get_max_length()
            out.append((max(d.get_min_length(), 0), None if hi < 0 else hi))
    return out


def pooling_input_shapes(
    path: str, shapes: Mapping[str, Sequence[int]]
) -> dict[str, list[tuple[int, int | None]]]:
    """The input shape of every pooling op of the IR at `path` (by friendly name) after its
    Parameters are given `shapes` (reshape): openvino's own shape inference through every
    layer type."""
    from ..ops import REGISTRY

    with refusals("openvino", path):
        model = read_path(path)
        reshape(model, shapes)
        return {
            op.get_friendly_name(): _bounds(op.get_input_partial_shape(0))
            for op in model.get_ordered_ops()
            if REGISTRY.is_pooling_type("openvino", op.get_type_name())
        }


def convert(path: str) -> Any:
    """openvino's conversion of a source model (ONNX, ...) into an ov.Model."""
    return load().convert_model(path)


def upstream_pooling(output: Any) -> str:
    """The pooling op openvino placed at or above an output of a model, described with its
    attributes (how convert-report names the layer a node became)."""
    node = _upstream_op(output)
    if node is None:
        return "no pooling layer found upstream"
    attrs = node.get_attributes()
    keys = ("rounding_type", "exclude-pad", "auto_pad", "axis")
    shown = ", ".join(f"{k}={attrs[k]}" for k in keys if k in attrs)
    return f"{op_label(node)} ({shown})"


def _upstream_op(output: Any) -> Any:
    """The pooling op at or above an output of a model, or None."""
    from ..ops import REGISTRY

    seen: set[str] = set()
    frontier = [output.get_node()]
    while frontier:
        node = frontier.pop(0)
        if node.get_friendly_name() in seen:
            continue
        seen.add(node.get_friendly_name())
        if REGISTRY.is_pooling_type("openvino", node.get_type_name()):
            return node
        frontier.extend(node.input_value(i).get_node() for i in range(node.get_input_size()))
    return None


def upstream_pooling_attributes(output: Any) -> dict[str, str]:
    """Every attribute of the pooling op at or above an output, written as an IR writes it
    (lists as "2, 2", booleans lower case); empty when there is none."""
    node = _upstream_op(output)
    if node is None:
        return {}

    def text(value: Any) -> str:
        if isinstance(value, (list, tuple)):
            return ", ".join(str(v) for v in value)
        return str(value).lower() if isinstance(value, bool) else str(value)

    return {k: text(v) for k, v in node.get_attributes().items()}


def output_shapes(path: str) -> dict[str, list[str]]:
    """openvino's inferred output shape of every layer of a model, by friendly name."""
    model = read_path(path)
    return {
        op.get_friendly_name(): [
            str(op.get_output_partial_shape(i)) for i in range(op.get_output_size())
        ]
        for op in model.get_ordered_ops()
    }


# -- the conversion audit: converted models from a source framework ---------------------------


def convert_object(source: Any, inputs: Sequence[Any] | None = None) -> Any:
    """openvino's conversion of a framework object (an openvino PyTorch decoder, a Keras model,
    a SavedModel path), with static input shapes and types when `inputs` gives them."""
    if inputs is None:
        return load().convert_model(source)
    return load().convert_model(source, input=list(inputs))


def input_spec(shape: Sequence[int], dtype: np.dtype[Any]) -> tuple[Any, Any]:
    """convert_model's `input` entry for an array of this shape and dtype."""
    ov = load()
    return ov.PartialShape([int(d) for d in shape]), ov.Type(np.dtype(dtype))


def is_pool_layer(op: Any) -> bool:
    """A windowed pooling layer irpool knows, or an adaptive or global pool (ReduceMean/Max)."""
    from ..ops import REGISTRY
    from ..ops.openvino import pooling_like

    name = op.get_type_name()
    return REGISTRY.is_pooling_type("openvino", name) or pooling_like(name) is not None


def pooling_like_kind(op: Any) -> tuple[str, str] | None:
    from ..ops.openvino import pooling_like

    return pooling_like(op.get_type_name())


def attributes(op: Any) -> dict[str, str]:
    """An op's attributes as the IR writes them (lists as "1, 2")."""
    shown: dict[str, str] = {}
    for key, value in op.get_attributes().items():
        if isinstance(value, (list, tuple)) or (
            hasattr(value, "__len__") and not isinstance(value, str)
        ):
            shown[key] = ", ".join(str(v) for v in value)
        elif isinstance(value, bool):
            shown[key] = "true" if value else "false"
        else:
            shown[key] = str(value)
    return shown


def const_input(op: Any, index: int) -> list[int] | None:
    """The integer values of a constant input of an op (axes, output sizes), or None."""
    from ..ops.openvino import runtime_role

    source = op.input_value(index).get_node()
    if runtime_role(source.get_type_name()) != "const":
        return None
    return [int(v) for v in source.get_vector()]


def tensor_ports(model: Any) -> dict[str, Any]:
    """Every op output of a model by each of its tensor names."""
    found: dict[str, Any] = {}
    for op in model.get_ordered_ops():
        for out in op.outputs():
            for name in out.get_names():
                found.setdefault(name, out)
    return found


def pooling_upstream(output: Any) -> list[Any]:
    """The pooling layers nearest above an op output (the op itself if it is one)."""
    from ..ops.openvino import runtime_role

    found: list[Any] = []
    seen: set[str] = set()
    frontier = [output.get_node()]
    while frontier:
        node = frontier.pop(0)
        name = node.get_friendly_name()
        if name in seen or runtime_role(node.get_type_name()) in ("parameter", "const"):
            continue
        seen.add(name)
        if is_pool_layer(node):
            found.append(node)
            continue
        frontier.extend(node.input_value(i).get_node() for i in range(node.get_input_size()))
    return found


def parameter_inputs(model: Any, arrays: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """The model's Parameters, in order, bound to arrays (for probe)."""
    params = model.get_parameters()
    if len(params) != len(arrays):
        raise UsageError(
            f"openvino's converted model has {len(params)} input(s); {len(arrays)} given"
        )
    return {p.get_friendly_name(): a for p, a in zip(params, arrays, strict=True)}
