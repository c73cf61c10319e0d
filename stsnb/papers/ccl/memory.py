"""Notebook 40's memory plan for ``stsnb run --check`` (``stsnb.gpu.plan_check``): what a micro-batch of C-STS
quadruples holds on one GPU, for each backbone and encoder architecture the notebook trains."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import data as data
from ...gpu.memory_estimate import TrainingSetup
from ...gpu.plan_check import MemoryPlanRow, activation_bytes, measured_length


def memory_plan(params: Mapping[str, Any]) -> list[MemoryPlanRow]:
    """A micro-batch of quadruples: two rows each; the bi-encoder encodes two texts per row, the tri-encoder three."""
    quadruples = int(params.get("batch_size", 8))
    cap = int(params.get("max_length", 64))

    def texts():
        return [f"{r.sent1} {r.condition}" for r in data.load_csts("train")][:3000]

    length = measured_length(texts, "minilm-l6", 2 * quadruples, cap)
    rows = []
    for backbone in params.get("backbones") or []:
        for arch in params.get("architectures") or ["bi", "tri"]:
            sequences = 2 * quadruples * (3 if arch == "tri" else 2)
            setup = TrainingSetup(
                sequences,
                length,
                activation_bytes=activation_bytes(params),
                dropout=0.1,
                gradient_checkpointing=bool(params.get("gradient_checkpointing", False)),
            )
            rows.append((f"Table 3 {arch}-encoder", str(backbone), setup))
    return rows
