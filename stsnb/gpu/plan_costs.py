"""``stsnb run --check``'s batches, time and disk (``stsnb.gpu.plan_check`` runs it): each training notebook's fits (its
paper's ``costs.fit_plan``, entry-point group ``stsnb.fit_plans``) priced by ``stsnb.gpu.cost_estimate`` on the GPUs
given, and the three tables the check prints: the global batch per fit as ``stsnb.training.batching`` shares it out, the
time and checkpoint disk per fit, and per notebook against its plan timeout, with the assumptions under them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import cost_estimate, memory_estimate


@dataclass(frozen=True)
class NotebookCost:
    """One notebook's estimate: its fits priced, the processes they train on, hours, timeout and disk."""

    notebook: str
    fits: list[cost_estimate.FitCost]
    processes: int
    timeout: float | None  # seconds, from the plan (None: no limit)
    skipped: list[str]  # models whose shape is unknown (Hub ids not in memory_estimate.KNOWN_SHAPES)
    rows: list[cost_estimate.FitRow] = field(default_factory=list)  # what its fit plan gave (to price it again)
    worst_case: bool = False  # a length or count took its cap: texts it is measured on were missing (``--check``)

    @property
    def hours(self) -> float:
        return sum(f.hours for f in self.fits)

    @property
    def io_hours(self) -> float:
        """Of ``hours``: writing checkpoints and loading models."""
        return sum(f.write_hours + f.load_hours for f in self.fits)

    @property
    def overhead_hours(self) -> float:
        """Of ``hours``: the per-step overhead (``cost_estimate.STEP_OVERHEAD_SECONDS`` per optimizer step)."""
        return sum(f.overhead_hours for f in self.fits)

    def hours_at_overhead(self, factor: float) -> float:
        """``hours`` with the per-step overhead ``factor`` times the assumed one."""
        return self.hours + (factor - 1) * self.overhead_hours

    @property
    def peak_bytes(self) -> float:
        """Every fit's ``best.pt`` and the largest one unfinished ``last/`` (fits run one at a time)."""
        return max((f.last_bytes for f in self.fits if f.best_bytes), default=0.0) + self.kept_bytes

    @property
    def kept_bytes(self) -> float:
        return sum(f.kept_bytes for f in self.fits)

    @property
    def over_timeout(self) -> bool:
        return self.timeout is not None and self.hours * 3600 > self.timeout


def model_shape(model: str) -> memory_estimate.ModelShape | None:
    """A paper backbone's shape (``memory_estimate.KNOWN_SHAPES``, offline), else a packaged or local model's from
    its config.json (no weights loaded); None for another Hub id."""
    return memory_estimate.KNOWN_SHAPES.get(model) or _shape_from_folder(model)


def notebook_cost(
    notebook: str,
    params: Mapping[str, Any],
    gpus: int | None,
    gpu: str = cost_estimate.DEFAULT_GPU,
    timeout: float | None = None,
    rows: Sequence[cost_estimate.FitRow] | None = None,
) -> NotebookCost | None:
    """``notebook``'s fits (its ``stsnb.fit_plans`` hook, or ``rows`` it gave before) priced on ``gpus`` GPUs of type
    ``gpu``, ``num_processes`` resolved as the notebook resolves it; None for a notebook that trains nothing."""
    hook = cost_estimate.fit_plan_hook(notebook)
    if hook is None:
        return None
    rows = list(rows) if rows is not None else hook(params)
    processes = cost_estimate.processes_for(params.get("num_processes", 1), rows, gpus)
    fits, skipped = [], []
    for row in rows:
        shape = model_shape(row.model)
        if shape is None:
            skipped.append(row.model)
            continue
        fits.append(cost_estimate.fit_cost(notebook, row, shape, processes, gpu))
    return NotebookCost(notebook, fits, processes, timeout, sorted(set(skipped)), list(rows))


def batch_table(costs: Sequence[NotebookCost]) -> str:
    """Global batch per fit and how it is shared out: processes x per process x accumulation."""
    lines = [
        "| notebook | fit | model | fits | global batch | processes | per process | accumulation | loss |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for nb in costs:
        for f in nb.fits:
            if not f.row.examples:
                continue
            s = f.split
            loss = "batch-level" if f.row.batch_level else "per pair"
            lines.append(
                f"| {nb.notebook} | {f.row.label} | {f.row.model} | {f.row.count} | {s.global_batch} | "
                f"{s.processes} | {s.per_process} | {s.accumulation} | {loss} |"
            )
    return "\n".join(lines)


def fit_cost_table(costs: Sequence[NotebookCost]) -> str:
    """Per fit: the work (examples x epochs, sequences x tokens), what trains, FLOPs, hours and checkpoint disk."""
    count = cost_estimate.count
    lines = [
        "| notebook | fit | model | fits | examples x epochs | sequences x tokens | trains "
        "| FLOPs per fit (train + eval) | hours, all fits | of which writes + loads | last/ writes per fit "
        "| last/ + best.pt per fit | kept per fit |",
        "|---|---|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for nb in costs:
        for f in nb.fits:
            r = f.row
            tokens = f"{r.tokens} {'measured' if r.tokens_measured else 'cap'}"
            work = f"{count(r.examples)} x {r.epochs:g}" if r.examples else "scoring only"
            trains = {
                "lora": f"LoRA r={r.lora_r} {count(f.trainable_parameters)}",
                "head": f"head {count(f.trainable_parameters)}",
                "none": "nothing",
            }.get(r.trainable, f"full {count(f.trainable_parameters)}")
            trains += " 4-bit" if r.quantize_4bit else ""
            trains += " ckpt" if r.gradient_checkpointing else ""
            disk = cost_estimate.gib(f.last_bytes + f.best_bytes) if f.best_bytes else "none"
            lines.append(
                f"| {nb.notebook} | {r.label} | {r.model} | {r.count} | {work} | {r.sequences_per_example} x {tokens} "
                f"| {trains} "
                f"| {count(f.train_flops)} + {count(f.eval_flops)} | {f.hours:.2f} "
                f"| {f.write_hours:.2f} + {f.load_hours:.2f} | {f.last_writes} | {disk} | "
                f"{cost_estimate.gib(f.best_bytes) if f.best_bytes else 'none'} |"
            )
    return "\n".join(lines)


def notebook_cost_table(costs: Sequence[NotebookCost], gpus: int | None, gpu: str) -> str:
    """Per notebook: processes, estimated hours, the plan's timeout, checkpoint peak and kept weights; then the plan
    (notebooks one after another: the peak is the largest of each notebook's peak plus the weights kept before)."""
    gib = cost_estimate.gib
    lines = [
        f"| notebook | GPUs used (of {gpus if gpus is not None else 'the visible'}) | estimated hours "
        f"({cost_estimate.GPU_TYPES[gpu][0]}) | of which writes + loads | timeout | within "
        f"| {cost_estimate.TIMEOUT_SAFETY:g}x, whole hours | checkpoint peak | weights kept |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    kept_before, sequential_peak = 0.0, 0.0
    for nb in costs:
        used = max([f.split.processes for f in nb.fits] or [1])
        timeout = "none" if nb.timeout is None else f"{nb.timeout / 3600:g} h"
        within = "-" if nb.timeout is None else ("**no**" if nb.over_timeout else "yes")
        lines.append(
            f"| {nb.notebook}{WORST_CASE_MARK if nb.worst_case else ''} | {used} | {nb.hours:.1f} | {nb.io_hours:.2f} "
            f"| {timeout} | {within} | "
            f"{cost_estimate.timeout_for(nb.hours) / 3600:g} h | {gib(nb.peak_bytes)} | {gib(nb.kept_bytes)} |"
        )
        sequential_peak = max(sequential_peak, kept_before + nb.peak_bytes)
        kept_before += nb.kept_bytes
    total, io = sum(nb.hours for nb in costs), sum(nb.io_hours for nb in costs)
    at_once = sum(nb.peak_bytes for nb in costs)
    lines.append(
        f"| plan | | {total:.1f} | {io:.2f} | | | | {gib(sequential_peak)} (all at once: {gib(at_once)}) "
        f"| {gib(kept_before)} |"
    )
    return "\n".join(lines)


WORST_CASE_MARK = " (worst case)"  # beside an estimate whose texts were missing: every text at the cap
OVERHEAD_FACTORS = (2, 3)  # what --check prints each notebook's hours at, until a GPU has measured the overhead


def overhead_table(costs: Sequence[NotebookCost]) -> str:
    """Per notebook: the hours at the assumed per-step overhead and at :data:`OVERHEAD_FACTORS` times it, against its
    timeout; then a sentence naming the timeouts the upper figures would pass."""
    step = cost_estimate.STEP_OVERHEAD_SECONDS
    lines = [
        f"| notebook | optimizer steps | hours at {step:g} s/step (assumed) | of which overhead | "
        + " | ".join(f"at {f}x ({f * step:g} s/step)" for f in OVERHEAD_FACTORS)
        + " | timeout |",
        "|---|---:|---:|---:|" + "---:|" * len(OVERHEAD_FACTORS) + "---:|",
    ]
    passing = []  # each notebook at the lowest factor that takes it past its timeout
    for nb in costs:
        steps = sum(cost_estimate.optimizer_steps(f.row) * f.row.count for f in nb.fits)
        cells, past = [], None
        for factor in OVERHEAD_FACTORS:
            hours = nb.hours_at_overhead(factor)
            over = nb.timeout is not None and hours * 3600 > nb.timeout
            cells.append(f"**{hours:.1f}**" if over else f"{hours:.1f}")
            if over and past is None:
                past = f"{nb.notebook} at {factor}x ({hours:.1f} h of its {nb.timeout / 3600:g} h)"
        passing += [past] if past else []
        timeout = "none" if nb.timeout is None else f"{nb.timeout / 3600:g} h"
        row = f"| {nb.notebook} | {steps:,} | {nb.hours:.1f} | {nb.overhead_hours:.1f} | {' | '.join(cells)} "
        lines.append(row + f"| {timeout} |")
    said = (
        f"Past their timeouts (bold): {'; '.join(passing)}. Run `stsnb gpu-check` on the server and pass its report "
        "to `--calibration` before submitting those."
        if passing
        else f"No notebook passes its timeout at {OVERHEAD_FACTORS[-1]}x the assumed overhead."
    )
    return "\n".join(lines) + "\n\n" + said


def cost_assumptions(costs: Sequence[NotebookCost], gpu: str) -> list[str]:
    """The assumptions the time and disk tables rest on, printed under them."""
    name, peak = cost_estimate.GPU_TYPES[gpu]
    lines = [
        f"GPU: {name} (--gpu-type {gpu}), dense bf16 peak {peak / 1e12:g} TFLOP/s; model FLOPs utilisation "
        f"{cost_estimate.MFU_LARGE} for 1B+ parameters, {cost_estimate.MFU_SMALL} for the encoders (assumed).",
        "FLOPs per training token: 2 per matmul weight per forward; x3 training every weight (6 N), x2 with a frozen "
        "base (LoRA), +1 forward with gradient checkpointing; a 4-bit base takes "
        f"{cost_estimate.QLORA_SLOWDOWN}x the time (dequantisation); each optimizer step adds "
        f"{cost_estimate.STEP_OVERHEAD_SECONDS:g} s (update, all-reduce, Python loop, collation). Dev evaluation and "
        "test scoring: forward only, on the main process. Not counted: data downloads, bootstrap.",
        f"Writes + loads: last/ at {_interval(cost_estimate.LAST_CHECKPOINT_MINUTES)} and at the end, best.pt at "
        f"{cost_estimate.BEST_WRITE_SHARE:g} of the evaluations (each better score), at "
        f"{cost_estimate.CHECKPOINT_WRITE_BYTES_PER_S / 1e9:g} GB/s (torch.save to a network file system or a busy "
        f"disk); each fit's model weights ({cost_estimate.WEIGHT_FILE_BYTES_LARGE} bytes per parameter from 1B, "
        f"{cost_estimate.WEIGHT_FILE_BYTES_SMALL} below) read at {cost_estimate.MODEL_READ_BYTES_PER_S / 1e9:g} GB/s "
        "(a cold file). Assumed rates, not measured.",
        "Tokens: padded to the longest of a batch, measured on the data folder (95th percentile over random batches) "
        "where it holds the texts ('measured'), else the cap ('cap', an upper bound); a training batch past "
        "SentenceEncoder.forward's chunk budget runs in length-sorted chunks with less padding (an upper side).",
        "Disk: last/ = trainable weights + AdamW's 2 fp32 moments + RNG states + the earlier best.pt its link keeps, "
        "best.pt = trainable weights (fp32), "
        "never a frozen base; a finished fit's last/ keeps only a few KiB, so a notebook holds one unfinished fit's "
        "last/ beside every best.pt, which it keeps in <notebook>/weights/. Notebooks run side by side (--parallel) "
        "add their peaks (the 'all at once' figure).",
        "No estimate here has been compared with a GPU run.",
    ]
    skipped = sorted({m for nb in costs for m in nb.skipped})
    if skipped:
        lines.append(f"Not priced (shape unknown offline): {', '.join(skipped)}.")
    return lines


def _interval(minutes: float) -> str:
    return "every dev evaluation" if minutes <= 0 else f"a dev evaluation at most every {minutes:g} minutes"


def _shape_from_folder(model: str) -> memory_estimate.ModelShape | None:
    """The shape of a packaged or local model from its config.json (no weights loaded); None for a Hub id."""
    from transformers import AutoConfig

    from ..models.loading import KNOWN_MODELS, resolve

    try:
        folder = resolve(model).path if model in KNOWN_MODELS else model
        if not Path(folder).is_dir():
            return None
        return memory_estimate.ModelShape.from_config(AutoConfig.from_pretrained(folder))
    except (OSError, ValueError, KeyError):
        return None
