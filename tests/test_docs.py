"""Every command example of the README and docs/ runs, and prints what the docs show.

A ```console block holds `$ irpool ...` lines, each followed by its expected output; a line
`...` in the expected output stands for any number of lines, and a duration (`0.21 s`) for any
duration. Paths under /tmp/ are moved into the test's own folder, and an example that writes
there is run twice (a reader may well run it again).  ```python blocks of docs/api.md
are executed.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from conftest import ROOT, irpool, need

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks(path: Path, kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", path.read_text(), flags=re.S)


def _examples() -> list[tuple[str, str, list[str]]]:
    found = []
    for path in DOCS:
        for block in _blocks(path, "console"):
            command: str | None = None
            expected: list[str] = []
            for line in block.splitlines():
                if line.startswith("$ "):
                    if command is not None:
                        found.append((path.name, command, expected))
                    command, expected = line[2:], []
                else:
                    expected.append(line)
            if command is not None:
                found.append((path.name, command, expected))
    return found


def _same_line(expected: str, got: str) -> bool:
    """Equal, except that a duration such as `0.21 s` matches any duration."""
    parts = re.split(r"\d+\.\d+ s\b", expected.rstrip())
    regex = r"[0-9.]+ s".join(re.escape(p) for p in parts)
    return re.fullmatch(regex, got.rstrip()) is not None


def _matches(expected: list[str], got: list[str]) -> bool:
    if not expected:
        return not got
    if expected[0] == "...":
        return any(_matches(expected[1:], got[i:]) for i in range(len(got) + 1))
    return bool(got) and _same_line(expected[0], got[0]) and _matches(expected[1:], got[1:])


EXAMPLES = _examples()


@pytest.mark.parametrize(
    "doc,command,expected", EXAMPLES, ids=[f"{d}:{c[:60]}" for d, c, _ in EXAMPLES]
)
def test_console_example(doc: str, command: str, expected: list[str], tmp_path: Path) -> None:
    # files the examples write under /tmp/ go to this test's own folder
    scratch = f"{tmp_path}/"
    args = shlex.split(command.replace("/tmp/", scratch))
    assert args[0] == "irpool", command
    if {"compare", "convert-report", "--verify"} & set(args):
        need("openvino", "openvino")
    if any(a.endswith((".pt2", ".pt")) for a in args):
        need("torch", "torch")
    if any(a.endswith(".keras") or "saved_model" in a for a in args):
        need("tensorflow", "tensorflow")
    out = irpool(*args[1:])
    got = (out.stdout + out.stderr).replace(scratch, "/tmp/").splitlines()
    assert _matches(expected, got), f"{doc}: `{command}` printed:\n" + "\n".join(got)
    if "/tmp/" in command:  # an example that writes files prints the same when run again
        again = irpool(*args[1:])
        got = (again.stdout + again.stderr).replace(scratch, "/tmp/").splitlines()
        assert _matches(expected, got), f"{doc}: `{command}` run twice printed:\n" + "\n".join(got)


def test_examples_exist() -> None:
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize(
    "block", _blocks(ROOT / "docs" / "api.md", "python") + _blocks(ROOT / "README.md", "python")
)
def test_api_examples_run(block: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    exec(compile(block, "docs/api.md", "exec"), {})
