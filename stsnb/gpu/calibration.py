"""``stsnb run --check --calibration FILE``: the estimates with what ``stsnb gpu-check`` measured in place of the
assumptions, each term of the time by its own ratio.

A gpu-check report (its JSON) holds, per training notebook, the measured peak memory of its largest setting per GPU
over ``memory_estimate``'s figure, and one measured / assumed ratio per term of ``cost_estimate``'s hours
(``FitCost.terms``): ``compute`` (the largest setting's steps on random ids, over the FLOPs at the assumed
utilisation), ``overhead`` (a whole optimizer step at the notebook's typical batch through the real loop, with
tokenization and collation, less its compute, over the assumed seconds per step), ``evaluation`` (the notebook's
scoring, over its FLOPs) and ``io`` (a checkpoint written to the report's folder, over the assumed rate). The
calibrated check multiplies each term of each fit by its ratio, and the memory rows by the memory ratio: one ratio
for hours that are mostly per-step overhead (notebook 20) would move them by the wrong term. A notebook or term the
report did not measure keeps its assumption, and the check says which.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


class CalibrationError(ValueError):
    """A calibration file that cannot be used; the message names the file and what was expected."""


TERMS = ("compute", "overhead", "evaluation", "io")


@dataclass(frozen=True)
class Calibration:
    """The ratios a gpu-check report measured, per notebook: memory, and each term of the time."""

    source: str
    gpu: str
    rehearsal: bool
    memory_ratio: dict[str, float]
    term_ratios: dict[str, dict[str, float]]

    def describe(self) -> list[str]:
        """The lines the check prints above its tables."""
        lines = [f"Calibrated from {self.source} ({self.gpu}): measured / assumed, per notebook and term:"]
        for name in sorted(set(self.memory_ratio) | set(self.term_ratios)):
            ratios = self.term_ratios.get(name, {})
            memory = self.memory_ratio.get(name)
            parts = [f"memory x{memory:.2f}" if memory else "memory not measured"]
            parts += [f"{term} x{ratios[term]:.2f}" if term in ratios else f"{term} assumed" for term in TERMS]
            lines.append(f"  - {name}: {', '.join(parts)}")
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
    memory: dict[str, float] = {}
    terms: dict[str, dict[str, float]] = {}
    for row in fits:
        if row.get("status") != "ok":
            continue
        if "time_ratio" in row and "ratios" not in row:
            raise CalibrationError(
                f"{path}: made by an earlier stsnb gpu-check, whose one time ratio per notebook would scale hours "
                "that are mostly per-step overhead by the compute's ratio; run `stsnb gpu-check` again"
            )
        if row.get("memory_ratio"):
            memory[row["notebook"]] = float(row["memory_ratio"])
        measured = {t: float(v) for t, v in (row.get("ratios") or {}).items() if t in TERMS and v}
        if measured:
            terms[row["notebook"]] = measured
    if not memory and not terms:
        raise CalibrationError(f"{path}: no fit row ran ok, so there is nothing to calibrate with")
    return Calibration(str(path), gpu, rehearsal, memory, terms)


def calibrate_costs(costs: Sequence[Any], calibration: Calibration) -> list[Any]:
    """Each notebook's fits (``plan_costs.NotebookCost``) with each term x its measured ratio
    (``cost_estimate.FitCost.scaled``)."""
    out = []
    for cost in costs:
        ratios = calibration.term_ratios.get(cost.notebook)
        out.append(replace(cost, fits=[f.scaled(ratios) for f in cost.fits]) if ratios else cost)
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
