"""Every --json output validates against the JSON Schema shipped for it (irpool/schemas/*.json,
Draft 2020-12, checked with the jsonschema library), as strict JSON (no NaN or Infinity); and
the schemas are strict enough that a broken document is refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, irpool
from jsonschema import Draft202012Validator

from irpool import schemas

D1 = "fixtures/divergences/d1_avgpool_ceil.xml"
D2 = "fixtures/divergences/d2_maxpool_ceil.onnx"
ZOO = "fixtures/ir/pool_zoo.xml"


def _refuse(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON")


def problems(document: Any) -> list[str]:
    """What the document's own schema finds wrong with it (empty: valid)."""
    validator = Draft202012Validator(schemas.for_document(document))
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(document)
    ]


def valid_output(*args: str, code: int = 0) -> dict[str, Any]:
    """Run irpool with --json and return the document, checked against its schema."""
    result = irpool(*args, "--json")
    assert result.returncode == code, result.stdout + result.stderr
    document: dict[str, Any] = json.loads(result.stdout, parse_constant=_refuse)
    assert problems(document) == [], args
    return document


def test_every_schema_is_a_draft_2020_12_schema_of_one_tag() -> None:
    tags = set()
    for name in schemas.NAMES:
        schema = schemas.load(name)
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        tag = schema["properties"]["schema"]["const"]
        assert schemas.file_name(tag) == f"{name}.json" and schemas.load(tag) == schema
        tags.add(tag)
    assert len(tags) == len(schemas.NAMES)
    shipped = sorted(p.stem for p in (ROOT / "irpool" / "schemas").glob("*.json"))
    assert shipped == sorted(schemas.NAMES)


def test_check_reports() -> None:
    valid_output("check", ZOO, "fixtures/real/squeezenet.xml", "fixtures/ir/dynamic.xml")
    spec = valid_output("check", "fixtures/spec/avgpool-1-examples.xml", code=1)
    assert spec["ok"] is False and spec["files"][0]["findings"]


@pytest.mark.oracle
def test_check_of_onnx(onnx: Any) -> None:
    document = valid_output("check", D2, code=1)
    assert "output 0" in document["files"][0]["findings"][0]["message"]


def test_run_reports(tmp_path: Path) -> None:
    out = str(tmp_path / "o.npz")
    net = valid_output("run", ZOO, "-o", out, "--save-all")
    assert net["inputs"][0]["source"] == "random" and net["random_inputs_file"]
    assert any(o["intermediate"] for o in net["outputs"]) and len(net["layers"]) == 6
    one_out = str(tmp_path / "one.npz")
    one = valid_output("run", "fixtures/ir/ranks.xml", "--layer", "avg1d", "-o", one_out)
    assert one["layer"] == "avg1d" and [o["name"] for o in one["outputs"]] == ["output0"]
    frag = valid_output(
        "run", "fixtures/spec/avgpool-1-examples.xml", "--layer", "#3", "-o", one_out, "--force"
    )
    assert frag["format"] == "fragments"
    given = valid_output("run", ZOO, "-i", f"x={tmp_path / 'o.inputs.npz'}", "-o", out, "--force")
    assert given["inputs"][0] | {"shape": None} == {
        "name": "x",
        "dtype": "float32",
        "shape": None,
        "source": "file",
        "file": str(tmp_path / "o.inputs.npz"),
        "key": "x",
        "seed": None,
        "range": None,
    }


def test_explain_reports() -> None:
    document = valid_output("explain", ZOO)
    assert len(document["layers"]) == 6
    valid_output("explain", "fixtures/ir/ranks.xml", "--layer", "max3d", "--convention", "torch")


@pytest.mark.oracle
def test_compare_reports(ov: Any) -> None:
    agree = valid_output("compare", "fixtures/real/squeezenet.xml")
    assert agree["passed"] and agree["runtime"] == "openvino" and agree["format"] == "ir"
    d1 = valid_output("compare", D1, "--convention", "torch", code=1)
    (layer,) = d1["layers"]
    assert layer["diagnosis"]["divergences"] and layer["plans"]["torch"]["divisor"] == "declared"
    (values,) = layer["outputs"]
    assert values["mismatch_map"]["differing_cells"] == 1
    assert values["worst_oracle"] == values["worst_openvino"]


@pytest.mark.oracle
def test_compare_report_of_onnx_speaks_onnx(onnx: Any, ort: Any) -> None:
    document = valid_output("compare", D2, "--convention", "openvino", code=1)
    assert document["runtime"] == "onnxruntime" and document["inference_precision_hint"] is None
    assert document["missing_in_oracle"] == document["missing_in_openvino"] == []
    text = irpool("compare", D2).stdout
    assert 'node "pool"' in text and "pooling node(s) compared" in text and "layer" not in text


@pytest.mark.oracle
def test_convert_report_reports(ov: Any, onnx: Any, ort: Any) -> None:
    document = valid_output("convert-report", D2, code=1)
    (node,) = document["nodes"]
    assert node["divergence_id"] == "D2c" and node["openvino_attributes"]["rounding_type"] == "ceil"
    assert node["outputs"][0]["shape_ok"] is False


def test_fixtures_summary_and_files(tmp_path: Path) -> None:
    summary = valid_output("fixtures", str(tmp_path / "s"))
    assert summary["counts"]["written"] == summary["counts"]["cases"] == 6
    assert summary["verification"] is None and summary["unexplained"] == []
    index = json.loads((tmp_path / "s" / "index.json").read_text(), parse_constant=_refuse)
    assert problems(index) == []
    for case in index["cases"]:
        meta = json.loads((tmp_path / "s" / case["name"] / "meta.json").read_text())
        assert problems(meta) == []


@pytest.mark.oracle
def test_fixtures_summary_of_a_verified_set(ov: Any, tmp_path: Path) -> None:
    summary = valid_output("fixtures", str(tmp_path / "c"), "--preset", "corners", "--verify")
    assert summary["verification"]["runtime"] == "openvino"
    assert summary["counts"]["confirmed"] + summary["counts"]["diverges"] == 22


@pytest.mark.parametrize("value", ["nan", "inf", "-1e-6", "-0.5", "x"])
def test_tolerances_must_be_finite_and_not_negative(value: str) -> None:
    result = irpool("compare", D1, "--atol", value, "--json")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "--atol" in result.stderr
    error = json.loads(result.stdout, parse_constant=_refuse)  # the error document
    assert problems(error) == [] and error["kind"] == "usage" and "--atol" in error["message"]


def test_a_broken_document_is_refused() -> None:
    """The schemas say more than the types: each mutation of a real report is caught."""
    result = irpool("explain", ZOO, "--layer", "ap1_ceil", "--json")
    good = json.loads(result.stdout)
    assert problems(good) == []
    mutations = [
        lambda d: d.update(extra=1),
        lambda d: d["layers"][0].update(reduce="median"),
        lambda d: d["layers"][0]["axes"][0].update(kernel=0),
        lambda d: d["layers"][0].pop("divisor_rule"),
        lambda d: d.update(schema="irpool.explain/9"),
    ]
    for mutate in mutations:
        broken = copy.deepcopy(good)
        mutate(broken)
        try:
            assert problems(broken) != [], mutate
        except (KeyError, FileNotFoundError):  # the unknown tag has no schema: refused too
            assert broken["schema"] == "irpool.explain/9"


@pytest.mark.oracle
def test_reports_of_the_pooling_families(ov: Any, tmp_path: Path) -> None:
    """Adaptive pools, reductions and Lp pools (fixtures/ir/families.xml) in every report."""
    families = "fixtures/ir/families.xml"
    explained = valid_output("explain", families)
    assert {layer.get("family") for layer in explained["layers"]} > {None}
    valid_output("check", families)
    valid_output("compare", families, "--input-shape", "1,3,8,8")
    valid_output("run", families, "--input-shape", "1,3,8,8", "-o", str(tmp_path / "f.npz"))
    summary = valid_output("fixtures", str(tmp_path / "fam"), "--preset", "family")
    assert summary["counts"]["written"] > 0
    index = json.loads((tmp_path / "fam" / "index.json").read_text())
    assert problems(index) == []
    for case in index["cases"][:20]:
        assert (
            problems(json.loads((tmp_path / "fam" / case["name"] / "meta.json").read_text())) == []
        )


@pytest.mark.oracle
def test_convert_report_of_source_models_and_irs(ov: Any, torch: Any) -> None:
    """A PyTorch program and the IR openvino made of it: irpool.convert-report/3 documents (the
    demo model's average pool differs, so both exit 1)."""
    program = valid_output("convert-report", "fixtures/convert/conv_avgpool.pt2", code=1)
    assert program["schema"] == "irpool.convert-report/3" and program["framework"] == "torch"
    ir = valid_output("convert-report", "fixtures/convert/conv_avgpool.xml", code=1)
    assert ir["source"]["framework"] == "torch" and ir["ops"][0]["divergence_id"]
    broken = copy.deepcopy(ir)
    broken["ops"][0]["cells"] = "all"
    assert problems(broken)
