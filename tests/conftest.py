"""Shared test set-up: oracle availability, hypothesis profiles, temporary IR files."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

REQUIRE_ORACLES = os.environ.get("IRPOOL_REQUIRE_ORACLES") == "1"
REQUIRE_TORCH = os.environ.get("IRPOOL_REQUIRE_TORCH") == "1"
REQUIRE_TF = os.environ.get("IRPOOL_REQUIRE_TF") == "1"

settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)


EXTRAS = ("openvino", "onnx", "bf16", "plot", "torch", "tensorflow", "dev")
"""The extras pyproject.toml declares (optional-dependencies), installed as irpool[extra]."""


def install_hint(package: str) -> str:
    """The pip command that brings `package` in: an extra of irpool, or a plain package."""
    return f"pip install 'irpool[{package}]'" if package in EXTRAS else f"pip install {package}"


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


@pytest.fixture(scope="session")
def ov() -> ModuleType:
    return need("openvino", "openvino")


@pytest.fixture(scope="session")
def ort() -> ModuleType:
    return need("onnxruntime", "onnx")


@pytest.fixture(scope="session")
def onnx() -> ModuleType:
    return need("onnx", "onnx")


@pytest.fixture(scope="session")
def torch() -> ModuleType:
    return need("torch", "torch")


@pytest.fixture(scope="session")
def tf() -> ModuleType:
    """tensorflow, imported once per session (5-9 s), its C++ start-up lines dropped."""
    need("tensorflow", "tensorflow")
    from irpool.oracles import tensorflow_rt

    module: ModuleType = tensorflow_rt.load()
    return module


settings.register_profile(
    "long", max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if REQUIRE_ORACLES else "dev"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The fuzz campaign runs only when asked for: `-m fuzz` or IRPOOL_FUZZ=N."""
    if "fuzz" in (config.getoption("markexpr") or "") or os.environ.get("IRPOOL_FUZZ"):
        return
    skip = pytest.mark.skip(reason="fuzz campaign is opt-in: pytest -m fuzz, or IRPOOL_FUZZ=N")
    for item in items:
        if "fuzz" in item.keywords:
            item.add_marker(skip)
