"""ONNX TensorProto files (`.pb`) and the folder layout of onnx's backend tests.

onnx's backend tests keep a case as `model.onnx` beside folders `test_data_set_0`, ... that hold
one serialized TensorProto per model input (`input_0.pb`, `input_1.pb`, ...) and per output
(`output_0.pb`, ...), in the order of the graph's inputs and outputs.  irpool reads such files
as inputs (`-i x.pb`, `-i test_data_set_0/`) and `fixtures --data-set` writes them beside each
case.  onnx.numpy_helper converts both ways (float16 and bfloat16 included, whether the values
sit in `raw_data` or in `int32_data`); a tensor whose data lives in an external file (a path the
file chooses), a segment, an undefined type or negative dims are refused.  onnx is the `[onnx]`
extra: without it `.pb` files are refused with exit code 3, as the other optional runtimes.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, OracleMissing, Where

Array = npt.NDArray[Any]

MAX_PB_BYTES = 1 << 31
"""Largest .pb file read (protobuf's own limit for one message is 2 GiB)."""
DATA_SET = "test_data_set_0"
"""The folder `fixtures --data-set` writes into each case."""
_MEMBER = re.compile(r"^(input|output)_(\d+)\.pb$")


def _onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise OracleMissing(".pb tensors need onnx; pip install 'irpool[onnx]'") from None
    return onnx


def parse_tensor(data: bytes, where: Where, limit: int | None = None) -> tuple[str, Array]:
    """The name (may be empty) and the array of a serialized TensorProto."""
    onnx = _onnx()
    from onnx import numpy_helper

    from ..limits import check_elements

    tensor = onnx.TensorProto()
    try:
        tensor.ParseFromString(data)
    except Exception as e:  # protobuf's DecodeError
        raise InputError(f"not a TensorProto .pb file ({type(e).__name__})", where) from None
    if tensor.data_location == onnx.TensorProto.EXTERNAL or tensor.external_data:
        raise InputError("the tensor's data is in an external file; refused", where)
    if tensor.data_type == onnx.TensorProto.UNDEFINED:
        raise InputError("the tensor has no element type; expected a TensorProto", where)
    if tensor.HasField("segment"):
        raise InputError("the file holds a segment of a tensor; expected a whole tensor", where)
    if any(d < 0 for d in tensor.dims):
        raise InputError(f"negative dims {list(tensor.dims)}; expected dims >= 0", where)
    dims = tuple(int(d) for d in tensor.dims)
    check_elements(dims, f"tensor {tensor.name!r}", limit, where)
    try:
        array = np.asarray(numpy_helper.to_array(tensor))
    except Exception as e:  # data sizes that do not fit the dims, types numpy cannot hold
        raise InputError(f"cannot read the tensor's data ({_first_line(e)})", where) from None
    if array.size != math.prod(dims):
        raise InputError(f"{array.size} values for dims {list(dims)}", where)
    return tensor.name, np.ascontiguousarray(array.reshape(dims))


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else type(error).__name__


def read_tensor(path: str, limit: int | None = None) -> tuple[str, Array]:
    """The name and the array of a .pb file (a regular file, read whole)."""
    from .safe_io import read_regular_file

    data = read_regular_file(path, MAX_PB_BYTES, what="input")
    return parse_tensor(data, Where(file=path), limit)


def tensor_bytes(array: Array, name: str = "") -> bytes:
    """A serialized TensorProto of `array` named `name` (raw little-endian data)."""
    _onnx()
    from onnx import numpy_helper

    tensor = numpy_helper.from_array(np.ascontiguousarray(array), name)
    data: bytes = tensor.SerializeToString()
    return data


def numbered(folder: str, kind: str) -> list[str]:
    """The paths of `kind`_K.pb (kind: input or output) in a data set folder, in K order (as
    integers: input_10 after input_9); a gap in the numbers is an error."""
    found: dict[int, str] = {}
    for entry in os.listdir(folder):
        m = _MEMBER.match(entry)
        if m and m.group(1) == kind:
            found[int(m.group(2))] = os.path.join(folder, entry)
    missing = sorted(set(range(len(found))) - set(found))
    if missing:
        raise InputError(f"{kind}_{missing[0]}.pb is missing", Where(file=folder))
    return [found[k] for k in sorted(found)]


def read_data_set(folder: str, limit: int | None = None) -> list[tuple[str, Array]]:
    """The inputs of a test_data_set_N folder in order, each with the name it carries."""
    inputs = [read_tensor(p, limit) for p in numbered(folder, "input")]
    if not inputs:
        raise InputError("no input_K.pb files; expected onnx's test_data_set layout", Where(folder))
    return inputs


def write_data_set(
    folder: str, inputs: Sequence[tuple[str, Array]], outputs: Sequence[tuple[str, Array]]
) -> None:
    """Write input_K.pb and output_K.pb into `folder` (created), each named as given."""
    from ..files import atomic_write_bytes

    os.makedirs(folder, exist_ok=True)
    for kind, items in (("input", inputs), ("output", outputs)):
        for k, (name, array) in enumerate(items):
            atomic_write_bytes(os.path.join(folder, f"{kind}_{k}.pb"), tensor_bytes(array, name))
