"""The IR reader: what it accepts as normal, and how it refuses malformed or hostile files."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import maxpool_chain

from irpool.errors import IrParseError, IrpoolError
from irpool.frontends.ir_xml import load, parse_text, split_names
from irpool.model import Dim, parse_shape

NET = """<?xml version="1.0"?>
<net name="t" version="{version}">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="{shape}" element_type="f32"/>
      <output><port id="0" precision="FP32" names="x,in\\,put">
        <dim>1</dim><dim>3</dim><dim>8</dim><dim>8</dim></port></output>
    </layer>
    <layer id="7" name="pool" type="avgpool" version="opset1">
      <data kernel="2, 2" strides="2,2" pads_begin="0, 0" pads_end="0,0" exclude-pad="true"/>
      <input><port id="0" precision="FP32"><dim>1</dim><dim>3</dim><dim>8</dim><dim>8</dim></port></input>
      <output><port id="1" precision="FP32"><dim>1</dim><dim>3</dim><dim>4</dim><dim>4</dim></port></output>
    </layer>
    <layer id="2" name="out" type="Result" version="opset1">
      <input><port id="0"><dim>1</dim><dim>3</dim><dim>4</dim><dim>4</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="7" to-port="0"/>
    <edge from-layer="7" from-port="1" to-layer="2" to-port="0"/>
  </edges>
</net>
"""


def net(version: int = 11, shape: str = "1,3,8,8") -> str:
    return NET.format(version=version, shape=shape)


def write(tmp_path: Path, text: str | bytes, name: str = "m.xml") -> str:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return str(path)


def error_of(text: str) -> IrpoolError:
    with pytest.raises(IrpoolError) as info:
        parse_text(text, "m.xml")
    return info.value


# -- what is read -----------------------------------------------------------------------------


def test_reads_layers_ports_edges_and_lines() -> None:
    g = parse_text(net(), "m.xml")
    assert g.ir_version == 11 and not g.fragment
    assert [la.id for la in g.layers] == [0, 7, 2]
    pool = g.layer(7)
    assert pool.type == "avgpool" and pool.version == "opset1" and pool.line == 9
    assert pool.data["kernel"] == "2, 2"
    assert pool.inputs[0].dims == (1, 3, 8, 8) and pool.outputs[0].dims == (1, 3, 4, 4)
    assert pool.outputs[0].element_type == "f32"
    assert g.layer(0).outputs[0].names == ("x", "in,put")
    assert [(e.from_layer, e.to_layer) for e in g.edges] == [(0, 7), (7, 2)]
    assert [la.id for la in g.topological()] == [0, 7, 2]


def test_ir_v10_is_read() -> None:
    assert parse_text(net(version=10), "m.xml").ir_version == 10


@pytest.mark.parametrize(
    ("text", "dims"),
    [
        ("1,3,?,1..10", [Dim(1, 1), Dim(3, 3), Dim(0, None), Dim(1, 10)]),
        ("[1, 3, -1, ..10]", [Dim(1, 1), Dim(3, 3), Dim(0, None), Dim(0, 10)]),
        ("2..,3,4", [Dim(2, None), Dim(3, 3), Dim(4, 4)]),
    ],
)
def test_parameter_shape_forms(text: str, dims: list[Dim]) -> None:
    assert list(parse_shape(text) or ()) == dims


def test_dynamic_rank_shape() -> None:
    assert parse_shape("...") is None


def test_split_names_unescapes_commas() -> None:
    assert split_names(r"a,b\,c, d") == ("a", "b,c", "d")


def test_fragment_with_doc_placeholders_and_several_layers() -> None:
    text = """<?xml version="1.0"?>
<layer ... type="MaxPool" ... >
    <data kernel="2,2" strides="2,2" pads_begin="0,0" pads_end="0,0" rounding_type="floor"/>
    <input><port id="0"><dim>1</dim><dim>3</dim><dim>32</dim><dim>32</dim></port></input>
    <output><port id="1"><dim>1</dim><dim>3</dim><dim>16</dim><dim>16</dim></port></output>
</layer>
<!-- a second one -->
<layer id="1" name="p2" type="AvgPool" version="opset14" ...>
    <data kernel="3" strides="1" exclude-pad="false" shape="..."/>
    <input> ... <port id="0"><dim>1</dim><dim>1</dim><dim>5</dim></port></input>
</layer>
"""
    g = parse_text(text, "f.xml")
    assert g.fragment and len(g.layers) == 2
    first, second = g.layers
    assert first.type == "MaxPool" and first.version is None and first.line == 2
    assert second.name == "p2" and second.data["shape"] == "..." and second.line == 8


def test_encodings_and_xml_oddities(tmp_path: Path) -> None:
    text = net().replace(
        "<dim>8</dim><dim>8</dim></port></output>",
        "<dim>8<!-- c --></dim><dim><?pi x?><![CDATA[8]]></dim></port></output>",
    )
    text = text.replace('name="pool"', "name='p&#x6F;ol'")
    for data in (
        text.encode("utf-8"),
        b"\xef\xbb\xbf" + text.encode("utf-8"),
        text.encode("utf-16"),
        text.replace("\n", "\r\n").encode("utf-8"),
        text.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="ISO-8859-1"?>')
        .replace("t", "t", 1)
        .encode("latin-1"),
    ):
        g = load(write(tmp_path, data))
        assert g.layer(0).outputs[0].dims == (1, 3, 8, 8)
        assert g.layer(7).name == "pool"
        assert g.layer(7).line == 9


def test_latin1_names_are_decoded(tmp_path: Path) -> None:
    text = net().replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="ISO-8859-1"?>')
    text = text.replace('name="pool"', 'name="pool-é"')
    g = load(write(tmp_path, text.encode("latin-1")))
    assert g.layer(7).name == "pool-é"


def test_long_chain_without_recursion_limit() -> None:
    n = 3000
    text = maxpool_chain(n)
    g = parse_text(text, "chain.xml")
    assert len(g.topological()) == n


# -- IR rules ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda t: t.replace('version="11"', 'version="12"'), "expected IR version 10 or 11"),
        (lambda t: t.replace("<net", "<model").replace("</net>", "</model>"), "<net> root"),
        (lambda t: t.replace('id="7"', 'id="0"'), "used twice"),
        (lambda t: t.replace('id="7"', 'id="-3"'), "integer >= 0"),
        (lambda t: t.replace(' type="avgpool"', ""), "no 'type'"),
        (
            lambda t: t.replace(' version="opset1">\n      <data kernel', ">\n      <data kernel"),
            "no 'version'",
        ),
        (
            lambda t: t.replace(
                "<dim>4</dim><dim>4</dim></port></output>",
                "<dim>8.5</dim><dim>4</dim></port></output>",
            ),
            "<dim>8.5</dim>",
        ),
        (
            lambda t: t.replace(
                "<dim>4</dim><dim>4</dim></port></output>",
                "<dim>eight</dim><dim>4</dim></port></output>",
            ),
            "<dim>eight</dim>",
        ),
        (
            lambda t: t.replace(
                "<dim>4</dim><dim>4</dim></port></output>",
                "<dim>-5</dim><dim>4</dim></port></output>",
            ),
            ">= -1",
        ),
        (
            lambda t: t.replace(
                "<dim>4</dim><dim>4</dim></port></output>",
                "<dim>99999999999999999999</dim><dim>4</dim></port></output>",
            ),
            "is not a dimension",
        ),
        (
            lambda t: t.replace('to-layer="7" to-port="0"', 'to-layer="7" to-port="5"'),
            "no such input port",
        ),
        (
            lambda t: t.replace('from-layer="7" from-port="1"', 'from-layer="9" from-port="1"'),
            "layer id 9, which does not exist",
        ),
        (
            lambda t: t.replace(
                "</edges>", '<edge from-layer="0" from-port="0" to-layer="7" to-port="0"/></edges>'
            ),
            "second incoming edge",
        ),
        (
            lambda t: t.replace(
                '<edge from-layer="7" from-port="1" to-layer="2" to-port="0"/>', ""
            ),
            "no incoming edge",
        ),
        (lambda t: t.replace("<layers>", "").replace("</layers>", ""), "no <layers>"),
        (lambda t: t.replace("</net>", "</net><net/>"), "XML syntax error"),
        (lambda t: t[: len(t) // 2], "XML syntax error"),
        (lambda t: t.replace('precision="FP32" names', 'precision="FP33" names'), "FP33"),
    ],
)
def test_ir_rule_violations_name_the_place(change: object, expected: str) -> None:
    err = error_of(change(net()))  # type: ignore[operator]
    assert expected in str(err)
    assert str(err).startswith("m.xml")
    assert "\n" not in str(err)


def test_cycle_is_refused() -> None:
    text = """<net name="c" version="11"><layers>
<layer id="0" name="a" type="MaxPool" version="opset1"><data kernel="1" strides="1"/>
<input><port id="0"/></input><output><port id="1"/></output></layer>
<layer id="1" name="b" type="MaxPool" version="opset1"><data kernel="1" strides="1"/>
<input><port id="0"/></input><output><port id="1"/></output></layer>
</layers><edges><edge from-layer="0" from-port="1" to-layer="1" to-port="0"/>
<edge from-layer="1" from-port="1" to-layer="0" to-port="0"/></edges></net>"""
    assert "cycle" in str(error_of(text))


# -- hostile input ------------------------------------------------------------------------------

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<net name="&lol4;" version="11"><layers/></net>
"""


@pytest.mark.parametrize(
    "text",
    [
        BILLION_LAUGHS,
        '<?xml version="1.0"?>\n<!DOCTYPE net SYSTEM "http://example.invalid/ir.dtd">\n<net/>',
        '<!DOCTYPE net [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]><net version="11"/>',
        '<!DOCTYPE net [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<net name="&x;"/>',
        "<!-- hello -->\n<!DOCTYPE net>\n<net/>",
    ],
)
def test_doctype_is_refused_before_parsing(text: str) -> None:
    err = error_of(text)
    assert isinstance(err, IrParseError)
    assert "DOCTYPE" in str(err) or "DTD" in str(err)


def test_undefined_entity_is_a_syntax_error() -> None:
    assert "XML syntax error" in str(error_of('<net version="11" name="&x;"><layers/></net>'))


def test_quadratic_blowup_attribute_is_refused_quickly() -> None:
    start = time.monotonic()
    text = '<net version="11" name="' + "a" * 50_000_000 + '"><layers/></net>'
    err = error_of(text)
    assert "XML" in str(err)
    assert time.monotonic() - start < 10


def test_deep_nesting_is_refused() -> None:
    text = '<net version="11">' + "<a>" * 100_000 + "</a>" * 100_000 + "</net>"
    assert "XML syntax error" in str(error_of(text))


def test_gzip_is_refused_not_inflated(tmp_path: Path) -> None:
    path = write(tmp_path, gzip.compress(net().encode()), "m.xml.gz")
    with pytest.raises(IrParseError, match="gzip-compressed"):
        load(path)


def test_directory_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(IrParseError, match="directory"):
        load(str(tmp_path))
    with pytest.raises(IrParseError, match="not found"):
        load(str(tmp_path / "nope.xml"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_model_and_fifo_entity_target_are_never_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # A reader that opened either FIFO would block forever (nobody writes to it).
    model = write(
        tmp_path,
        f'<!DOCTYPE net [<!ENTITY x SYSTEM "file://{fifo}">]>\n<net version="11">&x;</net>',
    )
    code = (
        "import sys\nfrom irpool.frontends.ir_xml import load\nfrom irpool.errors import "
        "IrpoolError\nfor p in sys.argv[1:]:\n    try:\n        load(p)\n    except IrpoolError "
        "as e:\n        print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(fifo), model], capture_output=True, text=True, timeout=20
    )
    assert "FIFO" in out.stdout and "DOCTYPE" in out.stdout


def test_wrong_encoding_bytes(tmp_path: Path) -> None:
    with pytest.raises(IrParseError, match="UTF-8"):
        load(write(tmp_path, net().encode() + b"\xff\xfe<"))


@pytest.mark.parametrize(
    "encoding", ["rot13", "base64", "zlib", "bz2", "hex", "uu", "undefined", "foo", "UTF-16"]
)
def test_declared_encoding_is_ignored_as_openvino_ignores_it(tmp_path: Path, encoding: str) -> None:
    """openvino's reader (pugixml) reads a file without a byte-order mark as UTF-8 whatever its
    declaration names, ISO-8859-1 aside (measured with openvino 2026.4.1): so does irpool, and
    no codec named in a file is ever looked up."""
    text = net().replace('<?xml version="1.0"?>', f'<?xml version="1.0" encoding="{encoding}"?>')
    graph = load(write(tmp_path, text))
    assert graph.layers
    assert len(graph.reading_notes) == 1 and f'encoding="{encoding}"' in graph.reading_notes[0]
    assert "UTF-8" in graph.reading_notes[0]


@pytest.mark.parametrize("encoding", ["UTF-8", "utf8", "US-ASCII", "ISO-8859-1", "latin1"])
def test_declared_encodings_openvino_reads_need_no_word(tmp_path: Path, encoding: str) -> None:
    text = net().replace('<?xml version="1.0"?>', f'<?xml version="1.0" encoding="{encoding}"?>')
    assert load(write(tmp_path, text)).reading_notes == ()


def test_declared_latin1_is_read_as_latin1(tmp_path: Path) -> None:
    text = net().replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="Latin1"?>')
    text = text.replace('name="t"', 'name="caf\u00e9"', 1)
    path = tmp_path / "latin.xml"
    path.write_bytes(text.encode("latin-1"))
    assert load(str(path)).name == "caf\u00e9"


@pytest.mark.parametrize(
    ("attribute", "value"),
    [
        ("kernel", "\u00b2, 2"),  # superscript two: str.isdigit() says yes, int() says no
        ("kernel", "\u0662, 2"),  # Arabic-Indic two: int() reads it, openvino refuses it
        ("strides", "99999999999999999999999, 2"),  # beyond int64: openvino cannot parse it
        ("pads_begin", "9223372036854775808, 0"),  # 2^63
    ],
)
def test_integer_lists_are_ascii_int64(tmp_path: Path, attribute: str, value: str) -> None:
    import irpool

    original = {"kernel": 'kernel="2, 2"', "strides": 'strides="2,2"'}.get(
        attribute, 'pads_begin="0, 0"'
    )
    path = write(tmp_path, net().replace(original, f'{attribute}="{value}"'))
    with pytest.raises(IrpoolError, match="64-bit integers") as info:
        irpool.check(path)
    assert str(info.value).startswith(f"{path}:")


def test_megabytes_of_leading_whitespace_are_skipped_in_one_step(tmp_path: Path) -> None:
    # 8 million blank characters before the root (under libxml2's 10 MB text limit, which
    # refuses larger runs): the prolog scan must not walk them one by one in Python (that
    # took seconds); the file then reads normally
    path = write(tmp_path, " \n" * 4_000_000 + net().replace('<?xml version="1.0"?>', ""))
    graph = load(path)
    assert [layer.name for layer in graph.layers][:2] == ["x", "pool"]
