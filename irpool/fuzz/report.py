"""A campaign's summary: text, JSON (schema irpool.fuzz/1, irpool/schemas/fuzz-1.json) and one
HTML page, and the bundles of its findings."""

from __future__ import annotations

import hashlib
import html
import json
import os
from typing import Any

from .campaign import Options, Stats

SCHEMA = "irpool.fuzz/1"


def _versions(runtimes: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        from ..oracles import openvino_rt

        if any(r.startswith("openvino") for r in runtimes):
            out["openvino"] = openvino_rt.version()
    except Exception:
        pass
    if "onnxruntime" in runtimes:
        try:
            from ..oracles import onnxruntime_rt

            _, ort = onnxruntime_rt.load()
            out["onnxruntime"] = str(ort.__version__)
        except Exception:
            pass
    if "torch" in runtimes:
        try:
            from ..oracles import torch_rt

            out["torch"] = torch_rt.version()
        except Exception:
            pass
    import hypothesis

    out["hypothesis"] = hypothesis.__version__
    return out


def bundle_name(signature: str) -> str:
    category = signature.split(":", 1)[0]
    who = signature.split(":", 1)[1].replace("/", "-vs-")
    digest = hashlib.sha1(signature.encode()).hexdigest()[:8]
    return f"{category}-{who}-{digest}"


def write_bundles(options: Options, stats: Stats, versions: dict[str, str]) -> None:
    """One bundle per new divergence and irpool bug (its minimal example) under DIR/findings."""
    from . import bundle

    root = os.path.join(options.outdir, "findings")
    for signature, entry in sorted(stats.findings.items()):
        # the shrunk example; a finding hypothesis did not shrink (it showed beside another in
        # one case, or after the budget) is bundled as first seen
        minimal = entry.get("minimal") or entry.get("first")
        if minimal is None:
            entry["bundle"] = None
            continue
        entry["shrunk"] = entry.get("minimal") is not None
        spec, verdict, finding = minimal
        name = bundle_name(signature)
        folder = bundle.write(root, name, verdict, finding, entry.get("blob"), versions)
        entry["extract"] = bundle.add_extract(folder, finding, spec)
        _note_extract(folder, entry["extract"])
        entry["bundle"] = os.path.join("findings", name)
        entry["label"] = spec.label()
        entry["text"] = finding.text


def _note_extract(folder: str, what: dict[str, Any]) -> None:
    """meta.json of the bundle says whether (and why not) an extract bundle came along."""
    from ..files import atomic_write_text

    path = os.path.join(folder, "meta.json")
    with open(path) as f:
        meta = json.load(f)
    meta["extract"] = what
    atomic_write_text(path, json.dumps(meta, indent=2, default=str) + "\n")


def to_json(
    options: Options, stats: Stats, seconds: float, versions: dict[str, str]
) -> dict[str, Any]:
    from .. import divergences as dv
    from ..schemas import document

    new = [_finding_json(s, f) for s, f in sorted(stats.findings.items()) if f["category"] == "new"]
    bugs = [
        _finding_json(s, f)
        for s, f in sorted(stats.findings.items())
        if f["category"] == "irpool-bug"
    ]
    divergences = {
        i: {
            "title": dv.BY_ID[i].title if i in dv.BY_ID else "",
            "cases": d["cases"],
            "pairs": d["pairs"],
            "samples": d["samples"],
        }
        for i, d in sorted(stats.divergences.items(), key=lambda kv: _id_key(kv[0]))
    }
    return {
        **document(SCHEMA),
        "outdir": options.outdir,
        "seed": options.seed,
        "budget": options.budget,
        "workers": options.workers,
        "ops": list(options.ops),
        "runtimes": list(options.runtimes),
        "versions": versions,
        "seconds": round(seconds, 3),
        "chunks": stats.chunks,
        "cases": stats.cases,
        "per_runtime": stats.runtimes,
        "divergences": divergences,
        "new": new,
        "irpool_bugs": bugs,
        "errors": stats.errors,
        "exit_code": 1 if new or bugs else 0,
    }


def _id_key(i: str) -> tuple[int, str]:
    digits = "".join(c for c in i if c.isdigit())
    return (int(digits) if digits and i.startswith("D") else 999, i)


def _finding_json(signature: str, f: dict[str, Any]) -> dict[str, Any]:
    minimal = f.get("minimal") or f.get("first")
    return {
        "signature": signature,
        "runtimes": f["runtimes"],
        "cases": f["cases"],
        "text": f["text"],
        "label": minimal[0].label() if minimal else None,
        "spec": minimal[0].to_json() if minimal else None,
        "bundle": f.get("bundle"),
        "hypothesis_blob": f.get("blob"),
        "shrunk": f.get("minimal") is not None,
    }


def format_text(doc: dict[str, Any]) -> str:
    lines = [
        f"irpool fuzz: {doc['cases']} cases in {doc['seconds']:.0f} s (seed {doc['seed']}, "
        f"{doc['workers']} worker(s), ops {','.join(doc['ops'])}); {doc['outdir']}",
        "  runtime         ran  refused  irpool refused  reproduced  irpool bugs",
    ]
    for name, r in doc["per_runtime"].items():
        lines.append(
            f"  {name:<14}{r['ran']:>5}{r['refused']:>9}{r['irpool_refused']:>16}"
            f"{r['reproduced']:>12}{r['irpool_bug']:>13}"
        )
    if doc["divergences"]:
        lines.append("  explained by known divergences (cases; between):")
        for i, d in doc["divergences"].items():
            pairs = ", ".join(f"{p} {n}" for p, n in d["pairs"].items())
            lines.append(f"    {i:<14}{d['cases']:>5}  {d['title']} ({pairs})")
    for key, what in (("new", "NEW divergence"), ("irpool_bugs", "IRPOOL BUG")):
        for f in doc[key]:
            lines.append(f"  {what}: {f['signature']} ({f['cases']} case(s))")
            lines.append(f"    {f['text']}")
            if f["label"]:
                how = "minimal case" if f["shrunk"] else "case (as first seen, not shrunk)"
                lines.append(f"    {how}: {f['label']}")
            if f["bundle"]:
                lines.append(
                    f"    bundle: {os.path.join(doc['outdir'], f['bundle'])} (python repro.py)"
                )
    for e in doc["errors"][:5]:
        lines.append(f"  note: {e}")
    n_new, n_bugs = len(doc["new"]), len(doc["irpool_bugs"])
    lines.append(
        f"{n_new} new divergence(s), {n_bugs} irpool bug(s), "
        f"{sum(d['cases'] for d in doc['divergences'].values())} explained case-divergence(s)"
    )
    return "\n".join(lines)


def format_html(doc: dict[str, Any]) -> str:
    e = html.escape
    rows = "".join(
        f"<tr><td>{e(n)}</td><td>{r['ran']}</td><td>{r['refused']}</td>"
        f"<td>{r['irpool_refused']}</td><td>{r['reproduced']}</td><td>{r['irpool_bug']}</td></tr>"
        for n, r in doc["per_runtime"].items()
    )
    divs = "".join(
        f"<tr><td>{e(i)}</td><td>{d['cases']}</td><td>{e(d['title'])}</td>"
        f"<td>{e(', '.join(f'{p}: {n}' for p, n in d['pairs'].items()))}</td>"
        f"<td>{e(d['samples'][0]['label']) if d['samples'] else ''}</td></tr>"
        for i, d in doc["divergences"].items()
    )
    finds = "".join(
        f"<tr class='{'new' if k == 'new' else 'bug'}'>"
        f"<td>{'new' if k == 'new' else 'irpool bug'}</td>"
        f"<td>{e(f['signature'])}</td><td>{f['cases']}</td><td>{e(f['text'])}</td>"
        f"<td>{e(f['label'] or '')}</td><td>{e(f['bundle'] or '')}</td></tr>"
        for k in ("new", "irpool_bugs")
        for f in doc[k]
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>irpool fuzz: {doc["cases"]} cases</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}}
tr.new td{{background:#fff3cd}}tr.bug td{{background:#f8d7da}}</style></head><body>
<h1>irpool fuzz</h1>
<p>{doc["cases"]} cases in {doc["seconds"]:.0f} s; seed {doc["seed"]}, {doc["workers"]} worker(s),
ops {e(", ".join(doc["ops"]))}; runtimes {e(", ".join(doc["runtimes"]))};
{e(", ".join(f"{k} {v}" for k, v in doc["versions"].items()))}</p>
<h2>Runtimes</h2><table><tr><th>runtime</th><th>ran</th><th>refused</th><th>irpool refused</th>
<th>reproduced by irpool</th><th>irpool bugs</th></tr>{rows}</table>
<h2>Explained by known divergences</h2><table><tr><th>id</th><th>cases</th><th>what differs</th>
<th>between</th><th>a case</th></tr>{divs}</table>
<h2>New divergences and irpool bugs ({len(doc["new"])} + {len(doc["irpool_bugs"])})</h2>
<table><tr><th>kind</th><th>signature</th><th>cases</th><th>what</th><th>minimal case</th>
<th>bundle</th></tr>{finds}</table>
</body></html>
"""


def write_summary(options: Options, doc: dict[str, Any]) -> None:
    """summary.json, summary.txt and summary.html in DIR, each written whole then renamed."""
    from ..files import atomic_write_text

    atomic_write_text(
        os.path.join(options.outdir, "summary.json"), json.dumps(doc, indent=2, default=str) + "\n"
    )
    atomic_write_text(os.path.join(options.outdir, "summary.txt"), format_text(doc) + "\n")
    atomic_write_text(os.path.join(options.outdir, "summary.html"), format_html(doc))
