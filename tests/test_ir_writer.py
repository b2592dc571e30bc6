"""frontends/ir_writer.py: what it writes is what openvino writes, openvino reads it, and irpool's
reader reads it back to the same graph; `save` is atomic and never overwrites by accident."""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import ROOT

from irpool.errors import OutputError
from irpool.frontends.ir_writer import NetBuilder, ordered_data, quote
from irpool.frontends.ir_xml import load, parse_text
from irpool.model import Graph, bfloat16
from irpool.oracles import openvino_rt

# files written by openvino's own serializer (fixtures/make_ir_fixtures.py)
OPENVINO_WRITTEN = [
    "fixtures/ir/pool_zoo.xml",
    "fixtures/ir/pool_zoo_v10.xml",
    "fixtures/ir/dynamic.xml",
    "fixtures/ir/ranks.xml",
    "fixtures/ir/integer_types.xml",
    "fixtures/real/squeezenet.xml",
]
RT_INFO = re.compile(r"\n\t*<rt_info>.*?</rt_info>", re.S)


def graph_shape(graph: Graph) -> dict[str, Any]:
    """Everything of a graph that the file says, without lines and paths."""
    return {
        "ir_version": graph.ir_version,
        "name": graph.name,
        "layers": [
            (
                la.id,
                la.name,
                la.type,
                la.version,
                dict(la.data),
                [(p.id, p.element_type, p.names, p.dims) for p in la.inputs],
                [(p.id, p.element_type, p.names, p.dims) for p in la.outputs],
            )
            for la in graph.layers
        ],
        "edges": sorted((e.from_layer, e.from_port, e.to_layer, e.to_port) for e in graph.edges),
    }


@pytest.mark.parametrize("name", OPENVINO_WRITTEN)
def test_rewriting_an_openvino_file_gives_its_bytes(name: str, tmp_path: Path) -> None:
    """Rebuilt from irpool's graph, each file openvino wrote comes out byte for byte as openvino
    wrote it, except the <rt_info> blocks, which irpool's reader does not keep."""
    path = ROOT / name
    net = NetBuilder.from_graph(load(str(path)))
    assert net.xml() == RT_INFO.sub("", path.read_text())
    weights = path.with_suffix(".bin")
    if net.bin():
        assert net.bin() == weights.read_bytes()
    out = tmp_path / "again.xml"
    net.save(str(out))
    assert graph_shape(load(str(out))) == graph_shape(load(str(path)))


def _ops(model: Any) -> list[tuple[str, str, str, dict[str, Any], list[str]]]:
    def plain(v: Any) -> Any:
        return list(v) if isinstance(v, list | tuple) else v

    out = []
    for op in model.get_ordered_ops():
        info = op.get_type_info()
        attrs = {k: plain(v) for k, v in op.get_attributes().items()}
        shapes = [str(op.get_output_partial_shape(i)) for i in range(op.get_output_size())]
        out.append((op.get_friendly_name(), info.name, info.version_id, attrs, shapes))
    return out


@pytest.mark.oracle
@pytest.mark.parametrize("name", OPENVINO_WRITTEN)
def test_openvino_reads_the_rewritten_file_as_the_original(
    ov: ModuleType, name: str, tmp_path: Path
) -> None:
    path = ROOT / name
    out = tmp_path / "again.xml"
    NetBuilder.from_graph(load(str(path))).save(str(out))
    assert _ops(openvino_rt.read_path(str(out))) == _ops(openvino_rt.read_path(str(path)))


def _mixed_net(ir_version: int) -> NetBuilder:
    """Parameters with static and dynamic shapes, constants of several types (two identical),
    Convert, every pooling version, awkward names."""
    net = NetBuilder('net "with" <odd> & name', ir_version)
    x = net.parameter("x,1", (1, 2, 6, 6), "f32")
    y = net.parameter("y", "1,2,?,1..10", "f16")
    table = np.arange(2 * 36, dtype=np.float32).reshape(1, 2, 6, 6) / 8
    c1 = net.const("table", table)
    c2 = net.const("table_again", table)  # same bytes: stored once
    c3 = net.const("small", np.array([1, -2, 3], dtype=np.int8).reshape(1, 1, 3))
    bf = bfloat16()
    assert bf is not None
    c4 = net.const("bf", np.array([[[0.5, -1.25]]], dtype=bf))
    conv = net.op(
        "Convert", "opset1", "to_f32", {"destination_type": "f32"}, [c3], [((1, 1, 3), "f32")]
    )[0]
    avg = net.op(
        "AvgPool",
        "opset1",
        "avg1",
        {  # given in another order than openvino's: the writer reorders
            "rounding_type": "ceil",
            "exclude-pad": "false",
            "kernel": "3, 3",
            "strides": "2, 2",
            "pads_begin": "1, 1",
            "pads_end": "1, 1",
            "auto_pad": "explicit",
        },
        [x],
        [((1, 2, 4, 4), "f32")],
        [("avg1 out",)],
    )[0]
    avg16 = net.op(
        "AvgPool",
        "opset16",
        "avg16",
        ordered_data(
            "AvgPool",
            {
                "kernel": "2, 2",
                "strides": "1, 1",
                "pads_begin": "0, 0",
                "pads_end": "0, 0",
                "exclude-pad": "true",
                "auto_pad": "explicit",
                "rounding_type": "ceil_torch",
                "dilations": "2, 2",
            },
        ),
        [c1],
        [((1, 2, 4, 4), "f32")],
    )[0]
    mp8 = net.op(
        "MaxPool",
        "opset8",
        "mp8",
        {
            "strides": "1, 1",
            "dilations": "1, 1",
            "pads_begin": "0, 0",
            "pads_end": "0, 0",
            "kernel": "2, 2",
            "rounding_type": "floor",
            "auto_pad": "explicit",
            "index_element_type": "i32",
            "axis": "0",
        },
        [y],
        [((1, 2, -1, -1), "f16"), ((1, 2, -1, -1), "i32")],
        [("mp8,values",), ("mp8 indices",)],
    )
    mp14 = net.op(
        "MaxPool",
        "opset14",
        "mp14",
        {
            "strides": "1",
            "dilations": "1",
            "pads_begin": "0",
            "pads_end": "0",
            "kernel": "2",
            "rounding_type": "ceil_torch",
            "auto_pad": "valid",
            "index_element_type": "i64",
            "axis": "2",
        },
        [conv],
        [((1, 1, 2), "f32"), ((1, 1, 2), "i64")],
    )
    mp1 = net.op(
        "MaxPool",
        "opset1",
        "mp1",
        {
            "strides": "1",
            "pads_begin": "0",
            "pads_end": "0",
            "kernel": "1",
            "rounding_type": "floor",
            "auto_pad": "same_upper",
        },
        [c4],
        [((1, 1, 2), "bf16")],
    )[0]
    net.result("r_avg", avg)
    net.result("r_avg16", avg16)
    net.result("r_mp8", mp8[0])
    net.result("r_mp8_indices", mp8[1])
    net.result("r_mp14", mp14[0])
    net.result("r_mp14_indices", mp14[1])
    net.result("r_mp1", mp1)
    net.result("r_table_again", c2)
    return net


@pytest.mark.parametrize("ir_version", [10, 11])
def test_builder_round_trip_through_irpool(ir_version: int, tmp_path: Path) -> None:
    net = _mixed_net(ir_version)
    path = tmp_path / "mixed.xml"
    assert net.save(str(path)) == [str(path), str(tmp_path / "mixed.bin")]
    graph = load(str(path))
    # the file says what was built: written by hand here, not by the writer
    assert graph.ir_version == ir_version
    assert graph.name == 'net "with" <odd> & name'
    by_name = {la.name: la for la in graph.layers}
    assert by_name["x,1"].outputs[0].names == ("x,1",)
    assert by_name["y"].data["shape"] == "1,2,?,1..10"
    assert by_name["y"].outputs[0].dims == (1, 2, -1, -1)
    assert list(by_name["avg1"].data) == [
        "kernel",
        "strides",
        "pads_begin",
        "pads_end",
        "exclude-pad",
        "auto_pad",
        "rounding_type",
    ]
    assert by_name["avg1"].outputs[0].names == ("avg1 out",)
    assert by_name["mp8"].outputs[0].names == ("mp8,values",)
    assert [p.id for p in by_name["mp8"].outputs] == [1, 2]
    assert [p.element_type for p in by_name["mp8"].outputs] == ["f16", "i32"]
    assert by_name["table"].data == {
        "element_type": "f32",
        "shape": "1, 2, 6, 6",
        "offset": "0",
        "size": "288",
    }
    assert by_name["table_again"].data["offset"] == "0"  # identical bytes stored once
    assert by_name["small"].data == {
        "element_type": "i8",
        "shape": "1, 1, 3",
        "offset": "288",
        "size": "3",
    }
    assert by_name["bf"].data["element_type"] == "bf16"
    assert (tmp_path / "mixed.bin").stat().st_size == 288 + 3 + 4
    results = [la for la in graph.layers if la.type == "Result"]
    assert len(results) == 8
    # v11 Results name the tensor they receive, or themselves when it has no name
    text = path.read_text()
    assert (ir_version == 11) == (
        'name="r_avg" type="Result" version="opset1" output_names="avg1 out"' in text
    )
    assert (ir_version == 11) == ('output_names="r_avg16"' in text)
    assert "output_names" in text or ir_version == 10
    # and rewriting the graph irpool read gives the same file again
    again = NetBuilder.from_graph(graph)
    assert again.xml() == net.xml()
    assert again.bin() == net.bin()


@pytest.mark.oracle
@pytest.mark.parametrize("ir_version", [10, 11])
def test_openvino_reads_what_the_builder_writes(
    ov: ModuleType, ir_version: int, tmp_path: Path
) -> None:
    path = tmp_path / "mixed.xml"
    _mixed_net(ir_version).save(str(path))
    model = openvino_rt.read_path(str(path))
    ops = {op.get_friendly_name(): op for op in model.get_ordered_ops()}
    assert ops["avg1"].get_type_info().version_id == "opset1"
    assert ops["avg16"].get_type_info().version_id == "opset16"
    assert ops["avg1"].get_attributes()["rounding_type"] == "ceil"
    assert list(ops["avg16"].get_attributes()["dilations"]) == [2, 2]
    # shapes come from the Parameter: ? -> 1.. and 1..10 -> 1..9 (k2 s1: (1-2 clamped to 0)+1,
    # 10-2+1)
    assert str(ops["mp8"].get_output_partial_shape(0)) == "[1,2,1..,1..9]"
    table = ops["table"].get_data()
    np.testing.assert_array_equal(table, np.arange(72, dtype=np.float32).reshape(1, 2, 6, 6) / 8)
    if ir_version == 11:  # v10's output retyping folds the branches fed by constants only
        assert ops["mp14"].get_type_info().version_id == "opset14"
        assert ops["mp1"].get_type_info().version_id == "opset1"
        np.testing.assert_array_equal(ops["small"].get_data().ravel(), [1, -2, 3])
        bits = np.array(ops["bf"].get_data()).view(np.uint16).ravel()
        assert bits.tolist() == [0x3F00, 0xBFA0]  # 0.5 and -1.25 in bfloat16
        assert model.output("avg1 out").get_node().get_friendly_name() == "r_avg"


def test_attribute_values_are_escaped() -> None:
    assert quote('a"b<c>&d\n') == '"a&quot;b&lt;c&gt;&amp;d&#10;"'
    net = NetBuilder()
    x = net.parameter('x"&<', (1, 1, 2), "f32")
    net.result("out\tname", x)
    graph = parse_text(net.xml())
    assert [la.name for la in graph.layers] == ['x"&<', "out\tname"]


def test_save_refuses_existing_files_and_missing_folders(tmp_path: Path) -> None:
    net = _mixed_net(11)
    path = tmp_path / "m.xml"
    net.save(str(path))
    before = path.read_bytes(), (tmp_path / "m.bin").read_bytes()
    with pytest.raises(OutputError, match="exists"):
        net.save(str(path))
    (tmp_path / "m.bin").unlink()
    with pytest.raises(OutputError, match="exists"):  # the .xml alone exists
        net.save(str(path))
    assert not (tmp_path / "m.bin").exists()
    with pytest.raises(OutputError, match="does not exist"):
        net.save(str(tmp_path / "missing" / "m.xml"))
    net.save(str(path), force=True)
    assert (path.read_bytes(), (tmp_path / "m.bin").read_bytes()) == before
    assert sorted(os.listdir(tmp_path)) == ["m.bin", "m.xml"]  # no temporary file left


def test_save_leaves_nothing_when_a_file_cannot_be_written(tmp_path: Path) -> None:
    """The .bin's place is taken by a folder: neither file is written, no temporary remains."""
    (tmp_path / "m.bin").mkdir()
    with pytest.raises(OutputError, match="directory"):
        _mixed_net(11).save(str(tmp_path / "m.xml"), force=True)
    assert sorted(os.listdir(tmp_path)) == ["m.bin"]


def test_save_without_constants_writes_no_bin(tmp_path: Path) -> None:
    net = NetBuilder("plain")
    net.result("out", net.parameter("x", (1, 1, 4), "f32"))
    assert net.save(str(tmp_path / "p.xml")) == [str(tmp_path / "p.xml")]
    assert sorted(os.listdir(tmp_path)) == ["p.xml"]


def test_same_net_same_bytes() -> None:
    assert _mixed_net(11).xml() == _mixed_net(11).xml()
    assert _mixed_net(11).bin() == _mixed_net(11).bin()
