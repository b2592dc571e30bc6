"""PyTorch: `irpool convert-report` when openvino keeps one layer for two identical pooling
calls on one tensor (TorchScript and torch.export).  The truth is openvino's converted model
(one AvgPool of the full size, checked here) and torch's own value of each call compared with
the layer it is paired with (`end_to_end_same`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from irpool.cli import main

pytestmark = pytest.mark.oracle


def _module(torch: ModuleType) -> Any:
    functional = torch.nn.functional

    class Twins(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            y = torch.relu(x)
            a = functional.avg_pool2d(y, 3, 1, 1)
            b = functional.avg_pool2d(y, 3, 1, 1)
            d = functional.max_pool2d(a * 2.0 + b, 2)
            return functional.avg_pool2d(d, 3, 1, 1) + 1

    return Twins().eval()


# TorchScript is slow here (its front end runs by default in test_convert_audit_torch.py)
@pytest.mark.parametrize("kind", [pytest.param("t.pt", marks=pytest.mark.slow), "t.pt2"])
def test_merged_twin_calls_share_their_layer(
    torch: ModuleType, ov: ModuleType, tmp_path: Path, kind: str, capsys: Any
) -> None:
    model = _module(torch)
    x = torch.rand(1, 3, 8, 8)
    path = tmp_path / kind
    if kind == "t.pt":
        torch.jit.trace(model, x).save(str(path))
    else:
        torch.export.save(torch.export.export(model, (x,)), str(path))
    converted = ov.convert_model(model, example_input=x, input=[(1, 3, 8, 8)])
    pools = sorted(
        tuple(op.get_output_partial_shape(0).to_shape())
        for op in converted.get_ordered_ops()
        if op.get_type_name() == "AvgPool"
    )
    assert pools == [(1, 3, 4, 4), (1, 3, 8, 8)]  # openvino merged the twins

    code = main(["convert-report", os.fspath(path), "--input-shape", "1,3,8,8", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    ops = report["ops"]
    assert [op["same"] for op in ops] == [True] * 4
    assert all(op["end_to_end_same"] is not False for op in ops)
    layers = [op["openvino_layers"][0]["name"] for op in ops]
    assert layers[0] == layers[1] and len(set(layers)) == 3
    assert ops[0]["merged_with"] == [ops[1]["name"]]
    assert ops[1]["merged_with"] == [ops[0]["name"]]
    assert not ops[2]["merged_with"] and not ops[3]["merged_with"]
    assert report["merged_layers"] == [
        {"layer": layers[0], "ops": [ops[0]["name"], ops[1]["name"]]}
    ]
    for op in ops:
        (out, *_) = op["outputs"]
        assert out["openvino_shape"] == out["source_shape"]
