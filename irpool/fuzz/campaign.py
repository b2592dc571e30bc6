"""A fuzz campaign: hypothesis draws cases, every runtime and irpool run them, the verdicts are
counted, and each new divergence and irpool bug is shrunk and written as a bundle.

The campaign runs in chunks: one hypothesis run of `chunk` examples each, seeded from (seed,
worker, chunk index), until the budget is spent; so a campaign is reproducible from its seed (the
same cases in the same order; how many chunks fit the budget depends on the machine).  A
disagreement that is new or an irpool bug makes the test function raise an exception of its own
class per finding signature, so hypothesis shrinks each one separately and keeps its minimal
example in the example database of DIR/hypothesis; the next campaign on the same DIR replays
those first (resumable).  A finding is shrunk once per campaign: later occurrences are counted.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import OracleMissing
from .judge import Finding, Verdict, Workspace, judge
from .spec import Spec

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Options:
    outdir: str
    ops: tuple[str, ...] = ("window", "global")
    runtimes: tuple[str, ...] = ("openvino", "onnxruntime", "torch", "openvino-onnx")
    budget: float = 60.0
    seed: int = 0
    workers: int = 1
    chunk: int = 20
    shrink_grace: float | None = None
    """Seconds past the budget a pending shrink may take (default: a quarter of the budget,
    at least 10 s)."""


@dataclass
class Stats:
    """What one worker (or the whole campaign, merged) saw."""

    cases: int = 0
    runtimes: dict[str, dict[str, int]] = field(default_factory=dict)
    divergences: dict[str, dict[str, Any]] = field(default_factory=dict)
    findings: dict[str, dict[str, Any]] = field(default_factory=dict)
    """signature -> {category, runtimes, cases, text, minimal: (spec, verdict), blob}"""
    chunks: int = 0
    errors: list[str] = field(default_factory=list)

    def add(self, verdict: Verdict) -> None:
        self.cases += 1
        for name, side in verdict.sides.items():
            r = self.runtimes.setdefault(
                name,
                {"ran": 0, "refused": 0, "irpool_refused": 0, "reproduced": 0, "irpool_bug": 0},
            )
            r["ran"] += 1
            if side.refused:
                r["refused"] += 1
            if side.irpool_refused:
                r["irpool_refused"] += 1
            if side.agrees:
                r["reproduced"] += 1
        seen: set[str] = set()
        for f in verdict.findings:
            if f.category == "explained":
                for i in f.ids:
                    d = self.divergences.setdefault(i, {"cases": 0, "pairs": {}, "samples": []})
                    pair = "/".join(f.runtimes)
                    d["pairs"][pair] = d["pairs"].get(pair, 0) + 1
                    if i not in seen:
                        d["cases"] += 1
                        seen.add(i)
                    if len(d["samples"]) < 3 and all(
                        s["spec"] != verdict.spec.to_json() for s in d["samples"]
                    ):
                        d["samples"].append(
                            {
                                "label": verdict.spec.label(),
                                "runtimes": list(f.runtimes),
                                "ids": list(f.ids),
                                "text": f.text,
                                "spec": verdict.spec.to_json(),
                            }
                        )
            else:
                if f.category == "irpool-bug":
                    self.runtimes[f.runtimes[0]]["irpool_bug"] += 1
                entry = self.findings.setdefault(
                    f.signature,
                    {
                        "category": f.category,
                        "runtimes": list(f.runtimes),
                        "cases": 0,
                        "text": f.text,
                        "minimal": None,
                        "blob": None,
                        "first": (verdict.spec, verdict, f),
                    },
                )
                entry["cases"] += 1

    def merge(self, other: Stats) -> None:
        self.cases += other.cases
        self.chunks += other.chunks
        self.errors += other.errors
        for name, r in other.runtimes.items():
            mine = self.runtimes.setdefault(name, dict.fromkeys(r, 0))
            for k, v in r.items():
                mine[k] = mine.get(k, 0) + v
        for i, d in other.divergences.items():
            mine_d = self.divergences.setdefault(i, {"cases": 0, "pairs": {}, "samples": []})
            mine_d["cases"] += d["cases"]
            for p, n in d["pairs"].items():
                mine_d["pairs"][p] = mine_d["pairs"].get(p, 0) + n
            for s in d["samples"]:
                if len(mine_d["samples"]) < 3:
                    mine_d["samples"].append(s)
        for sig, f in other.findings.items():
            mine_f = self.findings.get(sig)
            if mine_f is None:
                self.findings[sig] = f
                continue
            mine_f["cases"] += f["cases"]
            if mine_f.get("first") is None:
                mine_f["first"] = f.get("first")
            if f["minimal"] is not None and (
                mine_f["minimal"] is None or _size(f["minimal"][0]) < _size(mine_f["minimal"][0])
            ):
                mine_f["minimal"], mine_f["blob"] = f["minimal"], f["blob"]


def _size(spec: Spec) -> tuple[int, int, int]:
    n = 1
    for d in spec.shape:
        n *= d
    return (n, len(spec.specials), sum(spec.window))


class _FindingError(Exception):
    """Raised in the hypothesis test for a finding to shrink (one subclass per signature)."""


_CLASSES: dict[str, type[_FindingError]] = {}


def _finding_class(signature: str) -> type[_FindingError]:
    cls = _CLASSES.get(signature)
    if cls is None:
        digest = hashlib.sha1(signature.encode()).hexdigest()[:10]
        cls = type(f"Finding_{digest}", (_FindingError,), {"signature": signature})
        _CLASSES[signature] = cls
    return cls


def chunk_seed(seed: int, worker: int, chunk: int) -> int:
    digest = hashlib.sha256(f"irpool-fuzz:{seed}:{worker}:{chunk}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def run_worker(options: Options, worker: int, tick: Callable[[float], None] | None = None) -> Stats:
    """One worker's share of the campaign (in this process)."""
    from hypothesis import given
    from hypothesis.database import DirectoryBasedExampleDatabase

    from . import _load
    from .space import specs

    _load(options.runtimes)  # before the clock starts: importing torch alone takes seconds
    stats = Stats()
    ws = Workspace(os.path.join(options.outdir, "work", f"worker-{worker}"))
    db = DirectoryBasedExampleDatabase(os.path.join(options.outdir, "hypothesis"))
    cache: OrderedDict[str, Verdict] = OrderedDict()
    shrunk: set[str] = set()
    start = time.monotonic()
    deadline = start + options.budget
    grace = options.shrink_grace
    if grace is None:
        grace = max(10.0, options.budget / 4)
    pending: dict[str, tuple[Spec, Verdict, Finding]] = {}
    strategy = specs(options.ops)

    def verdict_of(spec: Spec) -> Verdict | None:
        key = spec.dumps()
        found = cache.get(key)
        if found is not None:
            cache.move_to_end(key)
            return found
        now = time.monotonic()
        if now > deadline and (not pending or now > deadline + grace):
            return None
        v = judge(spec, options.runtimes, ws)
        cache[key] = v
        if len(cache) > 4000:
            cache.popitem(last=False)
        stats.add(v)
        if tick is not None:
            tick(min(options.budget, time.monotonic() - start))
        return v

    def test(spec: Spec) -> None:
        v = verdict_of(spec)
        if v is None:
            return
        for f in v.reportable:
            if f.signature in shrunk:
                continue
            pending[f.signature] = (spec, v, f)
            raise _finding_class(f.signature)(f"{f.signature}: {f.text}")

    index = 0
    while time.monotonic() < deadline:
        failures = _run_chunk(options, worker, index, given(strategy)(test), db, stats)
        for failure in failures:
            sig = getattr(type(failure), "signature", "")
            got = pending.get(sig)
            if got is None:
                continue
            spec, v, f = got
            entry = stats.findings[sig]
            entry["minimal"] = (spec, v, f)
            entry["blob"] = _blob(failure)
            shrunk.add(sig)
        index += 1
        stats.chunks = index
    return stats


def _run_chunk(
    options: Options, worker: int, index: int, test: Any, db: Any, stats: Stats
) -> list[BaseException]:
    """One hypothesis run of the chunk `index` (the example database replayed first in the
    first chunk); the findings it raised (other errors are noted in `stats`)."""
    from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
    from hypothesis.errors import HypothesisException

    phases = [Phase.generate, Phase.shrink]
    if index == 0:
        phases.insert(0, Phase.reuse)
    run = settings(
        database=db,
        max_examples=options.chunk,
        deadline=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        report_multiple_bugs=True,
        print_blob=True,
        derandomize=False,
    )(seed(chunk_seed(options.seed, worker, index))(test))
    # the database key is the test's: one key for every chunk and campaign
    failures: list[BaseException] = []
    try:
        run()
    except _FindingError as e:
        failures.append(e)
    except BaseExceptionGroup as group:  # several findings in one chunk
        found, rest = group.split(_FindingError)
        if found is not None:
            failures.extend(_leaves(found))
        if rest is not None:
            stats.errors.append(f"chunk {index}: {rest!r}"[:500])
    except (HypothesisException, OracleMissing) as e:
        if isinstance(e, OracleMissing):
            raise
        stats.errors.append(f"chunk {index}: {type(e).__name__}: {e}"[:500])
    return failures


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for e in group.exceptions:
        if isinstance(e, BaseExceptionGroup):
            out += _leaves(e)
        else:
            out.append(e)
    return out


def _blob(e: BaseException) -> str | None:
    for note in getattr(e, "__notes__", []) or []:
        text = str(note)
        if "@reproduce_failure(" in text:
            return text[text.index("@reproduce_failure(") :].strip()
    return None


def _worker_entry(args: tuple[Options, int, Any]) -> Stats:
    options, worker, queue = args
    tick = (lambda elapsed: queue.put(elapsed)) if queue is not None else None
    stats = run_worker(options, worker, tick)
    # verdicts keep arrays only for the minimal examples
    return stats


def run_campaign(options: Options, progress: Progress | None = None) -> Stats:
    """Every worker's share, merged (workers > 1: one process each)."""
    total = Stats()
    done = [0]
    budget = max(1, round(options.budget))

    def tick(elapsed: float) -> None:
        # the bar runs over the budget's seconds (a worker's, from when its runtimes are
        # loaded; held below the end while findings shrink); the label counts the cases
        done[0] += 1
        if progress is not None:
            progress(min(budget - 1, int(elapsed)), budget, f"{done[0]} cases")

    if options.workers <= 1:
        total.merge(run_worker(options, 0, tick))
        if progress is not None:
            progress(budget, budget, f"{done[0]} cases")
        return total
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        queue = manager.Queue()
        with ProcessPoolExecutor(options.workers, mp_context=ctx) as pool:
            futures = [
                pool.submit(_worker_entry, (options, w, queue)) for w in range(options.workers)
            ]
            while not all(f.done() for f in futures):
                try:
                    n = queue.get(timeout=0.5)
                except Exception:
                    continue
                tick(float(n))
            while not queue.empty():
                tick(float(queue.get()))
            for f in futures:
                total.merge(f.result())
    if progress is not None:
        progress(budget, budget, f"{done[0]} cases")
    return total
