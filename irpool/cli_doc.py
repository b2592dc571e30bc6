"""docs/cli.md, written from the argparse definitions of the command line.

    python -m irpool.cli_doc > docs/cli.md

A test regenerates it and compares, so the reference cannot drift from the code.
"""

from __future__ import annotations

import argparse
import os

from .cli import build_parser
from .cli_options import EXIT_FINDING, EXIT_INTERNAL, EXIT_INVALID, EXIT_OK, EXIT_ORACLE

WIDTH = 100

COMMON = """## What every command shares

**Inputs.** `-i [NAME=]FILE` gives a model input: an `.npy`, an `.npz` (its members keep the
names they were written with and are bound to the model inputs of those names), a `.pb` ONNX
TensorProto (bound by the name it carries), or an onnx backend-test folder `test_data_set_N/`
(its `input_K.pb`). `NAME=` binds a file of one array to model input NAME, or picks member NAME
of an `.npz`. An array whose element type differs from the input's is refused unless `--cast`;
one whose shape the input cannot take is refused with both shapes and the file named. Inputs
not given are drawn uniformly from `--seed` in `--range` (every input must then have a static
shape). With `--layer` on `run`, `-i` is the layer's own input.

**Shapes.** `--input-shape [NAME=]SHAPE` (repeatable; `x=1,3,32,32` or `x=[1,3,32,32]`; without
NAME: the model's only input) replaces the declared shape of an input as openvino's
`Model.reshape` does, and the shapes inside the model follow from it: irpool's own rules
through pooling layers, openvino's shape inference through the other layer types of an IR,
onnx's shape inference through an ONNX model. It is taken by `run`, `compare`,
`convert-report`, `explain` and `fixtures --from`; on a file of `<layer>` fragments (which has
no model inputs) a shape without NAME is the layer's input. So a model converted from PyTorch
with its default dynamic shapes (`[?,3,?,?]`) runs with `--input-shape 1,3,224,224` or
`-i x.npy` alone.

**Finding a layer.** `--layer` takes a layer's (or node's) name, its id in the file (`8` or
`id=8`), the name of one of its output tensors, or a part of its name that only one pooling
layer has (`features.3` for `__module.features.3/aten::max_pool2d/MaxPool`). A part several
layers share is refused with their names; a miss lists the closest names.

**Words.** Reports on an IR speak of layers and ports (`output port 1`); reports on an ONNX
model speak of nodes and their inputs and outputs (`output 0 (tensor "y")`) and name the
runtime that computed the reference (onnxruntime, or onnx's reference evaluator for a node
onnxruntime has no kernel for). JSON keys of earlier versions are kept (`worst_openvino`,
`missing_in_openvino` also in ONNX reports); neutral ones sit beside them (`runtime`,
`worst_oracle`, `missing_in_oracle`), and `inference_precision_hint` is null when openvino is
not the oracle.

**Shapes** are written one way in every text report and message: `[1,3,?,1..40]`, dims
separated by commas without spaces, `?` for a dynamic dim, `a..b` for an interval (`1..`
without upper bound); the same text in JSON where a shape may be dynamic (`declared`,
`input`), and arrays of integers where it is an actual array's (`input_shape`). Positions in
an array (the worst element) are written as Python lists: `[0, 0, 3]`.

**Errors** are one line on stderr: `irpool: FILE:LINE: layer "NAME" (TYPE, VERSION, id=N):
what is wrong; what was expected`, exit code 2. A usage error names the help of its command
(`irpool check: error: unrecognized arguments: --jsn; did you mean --json? (see irpool check
--help)`), and a misspelt command, choice or option gets the closest known one. With `--json`
a failing command (exit 2, 3 or 70) also prints an error document on stdout, so that a script
reads a failure as it reads a report: `{"schema": "irpool.error/1", "command", "exit_code",
"kind"` (`usage`, `input`, `oracle-missing` or `internal`)`, "message", "where"` (file, line,
layer, or null)`}`, schema `irpool/schemas/error-1.json`. The Python API raises the same
message as an `irpool.IrpoolError`, naming the function's arguments (`cast=True`) where the
command line names its options (`--cast`).

**Tolerances.** `compare` and `convert-report` default to `--atol 0 --rtol 0`: irpool
reproduces openvino's CPU plugin bit for bit on IR layers (measured on every layer of the test
suite and the real models of the onnx package), and MaxPool, indices and integer outputs are
always compared exactly. The only expected difference is summation order: onnxruntime's MLAS
kernels (and openvino's converted ONNX means) sum a window in another order than irpool, so a
float mean may differ by at most (taps + 1) * eps * max|x| of the window (plus one ulp of an
f16 output); this allowance is applied on its own (measured: up to 4 ulp on shufflenet, at most
0.21 of the bound over 1,050 random AveragePool nodes) and `--exact` turns it off. A tolerance
must be a finite number >= 0 (`convert-report` defaulted to atol 1e-6 and rtol 1e-5
before).

**Reports.** `--json` prints one JSON document on stdout (strict JSON: non-finite floats are
written as the strings `"inf"`, `"-inf"`, `"nan"`); its `schema` names a JSON Schema (Draft
2020-12) shipped in the package as `irpool/schemas/NAME-VERSION.json`: `check-1`, `run-1`,
`explain-1`, `compare-1`, `convert-report-2` (ONNX), `convert-report-3` (source models and
IRs), `fixtures-summary-1`, `error-1` (any command that fails), and for the files `fixtures`
writes `fixture-1` (meta.json) and `fixtures-1` (index.json). `compare` and
`convert-report` also write `--html FILE.html`: one self-contained page (verdict, table of
layers, a heatmap of the differing cells of each differing layer, both values at the worst
cell, every value of both sides of an output of at most 256 values (the report's
`cell_values`), the attributes side by side, the divergence named and explained).

**Versions.** irpool's rules were measured on openvino 2026.4; with another openvino
installed, the first command that loads it prints one warning line on stderr.
"""


def _help(parser: argparse.ArgumentParser) -> str:
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)
    try:
        return parser.format_help().rstrip()
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


def markdown() -> str:
    parser = build_parser()
    lines = [
        "# Command reference",
        "",
        "Generated by `python -m irpool.cli_doc` from the argparse definitions.",
        "",
        "Every command takes the whole pooling family (windowed, adaptive and global pooling,",
        "reductions, Lp pooling, MaxUnpool, quantized average pooling) in OpenVINO IR and ONNX",
        "models; which op each command covers, and how far, is the table at the top of the",
        "README and [coverage.md](coverage.md). `irpool COMMAND --help` prints a command's",
        "section below.",
        "",
        "Exit codes, for every command:",
        "",
        f"- {EXIT_OK}: success (every compared shape or value agrees)",
        f"- {EXIT_FINDING}: a finding: a declared shape or a compared value disagrees",
        f"- {EXIT_INVALID}: invalid input or usage; exactly one line on stderr naming the file "
        "(and line) at fault",
        f"- {EXIT_ORACLE}: an oracle that was asked for (openvino, onnx, onnxruntime, "
        "matplotlib) is not installed",
        f"- {EXIT_INTERNAL}: a bug in irpool (one line; `IRPOOL_DEBUG=1` shows the traceback)",
        "",
        "Environment: `IRPOOL_MAX_ELEMENTS` (largest array, default 2^30 elements),",
        "`IRPOOL_MAX_XML_BYTES` (largest XML file, default 512 MiB), `IRPOOL_THREADS` (kernel",
        "threads, default the CPU count up to 8), `IRPOOL_KERNEL` (`numpy` forces the numpy core;",
        "`compiled` requires the compiled path, `irpool[fast]`; default `auto`: compiled where",
        "numba is installed and it serves the layer), `IRPOOL_OV_ISA` (`avx512_amx`,",
        "`avx512_bf16`, `avx512` or `avx2`: the CPU whose openvino irpool's openvino convention",
        "models; default this",
        'machine\'s, see "What the machine changes" in [semantics.md](semantics.md)),',
        "`IRPOOL_DEBUG` (tracebacks for internal errors).",
        "",
        COMMON,
        "## irpool",
        "",
        "```text",
        _help(parser),
        "```",
    ]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                lines += ["", f"## irpool {name}", "", "```text", _help(sub), "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
