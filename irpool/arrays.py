"""Reading and writing arrays: .npy / .npz without pickles, sizes checked before loading,
bfloat16 kept as its bit pattern with the dtype recorded beside it."""

from __future__ import annotations

import io
import json
import math
import os
import zipfile
import zlib
from collections.abc import Mapping
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from .errors import InputError, Where
from .files import atomic_write
from .frontends.safe_io import read_regular_file
from .limits import DEFAULT_MAX_ELEMENTS as DEFAULT_MAX_ELEMENTS
from .limits import check_elements as check_elements
from .limits import max_elements as max_elements
from .model import numpy_dtype

Array = npt.NDArray[Any]

DTYPES_KEY = "__irpool_dtypes__"
"""Entry of an .npz written by irpool that records dtypes numpy cannot (bfloat16)."""

MAX_NPY_BYTES = 1 << 36


def mismatches(
    got: Array,
    want: Array,
    atol: float = 0.0,
    rtol: float = 0.0,
    *,
    exact: bool = False,
    nan_equal: bool = True,
    signed_zero: bool = False,
) -> Array:
    """Where `got` differs from `want` (same shapes): beyond atol + rtol * |want|, or anywhere
    with `exact`.  NaN matches NaN when `nan_equal`, an infinity only the same infinity, and
    +0 matches -0 unless `signed_zero`."""
    if exact and got.dtype.kind in "iub" and want.dtype.kind in "iub":
        return np.asarray(got != want)  # float64 would merge 64-bit integers above 2**53
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        same = g == w  # also infinities of the same sign
        if not exact:  # tolerances apply to finite numbers only
            close = np.abs(g - w) <= atol + rtol * np.abs(w)
            same |= close & np.isfinite(g) & np.isfinite(w)
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    same &= ~(nan_g | nan_w)
    if nan_equal:
        same |= nan_g & nan_w
    if signed_zero:
        same &= ~((g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w)))
    return np.asarray(~same)


def bfloat16_dtype() -> np.dtype[Any]:
    """ml_dtypes.bfloat16; InputError when ml_dtypes is missing."""
    return numpy_dtype("bf16")


def _read_npy(handle: IO[bytes], name: str, where: Where, limit: int | None) -> Array:
    """One .npy stream; `name` prefixes messages about an .npz member ("" for a .npy file).
    Only the bytes the header announces are read."""
    label = f"member {name!r}: " if name else ""
    try:
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
        else:
            raise ValueError(f"unsupported .npy version {version}")
    except (ValueError, EOFError, zipfile.BadZipFile, OSError, zlib.error) as e:
        raise InputError(f"{label}not a readable .npy array ({e})", where) from None
    if dtype.hasobject:
        raise InputError(f"{label}holds Python objects (pickled data); refused", where)
    check_elements(
        tuple(shape), f"array {name or os.path.basename(where.file or '')!r}", limit, where
    )
    count = math.prod(shape)
    try:
        data = handle.read(count * dtype.itemsize)
        extra = handle.read(1)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as e:
        raise InputError(f"{label}unreadable ({e})", where) from None
    if len(data) != count * dtype.itemsize:
        raise InputError(
            f"{label}truncated array data ({len(data)} of {count * dtype.itemsize} bytes)", where
        )
    if extra:
        raise InputError(
            f"{label}bytes follow the array data; expected exactly the "
            f"{count * dtype.itemsize} bytes its header announces",
            where,
        )
    array = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    # native byte order and C layout; np.array keeps a 0-d array 0-d
    return np.array(array, dtype=dtype.newbyteorder("="), order="C")


def load_arrays(path: str, limit: int | None = None) -> dict[str, Array]:
    """Arrays of an .npy (key '') or .npz file (keys as written), without pickles; bfloat16
    restored when the file records it.  Also ONNX TensorProto files (`.pb`, keyed by the name
    the tensor carries, '' for none) and onnx's backend-test folders (`test_data_set_N/`: its
    input_K.pb by the names they carry)."""
    where = Where(file=path)
    if os.path.isdir(path):
        from .frontends.tensor_pb import read_data_set

        items = read_data_set(path, limit)
        if len(items) == 1:
            return {items[0][0]: items[0][1]}
        if not all(name for name, _ in items):
            raise InputError(
                "a data set of several inputs needs the name of each in its .pb files; give "
                "each input_K.pb as -i NAME=FILE",
                where,
            )
        return dict(items)
    if path.lower().endswith(".pb"):
        from .frontends.tensor_pb import read_tensor

        name, array = read_tensor(path, limit)
        return {name: array}
    data = read_regular_file(path, MAX_NPY_BYTES, what="input")
    if data.startswith(b"\x93NUMPY"):
        return {"": _read_npy(io.BytesIO(data), "", where, limit)}
    if data.startswith(b"PK"):
        return _load_npz(data, where, limit)
    raise InputError(
        "not a .npy or .npz file (no NUMPY or zip header), nor a .pb tensor (by its suffix)",
        where,
    )


def _load_npz(data: bytes, where: Where, limit: int | None) -> dict[str, Array]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as e:
        raise InputError(f"not a readable .npz archive ({e})", where) from None
    arrays: dict[str, Array] = {}
    dtypes: dict[str, str] = {}
    with archive:
        for info in archive.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            try:
                # streamed: a member is inflated only as far as its header announces
                with archive.open(info) as member:
                    array = _read_npy(member, name, where, limit)
            except (
                zipfile.BadZipFile,
                OSError,
                EOFError,
                RuntimeError,
                NotImplementedError,
                zlib.error,
            ) as e:
                raise InputError(f"member {name!r} is unreadable ({e})", where) from None
            if name == DTYPES_KEY:
                dtypes = _dtype_record(array, where)
                continue
            arrays[name] = array
    if not arrays:
        raise InputError("the .npz archive holds no arrays", where)
    for name, dtype in dtypes.items():
        if dtype != "bfloat16" or name not in arrays:
            continue
        if arrays[name].dtype.itemsize != 2:
            raise InputError(
                f"{DTYPES_KEY} marks {name!r} as bfloat16, but it holds "
                f"{arrays[name].dtype} values; expected 16-bit patterns",
                where,
            )
        arrays[name] = arrays[name].view(np.uint16).view(bfloat16_dtype())
    return arrays


def _dtype_record(array: Array, where: Where) -> dict[str, str]:
    """The {array name: dtype name} record irpool writes beside arrays numpy cannot type."""
    try:
        record = json.loads(array.tobytes())
    except (ValueError, UnicodeDecodeError):
        record = None
    if not isinstance(record, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in record.items()
    ):
        raise InputError(
            f"{DTYPES_KEY} entry is not a JSON object of array names to dtype names", where
        )
    return record


def _storable(array: Array) -> tuple[Array, str | None]:
    # np.asarray(order="C"), not np.ascontiguousarray, which turns a 0-d array into 1-d (a
    # full reduction's output is 0-d)
    if array.dtype.name == "bfloat16":
        return np.asarray(array, order="C").view(np.uint16), "bfloat16"
    return np.asarray(array, order="C"), None


def save_npz(path: str, arrays: Mapping[str, Array]) -> None:
    """Write arrays to an .npz atomically; bfloat16 as uint16 bits with the dtype recorded."""
    stored: dict[str, Array] = {}
    dtypes: dict[str, str] = {}
    for name, array in arrays.items():
        stored[name], special = _storable(array)
        if special:
            dtypes[name] = special
    if dtypes:
        stored[DTYPES_KEY] = np.frombuffer(json.dumps(dtypes).encode(), dtype=np.uint8)

    def write(handle: IO[bytes]) -> None:
        # members in the given order with a fixed timestamp: the same arrays give the same bytes
        with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED) as archive:
            for name, array in stored.items():
                buffer = io.BytesIO()
                np.lib.format.write_array(buffer, array, allow_pickle=False)
                info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                archive.writestr(info, buffer.getvalue())

    atomic_write(path, write)


def save_npy(path: str, array: Array) -> None:
    """Write one array atomically (bfloat16 as its uint16 bits)."""
    stored, _ = _storable(array)
    atomic_write(path, lambda handle: np.save(handle, stored, allow_pickle=False))
