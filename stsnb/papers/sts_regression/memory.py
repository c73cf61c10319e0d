"""Peak memory of a few training steps, each measured in a fresh process (STS-Regression Section 4.3, Table 4).

Two methods at a given batch size and cutoff length, on real SNLI sentences padded to exactly ``max_length``
tokens (the official scripts pad to ``max_length``, so the cutoff is the sequence length):

- ``"regression"``: ours. Both sentences of each pair through the shared encoder, the head on ``(u, v, |u-v|)``,
  Smooth K2 (Section 3.1): ``2 x batch`` sequences per step.
- ``"infonce"``: supervised SimCSE. Anchor, entailment and contradiction through the encoder, InfoNCE with
  in-batch and hard negatives (Eq. 3; SimCSE's Table 4 setting): ``3 x batch`` sequences per step.

What is measured (``stsnb.gpu.memory.PeakMemory``), after loading the model and one tiny warm-up step (see
``train_steps``): on a GPU the tensors' peak during training, on a CPU the peak resident set size during training,
each minus the figure before training. A fresh process per run keeps one run's peak out of the next.

Run one measurement by hand:
``python -m stsnb.gpu.memory stsnb.papers.sts_regression.memory:train_steps '{"method": "regression"}'``.

``memory_plan`` is notebook 20's estimate for ``stsnb run --check`` (``stsnb.gpu.plan_check``), nothing measured: what
each training setting holds on one GPU, every sequence padded to ``max_length`` as the official code pads it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from ... import data as stsdata
from ...gpu import memory
from ...gpu.memory_estimate import TrainingSetup
from ...gpu.plan_check import MemoryPlanRow, activation_bytes
from ...training import losses
from ...training.batching import split_batch
from .backbones import load_backbone
from .model import SiameseModel
from .reported import REPORTED

Method = Literal["regression", "infonce"]
METHODS: tuple[Method, ...] = ("regression", "infonce")


@dataclass(frozen=True)
class MemoryRun:
    method: Method
    model: str = "minilm-l6"
    batch_size: int = 16
    max_length: int = 256
    steps: int = 2


@dataclass(frozen=True)
class MemoryReport:
    run: MemoryRun
    device: str
    measure: str  # what peak_bytes is: peak RSS during training (CPU) or cuda max_memory_allocated (GPU)
    baseline_bytes: int  # after loading the model, before training
    peak_bytes: int
    sequences_per_step: int

    @property
    def training_bytes(self) -> int:
        return self.peak_bytes - self.baseline_bytes

    def row(self) -> dict:
        return {
            **asdict(self.run),
            "device": self.device,
            "measure": self.measure,
            "sequences_per_step": self.sequences_per_step,
            "baseline_mb": self.baseline_bytes / 2**20,
            "peak_mb": self.peak_bytes / 2**20,
            "training_mb": self.training_bytes / 2**20,
        }

    def line(self, seconds: float) -> str:
        """The printed line of one run: sequences per step, the peak and what training added (MiB), the time."""
        run = self.run
        return (
            f"{run.method:<10} batch {run.batch_size:>4} length {run.max_length:>4}: {self.sequences_per_step:>4} "
            f"sequences/step, {self.measure} {self.peak_bytes / 2**20:8.0f} MiB (added by training "
            f"{self.training_bytes / 2**20:6.0f} MiB)  [{seconds:.0f} s]"
        )


def measure(run: MemoryRun, timeout: float = 900.0) -> MemoryReport:
    """Run ``run`` in a fresh Python process and return its memory figures."""
    if run.method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {run.method!r}")
    result = memory.measure_in_fresh_process(f"{__name__}:train_steps", asdict(run), timeout)
    return MemoryReport(
        run,
        result["device"],
        result["measure"],
        result["baseline_bytes"],
        result["peak_bytes"],
        result["sequences_per_step"],
    )


SANITY_CHECK = "Table 4: three InfoNCE towers add more training memory than two regression towers"


def _ours(rows: Sequence[dict]) -> dict | None:
    return next((r for r in rows if r["method"] == "regression"), None)


def infonce_ratios(rows: Sequence[dict]) -> list[str]:
    """Each InfoNCE row's training memory over ours (the first regression row), stored in the row as
    ``ratio_added_vs_ours``; returns one printed line per ratio (none without a regression row)."""
    ours = _ours(rows)
    lines = []
    for r in rows:
        if ours is not None and r["method"] == "infonce":
            r["ratio_added_vs_ours"] = ratio = r["training_mb"] / max(ours["training_mb"], 1e-9)
            lines.append(
                f"InfoNCE (batch {r['batch_size']}, length {r['max_length']}) / ours (batch {ours['batch_size']}, "
                f"length {ours['max_length']}): {ratio:.2f}x the memory added by training"
            )
    return lines


def paper_ratios() -> list[str]:
    """Table 4's own ratio, SimCSE's peak memory over ours, for BERT and RoBERTa (printed from ``REPORTED``)."""
    lines = []
    for model_name in ("BERT", "RoBERTa"):
        simcse = REPORTED.value("Table 4", f"{model_name} SimCSE len 100", "peak_memory_gb")
        ours_gb = REPORTED.value("Table 4", f"{model_name} Ours len 256", "peak_memory_gb")
        lines.append(f"paper, {model_name}: SimCSE {simcse:.2f} GB / ours {ours_gb:.2f} GB = {simcse / ours_gb:.2f}x")
    return lines


def sanity_checks(rows: Sequence[dict]) -> tuple[dict[str, str], str | None]:
    """The sanity check of Section 4 of the notebook: at the same batch and cutoff length, InfoNCE's three towers
    add more training memory than our two. Returns ``{check: "passed" | "failed"}`` (empty when no InfoNCE run
    shares ours's batch and length) and its printed line (None then)."""
    ours = _ours(rows)
    same_setting = [
        r
        for r in rows
        if r["method"] == "infonce"
        and ours is not None
        and (r["batch_size"], r["max_length"]) == (ours["batch_size"], ours["max_length"])
    ]
    if not same_setting:
        return {}, None
    passed = same_setting[0]["training_mb"] > ours["training_mb"]
    line = (
        f"sanity check, same batch and length: {'passed' if passed else 'FAILED'} "
        f"({same_setting[0]['training_mb']:.0f} vs {ours['training_mb']:.0f} MiB added)"
    )
    return {SANITY_CHECK: "passed" if passed else "failed"}, line


def train_steps(**run_fields) -> dict:
    """The child process: load, one tiny warm-up step, record the baseline, train ``steps`` steps, record the peak.

    The warm-up step (2 examples, 8 tokens) pays the one-time costs both methods share (library initialisation,
    the AdamW state) before the baseline, so that ``peak - baseline`` is what the batch itself needs.
    """
    import torch

    run = MemoryRun(**run_fields)
    encoder = load_backbone(run.model, run.max_length)
    cuda = encoder.device.type == "cuda"
    triplets = stsdata.nli_triplets(list(stsdata.load_snli("dev")))[: run.batch_size * run.steps]
    if len(triplets) < run.batch_size * run.steps:
        raise ValueError(f"not enough SNLI triplets for {run.steps} steps of {run.batch_size}")
    model = SiameseModel(encoder) if run.method == "regression" else encoder
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    model.train()

    def step(batch: list, length: int) -> int:
        """One optimizer step of the method on ``batch``, inputs padded to ``length`` tokens; returns #sequences."""
        columns = [[t.anchor for t in batch], [t.positive for t in batch]]
        if run.method == "infonce":
            columns.append([t.negative for t in batch])
        sentences = [s for column in columns for s in column]
        features = encoder.tokenizer(
            encoder.prepare(sentences), padding="max_length", truncation=True, max_length=length, return_tensors="pt"
        )
        out = encoder.embed({k: features[k].to(encoder.device) for k in ("input_ids", "attention_mask")})
        n = len(batch)
        if run.method == "regression":
            pred = model.score(out[:n], out[n:])
            loss = losses.smooth_k2(pred, torch.full_like(pred, 2.0), k=2.0, x0=0.25)
        else:
            loss = losses.info_nce(out[:n], out[n : 2 * n], out[2 * n :], temperature=0.05)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return len(sentences)

    step(triplets[:2], 8)
    per_step = 0
    with memory.PeakMemory(cuda) as peak:
        for index in range(run.steps):
            per_step = step(triplets[index * run.batch_size : (index + 1) * run.batch_size], run.max_length)
    return {
        "device": str(encoder.device),
        "measure": peak.measure,
        "baseline_bytes": int(peak.baseline_bytes),
        "peak_bytes": int(peak.peak_bytes),
        "sequences_per_step": per_step,
    }


def memory_plan(params: Mapping[str, Any]) -> list[MemoryPlanRow]:
    """Table 1: both sentences of each pair through the encoder, padded to ``max_length`` (the official code pads
    so; ours pads to the batch's longest, so this is an upper bound); the contrastive backbones' stage 2 likewise.
    A GPU holds its share of the global batch (``stsnb.training.batching``: ``batch_size`` over ``num_processes``, which
    ``stsnb.gpu.plan_check`` has resolved to a count, in ``grad_accum`` micro-batches)."""
    length = int(params.get("max_length", 256))
    processes = int(params.get("num_processes", 1))
    accumulation = int(params.get("grad_accum", 1))
    common = dict(
        activation_bytes=activation_bytes(params),
        dropout=0.1,
        gradient_checkpointing=bool(params.get("gradient_checkpointing", False)),
    )

    def sequences(global_batch: Any) -> int:
        """Two sentences per pair of one process's micro-batch."""
        return 2 * split_batch(int(global_batch), processes, batch_level=False, accumulation=accumulation).per_process

    rows = [
        ("Table 1", str(b), TrainingSetup(sequences(params.get("batch_size", 16)), length, **common))
        for b in params.get("backbones") or []
    ]
    rows += [
        ("Table 3 stage 2", str(b), TrainingSetup(sequences(params.get("stage2_batch_size", 16)), length, **common))
        for b in params.get("contrastive_backbones") or []
    ]
    return rows
