"""A finding's bundle: one folder a maintainer of a runtime can run without irpool's fuzzer.

    model.xml, model.bin   the case as an OpenVINO IR (when openvino is one of the sides)
    model.onnx             the case as an ONNX node (onnxruntime, openvino's ONNX front end)
    input.npy              the input (bfloat16 stored as its uint16 bits: input.bf16.npy)
    expected.npz           what each side computed: <runtime>, and irpool_<runtime>
    meta.json              the case (irpool.fuzz Spec), the verdict, versions, hypothesis' blob
    repro.py               runs the sides again; exit 1 while the disagreement reproduces,
                           0 once it is gone

A bundle is written to a temporary folder and renamed into place, so a folder is never
half-written; an existing bundle of the same name is replaced only by the same finding.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from importlib import resources
from typing import Any

import numpy as np

from . import realize
from .judge import Finding, Verdict
from .spec import Spec, values

# the text of a finding's repro.py (a program of its own that imports the runtimes), a file
# beside this module, ready for str.format
REPRO = resources.files(__package__).joinpath("repro.py.txt").read_text(encoding="utf-8")


def _write_input(folder: str, x: np.ndarray) -> None:
    if x.dtype.name == "bfloat16":
        np.save(os.path.join(folder, "input.bf16.npy"), x.view(np.uint16))
    else:
        np.save(os.path.join(folder, "input.npy"), x)


def _storable(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint16) if a.dtype.name == "bfloat16" else a


def write(
    root: str,
    name: str,
    verdict: Verdict,
    finding: Finding,
    blob: str | None,
    versions: dict[str, str],
) -> str:
    """Write the bundle of `finding` as root/name (atomically); its path."""
    spec = verdict.spec
    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{name}.", dir=root)
    try:
        node = _write_models(tmp, spec, finding)
        allowance = _write_expected(tmp, verdict, finding)
        meta = _meta(name, verdict, finding, node, allowance)
        meta["hypothesis_blob"] = blob
        meta["versions"] = versions
        with open(os.path.join(tmp, "meta.json"), "w") as f:
            json.dump(meta, f, indent=2, default=str)
            f.write("\n")
        with open(os.path.join(tmp, "repro.py"), "w") as f:
            f.write(
                REPRO.format(
                    name=name,
                    category=finding.category,
                    runtimes=" and ".join(finding.runtimes),
                    text=finding.text.replace(chr(34) * 3, chr(39) * 3).replace(chr(92), "/"),
                )
            )
        final = os.path.join(root, name)
        if os.path.isdir(final):
            shutil.rmtree(final)
        os.replace(tmp, final)
        return final
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _write_models(folder: str, spec: Spec, finding: Finding) -> Any:
    """The input and the case's models (IR, ONNX node, openvino's conversion of the node when
    it is a side of the finding) into `folder`; the ONNX node (None without one)."""
    x = values(spec)
    _write_input(folder, x)
    if realize.ir_expressible(spec):
        realize.write_ir(spec, os.path.join(folder, "model.xml"))
    node = realize.onnx_node(spec)
    if node is not None:
        from ..oracles import onnxruntime_rt

        try:
            model = onnxruntime_rt.node_model(node.op, node.attrs, [x], node.opset)
            with open(os.path.join(folder, "model.onnx"), "wb") as f:
                f.write(model.SerializeToString())
        except Exception:
            pass
    if "openvino-onnx" in finding.runtimes and node is not None:
        from ..oracles import direct

        direct.save_converted(
            os.path.join(folder, "model.onnx"), os.path.join(folder, "converted.xml")
        )
    return node


def _write_expected(folder: str, verdict: Verdict, finding: Finding) -> float:
    """expected.npz (each side's first output, and irpool's for it); the widest finite
    allowance of the finding's sides."""
    expected: dict[str, np.ndarray] = {}
    allowance = 0.0
    for runtime, side in verdict.sides.items():
        key = runtime.replace("-", "_")
        if side.outputs:
            expected[key] = _storable(side.outputs[0])
        if side.irpool:
            expected[f"irpool_{key}"] = _storable(side.irpool[0])
        if runtime in finding.runtimes and side.allowance is not None:
            with np.errstate(invalid="ignore"):
                finite = side.allowance[np.isfinite(side.allowance)]
            allowance = max(allowance, float(finite.max()) if finite.size else 0.0)
    np.savez(os.path.join(folder, "expected.npz"), *(), **expected)  # type: ignore[arg-type]
    return allowance


def _meta(
    name: str, verdict: Verdict, finding: Finding, node: Any, allowance: float
) -> dict[str, Any]:
    """meta.json but the hypothesis blob and the versions (added last, in that order)."""
    spec = verdict.spec
    call = realize.torch_call(spec)
    tcall = realize.tf_call(spec)
    return {
        "name": name,
        "spec": spec.to_json(),
        "label": spec.label(),
        "finding": {
            "category": finding.category,
            "runtimes": list(finding.runtimes),
            "ids": list(finding.ids),
            "text": finding.text,
        },
        "sides": {
            r: {"refused": s.refused, "irpool_refused": s.irpool_refused, "agrees": s.agrees}
            for r, s in verdict.sides.items()
        },
        "onnx_node": None
        if node is None
        else {"op": node.op, "attrs": node.attrs, "opset": node.opset},
        "tf_call": None
        if tcall is None
        else {
            "op_type": tcall.op_type,
            "ksize": list(tcall.ksize),
            "strides": list(tcall.strides),
            "padding": tcall.padding,
        },
        "torch_call": None if call is None else {"function": call.function, "kwargs": call.kwargs},
        "allowance": allowance,
    }


EXTRACT_CONVENTION = {"openvino": "openvino", "onnxruntime": "onnx", "torch": "torch"}


def add_extract(folder: str, finding: Finding, spec: Spec) -> dict[str, Any]:
    """The finding also as an `irpool extract` bundle (folder/extract): the side's model held to
    the convention it should compute, minimised by extract; what came of it (meta.json keeps
    it).  An irpool bug of openvino or onnxruntime: the model against irpool's convention for
    that runtime; a new divergence with openvino on one side: the IR against irpool's
    convention for the other runtime (which reproduces it).  Other findings: none (the
    bundle's own repro.py covers them)."""
    from ..extract import extract

    runtimes = finding.runtimes
    model = convention = runtime = None
    if finding.category == "irpool-bug" and runtimes[0] == "openvino":
        model, convention = "model.xml", "openvino"
    elif finding.category == "irpool-bug" and runtimes[0] == "onnxruntime":
        model, runtime = "model.onnx", "onnxruntime"
    elif finding.category == "new" and "openvino" in runtimes:
        other = next(r for r in runtimes if r != "openvino")
        model, convention = "model.xml", EXTRACT_CONVENTION.get(other)
    if model is None or (model == "model.xml" and convention is None):
        return {"written": False, "why": "no extract bundle for this kind of finding"}
    path = os.path.join(folder, model)
    if not os.path.exists(path):
        return {"written": False, "why": f"no {model}"}
    x = values(spec)
    feeds = {"x" if model == "model.xml" else "in0": x}
    try:
        result = extract(
            path,
            "pool" if model == "model.xml" else "out0",
            os.path.join(folder, "extract"),
            feeds,
            convention=convention,
            runtime=runtime,
        )
    except Exception as e:
        return {"written": False, "why": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"}
    return {
        "written": True,
        "path": "extract",
        "reproduces": result.reproduces,
        "repro_exit": result.repro_exit,
    }


def same_spec(spec: Spec, folder: str) -> bool:
    try:
        with open(os.path.join(folder, "meta.json")) as f:
            return Spec.from_json(json.load(f)["spec"]) == spec
    except (OSError, ValueError, KeyError):
        return False
