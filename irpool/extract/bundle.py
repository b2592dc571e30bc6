"""Writing a bundle: the small model, its inputs and expected outputs, repro.py, REPORT.md and
bundle.json, into a temporary folder beside the destination that is renamed into place once
complete (nothing half-written is left behind, an existing folder is replaced only with
force and only once the new one is whole)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .. import conventions
from ..schemas import document
from .judge import Verdict, divergence_id, expected_values, first_cells, to_float
from .repro import script

if TYPE_CHECKING:
    from . import ExtractResult, _Work

Array = npt.NDArray[Any]
REPRO_TIMEOUT = 300
"""Seconds the verifying run of repro.py may take (it imports the runtime)."""


def _npz(arrays: Mapping[str, Array]) -> tuple[bytes, list[str]]:
    """An .npz of the arrays (bfloat16 as its bits, uint16) and the names stored so."""
    bf16 = []
    plain = {}
    for name, a in arrays.items():
        if a.dtype.name == "bfloat16":
            plain[name] = np.ascontiguousarray(a).view(np.uint16)
            bf16.append(name)
        else:
            plain[name] = np.ascontiguousarray(a)
    buffer = io.BytesIO()
    np.savez(buffer, **plain)  # type: ignore[arg-type]
    return buffer.getvalue(), bf16


def _title(work: _Work, verdict: Verdict) -> str:
    op = _op(work)
    who = work.runtime
    if verdict.reproduces:
        did = divergence_id(verdict.divergence)
        tail = f" ({did})" if did else ""
        return (
            f'{who} computes {op} "{work.target.label}" differently from '
            f"{_meaning(work.convention)}{tail}"
        )
    return f'{who} computes {op} "{work.target.label}" as {_meaning(work.convention)} does'


def _op(work: _Work) -> str:
    from ..ops import REGISTRY

    version = (work.target.version or "").removeprefix("opset")
    selected = REGISTRY.lookup(work.target)
    return selected.spec.label if selected is not None else f"{work.target.type}-{version}"


def _meaning(convention: str) -> str:
    return {
        "openvino": "openvino's own rules (irpool's model of its CPU plugin)",
        "onnx": "the ONNX operator (onnxruntime, irpool's onnx convention)",
        "torch": "PyTorch (irpool's torch convention)",
        "tf": "TensorFlow (irpool's tf convention)",
    }.get(convention, convention)


def _array_text(a: Array, limit: int = 64) -> str:
    if a.size <= limit:
        return np.array2string(to_float(a), separator=", ", threshold=limit + 1)
    nz = np.argwhere(to_float(a) != 0)
    lines = [f"{list(a.shape)} {a.dtype}, {len(nz)} non-zero cell(s):"]
    for idx in nz[:limit]:
        i = tuple(int(v) for v in idx)
        lines.append(f"  {list(i)} = {to_float(a)[i].item()!r}")
    if len(nz) > limit:
        lines.append(f"  ... {len(nz) - limit} more")
    return "\n".join(lines)


def _attributes(work: _Work) -> dict[str, str]:
    if work.graph.format == "onnx":
        return {k: str(v) for k, v in work.target.attrs.items()}
    return {k: str(v) for k, v in work.target.data.items()}


def _convention_values(work: _Work, ins: list[Array]) -> dict[str, Array]:
    """irpool's outputs of the layer on its real input under every convention it takes."""
    from ..conventions import CONVENTIONS
    from ..errors import IrpoolError

    out: dict[str, Array] = {}
    label = work.target.name or work.target.label
    for name in CONVENTIONS:
        try:
            values = expected_values(work.graph, label, ins, name)
        except IrpoolError:
            continue
        for k, v in enumerate(values):
            out[f"{name}/output{k}"] = v
    return out


def write_bundle(
    work: _Work,
    verdict: Verdict,
    arrays: dict[str, Array],
    steps: list[str],
    standalone: bool,
    outdir: str,
    force: bool,
    verify: bool,
) -> ExtractResult:
    files, notes = _bundle_files(work, verdict, arrays)
    result = _result(
        work, verdict, arrays, path=outdir, steps=steps, standalone=standalone, notes=notes
    )
    parent = os.path.dirname(os.path.abspath(outdir))
    folder = tempfile.mkdtemp(prefix=".irpool-extract-", dir=parent)
    try:
        _write_folder(folder, files, result, arrays, verify)
        from . import move_into_place

        move_into_place(folder, outdir, force)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return result


def _bundle_files(
    work: _Work, verdict: Verdict, arrays: dict[str, Array]
) -> tuple[dict[str, bytes], list[str]]:
    """The bundle's files but REPORT.md and bundle.json, by path; the notes they leave."""
    from . import REAL_LIMIT

    names = work.output_names()
    files: dict[str, bytes] = dict(work.model_files(arrays))
    data, bf16_in = _npz(arrays)
    files["input.npz"] = data
    expected = {n: v for n, v in zip(names, verdict.expected, strict=False)}
    data, bf16_out = _npz(expected)
    files["expected.npz"] = data
    data, _ = _npz({n: v for n, v in zip(names, verdict.runtime, strict=False)})
    files["runtime_output.npz"] = data
    model_file = next(n for n in files if n.startswith("model.") and not n.endswith(".bin"))
    what = _title(work, verdict)
    files["repro.py"] = script(
        work.runtime,
        model_file,
        names[: len(verdict.expected)],
        what,
        work.atol,
        work.rtol,
        work.precision,
        [*bf16_in, *bf16_out],
        what,
    ).encode()
    notes = list(work.notes)
    source = _source_script(work, arrays, what)
    if source is not None:
        files["source.py"] = source.encode()
    real_size = sum(int(a.size) for a in work.real_in.values()) + sum(
        int(a.size) for a in work.full.runtime
    )
    if real_size <= REAL_LIMIT:
        files["real/input.npz"] = _npz(work.real_in)[0]
        files["real/full_model_output.npz"] = _npz(
            {n: v for n, v in zip(names, work.full.runtime, strict=False)}
        )[0]
        files["real/irpool.npz"] = _npz(_convention_values(work, _layer_ins(work)))[0]
    else:
        notes.append(
            f"the real input and outputs ({real_size} elements) are left out of the bundle "
            f"(more than {REAL_LIMIT}); the minimal input shows the same finding"
        )
    return files, notes


def _result(work: _Work, verdict: Verdict, arrays: dict[str, Array], **given: Any) -> ExtractResult:
    """What the bundle shows, from the work and the verdict (`given`: the fields the writer
    knows itself; its files, size and repro exit are filled in once written)."""
    from ..oracles import bundle_rt
    from . import ExtractResult, machine

    versions = bundle_rt.versions(work.runtime)
    return ExtractResult(
        **given,
        model=work.graph.path,
        layer=work.target.label,
        op=_op(work),
        format=work.graph.format,
        runtime=work.runtime,
        convention=work.convention,
        precision=work.precision,
        atol=work.atol,
        rtol=work.rtol,
        reproduces=verdict.reproduces,
        full_differs=work.full.reproduces,
        divergence=verdict.divergence or work.full.divergence,
        diagnosis=verdict.diagnosis,
        kept=list(work.kept),
        dynamic=work.dynamic,
        attributes=_attributes(work),
        real_shapes={k: list(a.shape) for k, a in work.real_in.items()},
        input_shapes={k: list(a.shape) for k, a in arrays.items()},
        cells=sum(int(a.size) for a in arrays.values()),
        nonzero=sum(int(np.count_nonzero(to_float(a))) for a in arrays.values()),
        first=first_cells(verdict.runtime, verdict.expected, work.atol, work.rtol),
        files=[],
        size=0,
        versions={**versions, **machine(work.isa)},
    )


def _write_folder(
    folder: str,
    files: dict[str, bytes],
    result: ExtractResult,
    arrays: Mapping[str, Array],
    verify: bool,
) -> None:
    """The files into `folder`, repro.py run once (with `verify`), then REPORT.md and
    bundle.json, which say what came of it."""
    for name, blob in files.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(blob)
    if verify:
        result.repro_exit, result.repro_output = _run_repro(folder)
    result.files = sorted([*files, "REPORT.md", "bundle.json"])
    report = report_text(result, arrays)
    with open(os.path.join(folder, "REPORT.md"), "w", encoding="utf-8") as handle:
        handle.write(report)
    result.size = _folder_size(folder)  # every file but bundle.json, which says it
    with open(os.path.join(folder, "bundle.json"), "w", encoding="utf-8") as handle:
        handle.write(json.dumps(to_json(result), indent=2, allow_nan=False) + "\n")
    os.chmod(folder, 0o777 & ~_umask())


def _source_script(work: _Work, arrays: Mapping[str, Array], title: str) -> str | None:
    """source.py for a one-input IR layer held to PyTorch's convention (see source.py)."""
    if (
        conventions.get(work.convention).framework != "torch"
        or work.graph.format != "ir"
        or len(arrays) != 1
    ):
        return None
    from .source import script as source_script
    from .source import torch_call

    ((name, x),) = arrays.items()
    call = torch_call(work.graph, work.target, x.ndim)
    if call is None:
        return None
    return source_script(call, name, work.atol or 1e-6, work.rtol or 1e-5, title)


def _umask() -> int:
    from ..files import UMASK

    return UMASK


def _layer_ins(work: _Work) -> list[Array]:
    full_ins = getattr(work, "full_ins", None)
    if full_ins:
        return list(full_ins)
    return list(work.real_in.values())


def _folder_size(folder: str) -> int:
    total = 0
    for root, _, names in os.walk(folder):
        for n in names:
            total += os.path.getsize(os.path.join(root, n))
    return total


def _run_repro(folder: str) -> tuple[int, str]:
    """Run repro.py once, as a maintainer would; its exit code and output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRPOOL_")}
    done = subprocess.run(
        [sys.executable, os.path.join(folder, "repro.py")],
        capture_output=True,
        text=True,
        timeout=REPRO_TIMEOUT,
        env=env,
        cwd=folder,
        check=False,
    )
    text = (done.stdout + done.stderr).strip()
    return done.returncode, text


def report_text(r: ExtractResult, arrays: Mapping[str, Array]) -> str:
    """REPORT.md: a bug report ready to paste."""
    lines = [
        *_report_head(r),
        *_report_environment(r),
        *_report_layer(r),
        *_report_reproduce(r, arrays),
        *_report_first(r),
        *_report_files(r),
    ]
    lines += ["", "## Check it with irpool", "", "```sh"]
    model = next((f for f in r.files if f in ("model.xml", "model.onnx")), "model.xml")
    if r.format == "onnx" and r.runtime == "openvino":
        lines.append(f"irpool convert-report {model} -i input.npz")
    else:
        lines.append(f"irpool compare {model} -i input.npz --convention {r.convention}")
    lines += ["```", ""]
    for note in r.notes:
        lines.append(f"Note: {note}")
    lines.append("")
    lines.append("Written by irpool extract.")
    return "\n".join(lines) + "\n"


def _report_head(r: ExtractResult) -> list[str]:
    """The title, what the bundle shows, the divergence and irpool's diagnosis."""
    from ..divergences import BY_ID

    did = r.divergence_id
    head = f'# {r.runtime}: {r.op} "{r.layer}" ' + (
        "differs from the expected values" if r.reproduces else "computes the expected values"
    )
    lines = [head, ""]
    if r.reproduces:
        lines.append(
            f"{r.runtime} computes this {r.op} layer otherwise than {_meaning(r.convention)} "
            f"on the input below; `repro.py` shows it with nothing but {r.runtime} and numpy."
        )
    else:
        lines.append(
            f"{r.runtime} computes this layer as {_meaning(r.convention)} does; `repro.py` "
            "exits 0 and can sit in a regression suite."
        )
    if did:
        title = BY_ID[did].title if did in BY_ID else ""
        lines += ["", f"**Divergence {did}**: {title}" if title else f"**Divergence**: {did}"]
    if r.diagnosis:
        lines += ["", f"irpool's diagnosis: {r.diagnosis}"]
    return lines


def _report_environment(r: ExtractResult) -> list[str]:
    lines = ["", "## Environment", ""]
    for key in ("openvino", "onnxruntime", "numpy", "python", "os", "cpu", "isa"):
        if key in r.versions:
            name = {"isa": "instruction set (openvino's CPU plugin)", "cpu": "CPU"}.get(key, key)
            lines.append(f"- {name}: {r.versions[key]}")
    if r.runtime == "openvino":
        lines.append(f"- device CPU, INFERENCE_PRECISION_HINT={r.precision}")
    return lines


def _report_layer(r: ExtractResult) -> list[str]:
    """The layer's attributes, and its input inside the full model and in the bundle."""
    lines = ["", "## The layer", ""]
    lines.append(f'`{r.op}` "{r.layer}" of `{os.path.basename(r.model)}`, attributes as written:')
    lines += ["", "```"]
    lines += [f'{k}="{v}"' for k, v in r.attributes.items()] or ["(none)"]
    lines += ["```", ""]
    shapes = ", ".join(f"{k} {v}" for k, v in r.real_shapes.items())
    small = ", ".join(f"{k} {v}" for k, v in r.input_shapes.items())
    lines.append(f"Input inside the full model: {shapes}; in this bundle: {small}.")
    if r.kept:
        lines.append(
            f"The layer alone does not show it; the small model keeps: {', '.join(r.kept)}."
        )
    return lines


def _report_reproduce(r: ExtractResult, arrays: Mapping[str, Array]) -> list[str]:
    """How to run repro.py (and its output here), then the minimal input."""
    lines = ["", "## Reproduce", "", "```sh"]
    lines.append(f"pip install {r.runtime} numpy")
    lines.append("python repro.py   # exit 1 while it reproduces, 0 once fixed")
    lines += ["```", ""]
    if r.repro_output:
        lines += ["Its output here:", "", "```", r.repro_output, "```", ""]
    lines += ["## Minimal input", ""]
    for k, a in arrays.items():
        lines += [f"`{k}` ({a.dtype.name} {list(a.shape)}):", "", "```", _array_text(a), "```", ""]
    if r.steps:
        lines.append(
            "Shrunk from the real input while the finding persisted: " + "; ".join(r.steps) + "."
        )
        lines.append("")
    return lines


def _report_first(r: ExtractResult) -> list[str]:
    if not r.first:
        return []
    lines = [
        "## First differing cells",
        "",
        f"| output | index | {r.runtime} | expected |",
        "|---|---|---|---|",
    ]
    for c in r.first:
        if "index" in c:
            lines.append(f"| {c['output']} | {c['index']} | {c['runtime']!r} | {c['expected']!r} |")
        else:
            lines.append(
                f"| {c['output']} | shape | {c['runtime_shape']} | {c['expected_shape']} |"
            )
    lines.append("")
    return lines


def _report_files(r: ExtractResult) -> list[str]:
    """What each file of the bundle holds."""
    lines = ["## Files", ""]
    for name, what in (
        ("model.xml", "the small model (IR; model.bin holds its constants)"),
        ("model.onnx", "the small model (the node alone, with its opset)"),
        ("input.npz", "the minimal input, by the model's input names"),
        ("expected.npz", f"what the layer should give: {_meaning(r.convention)}"),
        ("runtime_output.npz", f"what {r.runtime} gives on the minimal input"),
        (
            "source.py",
            "the layer as the PyTorch op it came from, in a tiny module, and openvino's "
            "conversion of it (needs torch, openvino and numpy)",
        ),
        ("real/input.npz", "the input the runtime gave the layer inside the full model"),
        ("real/full_model_output.npz", f"{r.runtime}'s output of the layer inside the full model"),
        ("real/irpool.npz", "irpool's output of the layer on the real input under each convention"),
    ):
        if name in r.files:
            lines.append(f"- `{name}`: {what}")
    return lines


def to_json(r: ExtractResult) -> dict[str, Any]:
    from . import SCHEMA

    def safe(v: Any) -> Any:
        if isinstance(v, float) and not np.isfinite(v):
            return str(v)
        return v

    return {
        **document(SCHEMA, r.model),
        "bundle": r.path,
        "layer": r.layer,
        "op": r.op,
        "format": r.format,
        "runtime": r.runtime,
        "convention": r.convention,
        "inference_precision_hint": r.precision if r.runtime == "openvino" else None,
        "atol": r.atol,
        "rtol": r.rtol,
        "full_model_differs": r.full_differs,
        "reproduces": r.reproduces,
        "consistent": r.consistent,
        "divergence_id": r.divergence_id,
        "divergence": r.divergence,
        "diagnosis": r.diagnosis,
        "standalone": r.standalone,
        "kept": r.kept,
        "dynamic": r.dynamic,
        "attributes": r.attributes,
        "real_input_shapes": r.real_shapes,
        "input_shapes": r.input_shapes,
        "cells": r.cells,
        "nonzero_cells": r.nonzero,
        "minimization": r.steps,
        "first_differing": [{k: safe(v) for k, v in c.items()} for c in r.first],
        "repro_exit": r.repro_exit,
        "files": r.files,
        "bytes": r.size,
        "versions": r.versions,
        "notes": r.notes,
    }


_: Sequence[str] = ()
