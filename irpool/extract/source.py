"""A bundle's source.py: the layer as the PyTorch op it came from, in a tiny module, and
openvino's conversion of that module (the call that writes the diverging layer).

Written for a windowed layer held to PyTorch's convention when a torch.nn.functional call means
its attributes (irpool.ops.torch.call_for); needs torch, openvino and numpy.
"""

from __future__ import annotations

from typing import Any

from .templates import template

_TEMPLATE = template("source.py.txt")


def torch_call(graph: Any, layer: Any, rank: int) -> str | None:
    """The torch.nn.functional call that means a windowed layer's attributes, or None."""
    from ..ops import torch as torch_ops
    from ..shapes import infer

    pl = next((p for p in infer(graph).pooling if p.layer.index == layer.index), None)
    if pl is None or not pl.bound.family.windows or pl.spec.kind == "qlinear":
        return None
    try:
        call, _ = torch_ops.call_for(pl.bound.params_for(rank))
    except Exception:  # attributes no PyTorch call has
        return None
    return call


def script(call: str, input_name: str, atol: float, rtol: float, title: str) -> str:
    return _TEMPLATE.format(call=call, name=input_name, atol=atol, rtol=rtol, title=title)
