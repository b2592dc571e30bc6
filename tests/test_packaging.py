"""The wheel holds every package of the source tree: pyproject.toml lists packages by hand, and a
package missing there is missing from a non-editable install (the editable one hides it)."""

from __future__ import annotations

import tomllib

from conftest import ROOT


def test_every_package_is_in_the_wheel() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "irpool").rglob("__init__.py")
    }
    assert on_disk - listed == set(), "packages missing from [tool.setuptools] packages"
