"""Real networks converted by openvino: `check` and `compare` on every pooling layer.

The ONNX files are the small real networks the `onnx` package ships in
onnx/backend/test/data/light (weights are ConstantOfShape placeholders that openvino folds);
they are converted at test time into a temporary folder, never committed.  With torch
installed, a SqueezeNet-style network with ceil_mode max pooling is converted by openvino's
PyTorch front end as well.
"""

from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from irpool.check import add_openvino_findings, check_file
from irpool.compare import CompareOptions, compare_model
from irpool.frontends.ir_xml import load
from irpool.run import random_inputs

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

NETWORKS = [
    "bvlc_alexnet",
    "densenet121",
    "inception_v1",
    "inception_v2",
    "resnet50",
    "shufflenet",
    "squeezenet",
    "vgg19",
    "zfnet512",
]


@pytest.fixture(scope="session")
def converted(
    ov: ModuleType, onnx: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("realnets")
    source = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    paths = {}
    for name in NETWORKS:
        model = ov.convert_model(str(source / f"light_{name}.onnx"))
        path = folder / f"{name}.xml"
        ov.save_model(model, str(path))
        paths[name] = path
    return paths


@pytest.mark.parametrize("name", NETWORKS)
def test_real_network(converted: dict[str, Path], name: str) -> None:
    path = str(converted[name])
    report = check_file(path)
    add_openvino_findings(report)
    assert report.ok, [f.message for f in report.findings]
    assert report.layers, "every one of these networks has pooling layers"
    graph = load(path)
    started = time.perf_counter()
    result = compare_model(graph, random_inputs(graph, seed=1, low=0, high=1))
    elapsed = time.perf_counter() - started
    assert result.layers and not result.missing
    assert result.passed, "\n".join(
        f"{layer.layer}: {layer.diagnosis.text if layer.diagnosis else layer.error}"
        for layer in result.layers
        if not layer.passed
    )
    print(f"\n{name}: {len(result.layers)} pooling layers compared in {elapsed:.1f} s")


def _squeezenet_like(torch: ModuleType) -> object:
    nn = torch.nn

    class Fire(nn.Module):  # type: ignore[misc]
        def __init__(self, cin: int, squeeze: int, expand: int) -> None:
            super().__init__()
            self.squeeze = nn.Conv2d(cin, squeeze, 1)
            self.e1 = nn.Conv2d(squeeze, expand, 1)
            self.e3 = nn.Conv2d(squeeze, expand, 3, padding=1)

        def forward(self, x: object) -> object:
            s = torch.relu(self.squeeze(x))
            return torch.cat([torch.relu(self.e1(s)), torch.relu(self.e3(s))], 1)

    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, stride=2),
        nn.ReLU(),
        nn.MaxPool2d(3, 2, ceil_mode=True),
        Fire(32, 8, 16),
        Fire(32, 8, 16),
        nn.MaxPool2d(3, 2, ceil_mode=True),
        Fire(32, 16, 32),
        nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=False),
        nn.MaxPool2d(2, 2, ceil_mode=True),
    ).eval()


@pytest.mark.filterwarnings("ignore:`torch.jit.trace:DeprecationWarning")
def test_pytorch_front_end_ceil_mode(ov: ModuleType, torch: ModuleType, tmp_path: Path) -> None:
    net = _squeezenet_like(torch)
    example = torch.rand(1, 3, 61, 61)
    model = ov.convert_model(net, example_input=example, input=[(1, 3, 61, 61)])
    path = tmp_path / "fire.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    report = check_file(str(path))
    assert report.ok, [f.message for f in report.findings]
    graph = load(str(path))
    ops = {r.pooling.spec.label for r in report.layers}
    assert ops <= {"MaxPool-14", "AvgPool-14"} and "MaxPool-14" in ops
    x = example.numpy()
    result = compare_model(graph, {graph.layers[0].name or "x": x})
    assert result.passed and len(result.layers) == 4
    # and irpool's torch convention on the same layers gives torch's own numbers end to end
    with torch.no_grad():
        expected = net(example).numpy()
    from irpool.oracles import openvino_rt

    got = openvino_rt.infer(openvino_rt.compile_model(openvino_rt.read_path(str(path))), [x])[0]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def _light(onnx: ModuleType, name: str) -> str:
    return str(
        Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"light_{name}.onnx"
    )


def test_onnx_shufflenet_against_onnxruntime(onnx: ModuleType, ort: ModuleType) -> None:
    """shufflenet's 3x3 AveragePools come out of onnxruntime's MLAS kernels a few ulp away from
    irpool's sums (measured: up to 4 ulp); the default allowance accepts exactly that."""
    from irpool.frontends.onnx_model import load as load_onnx

    graph = load_onnx(_light(onnx, "shufflenet"))
    inputs = random_inputs(graph, seed=1, low=0, high=1)
    report = compare_model(graph, inputs)
    assert report.passed and len(report.layers) == 5
    strict = compare_model(graph, inputs, options=CompareOptions(exact=True))
    for layer in strict.layers:
        if not layer.passed:
            assert layer.op.startswith("AveragePool")
            assert layer.diagnosis is not None
            assert layer.diagnosis.text.startswith("summation-order rounding")
            assert layer.outputs[0].max_ulp is not None and layer.outputs[0].max_ulp <= 8


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet", "inception_v1"])
def test_convert_report_on_real_networks(
    ov: ModuleType, onnx: ModuleType, ort: ModuleType, name: str
) -> None:
    """Whole networks: every pooling node is found in openvino's conversion (inception_v1's
    last AveragePool feeds a Dropout the front end removes) and computes what it means."""
    from irpool.convert_report import convert_report
    from irpool.frontends.onnx_model import load as load_onnx

    path = _light(onnx, name)
    family = ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool")
    pooling = [n.op_type for n in onnx.load(path).graph.node if n.op_type in family]
    graph = load_onnx(path)
    report = convert_report(graph, random_inputs(graph, seed=2, low=0, high=1))
    assert [n.op.split("-")[0] for n in report.nodes] == pooling
    assert report.onnxruntime is not None and not report.notes
    for node in report.nodes:
        assert node.same, (node.node, node.divergence, node.onnxruntime, node.missing)
        assert node.openvino_layer.startswith(("AvgPool", "MaxPool", "ReduceMean", "ReduceMax"))
        assert node.outputs and all(c.shape_ok and c.mismatches == 0 for c in node.outputs)
