"""`irpool convert-report` on PyTorch programs (.pt2 from torch.export, TorchScript) and on the
IRs openvino converts them to, against the truth: torch and openvino each running the model
(torch's module, openvino's own conversion of the .pt2) on the same input.

These need torch and openvino (they fail instead of skipping with IRPOOL_REQUIRE_TORCH=1).
Each model is built, saved and converted once per session; the commands run in this process
(torch is imported once).
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from irpool.cli import main

pytestmark = pytest.mark.oracle
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Case:
    build: Callable[[ModuleType], Any]
    shape: tuple[int, ...]
    differing: tuple[str, ...] = ()
    """The ops convert-report must name as computed otherwise (module path or node name), as
    measured for openvino 2026.4.1 (D3: avg_pool with ceil_mode, count_include_pad and padding,
    whose last window overhangs)."""
    data: str = "uniform"


def _functional(torch: ModuleType) -> Any:
    f = torch.nn.functional

    class Functional(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            a = f.max_pool2d(x, 3, 1, 1)
            b = f.avg_pool2d(a, 3, 2, 1, ceil_mode=True, count_include_pad=False)
            c = f.avg_pool2d(a, 3, 2, 1, ceil_mode=True)
            return b, c, f.adaptive_max_pool2d(x, 3)

    return Functional()


def _parts(torch: ModuleType) -> Any:
    """A base for the test modules: a torch module made of the named submodules it is given
    (registered in that order, so their module paths are their names)."""

    class Parts(torch.nn.Module):
        def __init__(self, **parts: Any) -> None:
            super().__init__()
            for name, part in parts.items():
                self.add_module(name, part)

    return Parts


def _net(torch: ModuleType) -> Any:
    nn = torch.nn

    class Net(_parts(torch)):
        def forward(self, x: Any) -> Any:
            return self.head(self.block(self.stem(x)))

    return Net(
        stem=nn.Sequential(nn.Conv2d(2, 4, 3), nn.ReLU(), nn.MaxPool2d(2, 2, 1, ceil_mode=True)),
        block=nn.Sequential(nn.Conv2d(4, 4, 1), nn.AvgPool2d(3, 2, 1, ceil_mode=True)),
        head=nn.AdaptiveAvgPool2d(1),
    )


def _indices(torch: ModuleType) -> Any:
    nn = torch.nn

    class WithIndices(_parts(torch)):
        def forward(self, x: Any) -> Any:
            y, i = self.mp(x)
            z, j = self.amp(y)
            return y, i, z, j

    return WithIndices(
        mp=nn.MaxPool2d(3, 2, 1, return_indices=True, ceil_mode=True),
        amp=nn.AdaptiveMaxPool2d((2, 3), return_indices=True),
    )


CASES: dict[str, Case] = {
    "avg2d_ceil_pad": Case(lambda t: t.nn.AvgPool2d(3, 2, 1, ceil_mode=True), (1, 3, 6, 6), ("",)),
    "avg2d_d1c": Case(
        lambda t: t.nn.AvgPool2d((3, 2), (1, 2), (1, 0), ceil_mode=True),
        (1, 1, 3, 5),
        ("",),
        "ones",
    ),
    "avg1d_ceil_pad": Case(lambda t: t.nn.AvgPool1d(3, 2, 1, ceil_mode=True), (1, 1, 6), ("",)),
    "avg3d_ceil_pad": Case(
        lambda t: t.nn.AvgPool3d(3, 2, 1, ceil_mode=True), (1, 2, 4, 6, 6), ("",)
    ),
    "avg2d_exclude_pad": Case(
        lambda t: t.nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False), (1, 3, 6, 6)
    ),
    "avg2d_no_overhang": Case(lambda t: t.nn.AvgPool2d(3, 2, 1, ceil_mode=True), (1, 2, 7, 7)),
    "max2d_ceil_pad": Case(lambda t: t.nn.MaxPool2d(2, 2, 1, ceil_mode=True), (1, 2, 5, 5)),
    "max2d_dilated": Case(
        lambda t: t.nn.MaxPool2d((3, 2), (2, 3), 1, dilation=2, ceil_mode=True), (1, 1, 9, 11)
    ),
    "adaptive_avg": Case(lambda t: t.nn.AdaptiveAvgPool2d((3, 3)), (1, 2, 7, 8)),
    "adaptive_max_1d": Case(lambda t: t.nn.AdaptiveMaxPool1d(4), (1, 2, 9)),
    "indices": Case(_indices, (1, 2, 9, 9)),
    "functional": Case(_functional, (1, 2, 6, 6), ("avg_pool2d_1",)),
    "net": Case(_net, (1, 2, 12, 12), ("block.1",)),
}
SCRIPTED = ("avg2d_ceil_pad", "avg1d_ceil_pad", "functional", "net")
"""The cases also saved as TorchScript (torch.jit.trace + torch.jit.save)."""
QUICK = ("avg2d_ceil_pad", "avg3d_ceil_pad", "adaptive_max_1d", "indices", "functional", "net")
"""The cases of the default run (each costs seconds of torch.export and conversion): D3 in 2-D
and 3-D, an adaptive pool, indices, a functional call and a module path in a net. The other
cases (the same rules at other attributes) are slow."""


def _cases(keys: Any, quick: Any = QUICK) -> list[Any]:
    """`keys` as parameters, those outside `quick` marked slow."""
    return [pytest.param(k, id=k, marks=[] if k in quick else [pytest.mark.slow]) for k in keys]


@dataclass
class Built:
    folder: Path
    x: np.ndarray
    differs: bool
    """The truth: torch's outputs and openvino's (its conversion of the .pt2) differ."""


@pytest.fixture(scope="session")
def zoo(
    torch: ModuleType, ov: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], Built]:
    made: dict[str, Built] = {}
    root = tmp_path_factory.mktemp("torch_zoo")
    core = ov.Core()

    def build(key: str) -> Built:
        if key in made:
            return made[key]
        case = CASES[key]
        folder = root / key
        folder.mkdir()
        torch.manual_seed(0)
        module = case.build(torch).eval()
        rng = np.random.default_rng(0)
        if case.data == "ones":
            x = np.ones(case.shape, np.float32)
        else:
            x = rng.uniform(-1, 1, case.shape).astype(np.float32)
        np.save(folder / "x.npy", x)
        example = (torch.from_numpy(x),)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = torch.export.export(module, example)
            torch.export.save(program, folder / "model.pt2")
            if key in SCRIPTED:
                with torch.no_grad():
                    torch.jit.save(torch.jit.trace(module, example), folder / "model.pt")
            converted = ov.convert_model(folder / "model.pt2", input=[list(x.shape)])
        ov.save_model(converted, folder / "model.xml", compress_to_fp16=False)
        with torch.no_grad():
            want = module(*example)
        want = [t.numpy() for t in (want if isinstance(want, tuple) else (want,))]
        compiled = core.compile_model(converted, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        got = [np.asarray(v) for v in compiled({0: x}).values()]
        differs = any(
            g.shape != w.shape or not np.allclose(g, w, rtol=1e-5, atol=1e-6, equal_nan=True)
            for g, w in zip(got, want, strict=True)
        )
        made[key] = Built(folder, x, differs)
        return made[key]

    return build


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["convert-report", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def diff_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("  DIFF")]


def report_of(
    capsys: pytest.CaptureFixture[str], built: Built, key: str, model: str, *options: str
) -> tuple[str, list[str]]:
    """convert-report on the case's `model` file and its input: it exits 1 exactly when torch
    and openvino differ, and names as many differing ops as the case expects; its stdout and
    those lines."""
    args = [str(built.folder / model), "-i", str(built.folder / "x.npy"), *options]
    code, out, err = run(capsys, *args)
    assert code == (1 if built.differs else 0), out + err
    named = diff_lines(out)
    assert len(named) == len(CASES[key].differing), out
    return out, named


@pytest.mark.slow
def test_the_measured_differences_are_the_truth(zoo: Callable[[str], Built]) -> None:
    """The cases' expectations (measured once) agree with torch and openvino run today (the
    default run checks its cases' through the .pt2 test: exit 1 exactly where they differ)."""
    wrong = [k for k, c in CASES.items() if zoo(k).differs != bool(c.differing)]
    assert not wrong, f"torch and openvino now disagree otherwise on {wrong}"


@pytest.mark.parametrize("key", _cases(sorted(CASES)))
def test_pt2_exits_1_exactly_when_the_conversion_differs(
    key: str, zoo: Callable[[str], Built], capsys: pytest.CaptureFixture[str]
) -> None:
    out, named = report_of(capsys, zoo(key), key, "model.pt2")
    for line, who in zip(named, CASES[key].differing, strict=True):
        assert f"{who} (" in line or f'"{who}"' in line or who == "", line
        assert "aten.avg_pool" in line, line
    if named:
        assert "D3 (" in out and "differ" in out


@pytest.mark.parametrize(
    ("key", "source"),
    [
        pytest.param(
            key,
            source,
            id=f"{'detected' if not source else 'source-torch'}-{key}",
            # the default run: detection on its cases, --source torch on one
            marks=[]
            if key in QUICK and (not source or key == "avg2d_ceil_pad")
            else [pytest.mark.slow],
        )
        for source in (["--source", "torch"], [])
        for key in sorted(CASES)
    ],
)
def test_ir_exits_1_exactly_when_the_conversion_differs(
    key: str, source: list[str], zoo: Callable[[str], Built], capsys: pytest.CaptureFixture[str]
) -> None:
    out, named = report_of(capsys, zoo(key), key, "model.xml", *source)
    if not source:
        assert "source: PyTorch, detected" in out
    assert all("AvgPool-14" in line for line in named)


@pytest.mark.parametrize("key", _cases(SCRIPTED, ("avg2d_ceil_pad", "net")))
def test_torchscript_agrees_with_the_truth(
    key: str, zoo: Callable[[str], Built], capsys: pytest.CaptureFixture[str]
) -> None:
    _, named = report_of(capsys, zoo(key), key, "model.pt")
    assert all("aten::avg_pool" in line for line in named)


def test_a_module_path_and_the_numbers_of_a_net(
    zoo: Callable[[str], Built], capsys: pytest.CaptureFixture[str], torch: ModuleType
) -> None:
    built = zoo("net")
    code, out, _ = run(
        capsys, str(built.folder / "model.pt2"), "-i", str(built.folder / "x.npy"), "--json"
    )
    report = json.loads(out)
    assert code == 1 and report["schema"] == "irpool.convert-report/3"
    ops = {op["module"]: op for op in report["ops"]}
    assert set(ops) == {"stem.2", "block.1", "head"}
    pool = ops["block.1"]
    assert pool["module_class"] == "AvgPool2d" and pool["op"] == "aten.avg_pool2d.default"
    assert pool["divergence_id"] == "D3"
    assert pool["openvino_layers"][0]["attributes"]["rounding_type"] == "ceil_torch"
    # the differing cells: torch's own avg_pool2d on openvino's input of the layer is checked
    # against a direct computation here
    values = pool["outputs"][0]
    assert values["differing"] > 0 and values["size"] == 1 * 4 * 4 * 4
    assert ops["stem.2"]["same"] and ops["head"]["same"]


def test_the_docs_case_21_of_48(capsys: pytest.CaptureFixture[str], torch: ModuleType) -> None:
    """The example of docs/debugging-a-converted-model.md, against torch run here: a 1x1 conv
    and AvgPool2d(3, 2, padding=1, ceil_mode=True) on 1x3x6x6.  openvino divides every window
    by the whole kernel (torch's divisor_override=9 computes that), torch by the taps up to the
    declared padding."""
    folder = ROOT / "fixtures" / "convert"
    pt2, x_path = str(folder / "conv_avgpool.pt2"), str(folder / "x.npy")
    code, out, _ = run(capsys, pt2, "-i", x_path)
    assert code == 1
    assert "values: 21/48 differ" in out and "pool (AvgPool2d): aten.avg_pool2d.default" in out
    code, out, _ = run(capsys, pt2, "-i", x_path, "--json")
    values = json.loads(out)["ops"][0]["outputs"][0]
    f = torch.nn.functional
    with torch.no_grad():
        saved = torch.export.load(folder / "conv_avgpool.pt2").module()
        x = torch.from_numpy(np.load(x_path))
        conv = f.conv2d(x, saved.conv.weight, saved.conv.bias)
        as_torch = f.avg_pool2d(conv, 3, 2, 1, ceil_mode=True).numpy()
        as_openvino = f.avg_pool2d(conv, 3, 2, 1, ceil_mode=True, divisor_override=9).numpy()
    # torch's conv and openvino's differ by a few ulps: values are compared within 1e-5
    differ = ~np.isclose(as_torch, as_openvino, rtol=1e-5, atol=1e-6)
    assert values["differing"] == int(differ.sum()) == 21
    at = tuple(values["worst_index"])
    assert values["worst_source"] == pytest.approx(float(as_torch[at]), rel=1e-5, abs=1e-6)
    assert values["worst_openvino"] == pytest.approx(float(as_openvino[at]), rel=1e-5, abs=1e-6)
    assert values["max_abs"] == pytest.approx(float(np.abs(as_torch - as_openvino).max()), rel=1e-5)
    listed = json.loads(out)["ops"][0]["differing_values"]
    assert len(listed) == 8
    for item in listed:
        at = tuple(item["index"])
        assert differ[at]
        assert item["source"] == pytest.approx(float(as_torch[at]), rel=1e-5, abs=1e-6)
        assert item["openvino"] == pytest.approx(float(as_openvino[at]), rel=1e-5, abs=1e-6)


def test_divisor_override_is_refused(
    torch: ModuleType, ov: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class Override(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            return torch.nn.functional.avg_pool2d(x, 2, divisor_override=3)

    example = (torch.ones(1, 1, 4, 4),)
    torch.export.save(torch.export.export(Override(), example), tmp_path / "o.pt2")
    code, out, err = run(capsys, str(tmp_path / "o.pt2"))
    assert code == 2 and not out
    assert len(err.strip().splitlines()) == 1 and "divisor_override" in err
    assert "cannot convert" in err


def test_unreadable_files_are_one_line_exit_2(
    torch: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import zipfile

    with zipfile.ZipFile(tmp_path / "fake.pt2", "w") as archive:
        archive.writestr("m/archive_format", "pt2")
    (tmp_path / "text.pt2").write_text("hello")
    for name, said in (("fake.pt2", "torch cannot read the model"), ("text.pt2", "not a torch")):
        code, out, err = run(capsys, str(tmp_path / name))
        assert code == 2 and not out and len(err.strip().splitlines()) == 1, err
        assert said in err


def test_inputs_by_name_shape_and_errors(
    zoo: Callable[[str], Built], capsys: pytest.CaptureFixture[str]
) -> None:
    built = zoo("avg1d_ceil_pad")
    pt2, pt = str(built.folder / "model.pt2"), str(built.folder / "model.pt")
    # nn.AvgPool1d.forward(self, input): the program's input is called "input"
    code, out, _ = run(capsys, pt2, "-i", f"input={built.folder / 'x.npy'}")
    assert code == 1 and "inputs: input [1, 1, 6]" in out
    code, _, err = run(capsys, pt2, "-i", f"y={built.folder / 'x.npy'}")
    assert code == 2 and "no model input 'y'; the inputs are input" in err
    # a TorchScript file records no shape: random inputs need --input-shape
    code, _, err = run(capsys, pt)
    assert code == 2 and "--input-shape input=N,C,..." in err
    code, out, _ = run(capsys, pt, "--input-shape", "1,1,6", "--seed", "3")
    assert code == 1 and "inputs: input [1, 1, 6]" in out


def test_python_api_on_a_live_module(torch: ModuleType, ov: ModuleType) -> None:
    import irpool
    from irpool.audit import AuditReport, format_report, to_json

    module = torch.nn.Sequential(
        torch.nn.Conv2d(3, 3, 1), torch.nn.AvgPool2d(3, 2, padding=1, ceil_mode=True)
    )
    x = torch.from_numpy(np.random.default_rng(1).uniform(-1, 1, (1, 3, 6, 6)).astype(np.float32))
    for route in ("trace", "export"):
        report = irpool.convert_report(module, x, route=route)
        assert isinstance(report, AuditReport) and not report.same
        (op,) = report.differing
        assert op.module == "1" and op.module_class == "AvgPool2d"
        assert op.outputs[0].mismatches == 21 and op.divergence_id == "D3"
        assert "DIFF  1 (AvgPool2d)" in format_report(report)
        assert to_json(report)["ops"][0]["same"] is False
        # torch's own value where the two differ most (openvino's conv output equals torch's
        # within float32 rounding, so torch's pool of torch's conv is the reference)
        values = op.outputs[0]
        with torch.no_grad():
            want = torch.nn.functional.avg_pool2d(module[0](x), 3, 2, 1, ceil_mode=True).numpy()
        assert values.worst_openvino == pytest.approx(float(want[values.worst_index]), rel=1e-5)


def test_without_torch_exit_3() -> None:
    code = (
        "import sys; sys.modules['torch'] = None; from irpool.cli import main; "
        "sys.exit(main(['convert-report', 'fixtures/convert/conv_avgpool.pt2']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 3, out.stderr
    assert "torch is not installed; pip install 'irpool[torch]'" in out.stderr


def test_a_dynamic_ir_with_compressed_weights(
    zoo: Callable[[str], Built], ov: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """openvino's defaults: no input shape (every dim dynamic) and f16 weights.  The IR's input
    shape comes from -i or --input-shape; the verdict is the static IR's."""
    built = zoo("net")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ov.save_model(ov.convert_model(built.folder / "model.pt2"), tmp_path / "dyn.xml")
    assert 'shape="?,2,?,?"' in (tmp_path / "dyn.xml").read_text()
    code, out, err = run(capsys, str(tmp_path / "dyn.xml"), "--input-shape", "1,2,12,12")
    assert code == 1 and len(diff_lines(out)) == 1, out + err
    code, _, err = run(capsys, str(tmp_path / "dyn.xml"))
    assert code == 2 and "dynamic shape" in err


def test_source_line_skips_the_torch_frames_of_another_install(torch: Any) -> None:
    """A saved program keeps the paths of the machine that exported it: torch's frames there
    (another venv's site-packages) are not the user's line."""
    from irpool.oracles.torch_export import _code

    trace = (
        'File "/home/a/net.py", line 45, in forward\n'
        "    return self.pool(self.conv(x))\n"
        '  File "/elsewhere/venv/lib/python3.11/site-packages/torch/nn/modules/pooling.py", '
        "line 779, in forward\n"
        "    return F.avg_pool2d(\n"
    )
    assert _code(trace) == "net.py:45: return self.pool(self.conv(x))"
