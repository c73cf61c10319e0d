"""Wall time and checkpoint disk of a plan's training fits, estimated before anything runs (``stsnb run --check``).

Each training notebook lists the fits it runs with given parameters through its paper's ``costs.fit_plan``
(registered in the entry-point group ``stsnb.fit_plans``, as the memory plans are): one :class:`FitRow` per group
of identical fits. This module prices them; nothing here has been compared with a GPU run.

- **FLOPs**: a forward pass costs 2 FLOPs per matmul weight and token (``ModelShape.linear_parameters``: embeddings
  are lookups, and the LM head is never run) plus attention's 4 x layers x length x hidden per token. Training every
  weight costs 3 forward passes (forward, and a backward of twice its cost: gradients of the inputs and of the
  weights), the usual 6 x parameters x tokens; a frozen base (LoRA, QLoRA) skips the weight gradients of the frozen
  weights: 2 passes (4 x); gradient checkpointing adds one more forward (8 x, or 6 x with LoRA). A head-only fit
  (a frozen encoder, STS-Regression's stage 1) encodes its sentences once, forward only.
- **Throughput**: the GPU's dense bf16 peak (:data:`GPU_TYPES`, the vendors' figures without sparsity) x a model
  FLOPs utilisation (MFU): :data:`MFU_LARGE` for a model of 1B+ parameters, :data:`MFU_SMALL` for the encoders
  (hidden size 768-1024 and sequences of 30-60 tokens keep the matmuls small, and tokenisation, the Python loop and
  the kernel launches weigh more; both are assumptions, not measurements). A 4-bit base costs :data:`QLORA_SLOWDOWN`
  x the time (bitsandbytes dequantises every NF4 weight at each matmul). Training is divided over the fit's
  processes; dev evaluation and test scoring run on the main process alone (``stsnb.training.train.fit``; the notebooks
  score on the main process), at 16 bits (a 4-bit run is scored on its 16-bit copy; its dev evaluations keep the 4-bit
  slowdown). Each optimizer step of an encoder or adapter adds :data:`STEP_OVERHEAD_SECONDS` (the update, the
  all-reduce, the Python loop, collating and tokenising the batch: what makes a BERT-base step at 16 pairs take
  tens of milliseconds, not the few its FLOPs need). Not counted: the bootstrap, data downloads.
- **Checkpoint writes and model loads**: a checkpointing fit writes ``last/`` at a dev evaluation at most every
  :data:`LAST_CHECKPOINT_MINUTES` (``TrainConfig.last_checkpoint_minutes``) and at the end, and ``best.pt`` at each
  better dev score (:data:`BEST_WRITE_SHARE` of the evaluations), each at :data:`CHECKPOINT_WRITE_BYTES_PER_S`; every
  fit that computes loads its model's weights (:data:`WEIGHT_FILE_BYTES_LARGE` or :data:`WEIGHT_FILE_BYTES_SMALL` per
  parameter) at :data:`MODEL_READ_BYTES_PER_S`. Written at every evaluation, as before the interval, notebook 20's
  ``last/`` took about 1.6 GiB every 16 s of training on the paper plan.
- **Disk** (``stsnb.training.train``): a checkpointing fit holds ``last/`` (its trainable weights in fp32, AdamW's two
  fp32 moments, each process's RNG states, scheduler and progress: :data:`SMALL_FILES_BYTES`, and a hard link to the
  ``best.pt`` of its moment, which keeps one more copy of the trainable weights once a better score replaced
  ``best.pt``) and ``best.pt`` (the trainable weights) while it trains; once it finishes, ``last/`` keeps only the
  few KiB a resume needs to return it at once (``checkpoints.slim_finished_checkpoint``), so a notebook holds one
  unfinished fit's state beside every fit's ``best.pt``, which ``stsnb.runs.execution.keep_selected_weights`` keeps
  in ``<notebook>/weights/`` when the notebook succeeds. The frozen base of a LoRA fit is never saved. A fit without
  dev evaluation writes no checkpoint.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..training import batching
from ..training.config import TrainConfig
from .memory_estimate import ModelShape

# dense bf16 tensor-core peaks (FLOP/s, no sparsity) from the vendors' data sheets
GPU_TYPES: dict[str, tuple[str, float]] = {
    "a100-80gb": ("NVIDIA A100 80GB SXM", 312e12),
    "h100-sxm": ("NVIDIA H100 SXM", 989e12),
    "h200": ("NVIDIA H200 SXM", 989e12),  # H100's compute with more and faster memory
    "l40s": ("NVIDIA L40S", 362e12),
    "rtx-4090": ("GeForce RTX 4090 (fp32 accumulate)", 165e12),
    "a6000": ("RTX A6000", 155e12),
}
DEFAULT_GPU = "a100-80gb"
MFU_LARGE = 0.35  # a 7B model at batches of 200+ sequences
MFU_SMALL = 0.20  # encoders of 110M-355M parameters on short sequences
LARGE_MODEL = 1e9  # parameters from which MFU_LARGE applies
QLORA_SLOWDOWN = 1.3  # time factor of a 4-bit base (dequantisation at each matmul), not measured here
STEP_OVERHEAD_SECONDS = 0.05  # per optimizer step: AdamW's update, DDP's all-reduce, the Python loop, collation
SMALL_FILES_BYTES = 64 * 1024  # RNG states per process, scheduler.pt, progress.json: a few KiB each
TRAINABLE_BYTES = 4  # the trainable weights and each AdamW moment are fp32
TIMEOUT_SAFETY = 2.0  # the paper plan's timeouts: this x the estimate on 4 A100-80GB, rounded up to whole hours
# torch.save of a fit's fp32 state: a local NVMe SSD takes 1-3 GB/s, a cluster's network file system 0.2-1 GB/s, and
# the pickling runs on one CPU core; the slow end, assumed (not measured)
CHECKPOINT_WRITE_BYTES_PER_S = 0.5e9
# a model's weights read at the start of a fit: a cold file on a network file system or disk (the page cache makes
# later reads of the same file faster), then the copy to the GPU; assumed, an upper bound on a warm server
MODEL_READ_BYTES_PER_S = 0.5e9
WEIGHT_FILE_BYTES_LARGE = 2  # per parameter on disk: the 7B decoders ship bf16 weights (a 4-bit base too: NF4 on load)
WEIGHT_FILE_BYTES_SMALL = 4  # per parameter on disk: the Hub's BERT / RoBERTa-sized encoders ship fp32 weights
# best.pt is written at each better dev score: most evaluations of the first part of a fit, fewer later (assumed)
BEST_WRITE_SHARE = 0.5
LAST_CHECKPOINT_MINUTES = TrainConfig().last_checkpoint_minutes  # what every notebook's fits use (the default)

Trainable = Literal["full", "lora", "head", "none"]


@dataclass(frozen=True)
class FitRow:
    """A group of ``count`` identical fits of a notebook, as its paper's ``costs.fit_plan`` lists them."""

    label: str
    model: str
    count: int
    examples: int  # training examples per epoch (0: a scoring-only row)
    epochs: float
    sequences_per_example: int  # sequences through the encoder per example (a pair 2, a triplet 3)
    tokens: int  # padded tokens per sequence
    tokens_measured: bool  # True: measured on the data folder; False: the cap (an upper bound)
    global_batch: int  # examples per optimizer step, all processes and accumulation steps together
    batch_level: bool  # the loss is a statistic of the batch (InfoNCE, Pearson): no accumulation
    trainable: Trainable = "full"
    lora_r: int = 64
    frozen_parameters: int = 0  # "full": parameters that do not train (a frozen token embedding)
    head_parameters: int = 0  # "head": the head that trains on cached embeddings
    quantize_4bit: bool = False
    gradient_checkpointing: bool = False
    multi_process: bool = False  # trains on the notebook's num_processes; False: the kernel's one process
    accumulation: int = 1  # accumulation steps the notebook sets itself (its grad_accum)
    forward_only_sequences: int = 0  # per example, without backward (ESimCSE's momentum encoder)
    dev_evaluations: int = 0  # per fit
    dev_sequences: int = 0  # per dev evaluation
    test_sequences: int = 0  # scored once per fit (distinct sentences of the test sets, probes)
    eval_tokens: int | None = None  # padded tokens per scored sequence (None: ``tokens``)
    checkpoints: bool = True  # False: no dev evaluation, so ``train.fit`` writes no checkpoint


FitPlan = Callable[[Mapping[str, Any]], list[FitRow]]


@dataclass(frozen=True)
class FitCost:
    """One row priced on a GPU type: its batch split, FLOPs, hours and checkpoint bytes (per fit and for the row)."""

    notebook: str
    row: FitRow
    split: batching.BatchSplit
    trainable_parameters: int
    train_flops: float  # per fit
    eval_flops: float  # per fit: dev evaluations and test scoring
    hours: float  # all ``row.count`` fits
    last_bytes: float  # per fit: last/
    best_bytes: float  # per fit: best.pt, which the notebook keeps
    last_writes: int = 0  # per fit: last/ written (the interval's and the end's)
    write_hours: float = 0.0  # all ``row.count`` fits: writing last/ and best.pt (included in ``hours``)
    load_hours: float = 0.0  # all ``row.count`` fits: reading the model's weights (included in ``hours``)
    # the other terms of ``hours``, all ``row.count`` fits: training FLOPs, the per-step overhead, evaluation FLOPs
    compute_hours: float = 0.0
    overhead_hours: float = 0.0
    eval_hours: float = 0.0

    def terms(self) -> dict[str, float]:
        """``hours`` by term: what ``stsnb run --check --calibration`` scales, each by its own measured ratio."""
        return {
            "compute": self.compute_hours,
            "overhead": self.overhead_hours,
            "evaluation": self.eval_hours,
            "io": self.write_hours + self.load_hours,
        }

    def scaled(self, ratios: Mapping[str, float]) -> FitCost:
        """This cost with each term of :meth:`terms` times ``ratios[term]`` (1 where absent)."""
        from dataclasses import replace

        r = {term: float(ratios.get(term, 1.0)) for term in ("compute", "overhead", "evaluation", "io")}
        compute, overhead = self.compute_hours * r["compute"], self.overhead_hours * r["overhead"]
        evaluation, writes, loads = (
            self.eval_hours * r["evaluation"],
            self.write_hours * r["io"],
            self.load_hours * r["io"],
        )
        hours = compute + overhead + evaluation + writes + loads
        return replace(self, hours=hours, compute_hours=compute, overhead_hours=overhead, eval_hours=evaluation,
                       write_hours=writes, load_hours=loads)  # fmt: skip

    @property
    def peak_bytes(self) -> float:
        """The most the row's fits hold at once: every ``best.pt`` and one unfinished fit's ``last/`` (a finished
        fit keeps ``best.pt`` and a few KiB, ``checkpoints.slim_finished_checkpoint``)."""
        return self.last_bytes + self.row.count * self.best_bytes if self.best_bytes else 0.0

    @property
    def kept_bytes(self) -> float:
        return self.row.count * self.best_bytes


def fit_plan_hook(notebook: str) -> FitPlan | None:
    """The function registered for ``notebook`` in the entry-point group ``stsnb.fit_plans`` (None: none)."""
    from importlib.metadata import entry_points

    for entry in entry_points(group="stsnb.fit_plans"):
        if entry.name == notebook:
            return entry.load()
    return None


def forward_flops_per_token(shape: ModelShape, length: int) -> float:
    """The matmuls of one token's forward pass: 2 per weight, plus attention's scores and weighted sum."""
    return 2.0 * shape.linear_parameters() + 4.0 * shape.layers * length * shape.hidden


def passes(row: FitRow) -> float:
    """Forward-pass equivalents of one training token (module docstring)."""
    if row.trainable in ("head", "none"):
        return 1.0
    base = 3.0 if row.trainable == "full" else 2.0
    return base + (1.0 if row.gradient_checkpointing else 0.0)


def trainable_parameters(shape: ModelShape, row: FitRow) -> int:
    if row.trainable == "lora":
        return shape.lora_parameters(row.lora_r)
    if row.trainable == "head":
        return row.head_parameters
    if row.trainable == "none":
        return 0
    return shape.parameters() - row.frozen_parameters


def train_flops(shape: ModelShape, row: FitRow) -> float:
    """One fit's training FLOPs (a head-only fit: one forward over its sentences, the head's own cost ignored)."""
    epochs = 1.0 if row.trainable == "head" else row.epochs
    tokens = row.examples * epochs * row.tokens
    per_token = forward_flops_per_token(shape, row.tokens)
    return tokens * per_token * (row.sequences_per_example * passes(row) + row.forward_only_sequences)


def eval_flops(shape: ModelShape, row: FitRow) -> float:
    """One fit's dev evaluations and test scoring: forward passes only."""
    length = row.eval_tokens or row.tokens
    sequences = row.dev_evaluations * row.dev_sequences + row.test_sequences
    return sequences * length * forward_flops_per_token(shape, length)


def mfu(shape: ModelShape) -> float:
    return MFU_LARGE if shape.parameters() >= LARGE_MODEL else MFU_SMALL


def split(row: FitRow, processes: int) -> batching.BatchSplit:
    """``row.global_batch`` over ``processes`` (``batching.split_batch``), after the notebook's own accumulation."""
    processes = processes if row.multi_process else 1
    micro = row.global_batch // max(1, row.accumulation)
    share = batching.split_batch(micro, processes, batch_level=row.batch_level)
    return batching.BatchSplit(row.global_batch, processes, share.per_process, row.accumulation * share.accumulation)


def fit_cost(notebook: str, row: FitRow, shape: ModelShape, processes: int, gpu: str = DEFAULT_GPU) -> FitCost:
    """``row`` priced on ``processes`` GPUs of type ``gpu`` (a key of :data:`GPU_TYPES`)."""
    share = split(row, processes) if row.global_batch else batching.BatchSplit(0, 1, 0)
    throughput = GPU_TYPES[gpu][1] * mfu(shape)
    slow = QLORA_SLOWDOWN if row.quantize_4bit else 1.0
    training, evaluating = train_flops(shape, row), eval_flops(shape, row)
    dev = row.dev_evaluations * row.dev_sequences
    dev_share = dev / max(1, dev + row.test_sequences)
    compute = training * slow / (share.processes * throughput)
    overhead = optimizer_steps(row) * STEP_OVERHEAD_SECONDS
    evaluation = evaluating * (dev_share * slow + (1 - dev_share)) / throughput
    seconds = compute + overhead + evaluation
    trainable = trainable_parameters(shape, row)
    saves = row.checkpoints and row.trainable != "none" and row.examples > 0
    weights = trainable * TRAINABLE_BYTES if saves else 0.0
    # the weights and AdamW's 2 moments, the RNG states, and the earlier best.pt that last/best.pt may keep alive
    last = 4 * weights + SMALL_FILES_BYTES * share.processes if saves else 0.0
    writes = last_writes(row, seconds) if saves else 0
    best_writes = max(1.0, BEST_WRITE_SHARE * row.dev_evaluations) if saves else 0.0
    written = last - weights  # last/best.pt is a link: no bytes written
    writing = (writes * written + best_writes * weights) / CHECKPOINT_WRITE_BYTES_PER_S
    loading = weight_file_bytes(shape) / MODEL_READ_BYTES_PER_S if training or evaluating else 0.0
    hours = row.count * (seconds + writing + loading) / 3600
    per_hour = row.count / 3600
    return FitCost(notebook, row, share, trainable, training, evaluating, hours, last, weights, writes,
                   writing * per_hour, loading * per_hour, compute * per_hour, overhead * per_hour,
                   evaluation * per_hour)  # fmt: skip


def last_writes(row: FitRow, seconds: float, minutes: float | None = None) -> int:
    """``last/`` writes of one fit of ``seconds`` (its compute): one at a dev evaluation every ``minutes`` (default
    :data:`LAST_CHECKPOINT_MINUTES`; at most one per evaluation but the last; 0: every one), and one at the end
    (``train.fit``)."""
    minutes = LAST_CHECKPOINT_MINUTES if minutes is None else minutes
    others = max(0, row.dev_evaluations - 1)
    return 1 + (others if minutes <= 0 else min(others, int(seconds // (60 * minutes))))


def weight_file_bytes(shape: ModelShape) -> float:
    """The bytes of a model's weight files (:data:`WEIGHT_FILE_BYTES_LARGE` per parameter from 1B, else
    :data:`WEIGHT_FILE_BYTES_SMALL`)."""
    per = WEIGHT_FILE_BYTES_LARGE if shape.parameters() >= LARGE_MODEL else WEIGHT_FILE_BYTES_SMALL
    return float(per * shape.parameters())


def optimizer_steps(row: FitRow) -> int:
    """Optimizer steps of one fit (0 for a head on cached embeddings or a scoring row: their steps are cheap)."""
    if row.trainable in ("head", "none") or not row.examples or not row.global_batch:
        return 0
    return math.ceil(row.examples / row.global_batch) * math.ceil(row.epochs)


def global_batches(rows: Sequence[FitRow]) -> list[int]:
    """The global batches of the fits that run on the notebook's processes (what ``"auto"`` must divide)."""
    return sorted({r.global_batch for r in rows if r.multi_process and r.global_batch})


def processes_for(num_processes: int | str, rows: Sequence[FitRow], gpus: int | None) -> int:
    """The processes a notebook's fits use: ``batching.resolve_processes`` on its multi-process fits' batches."""
    return batching.resolve_processes(num_processes, global_batches(rows) or [1], gpus)


def timeout_for(hours: float, safety: float = TIMEOUT_SAFETY) -> int:
    """A plan timeout in seconds: ``safety`` x the estimate, rounded up to whole hours (at least one)."""
    return 3600 * max(1, math.ceil(hours * safety))


def gib(n: float) -> str:
    """Bytes as GiB (MiB under 1 GiB) for the tables."""
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def count(n: float) -> str:
    """An example or FLOP count in k, M, G, P."""
    for unit, size in (("E", 1e18), ("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.3g}{unit}"
    return f"{n:.3g}"


STS_TEST_PAIRS = 18_850  # STS12-16, STS-B test and SICK-R test (every pair; each has two sentences)
STSB_DEV_PAIRS = 1_500


@functools.lru_cache(maxsize=8)
def sts_test_sentences(max_pairs: int | None) -> tuple[int, bool]:
    """Sentences one scoring of the seven STS test sets encodes (``stsnb.evaluation.evaluate`` encodes each distinct
    sentence once): the distinct sentences measured on the data folder, ``(count, True)``; without one, two per pair
    ``(count, False)``. ``max_pairs``: at most that many pairs per task (an upper bound: 2 sentences each)."""
    from .. import data as data

    if max_pairs is not None:
        return 2 * 7 * int(max_pairs), False
    try:
        pairs = data.seven_test_sets("senteval")
    except (data.DataError, OSError):
        return 2 * STS_TEST_PAIRS, False
    return len({s for p in pairs for s in (p.sent1, p.sent2)}), True


def dev_sentences(dev_pairs: int | None) -> int:
    """Sentences of one STS-B dev evaluation (uncached: two per pair)."""
    return 2 * int(dev_pairs if dev_pairs is not None else STSB_DEV_PAIRS)


def evaluations(
    examples: int, global_batch: int, epochs: float, eval_every: int | None, drop_last: bool = False
) -> int:
    """Dev evaluations of one ``train.fit``: before the first step, every ``eval_every`` optimizer steps (else after
    each epoch) and at the end (when the last step is not already one)."""
    per_epoch = examples // global_batch if drop_last else math.ceil(examples / max(1, global_batch))
    steps = max(1, int(per_epoch * epochs))
    if not eval_every:
        return 1 + max(1, math.ceil(epochs))
    return 1 + steps // eval_every + (1 if steps % eval_every else 0)
