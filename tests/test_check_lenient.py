"""Malformed IRs openvino reads without a word: irpool reads them as openvino does and says
what it took the text to mean, as a finding (exit 1), never "ok"."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BASE = (ROOT / "fixtures" / "divergences" / "d1_avgpool_ceil.xml").read_text()


def _check(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "net.xml"
    path.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "irpool", "check", *args, str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def _without_dims(text: str, start: str, end: str) -> str:
    a = text.index(start)
    b = text.index(end, a)
    return text[:a] + re.sub(r"\s*<dim>\d+</dim>", "", text[a:b]) + text[b:]


@pytest.mark.parametrize("value", ["yes", "no", "on", ""])
def test_a_bool_openvino_reads_as_its_default_is_a_finding(tmp_path: Path, value: str) -> None:
    """openvino 2026.4.1 reads exclude-pad="yes" (and "no", "on", "") as the default, true:
    the mean excludes the padding (measured: [1.5, 3, 5, 6] on 1..6, as exclude-pad="true")."""
    o = _check(tmp_path, BASE.replace('exclude-pad="false"', f'exclude-pad="{value}"'))
    assert o.returncode == 1, o.stdout + o.stderr
    assert f'"exclude-pad"="{value}"' in o.stdout and "(true)" in o.stdout
    assert "  ok  " not in o.stdout and "all declared shapes agree" not in o.stdout


def test_an_unknown_declared_encoding_is_a_finding(tmp_path: Path) -> None:
    text = BASE.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="x-unknown-enc"?>')
    o = _check(tmp_path, text)
    assert o.returncode == 1, o.stdout + o.stderr
    line = next(x for x in o.stdout.splitlines() if "FAIL" in x)
    assert 'encoding="x-unknown-enc"' in line and "UTF-8" in line and "net.xml:1:" in line
    report = json.loads(_check(tmp_path, text, "--json").stdout)
    kinds = [f["kind"] for f in report["files"][0]["findings"]]
    assert kinds == ["reading"]


def test_ports_without_dims_are_findings_naming_the_port(tmp_path: Path) -> None:
    """The Parameter's port and the pooling layer's input port declare nothing: nothing
    agrees, and each port is named."""
    text = _without_dims(BASE, '<layer id="0"', '<output>\n\t\t\t\t<port id="1"')
    o = _check(tmp_path, text)
    assert o.returncode == 1, o.stdout + o.stderr
    fails = [x for x in o.stdout.splitlines() if "FAIL" in x]
    assert len(fails) == 2, o.stdout
    assert any('"pool"' in x and "input port 0 has no <dim>" in x and "[1,1,6]" in x for x in fails)
    assert any('"x"' in x and "output port 0 has no <dim>" in x for x in fails)
    assert "all declared shapes agree" not in o.stdout
    report = json.loads(_check(tmp_path, text, "--json").stdout)
    assert {f["kind"] for f in report["files"][0]["findings"]} == {"undeclared"}
