"""The command-line contract (docs/cli.md, docs/security.md), line by line, against
irpool.cli.main run in the test process, and against the real `irpool` process wherever memory,
time, the environment or the process itself is measured: exit codes, the single stderr line naming file and line, no traceback, nothing opened that a
file names, nothing written that should not be, limits enforced before allocating."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import ROOT, irpool, maxpool_chain

ZOO = ROOT / "fixtures" / "ir" / "pool_zoo.xml"

GOOD = """<?xml version="1.0"?>
<net name="t" version="11">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="1,1,4,4" element_type="f32"/>
      <output><port id="0" precision="FP32"><dim>1</dim><dim>1</dim><dim>4</dim><dim>4</dim></port></output>
    </layer>
    <layer id="1" name="pool1" type="AvgPool" version="opset1">
      <data kernel="2, 2" strides="2, 2" pads_begin="0, 0" pads_end="0, 0" exclude-pad="true"/>
      <input><port id="0"><dim>1</dim><dim>1</dim><dim>4</dim><dim>4</dim></port></input>
      <output><port id="1" precision="FP32"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port></output>
    </layer>
    <layer id="2" name="out" type="Result" version="opset1">
      <input><port id="0"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
    <edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>
  </edges>
</net>
"""


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float
    """The command's own peak resident memory (VmHWM at exit; unlike RUSAGE_CHILDREN, it does
    not include the high-water mark of the pytest process the child was forked from)."""


PEAK = """
import atexit, runpy, sys
report = sys.argv.pop(1)
def peak():
    with open("/proc/self/status") as status:
        kb = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(report, "w") as out:
        out.write(kb)
atexit.register(peak)
sys.argv[0] = "irpool"
runpy.run_module("irpool", run_name="__main__", alter_sys=True)
"""


def cli(
    *args: str,
    timeout: float | None = None,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
    process: bool = False,
) -> Outcome:
    """The command's outcome. A real `irpool` process (under a 60 s timeout unless `timeout`
    says otherwise) with `process`, `timeout` or `env` given: where its memory, its time or its
    environment is measured. Otherwise irpool.cli.main in this process (conftest.irpool), which
    gives the same exit code and output at a fraction of a process's start-up; its peak_mb is
    NaN, so that a memory bound asserted on it fails."""
    started = time.monotonic()
    if not (process or env is not None or timeout is not None):
        done = irpool(*args, cwd=cwd)
        seconds = time.monotonic() - started
        return Outcome(done.returncode, done.stdout, done.stderr, seconds, float("nan"))
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "peak"
        out = subprocess.run(
            [sys.executable, "-c", PEAK, str(report), *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=None if env is None else {**os.environ, **env},
            timeout=60 if timeout is None else timeout,
        )
        peak = int(report.read_text()) / 1024 if report.exists() else float("nan")
    return Outcome(out.returncode, out.stdout, out.stderr, time.monotonic() - started, peak)


def assert_refused(o: Outcome, *words: str, where: str | None = None) -> None:
    """Exit 2, exactly one line on stderr, no traceback, the words and the place in it."""
    assert o.code == 2, (o.code, o.stdout, o.stderr)
    assert o.stderr.count("\n") == 1 and o.stderr.endswith("\n"), o.stderr
    assert "Traceback" not in o.stderr
    for word in words:
        assert word in o.stderr, (word, o.stderr)
    if where is not None:
        assert where in o.stderr, (where, o.stderr)


def write(tmp: Path, text: str | bytes, name: str = "m.xml") -> Path:
    path = tmp / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


# -- exit codes and messages ----------------------------------------------------------------


def test_exit_codes_0_1_2(tmp_path: Path) -> None:
    assert cli("check", str(write(tmp_path, GOOD))).code == 0
    assert cli("check", "fixtures/spec/avgpool-1-examples.xml").code == 1
    assert_refused(cli("check", str(tmp_path / "missing.xml")), "not found")


def test_exit_3_when_an_oracle_is_missing(tmp_path: Path) -> None:
    fake = tmp_path / "openvino"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('hidden')\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")
    out = irpool("compare", str(ZOO), env=env)
    assert out.returncode == 3 and out.stderr.count("\n") == 1 and "irpool[openvino]" in out.stderr


def test_layer_error_names_file_line_and_layer(tmp_path: Path) -> None:
    bad = GOOD.replace('kernel="2, 2"', 'kernel="2, 2, 2"')
    path = write(tmp_path, bad)
    for command in (("check",), ("run", "-o", str(tmp_path / "o.npz")), ("explain",)):
        o = cli(command[0], str(path), *command[1:])
        assert_refused(
            o, '"kernel" has 3 values', where=f'{path}:8: layer "pool1" (AvgPool, opset1, id=1)'
        )
    assert not (tmp_path / "o.npz").exists()


# -- XML ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prolog",
    [
        '<!DOCTYPE net [<!ENTITY a "x">]>',
        '<!DOCTYPE net [<!ENTITY % p "x"> %p;]>',
        '<!DOCTYPE net SYSTEM "ir.dtd">',
        '<!DOCTYPE net PUBLIC "-//x//y" "http://example.invalid/ir.dtd">',
    ],
)
def test_doctype_refused(tmp_path: Path, prolog: str) -> None:
    text = GOOD.replace('<?xml version="1.0"?>', f'<?xml version="1.0"?>\n{prolog}')
    assert_refused(cli("check", str(write(tmp_path, text))), "DOCTYPE", where=":2:")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("form", ["entity", "dtd", "xinclude", "stylesheet", "schema"])
def test_nothing_named_by_the_file_is_opened(tmp_path: Path, form: str) -> None:
    fifo = tmp_path / "trap"
    os.mkfifo(fifo)  # opening it for reading would block: the timeout would catch it
    text = {
        "entity": GOOD.replace(
            '<net name="t"', f'<!DOCTYPE net [<!ENTITY e SYSTEM "{fifo}">]>\n<net name="&e;"'
        ),
        "dtd": GOOD.replace('<net name="t"', f'<!DOCTYPE net SYSTEM "{fifo}">\n<net name="t"'),
        "xinclude": GOOD.replace(
            "<layers>",
            f'<layers><xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="{fifo}"/>',
        ),
        "stylesheet": GOOD.replace(
            '<net name="t"', f'<?xml-stylesheet type="text/xsl" href="{fifo}"?>\n<net name="t"'
        ),
        "schema": GOOD.replace(
            '<net name="t"',
            f'<net xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="urn:x {fifo}" name="t"',
        ),
    }[form]
    o = cli("check", str(write(tmp_path, text)), timeout=20)
    if form in ("stylesheet", "schema"):
        assert o.code == 0, o.stderr  # ignored, as they should be
    else:
        assert_refused(o)


def test_compressed_model_refused(tmp_path: Path) -> None:
    path = write(tmp_path, gzip.compress(GOOD.encode()), "m.xml")
    assert_refused(cli("check", str(path)), "gzip-compressed", where=str(path))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_device_directory_model_paths(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    assert_refused(cli("check", str(fifo), timeout=20), "FIFO")
    assert_refused(cli("check", "/dev/zero", timeout=20), "device")
    assert_refused(cli("check", str(tmp_path)), "directory")


@pytest.mark.parametrize("kind", ["attribute", "nesting", "laughs", "quadratic"])
def test_size_limits(tmp_path: Path, kind: str) -> None:
    if kind == "attribute":
        text = GOOD.replace('name="t"', 'name="' + "a" * 50_000_000 + '"')
    elif kind == "nesting":
        text = GOOD.replace("<layers>", "<layers>" + "<x>" * 100_000 + "</x>" * 100_000)
    elif kind == "laughs":
        entities = '<!ENTITY l0 "lol">' + "".join(
            f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10}">' for i in range(1, 10)
        )
        text = GOOD.replace('<net name="t"', f'<!DOCTYPE net [{entities}]>\n<net name="&l9;"')
    else:
        text = GOOD.replace(
            '<net name="t"',
            '<!DOCTYPE net [<!ENTITY a "'
            + "x" * 50_000
            + '">]>\n<net name="'
            + "&a;" * 50_000
            + '"',
        )
    o = cli("check", str(write(tmp_path, text)), timeout=30)
    assert_refused(o)
    assert o.seconds < 15
    assert o.peak_mb < 600


@pytest.mark.parametrize("variant", ["utf8", "bom", "utf16", "latin1", "crlf", "oddities"])
def test_accepted_as_normal(tmp_path: Path, variant: str) -> None:
    text = GOOD
    data: bytes
    if variant == "oddities":
        text = (
            text.replace(
                '<layer id="1" name="pool1" type="AvgPool" version="opset1">',
                "<layer version='opset1' type='AvgPool' name='pool&#x31;' id='1'><!-- c --><?pi x?>",
            )
            .replace('kernel="2, 2"', 'kernel=" 2 ,2 "')
            .replace(
                "<dim>2</dim><dim>2</dim></port></output>",
                "<dim> 2 </dim><dim><!--x--><![CDATA[2]]></dim></port></output>",
            )
        )
        edges = text[text.index("<edges>") : text.index("</edges>")]
        lines = edges.splitlines()
        text = text.replace(edges, "\n".join([lines[0], *reversed(lines[1:])]))
    data = {
        "utf8": text.encode(),
        "bom": b"\xef\xbb\xbf" + text.encode(),
        "utf16": text.encode("utf-16"),
        "latin1": text.replace(
            '<?xml version="1.0"?>', '<?xml version="1.0" encoding="ISO-8859-1"?>'
        )
        .replace('name="t"', 'name="caf\xe9"')
        .encode("latin-1"),
        "crlf": text.replace("\n", "\r\n").encode(),
        "oddities": text.encode(),
    }[variant]
    o = cli("check", str(write(tmp_path, data)))
    assert o.code == 0, o.stderr


def test_ir_v10_and_long_chains(tmp_path: Path) -> None:
    assert (
        cli("check", str(write(tmp_path, GOOD.replace('version="11"', 'version="10"')))).code == 0
    )
    text = maxpool_chain(3000)
    o = cli("check", str(write(tmp_path, text, "chain.xml")), timeout=60)
    assert o.code == 0 and o.seconds < 30, o.stderr


# -- IR rules ------------------------------------------------------------------------------------

IR_RULES = {
    "root": (lambda t: t.replace("<net", "<model").replace("</net>", "</model>"), "<net> root"),
    "version": (lambda t: t.replace('version="11"', 'version="9"'), "version 10 or 11"),
    "trailing": (lambda t: t + "<net/>", "XML syntax error"),
    "duplicate id": (lambda t: t.replace('id="2" name="out"', 'id="1" name="out"'), "used twice"),
    "no type": (lambda t: t.replace(' type="AvgPool"', ""), "'type'"),
    "no layers": (
        lambda t: t.replace("<layers>", "<lay>").replace("</layers>", "</lay>"),
        "<layers>",
    ),
    "edge layer": (lambda t: t.replace('to-layer="2"', 'to-layer="7"'), "does not exist"),
    "edge port": (
        lambda t: t.replace('to-layer="1" to-port="0"', 'to-layer="1" to-port="3"'),
        "no such input port",
    ),
    "two edges": (
        lambda t: t.replace(
            "</edges>", '<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/></edges>'
        ),
        "second incoming edge",
    ),
    "unconnected": (
        lambda t: t.replace('<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>', ""),
        "no incoming edge",
    ),
    "cycle": (
        lambda t: t.replace(
            '<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>',
            '<edge from-layer="1" from-port="1" to-layer="1" to-port="0"/>',
        ).replace(
            '<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>',
            '<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>',
        ),
        "cycle",
    ),
    "dim 8.5": (
        lambda t: t.replace(
            "<dim>2</dim><dim>2</dim></port></output>", "<dim>8.5</dim><dim>2</dim></port></output>"
        ),
        "8.5",
    ),
    "dim eight": (
        lambda t: t.replace(
            "<dim>2</dim><dim>2</dim></port></output>",
            "<dim>eight</dim><dim>2</dim></port></output>",
        ),
        "eight",
    ),
    "dim -5": (
        lambda t: t.replace(
            "<dim>2</dim><dim>2</dim></port></output>", "<dim>-5</dim><dim>2</dim></port></output>"
        ),
        ">= -1",
    ),
    "dim int64": (
        lambda t: t.replace(
            "<dim>2</dim><dim>2</dim></port></output>",
            "<dim>9223372036854775808</dim><dim>2</dim></port></output>",
        ),
        "not a dimension",
    ),
    "no dims": (
        lambda t: t.replace(
            '<port id="1" precision="FP32"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port>',
            '<port id="1" precision="FP32"/>',
        ),
        "no <dim>",
    ),
    "rank": (
        lambda t: t.replace('shape="1,1,4,4"', 'shape="1,1,1,1,4,4"').replace(
            'kernel="2, 2"', 'kernel="1, 1, 2, 2"'
        ),
        "3D, 4D or 5D",
    ),
    "list length": (lambda t: t.replace('strides="2, 2"', 'strides="2"'), '"strides" has 1 values'),
    "zero kernel": (lambda t: t.replace('kernel="2, 2"', 'kernel="0, 2"'), "kernel"),
    "zero stride": (lambda t: t.replace('strides="2, 2"', 'strides="0, 2"'), "Strides"),
    "negative pad": (lambda t: t.replace('pads_begin="0, 0"', 'pads_begin="-1, 0"'), "negative"),
    "auto_pad": (
        lambda t: t.replace('exclude-pad="true"', 'exclude-pad="true" auto_pad="same"'),
        "auto_pad",
    ),
    "rounding": (
        lambda t: t.replace('exclude-pad="true"', 'exclude-pad="true" rounding_type="ceil_torch"'),
        "ceil_torch",
    ),
    "auto_pad notset": (
        lambda t: t.replace('exclude-pad="true"', 'exclude-pad="true" auto_pad="notset"'),
        "notset",
    ),
    "kernel fits": (
        lambda t: t.replace('kernel="2, 2"', 'kernel="5, 2"'),
        "larger than the data shape",
    ),
}


@pytest.mark.parametrize("rule", sorted(IR_RULES))
def test_ir_rule(tmp_path: Path, rule: str) -> None:
    change, word = IR_RULES[rule]
    path = write(tmp_path, change(GOOD))
    assert_refused(cli("check", str(path)), word, where=str(path))


def test_enums_and_bools_as_openvino_reads_them(tmp_path: Path) -> None:
    """Enums in any ASCII case; a bool that is not true/false/1/0 keeps its default (measured
    with openvino 2026.4.1's reader, docs/semantics.md "Attribute spellings")."""
    text = GOOD.replace(
        'exclude-pad="true"', 'exclude-pad="yes" auto_pad="EXPLICIT" rounding_type="Floor"'
    )
    o = cli("check", "-v", str(write(tmp_path, text)))
    assert o.code == 1, o.stderr  # read as openvino reads it, and reported (a finding)
    assert "openvino reads it as the default (true)" in o.stdout
    assert "FAIL" in o.stdout and "auto_pad" not in o.stdout.split("FAIL", 1)[1].split("\n")[0]


def _const_net(tmp_path: Path, size: int = 16, bin_bytes: int = 16) -> Path:
    text = (
        GOOD.replace(
            '<layer id="0" name="x" type="Parameter" version="opset1">\n      <data shape="1,1,4,4" element_type="f32"/>',
            f'<layer id="0" name="x" type="Const" version="opset1">\n      <data shape="1,1,2,2" element_type="f32" offset="0" size="{size}"/>',
        )
        .replace("<dim>4</dim><dim>4</dim>", "<dim>2</dim><dim>2</dim>")
        .replace('kernel="2, 2"', 'kernel="1, 1"')
        .replace('strides="2, 2"', 'strides="1, 1"')
    )
    path = write(tmp_path, text, "c.xml")
    (tmp_path / "c.bin").write_bytes(bytes(bin_bytes))
    return path


def test_const_rules(tmp_path: Path) -> None:
    assert cli("check", str(_const_net(tmp_path))).code == 0
    assert_refused(cli("check", str(_const_net(tmp_path, bin_bytes=8))), "has 8 bytes")
    assert_refused(cli("check", str(_const_net(tmp_path, size=12))), "does not match")
    _const_net(tmp_path)
    (tmp_path / "c.bin").unlink()
    assert_refused(cli("check", str(tmp_path / "c.xml")), "does not exist")
    (tmp_path / "c.bin").mkdir()  # a .bin that is not a regular file is not read
    for command in (("check",), ("run", "-o", str(tmp_path / "o.npz"))):
        o = cli(command[0], str(tmp_path / "c.xml"), *command[1:])
        assert_refused(o, "weights path is a directory", where=f"{tmp_path / 'c.xml'}:4")


def test_every_openvino_element_type_is_read(tmp_path: Path) -> None:
    """Weight-compressed models hold u4/i4/nf4/f8 Consts: valid IR, which check reads."""
    const = (
        '<layer id="9" name="w" type="Const" version="opset1">'
        '<data element_type="{et}" shape="4" offset="0" size="{size}"/>'
        '<output><port id="0" precision="{prec}"><dim>4</dim></port></output></layer>\n'
        "  </layers>"
    )
    for et, prec, size in (
        ("u4", "U4", 2),
        ("i4", "I4", 2),
        ("nf4", "NF4", 2),
        ("f8e4m3", "F8E4M3", 4),
        ("u1", "U1", 1),
    ):
        text = GOOD.replace("  </layers>", const.format(et=et, prec=prec, size=size))
        path = write(tmp_path, text, f"{et}.xml")
        (tmp_path / f"{et}.bin").write_bytes(bytes(size))
        o = cli("check", str(path))
        assert o.code == 0, (et, o.stderr)


# -- arrays ------------------------------------------------------------------------------------


def _run(tmp_path: Path, array_file: Path, *extra: str, process: bool = False) -> Outcome:
    return cli(
        "run",
        str(write(tmp_path, GOOD)),
        "-i",
        str(array_file),
        "-o",
        str(tmp_path / "out.npz"),
        *extra,
        process=process,
    )


def test_pickled_truncated_and_oversized_arrays(tmp_path: Path) -> None:
    pickled = tmp_path / "p.npy"
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    assert_refused(_run(tmp_path, pickled), "pickled")
    good = tmp_path / "g.npy"
    np.save(good, np.zeros((1, 1, 4, 4), np.float32))
    truncated = tmp_path / "t.npy"
    truncated.write_bytes(good.read_bytes()[:-10])
    assert_refused(_run(tmp_path, truncated), "truncated")
    header = np.lib.format.header_data_from_array_1_0(np.zeros((1,), np.float32))
    header["shape"] = (1_000_000, 1_000_000)
    huge = tmp_path / "h.npy"
    with open(huge, "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, header)
        handle.write(b"\0" * 64)
    o = _run(tmp_path, huge, process=True)
    assert_refused(o, "1000000000000 elements", "--max-elements")
    assert o.peak_mb < 600
    assert not (tmp_path / "out.npz").exists()


def test_huge_declared_output_is_refused_before_allocating(tmp_path: Path) -> None:
    text = GOOD.replace('shape="1,1,4,4"', 'shape="1,1000000,1000,1000"')
    o = cli("run", str(write(tmp_path, text)), "-o", str(tmp_path / "o.npz"), process=True)
    assert_refused(o, "elements")
    assert o.peak_mb < 600


def test_dtype_and_shape_checks(tmp_path: Path) -> None:
    wrong = tmp_path / "w.npy"
    np.save(wrong, np.zeros((1, 1, 4, 4), np.float64))
    assert_refused(_run(tmp_path, wrong), "--cast")
    assert _run(tmp_path, wrong, "--cast").code == 0
    shape = tmp_path / "s.npy"
    np.save(shape, np.zeros((1, 1, 4, 5), np.float32))
    assert_refused(_run(tmp_path, shape, "--force"), "[1,1,4,5]")
    dynamic = GOOD.replace('shape="1,1,4,4"', 'shape="1,1,2..8,?"')
    o = cli(
        "run",
        str(write(tmp_path, dynamic, "d.xml")),
        "-i",
        str(shape),
        "-o",
        str(tmp_path / "d.npz"),
    )
    assert o.code == 0, o.stderr


def test_npz_members_are_streamed_and_exact(tmp_path: Path) -> None:
    """A member is inflated only as far as its header announces: 200 MB of zeros behind a
    64-byte array cost nothing, and are refused."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": (1, 1, 4, 4)}
    )
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("x.npy", header.getvalue() + bytes(200 * 1024 * 1024))
    assert bomb.stat().st_size < 1024 * 1024
    o = _run(tmp_path, bomb, process=True)
    assert_refused(o, "bytes follow the array data", where=str(bomb))
    assert o.peak_mb < 600
    empty = tmp_path / "e.npz"
    np.savez(empty)
    assert_refused(_run(tmp_path, empty), "holds no arrays", where=str(empty))


def test_damaged_npz_archives(tmp_path: Path) -> None:
    good = io.BytesIO()
    np.lib.format.write_array(good, np.zeros((1, 1, 4, 4), np.float32))
    corrupt = tmp_path / "corrupt.npz"
    with zipfile.ZipFile(corrupt, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("x.npy", good.getvalue())
    raw = bytearray(corrupt.read_bytes())
    start = raw.index(b"x.npy") + len("x.npy")  # the deflated data follows the local header
    raw[start + 8 : start + 24] = bytes(range(200, 216))
    corrupt.write_bytes(bytes(raw))
    assert_refused(_run(tmp_path, corrupt), "member 'x'", where=str(corrupt))
    for record, word in (
        (b'["x"]', "not a JSON object"),
        (b'{"x": "bfloat16"}', "16-bit"),  # float32 values marked bfloat16
    ):
        marked = tmp_path / "marked.npz"
        np.savez(
            marked,
            x=np.zeros((1, 1, 4, 4), np.float32),
            __irpool_dtypes__=np.frombuffer(record, np.uint8),
        )
        assert_refused(_run(tmp_path, marked, "--force"), word, where=str(marked))


def test_layers_without_their_input(tmp_path: Path) -> None:
    text = GOOD.replace(
        '<input><port id="0"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port></input>', ""
    ).replace('<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>', "")
    path = write(tmp_path, text)
    o = cli("run", str(path), "-o", str(tmp_path / "o.npz"))
    assert_refused(o, "Result has no connected input", where=f'{path}:13: layer "out"')


def test_unwritable_output_folder(tmp_path: Path) -> None:
    o = cli("run", str(write(tmp_path, GOOD)), "-o", "/proc/irpool-test.npz")
    assert_refused(o, "cannot write", where="/proc/irpool-test.npz")


def test_limits_and_seeds_for_random_inputs(tmp_path: Path) -> None:
    model = str(write(tmp_path, GOOD))
    o = cli("run", model, "-o", str(tmp_path / "o.npz"), "--max-elements", "15")
    assert_refused(o, "16 elements, above the limit of 15", where=f"{model}:4")
    o = cli("run", model, "-o", str(tmp_path / "o.npz"), "--seed", "-1")
    assert_refused(o, "--seed", ">= 0")
    assert not (tmp_path / "o.npz").exists()


def test_array_shapes_and_byte_order(tmp_path: Path) -> None:
    scalar = tmp_path / "s.npy"
    np.save(scalar, np.float32(1))
    assert_refused(_run(tmp_path, scalar), "has shape []")
    swapped = tmp_path / "b.npy"
    np.save(swapped, np.arange(16, dtype=">f4").reshape(1, 1, 4, 4))
    assert _run(tmp_path, swapped).code == 0  # the same numbers, other byte order
    with np.load(tmp_path / "out.npz") as out:
        assert out["out"].tolist() == [[[[2.5, 4.5], [10.5, 12.5]]]]


def test_inputs_that_match_no_parameter_name_the_model(tmp_path: Path) -> None:
    named = tmp_path / "n.npz"
    np.savez(named, a=np.zeros((1, 1, 4, 4), np.float32), b=np.zeros(1, np.float32))
    assert_refused(_run(tmp_path, named), 'no input for Parameter "x"', where="m.xml:4")


@pytest.mark.parametrize(
    "settings",
    [
        {"IRPOOL_MAX_ELEMENTS": "lots"},
        {"IRPOOL_MAX_ELEMENTS": "0"},
        {"IRPOOL_THREADS": "-2"},
        {"IRPOOL_MAX_XML_BYTES": "1e6"},
    ],
)
def test_bad_settings_are_refused(tmp_path: Path, settings: dict[str, str]) -> None:
    o = cli("run", str(write(tmp_path, GOOD)), "-o", str(tmp_path / "o.npz"), env=settings)
    assert_refused(o, *settings, "expected an integer >= 1")
    assert not (tmp_path / "o.npz").exists()


@pytest.mark.parametrize(
    ("options", "word"),
    [
        (["--range=-inf,inf"], "finite"),
        (["--range=1,nan"], "finite"),
        (["--range", "2,1"], "LO < HI"),
        (["--max-elements", "0"], ">= 1"),
        (["--max-elements", "many"], "not an integer"),
    ],
)
def test_bad_options_are_refused(tmp_path: Path, options: list[str], word: str) -> None:
    o = cli("run", str(write(tmp_path, GOOD)), "-o", str(tmp_path / "o.npz"), *options)
    assert_refused(o, word)


def test_no_command_is_one_line(tmp_path: Path) -> None:
    o = cli()
    assert_refused(o, "COMMAND")
    assert "check" in o.stdout  # the help goes to stdout


RUN_RULES = {
    "extra output port": (
        lambda t: t.replace(
            "<dim>2</dim></port></output>",
            '<dim>2</dim></port><port id="2"><dim>1</dim></port></output>',
            1,
        ),
        "declares 2 output ports",
        ":11:",
    ),
    "element type": (
        lambda t: t.replace('element_type="f32"', 'element_type="string"'),
        "element type string is not supported",
        ':4: layer "x"',
    ),
}


def test_dimless_ports_run_as_openvino_runs_them(tmp_path: Path) -> None:
    """A port without <dim> declares a scalar; openvino ignores port dims when it runs a net,
    and so does run.  check refuses a pooling layer's dim-less output port and reports a
    dim-less input port fed by a 4-D tensor as a finding (measured, openvino 2026.4.1)."""
    out_port = GOOD.replace(
        '<port id="1" precision="FP32"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port>',
        '<port id="1" precision="FP32"/>',
    )
    in_port = GOOD.replace(
        '<input><port id="0"><dim>1</dim><dim>1</dim><dim>4</dim><dim>4</dim></port></input>',
        '<input><port id="0"/></input>',
        1,
    )
    for text in (out_port, in_port):
        path = write(tmp_path, text)
        o = cli("run", str(path), "-o", str(tmp_path / "o.npz"), "--force")
        assert o.code == 0, o.stderr
    assert_refused(cli("check", str(write(tmp_path, out_port))), "no <dim>", where=":11:")
    o = cli("check", str(write(tmp_path, in_port)))
    assert o.code == 1 and "declares a scalar" in o.stdout, o.stdout


@pytest.mark.parametrize("rule", sorted(RUN_RULES))
def test_run_refusals_name_the_place(tmp_path: Path, rule: str) -> None:
    change, word, place = RUN_RULES[rule]
    path = write(tmp_path, change(GOOD))
    for command in (("run", "-o", str(tmp_path / "o.npz")), ("check",)):
        o = cli(command[0], str(path), *command[1:])
        if rule == "element type" and command[0] == "check":
            continue  # a Parameter of any openvino type is valid IR; run cannot execute it
        assert_refused(o, word, where=f"{path}{place}")
    assert not (tmp_path / "o.npz").exists()


# -- files written -----------------------------------------------------------------------------


def test_output_path_rules(tmp_path: Path) -> None:
    model = write(tmp_path, GOOD)
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 1, 4, 4), np.float32))
    existing = tmp_path / "exists.npz"
    existing.write_bytes(b"keep")
    link = tmp_path / "link.npz"
    link.symlink_to(existing)
    folder = tmp_path / "folder.npz"
    folder.mkdir()
    for target in (existing, link, folder, model, x):
        assert_refused(cli("run", str(model), "-i", str(x), "-o", str(target)), "exists")
    assert existing.read_bytes() == b"keep" and model.read_text() == GOOD
    for target in (folder, model, x):
        assert_refused(cli("run", str(model), "-i", str(x), "-o", str(target), "--force"))
    assert model.read_text() == GOOD and np.load(x).shape == (1, 1, 4, 4)
    forced = cli("run", str(model), "-i", str(x), "-o", str(existing), "--force")
    assert forced.code == 0 and existing.read_bytes() != b"keep"
    missing = cli("run", str(model), "-i", str(x), "-o", str(tmp_path / "no" / "o.npz"))
    assert_refused(missing, "does not exist")
    assert not (tmp_path / "no").exists()
    png = cli("explain", str(model), "--png", str(existing))
    assert_refused(png, "exists")
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".irpool-")]
    assert not leftovers


def test_failed_run_leaves_no_output(tmp_path: Path) -> None:
    model = write(
        tmp_path,
        GOOD.replace(
            'version="opset1">\n      <data kernel', 'version="opset99">\n      <data kernel'
        ),
    )
    o = cli("run", str(model), "-o", str(tmp_path / "o.npz"))
    assert_refused(o, "opset99")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.xml"]


@pytest.mark.oracle
def test_a_model_openvino_refuses_is_one_line(tmp_path: Path, ov: ModuleType) -> None:
    """A one-channel i32 AvgPool with a window in the padding has valid shapes, but openvino's
    CPU plugin has no kernel for it (measured): check agrees, compare says openvino refused."""
    text = (
        GOOD.replace('element_type="f32"', 'element_type="i32"')
        .replace('precision="FP32"', 'precision="I32"')
        .replace('pads_end="0, 0"', 'pads_end="1, 1" rounding_type="ceil"')
        .replace("<dim>2</dim><dim>2</dim>", "<dim>3</dim><dim>3</dim>")
    )
    path = write(tmp_path, text)
    assert cli("check", str(path)).code == 0
    o = cli("compare", str(path))
    assert_refused(o, "openvino refused the model", "Supported primitive", where=str(path))
    o = cli("run", str(path), "-o", str(tmp_path / "o.npz"))
    assert_refused(o, "has no kernel for a one-channel i32 AvgPool-1", where=str(path))


def test_outputs_get_ordinary_permissions(tmp_path: Path) -> None:
    """Written through a private temp file, an output still ends with the mode open() gives it
    (0666 less the umask); a file replaced with --force keeps its mode."""
    model = write(tmp_path, GOOD)
    out = tmp_path / "o.npz"
    mask = os.umask(0o022)
    os.umask(mask)
    assert cli("run", str(model), "-o", str(out)).code == 0
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask
    out.chmod(0o640)
    assert cli("run", str(model), "-o", str(out), "--force").code == 0
    assert out.stat().st_mode & 0o777 == 0o640


UNNAMED = """<layer id="7" type="MaxPool" version="opset1">
  <data kernel="2,2" strides="2,2" pads_begin="0,0" pads_end="0,0" rounding_type="floor"/>
  <input><port id="0" precision="FP32"><dim>1</dim><dim>1</dim><dim>4</dim><dim>4</dim></port></input>
  <output><port id="1" precision="FP32"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port></output>
</layer>
"""


def test_layers_are_picked_the_same_way_by_every_command(tmp_path: Path) -> None:
    """--layer takes a name, or #N for an unnamed layer; an unknown one lists the choices."""
    frag = write(tmp_path, UNNAMED)
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "y.npz"
    ran = cli("run", str(frag), "--layer", "#1", "-i", str(tmp_path / "x.npy"), "-o", str(out))
    assert ran.code == 0, ran.stderr
    assert np.load(out)["output0"].ravel().tolist() == [5, 7, 13, 15]  # each 2x2 block's max
    npy = cli("run", str(frag), "--layer", "#1", "-i", str(tmp_path / "x.npy"), "-o", "y.npy")
    assert_refused(npy, ".npz", where="y.npy")
    assert cli("explain", str(frag), "--layer", "#1").code == 0
    other = cli("run", str(frag), "--layer", "#2", "-i", str(tmp_path / "x.npy"), "-o", "z.npz")
    assert_refused(other, '"#2"', "#1")
    assert_refused(cli("explain", str(frag), "--layer", "pool"), "#1")
    zoo = cli("compare", str(ZOO), "--layer", "nope")
    assert_refused(zoo, '"nope"', "mp14_torch", where=str(ZOO))
