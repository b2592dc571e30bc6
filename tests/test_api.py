"""The Python API against hand arithmetic and the command line's results."""

from __future__ import annotations

import doctest
from collections.abc import Mapping

import numpy as np
import pytest
from conftest import ROOT

import irpool
import irpool.api


@pytest.mark.slow
def test_docstring_examples() -> None:
    failures, tried = doctest.testmod(irpool.api, verbose=False)
    assert tried > 0 and failures == 0


def test_pool_by_hand() -> None:
    x = np.array([[[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]]]], np.float32)
    np.testing.assert_array_equal(irpool.pool(x, 2, 2), [[[[6, 8], [14, 16]]]])
    values, indices = irpool.pool(x, 2, 2, indices=True)
    np.testing.assert_array_equal(values, [[[[6, 8], [14, 16]]]])
    np.testing.assert_array_equal(indices, [[[[5, 7], [13, 15]]]])
    # 3x3 mean with one pixel of excluded padding: the corner averages 1, 2, 5, 6
    assert irpool.pool(x, 3, 1, 1, reduce="mean")[0, 0, 0, 0] == 3.5


def test_check_run_explain() -> None:
    report = irpool.check(str(ROOT / "fixtures" / "spec" / "avgpool-1-examples.xml"))
    assert not report.ok and len(report.findings) == 4
    graph = irpool.load(str(ROOT / "fixtures" / "ir" / "pool_zoo.xml"))
    outputs = irpool.run(graph, {"x": np.ones((1, 3, 32, 32), np.float32)})
    assert not isinstance(outputs, dict)
    np.testing.assert_array_equal(outputs.outputs["Result_11"], 1.0)
    layer = irpool.run(graph, np.ones((1, 3, 32, 32), np.float32), layer="mp14_torch")
    assert isinstance(layer, Mapping) and set(layer) == {"output0", "output1"}
    (report_mp,) = irpool.explain(graph, layer="mp1")
    assert report_mp.output_shape == (1, 3, 16, 16)
