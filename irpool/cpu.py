"""Which of its kernels openvino's CPU plugin (and TensorFlow) runs on this machine.

The plugin compiles its kernels for the widest instruction set the CPU offers, and a few of
their results depend on it: a reduction folds its elements in as many float32 lanes as one
vector holds (16 with AVX-512, 8 with AVX2), and bfloat16 values are converted by the CPU's
own instruction where it has one (AVX512_BF16: round to nearest even, subnormals flushed) and
by other code where it has none.  irpool's openvino convention follows the machine it runs
on; `IRPOOL_OV_ISA` names another (`avx512_amx`, `avx512_bf16`, `avx512`, `avx2`), for
instance to write fixtures for another machine.  A CPU with AMX (Sapphire Rapids and later) is
an AVX-512 one with AVX512_BF16 whose integer pooling differs once more: a one-channel integer
layer with a window wholly in the padding or the ceil overhang runs on oneDNN's reference
kernel there (measured, geometry.py).

The CPU's features are read from numpy's own CPU detection (the same CPUID bits the plugin
reads), so no runtime is imported here.  TensorFlow's Linux x86 wheel runs oneDNN kernels only
on CPUs with neural-network features (`tf_uses_onednn`), and its 3-D pools differ without them.
"""

from __future__ import annotations

import functools
import os
import platform
import sys

from .errors import UsageError
from .target import BF16_ISAS as BF16_ISAS
from .target import ISAS as ISAS
from .target import TITLES as TITLES
from .target import PluginIsa, Target, isa_named

AMX_FLAGS = ("amx_tile", "amx_bf16")
"""The CPU features (Linux /proc/cpuinfo names) that make a CPU with AVX512_BF16 an AMX one
(oneDNN's avx512_core_amx: AMX-TILE, AMX-INT8 and AMX-BF16 on top of AVX512_BF16)."""


def _cpu_features() -> dict[str, bool]:
    try:
        from numpy._core._multiarray_umath import __cpu_features__  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - older numpy layouts
        return {}
    return dict(__cpu_features__)


def _detected() -> str:
    return detect(_cpu_features(), _linux_x86_flags() or frozenset())


def detect(features: dict[str, bool], flags: frozenset[str]) -> str:
    """The instruction set of a CPU with numpy's CPU `features` (AVX512F ...) and the Linux
    /proc/cpuinfo `flags` (amx_tile ...): AVX-512 needs F, BW, VL and DQ (oneDNN's
    avx512_core), then AVX512BF16, then AMX-TILE and AMX-BF16 on top."""
    if all(features.get(k) for k in ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")):
        if not features.get("AVX512BF16"):
            return "avx512"
        return "avx512_amx" if all(flag in flags for flag in AMX_FLAGS) else "avx512_bf16"
    return "avx2"


@functools.cache
def _isa(override: str | None) -> PluginIsa:
    if override:
        name = override.strip().lower()
        if name not in ISAS:
            raise UsageError(f"IRPOOL_OV_ISA={override!r}: expected one of {', '.join(ISAS)}")
        source = "IRPOOL_OV_ISA"
    else:
        name, source = _detected(), "this CPU"
    return isa_named(name, source)


def plugin_isa() -> PluginIsa:
    """The instruction set openvino's CPU plugin runs with here (IRPOOL_OV_ISA, else this
    CPU's)."""
    return _isa(os.environ.get("IRPOOL_OV_ISA") or None)


def this_machine(isa: str | None = None) -> Target:
    """The target the command line and the API model unless told otherwise: openvino's CPU
    plugin with `isa` (the --ov-isa option) if given, else IRPOOL_OV_ISA, else this CPU's;
    TensorFlow's oneDNN kernels as this machine (and TF_ENABLE_ONEDNN_OPTS) decide."""
    env = os.environ
    return _machine(isa, env.get("IRPOOL_OV_ISA") or None, env.get("TF_ENABLE_ONEDNN_OPTS"))


@functools.cache
def _machine(isa: str | None, ov_env: str | None, tf_env: str | None) -> Target:
    if isa is not None:
        name = isa.strip().lower()
        if name not in ISAS:
            raise UsageError(f"--ov-isa {isa!r}: expected one of {', '.join(ISAS)}")
        chosen = isa_named(name, "--ov-isa")
    else:
        chosen = _isa(ov_env)
    return Target(chosen, tf_uses_onednn("float32"), tf_uses_onednn("bfloat16"))


TF_ONEDNN_FLAGS = ("avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16")
"""The CPU features (Linux /proc/cpuinfo names) that make TensorFlow's Linux x86 wheel run its
oneDNN kernels by default (tensorflow/core/util/port.cc, DefaultOneDnnPolicy)."""

TF_ONEDNN_BF16_FLAGS = ("avx512f", "avx_ne_convert")
"""With oneDNN on, bfloat16 runs on it only where the CPU has one of these (util.cc,
IsDataTypeSupportedByOneDNNOnThisCPU); elsewhere TensorFlow falls back to Eigen (measured)."""


@functools.cache
def _linux_x86_flags() -> frozenset[str] | None:
    """The CPU's feature flags on Linux x86 (numpy's detection, /proc/cpuinfo for the ones numpy
    does not name), or None on other platforms."""
    if sys.platform != "linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    features = _cpu_features()
    flags = {"avx512_vnni": "AVX512VNNI", "avx512_bf16": "AVX512BF16", "avx512f": "AVX512F"}
    found = {flag for flag, name in flags.items() if features.get(name)}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            found.update(next((line for line in f if line.startswith("flags")), "").split())
    except OSError:  # pragma: no cover - no /proc
        pass
    return frozenset(found)


def tf_uses_onednn(dtype: str = "float32") -> bool:
    """Whether TensorFlow (the Linux x86 wheel) runs its oneDNN kernels on this machine for data
    of `dtype`: TF_ENABLE_ONEDNN_OPTS (0/1/false/true, read by TensorFlow itself) when set,
    else whether the CPU has AVX512_VNNI, AVX512_BF16, AVX_VNNI or AMX; bfloat16 also needs
    AVX512F or AVX_NE_CONVERT.  Without oneDNN its 3-D pools run Eigen's cuboid kernels
    (Convention.eigen_cuboid).  Other platforms keep the oneDNN rules (not measured there)."""
    flags = _linux_x86_flags()
    if flags is None:
        return True
    value = os.environ.get("TF_ENABLE_ONEDNN_OPTS", "").strip().lower()
    if value in ("1", "true"):
        enabled = True
    elif value in ("0", "false"):
        enabled = False
    else:
        enabled = any(flag in flags for flag in TF_ONEDNN_FLAGS)
    if enabled and dtype == "bfloat16":
        return any(flag in flags for flag in TF_ONEDNN_BF16_FLAGS)
    return enabled
