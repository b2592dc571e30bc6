"""TensorFlow: `irpool convert-report` on SavedModel directories and .keras files against
TensorFlow and openvino run end to end, and irpool's `tf` convention against TensorFlow's own
pooling ops.

These need tensorflow and openvino (they fail instead of skipping with IRPOOL_REQUIRE_TF=1).
TensorFlow is imported once (5-9 s) and each model built and converted once per session.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import sweep

from irpool.cli import main
from irpool.geometry import plan
from irpool.kernel import pool
from irpool.ops import tensorflow as tf_ops

pytestmark = pytest.mark.oracle


@dataclass
class Model:
    path: Path
    x: np.ndarray
    differs: bool
    """The truth: TensorFlow's outputs and openvino's (its conversion of the model) differ."""


def _keras(tf: ModuleType, folder: Path) -> tuple[Any, Any]:
    import keras

    keras.utils.set_random_seed(0)
    layers = keras.layers
    inp = keras.Input((9, 9, 3), name="x")
    y = layers.Conv2D(4, 3, padding="same", name="c1")(inp)
    y = layers.MaxPooling2D(2, name="mp")(y)
    y = layers.AveragePooling2D(3, 2, padding="same", name="ap")(y)
    a = layers.GlobalAveragePooling2D(name="gap")(y)
    b = layers.AveragePooling1D(3, 2, padding="same", name="ap1")(layers.Reshape((9 * 9, 3))(inp))
    model = keras.Model(inp, [a, b], name="k_net")
    model.save(folder / "model.keras")
    model.export(str(folder / "saved_model"), verbose=False)
    return model, lambda x: [t.numpy() for t in model(x)]


def _modules(tf: ModuleType) -> dict[str, tuple[Any, tuple[int, ...]]]:
    class Nn(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, 8, 8, 2], tf.float32)])
        def __call__(self, x: Any) -> Any:
            a = tf.nn.avg_pool2d(x, 3, 2, "SAME", name="avg_same")
            b = tf.nn.max_pool2d(x, 3, 2, "VALID", name="max_valid")
            c = tf.nn.max_pool2d(x, 2, 1, [[0, 0], [1, 1], [1, 1], [0, 0]], name="max_explicit")
            return a, b, c

    class Argmax(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, 6, 7, 1], tf.float32)])
        def __call__(self, x: Any) -> Any:
            return tf.nn.max_pool_with_argmax(x, 2, 1, "VALID", name="argmax")[0]

    class Channels(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, 6, 6, 4], tf.float32)])
        def __call__(self, x: Any) -> Any:
            return tf.nn.max_pool2d(x, [1, 1, 1, 2], [1, 1, 1, 2], "VALID", name="chan_max")

    class GlobalMax(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, 3, 3, 3], tf.float32)])
        def __call__(self, x: Any) -> Any:
            return tf.reduce_max(x, axis=[1, 2], name="gmax")

    return {
        "nn": (Nn(), (1, 8, 8, 2)),
        "argmax": (Argmax(), (1, 6, 7, 1)),
        "channels": (Channels(), (1, 6, 6, 4)),
        "global_nan": (GlobalMax(), (1, 3, 3, 3)),
    }


@pytest.fixture(scope="session")
def tf_models(
    tf: ModuleType, ov: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Model]:
    root = tmp_path_factory.mktemp("tf_zoo")
    core = ov.Core()

    def truth(path: Path, x: np.ndarray, want: list[np.ndarray]) -> bool:
        converted = ov.convert_model(str(path), input=[list(x.shape)])
        compiled = core.compile_model(converted, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        got = [np.asarray(v) for v in compiled({0: x}).values()]
        return any(
            g.shape != w.shape or not np.allclose(g, w, rtol=1e-5, atol=1e-6, equal_nan=True)
            for g, w in zip(got, want, strict=True)
        )

    models: dict[str, Model] = {}
    rng = np.random.default_rng(0)
    folder = root / "k_net"
    folder.mkdir()
    _, run = _keras(tf, folder)
    x = rng.uniform(-1, 1, (1, 9, 9, 3)).astype(np.float32)
    differs = truth(folder / "saved_model", x, run(x))
    np.save(folder / "x.npy", x)
    models["keras"] = Model(folder / "model.keras", x, differs)
    models["saved_model"] = Model(folder / "saved_model", x, differs)
    for key, (module, shape) in _modules(tf).items():
        folder = root / key
        folder.mkdir()
        tf.saved_model.save(module, str(folder / "saved_model"))
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        if key == "global_nan":
            x.reshape(-1)[[0, 4]] = np.nan  # channel 0 and 1 see a NaN
            x[0, :, :, 2] = -np.inf  # channel 2 is all -inf
        np.save(folder / "x.npy", x)
        out = module(tf.constant(x))
        want = [t.numpy() for t in (out if isinstance(out, (tuple, list)) else (out,))]
        models[key] = Model(folder / "saved_model", x, truth(folder / "saved_model", x, want))
    return models


EXPECTED = {
    "keras": None,
    "saved_model": None,
    "nn": None,
    "argmax": "D36",
    "channels": "D37",
    "global_nan": "D38",
}
"""The divergence each model shows (measured with tensorflow 2.21 and openvino 2026.4.1)."""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["convert-report", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_measured_divergences_are_the_truth(tf_models: dict[str, Model]) -> None:
    wrong = [k for k, m in tf_models.items() if m.differs != (EXPECTED[k] is not None)]
    assert not wrong, f"TensorFlow and openvino now disagree otherwise on {wrong}"


QUICK = ("keras", "saved_model", "argmax")
"""The models of the default run (each report costs seconds of TensorFlow): the Keras and
SavedModel routes and one divergence (D36); the other models are slow (D38 is checked by
default on the IR, test_global_max_ir_layer_against_tensorflow)."""


@pytest.mark.parametrize(
    "key",
    [pytest.param(k, marks=[] if k in QUICK else [pytest.mark.slow]) for k in sorted(EXPECTED)],
)
def test_convert_report_exits_1_exactly_when_the_conversion_differs(
    key: str, tf_models: dict[str, Model], capsys: pytest.CaptureFixture[str]
) -> None:
    m = tf_models[key]
    x = m.path.parent / "x.npy"
    code, out, err = run(capsys, str(m.path), "-i", str(x), "--json")
    assert code == (1 if m.differs else 0), out + err
    report = json.loads(out)
    assert report["framework"] == "tf" and report["schema"] == "irpool.convert-report/3"
    differing = [op for op in report["ops"] if op["same"] is False]
    if EXPECTED[key] is None:
        assert not differing and report["ops"]
    else:
        assert [op["divergence_id"] for op in differing] == [EXPECTED[key]]
    assert all(op["openvino_layers"] for op in report["ops"])


@pytest.mark.slow  # the same Keras model's report as test_convert_report_exits_1...[keras]
def test_keras_ops_are_named_and_found(
    tf_models: dict[str, Model], capsys: pytest.CaptureFixture[str]
) -> None:
    m = tf_models["keras"]
    code, out, _ = run(capsys, str(m.path), "-i", str(m.path.parent / "x.npy"))
    assert code == 0
    ops = [line for line in out.splitlines() if line.startswith("  same")]
    assert len(ops) == 4, out  # MaxPool, AvgPool (same), GlobalAveragePooling (Mean), AvgPool1D
    assert any("mp" in line and "MaxPool-8" in line for line in ops)
    assert any("gap" in line and "ReduceMean-1" in line for line in ops)


def test_the_ir_of_a_keras_model_is_detected_and_compared(
    tf_models: dict[str, Model],
    tf: ModuleType,
    ov: ModuleType,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    m = tf_models["saved_model"]
    ov.save_model(ov.convert_model(str(m.path), input=[[1, 9, 9, 3]]), tmp_path / "k.xml")
    code, out, err = run(capsys, str(tmp_path / "k.xml"), "-i", str(m.path.parent / "x.npy"))
    assert code == 0, out + err
    assert "source: TensorFlow, detected" in out and "tf.nn.avg_pool2d(" in out
    assert 'padding="SAME"' in out and "tf.reduce_mean(" in out


def test_global_max_ir_layer_against_tensorflow(
    tf_models: dict[str, Model], ov: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An IR's ReduceMax of TensorFlow origin, with NaN and -inf: TensorFlow itself computes
    the layer (tf.reduce_max), and the difference is D38."""
    m = tf_models["global_nan"]
    ov.save_model(ov.convert_model(str(m.path)), tmp_path / "g.xml")
    code, out, _ = run(capsys, str(tmp_path / "g.xml"), "-i", str(m.path.parent / "x.npy"))
    assert code == 1 and "D38" in out and "tf.reduce_max(" in out


def _tf_call(
    tf: ModuleType, kind: str, x: np.ndarray, k: list[int], s: list[int], padding: str
) -> np.ndarray:
    function = tf.nn.avg_pool if kind == "avg" else tf.nn.max_pool
    return np.asarray(function(tf.constant(x), k, s, padding).numpy())


def test_tf_convention_matches_tensorflow(tf: ModuleType) -> None:
    """irpool's tf convention, given TensorFlow's attributes (ops/tensorflow.py), against
    tf.nn.avg_pool / tf.nn.max_pool on random 1-D to 3-D calls, NaN and -inf included."""
    rng = random.Random(5)
    nrng = np.random.default_rng(5)
    compared, failures = 0, []
    calls = sweep(quick=80, full=300)
    for _ in range(calls):
        kind = rng.choice(["avg", "max"])
        rank = rng.choice([1, 2, 3])
        k = [rng.randint(1, 4) for _ in range(rank)]
        s = [rng.randint(1, 3) for _ in range(rank)]
        padding = rng.choice(["SAME", "VALID"])
        # a VALID window larger than the input crashes TensorFlow 2.21 (SIGFPE) for some ranks
        spatial = [max(rng.randint(1, 8), kk if padding == "VALID" else 1) for kk in k]
        shape = (rng.randint(1, 2), *spatial, rng.randint(1, 3))
        x = nrng.standard_normal(shape).astype(np.float32)
        if kind == "max" and rng.random() < 0.3:
            x[nrng.random(shape) < 0.3] = rng.choice([np.nan, -np.inf])
        try:
            want = _tf_call(tf, kind, x, k, s, padding)
        except Exception:
            continue  # TensorFlow refuses the call
        op_type = "AvgPool" if kind == "avg" else "MaxPool"
        params = tf_ops.params(op_type, [1, *k, 1], [1, *s, 1], padding, "NHWC")
        assert params is not None
        xc = np.moveaxis(x, -1, 1)
        got, _ = pool(xc, plan(params, xc.shape, "tf", dtype=xc.dtype))
        got = np.moveaxis(got, 1, -1)
        compared += 1
        if got.shape != want.shape:
            failures.append(
                f"{kind} k{k} s{s} {padding} {shape}: shape {got.shape} vs {want.shape}"
            )
        elif not np.allclose(got, want, rtol=1e-6, atol=1e-6, equal_nan=True):
            failures.append(f"{kind} k{k} s{s} {padding} {shape}: values differ")
    assert not failures, f"{len(failures)} of {compared}:\n" + "\n".join(failures[:10])
    assert compared >= calls * 2 // 3


def test_tf_convention_refuses_what_tensorflow_cannot_express() -> None:
    from irpool.errors import SpecError
    from irpool.geometry import PoolParams

    ceil = PoolParams("t", "max", (3,), (2,), (1,), ((1, 1),), rounding="ceil")
    with pytest.raises(SpecError, match="TensorFlow has no ceil rounding"):
        plan(ceil, (1, 1, 6), "tf")
    assert plan(ceil, (1, 1, 7), "tf").output_shape == (1, 1, 4)  # ceil = floor here
    counted = PoolParams("t", "mean", (3,), (1,), (1,), ((1, 1),), count_pad=True)
    with pytest.raises(SpecError, match="never counts padding"):
        plan(counted, (1, 1, 6), "tf")
    assert tf_ops.call_for(ceil)[0] is None and "rounds sizes down" in str(tf_ops.call_for(ceil)[1])


def _same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Per element: the same number with the same sign (zeros included), or both NaN."""
    got, want = got.astype(np.float32), want.astype(np.float32)
    nan = np.isnan(got) & np.isnan(want)
    return nan | ((got == want) & (np.signbit(got) == np.signbit(want)))


def compare_3d_pools(tf: ModuleType, cases: int, seed: int) -> list[str]:
    """irpool's tf convention against tf.nn.max_pool3d/avg_pool3d on random calls: float32 (and
    bfloat16 maxima), 1 to 33 channels (Eigen's packets of 8 and the elements it takes one at a time),
    windows of up to 64 taps, strides up to 5 (SAME pads that would be negative), NaN, -inf and
    both zeros; maxima bit for bit.  Returns the calls that differ."""
    from irpool.model import bfloat16

    bf16 = bfloat16()
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    failures = []
    for _ in range(cases):
        kind = rng.choice(["avg", "max", "max"])
        k = [rng.randint(1, 4) for _ in range(3)]
        s = [rng.randint(1, 5) for _ in range(3)]
        padding = rng.choice(["SAME", "VALID"])
        spatial = [max(rng.randint(1, 8), kk if padding == "VALID" else 1) for kk in k]
        shape = (rng.randint(1, 2), *spatial, rng.choice([1, 2, 3, 7, 8, 9, 12, 16, 17, 33]))
        x = nrng.standard_normal(shape).astype(np.float32)
        if kind == "max":
            if rng.random() < 0.3:
                x = np.round(x) * np.float32(0.0)  # ties of +0.0 and -0.0
            for special in (np.nan, -np.inf, -0.0):
                if rng.random() < 0.5:
                    x[nrng.random(shape) < rng.random() * 0.6] = special
        # bfloat16 means: TensorFlow sums in bfloat16 (not modelled), so maxima only
        use_bf16 = bf16 is not None and kind == "max" and rng.random() < 0.3
        data = tf.constant(x)
        if use_bf16:
            data = tf.cast(data, tf.bfloat16)
            x = x.astype(bf16)
        function = tf.nn.avg_pool3d if kind == "avg" else tf.nn.max_pool3d
        want = tf.cast(function(data, k, s, padding), tf.float32).numpy()
        op_type = "AvgPool" if kind == "avg" else "MaxPool"
        params = tf_ops.params(op_type, [1, *k, 1], [1, *s, 1], padding, "NHWC")
        assert params is not None
        xc = np.moveaxis(x, -1, 1)
        got, _ = pool(xc, plan(params, xc.shape, "tf", dtype=xc.dtype))
        got = np.moveaxis(got, 1, -1).astype(np.float32)
        name = f"{kind} k{k} s{s} {padding} {shape} {x.dtype.name}"
        if got.shape != want.shape:
            failures.append(f"{name}: shape {got.shape} vs {want.shape}")
        elif kind == "max" and not _same_bits(got, want).all():
            bad = ~_same_bits(got, want)
            failures.append(f"{name}: {got[bad][:3]} vs TensorFlow's {want[bad][:3]}")
        elif kind == "avg" and not np.allclose(got, want, rtol=1e-6, atol=1e-6):
            failures.append(f"{name}: means differ")
    return failures


def test_tf_3d_pools_match_tensorflow_bit_for_bit(tf: ModuleType) -> None:
    """3-D pools run on oneDNN or on Eigen's cuboid kernels depending on the CPU
    (cpu.tf_uses_onednn): whichever this machine runs, irpool gives its numbers."""
    failures = compare_3d_pools(tf, sweep(quick=100, full=400), 11)
    assert not failures, f"{len(failures)} of 400:\n" + "\n".join(failures[:10])


@pytest.mark.slow  # a second TensorFlow process
def test_tf_3d_pools_under_the_other_onednn_setting(tf: ModuleType) -> None:
    """The same comparison in a TensorFlow started with TF_ENABLE_ONEDNN_OPTS flipped, so both
    of its 3-D kernels (oneDNN, Eigen's cuboid pooling) are held to the truth on any machine."""
    import os
    import subprocess
    import sys

    from irpool.cpu import tf_uses_onednn

    here = Path(__file__).resolve().parent
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="0" if tf_uses_onednn() else "1")
    env["PYTHONPATH"] = os.pathsep.join([str(here.parent), str(here)])
    script = (
        "from irpool.oracles import tensorflow_rt\n"
        "import test_convert_audit_tf as t\n"
        f"failures = t.compare_3d_pools(tensorflow_rt.load(), {sweep(quick=40, full=150)}, 12)\n"
        "print('\\n'.join(failures))\n"
        "raise SystemExit(1 if failures else 0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_tf_3d_same_windows_as_measured(tf: ModuleType) -> None:
    """The measured shift: max_pool3d and avg_pool3d with k=1, s=3, SAME on 6 elements read
    elements 0 and 3 on oneDNN, 1 and 4 on Eigen's cuboid kernels (its SAME pad is
    trunc((3 + 1 - 6) / 2) = -1); 2-D pools read 0 and 3 either way."""
    from irpool.cpu import tf_uses_onednn

    x = np.arange(6, dtype=np.float32)
    rows = 0 if tf_uses_onednn() else 1
    for function in (tf.nn.max_pool3d, tf.nn.avg_pool3d):
        for axis in range(3):
            shape = [1, 1, 1, 1, 1]
            shape[1 + axis] = 6
            k = [1, 1, 1]
            s = [1, 1, 1]
            s[axis] = 3
            want = function(tf.constant(x.reshape(shape)), k, s, "SAME").numpy().ravel()
            assert list(want) == [rows, rows + 3]
            params = tf_ops.params("MaxPool", [1, *k, 1], [1, *s, 1], "SAME", "NHWC")
            assert params is not None
            xc = np.moveaxis(x.reshape(shape), -1, 1)
            got, _ = pool(xc, plan(params, xc.shape, "tf"))
            assert list(got.ravel()) == list(want)
    two_d = tf.nn.max_pool2d(tf.constant(x.reshape(1, 6, 1, 1)), [1, 1], [3, 1], "SAME")
    assert list(two_d.numpy().ravel()) == [0, 3]
