"""Load a page in headless Chromium (the system's package) and see what it renders.

Two ways, both one Chromium process that exits by itself: `dump_dom` returns the DOM after the
page has loaded and laid out, and `screenshot` writes a PNG of the window.  `probe` loads a copy
of the page with a small script appended that measures elements (their boxes, whether they are
visible) and stores the result in the DOM, so that a test can check the layout, not just the
markup; the page under test itself runs no scripts.

Chromium always runs with --headless --no-sandbox --disable-gpu, no network of its own
(--disable-background-networking, --disable-component-update, --disable-sync, --disable-quic)
and a fresh profile folder that is removed afterwards.

    python headless.py page.html --screenshot page.png --height 2400
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)


def find_chromium() -> str | None:
    """The Chromium executable, or None when none is installed."""
    given = os.environ.get("IRPOOL_CHROMIUM")
    if given:
        return given
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(args: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
    chromium = find_chromium()
    if chromium is None:
        raise FileNotFoundError("no Chromium found (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="irpool-chromium-") as profile:
        return subprocess.run(
            [chromium, *FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )


def dump_dom(page: Path, width: int = 1280, height: int = 1600, timeout: float = 60) -> str:
    """The serialized DOM of the loaded page."""
    done = _run([f"--window-size={width},{height}", "--dump-dom", page.resolve().as_uri()], timeout)
    return done.stdout


def screenshot(
    page: Path, target: Path, width: int = 1280, height: int = 1600, timeout: float = 60
) -> Path:
    """A PNG of the page's first `height` pixels at `width`."""
    _run(
        [
            f"--window-size={width},{height}",
            f"--screenshot={target.resolve()}",
            page.resolve().as_uri(),
        ],
        timeout,
    )
    return target


PROBE = """
<script>
(function () {
  function box(el) {
    var r = el.getBoundingClientRect();
    var s = getComputedStyle(el);
    return {x: r.left, y: r.top, w: r.width, h: r.height,
            visible: r.width > 0 && r.height > 0 && s.visibility !== 'hidden' &&
                     s.display !== 'none'};
  }
  var out = {
    title: document.title,
    width: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
    verdict: Array.from(document.querySelectorAll('.verdict')).map(function (e) {
      return {text: e.innerText, box: box(e), color: getComputedStyle(e).color}; }),
    rows: Array.from(document.querySelectorAll('table.layers tbody tr')).map(function (e) {
      return {text: e.innerText, box: box(e)}; }),
    heatmaps: Array.from(document.querySelectorAll('svg.heatmap')).map(function (e) {
      return {label: e.getAttribute('aria-label'), box: box(e),
              cells: e.querySelectorAll('rect').length,
              diff: e.querySelectorAll('rect.diff').length,
              images: e.querySelectorAll('image').length,
              worst: e.querySelectorAll('.worst').length,
              ticks: e.querySelectorAll('text.tick').length}; }),
    images: Array.from(document.querySelectorAll('svg.heatmap image')).map(function (e) {
      return {box: box(e)}; }),
    articles: Array.from(document.querySelectorAll('article.layer')).map(function (e) {
      return {id: e.id, box: box(e)}; }),
    external: Array.from(document.querySelectorAll('[src],link[href]')).map(function (e) {
      return e.outerHTML.slice(0, 120); })
  };
  document.documentElement.setAttribute('data-probe', JSON.stringify(out));
})();
</script>
"""


def probe(page: Path, width: int = 1280, height: int = 1600, timeout: float = 60) -> dict[str, Any]:
    """Measurements of the rendered page (see PROBE): title, verdict, table rows, heatmaps."""
    text = page.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="irpool-probe-") as tmp:
        copy = Path(tmp) / page.name
        copy.write_text(text.replace("</body>", PROBE + "</body>", 1), encoding="utf-8")
        dom = dump_dom(copy, width, height, timeout)
    m = re.search(r'<html[^>]*\sdata-probe="([^"]*)"', dom)
    if m is None:
        raise RuntimeError("the probe did not run: no data-probe attribute in the DOM")
    found: dict[str, Any] = json.loads(html.unescape(m.group(1)))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("--screenshot", type=Path)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1600)
    parser.add_argument("--probe", action="store_true", help="print the measurements as JSON")
    args = parser.parse_args(argv)
    if args.screenshot:
        screenshot(args.page, args.screenshot, args.width, args.height)
    if args.probe or not args.screenshot:
        print(json.dumps(probe(args.page, args.width, args.height), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
