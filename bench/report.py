"""The markdown of docs/performance.md's tables, from a results file of bench.py.

python bench/report.py bench/results/fair-DATE.json
"""

from __future__ import annotations

import json
import sys

from bench import memory_table, table


def main() -> int:
    with open(sys.argv[1]) as handle:
        report = json.load(handle)
    results, family = report["results"], report.get("family") or []
    names = list(report["legend"])
    m = report["machine"]
    print(f"Measured {m['date']} on {m['cpu']} ({m['cpus']} CPUs), {m['system']};")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()) + ".")
    print(f"Load average at the start: {', '.join(f'{v:.2f}' for v in m['load_average'])}.\n")
    print(table(results, names, "ratio_vs_ov1"))
    print()
    print(table(results, names, "cpu_ratio_vs_ov1"))
    print()
    print(memory_table(results))
    if family:
        print()
        print(table(family, names, "ratio_vs_ov1"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
