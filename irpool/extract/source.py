"""A bundle's source.py: the layer as the PyTorch op it came from, in a tiny module, and
openvino's conversion of that module (the call that writes the diverging layer).

Written for a windowed layer held to PyTorch's convention when a torch.nn.functional call means
its attributes (irpool.ops.torch.call_for); needs torch, openvino and numpy.
"""

from __future__ import annotations

from typing import Any

_TEMPLATE = '''#!/usr/bin/env python3
"""{title}

The layer as the PyTorch op it came from, in a tiny module, converted by openvino as a PyTorch
model is: PyTorch's own output against the converted model's, on input.npz.  Needs torch,
openvino and numpy.  Exits 1 while they differ, 0 once they agree.
"""

import os
import sys

import numpy as np
import openvino as ov
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ATOL, RTOL = {atol!r}, {rtol!r}


class Op(torch.nn.Module):
    def forward(self, x):
        return {call}


def main():
    x = torch.from_numpy(np.load(os.path.join(HERE, "input.npz"))[{name!r}])
    module = Op().eval()
    with torch.no_grad():
        want = module(x)
    want = (want[0] if isinstance(want, tuple) else want).numpy()
    # the conversion that writes the layer (openvino's PyTorch front end)
    converted = ov.convert_model(module, example_input=x, input=[list(x.shape)])
    compiled = ov.Core().compile_model(converted, "CPU", {{"INFERENCE_PRECISION_HINT": "f32"}})
    got = np.asarray(compiled(x.numpy())[0])
    print(f"torch {{torch.__version__}}, openvino {{ov.get_version()}}")
    print("converted layer(s):", ", ".join(
        f"{{op.get_type_name()}}-{{op.get_type_info().version_id}}"
        for op in converted.get_ordered_ops() if "Pool" in op.get_type_name()))
    if got.shape != want.shape:
        print(f"openvino {{list(got.shape)}}, PyTorch {{list(want.shape)}}")
        return 1
    bad = ~np.isclose(got, want, atol=ATOL, rtol=RTOL, equal_nan=True)
    if not bad.any():
        print("openvino's conversion computes what PyTorch does")
        return 0
    print(f"{{int(bad.sum())}}/{{got.size}} values differ")
    for index in np.argwhere(bad)[:8]:
        i = tuple(int(v) for v in index)
        print(f"  at {{list(i)}}: openvino {{got[i].item()!r}}, PyTorch {{want[i].item()!r}}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
'''


def torch_call(graph: Any, layer: Any, rank: int) -> str | None:
    """The torch.nn.functional call that means a windowed layer's attributes, or None."""
    from ..ops import torch as torch_ops
    from ..shapes import infer

    pl = next((p for p in infer(graph).pooling if p.layer.index == layer.index), None)
    if pl is None or pl.bound.family is not None or pl.spec.kind == "qlinear":
        return None
    try:
        call, _ = torch_ops.call_for(pl.bound.params_for(rank))
    except Exception:  # attributes no PyTorch call has
        return None
    return call


def script(call: str, input_name: str, atol: float, rtol: float, title: str) -> str:
    return _TEMPLATE.format(call=call, name=input_name, atol=atol, rtol=rtol, title=title)
