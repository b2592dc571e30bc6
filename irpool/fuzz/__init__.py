"""`irpool fuzz`: differential fuzzing of the pooling ops across openvino, onnxruntime, PyTorch
and openvino's ONNX front end, every disagreement sorted against the divergence table.

    spec      one case as plain data (the op, its input's type and shape, how its values are made)
    space     the hypothesis strategies (hypothesis is the `fuzz` extra, imported lazily)
    realize   a case in each runtime's words (IR layer, ONNX node, PyTorch call)
    judge     each runtime and irpool's convention for it on one case; the verdict
    campaign  chunks of hypothesis runs, workers, the example database, shrinking
    bundle    a finding's repro folder; report: the summary as text, JSON and HTML

From Python: `irpool.fuzz.fuzz(outdir, budget=60, seed=0)` returns the summary document.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import OracleMissing, UsageError

Progress = Callable[[int, int, str], None]

OPS = ("window", "global")
RUNTIMES = ("openvino", "onnxruntime", "torch", "openvino-onnx", "tf", "openvino-torch")
MARKER = "campaign.json"
"""The file that marks a folder as a campaign's (a non-empty folder without it is refused)."""


def require_hypothesis() -> None:
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        raise OracleMissing("irpool fuzz needs hypothesis; pip install 'irpool[fuzz]'") from None


def installed_runtimes() -> tuple[str, ...]:
    """The sides whose runtimes import here (quietly: a missing one is left out); TensorFlow
    only when asked for (--runtimes ...,tf: importing it takes seconds and a GB per worker)."""
    import importlib.util

    have = {
        name: importlib.util.find_spec(name) is not None
        for name in ("openvino", "onnxruntime", "onnx", "torch")
    }
    out = []
    if have["openvino"]:
        out.append("openvino")
    if have["onnxruntime"] and have["onnx"]:
        out.append("onnxruntime")
    if have["torch"]:
        out.append("torch")
    if have["openvino"] and have["onnx"]:
        out.append("openvino-onnx")
    return tuple(out)


def _check_outdir(outdir: str) -> None:
    parent = os.path.dirname(os.path.abspath(outdir))
    if not os.path.isdir(parent):
        raise UsageError(f"-o {outdir}: its parent folder {parent} does not exist")
    if os.path.exists(outdir) and not os.path.isdir(outdir):
        raise UsageError(f"-o {outdir}: not a folder")
    if (
        os.path.isdir(outdir)
        and os.listdir(outdir)
        and not os.path.exists(os.path.join(outdir, MARKER))
    ):
        raise UsageError(
            f"-o {outdir}: a non-empty folder that is not an irpool fuzz campaign's; "
            "give a new or empty folder (or an earlier campaign's, to resume it)"
        )


def fuzz(
    outdir: str,
    ops: Sequence[str] = OPS,
    runtimes: Sequence[str] | None = None,
    budget: float = 60.0,
    seed: int = 0,
    workers: int = 1,
    chunk: int = 20,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run a campaign into `outdir` (created, or an earlier campaign's to resume); the summary
    document (schema irpool.fuzz/1), also written as DIR/summary.json, .txt and .html, with a
    bundle under DIR/findings for each new divergence and irpool bug."""
    import json

    from ..files import atomic_write_text
    from .campaign import Options
    from .report import _versions, to_json, write_bundles, write_summary

    require_hypothesis()
    bad = [o for o in ops if o not in OPS]
    if bad or not ops:
        raise UsageError(f"--ops: unknown {', '.join(bad) or '(none)'}; known: {', '.join(OPS)}")
    chosen = tuple(runtimes) if runtimes is not None else installed_runtimes()
    bad = [r for r in chosen if r not in RUNTIMES]
    if bad:
        raise UsageError(f"--runtimes: unknown {', '.join(bad)}; known: {', '.join(RUNTIMES)}")
    if not chosen:
        raise OracleMissing(
            "no runtime to fuzz: pip install 'irpool[openvino]' and 'irpool[onnx]' (and torch)"
        )
    if budget <= 0 or workers < 1 or chunk < 1:
        raise UsageError("--budget, --workers and the chunk size must be positive")
    _check_outdir(outdir)
    os.makedirs(outdir, exist_ok=True)
    options = Options(outdir, tuple(ops), chosen, float(budget), int(seed), int(workers), chunk)
    atomic_write_text(
        os.path.join(outdir, MARKER),
        json.dumps(
            {"seed": seed, "ops": list(ops), "runtimes": list(chosen), "budget": budget}, indent=2
        )
        + "\n",
    )
    # the runtimes are imported before the clock starts (torch alone takes seconds)
    _load(chosen)
    start = time.monotonic()
    from .campaign import run_campaign

    stats = run_campaign(options, progress)
    seconds = time.monotonic() - start
    versions = _versions(chosen)
    write_bundles(options, stats, versions)
    doc = to_json(options, stats, seconds, versions)
    write_summary(options, doc)
    import shutil

    shutil.rmtree(os.path.join(outdir, "work"), ignore_errors=True)  # the workers' scratch
    return doc


def _load(runtimes: tuple[str, ...]) -> None:
    from ..oracles import onnxruntime_rt, openvino_rt, torch_rt

    if any(r.startswith("openvino") for r in runtimes):
        openvino_rt.load()
    if "onnxruntime" in runtimes or "openvino-onnx" in runtimes:
        onnxruntime_rt.load()
    if "torch" in runtimes or "openvino-torch" in runtimes:
        torch_rt.load()
    if "tf" in runtimes:
        from ..oracles import tensorflow_rt

        tensorflow_rt.load()
