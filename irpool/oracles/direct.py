"""Runtimes called directly on one op, for `irpool fuzz`: a PyTorch functional call, and an
ONNX model as openvino's ONNX front end converts it (saved as IR for irpool to read).

Imported lazily like every oracle; a missing runtime raises OracleMissing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from . import openvino_rt, torch_rt

Array = npt.NDArray[Any]


def _to_torch(torch: Any, x: Array) -> Any:
    if x.dtype.name == "bfloat16":
        return torch.from_numpy(np.ascontiguousarray(x).view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(x).copy())


def _from_torch(torch: Any, t: Any, like: np.dtype[Any]) -> Array:
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return np.asarray(t.view(torch.int16).numpy()).view(like)
    return np.asarray(t.numpy())


def torch_call(function: str, x: Array, kwargs: Mapping[str, Any]) -> list[Array]:
    """torch.nn.functional.<function>(x, **kwargs) (pools), or torch.<function>(x, **kwargs)
    (amax, mean, sum), on CPU; the outputs as numpy arrays."""
    torch = torch_rt.load()
    t = _to_torch(torch, x)
    fn = getattr(torch.nn.functional, function, None) or getattr(torch, function)
    with torch.no_grad():
        out = fn(t, **dict(kwargs))
    outs = out if isinstance(out, tuple) else (out,)
    return [_from_torch(torch, o, x.dtype) for o in outs]


def quiet_onnxruntime() -> None:
    """onnxruntime logs a node's failure on stderr besides raising it: raised is enough."""
    from . import onnxruntime_rt

    _, ort = onnxruntime_rt.load()
    ort.set_default_logger_severity(4)


_COMPILED: OrderedDict[bytes, Any] = OrderedDict()


def _compiled(key: bytes, make: Any) -> Any:
    """Compiled models by the bytes of their model (a case and its shrunk variants often share
    the op and differ in the input's values only)."""
    found = _COMPILED.get(key)
    if found is None:
        found = _COMPILED[key] = openvino_rt.compile_model(make())
        if len(_COMPILED) > 64:
            _COMPILED.popitem(last=False)
    else:
        _COMPILED.move_to_end(key)
    return found


def openvino_run_onnx(path: str, inputs: Sequence[Array]) -> list[Array]:
    """An ONNX model read by openvino (its ONNX front end) and run on the CPU plugin."""
    with open(path, "rb") as f:
        key = b"onnx:" + f.read()
    compiled = _compiled(key, lambda: openvino_rt.read_path(path))
    return openvino_rt.infer(compiled, list(inputs))


def onnxruntime_run(model: Any, feeds: Mapping[str, Array]) -> list[Array]:
    """A ModelProto run in onnxruntime on CPU, its failures raised and not logged."""
    from . import onnxruntime_rt

    _, ort = onnxruntime_rt.load()
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.intra_op_num_threads = 1
    sess = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    run_options = ort.RunOptions()
    run_options.log_severity_level = 4
    return [np.asarray(a) for a in sess.run(None, dict(feeds), run_options)]


def save_converted(path: str, xml_path: str) -> None:
    """openvino's conversion of an ONNX model, saved as IR (no f16 compression)."""
    ov = openvino_rt.load()
    model = openvino_rt.read_path(path)
    ov.save_model(model, xml_path, compress_to_fp16=False)


def openvino_run_ir(xml: str, weights: bytes, inputs: Sequence[Array]) -> list[Array]:
    """IR text (and its .bin bytes) compiled for the CPU plugin and run."""
    compiled = _compiled(
        b"ir:" + xml.encode() + b"\0" + weights, lambda: openvino_rt.read_xml(xml, weights)
    )
    return openvino_rt.infer(compiled, list(inputs))


def tf_pool(
    op_type: str, x: Array, ksize: Sequence[int], strides: Sequence[int], padding: str
) -> Array:
    """tf.nn.avg_pool / max_pool on x (N, C, *spatial) moved channels last; the output moved
    back to channels first."""
    from . import tensorflow_rt

    tf = tensorflow_rt.load()
    last = np.moveaxis(x, 1, -1)
    t = tf.constant(last if x.dtype.name != "bfloat16" else last.astype(np.float32))
    if x.dtype.name == "bfloat16":
        t = tf.cast(t, tf.bfloat16)
    fn = tf.nn.max_pool if op_type == "MaxPool" else tf.nn.avg_pool
    out = fn(t, ksize=list(ksize), strides=list(strides), padding=padding)
    if x.dtype.name == "bfloat16":
        got = np.asarray(tf.cast(out, tf.float32).numpy()).astype(x.dtype)
    else:
        got = np.asarray(out.numpy())
    return np.ascontiguousarray(np.moveaxis(got, -1, 1))


def openvino_torch(
    function: str, kwargs: Mapping[str, Any], x: Array, xml_path: str
) -> list[Array]:
    """torch.nn.functional.<function>(x, **kwargs) as a module converted by openvino's PyTorch
    front end (traced, static input shape), run on the CPU plugin; the converted model is saved
    as IR at `xml_path` for irpool to read.  Converting takes seconds: cached by the call."""
    torch = torch_rt.load()
    ov = openvino_rt.load()
    fn = getattr(torch.nn.functional, function)
    call = dict(kwargs)

    class Call(torch.nn.Module):  # type: ignore[misc, name-defined]
        def forward(self, t: Any) -> Any:
            out = fn(t, **call)
            return out[0] if isinstance(out, tuple) else out

    key = ("torch:" + repr((function, sorted(call.items()), x.shape, x.dtype.name))).encode()
    model = _CONVERTED.get(key)
    if model is None:
        with torch_rt.quiet():
            model = ov.convert_model(
                Call(), example_input=_to_torch(torch, x), input=[(list(x.shape), _ov_type(ov, x))]
            )
        _CONVERTED[key] = model
        if len(_CONVERTED) > 16:
            _CONVERTED.popitem(last=False)
    ov.save_model(model, xml_path, compress_to_fp16=False)
    compiled = _compiled(key, lambda: model)
    return openvino_rt.infer(compiled, [x])


_CONVERTED: OrderedDict[bytes, Any] = OrderedDict()


def _ov_type(ov: Any, x: Array) -> Any:
    return {"float32": ov.Type.f32, "float16": ov.Type.f16, "float64": ov.Type.f64}[x.dtype.name]
