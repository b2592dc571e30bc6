"""Layer outputs of an IR as openvino computes them, for explain's .5 ties (irpool/ties.py) on a
net irpool does not run itself (a quantized Convolution in front of the pooling chain)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from . import openvino_rt


def layer_outputs(
    path: str, wanted: Sequence[tuple[str, int]], inputs: Mapping[str, np.ndarray]
) -> list[np.ndarray]:
    """The outputs (layer name, output index) of the IR at `path`, run once by the CPU plugin
    at f32 with those outputs added."""
    openvino_rt.load()
    model = openvino_rt.read_path(path)
    ops = {op.get_friendly_name(): op for op in model.get_ordered_ops()}
    taps = [ops[name].output(index) for name, index in wanted]
    return openvino_rt.probe(model, taps, inputs, "f32")
