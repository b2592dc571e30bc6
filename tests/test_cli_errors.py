"""How the command line fails: the help each usage error points to, "did you mean" for a
misspelt command, choice or option, the JSON error document under --json (validated against
irpool/schemas/error-1.json), a file that is no ONNX model without the onnx package, and
explain --png onto an existing file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import ROOT, irpool
from jsonschema import Draft202012Validator

from irpool import schemas

D1 = "fixtures/divergences/d1_avgpool_ceil.xml"
SPEC = "fixtures/spec/avgpool-1-examples.xml"


def one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize(
    "args,help_of",
    [
        (["check", SPEC, "--bogus"], "irpool check"),
        (["check"], "irpool check"),
        (["run", D1, "-o", "x.npz", "--seed", "-1"], "irpool run"),
        (["explain", D1, "--nope=3"], "irpool explain"),
        (["--bogus"], "irpool"),
    ],
    ids=["unknown-option", "missing-argument", "bad-value", "unknown-option-value", "top-level"],
)
def test_usage_errors_point_to_the_help_of_their_command(args: list[str], help_of: str) -> None:
    done = irpool(*args)
    assert done.returncode == 2
    assert one_line(done.stderr).endswith(f"(see {help_of} --help)")
    assert done.stdout == ""


@pytest.mark.parametrize(
    "args,meant",
    [
        (["chek", SPEC], "did you mean 'check'?"),
        (["convert_report", "m.onnx"], "did you mean 'convert-report'?"),
        (["explain", D1, "--convention", "tourch"], "did you mean 'torch'?"),
        (["check", SPEC, "--jsn"], "did you mean --json?"),
    ],
    ids=["command", "command-underscore", "choice", "option"],
)
def test_misspellings_get_a_suggestion(args: list[str], meant: str) -> None:
    done = irpool(*args)
    assert done.returncode == 2
    assert meant in one_line(done.stderr)


def test_no_suggestion_for_a_word_close_to_nothing() -> None:
    done = irpool("frobnicate")
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert "did you mean" not in line and "expected one of check, run, explain" in line


def _error_document(done: object) -> dict[str, object]:
    stdout = done.stdout  # type: ignore[attr-defined]
    document: dict[str, object] = json.loads(stdout)
    validator = Draft202012Validator(schemas.for_document(document))
    assert [e.message for e in validator.iter_errors(document)] == []
    return document


def test_error_schema_is_shipped() -> None:
    schema = schemas.load("irpool.error/1")
    Draft202012Validator.check_schema(schema)
    assert "error-1" in schemas.NAMES


@pytest.mark.parametrize(
    "args,command,kind,file",
    [
        (["check", "--json", "no/such.xml"], "check", "input", "no/such.xml"),
        (["check", "--json", SPEC, "--bogus"], "check", "usage", None),
        (["chek", "--json", SPEC], None, "usage", None),
        (["run", D1, "--json"], "run", "usage", None),
        (["explain", D1, "--layer", "nope", "--json"], "explain", "input", D1),
    ],
    ids=["missing-file", "unknown-option", "unknown-command", "missing-option", "unknown-layer"],
)
def test_json_errors_are_a_document(
    args: list[str], command: str | None, kind: str, file: str | None
) -> None:
    done = irpool(*args)
    assert done.returncode == 2
    line = one_line(done.stderr)
    document = _error_document(done)
    assert document["exit_code"] == 2 and document["kind"] == kind
    assert document["command"] == command
    assert str(document["message"]) in line
    where = document["where"]
    if file is None:
        assert where is None or isinstance(where, dict)
    else:
        assert isinstance(where, dict) and where["file"] == file


def test_without_json_a_failure_prints_nothing_on_stdout() -> None:
    done = irpool("check", "no/such.xml")
    assert done.returncode == 2 and done.stdout == ""


BLOCK_ONNX = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("onnx", "onnxruntime"):
            raise ImportError(f"No module named {name!r} (blocked by the test)")
        return None
sys.meta_path.insert(0, Block())
from irpool.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def _without_onnx(*args: str) -> object:
    import subprocess

    return subprocess.run(
        [sys.executable, "-c", BLOCK_ONNX, *args], capture_output=True, text=True, cwd=ROOT
    )


@pytest.mark.parametrize(
    "content",
    [b"this is not a model\n" * 20, bytes(range(256)) * 3, b"\x08\x07"],
    ids=["text", "binary", "no-graph"],
)
def test_garbage_onnx_is_invalid_input_with_or_without_onnx(content: bytes, tmp_path: Path) -> None:
    path = tmp_path / "garbage.onnx"
    path.write_bytes(content)
    for done in (_without_onnx("check", str(path)), irpool("check", str(path))):
        assert done.returncode == 2, done.stderr  # type: ignore[attr-defined]
        line = one_line(done.stderr)  # type: ignore[attr-defined]
        assert "not a readable ONNX model" in line and str(path) in line


def test_a_real_onnx_model_without_onnx_asks_for_it() -> None:
    done = _without_onnx("check", "--json", "fixtures/divergences/d2_maxpool_ceil.onnx")
    assert done.returncode == 3  # type: ignore[attr-defined]
    assert "pip install 'irpool[onnx]'" in one_line(done.stderr)  # type: ignore[attr-defined]
    document = _error_document(done)
    assert document["kind"] == "oracle-missing" and document["exit_code"] == 3


def test_explain_png_onto_an_existing_file_still_explains(tmp_path: Path) -> None:
    png = tmp_path / "d1.png"
    png.write_bytes(b"keep me")
    done = irpool("explain", D1, "--png", str(png))
    assert done.returncode == 2
    assert "output path exists; pass --force" in one_line(done.stderr)
    plain = irpool("explain", D1)
    assert plain.returncode == 0 and done.stdout == plain.stdout
    assert png.read_bytes() == b"keep me"


def test_explain_png_without_matplotlib_still_explains(tmp_path: Path) -> None:
    import subprocess

    png = tmp_path / "d1.png"
    block = BLOCK_ONNX.replace('("onnx", "onnxruntime")', '("matplotlib",)')
    done = subprocess.run(
        [sys.executable, "-c", block, "explain", D1, "--png", str(png)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 3
    assert "pip install 'irpool[plot]'" in one_line(done.stderr)
    plain = irpool("explain", D1)
    assert done.stdout == plain.stdout and plain.stdout  # the text comes all the same
    assert not png.exists()
