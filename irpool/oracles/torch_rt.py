"""PyTorch as an oracle of the conversion audit: load a program, convert it with openvino's
PyTorch front end, find each pooling op's layer in the converted model, and run torch's own
computation of the op on the input openvino gave that layer.

Measured with torch 2.13 and openvino 2026.4.1 (docs/debugging-a-converted-model.md):

* A `.pt2` file (torch.export) is a zip holding `archive_format`; a TorchScript file holds
  `data.pkl` or `constants.pkl`.
* openvino converts an ExportedProgram through its FX decoder, which first runs torch's
  decompositions: the graph it converts is the decoder's `pt_module`, whose node names (not the
  saved program's) name the IR's layers (`<node>/<aten op>/<type>`) and tensors (`<node>:0`).
  Each decomposed node keeps `torch_fn` (the Python-level call it came from: a 1-D pool is
  unsqueeze, a 2-D pool and squeeze; an LPPool a chain around avg_pool), `nn_module_stack` (the
  module path), `from_node` (back to the saved program's node) and `stack_trace` (the user's
  line).  Grouping by `torch_fn` gives one unit per torch call.
* A TorchScript module converts through openvino's TorchScript decoder (which traces a live
  module exactly as `ov.convert_model(module, example_input=...)` does); the IR keeps each
  value's debug name as a tensor name, except on model outputs (found by position instead).
  Running a copy of the inlined graph that also returns every pool node's inputs and outputs
  gives torch's values, the run-time arguments included.
* Without `input=` every dim converts dynamic; a loaded TorchScript module's inputs have no
  element type (the CPU plugin then refuses the model): shapes and types are always given.
* `divisor_override` does not convert ("do not support divisor_override input"): refused
  before openvino sees it.  openvino's FX decoder logs a traceback for each op it cannot take out
  of torch's decomposition table: harmless, silenced.
"""

from __future__ import annotations

import inspect
import zipfile
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..errors import InputError, Where
from ..source_ops import DeclaredInputs, Traced
from . import openvino_rt, refusals, unreadable
from .torch_base import as_tensor, load, quiet, to_numpy, version
from .torch_export import trace_export
from .torch_script import trace_script

Array = npt.NDArray[Any]
Kind = Literal["export", "torchscript", "module"]


@dataclass
class Program(DeclaredInputs):
    """A torch model to audit, and what it says of its inputs."""

    kind: Kind
    obj: Any
    """The ExportedProgram, ScriptModule or torch.nn.Module."""
    path: str
    route: str = "trace"
    """For a live module: 'trace' (what ov.convert_model(module, example_input=...) does) or
    'export' (torch.export, as convert_model(..., dynamo=True) does)."""


def file_kind(path: str) -> Kind | None:
    """'export' for a torch.export archive (.pt2), 'torchscript' for a torch.jit.save file, None
    for anything else."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = {n.rsplit("/", 1)[-1] for n in archive.namelist()}
    except (OSError, zipfile.BadZipFile):
        return None
    if "archive_format" in names or any(n.startswith("serialized_") for n in names):
        return "export"
    if names & {"data.pkl", "constants.pkl"}:
        return "torchscript"
    return None


def open_file(path: str) -> Program:
    """A .pt2 program or a TorchScript file, loaded (the file may run code: audit only models
    you trust, as with torch.load)."""
    kind = file_kind(path)
    if kind is None:
        raise InputError(
            "not a torch.export archive (.pt2, torch.export.save) or a TorchScript file "
            "(torch.jit.save)",
            Where(file=path),
        )
    torch = load()
    with quiet(), unreadable("torch", path):
        obj = torch.export.load(path) if kind == "export" else torch.jit.load(path).eval()
    return from_object(obj, path)


def from_object(obj: Any, path: str = "<module>", route: str = "trace") -> Program:
    """An ExportedProgram, a ScriptModule or a live torch.nn.Module as a Program."""
    torch = load()
    if isinstance(obj, torch.export.ExportedProgram):
        names, shapes, dtypes = _exported_inputs(obj)
        return Program(
            "export", obj, path, input_names=names, input_shapes=shapes, input_dtypes=dtypes
        )
    if isinstance(obj, torch.jit.ScriptModule):
        args = [a.name for a in obj.forward.schema.arguments][1:]
        return Program("torchscript", obj, path, **_untyped(args))
    if isinstance(obj, torch.nn.Module):
        names = [
            p.name
            for p in inspect.signature(obj.forward).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        if route not in ("trace", "export"):
            raise InputError(f"route {route!r}; expected trace or export")
        return Program("module", obj.eval(), path, route, **_untyped(names))
    raise InputError(
        f"{type(obj).__name__} is not a torch.nn.Module, ScriptModule or ExportedProgram"
    )


F32 = np.dtype(np.float32)


def _untyped(names: list[str]) -> dict[str, Any]:
    """Inputs of unknown shapes, taken as float32 (a ScriptModule's or a module's)."""
    n = len(names)
    return {"input_names": names, "input_shapes": [None] * n, "input_dtypes": [F32] * n}


def _exported_inputs(
    ep: Any,
) -> tuple[list[str], list[tuple[int, ...] | None], list[np.dtype[Any]]]:
    names = list(ep.graph_signature.user_inputs)
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    shapes: list[tuple[int, ...] | None] = []
    dtypes: list[np.dtype[Any]] = []
    for name in names:
        value = nodes[name].meta.get("val") if name in nodes else None
        dims = getattr(value, "shape", None)
        if dims is not None and all(isinstance(d, int) for d in dims):
            shapes.append(tuple(int(d) for d in dims))
        else:
            shapes.append(None)
        dtype = getattr(value, "dtype", None)
        dtypes.append(_numpy_dtype(dtype) if dtype is not None else np.dtype(np.float32))
    return names, shapes, dtypes


def _numpy_dtype(dtype: Any) -> np.dtype[Any]:
    torch = load()
    return np.dtype(str(torch.empty((), dtype=dtype).numpy().dtype))


def trace(program: Program, arrays: list[Array]) -> Traced:
    """Convert the program with openvino and pair each pooling op with its layer, with torch's
    and openvino's values on the same input."""
    torch = load()
    openvino_rt.load()
    with quiet():
        if program.kind == "export":
            traced = trace_export(program.obj, arrays, program.path, "torch.export program")
        elif program.kind == "torchscript":
            traced = trace_script(program.obj, arrays, program.path, live=False)
        elif program.route == "export":
            tensors = tuple(torch.from_numpy(np.ascontiguousarray(x)) for x in arrays)
            with refusals("torch", program.path):
                ep = torch.export.export(program.obj, tensors)
            traced = trace_export(ep, arrays, program.path, "live module through torch.export")
        else:
            traced = trace_script(program.obj, arrays, program.path, live=True)
    traced.inputs = {n: tuple(x.shape) for n, x in zip(program.input_names, arrays, strict=False)}
    return traced


# -- adaptive and global pools of an IR (convert-report on an IR of PyTorch origin) -----------


def pooling_like(
    family: str, reduce: str, x: Array, argument: list[int], keep: bool
) -> tuple[str, list[Array]]:
    """(the torch call, its outputs) of an adaptive pool of output size `argument`, or of a
    mean/amax over the axes `argument`, on x."""
    torch = load()
    functional = torch.nn.functional
    t = as_tensor(torch, x)
    with torch.no_grad():
        if family == "adaptive":
            n = len(argument)
            name = f"adaptive_{'avg' if reduce == 'mean' else 'max'}_pool{n}d"
            if reduce == "mean":
                return f"F.{name}(x, {argument})", [
                    to_numpy(getattr(functional, name)(t, argument))
                ]
            values, indices = getattr(functional, name)(t, argument, return_indices=True)
            return f"F.{name}(x, {argument}, return_indices=True)", [
                to_numpy(values),
                to_numpy(indices),
            ]
        if reduce == "mean":
            return f"x.mean(dim={argument}, keepdim={keep})", [
                to_numpy(t.mean(dim=argument, keepdim=keep))
            ]
        return f"x.amax(dim={argument}, keepdim={keep})", [
            to_numpy(t.amax(dim=argument, keepdim=keep))
        ]


__all__ = [
    "Program",
    "file_kind",
    "from_object",
    "load",
    "open_file",
    "pooling_like",
    "quiet",
    "trace",
    "version",
]
