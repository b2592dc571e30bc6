"""The worked example of docs/architecture.md for a new *family*: a test-only op, PlaneSum-1
(the sum of each (N, C) plane in float64, kept as [N, C, 1, 1]), is one `Family`, one plan
type, one row of the kernel table and one registry entry; check, run, explain and fixtures
handle it with no other change."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import irpool
from irpool import cli
from irpool.conventions import Convention
from irpool.families import Explained, Family, FamilyParams, FamilyPlan, Values, plan_head
from irpool.frontends.ir_writer import NetBuilder
from irpool.kernel import family as kernels
from irpool.model import Dim, Shape
from irpool.ops import REGISTRY
from irpool.ops.registry import OpSpec

if TYPE_CHECKING:
    from irpool.model import Layer


@dataclass(frozen=True, kw_only=True)
class PlaneSumPlan(FamilyPlan):
    size: int
    """Elements of each plane."""


class PlaneSum(Family):
    name = "planesum"
    title = "plane sum"

    def read(self, spec: OpSpec, layer: Layer, rank: int | None, values: Values) -> FamilyParams:
        return FamilyParams(op=spec.label)

    def infer_known(
        self, params: FamilyParams, shape: Shape, convention: Convention
    ) -> tuple[Shape | None, tuple[str, ...]]:
        out = (shape[0], shape[1], *(Dim.of(1) for _ in shape[2:]))
        return out, tuple("the whole plane: 1" for _ in shape[2:])

    def plan(
        self, params: FamilyParams, shape: tuple[int, ...], dtype: str, convention: Convention
    ) -> FamilyPlan:
        out = (shape[0], shape[1], *(1 for _ in shape[2:]))
        size = int(np.prod(shape[2:]))
        return PlaneSumPlan(
            **plan_head(params, convention, shape, out, dtype, "float64"), size=size
        )

    def explain(self, plan: FamilyPlan) -> Explained:
        assert isinstance(plan, PlaneSumPlan)
        return Explained(
            [f"each plane of {plan.size} elements summed in float64"], {"size": plan.size}
        )


def plane_sum(plan: PlaneSumPlan, x: Any, inputs: Any) -> list[Any]:
    """The kernel row: the plane sums in float64, stored in the data's type."""
    sums = x.astype(np.float64).sum(axis=tuple(range(2, x.ndim)), keepdims=True)
    return [sums.astype(x.dtype)]


PLANE_SUM_1 = OpSpec(
    "openvino",
    "PlaneSum",
    1,
    dtypes=("f32",),
    source="docs/architecture.md, the worked example of a family",
    kind="family",
    path=PlaneSum(),
)


def plane_sum_reference(plane: Any) -> type:
    """The oracle row: an onnx.reference OpRun named after the op (the evaluator finds a new op
    by its class name and op_domain) computing `plane(values of one plane)` for each plane."""
    from onnx.reference.op_run import OpRun

    def run(self: Any, x: Any) -> tuple[Any]:
        out = np.zeros((*x.shape[:2], *(1,) * (x.ndim - 2)), np.float64)
        for n in range(x.shape[0]):
            for c in range(x.shape[1]):
                out[n, c] = plane([float(v) for v in x[n, c].reshape(-1)])
        return (out.astype(x.dtype),)

    return type("PlaneSum", (OpRun,), {"op_domain": "test.planes", "_run": run})


@pytest.fixture
def plane_sum_family() -> Iterator[OpSpec]:
    REGISTRY.add(PLANE_SUM_1)
    kernels.register(PlaneSumPlan, plane_sum)
    try:
        yield PLANE_SUM_1
    finally:
        REGISTRY.remove(PLANE_SUM_1)
        del kernels.KERNELS[PlaneSumPlan]


def _net(path: Path, declared: int = 1) -> str:
    net = NetBuilder("planes")
    x = net.parameter("x", (2, 3, 4, 5))
    y = net.op("PlaneSum", "opset1", "sum", {}, [x], [([2, 3, declared, declared], "f32")])[0]
    net.result("out", y)
    path.write_text(net.xml())
    return str(path)


def test_a_new_family_is_one_module_and_its_rows(
    tmp_path: Path, plane_sum_family: OpSpec, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _net(tmp_path / "planes.xml")
    assert cli.main(["check", path]) == 0
    assert "(PlaneSum-1) [2,3,4,5] -> [2,3,1,1]" in capsys.readouterr().out
    assert cli.main(["check", _net(tmp_path / "wrong.xml", declared=2)]) == 1
    capsys.readouterr()

    # integers, so the float32 sum is exact and the brute-force loop is the truth
    x = np.random.default_rng(0).integers(-50, 50, (2, 3, 4, 5)).astype(np.float32)
    want = np.zeros((2, 3, 1, 1), np.float32)
    for n in range(2):
        for c in range(3):
            want[n, c, 0, 0] = sum(float(v) for v in x[n, c].reshape(-1))
    result = irpool.run(path, {"x": x})
    assert not isinstance(result, dict)
    np.testing.assert_array_equal(result.outputs["out"], want)

    assert cli.main(["explain", path]) == 0
    assert "each plane of 20 elements summed in float64" in capsys.readouterr().out

    out = tmp_path / "fx"
    assert cli.main(["fixtures", "--from", path, str(out), "--json"]) == 0
    capsys.readouterr()
    index = json.loads((out / "index.json").read_text())
    assert len(index["cases"]) == 1


def _onnx_net(path: Path) -> str:
    from onnx import TensorProto, helper, save

    node = helper.make_node("PlaneSum", ["x"], ["y"], domain="test.planes")
    graph = helper.make_graph(
        [node],
        "planes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 1, 1])],
    )
    imports = [helper.make_opsetid("", 18), helper.make_opsetid("test.planes", 1)]
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 10
    save(model, str(path))
    return str(path)


@pytest.mark.parametrize("oracle_sums", [True, False])
def test_compare_holds_the_family_to_its_oracle_row(
    tmp_path: Path,
    plane_sum_family: OpSpec,
    onnx: Any,
    ort: Any,
    oracle_sums: bool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # an IR layer of an op openvino does not know: a one-line refusal, exit 2
    assert cli.main(["compare", _net(tmp_path / "planes.xml")]) == 2
    err = capsys.readouterr().err
    assert "PlaneSum" in err and len(err.strip().splitlines()) == 1

    # the ONNX entry with an oracle row: the row's plane sums agree with the kernel row's
    # bit for bit on integer data; a row that means something else (the plane's mean) is
    # reported as a difference, so compare does hold the layer to the row
    plane = sum if oracle_sums else (lambda v: sum(v) / len(v))
    entry = replace(PLANE_SUM_1, domain="test.planes", reference=plane_sum_reference(plane))
    REGISTRY.add(entry)
    try:
        path = _onnx_net(tmp_path / "planes.onnx")
        code = cli.main(["compare", path, "--range=-50,50", "--json"])
    finally:
        REGISTRY.remove(entry)
    report = json.loads(capsys.readouterr().out)
    assert "ReferenceEvaluator" in report["oracle"]
    (layer,) = report["layers"]
    assert layer["op"] == "PlaneSum-1"
    assert (code, layer["passed"]) == ((0, True) if oracle_sums else (1, False))
