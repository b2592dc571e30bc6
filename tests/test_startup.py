"""Start-up: `irpool --help` and `import irpool` load no runtime, no numba and no numpy (the
heavy modules are imported by the command that needs them), and the package's public names
stay the functions even after their submodules are imported."""

from __future__ import annotations

import sys

import pytest
from conftest import irpool

HEAVY = ("numpy", "numba", "openvino", "onnx", "onnxruntime", "torch", "tensorflow", "matplotlib")

PROBE = """
import sys, contextlib, io
{body}
print("loaded:" + ",".join(m for m in {heavy!r} if m in sys.modules))
"""


def _loaded(body: str) -> list[str]:
    import subprocess

    from conftest import ROOT

    code = PROBE.format(body=body, heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    last = done.stdout.splitlines()[-1]
    assert last.startswith("loaded:"), done.stdout
    return [m for m in last.removeprefix("loaded:").split(",") if m]


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["check", "--help"], ["explain", "--help"], ["--version"]],
    ids=lambda a: "-".join(a).strip("-"),
)
def test_help_imports_nothing_heavy(argv: list[str]) -> None:
    body = (
        "from irpool.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    try: main({argv!r})\n"
        "    except SystemExit: pass"
    )
    assert _loaded(body) == []


def test_import_irpool_imports_nothing_heavy() -> None:
    assert _loaded("import irpool") == []


def test_public_names_survive_submodule_imports() -> None:
    body = (
        "import irpool.check, irpool.compare, irpool.run, irpool.fixtures, irpool.explain\n"
        "import irpool\n"
        "names = ('check', 'compare', 'run', 'fixtures', 'explain', 'convert_report')\n"
        "assert all(getattr(irpool, n).__module__ == 'irpool.api' for n in names), names\n"
        "assert irpool.IrpoolError.__name__ == 'IrpoolError'"
    )
    assert "numpy" in _loaded(body)  # the functions were really loaded


def test_help_lists_every_command() -> None:
    done = irpool("--help")
    assert done.returncode == 0
    for name in ("check", "run", "explain", "compare", "convert-report", "fixtures"):
        assert f"    {name}" in done.stdout
