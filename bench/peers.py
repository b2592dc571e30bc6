"""The peers of the bench, each at its best: built once, then only the call is timed.

A peer is made by `make(name, workload, x)` and is a Peer(run, values, indices): `run()` does
one inference; `values()` (and `indices()`) read the last result for the checks.

* ov1 / ov: openvino with the op versions converters emit (AvgPool-1; MaxPool-8 with its
  indices output left unread unless the model reads it), compiled once with
  PERFORMANCE_HINT=LATENCY and INFERENCE_PRECISION_HINT=f32, on 1 thread (ov1) or openvino's
  default threads (ov); the input tensor is set once on the infer request and `infer()` is
  called with no arguments.
* ort1: onnxruntime, one intra-op thread, spinning off, input and output bound once (io
  binding), run_with_iobinding timed.
* torch1: PyTorch, the functional op under no_grad on a tensor made once, one thread.
* np1 / np2 / nb1 / nb2: irpool.compile_pool prepared once on the numpy path (np) or the
  compiled path (nb), 1 or 2 threads.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from workloads import Workload

import irpool


@dataclass
class Peer:
    run: Callable[[], Any]
    values: Callable[[], np.ndarray]
    indices: Callable[[], np.ndarray | None] = lambda: None


class Unavailable(Exception):
    """The peer cannot run this workload (say why)."""


def input_tensor(x: np.ndarray) -> Any:
    """`x` as an openvino tensor set once: its memory shared, bfloat16 written as its bits
    (numpy has no bfloat16 openvino knows)."""
    import openvino as ov

    if x.dtype.name == "bfloat16":
        tensor = ov.Tensor(ov.Type.bf16, list(x.shape))
        tensor.data.view(np.uint16)[...] = x.view(np.uint16)
        return tensor
    return ov.Tensor(x, shared_memory=True)


def reason(error: Exception) -> str:
    """Why a peer could not run, in one line: the last line of the message that is not a
    runtime's source location (openvino nests its messages under "Exception from ...")."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("Exception from", "Check '"))]
    text = (useful or lines or [type(error).__name__])[-1]
    return text[:160]


def openvino_model(w: Workload, x: np.ndarray) -> Any:
    """The model converters emit for a workload: AvgPool-1 or MaxPool-8 (both outputs where
    the model reads the indices)."""
    import openvino as ov
    from openvino import opset1, opset8

    types = {"float32": ov.Type.f32, "float16": ov.Type.f16, "bfloat16": ov.Type.bf16}
    param = opset1.parameter(list(x.shape), types[x.dtype.name])
    n = len(w.kernel)
    stride, pads, kernel = [w.stride] * n, [w.pad] * n, list(w.kernel)
    rounding = "ceil" if w.ceil else "floor"
    if w.reduce == "max":
        node = opset8.max_pool(param, stride, [w.dilation] * n, pads, pads, kernel, rounding)
        outputs = [node.output(0), node.output(1)] if w.indices else [node.output(0)]
    else:
        if w.dilation != 1:
            raise Unavailable("AvgPool-1 has no dilations")
        node = opset1.avg_pool(param, stride, pads, pads, kernel, w.exclude_pad, rounding)
        outputs = [node.output(0)]
    return ov.Model([opset1.result(o) for o in outputs], [param])


def openvino_compiled(model: Any, x: np.ndarray, threads: int | None) -> Peer:
    """A model compiled once, its input set once, `infer()` timed with no arguments."""
    import openvino as ov

    config: dict[str, Any] = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY"}
    if threads:
        config["INFERENCE_NUM_THREADS"] = threads
    compiled = ov.Core().compile_model(model, "CPU", config)
    request = compiled.create_infer_request()
    request.set_input_tensor(input_tensor(x))
    outputs = len(compiled.outputs)

    def values() -> np.ndarray:
        return np.array(request.get_output_tensor(0).data)

    def indices() -> np.ndarray | None:
        return np.array(request.get_output_tensor(1).data) if outputs > 1 else None

    return Peer(request.infer, values, indices)


def openvino_peer(w: Workload, x: np.ndarray, threads: int | None) -> Peer:
    return openvino_compiled(openvino_model(w, x), x, threads)


def onnx_model(w: Workload, x: np.ndarray) -> Any:
    from irpool.oracles import onnxruntime_rt

    n = len(w.kernel)
    attrs: dict[str, Any] = {
        "kernel_shape": list(w.kernel),
        "strides": [w.stride] * n,
        "pads": [w.pad] * (2 * n),
    }
    if w.ceil:
        attrs["ceil_mode"] = 1
    if w.reduce == "max":
        attrs["dilations"] = [w.dilation] * n
        return onnxruntime_rt.node_model("MaxPool", attrs, [x], 12, n_outputs=2 if w.indices else 1)
    if w.dilation != 1:
        raise Unavailable("AveragePool-11 has no dilations")
    attrs["count_include_pad"] = 0 if w.exclude_pad else 1
    return onnxruntime_rt.node_model("AveragePool", attrs, [x], 11)


def onnxruntime_session(model: Any, x: np.ndarray, out_shape: tuple[int, ...]) -> Peer:
    """One intra-op thread, spinning off, input and first output bound once (a second output
    is left for onnxruntime to allocate: a preallocated int64 buffer bound to MaxPool's
    indices corrupted the heap with onnxruntime 1.32)."""
    from irpool.oracles import onnxruntime_rt

    if x.dtype.name == "bfloat16":
        raise Unavailable("onnxruntime's CPU pooling has no bfloat16 kernel")
    session = onnxruntime_rt.session(model, threads=1, spin=False)
    names = [o.name for o in session.get_outputs()]
    y = np.empty(out_shape, dtype=x.dtype)
    binding = session.io_binding()
    binding.bind_cpu_input(session.get_inputs()[0].name, x)
    binding.bind_output(names[0], "cpu", 0, y.dtype, y.shape, y.ctypes.data)
    for name in names[1:]:
        binding.bind_output(name, "cpu")

    def run() -> None:
        session.run_with_iobinding(binding)

    return Peer(run, lambda: y)


def onnxruntime_peer(w: Workload, x: np.ndarray) -> Peer:
    return onnxruntime_session(onnx_model(w, x), x, w.plan().output_shape)


def torch_peer(w: Workload, x: np.ndarray) -> Peer:
    import torch

    if x.dtype != np.float32:
        raise Unavailable(f"PyTorch's CPU pooling of {x.dtype.name} is not a fast path")
    if 2 * w.pad > w.kernel[0]:
        raise Unavailable("PyTorch refuses pads above half the kernel")
    n = len(w.kernel)
    tx = torch.from_numpy(x)
    if w.reduce == "max":
        fn = getattr(torch.nn.functional, f"max_pool{n}d")
        kwargs: dict[str, Any] = {
            "dilation": w.dilation,
            "ceil_mode": w.ceil,
            "return_indices": w.indices,
        }
    else:
        if w.dilation != 1:
            raise Unavailable("avg_pool has no dilations")
        fn = getattr(torch.nn.functional, f"avg_pool{n}d")
        kwargs = {"ceil_mode": w.ceil, "count_include_pad": not w.exclude_pad}
    held: list[Any] = [None]

    def run() -> None:
        torch.set_num_threads(1)
        with torch.no_grad():
            out = fn(tx, w.kernel, w.stride, w.pad, **kwargs)
        held[0] = out[0] if isinstance(out, tuple) else out

    return Peer(run, lambda: held[0].numpy())


def irpool_peer(w: Workload, x: np.ndarray, threads: int, path: str) -> Peer:
    f = irpool.compile_pool(x.shape, x.dtype, **w.keywords(), threads=threads, path=path)
    if f.path != path:
        raise Unavailable(f.why)
    held: list[Any] = [None, None]

    def run() -> None:
        held[0], held[1] = f.run(x)

    return Peer(run, lambda: held[0], lambda: held[1])


PEERS: dict[str, Callable[[Workload, np.ndarray], Peer]] = {
    "ov1": lambda w, x: openvino_peer(w, x, 1),
    "ov": lambda w, x: openvino_peer(w, x, None),
    "ort1": onnxruntime_peer,
    "torch1": torch_peer,
    "np1": lambda w, x: irpool_peer(w, x, 1, "numpy"),
    "np2": lambda w, x: irpool_peer(w, x, 2, "numpy"),
    "nb1": lambda w, x: irpool_peer(w, x, 1, "compiled"),
    "nb2": lambda w, x: irpool_peer(w, x, 2, "compiled"),
}
LEGEND = {
    "ov1": "openvino, 1 thread",
    "ov": f"openvino, its default threads ({os.cpu_count()} CPUs here)",
    "ort1": "onnxruntime, 1 thread",
    "torch1": "PyTorch, 1 thread",
    "np1": "irpool numpy path, 1 thread",
    "np2": "irpool numpy path, 2 threads",
    "nb1": "irpool compiled path (numba), 1 thread",
    "nb2": "irpool compiled path (numba), 2 threads",
}
IRPOOL = ("np1", "np2", "nb1", "nb2")
ONE_THREAD = ("ov1", "ort1", "torch1", "np1", "nb1")
"""Peers whose whole work runs in the calling thread: their thread CPU time is their CPU time."""
