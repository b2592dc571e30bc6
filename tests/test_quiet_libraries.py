"""No library's own message reaches the user: a kernel failure onnxruntime logs on stderr
itself, numpy's RuntimeWarnings; irpool's one line is all stderr holds."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, irpool


@pytest.mark.oracle
def test_an_onnxruntime_kernel_failure_is_one_line(
    onnx: ModuleType, ort: ModuleType, tmp_path: Path
) -> None:
    from onnx import TensorProto, helper, numpy_helper

    inits = [
        numpy_helper.from_array(np.array(np.inf, np.float32), "xs"),
        numpy_helper.from_array(np.array(3, np.uint8), "xz"),
        numpy_helper.from_array(np.array(0.0, np.float32), "ys"),
        numpy_helper.from_array(np.array(1, np.uint8), "yz"),
    ]
    node = helper.make_node(
        "QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft"
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
        initializer=inits,
    )
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    path = tmp_path / "q.onnx"
    onnx.save(model, str(path))
    o = irpool("compare", str(path))
    assert o.returncode == 2, o.stdout + o.stderr
    assert o.stderr.count("\n") == 1 and o.stderr.startswith("irpool: "), o.stderr
    assert "out of computation range" in o.stderr


def test_numpy_warnings_do_not_reach_the_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a command computes, its RuntimeWarnings stay inside (IRPOOL_DEBUG shows them)."""
    import warnings

    from irpool import cli

    monkeypatch.delenv("IRPOOL_DEBUG", raising=False)

    real = cli._check_environment

    def noisy(*args: Any) -> Any:
        np.float32(1) / np.float32(0)  # divide by zero: numpy's RuntimeWarning
        warnings.warn("a library's deprecation", DeprecationWarning, stacklevel=1)
        return real(*args)

    monkeypatch.setattr(cli, "_check_environment", noisy)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert cli.main(["check", str(ROOT / "fixtures/ir/pool_zoo.xml")]) == 0
    assert seen == []
