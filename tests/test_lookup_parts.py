"""--layer prefers a match on whole parts of a name (between `/`, `::` and `.`) over a match
inside one: `avg_pool2d` picks the torch layer of that op, not aten::adaptive_avg_pool2d."""

from __future__ import annotations

from pathlib import Path

import pytest

from irpool.api import load
from irpool.errors import IrpoolError
from irpool.frontends.ir_writer import NetBuilder
from irpool.lookup import find

AVG = "__module.pool/aten::avg_pool2d/AvgPool"
ADAPTIVE = "__module.gap/aten::adaptive_avg_pool2d/AvgPool"


def _graph(tmp_path: Path):  # type: ignore[no-untyped-def]
    net = NetBuilder("names")
    x = net.parameter("x", (1, 1, 4, 4), "f32")
    data = {"strides": "1,1", "pads_begin": "0,0", "pads_end": "0,0", "kernel": "1,1"}
    data["exclude-pad"] = "true"
    for name in (AVG, ADAPTIVE):
        y = net.op("AvgPool", "opset1", name, data, [x], [((1, 1, 4, 4), "f32")])[0]
        net.result(f"r{len(name)}", y)
    path = tmp_path / "names.xml"
    path.write_text(net.xml())
    (tmp_path / "names.bin").write_bytes(net.bin())
    graph = load(str(path))
    return graph, [la for la in graph.layers if la.type == "AvgPool"]


def test_whole_name_parts_win_over_a_match_inside_one(tmp_path: Path) -> None:
    graph, pools = _graph(tmp_path)
    assert find(graph, "avg_pool2d", pools).name == AVG
    assert find(graph, "aten::avg_pool2d", pools).name == AVG
    assert find(graph, "AVG_POOL2D", pools).name == AVG  # case folded after the exact parts
    assert find(graph, "adaptive_avg_pool2d", pools).name == ADAPTIVE
    assert find(graph, "gap", pools).name == ADAPTIVE
    with pytest.raises(IrpoolError, match="part of the name of 2"):
        find(graph, "pool2d", pools)  # inside a part of both names: still ambiguous
