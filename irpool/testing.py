"""Test your own pooling implementation against a folder written by `irpool fixtures`.

    from irpool.testing import assert_matches, parametrize_fixtures

    @parametrize_fixtures("tests/golden")
    def test_my_pooling(case):
        values, indices = my_pool(case.input, case.op, case.attributes)
        assert_matches(case, values, indices)

or, in a conftest.py, `pytest_generate_tests = fixture_tests("tests/golden")` for every test
that takes an argument named `fixture_case`.  `cases(folder)` returns the same case objects
for any other test runner.  Every case carries its tolerance (meta.json `tolerance`):
`assert_matches` applies it, treats NaN as equal to NaN, ignores the sign of zeros and compares
indices exactly.  pytest is imported only by the two pytest helpers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from .arrays import bfloat16_dtype, load_arrays, mismatches

Array = npt.NDArray[Any]

__all__ = [
    "FixtureCase",
    "Tolerance",
    "assert_matches",
    "cases",
    "fixture_tests",
    "parametrize_fixtures",
]


@dataclass(frozen=True)
class Tolerance:
    """How close a value must be: |got - expected| <= atol + rtol * |expected|."""

    atol: float = 0.0
    rtol: float = 0.0
    nan_equal: bool = True
    signed_zero: bool = False


@dataclass(frozen=True, eq=False)
class FixtureCase:
    """One case folder; arrays are read when first used."""

    folder: str
    meta: Mapping[str, Any]
    status: str = "unverified"
    """From index.json: confirmed (openvino computes the expected outputs), diverges (see
    `reason`), or unverified."""
    reason: str | None = None

    @property
    def name(self) -> str:
        return str(self.meta["name"])

    @property
    def op(self) -> str:
        return str(self.meta["op"])

    @property
    def version(self) -> str:
        return str(self.meta["version"])

    @property
    def attributes(self) -> Mapping[str, str]:
        """The layer's `<data>` attributes as written in model.xml."""
        return dict(self.meta["attributes"])

    @property
    def model_path(self) -> str:
        return os.path.join(self.folder, str(self.meta["files"]["model"]))

    @cached_property
    def input(self) -> Array:
        """The input (bfloat16 restored from its stored uint16 bits)."""
        x = load_arrays(os.path.join(self.folder, str(self.meta["files"]["input"])))[""]
        if self.meta["dtype"] == "bfloat16" and x.dtype == np.uint16:
            x = x.view(bfloat16_dtype())
        return x

    @cached_property
    def expected(self) -> dict[str, Array]:
        """Expected outputs by name: `values`, and `indices` for MaxPool-8/14."""
        return load_arrays(os.path.join(self.folder, str(self.meta["files"]["expected"])))

    @property
    def tolerance(self) -> Tolerance:
        t = self.meta["tolerance"]
        return Tolerance(
            float(t["atol"]), float(t["rtol"]), bool(t["nan_equal"]), bool(t["signed_zero"])
        )

    def __repr__(self) -> str:
        return f"FixtureCase({self.name!r})"


def _read_json(path: str) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def cases(
    folder: str | os.PathLike[str],
    status: str | Iterable[str] | None = None,
    op: str | None = None,
    divergence: str | None = None,
    select: Callable[[FixtureCase], bool] | None = None,
) -> list[FixtureCase]:
    """The cases of a fixtures folder in manifest order (by name when there is no complete
    manifest), optionally only those with a status (e.g. "confirmed"), an op ("AvgPool"), a
    divergence key ("D1"), or a predicate."""
    root = os.fspath(folder)
    index_path = os.path.join(root, "index.json")
    entries: list[Mapping[str, Any]] = []
    if os.path.exists(index_path):
        entries = list(_read_json(index_path).get("cases", []))
    if not entries:  # no manifest, or one of a run still writing: the complete folders
        entries = [
            {"name": e}
            for e in sorted(os.listdir(root))
            if not e.startswith(".") and os.path.isfile(os.path.join(root, e, "meta.json"))
        ]
    wanted = {status} if isinstance(status, str) else set(status) if status else None
    out = []
    for entry in entries:
        path = os.path.join(root, str(entry["name"]))
        case = FixtureCase(
            path,
            _read_json(os.path.join(path, "meta.json")),
            str(entry.get("status", "unverified")),
            entry.get("reason"),
        )
        if wanted is not None and case.status not in wanted:
            continue
        if op is not None and case.op != op:
            continue
        if divergence is not None and divergence not in case.meta["divergences"]:
            continue
        if select is not None and not select(case):
            continue
        out.append(case)
    return out


def _as_array(got: Any, like: Array) -> Array:
    arr = np.asarray(got)
    if like.dtype.name == "bfloat16" and arr.dtype == np.uint16:
        arr = arr.view(like.dtype)
    return arr


def _mismatches(got: Array, want: Array, tol: Tolerance, exact: bool) -> Array:
    exact = exact or (want.dtype.kind in "iub" and tol.atol == 0 and tol.rtol == 0)
    return mismatches(
        got,
        want,
        tol.atol,
        tol.rtol,
        exact=exact,
        nan_equal=tol.nan_equal,
        signed_zero=tol.signed_zero,
    )


def _check(case: FixtureCase, key: str, got: Any, check_dtype: bool, tol: Tolerance | None) -> None:
    want = case.expected[key]
    arr = _as_array(got, want)
    label = f"{case.name} ({case.meta['op_version']}, {case.meta['element_type']}): {key}"
    if arr.shape != want.shape:
        raise AssertionError(f"{label}: shape {list(arr.shape)}, expected {list(want.shape)}")
    if check_dtype and arr.dtype != want.dtype:
        raise AssertionError(f"{label}: dtype {arr.dtype.name}, expected {want.dtype.name}")
    tol = tol or case.tolerance
    bad = _mismatches(arr, want, tol, exact=key == "indices")
    count = int(np.count_nonzero(bad))
    if count:
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        rule = "exactly" if key == "indices" else f"atol={tol.atol:g}, rtol={tol.rtol:g}"
        raise AssertionError(
            f"{label}: {count} of {want.size} differ ({rule}); first at {list(first)}: got "
            f"{arr[first]!r}, expected {want[first]!r}"
        )


def assert_matches(
    case: FixtureCase,
    values: Any,
    indices: Any = None,
    check_dtype: bool = True,
    tolerance: Tolerance | None = None,
) -> None:
    """Raise AssertionError unless `values` (and `indices`, when given) equal the case's
    expected outputs within its tolerance (or `tolerance`, to allow an implementation that
    rounds differently from openvino); the message names the case and the first cell."""
    _check(case, "values", values, check_dtype, tolerance)
    if indices is not None:
        if "indices" not in case.expected:
            raise AssertionError(f"{case.name}: indices given, but the case has none")
        _check(case, "indices", indices, check_dtype, tolerance)


def _ids(found: list[FixtureCase]) -> list[str]:
    return [c.name for c in found]


def parametrize_fixtures(
    folder: str | os.PathLike[str], argname: str = "case", **filters: Any
) -> Any:
    """A pytest.mark.parametrize over the cases of `folder` (filters as in `cases`), ids =
    case names."""
    import pytest

    found = cases(folder, **filters)
    return pytest.mark.parametrize(argname, found, ids=_ids(found))


def fixture_tests(
    folder: str | os.PathLike[str], argname: str = "fixture_case", **filters: Any
) -> Callable[[Any], None]:
    """A `pytest_generate_tests` hook that parametrizes every test taking `argname` over the
    cases of `folder`."""

    def pytest_generate_tests(metafunc: Any) -> None:
        if argname in metafunc.fixturenames:
            found = cases(folder, **filters)
            metafunc.parametrize(argname, found, ids=_ids(found))

    return pytest_generate_tests
