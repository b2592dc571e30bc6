"""Time irpool's kernel core against openvino, onnxruntime and torch on the standard workloads.

    python bench/bench.py [--only NAME,...] [--rounds N] [--json FILE]

All peers run interleaved in one process on the same input (numpy.random.default_rng(0),
standard normal); each peer's output is checked against openvino's.  The report gives medians
and ratios against openvino on one thread ("ov1"), never absolute times alone, plus the share of
CPU time other processes used while timing, and the peak extra memory of one irpool call.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# idle worker threads of the peers must not spin while another peer is timed
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from irpool.geometry import PoolParams, plan
from irpool.kernel import pool


@dataclass(frozen=True)
class Workload:
    name: str
    reduce: str
    shape: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: int
    pad: int
    dtype: str = "float32"
    exclude_pad: bool = True
    ceil: bool = False
    dilation: int = 1
    indices: bool = False

    def params(self) -> PoolParams:
        n = len(self.kernel)
        return PoolParams(
            op=self.name,
            reduce="max" if self.reduce == "max" else "mean",
            window=self.kernel,
            strides=(self.stride,) * n,
            dilations=(self.dilation,) * n,
            pads=((self.pad, self.pad),) * n,
            rounding="ceil" if self.ceil else "floor",
            count_pad=not self.exclude_pad,
            indices=self.indices,
        )


WORKLOADS = (
    Workload("resnet_max", "max", (1, 64, 112, 112), (3, 3), 2, 1),
    Workload("avg2x2", "mean", (1, 256, 56, 56), (2, 2), 2, 0),
    Workload("gap7", "mean", (1, 2048, 7, 7), (7, 7), 1, 0),
    Workload("incep_avg_excl", "mean", (1, 192, 28, 28), (3, 3), 1, 1),
    Workload("squeeze_max_ceil", "max", (1, 256, 54, 54), (3, 3), 2, 0, ceil=True),
    Workload("avg3d", "mean", (1, 32, 16, 56, 56), (3, 3, 3), 2, 1, exclude_pad=False),
    Workload("batch_max", "max", (32, 64, 56, 56), (3, 3), 2, 1),
    Workload("avg1d", "mean", (8, 256, 4000), (3,), 2, 1),
    Workload("large_avg", "mean", (1, 64, 1024, 1024), (3, 3), 2, 1),
    Workload("f16_avg", "mean", (1, 64, 112, 112), (3, 3), 2, 1, dtype="float16"),
    Workload("segnet_idx", "max", (1, 64, 224, 224), (2, 2), 2, 0, indices=True),
    Workload("dil_max", "max", (1, 128, 64, 64), (3, 3), 1, 2, dilation=2),
    Workload("f16_max", "max", (1, 64, 112, 112), (3, 3), 2, 1, dtype="float16"),
    Workload("max3d", "max", (1, 32, 16, 56, 56), (3, 3, 3), 2, 1),
    Workload("avg7_s1", "mean", (1, 64, 56, 56), (7, 7), 1, 3),
    Workload("resnet_max_b8", "max", (8, 64, 112, 112), (3, 3), 2, 1),
)


@dataclass
class Peer:
    name: str
    run: Callable[[], Any]
    times: list[float] = field(default_factory=list)


def openvino_peer(w: Workload, x: np.ndarray, threads: int | None) -> Callable[[], Any] | None:
    try:
        import openvino as ov
        from openvino import opset1, opset8, opset16
    except ImportError:
        return None
    et = ov.Type.f16 if w.dtype == "float16" else ov.Type.f32
    p = opset1.parameter(list(x.shape), et)
    n = len(w.kernel)
    s, pads, k = [w.stride] * n, [w.pad] * n, list(w.kernel)
    rounding = "ceil" if w.ceil else "floor"
    if w.reduce == "max":
        node = opset8.max_pool(p, s, [w.dilation] * n, pads, pads, k, rounding)
        outputs = [node.output(0), node.output(1)] if w.indices else [node.output(0)]
    else:
        # dilations written out: openvino 2026.4 crashes compiling an AvgPool-16 without them
        node = opset16.avg_pool(
            p, s, pads, pads, k, w.exclude_pad, rounding, dilations=[w.dilation] * n
        )
        outputs = [node.output(0)]
    model = ov.Model([opset1.result(o) for o in outputs], [p])
    cfg: dict[str, Any] = {"INFERENCE_PRECISION_HINT": "f32"}
    if threads:
        cfg["INFERENCE_NUM_THREADS"] = threads
    compiled = ov.Core().compile_model(model, "CPU", cfg)
    request = compiled.create_infer_request()

    def run() -> Any:
        return request.infer({0: x}, share_inputs=True, share_outputs=True)[compiled.output(0)]

    return run


def onnxruntime_peer(w: Workload, x: np.ndarray, threads: int) -> Callable[[], Any] | None:
    try:
        from irpool.oracles import onnxruntime_rt
    except ImportError:
        return None
    if w.dtype != "float32" or (w.reduce == "mean" and w.dilation != 1):
        return None
    try:
        n = len(w.kernel)
        attrs: dict[str, Any] = {
            "kernel_shape": list(w.kernel),
            "strides": [w.stride] * n,
            "pads": [w.pad] * (2 * n),
        }
        if w.ceil:
            attrs["ceil_mode"] = 1
        if w.reduce == "max":
            attrs["dilations"] = [w.dilation] * n
            op, opset = "MaxPool", 12
        else:
            attrs["count_include_pad"] = 0 if w.exclude_pad else 1
            op, opset = "AveragePool", 11
        model = onnxruntime_rt.node_model(op, attrs, [x], opset, n_outputs=2 if w.indices else 1)
        sess = onnxruntime_rt.session(model, threads=threads, spin=False)
    except Exception:
        return None
    feeds = {"in0": x}
    return lambda: sess.run(None, feeds)[0]


def torch_peer(w: Workload, x: np.ndarray, threads: int) -> Callable[[], Any] | None:
    try:
        import torch
    except ImportError:
        return None
    n = len(w.kernel)
    if w.dtype != "float32" or w.ceil is None:
        return None
    tx = torch.from_numpy(x)
    if w.reduce == "max":
        fn = getattr(torch.nn.functional, f"max_pool{n}d")
        kwargs: dict[str, Any] = {
            "dilation": w.dilation,
            "ceil_mode": w.ceil,
            "return_indices": w.indices,
        }
    else:
        if w.dilation != 1:
            return None
        fn = getattr(torch.nn.functional, f"avg_pool{n}d")
        kwargs = {"ceil_mode": w.ceil, "count_include_pad": not w.exclude_pad}

    def run() -> Any:
        torch.set_num_threads(threads)
        out = fn(tx, w.kernel, w.stride, w.pad, **kwargs)
        return out[0] if isinstance(out, tuple) else out

    return run


def cpu_busy() -> tuple[float, float]:
    """(total busy CPU seconds of the machine, CPU seconds of this process)."""
    with open("/proc/stat") as handle:
        fields = [float(v) for v in handle.readline().split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    busy = (sum(fields) - fields[3] - fields[4]) / ticks
    t = os.times()
    return busy, t.user + t.system


def peak_extra_memory(x: np.ndarray, p: Any) -> tuple[int, int]:
    """(peak bytes allocated during one call beyond its output, output bytes)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    values, indices = pool(x, p, threads=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    out_bytes = values.nbytes + (indices.nbytes if indices is not None else 0)
    return peak - base - out_bytes, out_bytes


def bench(w: Workload, rounds: int, min_seconds: float) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(w.shape).astype(w.dtype)
    p = plan(w.params(), x.shape, "openvino")
    peers = [
        Peer("irpool1", lambda: pool(x, p, threads=1)[0]),
        Peer("irpool", lambda: pool(x, p)[0]),
    ]
    for name, make in (
        ("ov1", lambda: openvino_peer(w, x, 1)),
        ("ov", lambda: openvino_peer(w, x, None)),
        ("ort1", lambda: onnxruntime_peer(w, x, 1)),
        ("ort2", lambda: onnxruntime_peer(w, x, 2)),
        ("torch1", lambda: torch_peer(w, x, 1)),
        ("torch2", lambda: torch_peer(w, x, 2)),
    ):
        fn = make()
        if fn is not None:
            peers.append(Peer(name, fn))
    reference = None
    checks: dict[str, str] = {}
    for peer in list(peers):
        try:
            out = np.asarray(peer.run())
        except Exception as e:  # the peer cannot run this workload (torch's pad limits, ...)
            print(f"  {w.name}: {peer.name} skipped: {str(e).splitlines()[0][:80]}")
            peers.remove(peer)
            continue
        if peer.name == "ov1":
            reference = out
    if reference is not None:
        for peer in peers:
            out = np.asarray(peer.run(), dtype=np.float64)
            ok = out.shape == reference.shape and np.allclose(
                out, reference.astype(np.float64), rtol=1e-3, atol=1e-3, equal_nan=True
            )
            checks[peer.name] = "ok" if ok else "DIFFERS"
    busy0, own0 = cpu_busy()
    wall0 = time.perf_counter()
    done = 0
    while done < rounds or time.perf_counter() - wall0 < min_seconds:
        for peer in peers:
            t0 = time.perf_counter()
            peer.run()
            peer.times.append(time.perf_counter() - t0)
        done += 1
        if done >= rounds * 20:
            break
    wall = time.perf_counter() - wall0
    busy1, own1 = cpu_busy()
    others = max(0.0, (busy1 - busy0) - (own1 - own0)) / (wall * (os.cpu_count() or 1))
    extra, out_bytes = peak_extra_memory(x, p)  # one single-threaded call
    medians = {peer.name: statistics.median(peer.times) * 1e3 for peer in peers}
    return {
        "workload": w.name,
        "rounds": done,
        "median_ms": medians,
        "ratio_vs_ov1": {k: v / medians["ov1"] for k, v in medians.items()}
        if "ov1" in medians
        else {},
        "checks": checks,
        "other_cpu_share": round(others, 3),
        "peak_extra_bytes": extra,
        "output_bytes": out_bytes,
        "input_bytes": x.nbytes,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated workload names")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--min-seconds", type=float, default=1.0)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    chosen = [w for w in WORKLOADS if not args.only or w.name in args.only.split(",")]
    results = []
    header = (
        f"{'workload':18} {'irpool1':>9} {'irpool':>9} {'ov1':>9} {'ov':>9} {'ort1':>9} "
        f"{'torch1':>9} {'irp1/ov1':>9} {'irp/ov':>7} {'torch1/irp1':>11} {'mem extra':>10} "
        f"{'busy':>5}"
    )
    print(header)
    for w in chosen:
        r = bench(w, args.rounds, args.min_seconds)
        results.append(r)
        m = r["median_ms"]

        def cell(name: str, m: dict[str, float] = m) -> str:
            return f"{m[name]:9.3f}" if name in m else f"{'-':>9}"

        ratio = m["irpool1"] / m["ov1"] if "ov1" in m else float("nan")
        ratio_ov = m["irpool"] / m["ov"] if "ov" in m else float("nan")
        vs_torch = m["torch1"] / m["irpool1"] if "torch1" in m else float("nan")
        extra = r["peak_extra_bytes"] / 2**20
        bad = [k for k, v in r["checks"].items() if v != "ok"]
        print(
            f"{w.name:18} {cell('irpool1')} {cell('irpool')} {cell('ov1')} {cell('ov')} "
            f"{cell('ort1')} {cell('torch1')} {ratio:9.2f} {ratio_ov:7.2f} {vs_torch:11.2f} "
            f"{extra:8.1f}MB {r['other_cpu_share']:5.2f}"
            + (f"  output differs: {bad}" if bad else "")
        )
    for mine, theirs in (("irpool1", "ov1"), ("irpool", "ov")):
        ratios = [
            r["median_ms"][mine] / r["median_ms"][theirs]
            for r in results
            if theirs in r["median_ms"]
        ]
        if ratios:
            geo = float(np.exp(np.mean(np.log(ratios))))
            print(f"geometric mean {mine}/{theirs} over {len(ratios)} workloads: {geo:.2f}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
