"""The shape and window rules of irpool.geometry against a brute-force reference.

The reference below never uses a division formula: it lays windows one after another along a
padded axis and counts, so each rule is checked against its definition:

* floor: every window lies inside the padded input;
* ceil: windows are laid until the padded input is covered (the last may overhang it);
* ceil_drop: as ceil, but a last window that would start in the right padding is dropped;
* SAME pads: the smallest total padding that lets ceil(n / s) windows fit, the odd one at the
  end (upper) or the beginning (lower);
* taps: enumerated positions start + t * d.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from irpool import conventions
from irpool.errors import IrpoolError
from irpool.geometry import (
    AxisPlan,
    PoolParams,
    axis_plan,
    dilated,
    out_dim,
    out_size,
    plan,
    same_pads,
)
from irpool.model import Dim

OPENVINO = conventions.get("openvino")


def windows_laid(n: int, k_eff: int, s: int, pb: int, pe: int, rule: str) -> int:
    """How many windows the rule lays along an axis of n elements padded by (pb, pe)."""
    length = n + pb + pe
    if rule == "floor":
        count = 0
        while count * s + k_eff <= length:
            count += 1
        return max(count, 1)  # openvino clamps a window larger than the input to one output
    count = 1
    while (count - 1) * s + k_eff < length:
        count += 1
    if rule == "ceil_drop" and count > 1 and (count - 1) * s >= n + pb:
        count -= 1
    return count


def same_reference(n: int, k: int, s: int, d: int, upper: bool) -> tuple[int, int]:
    """The smallest total padding that fits ceil(n / s) windows, split as SAME splits it."""
    want = -(-n // s)
    total = 0
    while windows_laid(n, dilated(k, d), s, 0, total, "floor") < want or (
        n + total < dilated(k, d)
    ):
        total += 1
    small, large = total // 2, total - total // 2
    return (small, large) if upper else (large, small)


axes = st.tuples(
    st.integers(1, 30),  # n
    st.integers(1, 6),  # k
    st.integers(1, 5),  # s
    st.integers(1, 3),  # d
    st.integers(0, 6),  # pb
    st.integers(0, 6),  # pe
)


@given(axis=axes, rule=st.sampled_from(["floor", "ceil", "ceil_drop"]))
def test_output_size_is_the_number_of_windows_laid(
    axis: tuple[int, int, int, int, int, int], rule: str
) -> None:
    n, k, s, d, pb, pe = axis
    k_eff = dilated(k, d)
    assume(k_eff <= n + pb + pe)
    assert out_size(n, k_eff, s, pb, pe, rule) == windows_laid(n, k_eff, s, pb, pe, rule)  # type: ignore[arg-type]


@given(axis=axes, upper=st.booleans())
def test_same_pads_are_the_smallest_that_fit(
    axis: tuple[int, int, int, int, int, int], upper: bool
) -> None:
    n, k, s, d, _, _ = axis
    assert same_pads(n, k, s, d, upper) == same_reference(n, k, s, d, upper)


@given(axis=axes, auto_pad=st.sampled_from(["explicit", "same_upper", "same_lower", "valid"]))
def test_axis_plan_taps_and_ranges_match_enumeration(
    axis: tuple[int, int, int, int, int, int], auto_pad: str
) -> None:
    n, k, s, d, pb, pe = axis
    params = PoolParams("t", "mean", (k,), (s,), (d,), ((pb, pe),), auto_pad=auto_pad)  # type: ignore[arg-type]
    try:
        a = axis_plan(params, 0, n, OPENVINO)
    except IrpoolError:
        assume(False)
        raise
    for j in range(a.out):
        positions = [j * s - a.pad_begin + t * d for t in range(k)]
        assert a.taps(j) == positions
        assert a.in_input(j) == sum(0 <= p < n for p in positions)
        assert a.declared(j) == sum(-a.pad_begin <= p < n + a.pad_end for p in positions)
    for t in range(k):
        lo, hi = a.tap_range(t)
        inside = [j for j in range(a.out) if 0 <= j * s - a.pad_begin + t * d < n]
        assert list(range(lo, hi)) == inside
    assert a.has_empty() == any(a.in_input(j) == 0 for j in range(a.out))


@given(axis=axes, rounding=st.sampled_from(["floor", "ceil", "ceil_torch"]))
def test_plan_axes_agree_with_the_reference(
    axis: tuple[int, int, int, int, int, int], rounding: str
) -> None:
    n, k, s, d, pb, pe = axis
    params = PoolParams("t", "max", (k,), (s,), (d,), ((pb, pe),), rounding=rounding)  # type: ignore[arg-type]
    rule = {"floor": "floor", "ceil": "ceil", "ceil_torch": "ceil_drop"}[rounding]
    k_eff = dilated(k, d)
    if k_eff > n + pb + pe:
        with pytest.raises(IrpoolError, match="larger than the data shape"):
            plan(params, (1, 1, n), "openvino")
        return
    p = plan(params, (1, 1, n), "openvino")
    assert p.axes == (AxisPlan(n, k, s, d, pb, pe, windows_laid(n, k_eff, s, pb, pe, rule)),)


@given(
    axis=axes,
    lo=st.integers(0, 25),
    width=st.integers(0, 10),
    rounding=st.sampled_from(["floor", "ceil", "ceil_torch"]),
)
def test_interval_dims_are_the_sizes_of_their_bounds(
    axis: tuple[int, int, int, int, int, int], lo: int, width: int, rounding: str
) -> None:
    """An interval input gives the interval of the sizes of its bounds, and every size in
    between lies inside it (the rules are monotonic).  openvino never drops the window of a
    lower bound with n + pb = 0 (its unsigned n + pb - 1 wraps around), which makes ceil_torch
    non-monotonic there: such bounds are left out."""
    _, k, s, d, pb, pe = axis
    assume(rounding != "ceil_torch" or lo + pb > 0)
    params = PoolParams("t", "max", (k,), (s,), (d,), ((pb, pe),), rounding=rounding)  # type: ignore[arg-type]
    rule = {"floor": "floor", "ceil": "ceil", "ceil_torch": "ceil_drop"}[rounding]
    hi = lo + width
    dim = out_dim(params, 0, Dim(lo, hi), rule, OPENVINO)  # type: ignore[arg-type]
    k_eff = dilated(k, d)
    for n in range(lo, hi + 1):
        if n + pb + pe >= k_eff and n + pb > 0:
            size = windows_laid(n, k_eff, s, pb, pe, rule)
            assert dim.contains(size), (n, size, dim)


@pytest.mark.parametrize(("onednn", "pads"), [("1", (0, 0)), ("0", (-1, -1))])
def test_tf_3d_same_pads_follow_tensorflows_kernel(
    onednn: str, pads: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """TensorFlow's 3-D SAME pads, measured with tensorflow-cpu 2.21 (k=1, s=3 on 6 elements):
    oneDNN reads elements 0 and 3 (pads 0, 0); Eigen's cuboid kernels, without oneDNN, read
    1 and 4 (their pad is trunc((3 + 1 - 6) / 2) = -1, not clamped).  2-D pools read 0 and 3
    either way.  Only Linux x86 is modelled."""
    import platform
    import sys

    if sys.platform != "linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("TensorFlow without oneDNN is modelled on Linux x86 only")
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", onednn)
    same = PoolParams("t", "max", (1, 1, 1), (3, 1, 1), (1, 1, 1), ((0, 0),) * 3, "same_upper")
    p = plan(same, (1, 1, 6, 2, 2), "tf")
    assert p.pads[0] == pads and p.output_shape == (1, 1, 2, 2, 2)
    assert p.nan_max == ("ignore" if onednn == "1" else "eigen_3d")
    flat = PoolParams("t", "max", (1, 1), (3, 1), (1, 1), ((0, 0),) * 2, "same_upper")
    assert plan(flat, (1, 1, 6, 2), "tf").pads[0] == (0, 0)
