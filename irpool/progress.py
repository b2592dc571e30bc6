"""Progress bars (tqdm) for `compare --progress` and `fixtures --progress`.

irpool's long commands report progress through one callback, ``progress(done, total, label)``:
`done` of `total` steps are finished and `label` names the step under way (compare calls it
before each layer and once at the end with done == total; fixtures after each case written and
each case verified).  `progress_bar` returns such a callback backed by a tqdm bar on stderr:
tqdm measures the rate, estimates the time left, fits the terminal width, and stays quiet when
the stream is not a terminal and the bar was not asked for.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import IO, Any

Progress = Callable[[int, int, str], None]
LABEL_WIDTH = 32
"""Longest step label shown after the bar (longer labels keep their end)."""


def _short(label: str) -> str:
    return label if len(label) <= LABEL_WIDTH else "\u2026" + label[-(LABEL_WIDTH - 1) :]


def progress_bar(
    what: str = "",
    unit: str = "step",
    stream: IO[str] | None = None,
    force: bool = False,
    mininterval: float = 0.1,
) -> Progress:
    """A progress callback drawing a tqdm bar on `stream` (stderr).  `what` prefixes the bar,
    `unit` names a step; without `force` the bar is drawn only when the stream is a terminal
    (--progress auto), with it always (--progress on); the bar is redrawn at most every
    `mininterval` seconds."""
    from tqdm import tqdm

    out = sys.stderr if stream is None else stream
    shown = force or (hasattr(out, "isatty") and out.isatty())
    state: dict[str, Any] = {"bar": None}

    def show(done: int, total: int, label: str) -> None:
        if not shown:
            return
        bar = state["bar"]
        if bar is None or bar.total != total:
            if bar is not None:
                bar.close()
            bar = tqdm(
                total=total,
                desc=what or None,
                unit=unit,
                file=out,
                leave=True,
                dynamic_ncols=True,
                mininterval=mininterval,
                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}] {postfix}",
            )
            state["bar"] = bar
        bar.set_postfix_str(_short(label), refresh=False)
        bar.update(max(0, min(done, total) - bar.n))
        if done >= total:
            bar.close()
            state["bar"] = None

    return show
