"""`irpool check`: spec examples, IR files written by openvino, corrupted dims, the CLI edge."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from irpool.check import check_file, check_graph
from irpool.frontends.ir_xml import parse_text

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "fixtures" / "spec" / "avgpool-1-examples.xml"
WRITTEN_BY_OPENVINO = sorted((ROOT / "fixtures" / "ir").glob("*.xml")) + sorted(
    (ROOT / "fixtures" / "real").glob("*.xml")
)


def irpool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "irpool", *args], capture_output=True, text=True, cwd=ROOT
    )


def test_spec_examples_one_and_two_are_wrong() -> None:
    report = check_file(str(SPEC))
    assert [r.pooling.layer.index for r in report.layers if r.findings] == [0, 1]
    # Examples 1 and 2 declare 32x32 where openvino computes ceil(32 / 2) = 16.
    for r in report.layers[:2]:
        assert [(f.axis, f.declared, f.inferred) for f in r.findings] == [
            (2, "32", "16"),
            (3, "32", "16"),
        ]
    assert [r.pooling.output_shape[2].lo for r in report.layers] == [16, 16, 10, 15, 14]


def test_spec_examples_cli_exit_1_and_formula() -> None:
    out = irpool("check", str(SPEC.relative_to(ROOT)))
    assert out.returncode == 1, out.stderr
    fails = [line for line in out.stdout.splitlines() if "FAIL" in line]
    assert len(fails) == 4
    assert all('"#1"' in line or '"#2"' in line for line in fails)
    assert "floor((32 + 0 + 0 - 2) / 2) + 1 = 16" in out.stdout
    assert "floor((32 + 1 + 2 - 5) / 2) + 1 = 16" in out.stdout


@pytest.mark.parametrize("path", WRITTEN_BY_OPENVINO, ids=lambda p: p.name)
def test_files_written_by_openvino_pass(path: Path) -> None:
    report = check_file(str(path))
    assert report.ok, [f.message for f in report.findings]
    assert report.layers


def _dim_spans(text: str) -> list[re.Match[str]]:
    return list(re.finditer(r"<dim>(-?\d+)</dim>", text))


def _layer_at(text: str, offset: int) -> str:
    start = text.rfind("<layer ", 0, offset)
    return re.search(r'name="([^"]*)"', text[start:]).group(1)  # type: ignore[union-attr]


@pytest.mark.parametrize("path", WRITTEN_BY_OPENVINO, ids=lambda p: p.name)
def test_one_corrupted_dim_is_found_and_named(path: Path) -> None:
    text = path.read_text()
    spans = _dim_spans(text)
    rng = random.Random(path.name)
    for m in rng.sample(spans, min(60, len(spans))):
        old = int(m.group(1))
        new = old + 1 if old > 0 else (7 if old == -1 else 1)
        corrupted = text[: m.start(1)] + str(new) + text[m.end(1) :]
        report = check_graph(parse_text(corrupted, str(path)))
        layer = _layer_at(text, m.start())
        assert report.findings, f"dim {old}->{new} in {layer} went unnoticed"
        named = " ".join(f"{f.layer} {f.message}" for f in report.findings)
        assert layer in named, f"{layer} not named: {named}"


def test_json_report() -> None:
    out = irpool("check", "--json", str(SPEC.relative_to(ROOT)))
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert doc["schema"] == "irpool.check/1" and doc["ok"] is False
    findings = doc["files"][0]["findings"]
    assert {(f["layer"], f["axis"], f["declared"], f["inferred"]) for f in findings} == {
        ("#1", 2, "32", "16"),
        ("#1", 3, "32", "16"),
        ("#2", 2, "32", "16"),
        ("#2", 3, "32", "16"),
    }


def test_invalid_input_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text(
        '<net version="11"><layers><layer id="0" name="p" type="AvgPool" '
        'version="opset1"><data kernel="2,2" strides="0,1"/><input><port id="0">'
        "<dim>1</dim><dim>1</dim><dim>4</dim><dim>4</dim></port></input><output>"
        '<port id="1"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port></output>'
        "</layer></layers></net>"
    )
    out = irpool("check", str(bad))
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert f"{bad}:1:" in out.stderr


def test_usage_errors_are_one_line() -> None:
    out = irpool("check")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    out = irpool("frobnicate")
    assert out.returncode == 2 and out.stderr.count("\n") == 1


def test_version_and_help() -> None:
    assert irpool("--version").stdout.startswith("irpool ")
    assert irpool("check", "--help").returncode == 0


def test_cli_reference_is_current() -> None:
    from irpool.cli_doc import markdown

    assert (ROOT / "docs" / "cli.md").read_text() == markdown(), (
        "regenerate: python -m irpool.cli_doc > docs/cli.md"
    )
