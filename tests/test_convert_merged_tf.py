"""TensorFlow: `irpool convert-report` when openvino keeps one layer for several identical
pooling ops on one tensor (as in keras.applications' NASNetMobile, whose normal and reduction
cells pool one tensor twice the same way).

The truths are openvino's and TensorFlow's own: openvino's converted model holds one AvgPool
for the two identical Keras pools (checked here, not assumed), and each op's output as
TensorFlow computes it in the whole model (fetched by irpool, compared as `end_to_end_same`)
must equal the openvino layer it is paired with, shape and values.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from irpool.cli import main

pytestmark = pytest.mark.oracle

SHAPE = (1, 8, 8, 4)


def _model(folder: Path) -> dict[str, tuple[int, ...]]:
    """Two identical pools of one tensor feeding different layers, a max pool of the same
    window on it, and a later pool with the twins' attributes on a smaller tensor (the layer
    an order-only pairing took for the second twin).  The Keras output shape of each pool."""
    import keras

    keras.utils.set_random_seed(0)
    layers = keras.layers
    inp = keras.Input(SHAPE[1:], name="x")
    y = layers.Conv2D(4, 1, name="c1")(inp)
    left = layers.AveragePooling2D(3, 1, padding="same", name="left_ap")(y)
    right = layers.AveragePooling2D(3, 1, padding="same", name="right_ap")(y)
    other = layers.MaxPooling2D(3, 1, padding="same", name="other_mp")(y)
    z = layers.Add(name="add")([layers.Conv2D(4, 1, name="c2")(left), right, other])
    down = layers.MaxPooling2D(2, name="down_mp")(z)
    late = layers.AveragePooling2D(3, 1, padding="same", name="late_ap")(down)
    model = keras.Model(inp, late, name="twins")
    model.save(folder / "model.keras")
    model.export(str(folder / "saved_model"), verbose=False)
    names = ("left_ap", "right_ap", "other_mp", "down_mp", "late_ap")
    return {n: tuple(int(d) for d in model.get_layer(n).output.shape[1:]) for n in names}


@pytest.fixture(scope="module")
def twins(tf: ModuleType, ov: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("twins")
    shapes = _model(folder)
    converted = ov.convert_model(str(folder / "saved_model"), input=[list(SHAPE)])
    pools = [
        tuple(int(d) for d in op.get_output_partial_shape(0).to_shape())
        for op in converted.get_ordered_ops()
        if op.get_type_name() == "AvgPool"
    ]
    return folder, shapes, pools


def test_openvino_merges_the_twin_pools(twins: Any) -> None:
    """The premise, from openvino itself: 3 Keras average pools, 2 AvgPool layers."""
    _, _, pools = twins
    assert sorted(pools) == [(1, 4, 4, 4), (1, 4, 8, 8)]


# the SavedModel route is slow (its front end runs by default in test_convert_audit_tf.py)
@pytest.mark.parametrize(
    "which", ["model.keras", pytest.param("saved_model", marks=pytest.mark.slow)]
)
def test_convert_report_pairs_merged_twins_with_their_layer(
    twins: Any, which: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, shapes, _ = twins
    path = os.fspath(folder / which)
    code = main(["convert-report", path, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report
    ops = {next(n for n in shapes if f"/{n}" in op["name"]): op for op in report["ops"]}
    assert sorted(ops) == sorted(shapes)
    for name, op in ops.items():
        (out,) = op["outputs"]
        assert op["same"] is True and op["end_to_end_same"] is True, (name, op)
        want = [1, *shapes[name]]
        assert json.loads(out["source_shape"]) == want
        assert json.loads(out["openvino_shape"]) == want  # shown in the op's layout
    layer = {name: op["openvino_layers"][0]["name"] for name, op in ops.items()}
    assert layer["left_ap"] == layer["right_ap"]
    assert len({layer[n] for n in ("left_ap", "other_mp", "down_mp", "late_ap")}) == 4
    assert ops["left_ap"]["merged_with"] == [ops["right_ap"]["name"]]
    assert ops["right_ap"]["merged_with"] == [ops["left_ap"]["name"]]
    assert all(not ops[n]["merged_with"] for n in ("other_mp", "down_mp", "late_ap"))
    assert report["merged_layers"] == [
        {"layer": layer["left_ap"], "ops": [ops["left_ap"]["name"], ops["right_ap"]["name"]]}
    ]

    code = main(["convert-report", path])
    text = capsys.readouterr().out
    assert code == 0
    # (openvino numbers the layers of each conversion anew: the name differs from the JSON's)
    assert text.count("as one layer (") == 2
    assert f'this op and "{ops["right_ap"]["name"]}" as one layer' in text
    assert "2 ops became 1 merged layer(s)" in text
    assert "DIFF" not in text


@pytest.mark.slow
def test_nasnet_mobile_pairs_every_pool(
    tf: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """keras.applications' NASNetMobile (random weights): openvino merges 16 pairs of identical
    pools; every op is paired with a layer of its shape and computed the same."""
    import keras

    keras.applications.NASNetMobile(weights=None).save(tmp_path / "nasnet.keras")
    code = main(["convert-report", os.fspath(tmp_path / "nasnet.keras"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert all(op["same"] is True for op in report["ops"])
    for op in report["ops"]:
        for out in op["outputs"]:
            source = json.loads(out["source_shape"])
            got = json.loads(out["openvino_shape"])
            assert np.prod(source) == np.prod(got), op["name"]
    merged = report["merged_layers"]
    assert len(merged) == 16 and all(len(m["ops"]) == 2 for m in merged)
