"""The first call of the compiled path in a fresh process, with numba's disk cache warm (the
kernels compiled by an earlier process) and cold (an empty cache directory).

    python bench/firstcall.py [WORKLOAD ...] [--runs N] [--json FILE]

Each run is a new interpreter: it imports irpool (which imports neither numba nor the kernels),
calls irpool.pool once (auto mode: the numpy core, while numba is not loaded yet), then
prepares the workload with irpool.compile_pool (which loads numba and the kernel, or compiles
it) and calls that twice; the times of each step are printed.  The cold runs use a fresh
NUMBA_CACHE_DIR; the warm runs reuse the one the cold run filled.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHILD = """
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {bench!r}); sys.path.insert(0, {repo!r})
import numpy as np
import irpool
t1 = time.perf_counter()
import workloads
w = workloads.BY_NAME[{name!r}]
x = w.input()
ta = time.perf_counter()
irpool.pool(x, **w.keywords())
tb = time.perf_counter()
t2 = time.perf_counter()
f = irpool.compile_pool(x.shape, x.dtype, **w.keywords(), threads=1)
t3 = time.perf_counter()
f.run(x)
t4 = time.perf_counter()
f.run(x)
t5 = time.perf_counter()
print(json.dumps({{"path": f.path, "import_irpool": t1 - t0, "pool_first": tb - ta,
                   "prepare": t3 - t2, "first_call": t4 - t3, "second_call": t5 - t4}}))
"""


def child(name: str, cache: str) -> dict[str, float]:
    code = CHILD.format(bench=str(HERE), repo=str(HERE.parent), name=name)
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=["resnet_max", "f16_avg", "avg7_s1"])
    parser.add_argument("--runs", type=int, default=3, help="warm runs per workload")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    rows = []
    for name in args.names:
        with tempfile.TemporaryDirectory() as cache:
            for kind in ["cold"] + ["warm"] * args.runs:
                r = child(name, cache)
                total = r["prepare"] + r["first_call"]
                rows.append({"workload": name, "cache": kind, **r, "prepare_and_first": total})
                print(
                    f"{name:14} {kind}: import irpool {r['import_irpool'] * 1e3:5.0f} ms, "
                    f"irpool.pool first call {r['pool_first'] * 1e3:5.0f} ms; "
                    f"compile_pool {r['prepare'] * 1e3:6.0f} ms, first call "
                    f"{r['first_call'] * 1e3:7.0f} ms, second {r['second_call'] * 1e3:6.2f} ms; "
                    f"prepare + first call {total:.2f} s ({r['path']})",
                    flush=True,
                )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
