"""A whole model prepared once (irpool.compile_model), as a runtime compiles a model: the graph
read, the shapes inferred, every layer bound, its plan made and its kernel loaded, the
constants (and whatever depends on constants only) computed, before the first call; a call
then only checks its inputs and runs the layers' prepared kernels.

Bit-identical to `irpool.run` by construction: every layer runs through the same functions
`run.run_graph` calls, except that a pooling layer whose input is a plain tensor (held in its
declared type, not a constant) runs its prepared plan directly: a windowed layer through
`PreparedPool` (numpy core or the compiled path), a layer of another family through
`kernel.family_compiled.prepare` (the numba kernels where they serve the plan); a windowed
layer of an f16 or bf16 input that only Results read runs the plan for data of that type (the
kernel widens to float32 and rounds back as the plugin does around the layer and its Result).
Glue computed per element on plain tensors (Convert, Multiply, ReLU, ...) runs on plain arrays,
on the numba kernels of kernel/glue_compiled.py where one serves it.  A quantized chain (the
plugin's low-precision transformations, lpt_run.py) is read once: a FakeQuantize with constant
ranges gets its constants, LPT's decomposition and the ranges a moved dequantization is fused
into when the program is built, and computes per call only what its readers take (its value,
its codes, or both); a pooling layer LPT runs on codes runs its plan on them, prepared (the
compiled path where it serves).  Each program
is checked once against `run.run_graph` on a random input when it is built; where they differ
(a bug) the program drops its prepared steps and says so in `why`.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import UsageError, Where
from .model import Graph, Layer, numpy_dtype
from .ops import REGISTRY, bind
from .ops.binding import Bound

Array = npt.NDArray[Any]
Signature = tuple[tuple[tuple[int, ...], str], ...]
"""Per Parameter (in graph order): the input's shape and dtype name."""


@dataclass
class LayerPath:
    """How one pooling layer of a compiled model runs."""

    label: str
    type: str
    path: str
    """"compiled" (numba), "numpy" (the numpy core, plan prepared), or "interpreted" (the
    interpreter's own steps, plan looked up per call: an input held in another type than
    declared, a constant, or family value inputs computed by the model)."""
    why: str


@dataclass
class _Step:
    run: Callable[[list[Any]], list[Any]]
    ins: list[int | None]
    outs: list[int]
    direct: Callable[[list[Any]], list[Any]] | None = None
    """The step on plain arrays (see _Prepared), or None."""


@dataclass
class _Program:
    steps: list[_Step]
    slots: list[Any]
    """Values of the static slots (constants and what depends on constants only); the rest
    are filled per call."""
    params: list[tuple[int, int, str, str]]
    """(slot, Parameter layer index, own element type, declared element type)."""
    results: list[tuple[str, int]]
    layers: list[LayerPath] = field(default_factory=list)
    why: str = ""
    glue: list[LayerPath] = field(default_factory=list)
    """Per glue layer computed per element on plain tensors: its kernel path."""
    arrays: list[Any] | None = None
    """The program on plain arrays: the static slots' tensors (those its steps read), where
    every parameter is plain and every step has its direct form; else None."""


def _uniform_inputs(graph: Graph, signature: Signature) -> dict[int, Array]:
    from .run import _uniform, parameters

    rng = np.random.default_rng(0)
    out = {}
    for layer, (shape, dtype) in zip(parameters(graph), signature, strict=True):
        out[layer.index] = _uniform(rng, -1.0, 1.0, shape, np.dtype(dtype))
    return out


class _Prepared:
    """A layer's step run on Values, and the same step on plain arrays (`direct`: a prepared
    kernel whose tensors are all held in their declared types)."""

    def __init__(
        self,
        run: Callable[[list[Any]], list[Any]],
        direct: Callable[[list[Any]], list[Any]] | None,
    ) -> None:
        self.run = run
        self.direct = direct

    def __call__(self, v: list[Any]) -> list[Any]:
        return self.run(v)


class _Tracer:
    """The slots, steps, parameters and results of a program as _trace builds it."""

    def __init__(self, v10: bool) -> None:
        self.v10 = v10
        self.slot_of: dict[tuple[int, int], int] = {}
        self.values: list[Any] = []
        self.dynamic: list[bool] = []
        self.steps: list[_Step] = []
        self.params: list[tuple[int, int, str, str]] = []
        self.results: list[tuple[str, int]] = []
        self.layers: list[LayerPath] = []
        self.glue: list[LayerPath] = []
        self.outputs: dict[str, Array] = {}

    def new_slot(self, value: Any, moving: bool) -> int:
        self.values.append(value)
        self.dynamic.append(moving)
        return len(self.values) - 1

    def parameter(self, layer: Layer, array: Array, et: str | None) -> None:
        from .model import element_type_of_numpy

        own = element_type_of_numpy(array.dtype.name) or "f32"
        slot = self.new_slot(_value(array, own, et or own), True)
        self.params.append((slot, layer.index, own, et or own))
        self.slot_of[(layer.index, layer.outputs[0].id if layer.outputs else 0)] = slot
        for port in layer.outputs[1:]:
            self.slot_of[(layer.index, port.id)] = slot

    def result(self, name: str, src: int) -> None:
        out_slot = self.new_slot(self.values[src].output(self.v10), self.dynamic[src])
        self.outputs[name] = self.values[out_slot]
        if self.dynamic[src]:
            direct = _identity if not self.v10 and _plain(self.values[src]) else None
            self.steps.append(_Step(_result(self.v10), [src], [out_slot], direct))
        self.results.append((name, out_slot))

    def step(
        self, run: Callable[[list[Any]], list[Any]], ins: list[int | None], outs: list[int]
    ) -> None:
        """A step of the program; its direct form where every tensor it reads per call and
        every one it makes is plain."""
        direct = run.direct if isinstance(run, _Prepared) else None
        moving = [self.values[i] for i in ins if i is not None and self.dynamic[i]]
        if not all(_plain(v) for v in moving + [self.values[o] for o in outs]):
            direct = None
        self.steps.append(_Step(run, ins, outs, direct))

    def program(self) -> _Program:
        slots = [None if d else v for v, d in zip(self.values, self.dynamic, strict=True)]
        program = _Program(self.steps, slots, self.params, self.results, self.layers)
        program.glue = self.glue
        plain = all(own == declared for _, _, own, declared in self.params)
        if plain and all(s.direct is not None for s in self.steps):
            read = {i for s in self.steps for i in s.ins if i is not None and not self.dynamic[i]}
            program.arrays = [
                self.values[i].output() if i in read else None for i in range(len(self.values))
            ]
        return program


class CompiledModel:
    """A model prepared once (see irpool.compile_model): `f(inputs)` returns the outputs by
    Result name, bit for bit what `irpool.run(model, inputs, convention).outputs` gives.

    `inputs` (name: (shape or None, dtype name)), `outputs` (the Result names), `layers` (per
    pooling layer: its kernel path and why), `path` ("compiled" where every pooling layer runs
    compiled, "numpy" where none does, else "mixed")."""

    def __init__(
        self,
        graph: Graph,
        convention: str | None = None,
        threads: int | None = None,
        path: str | None = None,
    ) -> None:
        from . import conventions as conv
        from .kernel import thread_count
        from .kernel.compiled import SETTINGS, setting
        from .run import _element_type, parameter_names, parameters, unsupported_layers
        from .shapes import parameter_shape

        if graph.fragment:
            raise UsageError(
                f"{graph.path} holds layer fragments, not a net; compile_pool prepares one layer"
            )
        bad = unsupported_layers(graph)
        if bad:
            kinds = sorted({la.type for la in bad})
            raise UsageError(
                f"the net has layers irpool does not execute ({', '.join(kinds)}; first: "
                f'"{bad[0].label}")',
                Where(file=graph.path, line=bad[0].line),
            )
        if convention is not None:
            conv.get(convention)
        chosen = setting() if path is None else path
        if chosen not in SETTINGS:
            raise UsageError(f"kernel path {chosen!r}: expected auto, numpy or compiled")
        self.graph = graph
        self.convention = convention
        self.threads = thread_count(threads)
        self.kernel_path = chosen
        self._params = parameters(graph)
        self._aliases: dict[str, int] = {}
        for k, layer in enumerate(self._params):
            for name in parameter_names(layer):
                self._aliases.setdefault(name, k)
        self.inputs: dict[str, tuple[tuple[int, ...] | None, str]] = {}
        static: list[tuple[int, ...] | None] = []
        for layer in self._params:
            shape = parameter_shape(layer)
            dims = (
                tuple(d.lo for d in shape)
                if shape is not None and all(d.is_static for d in shape)
                else None
            )
            static.append(dims)
            dtype = numpy_dtype(_element_type(layer), layer.where()).name
            if graph.ir_version == 10 and dtype == "float16":
                dtype = "float32"  # an f16 IR v10 net takes f32 inputs (run.check_input)
            self.inputs[layer.name or layer.label] = (dims, dtype)
        self.outputs = [
            la.name or la.label for la in graph.topological() if REGISTRY.role(la) == "result"
        ]
        self._dtypes = [np.dtype(dt) for _, dt in self.inputs.values()]
        self._programs: dict[Signature, _Program] = {}
        self._lock = threading.Lock()
        self._constants: dict[int, Any] = {}
        self._bound: dict[int, Bound] = {}
        self._last: tuple[Signature, _Program] | None = None
        self._hot: tuple[tuple[tuple[tuple[int, ...], np.dtype[Any]], ...], _Program] | None = None
        """The program of the last call's input shapes and dtypes."""
        self._fast: (
            tuple[np.dtype[Any], tuple[int, ...], Callable[[Array], dict[str, Array]]] | None
        ) = None
        """For a one-input model whose last program runs on plain arrays: its dtype, shape and
        that program as one function of the input."""
        if all(s is not None for s in static):
            sig = tuple(
                (s, dt.name) for s, dt in zip(static, self._dtypes, strict=True) if s is not None
            )
            self._program(sig)

    # -- the public face ----------------------------------------------------------------------

    @property
    def layers(self) -> list[LayerPath]:
        """Per pooling layer, its kernel path (of the program built last)."""
        program = self._last[1] if self._last else None
        return list(program.layers) if program else []

    @property
    def glue(self) -> list[LayerPath]:
        """Per glue layer that computes per element on plain tensors (Convert, Multiply,
        ReLU, ...), its kernel path (of the program built last): "compiled" where a numba
        kernel serves it (kernel/glue_compiled.py), else "numpy"."""
        program = self._last[1] if self._last else None
        return list(program.glue) if program else []

    @property
    def path(self) -> str:
        paths = {la.path for la in self.layers}
        if not paths:
            return "numpy"
        if paths == {"compiled"}:
            return "compiled"
        return "numpy" if "compiled" not in paths else "mixed"

    @property
    def why(self) -> str:
        program = self._last[1] if self._last else None
        if program is not None and program.why:
            return program.why
        return "; ".join(f"{la.label}: {la.why}" for la in self.layers)

    def __repr__(self) -> str:
        return (
            f"<CompiledModel {self.graph.path!r} {self.path}: {len(self.layers)} pooling layer(s)>"
        )

    def __call__(self, inputs: Mapping[str, Array] | Array | None = None) -> dict[str, Array]:
        fast = self._fast
        if (
            fast is not None
            and type(inputs) is np.ndarray
            and inputs.dtype is fast[0]
            and inputs.shape == fast[1]
        ):
            return fast[2](inputs)  # one plain input of the last signature
        arrays = self._arrays(inputs)
        key = tuple((a.shape, a.dtype) for a in arrays)
        hot = self._hot
        if hot is not None and hot[0] == key:
            program = hot[1]
        else:
            program = self._program(tuple((tuple(a.shape), a.dtype.name) for a in arrays))
            self._hot = (key, program)
            self._fast = None
            if len(arrays) == 1 and program.arrays is not None:
                self._fast = (arrays[0].dtype, arrays[0].shape, _one_input(program))
        if program.arrays is not None:
            return _direct(program, program.arrays, arrays)
        slots = list(program.slots)
        for (slot, _, own, declared), array in zip(program.params, arrays, strict=True):
            slots[slot] = _value(array, own, declared)
        for step in program.steps:
            outs = step.run([slots[i] if i is not None else None for i in step.ins])
            for slot, value in zip(step.outs, outs, strict=False):
                slots[slot] = value
        return {name: slots[slot] for name, slot in program.results}

    # -- inputs -------------------------------------------------------------------------------

    def _arrays(self, inputs: Mapping[str, Array] | Array | None) -> list[Array]:
        """The inputs in Parameter order: a plain match of dtype (and compiled shape) as it is,
        anything else through run.bind_inputs (its checks, errors and bf16-as-uint16 views)."""
        n = len(self._params)
        got: list[Any] = [None] * n
        if isinstance(inputs, np.ndarray) and n == 1:
            got[0] = inputs
        elif isinstance(inputs, Mapping):
            for key, array in inputs.items():
                k = self._aliases.get(key)
                if k is None or got[k] is not None or not isinstance(array, np.ndarray):
                    return self._bind(inputs)
                got[k] = array
        else:
            return self._bind(inputs)
        for k, array in enumerate(got):
            if array is None or array.dtype != self._dtypes[k]:
                return self._bind(inputs)
            shape = list(self.inputs.values())[k][0]
            if shape is not None and array.shape != shape:
                return self._bind(inputs)
        return got

    def _bind(self, inputs: Mapping[str, Array] | Array | None) -> list[Array]:
        from .run import bind_inputs

        if inputs is None:
            raise UsageError(
                "no inputs: a compiled model is called with an array (a one-input model) or a "
                f"mapping of input names to arrays ({', '.join(self.inputs) or 'none'})"
            )
        if not isinstance(inputs, (Mapping, np.ndarray)):
            raise UsageError(
                f"inputs: expected an array or a mapping of input names to arrays, not "
                f"{type(inputs).__name__}"
            )
        if isinstance(inputs, Mapping):
            inputs = {str(k): np.asarray(v) for k, v in inputs.items()}
        bound = bind_inputs(self.graph, inputs)
        return [bound[p.index] for p in self._params]

    # -- building a program -------------------------------------------------------------------

    def _program(self, sig: Signature) -> _Program:
        with self._lock:
            program = self._programs.get(sig)
            if program is None:
                program = self._programs[sig] = self._build(sig)
            self._last = (sig, program)
            return program

    def _build(self, sig: Signature) -> _Program:
        """The program for inputs of one signature, traced on a random input (every Value's
        held and declared type known), checked against run_graph on that input."""
        from .run import run_graph

        trace = _uniform_inputs(self.graph, sig)
        try:
            program, outputs = self._trace(sig, trace, prepare=True)
        except _Unknown as e:
            return self._whole(sig, f"a layer of role {e} this version does not prepare")
        expected = run_graph(self.graph, self._given(trace), self.convention)
        same = _same(outputs, expected.outputs)
        if same and program.arrays is not None:
            # the steps' direct forms too (what a call on plain arrays runs)
            given = [trace[index] for _, index, _, _ in program.params]
            same = _same(_direct(program, program.arrays, given), expected.outputs)
        if not same:
            program, _ = self._trace(sig, trace, prepare=False)
            program.why = (
                "the prepared steps differed from irpool.run on a random input (a bug, please "
                "report it): every layer runs on the interpreter's steps"
            )
        return program

    def _given(self, arrays: Mapping[int, Array]) -> Any:
        """Arrays by Parameter layer index as run_graph takes them (by a name of each)."""
        from .run import parameter_names

        if len(self._params) == 1:
            return arrays[self._params[0].index]
        given = {}
        for layer in self._params:
            names = parameter_names(layer)
            given[names[0] if names else layer.label] = arrays[layer.index]
        return given

    def _whole(self, sig: Signature, why: str) -> _Program:
        """A program of one step: run_graph on the whole graph per call."""
        from .run import run_graph

        graph, convention = self.graph, self.convention
        n = len(self._params)
        names = self.outputs

        def run(v: list[Any]) -> list[Any]:
            arrays = {p.index: x.array for p, x in zip(self._params, v, strict=True)}
            outs = run_graph(graph, self._given(arrays), convention).outputs
            return [outs[name] for name in names]

        params = [(k, p.index, sig[k][1], sig[k][1]) for k, p in enumerate(self._params)]
        step = _Step(run, list(range(n)), list(range(n, n + len(names))))
        slots: list[Any] = [None] * (n + len(names))
        results = [(name, n + k) for k, name in enumerate(names)]
        return _Program([step], slots, params, results, [], f"every layer interpreted: {why}")

    def _trace(
        self, sig: Signature, trace: Mapping[int, Array], prepare: bool
    ) -> tuple[_Program, dict[str, Array]]:
        rn = _run_module()
        from .model import port_inputs

        graph = self.graph
        onnx_model = graph.format == "onnx"
        plugin = not onnx_model and self.convention in (None, "openvino")
        hold_f16 = onnx_model and self.convention in (None, "onnx")
        index_of = {la.id: la.index for la in graph.layers}
        t = _Tracer(graph.ir_version == 10)
        for layer in graph.topological():
            role = rn._role(layer)
            ins = port_inputs(
                graph,
                layer,
                index_of,
                t.slot_of.__getitem__,
                lambda init: t.new_slot(rn._declared_value(init), False),
            )
            optional = [t.values[i] if i is not None else None for i in ins]
            moving = any(t.dynamic[i] for i in ins if i is not None)
            if role not in ("parameter", "const") and not any(v is not None for v in optional):
                from .errors import IrParseError

                raise IrParseError(f"{layer.type} has no connected input", layer.where())
            if role == "parameter":
                array = trace[layer.index]
                et = rn._element_type(layer) if not onnx_model else None
                t.parameter(layer, array, et or rn.element_type_of_numpy(array.dtype.name))
                continue
            if role == "result":
                assert ins[0] is not None
                t.result(layer.name or layer.label, ins[0])
                continue
            moving_ins = [i is not None and t.dynamic[i] for i in ins]
            run, path = self._layer_step(
                layer, role, optional, moving_ins, plugin, hold_f16, prepare and moving
            )
            outs = run(optional)
            if path is not None:
                (t.glue if role in _GLUE_ROLES else t.layers).append(path)
            out_slots = []
            for port, value in zip(layer.outputs, outs, strict=False):
                out_slots.append(t.new_slot(value, moving))
                t.slot_of[(layer.index, port.id)] = out_slots[-1]
            if moving:
                t.step(run, ins, out_slots)
        return t.program(), t.outputs

    def _layer_step(
        self,
        layer: Layer,
        role: str,
        optional: list[Any],
        moving: list[bool],
        plugin: bool,
        hold_f16: bool,
        prepare: bool,
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath | None]:
        """A layer's step: the interpreter's own function for it, or a pooling layer's prepared
        kernel where its input is a plain tensor."""
        rn = _run_module()

        graph = self.graph
        convention = self.convention
        if role == "const":
            if layer.index not in self._constants:
                raw = rn.read_const(graph, layer)
                if plugin:
                    et = rn.element_type_of_numpy(raw.dtype.name) or "f32"
                    stored, held = rn.elements.store_constant(raw, et)
                    self._constants[layer.index] = rn.Value(stored, held, et, raw)
                else:
                    self._constants[layer.index] = rn._declared_value(raw)
            constant = self._constants[layer.index]
            return (lambda _: [constant]), None
        if role == "convert":
            convert = _Prepared(lambda v: [rn._convert(layer, v[0], plugin)], None)
            if prepare and moving[0] and _plain(optional[0]):
                return self._convert_step(layer, convert, optional[0], plugin)
            return convert, None
        if role == "identity":
            first = _first
            return _Prepared(first, first), None
        spec = REGISTRY.spec(layer)
        assert spec is not None
        if role == "reshape":
            from .run_values import glue

            execute = spec.execute
            shaped = _Prepared(
                lambda v: rn._reshape(layer, execute, [x for x in v if x is not None], plugin),
                lambda v: glue(execute, layer, [x for x in v if x is not None]),
            )
            if prepare and moving[0] and _plain(optional[0]):
                return shaped, None  # ins[0] plain: the values stay as they are held
            return shaped.run, None
        if role == "elementwise":
            from .ops.glue import folded_pair

            if plugin and folded_pair(graph, layer) is not None:
                # run folds the pair into one fma from the tensor before it (ops/glue.py)
                raise _Unknown("elementwise (an Add/Subtract -> Multiply pair folded)")
            execute = spec.execute
            elementwise = _Prepared(
                lambda v: rn._elementwise(layer, execute, [x for x in v if x is not None]),
                None,
            )
            if prepare:  # some input is computed per call
                return self._elementwise_step(layer, execute, elementwise, optional, moving)
            return elementwise.run, None
        if role == "quantize":
            if prepare and plugin:
                made = self._quantize_step(layer, optional, moving)
                if made is not None:
                    return made
            quantize: Any = None
            if prepare and self.kernel_path != "numpy":
                from .kernel.glue_compiled import fake_quantize as quantize
            return (
                lambda v: [
                    rn._fake_quantize(
                        layer, [x for x in v if x is not None], plugin, [], quantize, graph
                    )
                ]
            ), None
        if not spec.pooling:
            raise _Unknown(role)
        bound = self._bound.get(layer.index)
        if bound is None:
            bound = self._bound[layer.index] = bind(graph, layer, convention)
        if not bound.family.windows:
            return self._family_step(bound, optional, moving, prepare)
        return self._pool_step(bound, optional, plugin, hold_f16, prepare)

    def _convert_step(
        self, layer: Layer, convert: _Prepared, src: Any, plugin: bool
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath | None]:
        """A Convert of a plain tensor: its value (when held in the target type) on plain
        arrays, by a numba kernel where one serves the conversion."""
        from .kernel.glue_compiled import prepare_convert
        from .ops import elements
        from .ops.registry import read_element_type

        target = read_element_type(layer.data["destination_type"], "destination_type")
        held_in, declared_in = src.held, src.declared
        value = convert.run([src])[0]
        if value.array is src.array:
            convert.direct = _first  # the plugin's Convert to the type it holds: nothing
            return convert, None
        if not _plain(value):
            return convert.run, None

        def numpy(v: list[Any]) -> list[Any]:
            if plugin:
                return [elements.convert(v[0], held_in, target)[0]]
            out, held = elements.convert(v[0], declared_in, target)
            return [elements.deliver(out, held, target)]

        kernel = prepare_convert(
            src.array.dtype, value.array.dtype, src.array.size, self.kernel_path
        )
        convert.direct = kernel or numpy
        path = "compiled" if kernel else "numpy"
        why = f"{src.declared} -> {target}: " + (
            "compiled (numba)" if kernel else "the numpy core (no kernel serves it)"
        )
        return convert, LayerPath(layer.label, layer.type, path, why)

    def _elementwise_step(
        self,
        layer: Layer,
        execute: Any,
        elementwise: _Prepared,
        optional: list[Any],
        moving: list[bool],
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath | None]:
        """An elementwise layer whose inputs are plain tensors and constants read in their
        declared types: on plain arrays, by a numba kernel where one serves it."""
        from .kernel.glue_compiled import prepare_elementwise
        from .run_values import glue, half_held

        given = [(v, m) for v, m in zip(optional, moving, strict=False) if v is not None]
        if any((m and not _plain(v)) or (not m and half_held(v)) for v, m in given):
            return elementwise.run, None
        arrays = [v.array if m else v.output() for v, m in given]
        made = prepare_elementwise(layer.type, arrays, [m for _, m in given], self.kernel_path)
        if made is None:
            elementwise.direct = lambda v: glue(execute, layer, [x for x in v if x is not None])
            return elementwise, LayerPath(
                layer.label, layer.type, "numpy", "the numpy core (no kernel serves it)"
            )
        kernel, why = made
        elementwise.direct = lambda v: kernel([x for x in v if x is not None])
        return elementwise, LayerPath(layer.label, layer.type, "compiled", why)

    def _interpreted(
        self, bound: Bound, run: Callable[[list[Any]], list[Any]], why: str
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath]:
        return run, LayerPath(bound.label, bound.layer.type, "interpreted", why)

    def _pool_step(
        self, bound: Bound, optional: list[Any], plugin: bool, hold_f16: bool, prepare: bool
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath]:
        rn = _run_module()
        from .kernel.prepared import PreparedPool

        convention = self.convention

        def interpreted(v: list[Any]) -> list[Any]:
            _, outs = rn._pool(bound, v, convention, None, True, plugin, hold_f16)
            return list(outs)

        src = optional[0] if optional else None
        if not prepare or bound.spec.kind == "qlinear" or src is None:
            why = "a quantized layer" if bound.spec.kind == "qlinear" else "its input is constant"
            return self._interpreted(bound, interpreted, why)
        if (
            plugin
            and _plain(src)
            and src.declared in ("f16", "bf16")
            and self._results_only(bound.layer)
        ):
            return self._half_step(bound, optional, plugin)
        if plugin and getattr(src, "quant", None) is not None:
            made = self._codes_step(bound, src)
            if made is not None:
                return made
        if not _plain(src) or src.declared != "f32":
            return self._interpreted(
                bound,
                interpreted,
                f"its input is a {src.declared} tensor held as {src.held}: the interpreter's "
                "conversions run around the plan",
            )
        p, _ = rn._pool(bound, optional, convention, None, True, plugin, hold_f16)
        if plugin and p.indices and not bound.indices_used:
            # a MaxPool-8/14 whose indices nothing reads: the values alone (the plugin's float
            # values do not depend on the indices output; computing them costs several times
            # the values' time)
            p = dataclasses.replace(p, indices=False)
        prepared = PreparedPool(p, self.threads, self.kernel_path)
        declared = _declared

        pool = prepared.run
        if prepared.path == "compiled" and p.via is None:
            # the program's signature fixes this input's dtype and shape: no check per call
            kernel = prepared._compiled

            def pool(x: Array) -> tuple[Array, Array | None]:
                return kernel()(x)

        def direct(v: list[Any]) -> list[Any]:
            values, indices = pool(v[0])
            return [values] if indices is None else [values, indices]

        def run(v: list[Any]) -> list[Any]:
            values, indices = prepared.run(v[0].array)
            outs = [_value(values, "f32", "f32")]
            if indices is not None:
                outs.append(declared(indices))
            return outs

        return _Prepared(run, direct), LayerPath(
            bound.label, bound.layer.type, prepared.path, prepared.why
        )

    # -- quantized chains (LPT) ----------------------------------------------------------------

    def _readers(self, layer: Layer) -> list[tuple[Layer, int]]:
        """The layers that read `layer`'s outputs, each with the input position it reads."""
        graph = self.graph
        by_id = {la.id: la for la in graph.layers}
        out = []
        for e in graph.edges:
            if e.from_layer != layer.id:
                continue
            reader = by_id[e.to_layer]
            where = [k for k, port in enumerate(reader.inputs) if port.id == e.to_port]
            out.append((reader, where[0] if where else -1))
        return out

    def _quantize_step(
        self, layer: Layer, optional: list[Any], moving: list[bool]
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath | None] | None:
        """A FakeQuantize whose ranges are constants, on the plugin's reading (lpt_run): its
        constants, LPT's decomposition, the ranges a moved dequantization is fused into and
        the kernels made once; a call computes the value only where a reader takes it and the
        codes only where a reader may pool them.  None: the interpreter's own step."""
        from . import lpt
        from .lpt_run import Quant, levels_of

        rn = _run_module()
        if len(optional) != 5 or any(v is None for v in optional) or any(moving[1:]):
            return None
        x = optional[0]
        quant = getattr(x, "quant", None)
        moved = quant is not None and quant.moved
        if not moved and not (quant is not None or (_plain(x) and x.declared == "f32")):
            return None
        data = quant.codes if quant is not None and moved else x.output()
        if data.dtype != np.float32:
            return None
        ranges = [v.constant if v.constant is not None else v.output() for v in optional[1:]]
        levels = levels_of(layer)
        p = lpt.fq_params(levels, ranges, data.ndim)
        d = lpt.decompose(p)
        shape = tuple(data.shape)
        if quant is not None and moved:
            # a post-op only where the pooling layer's output has no other reader (run)
            post = quant.post_op and not rn._shared(self.graph, layer)
            p_in = lpt.fused_ranges(p, quant.d)
            value_of = self._fq_kernel(shape, p_in, post, True)
        else:
            p_in, post = p, False
            value_of = self._fq_kernel(shape, p, False, None)
        readers = self._readers(layer)
        codes_of = None
        if d is not None and any(REGISTRY.role(r) != "result" for r, _ in readers):
            to_codes = lpt.FakeQuantizeParams(
                levels, p_in.il, p_in.ih, np.asarray(np.float32(d.lo)), np.asarray(np.float32(d.hi))
            )
            codes_of = self._fq_kernel(shape, to_codes, post, None)
        # a pooling layer (plugin) reads a FakeQuantize's codes, never its value
        value_read = d is None or not all(k == 0 and _pools(r) for r, k in readers)
        if not value_read and codes_of is None:
            value_read = True
        # where LPT pools the codes, the other readers read their dequantization (run.codes_pooled)
        dequantize = (
            d.dequantize if d is not None and rn.codes_pooled(self.graph, layer, d) else None
        )
        label = layer.label
        value_type = rn.Value

        def run(v: list[Any]) -> list[Any]:
            src = v[0].quant.codes if moved else v[0].output()
            codes = codes_of(src) if codes_of is not None else None
            if not value_read:
                value = codes
            elif dequantize is not None and codes is not None:
                value = dequantize(codes)
            else:
                value = value_of(src)
            q = Quant(d, codes, source=label) if codes is not None and d is not None else None
            return [value_type(value, "f32", "f32", quant=q)]

        return run, None

    def _fq_kernel(
        self, shape: tuple[int, ...], p: Any, fused: bool, fma_out: bool | None
    ) -> Callable[[Array], Array]:
        """lpt.cpu_fake_quantize(x, p, fused, fma_out) for float32 data of `shape`: numba_glue's
        kernel with its constants laid out once where it serves (kernel/glue_compiled.py), else
        the numpy reading."""
        from . import lpt

        def numpy(x: Array) -> Array:
            return lpt.cpu_fake_quantize(x, p, fused, fma_out)

        if self.kernel_path == "numpy" or not shape or 0 in shape:
            return numpy
        from .kernel import glue_compiled as gc
        from .kernel.compiled import installed

        if not installed():
            return numpy
        consts = gc._fq_constants(shape, p) or _fq_constants_zero_bounds(shape, p)
        if not consts:
            return numpy
        kernel = gc.kernels().fake_quantize
        out_fma = fused if fma_out is None else fma_out
        f32 = np.float32

        def compiled(x: Array) -> Array:
            out = np.empty(shape, f32)
            kernel(x.reshape(-1), *consts, fused, out_fma, out.reshape(-1))
            return out

        return compiled

    def _codes_step(
        self, bound: Bound, src: Any
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath] | None:
        """A pooling layer LPT runs on the codes of the FakeQuantize (or MaxPool of codes)
        before it: its plan on the codes, the counts it divides by and the dequantization made
        once; a call pools the codes on the prepared plan (the compiled path where it serves)
        and dequantizes only where a reader other than a FakeQuantize takes the value.  None:
        LPT does not transform the layer (the interpreter's own step)."""
        from .kernel.prepared import PreparedPool
        from .lpt_run import Quant

        rn = _run_module()
        kind = rn._lpt_kind(bound)
        quant = src.quant
        if kind is None or not quant.integral:
            return None
        if kind in ("max", "reduce_max") and not quant.d.positive:
            return None
        codes = np.asarray(quant.codes, dtype=np.float32)
        if codes.dtype != np.float32 or codes is not quant.codes:
            return None
        p, pooled_codes, _ = rn.pool_codes(bound, kind, codes, None)
        d = quant.d.for_rank(pooled_codes.ndim)
        post_op = kind != "max"
        source = quant.source
        value_read = not all(
            k == 0 and REGISTRY.role(r) == "quantize" for r, k in self._readers(bound.layer)
        )
        value_type = rn.Value
        declared = _declared
        layer = bound.layer
        pool: Callable[[Array], tuple[Array, list[Array]]]
        if kind in ("reduce_mean", "reduce_max"):
            from .lpt_run import reduce_codes

            axes = tuple(getattr(p, "axes", ()))
            keep = bool(getattr(p, "keep", True))
            count = int(getattr(p, "count", 1))

            reduce = self._codes_reduce(kind, codes.shape, axes, count, pooled_codes.shape)

            def pool(x: Array) -> tuple[Array, list[Array]]:
                if reduce is not None:
                    out = reduce(x)
                    if out is not None:
                        return out, []
                return reduce_codes(kind, x, axes, keep, count), []

            path = (
                LayerPath(bound.label, layer.type, "compiled", "on LPT's codes: compiled (numba)")
                if reduce is not None
                else LayerPath(
                    bound.label,
                    layer.type,
                    "numpy",
                    "on LPT's codes: the numpy core, plan prepared"
                    + ("" if self.kernel_path == "numpy" else " (axes not the last ones)"),
                )
            )
        else:
            keep_indices = bool(p.indices and bound.indices_used)
            plan = p if p.indices == keep_indices else dataclasses.replace(p, indices=keep_indices)
            prepared = PreparedPool(plan, self.threads, self.kernel_path)
            run_plan = prepared.run
            if prepared.path == "compiled" and plan.via is None:
                # the codes are float32 arrays of the traced shape (a FakeQuantize's or a
                # MaxPool's fresh output): no check per call
                kernel = prepared._compiled

                def run_plan(x: Array) -> tuple[Array, Array | None]:
                    return kernel()(x)

            if kind == "avg":
                from .kernel.windows import divisor
                from .lpt import mean_of_codes

                div = np.asarray(divisor(p.via or p), dtype=np.float64)
                recover = self._codes_average(div, pooled_codes.shape, bound.channels_last)

                def pool(x: Array) -> tuple[Array, list[Array]]:
                    means, _ = run_plan(x)
                    if recover is not None:
                        return recover(means), []
                    with np.errstate(all="ignore"):
                        sums = np.rint(np.asarray(means, dtype=np.float64) * div)
                        sums = np.where(np.isfinite(sums), sums, 0.0)
                    return mean_of_codes(sums.astype(np.float32), div), []

            else:

                def pool(x: Array) -> tuple[Array, list[Array]]:
                    values, indices = run_plan(x)
                    return values, [] if indices is None else [indices]

            path = LayerPath(
                bound.label, layer.type, prepared.path, f"on LPT's codes: {prepared.why}"
            )

        def run(v: list[Any]) -> list[Any]:
            pooled, rest = pool(v[0].quant.codes)
            value = d.dequantize(pooled) if value_read else pooled
            q = Quant(d, pooled, moved=True, post_op=post_op, source=source)
            return [value_type(value, "f32", "f32", quant=q), *(declared(a) for a in rest)]

        return run, path

    def _codes_average(
        self, div: Array, shape: tuple[int, ...], channels_last: bool
    ) -> Callable[[Array], Array] | None:
        """An AvgPool of codes from its windows' means (lpt_run.average_codes: the exact sums
        recovered, times the float32 reciprocal of each count) in one pass of numba_lpt's
        kernel, the counts laid out once; None where it does not serve (the numpy path, a
        channels-last layout, counts not shaped like the trailing axes)."""
        from .kernel.compiled import installed

        if self.kernel_path == "numpy" or not installed() or channels_last or 0 in shape:
            return None
        if div.ndim > len(shape) or tuple(shape[len(shape) - div.ndim :]) != div.shape:
            return None
        counts = np.ascontiguousarray(div, dtype=np.float64).reshape(-1)
        with np.errstate(all="ignore"):
            recips = (np.float32(1) / counts.astype(np.float32)).astype(np.float32)
        kernel = _lpt_kernels().average_of_codes
        f32 = np.float32

        def recover(means: Array) -> Array:
            out = np.empty(shape, f32)
            kernel(np.ascontiguousarray(means).reshape(-1), counts, recips, out.reshape(-1))
            return out

        return recover

    def _codes_reduce(
        self,
        kind: str,
        shape: tuple[int, ...],
        axes: tuple[int, ...],
        count: int,
        out_shape: tuple[int, ...],
    ) -> Callable[[Array], Array | None] | None:
        """A ReduceMean or ReduceMax of codes over the last axes on numba_lpt's kernel (what
        lpt_run.reduce_codes computes; None from a call: a non-finite code, numpy's reading
        then); None where it does not serve (the numpy path, other axes, empty data)."""
        from .kernel.compiled import installed

        if self.kernel_path == "numpy" or not installed() or not shape or 0 in shape:
            return None
        ndim = len(shape)
        norm = sorted({a % ndim for a in axes})
        if not norm or norm != list(range(ndim - len(norm), ndim)):
            return None
        n = int(np.prod([shape[a] for a in norm]))
        if n != count or n == 0 or n >= 65536:
            return None
        kernels = _lpt_kernels()
        is_max = kind == "reduce_max"
        sums, top = kernels.sum_of_codes_rows, kernels.max_of_codes_rows
        f32 = np.float32
        divisor = f32(count)

        def reduce(x: Array) -> Array | None:
            out = np.empty(out_shape, f32)
            flat = np.ascontiguousarray(x).reshape(-1)
            if is_max:
                return out if top(flat, n, out.reshape(-1)) else None
            if not sums(flat, n, out.reshape(-1)):
                return None
            # lpt.reduce_mean_of_codes: f32(sum) / count, one IEEE division
            return np.divide(out, divisor, out=out)

        return reduce

    def _results_only(self, layer: Layer) -> bool:
        """Whether only Results read the layer's outputs (a tensor held in f32 for the layers
        after it is delivered rounded to its declared type there)."""
        graph = self.graph
        if graph.ir_version == 10:
            return False
        by_id = {la.id: la for la in graph.layers}
        readers = [by_id[e.to_layer] for e in graph.edges if e.from_layer == layer.id]
        return bool(readers) and all(REGISTRY.role(la) == "result" for la in readers)

    def _half_step(
        self, bound: Bound, optional: list[Any], plugin: bool
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath]:
        """A windowed layer of an f16 or bf16 input (the plugin's way: widened to f32, pooled,
        rounded to the input's type at the Result it feeds) on the plan for data of that type,
        as compile_pool runs it: the compiled kernel widens and rounds as it goes
        (bit-identical to the numpy core)."""
        rn = _run_module()
        from .kernel.prepared import PreparedPool

        p, _ = rn._pool(bound, optional, self.convention, None, True, plugin, False)
        x = optional[0].array
        half = bound.plan(
            tuple(x.shape), "bfloat16" if optional[0].declared == "bf16" else "float16"
        )
        keep = bool(p.indices and bound.indices_used)  # unread indices: the values alone
        if half.indices != keep:
            half = dataclasses.replace(half, indices=keep)
        prepared = PreparedPool(half, self.threads, self.kernel_path)
        declared = _declared

        def direct(v: list[Any]) -> list[Any]:
            values, indices = prepared.run(v[0])
            return [values] if indices is None else [values, indices]

        def run(v: list[Any]) -> list[Any]:
            return [declared(a) for a in direct([v[0].array])]

        return _Prepared(run, direct), LayerPath(
            bound.label, bound.layer.type, prepared.path, prepared.why
        )

    def _family_step(
        self, bound: Bound, optional: list[Any], moving: list[bool], prepare: bool
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath]:
        rn = _run_module()
        from .kernel.family_compiled import prepare as prepare_family

        convention = self.convention

        def interpreted(v: list[Any]) -> list[Any]:
            _, outs = rn._family(bound, v, None, convention)
            return list(outs)

        family = bound.family
        src = optional[0] if optional else None
        if not prepare or src is None:
            return self._interpreted(bound, interpreted, "its input is constant")
        if getattr(src, "quant", None) is not None and convention in (None, "openvino"):
            made = self._codes_step(bound, src)
            if made is not None:
                return made
        if not _plain(src):
            return self._interpreted(
                bound,
                interpreted,
                f"its input is a {src.declared} tensor held as {src.held}: the interpreter's "
                "conversions run around the plan",
            )
        computed = [k for k in family.value_inputs if k < len(moving) and moving[k]]
        if computed:
            return self._interpreted(
                bound,
                interpreted,
                f"its input {computed[0]} (a size or axes) is computed by the model: the plan is "
                "made per call",
            )
        p, _ = rn._family(bound, optional, None, convention)
        kernel = prepare_family(p, self.threads, self.kernel_path)
        declared = _declared

        def run(v: list[Any]) -> list[Any]:
            arrays = [v[0].array, *(x.output() if x is not None else None for x in v[1:])]
            return [declared(a) for a in kernel(arrays)]

        return _Prepared(run, kernel), LayerPath(
            bound.label, bound.layer.type, kernel.path, kernel.why
        )


_RUN: list[Any] = []


def _lpt_kernels() -> Any:
    from .kernel.compiled import NumbaModule

    if not _LPT:
        _LPT.append(NumbaModule("numba_lpt"))
    return _LPT[0]()


_LPT: list[Any] = []


def _run_module() -> Any:
    """irpool/run.py (the package's `run` attribute is the API function), imported once."""
    if not _RUN:
        import importlib

        _RUN.append(importlib.import_module(".run", __package__))
    return _RUN[0]


class _Unknown(Exception):
    """A layer role this module does not know (run_graph's own steps run the whole graph)."""


def _plain(v: Any) -> bool:
    """A tensor held in its declared type, computed per call (not a constant, not quantized)."""
    return bool(
        v.held == v.declared
        and v.constant is None
        and getattr(v, "quant", None) is None
        and v.jit_read is None
        and not v.late
        and v.array.dtype.name == numpy_dtype(v.declared).name
    )


def _fq_constants_zero_bounds(shape: tuple[int, ...], p: Any) -> tuple[Any, ...]:
    """glue_compiled's FakeQuantize constants where a clamp bound is a zero (a u8 range from 0,
    as NNCF writes after a ReLU), which its kernel refuses because numpy's maximum picks a
    zero's sign by its loop: the sign of a clamped zero cannot reach the output here, since it
    survives x * isc + ish only where ish is a zero too, and steps * osc + ol only where ol is
    -0.0.  So: every ol not -0.0, no range with both bounds zero, no NaN; else ()."""
    from . import lpt
    from .kernel import glue_compiled as gc

    isc, ish, osc = lpt._scales(p)
    consts = [p.il, p.ih, isc, ish, osc, p.ol]
    try:
        common = np.broadcast_shapes(*(np.shape(c) for c in consts))
    except ValueError:
        return ()
    fit = gc._pattern(shape, tuple(common))
    flat = [np.broadcast_to(np.asarray(c, np.float32), common).reshape(-1) for c in consts]
    il, ih, ol = flat[0], flat[1], flat[5]
    if fit is None or any(bool(np.isnan(c).any()) for c in flat):
        return ()
    if bool(((ol == 0) & np.signbit(ol)).any()) or bool(((il == 0) & (ih == 0)).any()):
        return ()
    gc.kernels()
    return (*flat, *fit)


def _pools(layer: Layer) -> bool:
    """A pooling layer openvino's plugin runs (it reads a FakeQuantize's codes, not its
    value: run._pool and run._family)."""
    spec = REGISTRY.spec(layer)
    return spec is not None and bool(spec.pooling) and spec.kind != "qlinear"


def _value(array: Array, own: str, declared: str) -> Any:
    return _run_module().Value(array, own, declared)


_ELEMENT_TYPES: dict[np.dtype[Any], str] = {}


def _declared(array: Array) -> Any:
    """run._declared_value with the element type of each dtype looked up once (numpy's
    dtype.name is slow: tens of microseconds on a busy machine)."""
    rn = _run_module()
    et = _ELEMENT_TYPES.get(array.dtype)
    if et is None:
        et = _ELEMENT_TYPES[array.dtype] = rn.element_type_of_numpy(array.dtype.name) or "f32"
    return rn.Value(np.asarray(array), et, et)


def _direct(program: _Program, static: list[Any], arrays: list[Array]) -> dict[str, Array]:
    """A program run on plain arrays (its steps' direct forms)."""
    slots = list(static)
    for (slot, _, _, _), array in zip(program.params, arrays, strict=True):
        slots[slot] = array
    for step in program.steps:
        assert step.direct is not None
        outs = step.direct([slots[i] if i is not None else None for i in step.ins])
        for slot, value in zip(step.outs, outs, strict=False):
            slots[slot] = value
    return {name: slots[slot] for name, slot in program.results}


def _one_input(program: _Program) -> Callable[[Array], dict[str, Array]]:
    """A one-input program on plain arrays as one function; a single kernel step whose
    outputs are the Results as a closure over the kernel (no slots)."""
    assert program.arrays is not None
    static = program.arrays
    if not program.steps:
        return lambda x: _direct(program, static, [x])
    first, rest = program.steps[0], program.steps[1:]
    pslot = program.params[0][0]
    source = {s.outs[0]: s.ins[0] for s in rest if s.direct is _identity}
    made = {slot: k for k, slot in enumerate(first.outs)}
    picks = [made.get(source.get(slot, -1) or -1, -1) for _, slot in program.results]
    if (
        len(rest) != len(source)
        or first.ins[:1] != [pslot]
        or -1 in picks
        or pslot in first.ins[1:]
    ):
        return lambda x: _direct(program, static, [x])
    kernel = first.direct
    assert kernel is not None
    extra = [static[i] if i is not None else None for i in first.ins[1:]]
    names = [(name, k) for (name, _), k in zip(program.results, picks, strict=True)]

    def run(x: Array) -> dict[str, Array]:
        outs = kernel([x, *extra])
        return {name: outs[k] for name, k in names}

    return run


_GLUE_ROLES = ("convert", "elementwise", "reshape", "identity")


def _first(v: list[Any]) -> list[Any]:
    """An identity layer's output: its first connected input."""
    return [next(x for x in v if x is not None)]


def _identity(v: list[Any]) -> list[Any]:
    return [v[0]]


def _result(v10: bool) -> Callable[[list[Any]], list[Any]]:
    def run(v: list[Any]) -> list[Any]:
        return [v[0].output(v10)]

    return run


def _same(a: Mapping[str, Array], b: Mapping[str, Array]) -> bool:
    if set(a) != set(b):
        return False
    for name, x in a.items():
        y = b[name]
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        if np.ascontiguousarray(x).tobytes() != np.ascontiguousarray(y).tobytes():
            return False
    return True


def compile_model(
    graph: Graph,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    convention: str | None = None,
    threads: int | None = None,
    path: str | None = None,
) -> CompiledModel:
    """See irpool.compile_model."""
    from .inputs import reshaped

    return CompiledModel(reshaped(graph, dict(input_shapes or {})), convention, threads, path)
