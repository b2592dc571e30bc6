"""What openvino's CPU plugin does with an INFERENCE_PRECISION_HINT, as compare's probe sees it
(measured with openvino 2026.4.1 on an AVX-512 CPU without AVX512_BF16 or AMX, whose default
hint is f32):

* The hint is a request: the plugin turns f16 into f32 there (the compiled model reports
  INFERENCE_PRECISION_HINT f32, every node runs f32), while it honours bf16 (emulated: a
  Convolution's runtimePrecision is bf16, its outputs differ from f32).  `runs_at` reads the
  compiled model's own hint.
* At bf16 the plugin keeps the tail of the graph in f32: the nodes between a Result and the
  nearest Convolution (FullyConnected, MatMul and a few more) before it.  Conv -> AvgPool ->
  MaxPool -> Conv runs both pools in bf16; with an extra Result on the AvgPool (what compare's
  probe adds) that AvgPool runs in f32.  So each pooling layer compare probes runs in f32 on the
  values the layers before it produced, which is what irpool computes; the deployed model may
  run it in bf16, and compare's run without the probe says whether the final outputs move.
  (Source: EnforceInferencePrecision in the plugin's graph.cpp skips that tail.)"""

from __future__ import annotations

from functools import cache

TAIL_NOTE = (
    "each probed pooling layer feeds a Result, and the plugin runs the layers between a Result "
    "and the last Convolution, FullyConnected or MatMul before it in f32: the compared layers "
    "ran in f32; the deployed model may run them at {hint}, and the probe's effect says whether "
    "that moves its outputs"
)


@cache
def runs_at(hint: str) -> str:
    """The INFERENCE_PRECISION_HINT the plugin compiles a model with when asked for `hint`."""
    import numpy as np

    from . import openvino_rt

    ov = openvino_rt.load()
    o1 = ov.opset1
    x = o1.parameter([1, 1, 4, 4], np.float32, name="x")
    w = o1.constant(np.ones((1, 1, 1, 1), np.float32))
    conv = o1.convolution(x, w, [1, 1], [0, 0], [0, 0], [1, 1])
    compiled = openvino_rt.compile_model(ov.Model([o1.result(conv)], [x], "hint"), hint)
    raw = compiled.get_property("INFERENCE_PRECISION_HINT")
    return str(raw.get_type_name() if hasattr(raw, "get_type_name") else raw)


def ran_note(hint: str) -> str | None:
    """What the report adds to the hint (None: nothing, at f32)."""
    ran = runs_at(hint)
    if ran == "f32":
        return (
            None
            if hint == "f32"
            else "the CPU plugin runs f32 instead: its compiled model's hint is f32"
        )
    return TAIL_NOTE.format(hint=ran)
