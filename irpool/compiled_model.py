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

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .compiled_base import (
    LayerPath,
    _plain,
    _Prepared,
    _run_module,
    _value,
)
from .compiled_pool import PoolSteps
from .errors import UsageError, Where
from .model import Graph, Layer, numpy_dtype
from .ops import REGISTRY, bind
from .ops.binding import Bound

Array = npt.NDArray[Any]
Signature = tuple[tuple[tuple[int, ...], str], ...]
"""Per Parameter (in graph order): the input's shape and dtype name."""


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


class CompiledModel(PoolSteps):
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
            return self._fq_layer_step(layer, optional, moving, plugin, prepare)
        if not spec.pooling:
            raise _Unknown(role)
        bound = self._bound.get(layer.index)
        if bound is None:
            bound = self._bound[layer.index] = bind(graph, layer, convention)
        if not bound.family.windows:
            return self._family_step(bound, optional, moving, prepare)
        return self._pool_step(bound, optional, plugin, hold_f16, prepare)

    def _fq_layer_step(
        self, layer: Layer, optional: list[Any], moving: list[bool], plugin: bool, prepare: bool
    ) -> tuple[Callable[[list[Any]], list[Any]], LayerPath | None]:
        """A FakeQuantize: prepared once on the plugin's reading (compiled_lpt), else the
        interpreter's step (its kernel compiled where one serves)."""
        if prepare and plugin:
            made = self._quantize_step(layer, optional, moving)
            if made is not None:
                return made
        rn = _run_module()
        graph = self.graph
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


class _Unknown(Exception):
    """A layer role this module does not know (run_graph's own steps run the whole graph)."""


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
