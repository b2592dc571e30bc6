"""`irpool extract`: a finding of compare or convert-report as a minimal standalone repro.

For one layer of a model (IR or ONNX): take the input the runtime gives the layer inside the
full model, cut the layer out as a model of its own (IR: Parameters of the real input's shape
and type, constant inputs kept, every output of the layer a Result; ONNX: the node alone with
its opset), check that the small model still shows what the full model shows (else grow the
cut: the full model's dynamic dims, then producers, then consumers), shrink the input while
the finding persists, and write a folder a maintainer runs with nothing but the runtime and
numpy: the model, input.npz, expected.npz (irpool's outputs under the reference convention),
repro.py (exit 1 while the difference reproduces, 0 once fixed), REPORT.md (a bug report)
and bundle.json (the --json document, schema irpool.extract/1).

The reference convention is what the layer should compute: `convention` when given, else the
finding's: for an IR, openvino's own when compare finds the layer differing, else the source
framework's when the IR carries marks of one (what convert-report compares with), else
openvino's; for an ONNX model, the ONNX meaning (irpool's onnx convention).
"""

from __future__ import annotations

import os
import platform
import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import conventions
from ..errors import IrpoolError, OutputError, UsageError, Where
from ..files import exists_in_folder
from ..model import Graph, Layer
from ..target import PluginIsa
from .judge import (
    Verdict,
    diagnose_ir,
    differing,
    divergence_id,
    first_cells,
    judge_ir,
    judge_onnx,
)

Array = npt.NDArray[Any]
SCHEMA = "irpool.extract/1"
REAL_LIMIT = 1 << 18
"""Most elements of the real input (and outputs) a bundle keeps beside the minimal input."""


@dataclass(frozen=True)
class ExtractOptions:
    """How a layer is extracted (the keywords of `extract` and the options of `irpool
    extract`, by the same names)."""

    convention: str | None = None
    runtime: str | None = None
    precision: str = "f32"
    atol: float | None = None
    rtol: float | None = None
    minimize: bool = True
    grow: bool = True
    force: bool = False
    verify: bool = True

    @classmethod
    def of(cls, args: Any) -> ExtractOptions:
        """The options of a parsed command line (attributes by the fields' names)."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})


@dataclass
class ExtractResult:
    """A bundle written by `extract`: where, what it shows, how small it got."""

    path: str
    model: str
    layer: str
    op: str
    format: str
    runtime: str
    convention: str
    precision: str
    atol: float
    rtol: float
    reproduces: bool
    """The small model shows the finding: repro.py exits 1 (0 for an agreeing layer)."""
    full_differs: bool
    """The layer differs inside the full model."""
    divergence: str | None
    diagnosis: str | None
    standalone: bool
    """The layer alone (static shapes) showed the full model's finding."""
    kept: list[str]
    dynamic: bool
    attributes: dict[str, str]
    real_shapes: dict[str, list[int]]
    input_shapes: dict[str, list[int]]
    cells: int
    nonzero: int
    steps: list[str]
    first: list[dict[str, Any]]
    files: list[str]
    size: int
    repro_exit: int | None = None
    repro_output: str = ""
    notes: list[str] = field(default_factory=list)
    versions: dict[str, Any] = field(default_factory=dict)

    @property
    def divergence_id(self) -> str | None:
        return divergence_id(self.divergence)

    @property
    def consistent(self) -> bool:
        """The bundle shows what the full model shows (its repro exits as it should)."""
        return self.reproduces == self.full_differs and (
            self.repro_exit is None or self.repro_exit == int(self.reproduces)
        )

    def to_json(self) -> dict[str, Any]:
        from .bundle import to_json

        return to_json(self)


def reference_convention(graph: Graph, layer: Layer, given: str | None, differs_ov: bool) -> str:
    """The convention the layer is held to (see the module's docstring)."""
    if given:
        return given
    if graph.format == "onnx":
        return "onnx"
    if differs_ov:
        return "openvino"
    from ..audit_ir import detect

    guess = detect(graph)
    return guess.framework if guess.framework is not None else "openvino"


def _find(graph: Graph, name: str) -> Layer:
    from ..lookup import find
    from ..ops import REGISTRY

    return find(graph, name, [la for la in graph.layers if REGISTRY.is_pooling(la)])


def extract(
    model: Any,
    layer: str,
    outdir: str,
    inputs: Any = None,
    *,
    convention: str | None = None,
    runtime: str | None = None,
    input_shapes: Mapping[str, Sequence[int]] | Sequence[int] | None = None,
    seed: int = 0,
    low: float = -1.0,
    high: float = 1.0,
    cast: bool = False,
    precision: str = "f32",
    atol: float | None = None,
    rtol: float | None = None,
    minimize: bool = True,
    grow: bool = True,
    force: bool = False,
    verify: bool = True,
) -> ExtractResult:
    """Write the bundle of one layer of `model` (a path, an irpool Graph, an onnx.ModelProto
    or an openvino.Model) into the new folder `outdir` (an existing non-empty one only with
    `force`).  `inputs` are the model's inputs as irpool.compare takes them (None: random from
    `seed` in [low, high)).  `runtime` (ONNX models): openvino (its conversion, as
    convert-report audits it; the default) or onnxruntime.  With `verify`, repro.py is run once
    in a child process and its exit code recorded.  Returns an ExtractResult."""
    from ..api import _Draw, _full_model

    options = ExtractOptions(
        convention, runtime, precision, atol, rtol, minimize, grow, force, verify
    )
    how = _Draw(input_shapes, seed, low, high, cast)
    with _full_model(model, inputs, how, "extract needs a full model") as full:
        graph, arrays = full
        return extract_layer(graph, layer, outdir, arrays, options)


def check_outdir(outdir: str, force: bool, protected: Sequence[str] = ()) -> None:
    """Refuse an output folder that cannot be written: its parent missing, a file, a non-empty
    folder without `force`, or one that holds the model or an input."""
    where = Where(file=outdir)
    if not exists_in_folder(outdir, where, "folder"):
        return
    if os.path.islink(outdir) or not os.path.isdir(outdir):
        raise OutputError("output path exists and is not a folder; expected a new folder", where)
    target = os.path.realpath(outdir)
    for other in protected:
        if other and os.path.realpath(other).startswith(target + os.sep):
            raise OutputError(
                "output folder holds the model or an input; it is never replaced", where
            )
    if os.listdir(outdir) and not force:
        from ..errors import option

        raise OutputError(
            f"output folder exists and is not empty; pass {option('force')} to replace it", where
        )


def extract_layer(
    graph: Graph,
    layer: str,
    outdir: str,
    arrays: Mapping[str, Array],
    options: ExtractOptions | None = None,
) -> ExtractResult:
    """`extract` on a loaded graph and its bound inputs (what compare --extract calls)."""
    o = options or ExtractOptions()
    check_outdir(outdir, o.force, [graph.path])
    target = _find(graph, layer)
    runtime = o.runtime
    if graph.format == "onnx":
        runtime = runtime or "openvino"
        if runtime not in ("openvino", "onnxruntime"):
            raise UsageError(f"runtime={runtime!r}: expected openvino or onnxruntime")
        work: _Work = _OnnxWork(graph, target, arrays, runtime, o.precision, o.atol, o.rtol)
    else:
        if runtime not in (None, "openvino"):
            raise UsageError(f"runtime={runtime!r}: an IR runs on openvino")
        work = _IrWork(graph, target, arrays, o.convention, o.precision, o.atol, o.rtol)
    work.isa = conventions.target().isa  # chosen where irpool was entered (cli.main, the API)
    with tempfile.TemporaryDirectory(prefix="irpool-extract-") as scratch:
        return work.run(scratch, outdir, o.minimize, o.grow, o.force, o.verify)


# -- the work of one extraction ----------------------------------------------------------------


class _Work(ABC):
    """What an IR and an ONNX extraction share: the search for a cut that still shows the
    finding, the minimization, the bundle."""

    graph: Graph
    target: Layer
    runtime: str
    convention: str
    precision: str
    atol: float
    rtol: float
    full: Verdict
    real_in: dict[str, Array]
    kept: list[str]
    dynamic: bool
    notes: list[str]
    isa: PluginIsa
    """The instruction set of openvino's CPU plugin modelled (the bundle names it)."""

    @abstractmethod
    def judge(self, scratch: str, arrays: Mapping[str, Array]) -> Verdict:
        """What the runtime and irpool give for this cut on `arrays`."""

    @abstractmethod
    def find_cut(self, scratch: str, grow: bool) -> tuple[Verdict, bool]:
        """The smallest cut that still shows the finding, and whether it grew."""

    @abstractmethod
    def model_files(self, arrays: Mapping[str, Array]) -> dict[str, bytes]:
        """The cut's model files (name -> bytes) for these inputs."""

    @abstractmethod
    def output_names(self) -> list[str]:
        """The cut's outputs, as the bundle names them."""

    def shrinkable(self) -> str | None:
        return next(iter(self.real_in)) if len(self.real_in) == 1 else None

    def run(
        self, scratch: str, outdir: str, minimize: bool, grow: bool, force: bool, verify: bool
    ) -> ExtractResult:
        from .bundle import write_bundle
        from .minimize import shrink

        verdict, standalone = self.find_cut(scratch, grow)
        arrays = dict(self.real_in)
        steps: list[str] = []
        if not verdict.same_finding(self.full) and verdict.error is None:
            self.notes.append(
                "no cut shows the full model's finding: the bundle holds the layer alone, "
                "which shows what it shows"
            )
        key = self.shrinkable()
        if minimize and verdict.error is None and key is not None:
            reference = verdict
            priority = _first_index(verdict)

            gross = reference.gross

            def still(candidate: dict[str, Array]) -> bool:
                seen = self.judge(scratch, candidate)
                return seen.same_finding(reference) and (seen.gross or not gross)

            # an agreeing layer keeps its real values (a regression test of all zeros tests
            # little); a difference is shrunk to its fewest, smallest values
            # and its real spatial size (every border window stays in the test)
            shows = verdict.reproduces
            shrunk = shrink(arrays, key, still, priority, values=shows, spatial=shows)
            arrays, steps = shrunk.arrays, shrunk.steps
            if steps:
                verdict = self.judge(scratch, arrays)
        elif minimize and key is None:
            self.notes.append(
                f"not minimized: the small model has {len(self.real_in)} inputs (only a "
                "one-input cut is shrunk)"
            )
        if verdict.error is not None:
            raise IrpoolError(
                f"the small model cannot be run: {verdict.error}", self.target.where()
            )
        return write_bundle(self, verdict, arrays, steps, standalone, outdir, force, verify)


def _first_index(verdict: Verdict) -> tuple[int, ...] | None:
    for got, want in zip(verdict.runtime, verdict.expected, strict=False):
        bad = differing(got, want, 0.0, 0.0)
        if bad is not None and bad.any():
            return tuple(int(v) for v in np.argwhere(bad)[0])
    return None


class _IrWork(_Work):
    def __init__(
        self,
        graph: Graph,
        target: Layer,
        arrays: Mapping[str, Array],
        convention: str | None,
        precision: str,
        atol: float | None,
        rtol: float | None,
    ) -> None:
        from .cut import IrCut

        self.graph, self.target, self.runtime = graph, target, "openvino"
        self.precision = precision
        self.given_tolerance = (atol, rtol)
        self.atol, self.rtol = atol or 0.0, rtol or 0.0
        self.arrays = dict(arrays)
        self.notes = []
        self.name = target.name or target.label
        self.full, self.full_ins = self._full(convention)
        self.cut = IrCut(graph, target, {target.id or 0})
        self.kept = []
        self.dynamic = False
        self.real_in = {}
        self._dims: dict[tuple[str, ...], Any] = {}

    def _full(self, given: str | None) -> tuple[Verdict, list[Array]]:
        """The layer inside the full model: its real inputs and outputs (openvino's), the
        convention it is held to and compare's verdict."""
        from ..oracles import openvino_rt, refusals

        with refusals("openvino", self.graph.path):
            found, missing = openvino_rt.probe_layers(
                self.graph.path,
                [self.name],
                self.arrays,
                openvino_rt.LayerProbe(self.precision, held=False),
            )
        if missing:
            raise UsageError(
                "openvino's graph of the model has no such layer (openvino drops layers that "
                "reach no Result)",
                self.target.where(),
            )
        ins, outs = found[self.name]
        differs_ov = False
        if given is None:
            passed, _, _ = diagnose_ir(
                self.graph,
                self.arrays,
                self.name,
                "openvino",
                self.atol,
                self.rtol,
                self.precision,
            )
            differs_ov = not passed
        self.convention = reference_convention(self.graph, self.target, given, differs_ov)
        if conventions.get(self.convention).framework is not None:
            # held to a source framework, as convert-report audits an IR: its tolerances
            from ..audit import AUDIT_TOLERANCE

            atol, rtol = self.given_tolerance
            self.atol = AUDIT_TOLERANCE[0] if atol is None else atol
            self.rtol = AUDIT_TOLERANCE[1] if rtol is None else rtol
        passed, divergence, diagnosis = diagnose_ir(
            self.graph,
            self.arrays,
            self.name,
            self.convention,
            self.atol,
            self.rtol,
            self.precision,
        )
        from .judge import expected_values, outputs_differ

        expected = expected_values(self.graph, self.name, list(ins), self.convention)
        runtime = list(outs)
        if passed and outputs_differ(runtime, expected, self.atol, self.rtol):
            self.notes.append(
                "inside the full model the layer passes compare with an allowance its bundle "
                "does not make (summation order, or a fused FakeQuantize read at its output); "
                "the bundle is held to the exact rule"
            )
        # the full model's finding is the report's verdict
        verdict = Verdict(not passed, divergence, diagnosis, runtime, expected)
        return verdict, list(ins)

    def _feed_values(self, cut: Any) -> dict[str, Array]:
        """The full model's values of the tensors that enter the cut."""
        from ..oracles import openvino_rt, refusals
        from .cut import feeds

        wanted = feeds(cut)
        readers: dict[tuple[int, int], tuple[str, int]] = {}
        for e in self.graph.edges:
            key = (e.from_layer, e.from_port)
            if any((f.from_layer, f.from_port) == key for f in wanted) and e.to_layer in cut.layers:
                la = self.graph.layer(e.to_layer)
                port_index = [p.id for p in la.inputs].index(e.to_port)
                readers.setdefault(key, (la.name or la.label, port_index))
        names = sorted({r[0] for r in readers.values()})
        with refusals("openvino", self.graph.path):
            found, _ = openvino_rt.probe_layers(
                self.graph.path,
                names,
                self.arrays,
                openvino_rt.LayerProbe(self.precision, held=False, outputs=False),
            )
        out = {}
        for f in wanted:
            lname, k = readers[(f.from_layer, f.from_port)]
            out[f.name] = found[lname][0][k]
        return out

    def _files(self, cut: Any, arrays: Mapping[str, Array], scratch: str) -> str:
        from ..oracles import bundle_rt
        from .cut import build_ir
        from .judge import write_candidate

        key = (
            str(cut.dynamic),
            *sorted(map(str, cut.layers)),
            *(f"{k}{a.shape}" for k, a in sorted(arrays.items())),
        )
        net = build_ir(cut, arrays)
        path = write_candidate(scratch, "cand.xml", net.xml().encode(), net.bin())
        dims = self._dims.get(key)
        if dims is None:
            try:
                dims = bundle_rt.output_dims(path)
            except IrpoolError:
                dims = {}
            self._dims[key] = dims
        net = build_ir(cut, arrays, dims)
        return write_candidate(scratch, "cand.xml", net.xml().encode(), net.bin())

    def judge_cut(self, scratch: str, cut: Any, arrays: Mapping[str, Array]) -> Verdict:
        path = self._files(cut, arrays, scratch)
        return judge_ir(
            path,
            self.name,
            arrays,
            self.convention,
            self.precision,
            self.atol,
            self.rtol,
            len(self.target.outputs),
        )

    def judge(self, scratch: str, arrays: Mapping[str, Array]) -> Verdict:
        return self.judge_cut(scratch, self.cut, arrays)

    def _has_dynamic(self, cut: Any) -> bool:
        """Whether a tensor entering the cut has a dynamic dim in the full model."""
        from .cut import feeds

        for f in feeds(cut):
            port = self.graph.layer(f.from_layer).output_port(f.from_port)
            if port is None or port.dims is None or any(d < 0 for d in port.dims):
                return True
        return False

    def find_cut(self, scratch: str, grow: bool) -> tuple[Verdict, bool]:
        from .cut import grow_consumers, grow_producers

        tried = []
        cut = self.cut
        first = None
        candidates: list[Any] = [cut]
        if grow and self._has_dynamic(cut):
            dyn = cut.copy()
            dyn.dynamic = True
            dyn.kept.append("the full model's dynamic dims")
            candidates.append(dyn)
        for candidate in candidates:
            values = self._feed_values(candidate)
            verdict = self.judge_cut(scratch, candidate, values)
            tried.append(candidate)
            if first is None:
                first = (candidate, values, verdict)
            if verdict.same_finding(self.full):
                return self._take(candidate, values, verdict, candidate is cut)
        if grow:
            current = candidates[-1]
            for grower in (grow_producers, grow_producers, grow_consumers, grow_consumers):
                bigger = grower(current)
                if bigger is None:
                    continue
                current = bigger
                values = self._feed_values(current)
                verdict = self.judge_cut(scratch, current, values)
                if verdict.same_finding(self.full):
                    return self._take(current, values, verdict, False)
        assert first is not None
        return self._take(*first, standalone=False)

    def _take(
        self, cut: Any, values: dict[str, Array], verdict: Verdict, standalone: bool
    ) -> tuple[Verdict, bool]:
        self.cut = cut
        self.kept = list(cut.kept)
        self.dynamic = cut.dynamic
        self.real_in = values
        return verdict, standalone

    def model_files(self, arrays: Mapping[str, Array]) -> dict[str, bytes]:
        from .cut import build_ir

        key = (
            str(self.cut.dynamic),
            *sorted(map(str, self.cut.layers)),
            *(f"{k}{a.shape}" for k, a in sorted(arrays.items())),
        )
        net = build_ir(self.cut, arrays, self._dims.get(key))
        files = {"model.xml": net.xml().encode()}
        if net.bin():
            files["model.bin"] = net.bin()
        return files

    def output_names(self) -> list[str]:
        name = self.name
        return [
            (p.names[0] if p.names else f"{name}:{k}") for k, p in enumerate(self.target.outputs)
        ]


class _OnnxWork(_Work):
    def __init__(
        self,
        graph: Graph,
        target: Layer,
        arrays: Mapping[str, Array],
        runtime: str,
        precision: str,
        atol: float | None,
        rtol: float | None,
    ) -> None:
        self.graph, self.target, self.runtime = graph, target, runtime
        self.convention = "onnx"
        self.precision, self.atol, self.rtol = precision, atol or 0.0, rtol or 0.0
        self.arrays = dict(arrays)
        self.notes = []
        self.kept = []
        self.dynamic = False
        self.label = target.label
        self.real_in = self._real_inputs()
        self.full = self._full()

    def _real_inputs(self) -> dict[str, Array]:
        from .cut import onnx_inputs

        names = onnx_inputs(self.graph, self.target)
        if self.runtime == "openvino":
            from ..oracles import bundle_rt

            return bundle_rt.converted_tensors(self.graph.path, names, self.arrays, self.precision)
        from ..frontends.onnx_model import read_model
        from ..oracles import onnxruntime_rt, refusals

        with refusals("onnxruntime", self.graph.path):
            found = onnxruntime_rt.probe_tensors(
                read_model(self.graph.path),
                [n for n in names if n not in self.arrays],
                self.arrays,
            )
        return {n: np.asarray(self.arrays[n]) if n in self.arrays else found[n] for n in names}

    def _full(self) -> Verdict:
        """The node inside the full model: the runtime's outputs and the report's verdict."""
        from .judge import expected_values, outputs_differ

        outs = [p.names[0] for p in self.target.outputs if p.names and p.names[0]]
        expected = expected_values(self.graph, self.label, list(self.real_in.values()), "onnx")
        if self.runtime == "openvino":
            from ..convert_report import convert_report
            from ..oracles import bundle_rt

            values = bundle_rt.converted_tensors(self.graph.path, outs, self.arrays, self.precision)
            runtime = [values[n] for n in outs if n in values]
            report = convert_report(
                self.graph, self.arrays, self.atol, self.rtol, [self.label], exact=False
            )
            node = report.nodes[0] if report.nodes else None
            text = node.divergence if node is not None else None
            same = node is not None and not node.missing and all(c.passed for c in node.outputs)
            if same and outputs_differ(runtime, expected, self.atol, self.rtol):
                # convert-report accepts a float mean summed in another order (within its
                # bound); the repro accepts the differences seen, and says so
                worst = max(
                    float(np.nanmax(np.abs(g.astype(np.float64) - w.astype(np.float64))))
                    for g, w in zip(runtime, expected, strict=False)
                    if g.shape == w.shape and g.size
                )
                self.atol = max(self.atol, 2 * worst)
                self.notes.append(
                    f"atol {self.atol:.3g}: openvino sums a window in another order than "
                    "irpool (convert-report's summation-order allowance)"
                )
            reproduces = not same
            return Verdict(
                reproduces, text if divergence_id(text) else None, text, runtime, expected
            )
        from ..compare import CompareOptions, compare_model
        from ..frontends.onnx_model import read_model
        from ..oracles import onnxruntime_rt, refusals
        from .judge import _verdict

        with refusals("onnxruntime", self.graph.path):
            found = onnxruntime_rt.probe_tensors(read_model(self.graph.path), outs, self.arrays)
        runtime = [found[n] for n in outs]
        options = CompareOptions("onnx", self.atol, self.rtol, exact=True)
        compared = compare_model(self.graph, self.arrays, [self.label], options)
        return _verdict(compared, runtime, expected, self.atol, self.rtol)

    def judge(self, scratch: str, arrays: Mapping[str, Array]) -> Verdict:
        from .cut import build_onnx
        from .judge import write_candidate

        try:
            data = build_onnx(self.graph, self.target, arrays)
        except Exception as e:  # onnx's own checks of a candidate
            return Verdict(False, error=str(e))
        path = write_candidate(scratch, "cand.onnx", data)
        return judge_onnx(
            path, self.label, arrays, self.runtime, self.precision, self.atol, self.rtol
        )

    def find_cut(self, scratch: str, grow: bool) -> tuple[Verdict, bool]:
        verdict = self.judge(scratch, self.real_in)
        return verdict, verdict.same_finding(self.full)

    def model_files(self, arrays: Mapping[str, Array]) -> dict[str, bytes]:
        from .cut import build_onnx

        return {"model.onnx": build_onnx(self.graph, self.target, arrays)}

    def output_names(self) -> list[str]:
        return [p.names[0] for p in self.target.outputs if p.names and p.names[0]]


def machine(isa: PluginIsa) -> dict[str, str]:
    """The CPU, and the instruction set `isa` of openvino's plugin that irpool modelled, as a
    bug report gives them."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "isa": isa.title,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }


def move_into_place(folder: str, outdir: str, force: bool) -> None:
    """Rename a finished bundle folder to `outdir`; an existing one (force) is replaced only
    once the new one is complete."""
    if os.path.lexists(outdir):
        old = tempfile.mkdtemp(prefix=".irpool-old-", dir=os.path.dirname(os.path.abspath(outdir)))
        os.rename(outdir, os.path.join(old, "bundle"))
        try:
            os.rename(folder, outdir)
        except OSError:
            os.rename(os.path.join(old, "bundle"), outdir)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(folder, outdir)


__all__ = ["SCHEMA", "ExtractOptions", "ExtractResult", "extract", "extract_layer", "first_cells"]
_unused: Callable[..., Any] = first_cells
