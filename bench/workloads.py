"""The standard pooling workloads of the bench (and of the tests that check them against
openvino): what real models carry, at the sizes they carry it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from irpool.geometry import PoolParams, PoolPlan, plan


@dataclass(frozen=True)
class Workload:
    name: str
    reduce: str
    shape: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: int
    pad: int
    dtype: str = "float32"
    exclude_pad: bool = True
    ceil: bool = False
    dilation: int = 1
    indices: bool = False
    """Whether the model reads MaxPool's indices output (as a SegNet's MaxUnpool does)."""

    def params(self) -> PoolParams:
        n = len(self.kernel)
        return PoolParams(
            op=self.name,
            reduce="max" if self.reduce == "max" else "mean",
            window=self.kernel,
            strides=(self.stride,) * n,
            dilations=(self.dilation,) * n,
            pads=((self.pad, self.pad),) * n,
            rounding="ceil" if self.ceil else "floor",
            count_pad=not self.exclude_pad,
            indices=self.indices,
        )

    def plan(self) -> PoolPlan:
        return plan(self.params(), self.shape, "openvino", self.indices, self.np_dtype())

    def np_dtype(self) -> Any:
        if self.dtype == "bfloat16":
            from irpool.model import bfloat16

            return bfloat16()
        return np.dtype(self.dtype)

    def input(self) -> np.ndarray:
        x = np.random.default_rng(0).standard_normal(self.shape).astype(np.float32)
        return x.astype(self.np_dtype())

    def keywords(self) -> dict[str, Any]:
        """The keywords of irpool.pool / irpool.compile_pool for this workload."""
        return dict(
            kernel=self.kernel,
            strides=self.stride,
            pads=self.pad,
            dilations=self.dilation,
            reduce="max" if self.reduce == "max" else "mean",
            rounding="ceil" if self.ceil else "floor",
            count_pad=not self.exclude_pad,
            indices=self.indices,
        )

    def scaled(self, size: int = 3) -> Workload:
        """The same geometry on a small input: batch 1, `size` channels (tests)."""
        return replace(self, shape=(1, size, *self.shape[2:]))


WORKLOADS = (
    Workload("resnet_max", "max", (1, 64, 112, 112), (3, 3), 2, 1),
    Workload("avg2x2", "mean", (1, 256, 56, 56), (2, 2), 2, 0),
    Workload("gap7", "mean", (1, 2048, 7, 7), (7, 7), 1, 0),
    Workload("incep_avg_excl", "mean", (1, 192, 28, 28), (3, 3), 1, 1),
    Workload("squeeze_max_ceil", "max", (1, 256, 54, 54), (3, 3), 2, 0, ceil=True),
    Workload("avg3d", "mean", (1, 32, 16, 56, 56), (3, 3, 3), 2, 1, exclude_pad=False),
    Workload("batch_max", "max", (32, 64, 56, 56), (3, 3), 2, 1),
    Workload("avg1d", "mean", (8, 256, 4000), (3,), 2, 1),
    Workload("large_avg", "mean", (1, 64, 1024, 1024), (3, 3), 2, 1),
    Workload("f16_avg", "mean", (1, 64, 112, 112), (3, 3), 2, 1, dtype="float16"),
    Workload("segnet_idx", "max", (1, 64, 224, 224), (2, 2), 2, 0, indices=True),
    Workload("dil_max", "max", (1, 128, 64, 64), (3, 3), 1, 2, dilation=2),
    Workload("f16_max", "max", (1, 64, 112, 112), (3, 3), 2, 1, dtype="float16"),
    Workload("max3d", "max", (1, 32, 16, 56, 56), (3, 3, 3), 2, 1),
    Workload("avg7_s1", "mean", (1, 64, 56, 56), (7, 7), 1, 3),
    Workload("resnet_max_b8", "max", (8, 64, 112, 112), (3, 3), 2, 1),
)
BY_NAME = {w.name: w for w in WORKLOADS}

JUDGED_F32 = (
    "resnet_max",
    "avg2x2",
    "gap7",
    "incep_avg_excl",
    "squeeze_max_ceil",
    "avg3d",
    "batch_max",
    "avg1d",
    "large_avg",
    "max3d",
    "avg7_s1",
    "resnet_max_b8",
)
"""The float32 workloads where openvino runs its fast (jit) kernels."""
JUDGED_F16 = ("f16_avg", "f16_max")
JUDGED = JUDGED_F32 + JUDGED_F16
GENERIC = ("segnet_idx", "dil_max")
"""Where openvino falls back to generic code (indices read, dilations)."""
