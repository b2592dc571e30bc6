"""`irpool fixtures` and `irpool.testing`: what the presets hold, that openvino confirms it,
same seed same bytes, interrupted runs, the edges of OUTDIR, the grid, real models, and the
files running through `irpool run` and the testing helper.

Expected numbers come from the hand-checked table (irpool/cases.py), the specification file,
hand arithmetic, openvino, or tests/reference.py (loops written from the semantics)."""

from __future__ import annotations

import importlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import reference
from conftest import ROOT, irpool
from divergence_helpers import assert_outcome

from irpool import cli
from irpool.arrays import load_arrays, save_npz
from irpool.cases import CASES, by_key
from irpool.cpu import plugin_isa, this_machine
from irpool.errors import OutputError, UsageError
from irpool.frontends.ir_xml import load
from irpool.geometry import plan
from irpool.model import bfloat16, numpy_dtype
from irpool.ops import openvino as ov_ops
from irpool.oracles import openvino_rt
from irpool.target import Target, isa_named
from irpool.testing import FixtureCase, Tolerance, assert_matches, cases

DOC = ROOT / "docs" / "fixtures.md"
fx = importlib.import_module("irpool.fixtures")  # the module (irpool.fixtures is the API function)
HERE = this_machine()
"""The target the sets below are written for (no --ov-isa: IRPOOL_OV_ISA, else this CPU)."""
IR_TABLE_KEYS = [c.key for c in CASES if c.openvino is not None]


def make(outdir: Path, preset: str, seed: int = 0, **options: Any) -> fx.Report:
    specs, skipped, settings = fx.plan_cases(preset, None, None, None, seed)
    return fx.generate(str(outdir), specs, settings, skipped, **options)


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="session")
def full_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sets") / "full"
    make(out, "full")
    return out


@pytest.fixture(scope="session")
def corners_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sets") / "corners"
    make(out, "corners")
    return out


@pytest.fixture(scope="session")
def smoke_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sets") / "smoke"
    make(out, "smoke")
    return out


def metas(folder: Path) -> list[dict[str, Any]]:
    return [dict(c.meta) for c in cases(folder)]


# -- what the presets hold ------------------------------------------------------------------------


def test_corners_hold_every_ir_divergence_and_the_spec_examples(corners_set: Path) -> None:
    names = [m["name"] for m in metas(corners_set)]
    spec_examples = [f"spec-avgpool1-example{i}" for i in range(1, 6)]
    assert names == [*IR_TABLE_KEYS, "D3", "D15", *spec_examples]
    assert IR_TABLE_KEYS == [
        "D1",
        "D1-2d",
        "D1c",
        "D1d",
        "D2",
        "D2-include",
        "D2-max",
        "D4",
        "D4-avg",
        "D5",
        "D7",
        "D8",
        "D9",
        "D11",
        "D14",
    ]


@pytest.mark.parametrize("key", IR_TABLE_KEYS)
def test_corner_cases_hold_the_table_numbers(corners_set: Path, key: str) -> None:
    """expected.npz equals the measured, hand-checked numbers of irpool/cases.py."""
    (case,) = cases(corners_set, select=lambda c: c.name == key)
    row = by_key(key)
    np.testing.assert_array_equal(case.input, np.array(row.input, dtype=row.dtype))
    got = [case.expected["values"]] + (
        [case.expected["indices"]] if "indices" in case.expected else []
    )
    assert_outcome(got, row.expected["openvino"], key)
    assert key.split("-")[0] in case.meta["divergences"]
    assert case.meta["input"] == {"source": "table", "case": key, "stored_as": row.dtype}


def test_spec_examples_are_those_of_the_spec_file() -> None:
    graph = load(str(ROOT / "fixtures" / "spec" / "avgpool-1-examples.xml"))
    layers = [la for la in graph.layers if la.type == "AvgPool"]
    assert len(layers) == len(fx.SPEC_EXAMPLES) == 5
    for layer, example in zip(layers, fx.SPEC_EXAMPLES, strict=True):
        assert dict(layer.data) == dict(example.data)
        assert layer.outputs[0].dims == (1, 3, *example.declared)


def test_spec_examples_get_openvino_shapes_and_the_error(corners_set: Path) -> None:
    by_name = {m["name"]: m for m in metas(corners_set)}
    # same_upper, s=2 on 32: ceil(32/2) = 16; (32+1+1-5)//3+1 = 10; (32+1+1-5)//2+1 = 15;
    # valid: (32-5)//2+1 = 14
    shapes = {1: 16, 2: 16, 3: 10, 4: 15, 5: 14}
    for number, size in shapes.items():
        meta = by_name[f"spec-avgpool1-example{number}"]
        assert meta["output_shape"] == [1, 3, size, size]
        if number <= 2:
            assert "declares output 1x3x32x32" in meta["spec_error"]
            assert "1x3x16x16" in meta["spec_error"] and meta["divergences"] == ["D13"]
        else:
            assert meta["spec_error"] is None and "D13" not in meta["divergences"]
    # example 2 keeps the spec's written pads_end, which same_upper ignores: pads (1, 2)
    assert by_name["spec-avgpool1-example2"]["attributes"]["pads_end"] == "1, 1"
    assert by_name["spec-avgpool1-example2"]["plan"]["pads"] == [[1, 2], [1, 2]]


def test_full_preset_sweeps_versions_ranks_attributes_and_types(full_set: Path) -> None:
    ms = metas(full_set)
    assert 300 <= len(ms) <= 1000
    assert len({m["name"] for m in ms}) == len(ms)
    combos = {(m["op_version"], m["element_type"], len(m["input_shape"]) - 2) for m in ms}
    versions = ["AvgPool-1", "AvgPool-14", "AvgPool-16", "MaxPool-1", "MaxPool-8", "MaxPool-14"]
    assert combos == {(v, t, r) for v in versions for t in fx.DTYPES for r in (1, 2, 3)}
    for v in versions:
        mine = [m for m in ms if m["op_version"] == v]
        roundings = {"floor", "ceil"} | (
            {"ceil_torch"} if v.endswith("14") or v.endswith("16") else set()
        )
        seen = {(m["attributes"]["rounding_type"], m["attributes"]["auto_pad"]) for m in mine}
        assert seen == {(r, a) for r in roundings for a in fx.AUTO_PADS}, v
        if v.startswith("AvgPool"):
            assert {m["attributes"]["exclude-pad"] for m in mine} == {"true", "false"}
        if v in ("MaxPool-8", "MaxPool-14"):
            variants = {
                (m["attributes"]["axis"], m["attributes"]["index_element_type"]) for m in mine
            }
            assert variants == {("0", "i64"), ("0", "i32"), ("2", "i64"), ("2", "i32")}
        if v in ("AvgPool-16", "MaxPool-8", "MaxPool-14"):
            assert all("dilations" in m["attributes"] for m in mine)
            assert any(set(m["attributes"]["dilations"].split(", ")) - {"1"} for m in mine)
            for m in mine:
                assert 'dilations="' in (full_set / m["name"] / "model.xml").read_text()
        else:
            assert not any("dilations" in m["attributes"] for m in mine)
    found = {d for m in ms for d in m["divergences"]}
    assert {"D1", "D1c", "D1d", "D2", "D4", "D5", "D7", "D9", "D11", "D14", "D15"} <= found


def test_random_inputs_are_exact_multiples_in_range(full_set: Path) -> None:
    for case in cases(full_set)[::9]:
        x = case.input.astype(np.float64)
        if case.meta["element_type"] in ("f32", "f16", "bf16"):
            assert np.array_equal(x * 16, np.round(x * 16)) and np.abs(x).max() <= 8
        elif case.meta["element_type"] == "i32":
            assert np.abs(x).max() <= 50000
        assert case.meta["input"]["seed"] == 0


def test_divergence_labels_on_a_hand_checked_layer() -> None:
    """D15 of docs/semantics.md: MaxPool-8 ceil, k=(3,2), s=(2,3), p=1, d=2 on 9x11 gives
    (4, 5): W: ceil((11+2-3)/3)+1 = 5, and the last window starts at 4*3-1 = 11, in the pad."""
    data = fx.layer_data(
        "MaxPool", 8, (3, 2), (2, 3), (1, 1), (1, 1), (2, 2), "ceil", "explicit", axis=0
    )
    spec = fx.FixtureSpec("d15", "MaxPool", 8, data, "f32", (1, 1, 9, 11), "grid")
    built = fx.build(spec, 0)
    assert built.meta["output_shape"] == [1, 1, 4, 5]
    assert built.meta["divergences"] == ["D2", "D15"]


# -- openvino confirms them ---------------------------------------------------------------------


def _known(meta: dict[str, Any]) -> bool:
    return any(r.applies(meta, HERE) for r in fx.KNOWN_REFUSALS)


def _check_status(folder: Path, meta: dict[str, Any]) -> fx.CaseStatus:
    status = fx.verify_case(str(folder), meta, HERE)
    if status.status == "confirmed":
        assert not _known(meta) or meta["input_shape"][1] == 1, meta["name"]
    else:
        assert status.known, f"{meta['name']}: {status.reason}"
        assert not status.reason.startswith("openvino cannot read"), status.reason
    return status


@pytest.mark.oracle
def test_openvino_confirms_smoke_corners_and_a_sample_of_full(
    ov: ModuleType, smoke_set: Path, corners_set: Path, full_set: Path
) -> None:
    for folder in (smoke_set, corners_set):
        for meta in metas(folder):
            status = fx.verify_case(str(folder / meta["name"]), meta, HERE)
            assert status.status == "confirmed", f"{meta['name']}: {status.reason}"
    sample = metas(full_set)[::7]
    statuses = [_check_status(full_set / m["name"], m) for m in sample]
    assert sum(s.status == "confirmed" for s in statuses) >= len(sample) * 0.8


@pytest.mark.oracle
@pytest.mark.slow
def test_openvino_confirms_the_full_preset(ov: ModuleType, tmp_path: Path) -> None:
    report = make(tmp_path / "full", "full", verify=True)
    index = report.index
    assert index["counts"]["cases"] == len(index["cases"])
    assert index["counts"]["confirmed"] + index["counts"]["diverges"] == len(index["cases"])
    for entry, status in zip(index["cases"], report.statuses, strict=True):
        assert entry["status"] == status.status
        if status.status == "diverges":
            assert status.known, f"{entry['name']}: {status.reason}"
    # every bfloat16 MaxPool-8/14 (indices used) is refused, as measured with openvino 2026.4
    # on AVX-512; on AVX2 the plugin computes them (in float32, its reference op)
    bf16_max = [e for e in index["cases"] if e["op"] == "MaxPool" and e["element_type"] == "bf16"]
    refused = plugin_isa().name != "avx2"
    assert all(
        (e["status"] == "diverges") == (refused and e["version"] != "opset1") for e in bf16_max
    ), bf16_max
    assert set(index["reasons"]) <= {r.reason for r in fx.KNOWN_REFUSALS}


@pytest.mark.oracle
def test_verify_notices_wrong_expected_values(
    ov: ModuleType, smoke_set: Path, tmp_path: Path
) -> None:
    name = "maxpool8-2d-ceil-explicit-f32"
    for key in ("values", "indices"):
        folder = tmp_path / key
        shutil.copytree(smoke_set / name, folder)
        arrays = load_arrays(str(folder / "expected.npz"))
        arrays[key] = arrays[key].copy()
        arrays[key].flat[5] += 1
        (folder / "expected.npz").unlink()
        save_npz(str(folder / "expected.npz"), arrays)
        meta = json.loads((folder / "meta.json").read_text())
        status = fx.verify_case(str(folder), meta, HERE)
        assert status.status == "diverges" and not status.known
        assert f"openvino computes other {key}: 1 of 72 values differ" in (status.reason or "")
        # the reason names the cell and both numbers: openvino's is the original expected one
        cell = [int(i) for i in np.unravel_index(5, arrays[key].shape)]
        was, now = (
            load_arrays(str(smoke_set / name / "expected.npz"))[key].flat[5],
            arrays[key].flat[5],
        )
        shown = (repr(float(was)), repr(float(now))) if key == "values" else (str(was), str(now))
        assert f"worst at {cell}: openvino {shown[0]}, expected {shown[1]}, " in (
            status.reason or ""
        )
        assert (status.reason or "").endswith("1 apart" if key == "indices" else "ulp of float32")
    # two float32 steps up (np.nextafter twice) are 2 ulp, whatever the value
    folder = tmp_path / "ulp"
    shutil.copytree(smoke_set / name, folder)
    arrays = load_arrays(str(folder / "expected.npz"))
    values = arrays["values"].copy()
    up = np.float32(np.inf)
    values.flat[7] = np.nextafter(np.nextafter(values.flat[7], up), up)
    (folder / "expected.npz").unlink()
    save_npz(str(folder / "expected.npz"), dict(arrays, values=values))
    status = fx.verify_case(str(folder), json.loads((folder / "meta.json").read_text()), HERE)
    assert (status.reason or "").endswith(", 2 ulp of float32"), status.reason


@pytest.mark.oracle
def test_cli_verify_summary_and_exit_code(ov: ModuleType, tmp_path: Path) -> None:
    out = irpool("fixtures", str(tmp_path / "s"), "--verify")
    assert out.returncode == 0, out.stderr
    assert "6 cases in" in out.stdout and ": 6 confirmed, 0 diverge" in out.stdout
    assert out.stderr == ""  # no progress bar when stderr is not a terminal
    index = json.loads((tmp_path / "s" / "index.json").read_text())
    assert index["verification"]["version"] == openvino_rt.version()


# -- same seed, same bytes; interrupted runs -----------------------------------------------------


def test_same_seed_gives_the_same_bytes(full_set: Path, tmp_path: Path) -> None:
    make(tmp_path / "again", "full")
    assert files_of(tmp_path / "again") == files_of(full_set)


def test_another_seed_gives_other_inputs(smoke_set: Path, tmp_path: Path) -> None:
    make(tmp_path / "seed1", "smoke", seed=1)
    for one, other in zip(cases(tmp_path / "seed1"), cases(smoke_set), strict=True):
        assert one.name == other.name and one.meta["input"]["seed"] == 1
        assert not np.array_equal(one.input, other.input)


def test_corners_do_not_depend_on_the_seed(corners_set: Path, tmp_path: Path) -> None:
    make(tmp_path / "c7", "corners", seed=7)
    again = files_of(tmp_path / "c7")
    base = files_of(corners_set)
    table = [k for k in base if k.split("/")[0] in IR_TABLE_KEYS and not k.endswith("meta.json")]
    assert table and all(again[k] == base[k] for k in table)


def test_interrupted_run_resumes_to_the_same_bytes(
    full_set: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "full"
    real_build = fx.build
    calls = {"n": 0}

    def build_until_interrupted(spec: fx.FixtureSpec, seed: int) -> fx.Built:
        calls["n"] += 1
        if calls["n"] == 101:
            raise KeyboardInterrupt
        return real_build(spec, seed)

    monkeypatch.setattr(fx.sets, "build", build_until_interrupted)
    with pytest.raises(KeyboardInterrupt):
        make(out, "full")
    monkeypatch.setattr(fx.sets, "build", real_build)
    index = json.loads((out / "index.json").read_text())
    assert index["complete"] is False and index["cases"] == []
    entries = os.listdir(out)
    # whole cases only: the writers finish the folders they started and drop the others
    assert not [e for e in entries if e.startswith(".")]
    written = [e for e in entries if e != "index.json"]
    assert 0 < len(written) <= 100
    assert all(sorted(os.listdir(out / e)) == sorted(fx.CASE_FILES) for e in written)
    # what a killed process leaves: a half-written temporary case folder
    stale = out / ".irpool-tmp-avgpool1-1d-floor-explicit-exclude_pad-f32-x1y2"
    stale.mkdir()
    (stale / "model.xml").write_text("<net")
    with pytest.raises(OutputError, match="not empty"):
        make(out, "full")
    report = make(out, "full", resume=True)
    assert report.kept == len(written)
    assert report.kept + report.written == len(report.index["cases"])
    assert files_of(out) == files_of(full_set)


@pytest.mark.slow
def test_killed_run_resumes_to_the_same_bytes(full_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "irpool", "fixtures", str(out), "--preset", "full"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if out.is_dir() and sum(1 for e in os.scandir(out) if e.is_dir()) >= 20:
            break
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    assert json.loads((out / "index.json").read_text())["complete"] is False
    again = irpool("fixtures", str(out), "--preset", "full", "--resume")
    assert again.returncode == 0, again.stderr
    assert "kept from the earlier run" in again.stdout
    assert files_of(out) == files_of(full_set)


# what irpool.files.atomic_open leaves when the process dies between writing its temporary
# file and renaming it: a regular file named .irpool-XXXXXXXX.tmp beside index.json
HALF_WRITTEN_INDEX = ".irpool-k3q_9zx1.tmp"


def test_resume_and_force_remove_a_half_written_index(smoke_set: Path, tmp_path: Path) -> None:
    """docs/fixtures.md: --resume and --force remove the temporary files .irpool-*.tmp, and the
    result is byte-identical to an uninterrupted run."""
    for option in ("--resume", "--force"):
        out = tmp_path / option.strip("-")
        shutil.copytree(smoke_set, out)
        (out / HALF_WRITTEN_INDEX).write_text('{"schema": "irpool.fixtures/1", "comp')
        refused = irpool("fixtures", str(out))
        assert refused.returncode == 2 and "not empty" in refused.stderr
        done = irpool("fixtures", str(out), option)
        assert done.returncode == 0, done.stderr
        assert files_of(out) == files_of(smoke_set), option
    # a link or a folder that only looks like one is not irpool's temporary file: kept
    out = tmp_path / "lookalikes"
    shutil.copytree(smoke_set, out)
    (out / ".irpool-folder01.tmp").mkdir()
    (out / ".irpool-link0001.tmp").symlink_to(out / "index.json")
    assert irpool("fixtures", str(out), "--force").returncode == 0
    assert (out / ".irpool-folder01.tmp").is_dir() and (out / ".irpool-link0001.tmp").is_symlink()


def test_resume_of_a_run_killed_at_its_first_index_starts_over(
    smoke_set: Path, tmp_path: Path
) -> None:
    """Killed while its first index.json is written, a run leaves only that temporary file:
    nothing complete, so --resume writes every case (docs/fixtures.md)."""
    out = tmp_path / "first"
    out.mkdir()
    (out / HALF_WRITTEN_INDEX).write_text('{"schema": "irpool.fi')
    resumed = irpool("fixtures", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "6 written, 0 kept" in resumed.stdout
    assert files_of(out) == files_of(smoke_set)
    # anything else besides the temporaries, without index.json: not an earlier run of ours
    other = tmp_path / "other"
    other.mkdir()
    (other / HALF_WRITTEN_INDEX).write_text("")
    (other / "notes.txt").write_text("mine")
    refused = irpool("fixtures", str(other), "--resume")
    assert refused.returncode == 2 and "cannot resume" in refused.stderr
    assert sorted(os.listdir(other)) == sorted([HALF_WRITTEN_INDEX, "notes.txt"])


KILL_AT_INDEX_WRITE = """
import os, signal, sys
real_replace = os.replace
count = [0]
def replace(src, dst):
    if os.path.basename(dst) == "index.json":
        count[0] += 1
        if count[0] == int(sys.argv[1]):
            os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(src, dst)
os.replace = replace
from irpool.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("write", [1, 2])
def test_sigkill_while_index_json_is_written(smoke_set: Path, tmp_path: Path, write: int) -> None:
    """A real SIGKILL between writing index.json's temporary file and renaming it (the first
    write, before any case; the last one, after every case), then --resume."""
    out = tmp_path / "killed"
    killed = subprocess.run(
        [sys.executable, "-c", KILL_AT_INDEX_WRITE, str(write), "fixtures", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = sorted(os.listdir(out))
    temporaries = [e for e in left if re.fullmatch(r"\.irpool-\w+\.tmp", e)]
    assert len(temporaries) == 1, left
    if write == 1:
        assert left == temporaries
    else:
        assert json.loads((out / "index.json").read_text())["complete"] is False
    again = irpool("fixtures", str(out), "--resume")
    assert again.returncode == 0, again.stderr
    assert files_of(out) == files_of(smoke_set)


def test_resume_needs_the_same_options(tmp_path: Path) -> None:
    out = tmp_path / "s"
    assert irpool("fixtures", str(out)).returncode == 0
    other = irpool("fixtures", str(out), "--resume", "--seed", "3")
    assert other.returncode == 2 and other.stderr.count("\n") == 1
    assert "other settings" in other.stderr and '"seed": 0' in other.stderr
    preset = irpool("fixtures", str(out), "--resume", "--preset", "corners")
    assert preset.returncode == 2 and "other settings" in preset.stderr
    same = irpool("fixtures", str(out), "--resume")
    assert same.returncode == 0 and "0 written, 6 kept" in same.stdout
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    refused = irpool("fixtures", str(foreign), "--resume")
    assert refused.returncode == 2 and "cannot resume" in refused.stderr


# -- OUTDIR ---------------------------------------------------------------------------------------


def test_outdir_rules(tmp_path: Path) -> None:
    missing = irpool("fixtures", str(tmp_path / "no" / "such"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert "does not exist" in missing.stderr and not (tmp_path / "no").exists()
    (tmp_path / "file").write_text("x")
    not_dir = irpool("fixtures", str(tmp_path / "file"))
    assert not_dir.returncode == 2 and "not a directory" in not_dir.stderr
    assert (tmp_path / "file").read_text() == "x"
    created = irpool("fixtures", str(tmp_path / "new"))
    assert created.returncode == 0 and (tmp_path / "new" / "index.json").is_file()
    again = irpool("fixtures", str(tmp_path / "new"))
    assert again.returncode == 2 and "not empty" in again.stderr and "--force" in again.stderr
    both = irpool("fixtures", str(tmp_path / "new"), "--force", "--resume")
    assert both.returncode == 2 and both.stderr.count("\n") == 1
    assert "Traceback" not in missing.stderr + not_dir.stderr + again.stderr + both.stderr


def test_force_replaces_cases_and_nothing_else(tmp_path: Path) -> None:
    out = tmp_path / "s"
    assert irpool("fixtures", str(out)).returncode == 0
    before = files_of(out)
    (out / "notes.txt").write_text("mine")
    forced = irpool("fixtures", str(out), "--force", "--seed", "5")
    assert forced.returncode == 0, forced.stderr
    after = files_of(out)
    assert after["notes.txt"] == b"mine"
    changed = [k for k in before if k.endswith("input.npy") and before[k] != after[k]]
    assert len(changed) == 6
    assert not [e for e in os.listdir(out) if e.startswith(".")]
    # a folder that is not an irpool case is never replaced
    stranger = tmp_path / "c"
    (stranger / "D1").mkdir(parents=True)
    (stranger / "D1" / "data.txt").write_text("keep")
    refused = irpool("fixtures", str(stranger), "--preset", "corners", "--force")
    assert refused.returncode == 2 and "not an irpool fixture case" in refused.stderr
    assert (stranger / "D1" / "data.txt").read_text() == "keep"


def test_written_files_are_not_private(smoke_set: Path) -> None:
    mask = os.umask(0o022)
    os.umask(mask)
    for path in [smoke_set / "index.json", *smoke_set.rglob("*")]:
        want = (0o777 if path.is_dir() else 0o666) & ~mask
        assert path.stat().st_mode & 0o777 == want, path


# -- the files work with irpool run and irpool.testing ------------------------------------------


def _run_case(case: FixtureCase, out: Path) -> dict[str, np.ndarray]:
    code = cli.main(
        [
            "run",
            case.model_path,
            "-i",
            os.path.join(case.folder, "input.npy"),
            "-o",
            str(out),
        ]
    )
    assert code == 0, case.name
    return load_arrays(str(out))


def test_irpool_run_reproduces_every_expected_file(
    smoke_set: Path, corners_set: Path, full_set: Path, tmp_path: Path, capsys: Any
) -> None:
    chosen = cases(smoke_set) + cases(corners_set) + cases(full_set)
    for i, case in enumerate(chosen):
        out = tmp_path / f"{i}.npz"
        if any(known.applies(case.meta, HERE) for known in fx.KNOWN_REFUSALS[:1]):
            # openvino cannot compile it, and run refuses it as openvino does (the fixture
            # records irpool's semantics all the same)
            assert cli.main(["run", case.model_path, "-o", str(out)]) == 2, case.name
            continue
        got = _run_case(case, out)
        assert sorted(got) == sorted(case.expected), case.name
        # same arrays, and the same bytes: run writes outputs as fixtures writes them
        assert out.read_bytes() == Path(case.folder, "expected.npz").read_bytes(), case.name
    capsys.readouterr()


def _reference_outputs(case: FixtureCase) -> tuple[np.ndarray, np.ndarray | None]:
    spec, _ = ov_ops.select(case.op, case.version, case.attributes)
    x = case.input
    p = plan(ov_ops.params(spec, case.attributes, x.ndim), x.shape, "openvino", dtype=x.dtype)
    return reference.pool(x, p)


def test_testing_helper_with_an_independent_implementation(
    corners_set: Path, full_set: Path
) -> None:
    """tests/reference.py (loops written from the semantics) passes every case it is given."""
    chosen = cases(corners_set) + cases(full_set)
    for case in chosen:
        with np.errstate(all="ignore"):  # the reference casts lowest() of empty windows
            values, indices = _reference_outputs(case)
        assert_matches(case, values, indices)


def test_assert_matches_reports_what_differs(smoke_set: Path, corners_set: Path) -> None:
    (case,) = cases(smoke_set, select=lambda c: c.name == "maxpool8-2d-ceil-explicit-f32")
    values, indices = case.expected["values"].copy(), case.expected["indices"].copy()
    assert_matches(case, values, indices)
    values.flat[3] += 0.5
    with pytest.raises(AssertionError, match=r"maxpool8-2d-ceil-explicit-f32 .*values: 1 of 72"):
        assert_matches(case, values)
    assert_matches(case, values, tolerance=Tolerance(atol=0.5))
    indices.flat[0] += 1
    with pytest.raises(AssertionError, match="indices: 1 of 72 differ"):
        assert_matches(case, case.expected["values"], indices)
    with pytest.raises(AssertionError, match="shape"):
        assert_matches(case, case.expected["values"][..., :2])
    with pytest.raises(AssertionError, match="dtype float64, expected float32"):
        assert_matches(case, case.expected["values"].astype(np.float64))
    assert_matches(case, case.expected["values"].astype(np.float64), check_dtype=False)
    # NaN only equals NaN; the sign of a zero is not compared (D2 has NaN, D5 a -0.0)
    (d2,) = cases(corners_set, select=lambda c: c.name == "D2")
    assert_matches(d2, np.array([[[1.5, np.nan]]], np.float32))
    with pytest.raises(AssertionError, match="values: 1 of 2"):
        assert_matches(d2, np.array([[[1.5, 0.0]]], np.float32))
    (d5,) = cases(corners_set, select=lambda c: c.name == "D5")
    assert np.signbit(d5.expected["values"].flat[2])
    assert_matches(d5, np.array([[[1.0, 4.0, 0.0]]], np.float32))


def test_case_selection(corners_set: Path, full_set: Path) -> None:
    assert [c.name for c in cases(corners_set, divergence="D13")] == [
        "spec-avgpool1-example1",
        "spec-avgpool1-example2",
    ]
    assert {c.op for c in cases(full_set, op="MaxPool")} == {"MaxPool"}
    assert cases(full_set, status="confirmed") == []  # generated without --verify
    assert len(cases(full_set, status="unverified")) == len(cases(full_set))
    bf16 = next(c for c in cases(full_set) if c.meta["dtype"] == "bfloat16")
    assert bf16.input.dtype.name == "bfloat16"
    assert np.load(os.path.join(bf16.folder, "input.npy")).dtype == np.uint16


def test_pytest_helpers_parametrize_a_users_tests(corners_set: Path, tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(
        f"""
from irpool.testing import assert_matches, fixture_tests, parametrize_fixtures

FOLDER = {str(corners_set)!r}
pytest_generate_tests = fixture_tests(FOLDER, op="MaxPool")

@parametrize_fixtures(FOLDER)
def test_values(case):
    assert_matches(case, case.expected["values"], case.expected.get("indices"))

def test_generated(fixture_case):
    assert fixture_case.op == "MaxPool"
"""
    )
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    maxpools = len(cases(corners_set, op="MaxPool"))
    assert f"{22 + maxpools} passed" in out.stdout, out.stdout + out.stderr
    assert "test_values[D1-2d]" not in out.stdout  # ids are case names (shown with -v only)


# -- the format is the documented one ---------------------------------------------------------


def validate(document: Any, schema: dict[str, Any]) -> list[str]:
    """What the shipped JSON Schema finds wrong with a document (jsonschema, Draft 2020-12)."""
    from jsonschema import Draft202012Validator

    return [e.message for e in Draft202012Validator(schema).iter_errors(document)]


def test_generated_files_follow_the_documented_schemas(
    smoke_set: Path, corners_set: Path, full_set: Path, tmp_path: Path
) -> None:
    from irpool import schemas

    meta_schema = schemas.load("fixture-1")
    index_schema = schemas.load("fixtures-1")
    grid = tmp_path / "g.toml"
    grid.write_text(grid_example())
    specs, skipped, settings = fx.plan_cases(None, str(grid), None, None, 0)
    fx.generate(str(tmp_path / "grid"), specs, settings, skipped)
    specs = fx.model_cases(str(ROOT / "fixtures" / "real" / "squeezenet.xml"), ["n17"], 0, False)
    settings = fx.Settings("model", 0, model="squeezenet.xml", model_sha256="0" * 64)
    fx.generate(str(tmp_path / "model"), specs, settings)
    for folder in (smoke_set, corners_set, full_set, tmp_path / "grid", tmp_path / "model"):
        index = json.loads((folder / "index.json").read_text())
        assert validate(index, index_schema) == [], folder
        assert index["complete"] is True
        for entry in index["cases"]:
            meta = json.loads((folder / entry["name"] / "meta.json").read_text())
            assert validate(meta, meta_schema) == [], entry["name"]
            assert sorted(os.listdir(folder / entry["name"])) == sorted(fx.CASE_FILES)
    # the validator does reject what the schema forbids
    meta = json.loads((smoke_set / cases(smoke_set)[0].name / "meta.json").read_text())
    for broken in (
        dict(meta, divergences=["X1"]),
        dict(meta, extra=1),
        {k: v for k, v in meta.items() if k != "tolerance"},
    ):
        assert validate(broken, meta_schema) != [], broken


def test_json_files_are_sorted_with_a_trailing_newline(smoke_set: Path) -> None:
    for path in [smoke_set / "index.json", *smoke_set.glob("*/meta.json")]:
        text = path.read_text()
        assert text.endswith("}\n")
        assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"


# -- grids ---------------------------------------------------------------------------------------


def grid_example() -> str:
    blocks = re.findall(r"```toml\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 1
    return str(blocks[0])


def test_the_documented_grid_example(tmp_path: Path) -> None:
    grid = tmp_path / "example.toml"
    grid.write_text(grid_example())
    specs, skipped, _ = fx.grid_cases(str(grid))
    # versions 2 x kernels 2 x roundings 2 x exclude-pad 2 x dtypes 2 = 32; ceil_torch is not
    # in AvgPool-1: 8 skipped
    assert (len(specs), len(skipped)) == (24, 8)
    names = {s.name for s in specs}
    assert "ceil-14-3x3-ceil_torch-false-u8" in names
    assert all("ceil_torch" in n and n.startswith("ceil-1-") for n, _ in skipped)
    assert all("ceil_torch" in why for _, why in skipped)
    (one,) = [s for s in specs if s.name == "ceil-14-3x3-ceil_torch-false-u8"]
    assert dict(one.data) == {
        "kernel": "3, 3",
        "strides": "2, 2",
        "pads_begin": "0, 1",
        "pads_end": "1, 1",
        "exclude-pad": "false",
        "auto_pad": "explicit",
        "rounding_type": "ceil_torch",
    }
    assert one.shape == (1, 2, 7, 7) and one.element_type == "u8"


def test_grid_drops_keys_a_version_lacks_and_records_refusals(tmp_path: Path) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(
        """
[[sweep]]
name = "m"
op = "MaxPool"
version = [1, 8]
shape = [[1, 1, 5], [1, 1, 2]]
kernel = 3
dilations = [[1], [2]]
range = [-1, 1]
"""
    )
    specs, skipped, digest = fx.grid_cases(str(grid))
    # MaxPool-1 ignores dilations: one case per shape; MaxPool-8 d=2 (k_eff 5) does not fit 2
    assert sorted(s.name for s in specs) == ["m-1-1x1x5-1", "m-8-1x1x5-1", "m-8-1x1x5-2"]
    assert sorted(n for n, _ in skipped) == [
        "m-1-1x1x2-1",
        "m-1-1x1x2-2",
        "m-8-1x1x2-1",
        "m-8-1x1x2-2",
    ]
    assert all("larger than the data shape" in why for _, why in skipped)
    assert len(digest) == 64
    x = fx.random_input((1, 1, 5), "f32", 0, "m", (-1.0, 1.0))
    assert np.abs(x).max() <= 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[[sweep]]\nname='a'\nop='AvgPool'\nversion=1\nshape=[1,1,4]\nkernel=2\nwindow=3\n",
            "unknown key(s) window",
        ),
        ("[[sweep]]\nname='a'\nop='AvgPool'\nversion=1\nshape=[1,1,4]\n", '"kernel" is missing'),
        ("[[sweep]]\nname='a'\nop='Pool'\nversion=1\nshape=[1,1,4]\nkernel=2\n", "op = 'Pool'"),
        (
            "[[sweep]]\nname='a b'\nop='AvgPool'\nversion=1\nshape=[1,1,4]\nkernel=2\n",
            "name = 'a b'",
        ),
        (
            "[[sweep]]\nname='a'\nop='AvgPool'\nversion='one'\nshape=[1,1,4]\nkernel=2\n",
            "version = 'one'",
        ),
        (
            "[[sweep]]\nname='a'\nop='AvgPool'\nversion=1\nshape=[1,1,4]\nkernel=2\ndtype='f8'\n",
            "dtype 'f8'",
        ),
        (
            "[[sweep]]\nname='a'\nop='AvgPool'\nversion=1\nshape=[1,1,4]\nkernel=[[2],'x']\n",
            "kernel = ",
        ),
        (
            "[[sweep]]\nname='a'\nop='AvgPool'\nversion=1\nshape=[1,1,4]\nkernel=2\nrange=[1,0]\n",
            "range = ",
        ),
        (
            "[[sweep]]\nname='a'\nop='AvgPool'\nversion=1\nshape=[1,1,4]\nkernel=2\nauto_pad='notset'\n",
            "auto_pad 'notset' is not supported",
        ),
        ("[[sweep]]\nname='a'\nop='AvgPool'\nversion=1\nshape=[[1,1,4],5]\nkernel=2\n", "shape = "),
        ("[sweep\n", "not a readable TOML file"),
        ("title = 'x'\n", "unknown key(s) title"),
    ],
)
def test_grid_errors_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    grid = tmp_path / "bad.toml"
    grid.write_text(text)
    out = irpool("fixtures", str(tmp_path / "out"), "--grid", str(grid))
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert message in out.stderr and "bad.toml" in out.stderr
    assert not (tmp_path / "out").exists()


def test_grid_and_preset_exclude_each_other(tmp_path: Path) -> None:
    out = irpool("fixtures", str(tmp_path / "o"), "--preset", "full", "--grid", "x.toml")
    assert out.returncode == 2 and "not allowed with" in out.stderr
    with pytest.raises(UsageError, match="layers= needs model="):
        fx.plan_cases(None, None, None, ["n17"], 0)
    negative = irpool("fixtures", str(tmp_path / "n"), "--seed", "-1")
    assert negative.returncode == 2 and "--seed" in negative.stderr and ">= 0" in negative.stderr
    assert not (tmp_path / "n").exists()


# -- real models ----------------------------------------------------------------------------------


SQUEEZENET = str(ROOT / "fixtures" / "real" / "squeezenet.xml")


@pytest.mark.oracle
def test_a_layer_of_a_real_model_with_its_real_input(ov: ModuleType, tmp_path: Path) -> None:
    out = irpool(
        "fixtures", str(tmp_path / "sq"), "--from", SQUEEZENET, "--layer", "n17", "--verify"
    )
    assert out.returncode == 0, out.stderr
    (case,) = cases(tmp_path / "sq")
    assert case.name == "squeezenet-n17" and case.status == "confirmed"
    assert case.meta["input"]["source"] == "openvino" and case.meta["origin"] == "model"
    # the layer's input and output inside the whole model, as openvino computes them
    from irpool.run import random_inputs

    inputs = random_inputs(load(SQUEEZENET), 0)
    found, missing = openvino_rt.probe_layers(SQUEEZENET, ["n17"], inputs)
    assert missing == []
    (x,), outputs = found["n17"]
    np.testing.assert_array_equal(case.input, x)
    np.testing.assert_array_equal(case.expected["values"], outputs[0])
    original = next(la for la in load(SQUEEZENET).layers if la.name == "n17")
    assert {k: v.replace(" ", "") for k, v in case.attributes.items()} == {
        k: v.replace(" ", "") for k, v in original.data.items()
    }


def test_a_layer_of_a_real_model_without_openvino(tmp_path: Path) -> None:
    (spec,) = fx.model_cases(SQUEEZENET, ["n17"], 0, use_openvino=False)
    assert spec.input_source["source"] == "random"
    assert spec.shape == (1, 128, 55, 55)  # the input dims squeezenet.xml declares for n17
    report = fx.generate(
        str(tmp_path / "sq"), [spec], fx.Settings("model", 0, model="squeezenet.xml")
    )
    assert report.written == 1
    with pytest.raises(UsageError, match='no pooling layer "nope"'):
        fx.model_cases(SQUEEZENET, ["nope"], 0, use_openvino=False)
    conv = next(la.name for la in load(SQUEEZENET).layers if la.type == "Convolution")
    with pytest.raises(UsageError, match="layers= takes pooling layers"):
        fx.model_cases(SQUEEZENET, [conv], 0, use_openvino=False)


def test_missing_dilations_are_added_with_a_note() -> None:
    data, note = fx.from_model._canonical_data(
        "AvgPool",
        "opset16",
        {"kernel": "2,2", "strides": "2,2", "rounding_type": "CEIL", "exclude-pad": "true"},
    )
    assert data == {
        "kernel": "2, 2",
        "strides": "2, 2",
        "exclude-pad": "true",
        "rounding_type": "ceil",
        "dilations": "1, 1",
    }
    assert "dilations" in note


def _without_openvino(tmp_path: Path) -> dict[str, str]:
    fake = tmp_path / "hide" / "openvino"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('hidden for this test')\n")
    return dict(os.environ, PYTHONPATH=f"{fake.parent}{os.pathsep}{ROOT}")


def test_without_openvino(tmp_path: Path) -> None:
    env = _without_openvino(tmp_path)
    verify = irpool("fixtures", str(tmp_path / "v"), "--verify", env=env)
    assert verify.returncode == 3 and "pip install" in verify.stderr
    assert verify.stderr.count("\n") == 1 and not (tmp_path / "v").exists()
    model = irpool("fixtures", str(tmp_path / "m"), "--from", SQUEEZENET, "--layer", "n2", env=env)
    assert model.returncode == 0, model.stderr
    assert model.stderr == (
        'irpool: note: openvino is not installed; layer "n2" gets a random input instead '
        "(meta.json: input.source random, input.why)\n"
    )
    (case,) = cases(tmp_path / "m")
    assert case.meta["input"]["source"] == "random"
    assert case.meta["input"]["why"] == "openvino is not installed"
    assert case.meta["input_shape"] == [1, 64, 111, 111]


def test_progress_goes_to_stderr_only_when_asked(tmp_path: Path) -> None:
    out = irpool("fixtures", str(tmp_path / "p"), "--progress", "on")
    assert out.returncode == 0
    assert "6/6" in out.stderr and "[" in out.stderr
    assert out.stdout.count("\n") == 1 and out.stdout.startswith("6 cases in")


@pytest.mark.oracle
def test_known_refusal_of_single_channel_integer_avgpool(ov: ModuleType, tmp_path: Path) -> None:
    """Measured with openvino 2026.4.1: this i32 AvgPool-16 does not compile with C = 1
    ("Supported primitive descriptors list is empty") and does with C = 2."""
    data = fx.layer_data(
        "AvgPool", 16, (1,), (2,), (2,), (2,), (1,), "ceil", "same_lower", exclude_pad=False
    )
    one = fx.FixtureSpec("c1", "AvgPool", 16, data, "i32", (1, 1, 8), "grid")
    two = fx.FixtureSpec("c2", "AvgPool", 16, data, "i32", (1, 2, 8), "grid")
    report = fx.generate(
        str(tmp_path / "r"), [one, two], fx.Settings("grid", 0, grid="x"), verify=True
    )
    refused, confirmed = report.statuses
    assert refused.status == "diverges" and refused.known
    assert "single-channel" in (refused.reason or "")
    assert "Supported primitive descriptors list is empty" in (refused.reason or "")
    assert confirmed.status == "confirmed"
    assert report.index["reasons"] == {fx.KNOWN_REFUSALS[1].reason: 1}


def test_extra_corners_by_hand(corners_set: Path) -> None:
    (d15,) = cases(corners_set, select=lambda c: c.name == "D15")
    # H: ceil((9+2-5)/2)+1 = 4; W: ceil((11+2-3)/3)+1 = 5, last window at 4*3-1 = 11 >= 11
    assert d15.meta["output_shape"] == [1, 1, 4, 5]
    # window (0, 0) covers rows -1, 1, 3 and columns -1, 1 of the ramp 11*r + c: max 3*11 + 1
    assert d15.expected["values"][0, 0, 0, 0] == 34 and d15.expected["indices"][0, 0, 0, 0] == 34
    # the last column's windows cover columns 11 (pad) and 13 (overhang): empty, lowest f32
    assert np.all(d15.expected["values"][0, 0, :, 4] == np.finfo(np.float32).min)
    (d3,) = cases(corners_set, select=lambda c: c.name == "D3")
    # 6x6 ramp, k3 s2 p1 ceil_torch: 4x4; the first window holds 0, 1, 6, 7 of 9 taps: 14/9
    assert d3.meta["output_shape"] == [1, 1, 4, 4]
    assert d3.expected["values"][0, 0, 0, 0] == np.float32(14 / 9)


@pytest.mark.oracle
def test_extra_corners_against_pytorch(torch: ModuleType, corners_set: Path) -> None:
    (d15,) = cases(corners_set, select=lambda c: c.name == "D15")
    x = torch.from_numpy(d15.input.copy())
    values, indices = torch.nn.functional.max_pool2d(
        x, (3, 2), (2, 3), 1, 2, ceil_mode=True, return_indices=True
    )
    assert tuple(values.shape) == (1, 1, 4, 4)  # PyTorch drops the fifth column
    np.testing.assert_array_equal(d15.expected["values"][..., :4], values.numpy())
    np.testing.assert_array_equal(d15.expected["indices"][..., :4], indices.numpy())
    (d3,) = cases(corners_set, select=lambda c: c.name == "D3")
    ref = torch.nn.functional.avg_pool2d(
        torch.from_numpy(d3.input.copy()), 3, 2, 1, ceil_mode=True, count_include_pad=True
    ).numpy()
    # docs/semantics.md D3: max |OpenVINO - torch| = 5.67 on the 6x6 ramp
    assert abs(float(np.abs(d3.expected["values"] - ref).max()) - 17 / 3) < 1e-5


def test_cases_of_an_unfinished_set_are_its_complete_folders(
    smoke_set: Path, tmp_path: Path
) -> None:
    out = tmp_path / "partial"
    shutil.copytree(smoke_set, out)
    index = json.loads((out / "index.json").read_text())
    (out / "index.json").write_text(json.dumps(dict(index, complete=False, cases=[])))
    first = cases(smoke_set)[0].name
    shutil.copytree(out / first, out / f".irpool-tmp-{first}-1")  # a folder still being written
    assert [c.name for c in cases(out)] == sorted(c.name for c in cases(smoke_set))


def test_generated_models_declare_the_shapes_openvino_infers(
    corners_set: Path, full_set: Path
) -> None:
    from irpool.check import check_file

    for case in cases(corners_set) + cases(full_set):
        report = check_file(case.model_path)
        assert report.ok, case.name
        notes = [n for r in report.layers for n in r.pooling.notes]
        assert not [n for n in notes if "warning" in n], (case.name, notes)


def test_without_ml_dtypes_bfloat16_cases_are_skipped_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A core install (numpy and lxml only) still writes every other case."""
    monkeypatch.setattr(fx.suites, "bfloat16", lambda: None)
    cases, skipped, _ = fx.plan_cases("smoke", None, None, None, 0)
    everything = fx.preset_cases("smoke")
    bf16 = [c.name for c in everything if c.element_type == "bf16"]
    assert bf16, "the smoke preset is expected to hold a bfloat16 case"
    assert [name for name, _ in skipped] == bf16
    assert all(c.element_type != "bf16" for c in cases)
    assert len(cases) == len(everything) - len(bf16)
    assert cli.main(["fixtures", str(tmp_path / "out"), "--progress", "off"]) == 0
    printed = capsys.readouterr().out
    assert f"{len(bf16)} cases skipped" in printed and "irpool[bf16]" in printed
    index = json.loads((tmp_path / "out" / "index.json").read_text())
    assert [s["name"] for s in index["skipped"]] == bf16


# -- input ranges a grid cannot draw, and --force over files that are not irpool's -------------


@pytest.mark.parametrize(
    ("dtype", "value", "message"),
    [
        ("f32", "[0.01, 0.02]", "holds no multiple of 1/16"),
        (
            "f32",
            "[-1e300, 1e300]",
            "expected low and high within [-9007199254740992, 9007199254740992]",
        ),
        ("f16", "[0, 70000]", "expected low and high within [-65504, 65504] for f16"),
        ("i8", "[200, 300]", "holds no i8 value"),
        ("u8", "[0.2, 0.8]", "holds no u8 value"),
        ("f32", "[-inf, 1]", "finite numbers with low < high"),
        ("i32", "[nan, 1]", "finite numbers with low < high"),
    ],
)
def test_grid_range_that_cannot_be_drawn_is_refused_before_outdir(
    tmp_path: Path, dtype: str, value: str, message: str
) -> None:
    grid = tmp_path / "bad.toml"
    grid.write_text(
        "[[sweep]]\nname = 'tiny'\nop = 'AvgPool'\nversion = 1\nshape = [1, 1, 4]\n"
        f"kernel = 2\ndtype = '{dtype}'\nrange = {value}\n"
    )
    out = irpool("fixtures", str(tmp_path / "out"), "--grid", str(grid))
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert message in out.stderr and "bad.toml" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "out").exists()


def test_grid_ranges_at_the_edges_are_drawn() -> None:
    assert fx.range_problem(0.0625, 0.0625 + 1e-9, "f32") is None
    assert fx.range_problem(-65504, 65504, "f16") is None
    assert fx.range_problem(-1e300, 1e300, "i8") is None  # clipped to -128..127
    assert fx.range_problem(-(2.0**53), 2.0**53, "f64") is None
    x = fx.random_input((64,), "f64", 0, "edge", (-(2.0**53), 2.0**53))
    assert np.abs(x).max() <= 2.0**53
    y = fx.random_input((64,), "i8", 0, "edge", (-1e300, 1e300))
    assert y.min() >= -128 and y.max() <= 127


def test_generate_refuses_a_case_range_before_writing(tmp_path: Path) -> None:
    from dataclasses import replace

    specs, skipped, settings = fx.plan_cases("smoke", None, None, None, 0)
    bad = [*specs[:1], replace(specs[1], input_range=(0.01, 0.02))]
    with pytest.raises(UsageError, match="holds no multiple of 1/16"):
        fx.generate(str(tmp_path / "out"), bad, settings, skipped)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content", ['{"mine": true}\n', "not json\n", '["irpool.fixtures/1"]\n'])
def test_force_never_replaces_an_index_json_that_is_not_irpools(
    tmp_path: Path, content: str
) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "index.json").write_text(content)
    refused = irpool("fixtures", str(out), "--force")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "not an irpool fixtures manifest" in refused.stderr and "index.json" in refused.stderr
    assert os.listdir(out) == ["index.json"]
    assert (out / "index.json").read_text() == content


def test_force_refuses_a_foreign_case_folder_before_writing(tmp_path: Path) -> None:
    out = tmp_path / "c"
    (out / "D1").mkdir(parents=True)
    (out / "D1" / "data.txt").write_text("keep")
    refused = irpool("fixtures", str(out), "--preset", "corners", "--force")
    assert refused.returncode == 2 and "not an irpool fixture case" in refused.stderr
    assert refused.stderr.count("\n") == 1
    assert sorted(os.listdir(out)) == ["D1"]  # no index.json, no other case written
    # an irpool manifest is rewritten with --force
    ok = tmp_path / "s"
    assert irpool("fixtures", str(ok)).returncode == 0
    before = json.loads((ok / "index.json").read_text())
    forced = irpool("fixtures", str(ok), "--force", "--seed", "5")
    assert forced.returncode == 0, forced.stderr
    after = json.loads((ok / "index.json").read_text())
    assert before["settings"]["seed"] == 0 and after["settings"]["seed"] == 5


@pytest.mark.parametrize("element_type", ["f16", "bf16"])
@pytest.mark.parametrize("low, high", [(1000.03, 1003.9), (-300.1, -299.2), (250.5, 251.7)])
def test_narrow_float_draws_stay_in_the_recorded_range(
    element_type: str, low: float, high: float
) -> None:
    # f16 and bf16 cannot hold every multiple of 1/16 this far from zero; a draw rounded to the
    # type must still lie in [low, high], or the manifest's range would lie
    if fx.range_problem(low, high, element_type) is not None:
        # the range holds no value of the type at all: the refusal must be right about that
        grid = np.arange(math.ceil(low * 16), math.floor(high * 16) + 1) / 16
        held = grid.astype(numpy_dtype(element_type)).astype(np.float64)
        assert not ((held >= low) & (held <= high) & (held == grid)).any()
        return
    x = fx.random_input((4000,), element_type, 1, "narrow", (low, high)).astype(np.float64)
    assert x.min() >= low and x.max() <= high
    assert np.array_equal(x * 16, np.round(x * 16))


# -- --from when openvino cannot run the model; what verify counts as a known refusal -----------


def _single_channel_i32_avgpool(folder: Path) -> Path:
    """A model openvino 2026.4.1's CPU plugin refuses to compile (measured, see
    test_known_refusal_of_single_channel_integer_avgpool): one i32 AvgPool-16 with C = 1."""
    data = fx.layer_data(
        "AvgPool", 16, (1,), (2,), (2,), (2,), (1,), "ceil", "same_lower", exclude_pad=False
    )
    spec = fx.FixtureSpec("c1", "AvgPool", 16, data, "i32", (1, 1, 8), "grid")
    fx.generate(str(folder), [spec], fx.Settings("grid", 0, grid="x"))
    return folder / "c1" / "model.xml"


@pytest.mark.oracle
def test_a_model_openvino_refuses_gets_a_random_input_and_a_note(
    ov: ModuleType, tmp_path: Path
) -> None:
    model = _single_channel_i32_avgpool(tmp_path / "src")
    with pytest.raises(RuntimeError) as refused:
        ov.Core().compile_model(ov.Core().read_model(str(model)), "CPU")
    assert "Supported primitive descriptors list is empty" in str(refused.value)
    out = irpool("fixtures", str(tmp_path / "o"), "--from", str(model), "--verify", process=True)
    assert out.returncode == 0, out.stderr
    # one note on stderr, with openvino's complete words and the layer
    (note,) = out.stderr.splitlines()
    assert note.startswith("irpool: note: openvino cannot run model.xml: ")
    assert note.endswith(
        'layer "pool" gets a random input instead (meta.json: input.source random, input.why)'
    )
    assert "Supported primitive descriptors list is empty for node: pool type: Pooling" in note
    (case,) = cases(tmp_path / "o")
    source = case.meta["input"]
    assert source["source"] == "random" and source["seed"] == 0 and source["why"] in note
    assert (source["model"], source["layer"]) == ("model.xml", "pool")
    assert (source["low"], source["high"], source["values"]) == (-50000, 50000, "integers")
    assert case.input.dtype == np.int32 and case.input.shape == (1, 1, 8)
    assert np.abs(case.input).max() <= 50000 and len(np.unique(case.input)) > 1
    # the standalone case is the same layer: openvino refuses it for the documented reason
    assert case.status == "diverges" and case.reason is not None
    assert case.reason.startswith(fx.KNOWN_REFUSALS[1].reason)
    # seeded: the same command writes the same bytes
    again = irpool("fixtures", str(tmp_path / "o2"), "--from", str(model), "--verify")
    assert again.returncode == 0 and files_of(tmp_path / "o2") == files_of(tmp_path / "o")


def test_a_layer_irpool_cannot_build_is_one_complete_line(tmp_path: Path) -> None:
    out = irpool("fixtures", str(tmp_path / "d"), "--from", "fixtures/ir/dynamic.xml")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith('irpool: fixtures/ir/dynamic.xml:15: layer "same"')
    assert out.stderr.rstrip().endswith(
        "the layer's input [1,3,?,1..40] is not static for the model's input shapes; give them "
        "(--input-shape x=1,3,32,32) or the model's input arrays (-i NAME=FILE)"
    )
    assert not (tmp_path / "d").exists()


@pytest.mark.oracle
def test_a_maxpool_without_dilations_still_gives_its_real_input(
    ov: ModuleType, tmp_path: Path
) -> None:
    """openvino runs SqueezeNet with its MaxPool-8 layers' dilations removed (all 1 is the
    default), but not when their indices are asked for (measured: the reference MaxPool it
    then uses fails without dilations); the layer's input is taken without asking."""
    text = Path(SQUEEZENET).read_text()
    stripped = re.sub(r' dilations="1, 1"(?=[^>]*index_element_type)', "", text)
    assert stripped.count("dilations=") == text.count("dilations=") - 3
    model = tmp_path / "sq_nodil.xml"
    model.write_text(stripped)
    shutil.copy(Path(SQUEEZENET).with_suffix(".bin"), model.with_suffix(".bin"))
    from irpool.run import random_inputs

    inputs = random_inputs(load(str(model)), 0)
    core = ov.Core()
    whole = core.read_model(str(model))
    core.compile_model(whole, "CPU")(list(inputs.values()))  # runs as it is
    n17 = next(op for op in whole.get_ordered_ops() if op.get_friendly_name() == "n17")
    whole.add_outputs([n17.output(0), n17.output(1)])
    with pytest.raises(RuntimeError, match="does not match the 3D implementation"):
        core.compile_model(whole, "CPU")(list(inputs.values()))
    out = irpool(
        "fixtures", str(tmp_path / "o"), "--from", str(model), "--layer", "n17", "--verify"
    )
    assert out.returncode == 0 and out.stderr == "", out.stderr
    (case,) = cases(tmp_path / "o")
    assert case.meta["input"]["source"] == "openvino" and case.status == "confirmed"
    assert "dilations" in case.meta["note"]
    found, _ = openvino_rt.probe_layers(SQUEEZENET, ["n17"], random_inputs(load(SQUEEZENET), 0))
    np.testing.assert_array_equal(case.input, found["n17"][0][0])


DANGLING_POOL = """\t\t<layer id="12" name="dangling" type="MaxPool" version="opset1">
\t\t\t<data kernel="2, 2" strides="2, 2" pads_begin="0, 0" pads_end="0, 0" rounding_type="floor" auto_pad="explicit" />
\t\t\t<input><port id="0" precision="FP32"><dim>1</dim><dim>3</dim><dim>32</dim><dim>32</dim></port></input>
\t\t\t<output><port id="1" precision="FP32"><dim>1</dim><dim>3</dim><dim>16</dim><dim>16</dim></port></output>
\t\t</layer>
\t</layers>"""


@pytest.mark.oracle
def test_a_layer_openvino_drops_gets_a_random_input(ov: ModuleType, tmp_path: Path) -> None:
    """A MaxPool on pool_zoo.xml's input whose output goes nowhere: openvino drops it."""
    zoo = ROOT / "fixtures" / "ir" / "pool_zoo.xml"
    text = zoo.read_text().replace("\t</layers>", DANGLING_POOL, 1)
    edge = '\t\t<edge from-layer="0" from-port="0" to-layer="12" to-port="0" />\n'
    model = tmp_path / "zoo.xml"
    model.write_text(text.replace("\t<edges>\n", "\t<edges>\n" + edge, 1))
    shutil.copy(zoo.with_suffix(".bin"), model.with_suffix(".bin"))
    names = {op.get_friendly_name() for op in ov.Core().read_model(str(model)).get_ordered_ops()}
    assert "dangling" not in names and "mp1" in names
    out = irpool(
        "fixtures", str(tmp_path / "o"), "--from", str(model), "--layer", "dangling", process=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr == (
        "irpool: note: openvino's graph of zoo.xml has no layer 'dangling' (openvino drops "
        'layers that reach no Result); layer "dangling" gets a random input instead (meta.json: '
        "input.source random, input.why)\n"
    )
    (case,) = cases(tmp_path / "o")
    assert case.meta["input"]["source"] == "random" and case.input.shape == (1, 3, 32, 32)


# openvino 2026.4.1's errors for the two documented refusals (recorded from compile_model)
BF16_MAXPOOL_REFUSAL = (
    "Exception from src/inference/src/cpp/core.cpp:117:\nException from src/inference/src/dev/"
    "plugin.cpp:54:\nCheck 'newNode' failed at src/plugins/intel_cpu/src/node.cpp:1626:\n"
    "Unsupported operation of type: MaxPool name: pool\nDetails:\nException from src/plugins/"
    "intel_cpu/src/nodes/pooling.cpp:209:\nNot Implemented:\nMaxPool from opset8 and opset14 is "
    "supported only with one output\n\nException from src/plugins/intel_cpu/src/nodes/"
    "reference.cpp:36:\nNot Implemented:\nCannot fallback on ngraph reference implementation. "
    "Ngraph::Node::evaluate() is not implemented for op: opset8::MaxPool pool (opset1::Parameter "
    "x[0]:bf16[2,1,9]) -> (bf16[2,1,3], i32[2,1,3])\n\n\n\n"
)
C1_AVGPOOL_REFUSAL = (
    "Exception from src/inference/src/cpp/core.cpp:117:\nException from src/inference/src/dev/"
    "plugin.cpp:54:\nCheck '!getSupportedPrimitiveDescriptors().empty()' failed at src/plugins/"
    "intel_cpu/src/node.cpp:345:\nSupported primitive descriptors list is empty for node: pool "
    "type: Pooling\n\n\n"
)


def test_a_refusal_is_known_only_with_openvinos_matching_words() -> None:
    # the bfloat16 refusal was recorded on an AVX-512 CPU; on AVX2 the plugin computes the case
    avx512, avx2 = (Target(isa_named(isa, "test")) for isa in ("avx512_bf16", "avx2"))
    bf16_max = {"op": "MaxPool", "element_type": "bf16", "input_shape": [2, 1, 9]}
    bf16_max["outputs"] = {"values": {}, "indices": {}}
    c1_avg = {"op": "AvgPool", "element_type": "i32", "input_shape": [1, 1, 8], "outputs": {}}
    reason, known = fx.refusal_reason(bf16_max, BF16_MAXPOOL_REFUSAL, avx512)
    assert known and reason.startswith(fx.KNOWN_REFUSALS[0].reason + " (openvino: Unsupported")
    # openvino's words complete, on one line, without its source locations
    assert reason.endswith("-> (bf16[2,1,3], i32[2,1,3]))") and "src/" not in reason
    reason, known = fx.refusal_reason(c1_avg, C1_AVGPOOL_REFUSAL, avx512)
    assert known and reason == (
        f"{fx.KNOWN_REFUSALS[1].reason} (openvino: Supported primitive descriptors list is "
        "empty for node: pool type: Pooling)"
    )
    # the right case with another error, or the error on another case: not a known refusal
    for meta, message in [
        (bf16_max, C1_AVGPOOL_REFUSAL),
        (c1_avg, BF16_MAXPOOL_REFUSAL),
        (bf16_max, "std::bad_alloc"),
        (dict(c1_avg, input_shape=[1, 2, 8]), C1_AVGPOOL_REFUSAL),
        (dict(bf16_max, element_type="f32"), BF16_MAXPOOL_REFUSAL),
    ]:
        reason, known = fx.refusal_reason(meta, message, avx512)
        assert not known and reason.startswith("openvino's CPU plugin refuses it (openvino: ")
    assert not fx.refusal_reason(bf16_max, BF16_MAXPOOL_REFUSAL, avx2)[1]
    # the C = 1 integer AvgPool refusal is the same on every instruction set measured
    assert fx.refusal_reason(c1_avg, C1_AVGPOOL_REFUSAL, avx2)[1]


def test_a_value_mismatch_names_its_worst_cell_and_ulps() -> None:
    want = np.array([[1.0, 2.0, 3.0, 4.0]], dtype=np.float32)
    got = want.copy()
    got[0, 1] = np.nextafter(np.float32(2.0), np.float32(3.0))  # 1 ulp above 2
    got[0, 2] = 3.5  # float32 spacing in [2, 4) is 2**-22: 0.5 is 2**21 ulp
    ok, why = fx.writers._same(got, want)
    assert not ok and why == (
        "2 of 4 values differ; worst at [0, 2] (first at [0, 1]): openvino 3.5, expected 3.0, "
        "2097152 ulp of float32"
    )
    # a NaN where a number is expected is the worst; integers differ by their distance
    got[0, 3] = np.nan
    assert fx.writers._same(got, want)[1].endswith(
        "worst at [0, 3] (first at [0, 1]): openvino nan, expected 4.0, not both finite"
    )
    ints = np.array([5, 7, 9], dtype=np.int64)
    assert fx.writers._same(np.array([5, 4, 9], dtype=np.int64), ints)[1] == (
        "1 of 3 values differ; worst at [1]: openvino 4, expected 7, 3 apart"
    )
    if bfloat16() is not None:
        bf = bfloat16()
        one = np.array([1.0, -2.0], dtype=bf)
        # bfloat16 keeps 8 significant bits: 1 + 2**-7 is the next value after 1
        assert fx.writers._same(np.array([1.0078125, -2.0], dtype=bf), one)[1].endswith(
            "openvino 1.0078125, expected 1.0, 1 ulp of bfloat16"
        )
    # -0 and +0 are the same number (not compared), and both zeros are 0 ulp from each other
    assert fx.writers._same(np.array([-0.0], np.float32), np.array([0.0], np.float32)) == (True, "")


def test_install_hints_name_real_extras_and_packages() -> None:
    import tomllib

    from conftest import EXTRAS, install_hint

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert set(EXTRAS) == set(extras)
    requirements = [r for reqs in extras.values() for r in reqs] + project["dependencies"]
    packages = {re.split(r"[<>=!~ \[]", r)[0].lower() for r in requirements}
    assert install_hint("torch") == "pip install 'irpool[torch]'"
    assert install_hint("openvino") == "pip install 'irpool[openvino]'"
    sources = [*(ROOT / "irpool").rglob("*.py"), *(ROOT / "tests").glob("*.py")]
    hints = [
        (path.name, hint)
        for path in sources
        for hint in re.findall(r"pip install ('irpool\[\w+\]'|[\w.-]+)", path.read_text())
    ]
    assert len(hints) >= 8
    for where, hint in hints:
        extra = re.fullmatch(r"'irpool\[(\w+)\]'", hint)
        if extra:
            assert extra.group(1) in extras, (where, hint)
        else:
            assert hint.lower() in packages, (where, hint)


def test_index_names_the_cpu_its_openvino_outputs_model(tmp_path: Path) -> None:
    """The expected outputs depend on the CPU openvino runs on (AVX2 vs AVX-512): index.json
    says which one they model, the one IRPOOL_OV_ISA names when it is set."""
    env = {**os.environ, "IRPOOL_OV_ISA": "avx2"}
    out = irpool("fixtures", str(tmp_path / "fx"), "--preset", "smoke", env=env)
    assert out.returncode == 0, out.stderr
    index = json.loads((tmp_path / "fx" / "index.json").read_text())
    assert index["openvino_cpu"] == {"isa": "avx2", "source": "IRPOOL_OV_ISA"}
    env["IRPOOL_OV_ISA"] = "avx9"
    bad = irpool("fixtures", str(tmp_path / "fx2"), "--preset", "smoke", env=env)
    assert bad.returncode == 2 and "IRPOOL_OV_ISA='avx9'" in bad.stderr
    assert "Traceback" not in bad.stderr
