"""Run a divergence case (irpool.cases) through irpool under each convention, or an oracle."""

from __future__ import annotations

from typing import Any

import numpy as np

from irpool.cases import Case, ir_net
from irpool.frontends.ir_xml import parse_text
from irpool.geometry import plan
from irpool.kernel import pool
from irpool.model import ELEMENT_TYPES
from irpool.ops import onnx as onnx_ops
from irpool.ops import torch as torch_ops
from irpool.shapes import infer

ET = {numpy: short for short, numpy in ELEMENT_TYPES.items()}


def input_of(case: Case) -> np.ndarray:
    return np.array(case.input, dtype=case.dtype).reshape(case.shape)


def irpool_ir(case: Case, convention: str = "openvino") -> list[np.ndarray]:
    assert case.openvino is not None
    x = input_of(case)
    layer = infer(parse_text(ir_net(case.openvino, x.shape, ET[case.dtype]), "case.xml"))
    values, indices = pool(x, layer.pooling[0].bound.plan(x.shape, x.dtype, convention))
    return [values] + ([indices] if indices is not None else [])


def irpool_onnx(case: Case, convention: str = "onnx") -> list[np.ndarray]:
    assert case.onnx is not None
    x = input_of(case)
    spec = onnx_ops.select(case.onnx.op, case.onnx.domain, case.onnx.opset)
    params = onnx_ops.params(spec, case.onnx.attrs, x.ndim)
    values, indices = pool(x, plan(params, x.shape, convention, dtype=x.dtype))
    return [values] + ([indices] if indices is not None else [])


def irpool_torch(case: Case) -> list[np.ndarray]:
    assert case.torch is not None
    x = input_of(case)
    params = torch_ops.params(case.torch.function, **case.torch.kwargs)
    values, indices = pool(x, plan(params, x.shape, "torch", dtype=x.dtype))
    return [values] + ([indices] if indices is not None else [])


def assert_outcome(got: list[np.ndarray], expected: Any, label: str) -> None:
    if expected.values is not None:
        want = np.array(expected.values, dtype=np.float64)
        have = got[0].astype(np.float64)
        assert have.shape == want.shape, f"{label}: shape {have.shape} vs {want.shape}"
        np.testing.assert_allclose(have, want, rtol=1e-6, atol=0, equal_nan=True, err_msg=label)
        zeros = want == 0
        assert np.array_equal(np.signbit(have[zeros]), np.signbit(want[zeros])), label
    if expected.indices is not None:
        assert len(got) > 1, f"{label}: no indices"
        np.testing.assert_array_equal(got[1], np.array(expected.indices), err_msg=label)
