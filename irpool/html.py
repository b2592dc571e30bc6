"""One self-contained HTML page from a `compare` or `convert-report` JSON report.

`render_html(report)` takes the dict `irpool compare --json` or `irpool convert-report --json`
prints and returns a page that opens offline and can be attached to a bug report: the verdict,
a table of the layers, and for each layer that differs a heatmap of the cells that differ over
its output planes, both values at the worst cell, the two sides' attributes next to each other,
and the explanation irpool gives.  Everything is inline (CSS, SVG, PNG data URIs); the page has
no scripts and loads nothing.

The heatmap is drawn from the ``mismatch_map`` of an output (compare.mismatch_map): the spatial
cells that differ in at least one (N, C) plane, shaded by how many planes differ there.  A
report without it (written by an older irpool) still gets a picture, of the first differing
cells the report names, and the page says that the pattern may be incomplete.  When
the two sides disagree on the output shape, the picture shows which cells only one side has.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from .html_cells import CSS as CELLS_CSS
from .html_cells import cells_block
from .html_pictures import _grid_svg, _picture
from .html_views import (
    LayerView,
    OutputView,
    PageView,
    Report,
    _fmt_list,
    _from_audit,
    _from_compare,
    _from_convert,
)

CSS = """
:root { --ok: #1e7e34; --bad: #b3261e; --ink: #1f2328; --muted: #5b6470; --line: #d8dee4;
  --soft: #f6f8fa; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
  Arial, sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1120px; margin: 0 auto; padding: 28px 32px 48px; }
header.top { display: flex; align-items: baseline; gap: 14px; flex-wrap: wrap;
  border-bottom: 1px solid var(--line); padding-bottom: 10px; }
header.top h1 { font-size: 22px; margin: 0; }
header.top .kind { color: var(--muted); font-size: 14px; }
code, .mono, td.num, pre { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas,
  "Liberation Mono", monospace; font-size: 13px; }
.verdict { margin: 18px 0 10px; padding: 14px 18px; border-radius: 8px; font-size: 17px;
  font-weight: 600; border: 1px solid; display: flex; gap: 12px; align-items: center; }
.verdict.ok { background: #e9f6ec; border-color: #a7d8b4; color: var(--ok); }
.verdict.bad { background: #fdecea; border-color: #f1b5b0; color: var(--bad); }
.verdict .mark { font-size: 22px; line-height: 1; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px;
  margin: 12px 0 22px; font-size: 14px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
h2 { font-size: 18px; margin: 28px 0 10px; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { background: var(--soft); font-weight: 600; font-size: 13px; color: var(--muted); }
td.num { text-align: right; white-space: nowrap; }
.long { overflow-wrap: anywhere; }
tr.bad td:first-child { box-shadow: inset 3px 0 0 var(--bad); }
.pill { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px;
  font-weight: 700; letter-spacing: .02em; }
.pill.ok { background: #e9f6ec; color: var(--ok); }
.pill.bad { background: #fdecea; color: var(--bad); }
.tag { display: inline-block; padding: 0 6px; margin-right: 4px; border-radius: 4px;
  background: #eef2ff; color: #3730a3; font-size: 12px; font-weight: 600; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
article.layer { border: 1px solid var(--line); border-radius: 10px; padding: 16px 20px 18px;
  margin: 18px 0; break-inside: avoid; }
article.layer h3 { margin: 0 0 6px; font-size: 17px; display: flex; gap: 10px;
  align-items: baseline; flex-wrap: wrap; }
article.layer h3 .op { color: var(--muted); font-weight: 500; font-size: 14px; }
.explain { margin: 8px 0 12px; padding: 10px 14px; background: var(--soft);
  border-left: 3px solid var(--bad); border-radius: 4px; overflow-wrap: anywhere; }
.explain b { text-transform: uppercase; font-size: 11px; letter-spacing: .06em;
  color: var(--muted); margin-right: 6px; }
.output { margin-top: 14px; }
.output h4 { margin: 0 0 4px; font-size: 15px; }
.stats { color: var(--muted); font-size: 13px; margin: 0 0 8px; }
.cols { display: flex; gap: 24px; flex-wrap: wrap; align-items: flex-start; }
figure { margin: 0; max-width: 100%; overflow-x: auto; }
figcaption { color: var(--muted); font-size: 13px; max-width: 640px; margin-top: 4px; }
.legend { display: flex; gap: 14px; flex-wrap: wrap; font-size: 12px; color: var(--muted);
  margin-top: 4px; }
.legend i { display: inline-block; width: 12px; height: 12px; border-radius: 2px;
  vertical-align: -2px; margin-right: 4px; border: 1px solid #c9d1d9; }
.legend i.worst { background: #fff; border: 2.5px solid #111; }
svg.heatmap { display: block; max-width: 100%; height: auto; }
svg.heatmap text { font: 10px ui-monospace, Menlo, Consolas, monospace; fill: #5b6470; }
svg.heatmap text.axis, svg.heatmap text.panel { font: 11px system-ui, sans-serif; fill: #1f2328; }
svg.heatmap rect.diff:hover { stroke: #111; stroke-width: 1; }
.side { min-width: 280px; flex: 1; }
.side table { margin-bottom: 14px; }
.side th:first-child, .side td:first-child { width: 34%; }
td.differs { background: #fff4e5; font-weight: 600; }
.muted { color: var(--muted); }
details { margin-top: 28px; }
details pre { background: var(--soft); padding: 12px; border-radius: 6px; overflow: auto;
  max-height: 480px; }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line);
  padding-top: 10px; }
@media print { main { max-width: none; padding: 0; } details { display: none; } }
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _num(value: Any, digits: int = 4) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value == 0:
            return "0"
        return f"{value:.{digits}g}"
    return str(value)


def _exact(value: Any) -> str:
    """An element value as the report holds it (floats in full)."""
    if value is None:
        return "—"
    return repr(value) if isinstance(value, float) else str(value)


def _status(passed: bool) -> str:
    return '<span class="pill ok">same</span>' if passed else '<span class="pill bad">DIFF</span>'


def _diff_summary(out: OutputView) -> str:
    if not out.shape_ok:
        return f"shape {_fmt_list(out.shape_a)} vs {_fmt_list(out.shape_b)}"
    return f"{_num(out.mismatches)}/{_num(out.size)}"


def _layers_table(page: PageView) -> str:
    heads = [
        "",
        page.noun,
        "type" if page.noun == "op" else "op",
        *page.extra_headers,
        "values differ",
        "indices differ",
        "max abs",
        "max ulp",
        "divergence",
    ]
    rows = []
    for la in page.layers:
        values = next((o for o in la.outputs if o.name == "values"), None)
        indices = next((o for o in la.outputs if o.name == "indices"), None)
        name = _e(la.name)
        if not la.passed:
            name = f'<a href="#{_e(la.anchor)}">{name}</a>'
        if la.where:
            name += f' <span class="muted">{_e(la.where)}</span>'
        cells = [
            _status(la.passed),
            name,
            f'<span class="long">{_e(la.op)}</span>',
            *(f'<span class="long">{_e(c)}</span>' for c in la.extra_cells),
            f'<span class="mono">{_e(_diff_summary(values))}</span>' if values else "—",
            f'<span class="mono">{_e(_diff_summary(indices))}</span>' if indices else "—",
            _e(_num(values.max_abs)) if values and values.shape_ok else "—",
            _e(_num(values.max_ulp, 3)) if values and values.shape_ok else "—",
            "".join(_divergence_tag(d) for d in la.divergences)
            or (_e("irpool refuses: " + la.error) if la.error else ""),
        ]
        tds = "".join(
            f'<td class="num">{c}</td>'
            if k in (len(cells) - 3, len(cells) - 2)
            else f"<td>{c}</td>"
            for k, c in enumerate(cells)
        )
        rows.append(f'<tr class="{"ok" if la.passed else "bad"}">{tds}</tr>')
    head = "".join(f"<th>{_e(h)}</th>" for h in heads)
    body = "".join(rows)
    return f'<table class="layers"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _worst_table(out: OutputView, page: PageView) -> str:
    if out.worst_index is None:
        return ""
    diff = ""
    if isinstance(out.worst_a, (int, float)) and isinstance(out.worst_b, (int, float)):
        diff = _num(abs(float(out.worst_a) - float(out.worst_b)), 6)
    return (
        '<table class="worst"><thead><tr><th>worst cell</th>'
        f'<th class="mono">{_e(out.worst_index)}</th></tr></thead><tbody>'
        f'<tr><td>{_e(page.side_a)}</td><td class="mono">{_e(_exact(out.worst_a))}</td></tr>'
        f'<tr><td>{_e(page.side_b)}</td><td class="mono">{_e(_exact(out.worst_b))}</td></tr>'
        f'<tr><td>difference</td><td class="mono">{_e(diff or "—")}</td></tr>'
        "</tbody></table>"
    )


def _attributes_table(la: LayerView) -> str:
    parts = []
    if la.attributes:
        a, b = la.attributes_title
        rows = "".join(
            f"<tr><td>{_e(r.key)}</td>"
            f'<td class="mono{" differs" if r.differs else ""}">{_e(r.a)}</td>'
            f'<td class="mono{" differs" if r.differs else ""}">{_e(r.b)}</td></tr>'
            for r in la.attributes
        )
        parts.append(
            f'<table class="attributes"><thead><tr><th>attribute</th><th>{_e(a)}</th>'
            f"<th>{_e(b)}</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    if la.written:
        rows = "".join(
            f'<tr><td>{_e(k)}</td><td class="mono">{_e(v)}</td></tr>' for k, v in la.written
        )
        parts.append(
            '<table class="written"><thead><tr><th>as written</th><th>value</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
        )
    if not parts:
        parts.append(
            '<p class="muted">This report carries no attributes of the layer (proposed: '
            "<code>attributes</code> and <code>plans</code> per layer).</p>"
        )
    return "".join(parts)


def _output_block(out: OutputView, page: PageView, la: LayerView) -> str:
    share = f" ({100 * out.mismatches / out.size:.3g}%)" if out.size else ""
    if out.shape_ok:
        stats = (
            f"{_num(out.mismatches)} of {_num(out.size)} {out.dtype} value(s) differ{share}; "
            f"max abs {_num(out.max_abs)}, rel {_num(out.max_rel)}"
            + (f", ulp {_num(out.max_ulp, 3)}" if out.max_ulp is not None else "")
        )
        if out.min_atol is not None and out.mismatches:
            stats += (
                f"; passes with atol \u2265 {_num(out.min_atol)} "
                f"or rtol \u2265 {_num(out.min_rtol)}"
            )
        if out.rounding:
            stats += f"; {out.rounding} more within summation-order rounding"
        if out.nan_mismatches or out.inf_mismatches:
            stats += f"; NaN mismatches {out.nan_mismatches}, Inf mismatches {out.inf_mismatches}"
    else:
        stats = (
            f"{out.dtype}: {page.side_a} {_fmt_list(out.shape_a)}, "
            f"{page.side_b} {_fmt_list(out.shape_b)}"
        )
    grid, remark = _picture(out, page.side_a, page.side_b)
    figure = ""
    if grid is not None:
        legend = "".join(
            f'<span><i style="background:{c}"></i>{_e(t)}</span>' for c, t in grid.legend
        )
        if grid.worst is not None:
            legend += '<span><i class="worst"></i>the worst cell</span>'
        label = f"{la.name} {out.name}: cells that differ"
        figure = (
            f'<figure>{_grid_svg(grid, label)}<div class="legend">{legend}</div>'
            f"<figcaption>{_e(grid.caption + remark)}</figcaption></figure>"
        )
    return (
        f'<section class="output" data-output="{_e(out.name)}"><h4>{_e(out.name)} '
        f'{_status(out.passed)}</h4><p class="stats">{_e(stats)}</p>'
        f'<div class="cols">{figure}<div class="side">{_worst_table(out, page)}</div></div>'
        f"{cells_block(out, page.side_a, page.side_b)}</section>"
    )


def _layer_article(la: LayerView, page: PageView) -> str:
    explanations = "".join(
        f'<div class="explain"><b>{_e(k)}</b>{_e(v)}</div>' for k, v in la.explanations
    )
    if la.error:
        explanations += (
            f'<div class="explain"><b>irpool</b>refuses the {page.noun}: {_e(la.error)}</div>'
        )
    notes = "".join(f'<p class="muted">note: {_e(n)}</p>' for n in la.notes)
    outputs = "".join(_output_block(o, page, la) for o in la.outputs if not o.passed)
    tags = "".join(_divergence_tag(d, named=True) for d in la.divergences)
    where = f'<span class="op">{_e(la.where)}</span>' if la.where else ""
    extra = "".join(f'<span class="op">\u2192 {_e(c)}</span>' for c in la.extra_cells)
    return (
        f'<article class="layer" id="{_e(la.anchor)}"><h3>{_e(la.name)}'
        f'<span class="op">{_e(la.op)}</span>{extra}{where}{_status(la.passed)}{tags}</h3>'
        f"{explanations}{notes}{outputs}"
        f'<h4>Attributes side by side</h4><div class="side">{_attributes_table(la)}</div></article>'
    )


def _divergence_row(key: str) -> tuple[str, str, str] | None:
    """The title, the runtimes it separates and what was measured, of a known divergence (the
    row of docs/divergences.md), or None for a key that is no divergence id."""
    from .divergences import BY_ID

    d = BY_ID.get(key)
    return (d.title, d.separates, d.measured) if d is not None else None


def _divergence_tag(key: str, named: bool = False) -> str:
    """A divergence id as a link to its row in the page's list of divergences; `named`: with
    its title after the id."""
    row = _divergence_row(key)
    if row is None:
        return f'<span class="tag">{_e(key)}</span>'
    text = f"{key}: {row[0]}" if named else key
    return (
        f'<a class="tag" href="#divergence-{_e(key)}" title="{_e(row[0])} ({_e(row[1])})">'
        f"{_e(text)}</a>"
    )


def _divergence_legend(page: PageView) -> str:
    """The known divergences the page names, each as docs/divergences.md lists it."""
    keys = sorted({d for la in page.layers for d in la.divergences}, key=_natural_key)
    rows = [(k, r) for k in keys if (r := _divergence_row(k)) is not None]
    if not rows:
        return ""
    items = "".join(
        f'<dt id="divergence-{_e(k)}">{_e(k)}: {_e(title)}</dt>'
        f"<dd>{_e(separates)}; measured: {_e(measured.replace('`', ''))}</dd>"
        for k, (title, separates, measured) in rows
    )
    return (
        "<h2>Divergences named here</h2>"
        '<p class="muted">Each is a row of docs/divergences.md (the table "Known divergences"), '
        "where the runtimes were measured.</p>"
        f'<dl class="facts">{items}</dl>'
    )


def _natural_key(key: str) -> tuple[int, str]:
    digits = re.sub(r"\D", "", key)
    return (int(digits) if digits else 0, key)


def _page(page: PageView, report: Report) -> str:
    name = page.file.rsplit("/", 1)[-1] or page.file
    bad = [la for la in page.layers if not la.passed]
    title = f"irpool {page.kind}: {name} \u2014 " + (
        "all agree" if page.ok else f"{len(bad)} of {len(page.layers)} differ"
    )
    facts = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in page.facts)
    notes = "".join(f'<p class="muted">note: {_e(n)}</p>' for n in page.notes)
    details = "".join(_layer_article(la, page) for la in bad)
    if bad:
        details = f"<h2>What differs</h2>{details}"
    raw = json.dumps(report, indent=2, allow_nan=False, default=str)
    version = f"irpool {page.irpool}" if page.irpool else "irpool"
    mark = "\u2713" if page.ok else "\u2717"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="{_e(version)}">'
        f"<title>{_e(title)}</title><style>{CSS}{CELLS_CSS}</style></head><body><main>"
        f'<header class="top"><h1>{_e(name)}</h1><span class="kind">irpool {_e(page.kind)}'
        "</span></header>"
        f'<div class="verdict {"ok" if page.ok else "bad"}" role="status">'
        f'<span class="mark">{mark}</span><span>{_e(page.verdict)}</span></div>'
        f'<dl class="facts">{facts}</dl>{notes}'
        f"<h2>{_e(page.noun.capitalize())}s</h2>{_layers_table(page)}{details}"
        f"{_divergence_legend(page)}"
        f"<details><summary>The JSON report ({_e(page.schema)})</summary><pre>{_e(raw)}</pre>"
        "</details>"
        f"<footer>Made by {_e(version)} from its {_e(page.schema)} report. The page is "
        "self-contained: it loads nothing and runs no scripts.</footer>"
        "</main></body></html>\n"
    )


def render_html(report: Report) -> str:
    """The page of a compare (irpool.compare/1) or convert-report (irpool.convert-report/2 for
    ONNX, /3 for PyTorch, TensorFlow and IR models) report dict; ValueError for any other
    document."""
    schema = str(report.get("schema", ""))
    if schema.startswith("irpool.compare/"):
        page = _from_compare(report)
    elif schema == "irpool.convert-report/3":
        page = _from_audit(report)
    elif schema.startswith("irpool.convert-report/"):
        page = _from_convert(report)
    else:
        raise ValueError(f"render_html takes a compare or convert-report report, not {schema!r}")
    return _page(page, report)
