"""How the cost of a pooling layer grows with its input: each workload family at four input
sizes, timed the fair way (bench.py's method), plotted on log-log axes.

    python bench/bench.py --scaling [--peers ov1,np1,nb1] [--json FILE] [--plot FILE.png]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
from dataclasses import replace
from typing import Any

import peers
from timing import interleave, paired
from workloads import Workload

FAMILIES: dict[str, tuple[Workload, list[tuple[int, ...]]]] = {
    "max 3x3 stride 2 (resnet_max)": (
        Workload("max3x3s2", "max", (1, 64, 112, 112), (3, 3), 2, 1),
        [(1, 64, s, s) for s in (28, 56, 112, 224)],
    ),
    "avg 3x3 stride 2, pads excluded": (
        Workload("avg3x3s2", "mean", (1, 64, 112, 112), (3, 3), 2, 1),
        [(1, 64, s, s) for s in (28, 56, 112, 224)],
    ),
    "avg 7x7 stride 1 (avg7_s1)": (
        Workload("avg7s1", "mean", (1, 64, 56, 56), (7, 7), 1, 3),
        [(1, 64, s, s) for s in (14, 28, 56, 112)],
    ),
    "global avg 7x7 (gap7)": (
        Workload("gap", "mean", (1, 2048, 7, 7), (7, 7), 1, 0),
        [(1, c, 7, 7) for c in (256, 512, 1024, 2048)],
    ),
    "float16 avg 3x3 stride 2 (f16_avg)": (
        Workload("f16avg", "mean", (1, 64, 112, 112), (3, 3), 2, 1, dtype="float16"),
        [(1, 64, s, s) for s in (28, 56, 112, 224)],
    ),
    "max 3x3x3 stride 2 (max3d)": (
        Workload("max3d", "max", (1, 32, 16, 56, 56), (3, 3, 3), 2, 1),
        [(1, 32, d, s, s) for d, s in ((4, 14), (8, 28), (16, 56), (32, 112))],
    ),
}
DEFAULT = "ov1,np1,nb1"


def measure(names: list[str], rounds: int, min_seconds: float) -> list[dict[str, Any]]:
    rows = []
    for family, (base, shapes) in FAMILIES.items():
        for shape in shapes:
            w = replace(base, shape=shape)
            x = w.input()
            made = {}
            for name in names:
                try:
                    made[name] = peers.PEERS[name](w, x)
                except Exception as e:
                    print(f"  {family} {shape}: {name} skipped: {peers.reason(e)}")
            wall, cpu, busy, done = interleave(
                {n: p.run for n, p in made.items()}, rounds, min_seconds
            )
            row = {
                "family": family,
                "shape": list(shape),
                "input_elements": math.prod(shape),
                "median_ms": {n: statistics.median(t) * 1e3 for n, t in wall.items()},
                "cpu_median_ms": {n: statistics.median(t) * 1e3 for n, t in cpu.items()},
                "ratio_vs_ov1": paired(wall),
                "other_cpu_share": round(busy, 3),
                "rounds": done,
            }
            rows.append(row)
            print(
                f"{family:38} {shape!s:22} "
                + "  ".join(f"{n} {v:8.3f} ms" for n, v in row["median_ms"].items())
                + f"  busy {busy:.2f}",
                flush=True,
            )
    return rows


def plot(rows: list[dict[str, Any]], names: list[str], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    families = list(dict.fromkeys(r["family"] for r in rows))
    cols = 3
    fig, axes = plt.subplots(
        math.ceil(len(families) / cols), cols, figsize=(13, 4.2 * math.ceil(len(families) / cols))
    )
    for ax, family in zip(axes.flat, families, strict=False):
        chosen = [r for r in rows if r["family"] == family]
        for name in names:
            points = [
                (r["input_elements"], r["cpu_median_ms"][name])
                for r in chosen
                if name in r["cpu_median_ms"]
            ]
            if points:
                xs, ys = zip(*points, strict=True)
                ax.plot(xs, ys, marker="o", label=peers.LEGEND.get(name, name))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title(family, fontsize=10)
        ax.set_xlabel("input elements")
        ax.set_ylabel("ms per call (CPU time)")
        ax.grid(which="both", alpha=0.3)
    for ax in list(axes.flat)[len(families) :]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(names))
    fig.suptitle("Cost against input size (log-log; one thread)")
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    fig.savefig(path, dpi=100)


def main(args: argparse.Namespace) -> int:
    names = (args.peers or DEFAULT).split(",")
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    rows = measure(names, args.rounds, min(args.min_seconds, 1.0))
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(
                {"peers": {n: peers.LEGEND[n] for n in names}, "rows": rows}, handle, indent=1
            )
    if args.plot:
        plot(rows, names, args.plot)
    return 0
