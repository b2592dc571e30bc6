"""Shared test set-up: oracle availability, hypothesis profiles, temporary IR files, and the
`irpool` command run as a subprocess."""

from __future__ import annotations

import importlib
import io
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
"""The repository: the folder `python -m irpool` runs in, so that it imports this checkout's
irpool, and the base of the paths the tests name (fixtures/...)."""

REQUIRE_ORACLES = os.environ.get("IRPOOL_REQUIRE_ORACLES") == "1"
REQUIRE_TORCH = os.environ.get("IRPOOL_REQUIRE_TORCH") == "1"
REQUIRE_TF = os.environ.get("IRPOOL_REQUIRE_TF") == "1"
SLOW = os.environ.get("IRPOOL_SLOW") == "1"
"""IRPOOL_SLOW=1 (set by .ci/run) runs the tests marked slow: the long sweeps against the
runtimes and the real networks. Without it they are skipped, each with the reason in pytest's
summary, so that the default `python -m pytest` stays a few minutes on two cores."""


def sweep(quick: int, full: int) -> int:
    """How many random cases a sweep draws: `full` with IRPOOL_SLOW=1 (CI), `quick` in the
    default run, which keeps every sweep (and so every runtime it checks) at a smaller size."""
    return full if SLOW else quick


settings.register_profile(
    "dev", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)


EXTRAS = ("openvino", "onnx", "bf16", "plot", "torch", "tensorflow", "fast", "fuzz", "nncf", "dev")
"""The extras pyproject.toml declares (optional-dependencies), installed as irpool[extra]."""


def install_hint(package: str) -> str:
    """The pip command that brings `package` in: an extra of irpool, or a plain package."""
    return f"pip install 'irpool[{package}]'" if package in EXTRAS else f"pip install {package}"


def irpool(
    *args: str,
    cwd: Path | str = ROOT,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float | None = None,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`irpool ARGS` (in ROOT unless `cwd` is given), with `input` on its stdin; its exit code,
    stdout and stderr as text (newlines translated as subprocess's text mode translates them).

    It runs in this process (irpool.cli.main, with file descriptors 0-2 and sys.stdin/stdout/
    stderr pointed at files of its own, so what a runtime's C++ code writes is captured too):
    a `python -m irpool` subprocess costs 0.5-1 s of CPU in start-up and imports. With `env`
    (its whole environment), `timeout`, or process=True, it is a real `python -m irpool`
    subprocess: where the environment, a hang or the process itself is under test."""
    if process or env is not None or timeout is not None:
        return subprocess.run(
            [sys.executable, "-m", "irpool", *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            input=input,
            timeout=timeout,
        )
    return _in_process(list(args), Path(cwd), input)


def _in_process(args: list[str], cwd: Path, input: str | None) -> subprocess.CompletedProcess[str]:
    from irpool.cli import main

    def text(f: Any) -> str:
        f.seek(0)
        raw: bytes = f.read()
        return raw.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")

    with (
        tempfile.TemporaryFile() as stdin,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        stdin.write((input or "").encode())
        stdin.seek(0)
        saved = (sys.stdin, sys.stdout, sys.stderr)
        for stream in saved[1:]:
            stream.flush()
        saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
        here = os.getcwd()
        streams: list[Any] = []
        # as in a new process, the root logger has no handlers (pytest's are put back after):
        # a warning goes through logging's last resort to the command's stderr
        root = logging.getLogger()
        handlers = root.handlers[:]
        root.handlers.clear()
        try:
            for fd, f in zip((0, 1, 2), (stdin, out, err), strict=True):
                os.dup2(f.fileno(), fd)
            streams = [
                io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8"),
                io.TextIOWrapper(io.FileIO(1, "w", closefd=False), "utf-8", write_through=True),
                io.TextIOWrapper(io.FileIO(2, "w", closefd=False), "utf-8", write_through=True),
            ]
            sys.stdin, sys.stdout, sys.stderr = streams
            os.chdir(cwd)
            try:
                code = main(args)
            except SystemExit as e:  # argparse's --help and --version
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        finally:
            root.handlers[:] = handlers
            os.chdir(here)
            for stream in streams:
                stream.close()  # flushed; the descriptors stay open (closefd=False)
            sys.stdin, sys.stdout, sys.stderr = saved
            for fd, copy in zip((0, 1, 2), saved_fds, strict=True):
                os.dup2(copy, fd)
                os.close(copy)
        return subprocess.CompletedProcess(["irpool", *args], code, text(out), text(err))


def maxpool_chain(n: int) -> str:
    """IR text of a Parameter and n - 1 MaxPool layers, each fed by the one before."""
    layers = [
        '<layer id="0" name="x" type="Parameter" version="opset1"><data shape="1,1,4" '
        'element_type="f32"/><output><port id="0"><dim>1</dim><dim>1</dim><dim>4</dim>'
        "</port></output></layer>"
    ]
    edges = []
    for i in range(1, n):
        layers.append(
            f'<layer id="{i}" name="p{i}" type="MaxPool" version="opset1"><data kernel="1" '
            'strides="1"/><input><port id="0"><dim>1</dim><dim>1</dim><dim>4</dim></port></input>'
            '<output><port id="1"><dim>1</dim><dim>1</dim><dim>4</dim></port></output></layer>'
        )
        edges.append(
            f'<edge from-layer="{i - 1}" from-port="{0 if i == 1 else 1}" '
            f'to-layer="{i}" to-port="0"/>'
        )
    return (
        '<net name="c" version="11"><layers>'
        + "".join(layers)
        + "</layers><edges>"
        + "".join(edges)
        + "</edges></net>"
    )


def need(module: str, package: str) -> ModuleType:
    """Import an oracle; skip with the reason, or fail when IRPOOL_REQUIRE_ORACLES=1.
    `package` is the irpool extra that installs it (EXTRAS) or else the package to install."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if module.startswith("torch"):
            required = REQUIRE_TORCH
        elif module.startswith(("tensorflow", "keras")):
            required = REQUIRE_TF
        else:
            required = REQUIRE_ORACLES
        message = f"{module} is not installed ({e}); {install_hint(package)}"
        if required:
            pytest.fail(f"oracle required by the environment but missing: {message}")
        pytest.skip(message)


def _oracle_fixture(name: str, module: str, package: str) -> Any:
    """A session fixture `name` giving the oracle `module` (need(module, package))."""

    def fixture() -> ModuleType:
        return need(module, package)

    return pytest.fixture(scope="session", name=name)(fixture)


ov = _oracle_fixture("ov", "openvino", "openvino")
ort = _oracle_fixture("ort", "onnxruntime", "onnx")
onnx = _oracle_fixture("onnx", "onnx", "onnx")
torch = _oracle_fixture("torch", "torch", "torch")


@pytest.fixture(scope="session")
def tf() -> ModuleType:
    """tensorflow, imported once per session (5-9 s), its C++ start-up lines dropped."""
    need("tensorflow", "tensorflow")
    from irpool.oracles import tensorflow_rt

    module: ModuleType = tensorflow_rt.load()
    return module


def pytest_configure(config: pytest.Config) -> None:
    """openvino's converter (convert_model) sends usage telemetry, each event from a forked
    process that tries the network: about seven forks of the whole test process per conversion,
    which cost more CPU than the conversions themselves (measured: 420 s of child CPU in one
    default run). The tests send none; CI=true turns it off too, as .ci/run's environment does."""
    try:
        from openvino_telemetry.backend import backend_ga4
    except ImportError:
        return
    backend_ga4.GA4Backend.send = lambda self, message: None  # type: ignore[method-assign]


settings.register_profile(
    "long", max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if REQUIRE_ORACLES or SLOW else "dev")
)


SLOW_REASON = (
    "slow sweep, skipped by default: IRPOOL_SLOW=1 or pytest -m slow runs it (.ci/run does)"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Opt-in tests: the slow sweeps (`IRPOOL_SLOW=1`, or a -m expression naming slow) and the
    fuzz campaign (`-m fuzz` or IRPOOL_FUZZ=N)."""
    markexpr = config.getoption("markexpr") or ""
    fuzz = "fuzz" in markexpr or bool(os.environ.get("IRPOOL_FUZZ"))
    slow = SLOW or "slow" in markexpr
    skip_fuzz = pytest.mark.skip(reason="fuzz campaign is opt-in: pytest -m fuzz, or IRPOOL_FUZZ=N")
    skip_slow = pytest.mark.skip(reason=SLOW_REASON)
    for item in items:
        # the markers, not the keywords: those hold the folder names too (a checkout in a
        # folder called fuzz or slow would skip everything)
        if item.get_closest_marker("fuzz") is not None and not fuzz:
            item.add_marker(skip_fuzz)
        elif item.get_closest_marker("slow") is not None and not slow:
            item.add_marker(skip_slow)


def pytest_report_header(config: pytest.Config) -> str:
    """The first lines of a run say whether the slow sweeps are in it."""
    if SLOW or "slow" in (config.getoption("markexpr") or ""):
        return "irpool: slow sweeps on"
    return "irpool: slow sweeps skipped (IRPOOL_SLOW=1 runs them; .ci/run does)"


@pytest.fixture(scope="session")
def chromium() -> str:
    """The headless Chromium the HTML tests load pages in (the system package); skip without
    it, or fail when IRPOOL_REQUIRE_ORACLES=1 (CI installs it)."""
    from headless import find_chromium

    found = find_chromium()
    if found is None:
        message = "Chromium is not installed; apt-get install chromium"
        if REQUIRE_ORACLES:
            pytest.fail(f"required by the environment but missing: {message}")
        pytest.skip(message)
    return found
