"""The judged family workloads of issue 32, timed as a user would run a model: the same
single-layer IR file given to openvino (read, compiled once on the CPU plugin with one thread,
f32 inference precision, latency hint, the input tensor set once, `infer()` timed with no
arguments) and to `irpool.compile_model(path, threads=1)` (prepared once, the call timed),
interleaved in one process; every irpool output compared with openvino's bit for bit.

    python bench/models.py [--json FILE] [--only NAME ...] [--rounds N] [--seconds S]

Three clocks per call: wall time, the calling thread's CPU time, and the process's CPU time
(every thread of it: openvino's infer() may hand work to its own threads); on a loaded machine
the wall time of openvino's infer() grows far more than its CPU time (waiting for its executor
to be scheduled), so the CPU-time ratios are the ones to read there.

Peers: `ov1` (openvino, one thread), `cm1` (compile_model, the compiled path where numba is
installed), `cm1np` (compile_model, path="numpy": the numpy core, plans prepared).  Ratios are
the median over rounds of irpool's time over ov1's time in the same round (timing.paired),
and `min`: irpool's fastest call's thread CPU time over ov1's fastest.

Run it from the checkout to be measured (it imports that checkout's irpool; IRPOOL_REPO
names another)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, os.environ.get("IRPOOL_REPO", str(HERE.parent)))  # this checkout's irpool

import peers  # noqa: E402
from timing import cpu_times, geomean, paired, same_bits  # noqa: E402
from workloads import BY_NAME, JUDGED_F16, JUDGED_F32, Workload  # noqa: E402

import irpool  # noqa: E402


@dataclass(frozen=True)
class ModelWorkload:
    name: str
    op: str
    shape: tuple[int, ...]
    axes: tuple[int, ...] = ()
    out: tuple[int, ...] = ()
    dtype: str = "float32"

    def input(self) -> np.ndarray:
        rng = np.random.default_rng(0)
        if self.dtype == "uint8":
            return rng.integers(0, 256, self.shape, dtype=np.uint8)
        return rng.standard_normal(self.shape).astype(self.dtype)


JUDGED_WINDOWED = JUDGED_F32 + JUDGED_F16

JUDGED = (
    ModelWorkload("mean_2048x7x7", "ReduceMean", (1, 2048, 7, 7), (2, 3)),
    ModelWorkload("mean_1280x7x7", "ReduceMean", (1, 1280, 7, 7), (2, 3)),
    ModelWorkload("mean_96x56x56", "ReduceMean", (1, 96, 56, 56), (2, 3)),
    ModelWorkload("max_512x14x14", "ReduceMax", (1, 512, 14, 14), (2, 3)),
    ModelWorkload("sum_c_256x28x28", "ReduceSum", (1, 256, 28, 28), (1,)),
    ModelWorkload("l2_512x14x14", "ReduceL2", (1, 512, 14, 14), (2, 3)),
    ModelWorkload("adaptive_avg_7x7", "AdaptiveAvgPool", (1, 512, 14, 14), out=(7, 7)),
    ModelWorkload("adaptive_avg_1x1", "AdaptiveAvgPool", (1, 1024, 13, 13), out=(1, 1)),
    ModelWorkload("adaptive_max_6x6", "AdaptiveMaxPool", (1, 256, 13, 13), out=(6, 6)),
)
"""ReduceMean over H, W of ResNet-50's, MobileNetV2's and a 96-channel head; ReduceMax over H,
W; ReduceSum over the channels; ReduceL2 over H, W; AdaptiveAvgPool-8 (VGG's 14x14 -> 7x7, a
global 13x13 -> 1x1) and AdaptiveMaxPool-8 (AlexNet's 13x13 -> 6x6, indices unread)."""

CHAINS = (
    ModelWorkload("u8_convert_avg_mul", "ConvertAvgMultiply", (1, 64, 56, 56), dtype="uint8"),
    ModelWorkload("max_mul_relu", "MaxMultiplyRelu", (1, 64, 112, 112)),
    ModelWorkload("f16_convert_max_mul", "ConvertMaxMultiply", (1, 64, 56, 56), dtype="float16"),
    ModelWorkload("fq_avg_fq", "FqAvgFq", (1, 64, 56, 56)),
    ModelWorkload("fq_mean_fq", "FqMeanFq", (1, 2048, 7, 7), (2, 3)),
)
"""Pooling layers with the glue around them that runs per element (`--chains`): a u8 image
converted to f32, a 3x3/2 average (pads excluded) and a per-channel scale; ResNet's stem max
pool scaled and rectified; an f16 input converted to f32, max-pooled 2x2/2 and scaled by a
scalar; a quantized average (FakeQuantize, 256 levels, before and after a 2x2/2 AvgPool); a
quantized ResNet-50 head (a u8 FakeQuantize from 0, as after a ReLU, a ReduceMean over H, W,
a FakeQuantize)."""

WINDOWED = tuple(BY_NAME[name] for name in JUDGED_WINDOWED)
"""The bench's judged windowed workloads (bench/workloads.py: the float32 ones where openvino
runs its jit kernels, and the float16 ones) as one-layer IRs: AvgPool-1 or MaxPool-8 as
converters emit them (peers.openvino_model); avg7_s1 among them."""

BF16 = tuple(
    dataclasses.replace(BY_NAME[name], name=f"bf16_{name}", dtype="bfloat16")
    for name in ("avg2x2", "resnet_max", "f16_avg", "f16_max")
)
"""bfloat16 one-layer IRs (`--bf16`): the same layers on a bf16 Parameter (the plugin keeps
bf16 on a CPU without AVX512_BF16 too: it widens, pools and rounds at the Result)."""

Any_Workload = ModelWorkload | Workload


def openvino_model(w: ModelWorkload) -> Any:
    import openvino as ov
    from openvino import opset1, opset4, opset8

    types = {"float32": ov.Type.f32, "float16": ov.Type.f16, "uint8": ov.Type.u8}
    x = opset1.parameter(list(w.shape), types[w.dtype], name="x")
    if w in CHAINS:
        return ov.Model([opset1.result(_chain(w, x).output(0))], [x], w.name)
    node: Any
    axes = opset1.constant(np.array(w.axes or (0,), np.int64))
    size = opset1.constant(np.array(w.out or (1,), np.int64))
    if w.op == "ReduceMean":
        node = opset1.reduce_mean(x, axes, True)
    elif w.op == "ReduceMax":
        node = opset1.reduce_max(x, axes, True)
    elif w.op == "ReduceSum":
        node = opset1.reduce_sum(x, axes, True)
    elif w.op == "ReduceL2":
        node = opset4.reduce_l2(x, axes, True)
    elif w.op == "AdaptiveAvgPool":
        node = opset8.adaptive_avg_pool(x, size)
    elif w.op == "AdaptiveMaxPool":
        node = opset8.adaptive_max_pool(x, size, index_element_type="i32")
    else:
        node = opset1.avg_pool(x, [1, 1], [3, 3], [3, 3], [7, 7], True)
    return ov.Model([opset1.result(node.output(0))], [x], w.name)


def _chain(w: ModelWorkload, x: Any) -> Any:
    """The layers of a chain workload after its Parameter."""
    import openvino as ov
    from openvino import opset1, opset8

    channels = w.shape[1]
    scale = np.linspace(0.5, 1.5, channels, dtype=np.float32).reshape(1, channels, 1, 1)
    if w.op == "ConvertAvgMultiply":
        f = opset1.convert(x, ov.Type.f32)
        pool = opset1.avg_pool(f, [2, 2], [1, 1], [1, 1], [3, 3], True, "floor")
        return opset1.multiply(pool, opset1.constant(scale))
    if w.op == "MaxMultiplyRelu":
        pool = opset8.max_pool(x, [2, 2], [1, 1], [1, 1], [1, 1], [3, 3], "floor")
        scaled = opset1.multiply(pool.output(0), opset1.constant(np.float32(-0.75)))
        return opset1.relu(scaled)
    if w.op == "ConvertMaxMultiply":
        f = opset1.convert(x, ov.Type.f32)
        pool = opset8.max_pool(f, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2], "floor")
        return opset1.multiply(pool.output(0), opset1.constant(np.float32(0.125)))
    if w.op == "FqMeanFq":
        zero, top = opset1.constant(np.float32(0.0)), opset1.constant(np.float32(3.0))
        fq = opset1.fake_quantize(x, zero, top, zero, top, 256)
        mean = opset1.reduce_mean(fq, opset1.constant(np.array(w.axes, np.int64)), True)
        half = opset1.constant(np.float32(1.5))
        return opset1.fake_quantize(mean, zero, half, zero, half, 256)
    lo, hi = opset1.constant(np.float32(-2.0)), opset1.constant(np.float32(2.0))
    fq = opset1.fake_quantize(x, lo, hi, lo, hi, 256)
    pool = opset1.avg_pool(fq, [2, 2], [0, 0], [0, 0], [2, 2], True, "floor")
    return opset1.fake_quantize(pool, lo, hi, lo, hi, 256)


def write(w: Any_Workload, folder: Path) -> Path:
    import openvino as ov

    path = folder / f"{w.name}.xml"
    model = (
        openvino_model(w) if isinstance(w, ModelWorkload) else peers.openvino_model(w, w.input())
    )
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def openvino_peer(path: Path, x: np.ndarray) -> tuple[Callable[[], Any], Callable[[], Any]]:
    import openvino as ov

    core = ov.Core()
    config = {
        "INFERENCE_PRECISION_HINT": "f32",
        "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_NUM_THREADS": 1,
    }
    compiled = core.compile_model(core.read_model(str(path)), "CPU", config)
    request = compiled.create_infer_request()
    request.set_input_tensor(peers.input_tensor(x))

    def values() -> np.ndarray:
        out = request.get_output_tensor(0)
        data = np.array(out.data)
        if out.element_type == ov.Type.bf16:  # bf16 data comes as float16-typed bits
            from irpool.model import bfloat16

            data = data.view(np.uint16).view(bfloat16())
        return data

    return request.infer, values


def irpool_peer(
    path: Path, x: np.ndarray, kernel: str
) -> tuple[Callable[[], Any], Callable[[], Any], str]:
    f = irpool.compile_model(str(path), threads=1, path=kernel)
    held: list[Any] = [None]
    name = f.outputs[0]

    def run() -> None:
        held[0] = f(x)

    return run, lambda: held[0][name], f.path


def interleave(
    runs: dict[str, Callable[[], Any]], rounds: int, seconds: float
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, list[float]], float, int]:
    """Every run once per round in a fresh random order: (wall, thread CPU, process CPU times,
    the CPU share other processes used, rounds)."""
    import gc
    import os
    import random
    import time

    names = list(runs)
    clocks: list[dict[str, list[float]]] = [{n: [] for n in names} for _ in range(3)]
    order = random.Random(0)
    gc.collect()
    gc.disable()
    try:
        busy0, own0 = cpu_times()
        start = time.perf_counter()
        done = 0
        while done < rounds or time.perf_counter() - start < seconds:
            order.shuffle(names)
            for n in names:
                fn = runs[n]
                p0, c0, t0 = time.process_time(), time.thread_time(), time.perf_counter()
                fn()
                t1, c1, p1 = time.perf_counter(), time.thread_time(), time.process_time()
                clocks[0][n].append(t1 - t0)
                clocks[1][n].append(c1 - c0)
                clocks[2][n].append(p1 - p0)
            done += 1
        elapsed = time.perf_counter() - start
        busy1, own1 = cpu_times()
    finally:
        gc.enable()
    others = max(0.0, (busy1 - busy0) - (own1 - own0)) / (elapsed * (os.cpu_count() or 1))
    return clocks[0], clocks[1], clocks[2], others, done


def bench_one(w: Any_Workload, folder: Path, rounds: int, seconds: float) -> dict[str, Any]:
    x = w.input()
    path = write(w, folder)
    ov_run, ov_values = openvino_peer(path, x)
    runs: dict[str, Callable[[], Any]] = {"ov1": ov_run}
    values: dict[str, Callable[[], Any]] = {"ov1": ov_values}
    paths = {}
    for name, kernel in (("cm1", "auto"), ("cm1np", "numpy")):
        run, get, used = irpool_peer(path, x, kernel)
        runs[name], values[name], paths[name] = run, get, used
    for run in runs.values():
        run()
    ref = values["ov1"]()
    checks = {
        n: "bit-identical" if same_bits(values[n](), ref) else "DIFFERS" for n in runs if n != "ov1"
    }
    wall, cpu, process, busy, done = interleave(runs, rounds, seconds)
    return {
        "workload": w.name,
        "op": w.op if isinstance(w, ModelWorkload) else w.reduce,
        "shape": list(w.shape),
        "rounds": done,
        "median_ms": {n: statistics.median(t) * 1e3 for n, t in wall.items()},
        "ratio_vs_ov1": paired(wall),
        "cpu_ratio_vs_ov1": paired(cpu),
        "process_cpu_ratio_vs_ov1": paired(process),
        "cpu_median_ms": {n: statistics.median(t) * 1e3 for n, t in cpu.items()},
        "cpu_min_ratio_vs_ov1": {n: min(t) / min(cpu["ov1"]) for n, t in cpu.items()},
        "paths": paths,
        "checks": checks,
        "other_cpu_share": round(busy, 3),
    }


BASES = ("ratio_vs_ov1", "cpu_ratio_vs_ov1", "process_cpu_ratio_vs_ov1", "cpu_min_ratio_vs_ov1")
"""wall, thread CPU and process CPU: medians over rounds of the paired ratios; cpu_min: the
fastest call's thread CPU time over ov1's fastest (the least disturbed call of each)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--only", nargs="*", help="workload names")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument(
        "--windowed", action="store_true", help="the windowed workloads as one-layer IRs too"
    )
    parser.add_argument(
        "--chains", action="store_true", help="pooling layers with their per-element glue too"
    )
    parser.add_argument("--bf16", action="store_true", help="bfloat16 one-layer IRs too")
    args = parser.parse_args(argv)
    chosen = [
        *JUDGED,
        *(WINDOWED if args.windowed else ()),
        *(CHAINS if args.chains else ()),
        *(BF16 if args.bf16 else ()),
    ]
    chosen = [w for w in chosen if not args.only or w.name in args.only]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for w in chosen:
            r = bench_one(w, Path(tmp), args.rounds, args.seconds)
            results.append(r)
            q, c = r["ratio_vs_ov1"], r["cpu_ratio_vs_ov1"]
            pc = r["process_cpu_ratio_vs_ov1"]
            lo = r["cpu_min_ratio_vs_ov1"]
            print(
                f"{w.name:18} ov1 {r['median_ms']['ov1']:7.3f} ms (cpu "
                f"{r['cpu_median_ms']['ov1']:6.3f})  cm1 wall {q['cm1']:5.2f} cpu {c['cm1']:5.2f} "
                f"process {pc['cm1']:5.2f} min {lo['cm1']:5.2f} ({r['paths']['cm1']})  "
                f"cm1np cpu {c['cm1np']:6.2f}  "
                f"busy {r['other_cpu_share']:.2f}  {r['checks']}",
                flush=True,
            )
    summary = {}
    groups = (
        ("", {w.name for w in JUDGED}),
        ("windowed ", set(JUDGED_WINDOWED)),
        ("chains ", {w.name for w in CHAINS}),
        ("bf16 ", {w.name for w in BF16}),
    )
    for label, names in groups:
        group = [r for r in results if r["workload"] in names]
        for peer in ("cm1", "cm1np"):
            for basis in BASES:
                ratios = [r[basis][peer] for r in group]
                if ratios:
                    key = f"{label}{peer} {basis}"
                    summary[key] = {"geomean": geomean(ratios), "max": max(ratios)}
                    print(f"{key}: geomean {geomean(ratios):.2f}, max {max(ratios):.2f}")
    if args.json:
        from importlib.metadata import version

        meta = {
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": platform.processor() or platform.machine(),
            "cpu": _cpu_name(),
            "python": platform.python_version(),
            "versions": {p: version(p) for p in ("numpy", "openvino", "numba")},
            "method": __doc__,
        }
        Path(args.json).write_text(
            json.dumps({"meta": meta, "results": results, "summary": summary}, indent=1)
        )
    return 0


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    sys.exit(main())
