"""The layers a report does not verify, run or compare: pooling-like ops irpool has no entry
for (ROIPooling, ReduceMin, ...), each by type and name with the reason.  check, compare,
convert-report and fixtures list them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .model import Graph


@dataclass(frozen=True)
class Skipped:
    """A layer a report does not verify, run or compare: by type and name, with the reason."""

    layer: str
    op: str
    line: int | None
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"layer": self.layer, "type": self.op, "line": self.line, "reason": self.reason}


def skipped_layers(graph: Graph) -> list[Skipped]:
    """The layers of pooling-like ops irpool has no entry for (ROIPooling, ReduceMin, ...),
    each with why it is not covered."""
    from .ops import REGISTRY

    found = []
    for layer in graph.layers:
        reason = REGISTRY.skip_reason(layer)
        if reason is not None:
            op = layer.type + (f"-{layer.version.removeprefix('opset')}" if layer.version else "")
            found.append(Skipped(layer.label, op, layer.line, reason))
    return found
