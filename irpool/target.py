"""The machine whose runtimes irpool models: a plain value, chosen once at the edge.

A plan is a function of its arguments only: the layer's params, the input shape and dtype, and
the convention, which carries this `Target` (`Convention.target`).  The planners read the
instruction set of openvino's CPU plugin and whether TensorFlow runs its oneDNN kernels from
it, never from the CPU.  Which target is modelled is decided where irpool is entered: the
command line (`--ov-isa`, else IRPOOL_OV_ISA, else this machine, see irpool/cpu.py) or a caller
of the Python API, through `conventions.use_target`.
"""

from __future__ import annotations

from dataclasses import dataclass

ISAS = ("avx512_amx", "avx512_bf16", "avx512", "avx2")
"""The instruction sets irpool models, widest first."""

TITLES = {
    "avx512_amx": "AVX-512 with AMX",
    "avx512_bf16": "AVX-512 with AVX512_BF16",
    "avx512": "AVX-512",
    "avx2": "AVX2",
}

BF16_ISAS = ("avx512_amx", "avx512_bf16")
"""The instruction sets with AVX512_BF16: float32 -> bfloat16 by the CPU's own instruction
(vcvtneps2bf16: nearest even, subnormals flushed to zero).  Plain AVX-512 rounds to nearest even
in code and keeps subnormals (measured: 0x007FFFFF -> 0x0080, 0x80400000 -> 0x8040)."""


@dataclass(frozen=True)
class PluginIsa:
    name: str
    """avx512_amx, avx512_bf16, avx512 or avx2."""
    lanes: int
    """float32 lanes of one vector register (16 or 8)."""
    bf16_instructions: bool
    """The CPU converts float32 to bfloat16 itself (AVX512_BF16)."""
    source: str
    """Where the choice came from: 'this CPU', 'IRPOOL_OV_ISA' or '--ov-isa'."""

    @property
    def title(self) -> str:
        return TITLES[self.name]


def isa_named(name: str, source: str) -> PluginIsa:
    """The instruction set called `name` (one of ISAS), chosen by `source`."""
    return PluginIsa(name, 8 if name == "avx2" else 16, name in BF16_ISAS, source)


@dataclass(frozen=True)
class Target:
    """The machine modelled: the instruction set openvino's CPU plugin runs with, and whether
    TensorFlow runs its oneDNN kernels (for float32 data, and for bfloat16)."""

    isa: PluginIsa
    tf_onednn: bool = True
    tf_onednn_bf16: bool = True

    def tf_uses_onednn(self, dtype: str) -> bool:
        """Whether TensorFlow runs its oneDNN kernels for data of `dtype` (numpy name)."""
        return self.tf_onednn_bf16 if dtype == "bfloat16" else self.tf_onednn
