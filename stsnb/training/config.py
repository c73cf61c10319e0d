"""What a fit is asked (:class:`TrainConfig`) and what it returns (:class:`TrainResult`): the settings and records that
``stsnb.training.train.fit``, its checkpoints and every paper's recipes share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

import torch
from torch import nn

LossFn = Callable[[nn.Module, Any], torch.Tensor]


@runtime_checkable
class ScoredEvaluation(Protocol):
    """What an ``EvalFn`` may return instead of a plain float: its score (``float(...)``) and ``record()``, a JSON-ready
    dict of what it scored (``stsnb.evaluation.evaluate.DevScore``: per dev item the gold score and the prediction).
    ``fit`` keeps the record of its step-0 evaluation and of the one it selects (``TrainResult.dev_start`` /
    ``dev_kept``); the dev gate reads them where selection used every dev pair (``stsnb.evaluation.dev_gates``), and
    ``fit``'s ``gate`` records otherwise."""

    def __float__(self) -> float: ...

    def record(self) -> dict: ...


EvalFn = Callable[[nn.Module], "float | ScoredEvaluation"]


MIXED_PRECISION = ("no", "fp16", "bf16")


class NonFiniteLossError(FloatingPointError):
    """The loss became NaN or infinite; the message says at which step, epoch and batch."""


@dataclass
class TrainConfig:
    epochs: int = 1
    batch_size: int = 16  # per process: the global batch is batch_size x processes
    lr: float = 2e-5
    weight_decay: float = 0.0
    warmup_ratio: float = 0.1  # fraction of optimizer steps with linearly rising LR, then linear decay to 0
    grad_accum: int = 1  # micro-batches per optimizer step (see the module docstring for batch statistics)
    max_grad_norm: float | None = 1.0  # None: no clipping
    max_steps: int | None = None  # stop after this many optimizer steps (None: run all epochs)
    eval_every: int | None = None  # evaluate every N optimizer steps (None: once per epoch)
    eval_at_start: bool = True  # evaluate before the first step too: the untouched model can be the best
    mixed_precision: str = "auto"  # "no", "fp16", "bf16"; "auto": bf16 on a GPU that has it, fp16 on others, no on CPU
    seed: int = 0
    drop_last: bool = False  # drop a short last batch (batch statistics dislike tiny batches)
    checkpoint_dir: str | None = None  # best.pt (trainable weights) and last/ (full state) go here
    resume: bool = False  # continue from checkpoint_dir/last if it exists
    # last/ (the full state: 1.5 GB for BERT-base) at a dev evaluation at most every this many minutes, and always at
    # the end of the fit and on Ctrl-C (one process); 0: at every evaluation. best.pt follows every better score
    last_checkpoint_minutes: float = 10.0
    progress: bool = True  # a progress bar (stsnb.training.progress), silent with False
    label: str = ""  # the bar's name (e.g. "stage 1, seed 0"); "" shows "train"
    schedule_steps_factor: float = 1.0  # the scheduler counts this many times the real steps (official-code quirks)

    def labelled(self, label: str) -> TrainConfig:
        """This config with its progress bar named ``label``, unless it has a name already."""
        from dataclasses import replace

        return self if self.label else replace(self, label=label)


@dataclass
class TrainResult:
    steps: int
    best_score: float | None
    best_step: int | None
    seconds: float
    history: list[dict] = field(default_factory=list)  # one row per logged interval / evaluation
    # the largest |change| of any trainable weight between the start of this call and the weights returned (the
    # selected ones); 0.0 means the returned model is its starting point (``stsnb.evaluation.claims.left_start``)
    weight_change: float | None = None
    # the optimizer step a resumed run continued from (None: it started at step 0 in this call); ``seconds`` then
    # counts only the steps after it, so it is no training time to compare
    resumed_at: int | None = None
    # how far the returned weights moved: the L2 distance between them and the start over every trainable weight,
    # divided by the L2 norm of the start (``relative_change``). ``weight_change`` is no distance: Adam moves each
    # weight by at most about the learning rate per step, and some weight nearly always by that much, so it comes
    # out near the sum of the learning rates over the kept steps whatever the run
    relative_change: float | None = None
    # ``ScoredEvaluation.record()`` of the evaluation before the first step and of the evaluation selection kept (None
    # when the evaluator returned a plain float, or without ``eval_at_start``): what the dev gate's noise bound is read
    # from
    dev_start: dict | None = None
    dev_kept: dict | None = None
    # the records of ``fit``'s ``gate`` (dev items selection never saw) on the start and on the returned weights: what
    # the dev gate asks "did this fit train?" of where the fit had one (``stsnb.evaluation.dev_gates.from_fits``)
    gate_start: dict | None = None
    gate_kept: dict | None = None

    @property
    def selection_evaluations(self) -> int:
        """How many dev evaluations after step 0 selection chose among (the k of "the best of k noisy checkpoints")."""
        return sum(1 for row in self.history if row.get("dev") is not None and (row.get("step") or 0) > 0)

    def to_dict(self) -> dict:
        return asdict(self)
