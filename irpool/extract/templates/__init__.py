"""The texts of the scripts a bundle holds (repro.py, source.py), kept as files: they are
programs of their own that import the runtimes, not code irpool runs."""

from __future__ import annotations

from importlib import resources


def template(name: str) -> str:
    """The text of template `name` (a file beside this module), ready for str.format."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
