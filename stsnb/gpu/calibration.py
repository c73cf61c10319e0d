"""``stsnb run --check --calibration FILE``: the estimates with what ``stsnb gpu-check`` measured in place of the
assumptions.

A gpu-check report (its JSON) holds, per training notebook, the measured peak memory of its largest setting per GPU
over ``memory_estimate``'s figure and the measured seconds per step over what ``cost_estimate`` assumes (peak x
utilisation, the 4-bit slowdown, the per-step overhead). The calibrated check multiplies that notebook's memory rows
by the first ratio and its fits' hours by the second, so the timeouts and the "fits on the GPU" column are judged on
the measurement; a notebook the report has no row for keeps its assumptions, and the check says which.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


class CalibrationError(ValueError):
    """A calibration file that cannot be used; the message names the file and what was expected."""


@dataclass(frozen=True)
class Calibration:
    """The ratios a gpu-check report measured, per notebook."""

    source: str
    gpu: str
    rehearsal: bool
    memory_ratio: dict[str, float]
    time_ratio: dict[str, float]

    def describe(self) -> list[str]:
        """The lines the check prints above its tables."""
        lines = [f"Calibrated from {self.source} ({self.gpu}): measured / estimated, per notebook:"]
        for name in sorted(set(self.memory_ratio) | set(self.time_ratio)):
            memory, seconds = self.memory_ratio.get(name), self.time_ratio.get(name)
            lines.append(
                f"  - {name}: memory x{memory:.2f}, time x{seconds:.2f}"
                if memory and seconds
                else f"  - {name}: memory x{memory or 1:.2f}, time x{seconds or 1:.2f} (one ratio not measured)"
            )
        if self.rehearsal:
            lines.append(
                "  (a CPU rehearsal: ratios of tiny models on the CPU, which say nothing about a GPU; for a real "
                "calibration run stsnb gpu-check on the GPU server)"
            )
        return lines


def load(path: Path) -> Calibration:
    """Read a gpu-check JSON report; rows that did not run are left out (their notebooks keep the assumptions)."""
    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
        fits = report["fits"]
        gpu, rehearsal = str(report["gpu"]), bool(report["rehearsal"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise CalibrationError(
            f"{path}: not a stsnb gpu-check report ({type(err).__name__}: {err}); expected the .json that "
            "`stsnb gpu-check --out DIR` writes beside its .md"
        ) from err
    memory, seconds = {}, {}
    for row in fits:
        if row.get("status") != "ok":
            continue
        if row.get("memory_ratio"):
            memory[row["notebook"]] = float(row["memory_ratio"])
        if row.get("time_ratio"):
            seconds[row["notebook"]] = float(row["time_ratio"])
    if not memory and not seconds:
        raise CalibrationError(f"{path}: no fit row ran ok, so there is nothing to calibrate with")
    return Calibration(str(path), gpu, rehearsal, memory, seconds)


def calibrate_costs(costs: Sequence[Any], calibration: Calibration) -> list[Any]:
    """Each notebook's fits (``plan_costs.NotebookCost``) with their hours x its measured time ratio."""
    out = []
    for cost in costs:
        ratio = calibration.time_ratio.get(cost.notebook)
        if ratio is None:
            out.append(cost)
            continue
        out.append(replace(cost, fits=[replace(f, hours=f.hours * ratio) for f in cost.fits]))
    return out


def calibrate_memory(rows: Sequence[Any], calibration: Calibration) -> list[Any]:
    """Each notebook's memory rows (``plan_check.MemoryRow``) x its measured memory ratio."""
    out = []
    for row in rows:
        ratio = calibration.memory_ratio.get(row.notebook)
        if ratio is None:
            out.append(row)
            continue
        out.append(
            replace(
                row,
                without_checkpointing_gib=row.without_checkpointing_gib * ratio,
                with_checkpointing_gib=row.with_checkpointing_gib * ratio,
            )
        )
    return out
