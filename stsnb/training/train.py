"""One small training loop on ``accelerate``: the same code on CPU, one GPU or several.

- One ``Accelerator`` per process (``accelerator()``), reused by every ``fit`` call; a call that asks for another
  mixed precision in a single-process session rebuilds it (a notebook may switch), several processes cannot.
- Data through a ``DataLoader`` passed to ``accelerator.prepare``: each process gets the same number of batches (the
  last one is completed from the start of the epoch when the data does not divide evenly), so DDP never waits on a
  rank that ran out of data.
- AdamW, ``transformers.get_linear_schedule_with_warmup`` (linear warmup from 0, then linear decay to 0),
  ``accelerate.utils.set_seed`` (Python, NumPy, torch: batch order and dropout repeat for a seed), gradient clipping,
  gradient accumulation that also steps on the last batch of an epoch.
- Dev evaluation (``evaluate(model) -> score``, higher is better) on the main process, before the first step
  (``eval_at_start``: the start can be the best checkpoint), every ``eval_every`` optimizer steps and at the end; the
  score is broadcast so every process keeps the same best weights, restored before ``fit`` returns. An evaluator that
  returns a ``ScoredEvaluation`` (``stsnb.evaluation.evaluate.DevScore``: the score with its per-item gold and
  predictions) has the records of step 0 and of the kept evaluation returned too (``TrainResult.dev_start`` /
  ``dev_kept``): what the dev gate tests the kept gain with.
- Checkpoints: ``checkpoint_dir/best.pt`` (the selected trainable weights, at every better dev score) and
  ``checkpoint_dir/last`` (the state that resumes the fit: the weights that train, the optimizer, the gradient scaler,
  the scheduler, every process's random number generators, the progress and a link to that moment's ``best.pt``;
  never the frozen weights, so a LoRA / QLoRA fit saves its adapter and the adapter's optimizer state, not the 4-bit
  base, whose quantisation state could not be loaded back), each replaced only once completely written; ``resume``
  continues from the last one. ``last`` is written at a dev evaluation at most every ``last_checkpoint_minutes``
  (``checkpoints.LastWrites``; 0: at each one), always at the end, and on Ctrl-C (KeyboardInterrupt) in a
  one-process fit, as of the last finished optimizer step (``_save_on_interrupt``). A finished fit's ``last``
  keeps only what returns it at once (``checkpoints.slim_finished_checkpoint``). Without a ``checkpoint_dir``,
  ``$STSNB_CHECKPOINTS`` (set by ``stsnb run`` for a plan with ``checkpoints: true``) gives every fit a folder of its
  own named by ``run_key``, and ``$STSNB_RESUME=1`` (``stsnb run --resume``) resumes them all: a rerun notebook
  fast-forwards through the fits a killed run finished. The files and the run key are ``stsnb.training.checkpoints``.
  The main process holds ``checkpoint_dir/.lock`` while it writes there (``orphans.checkpoints_locked``): a second
  fit on the folder, such as an orphan of a killed run, fails at once naming the holder's pid.
- A progress bar over the optimizer steps with the latest loss and dev score (``stsnb.training.progress``: a
  ``tqdm.auto`` bar in JupyterLab, plain lines in a batch run), and the fit's pace printed once, from the same bar.

Batch statistics and several processes. Accumulation sums the gradients of ``grad_accum`` micro-batches: that is one
big batch only for losses that are a mean of per-example terms (MSE, Smooth K2, Translated ReLU, cross entropy). A
loss that is a statistic of the whole batch, Pearson's r (Pcc-tuning Eq. 9) or InfoNCE with in-batch negatives
(Eq. 1, 8), is not: keep ``grad_accum=1`` there. Across processes such a loss must see the global batch: in
``loss_fn``, gather the embeddings with ``stsnb.training.distributed.gather_with_grad`` and compute the loss on the
gathered tensors. Every process then computes the same global loss, its backward returns to each process the gradient of
its own examples summed over the processes' copies of the loss (``W`` times the single-process gradient), and DDP's
average over the ``W`` processes gives exactly the gradient of one process on the global batch
(``tests/test_distributed.py`` checks this).

Several GPUs from a notebook: ``stsnb.training.distributed.launch(fn, args, num_processes)``; from a shell:
``accelerate launch --num_processes 4 -m stsnb.training.launch package.module:function '{"json": "kwargs"}'``.
"""

from __future__ import annotations

import functools
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import torch
from torch import nn

from ..models.loading import PRECISION_ENV
from .checkpoints import (
    LastWrites,
    checkpoint_settings,
    describe_loss,
    largest_change,
    last_checkpoint,
    load_training_state,
    relative_change,
    rng_states,
    run_settings,
    save_atomic,
    save_last_checkpoint,
    set_rng_states,
    slim_finished_checkpoint,
    take_up_best,
    trainable_state,
)
from .config import MIXED_PRECISION, EvalFn, LossFn, NonFiniteLossError, ScoredEvaluation, TrainConfig, TrainResult
from .heartbeat import Heartbeat
from .orphans import checkpoints_locked
from .param_groups import default_param_groups
from .progress import Bar, Pace
from .progress import bar as progress_bar


def resolve_mixed_precision(choice: str) -> str:
    """``"auto"``: bf16 on a GPU that has it, fp16 on other GPUs, none on the CPU, unless ``STSNB_PRECISION=bf16``
    (``models.PRECISION_ENV``) asks for bf16 autocast everywhere: the bf16 rehearsal runs a GPU's casting paths on
    the CPU."""
    if choice != "auto":
        if choice not in MIXED_PRECISION:
            raise ValueError(f"mixed_precision must be 'auto', 'no', 'fp16' or 'bf16', got {choice!r}")
        return choice
    if os.environ.get(PRECISION_ENV) == "bf16":
        return "bf16"
    if torch.cuda.is_available():
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "no"


_ACCELERATOR = None


def accelerator(mixed_precision: str = "auto"):
    """This process's ``Accelerator``, created on first use and reused; fp32 on CPU unless asked otherwise."""
    global _ACCELERATOR
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState
    from accelerate.utils import DistributedDataParallelKwargs

    precision = resolve_mixed_precision(mixed_precision)
    if _ACCELERATOR is not None and _ACCELERATOR.mixed_precision == precision:
        return _ACCELERATOR
    if _ACCELERATOR is not None:
        if _ACCELERATOR.num_processes > 1:
            raise ValueError(
                f"this run's processes use mixed_precision={_ACCELERATOR.mixed_precision!r}; a fit() with "
                f"{precision!r} needs a new launch (all fits of a multi-process run share one precision)"
            )
        AcceleratorState._reset_state(reset_partial_state=False)  # one process: a notebook may switch precision
    # DDP must tolerate parameters a forward does not use: encoders carry parts the pooling skips (BERT's pooler
    # under mean pooling), which otherwise stop the second step on several processes. A static graph records the
    # used set once, on the first step, instead of searching the autograd graph every step (find_unused_parameters),
    # and it is what lets gradient checkpointing (Pcc's QLoRA; otherwise "Expected to mark a variable ready only once")
    # run under DDP; every fit here runs one objective, so the used set does not change between steps.
    ddp = DistributedDataParallelKwargs(find_unused_parameters=False, static_graph=True)
    _ACCELERATOR = Accelerator(mixed_precision=precision, cpu=not torch.cuda.is_available(), kwargs_handlers=[ddp])
    return _ACCELERATOR


def _non_finite_ranks(acc, loss: torch.Tensor) -> list[int]:
    """The processes whose loss is NaN or infinite, known to every process (one tiny all-gather per step on several
    processes), so all of them stop together instead of the healthy ones waiting forever in the next collective."""
    bad = not bool(torch.isfinite(loss.detach()).all())
    if acc.num_processes == 1:
        return [0] if bad else []
    flags = acc.gather(torch.tensor([float(bad)], device=loss.device))
    return [rank for rank, flag in enumerate(flags.tolist()) if flag]


class _Indices(torch.utils.data.Dataset):
    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int) -> int:
        return index


def _epoch_loader(n: int, config: TrainConfig, epoch: int, collate: Callable[[list], Any], data: Sequence):
    """Shuffled batches of one epoch (the order depends on seed and epoch only), collated from ``data``."""
    generator = torch.Generator().manual_seed(config.seed * 1_000_003 + epoch)
    return torch.utils.data.DataLoader(
        _Indices(n),
        batch_size=config.batch_size,
        shuffle=True,
        generator=generator,
        drop_last=config.drop_last,
        collate_fn=lambda indices: (list(indices), collate([data[i] for i in indices])),
    )


def _broadcast(acc, value: Any) -> Any:
    """The main process's ``value`` on every process."""
    if acc.num_processes == 1:
        return value
    from accelerate.utils import broadcast_object_list

    return broadcast_object_list([value], from_process=0)[0]


def fit(
    model: nn.Module,
    loss_fn: LossFn,
    train_data: Sequence,
    config: TrainConfig,
    *,
    collate: Callable[[list], Any] = list,
    evaluate: EvalFn | None = None,
    gate: EvalFn | None = None,
    param_groups: list[dict] | None = None,
) -> TrainResult:
    """Train ``model`` on ``train_data`` with ``loss_fn(model, batch) -> scalar``; return the history.

    ``evaluate(model) -> score`` (higher is better, e.g. STS-B dev Spearman) runs on the main process before the
    first step (``eval_at_start``), every ``eval_every`` optimizer steps (else once per epoch) and at the end; the
    best weights are restored into ``model`` before returning, and so is the train/eval mode ``model`` came in with.

    ``gate(model) -> DevScore`` scores dev items selection never sees (``evaluate.gate_evaluator``) on the main
    process, at step 0 and on the weights returned: ``TrainResult.gate_start`` / ``gate_kept``, free of selection's
    best-of-k pick, which the dev gate reads (``stsnb.evaluation.dev_gates``).
    """
    _check_inputs(train_data, config)
    started, was_training = time.perf_counter(), model.training
    run = _start(model, loss_fn, train_data, config, evaluate, param_groups)
    run.gate = gate if evaluate is not None else None
    with checkpoints_locked(run.checkpoints if run.acc.is_main_process else None):  # one writer per folder
        _resume_state(run)
        with _progress_bar(run, loss_fn) as run.bar:  # open until the last evaluation: the dev evaluations show no bars
            run.pace = Pace(run.bar)
            key = run.checkpoints.name if run.checkpoints is not None else None
            run.beat = Heartbeat(run.total, run.state["step"], key) if run.acc.is_main_process else None
            _mark_resumable(run)
            run.model.train()
            try:
                _train_and_evaluate(run, loss_fn, train_data, collate)
            except KeyboardInterrupt:
                _save_on_interrupt(run)
                raise
        unwrapped = _restore_best(run, was_training)
        _gate_kept(run, unwrapped, was_training)
        returned = trainable_state(unwrapped) if run.initial_weights else None
        change = largest_change(run.initial_weights, returned) if returned is not None else None
        relative = relative_change(run.initial_weights, returned) if returned is not None else None
        _write_about(run, loss_fn, len(train_data))
        if run.beat is not None:
            run.beat.update(run.state["step"], run.state["best_score"], done=True)
        slim_finished_checkpoint(run.acc, run.checkpoints if run.state["step"] >= run.total else None)
    run.acc.free_memory()  # the Accelerator outlives this call: let go of this run's model, optimizer and loaders
    state = run.state
    return TrainResult(
        state["step"],
        state["best_score"],
        state["best_step"],
        time.perf_counter() - started,
        state["history"],
        weight_change=change,
        resumed_at=run.resumed_at,
        relative_change=relative,
        dev_start=state.get("dev_start"),
        dev_kept=state.get("dev_kept"),
        gate_start=state.get("gate_start"),
        gate_kept=state.get("gate_kept"),
    )


def _train_and_evaluate(run: _Run, loss_fn: LossFn, train_data: Sequence, collate: Callable[[list], Any]) -> None:
    """The evaluation at the start, the epochs with their evaluations, and the evaluation at the end."""
    config = run.config
    if config.eval_at_start and run.state["step"] == 0 and run.state["evaluated_at"] is None:
        _evaluate_and_select(run)
        _mark_resumable(run)
    for epoch in range(run.state["epoch"], config.epochs):
        if run.state["step"] >= run.total:
            break
        _train_epoch(run, epoch, loss_fn, train_data, collate)
        if run.state["step"] < run.total:  # the epoch ran to its end: the next one starts at its first batch
            run.state["epoch"], run.state["batch"] = epoch + 1, 0
            if not config.eval_every:
                _evaluate_and_select(run)
                _mark_resumable(run)
    if run.loss_count:
        _log_loss(run, run.state["epoch"])
    if run.state["evaluated_at"] != run.state["step"]:
        _evaluate_and_select(run)


# The steps of ``fit``, in the order it calls them. They share one ``_Run``.


def _fresh_state() -> dict[str, Any]:
    """Where a run stands, as ``progress.json`` saves it: the optimizer step, the epoch and the batches of it
    already trained, the best dev score and its step, the step of the latest evaluation, the history rows."""
    return {
        "step": 0,
        "epoch": 0,
        "batch": 0,
        "best_score": None,
        "best_step": None,
        "evaluated_at": None,
        "history": [],
    }


@dataclass
class _Run:
    """One ``fit`` call's moving parts, shared by its steps."""

    acc: Any  # this process's Accelerator
    model: nn.Module  # as ``acc.prepare`` returned it (wrapped for DDP on several processes)
    optimizer: Any
    scheduler: Any  # stepped by hand, once per optimizer step
    config: TrainConfig
    total: int  # the optimizer step the run ends at
    initial_weights: dict[str, torch.Tensor]  # the trainable weights it started from (for ``weight_change``)
    checkpoints: Path | None  # best.pt, last/ and about.json go here (None: no checkpoints)
    resume: bool
    evaluate: EvalFn | None = None
    gate: EvalFn | None = None  # scores held-out dev items at step 0 and on the returned weights (``fit``)
    writes: LastWrites = field(default_factory=lambda: LastWrites(0, 0))  # when last/ is written
    state: dict[str, Any] = field(default_factory=_fresh_state)
    best_weights: dict[str, torch.Tensor] | None = None  # the trainable weights of the best evaluation yet
    resumed_at: int | None = None
    loss_sum: float = 0.0  # the micro-batch losses since the last loss row of the history, and their number
    loss_count: int = 0
    bar: Bar | None = None  # the progress bar over optimizer steps, open for the whole fit
    pace: Pace | None = None  # prints the measured pace once, a few minutes in
    beat: Heartbeat | None = None  # where the fit stands, for stsnb status (the main process)
    # the model, optimizer, scheduler and ``state`` stand at a finished optimizer step (not inside an update or an
    # evaluation), and ``rng`` holds the RNG states of that moment: what ``_save_on_interrupt`` may save
    resumable: bool = False
    rng: dict[str, Any] | None = None


def _check_inputs(train_data: Sequence, config: TrainConfig) -> None:
    """Refuse empty data and batch sizes, accumulation or epochs below 1."""
    if len(train_data) == 0:
        raise ValueError("train_data is empty")
    if config.batch_size < 1 or config.grad_accum < 1 or config.epochs < 1:
        raise ValueError(f"batch_size, grad_accum and epochs must be >= 1, got {config}")


def _total_steps(n: int, config: TrainConfig, processes: int) -> int:
    """The optimizer steps of a run on ``n`` examples: each process's batches of an epoch in groups of ``grad_accum``
    (the last group may be short), times the epochs, at most ``max_steps``."""
    batches_per_epoch = (n // config.batch_size) if config.drop_last else math.ceil(n / config.batch_size)
    per_process = math.ceil(batches_per_epoch / processes)
    if per_process == 0:
        raise ValueError(f"{n} examples make no full batch of {config.batch_size} with drop_last")
    total = math.ceil(per_process / config.grad_accum) * config.epochs
    return total if config.max_steps is None else min(total, config.max_steps)


def _start(
    model: nn.Module,
    loss_fn: LossFn,
    train_data: Sequence,
    config: TrainConfig,
    evaluate: EvalFn | None,
    param_groups: list[dict] | None,
) -> _Run:
    """Everything before the first step: the Accelerator, the seed (before anything draws a random number), AdamW,
    the linear warmup-then-decay schedule, the starting weights, the checkpoint folder, then ``acc.prepare``."""
    from accelerate.utils import set_seed
    from transformers import get_linear_schedule_with_warmup

    acc = accelerator(config.mixed_precision)
    acc.free_memory()  # what an interrupted earlier fit() left registered (else checkpoints would count two models)
    acc.gradient_accumulation_steps = config.grad_accum  # steps on the last batch of an epoch too (prepared loader)
    set_seed(config.seed)
    groups = param_groups if param_groups is not None else default_param_groups(model, config.weight_decay)
    optimizer = torch.optim.AdamW(groups, lr=config.lr)
    total = _total_steps(len(train_data), config, acc.num_processes)
    counted = max(1, round(total * config.schedule_steps_factor))
    scheduler = get_linear_schedule_with_warmup(optimizer, round(config.warmup_ratio * counted), counted)
    # the scheduler is stepped by hand once per optimizer step (prepared, accelerate would step it once per process)
    initial_weights = trainable_state(model)
    checkpoints, resume = checkpoint_settings(model, loss_fn, train_data, config)
    prepared, optimizer = acc.prepare(model, optimizer)
    run = _Run(acc, prepared, optimizer, scheduler, config, total, initial_weights, checkpoints, resume, evaluate)
    run.writes = LastWrites(config.last_checkpoint_minutes, 0)
    return run


def _resume_state(run: _Run) -> None:
    """When resuming and a complete checkpoint exists (``last_checkpoint``): accelerate's state from it (weights,
    optimizer, random number generators; of a finished fit only the RNGs), the scheduler, the progress
    (``run.state``) and the selected weights of that moment (``take_up_best``); ``run.resumed_at`` is the step it
    continues from. Nothing otherwise."""
    last = last_checkpoint(run.checkpoints) if run.checkpoints is not None and run.resume else None
    if last is None:
        return
    state = json.loads((last / "progress.json").read_text())
    if state.pop("finished", False):  # slim_finished_checkpoint: best.pt holds what it returns
        set_rng_states(torch.load(last / f"rng_{run.acc.process_index}.pt", weights_only=False))  # our own file
    else:
        load_training_state(run.acc, run.model, run.optimizer, last)
    run.scheduler.load_state_dict(torch.load(last / "scheduler.pt", weights_only=True))
    run.state = state
    run.resumed_at = run.writes.step = run.state["step"]
    run.best_weights = take_up_best(run.checkpoints, last, run.acc.is_main_process)


def _progress_bar(run: _Run, loss_fn: LossFn | None = None):
    """The bar over the run's optimizer steps from where it stands (``stsnb.training.progress.bar``: a widget in
    JupyterLab, plain lines in a batch run), named by ``config.label`` or else by the loss (``train smooth_k2``);
    silent with ``progress=False`` and on every process but the main one."""
    shown = run.config.progress and run.acc.is_main_process
    name = run.config.label or f"train {loss_name(loss_fn)}".strip()
    return progress_bar(run.total, name, "step", initial=run.state["step"], enabled=shown)


def loss_name(loss_fn: LossFn | None) -> str:
    """A loss function's short name for its bar: ``smooth_k2`` for ``partial(losses.smooth_k2_loss, k=...)``, the
    enclosing function's name for a closure (``stage2`` for ``stage2_loss.<locals>.loss``); "" when it has none."""
    while isinstance(loss_fn, functools.partial):
        loss_fn = loss_fn.func
    name = getattr(loss_fn, "__qualname__", "") or ""
    name = name.split(".<locals>", 1)[0].rsplit(".", 1)[-1]
    return "" if name.startswith("<") else name.removesuffix("_loss").removeprefix("_")


def _train_epoch(run: _Run, epoch: int, loss_fn: LossFn, train_data: Sequence, collate: Callable[[list], Any]) -> None:
    """The batches of one epoch, after those a resumed run already trained, until the epoch or the run ends."""
    acc, state = run.acc, run.state
    loader = acc.prepare(_epoch_loader(len(train_data), run.config, epoch, collate, train_data))
    skip = state["batch"] if epoch == state["epoch"] else 0
    batches = acc.skip_first_batches(loader, skip) if skip else loader
    for index, (examples, batch) in enumerate(batches, start=skip):
        loss = _train_batch(run, loss_fn, batch, _Where(state["step"], epoch, index, loader, examples))
        run.loss_sum += loss.item()
        run.loss_count += 1
        if acc.sync_gradients:  # where the run stands moves on with the optimizer step, not each micro-batch
            state["epoch"], state["batch"] = epoch, index + 1
            _count_step(run, epoch)
            if state["step"] >= run.total:
                return


class _Where(NamedTuple):
    """Where a micro-batch stands, for the messages that stop a run on it."""

    step: int  # the optimizer step it belongs to
    epoch: int
    batch: int
    loader: Any  # the epoch's loader (``len`` is its number of batches)
    examples: list  # the indices of its examples in ``train_data``

    def __str__(self) -> str:
        return f"epoch {self.epoch}, batch {self.batch} of {len(self.loader)}"

    def shown_examples(self) -> str:
        return f"{self.examples[:8]}{'...' if len(self.examples) > 8 else ''}"


def _train_batch(run: _Run, loss_fn: LossFn, batch: Any, where: _Where) -> torch.Tensor:
    """One micro-batch under accelerate's accumulation: the loss (a ``ValueError`` from it is raised again with the
    step and batch), ``_stop_on_nan``, backward, clipping when the gradients sync, and the optimizer step (accelerate
    skips it between syncs). Returns the loss."""
    acc, model = run.acc, run.model
    with acc.accumulate(model):
        try:
            loss = loss_fn(model, batch)
        except ValueError as err:  # e.g. pearson_loss on a batch whose gold scores are all equal
            raise ValueError(
                f"{err} (optimizer step {where.step}, {where}, examples {where.shown_examples()})"
            ) from err
        _stop_on_nan(acc, loss, where)
        acc.backward(loss)
        if acc.sync_gradients and run.config.max_grad_norm is not None:
            acc.clip_grad_norm_(model.parameters(), run.config.max_grad_norm)
        run.resumable = run.resumable and not acc.sync_gradients  # the weights change now, the state after
        run.optimizer.step()
        run.optimizer.zero_grad()
    return loss


def _stop_on_nan(acc, loss: torch.Tensor, where: _Where) -> None:
    """Raise ``NonFiniteLossError`` on every process when the loss is NaN or infinite on any of them, naming the
    processes, the step, the batch and this process's examples."""
    bad_ranks = _non_finite_ranks(acc, loss)
    if bad_ranks:
        raise NonFiniteLossError(
            f"loss is not finite on process {', '.join(map(str, bad_ranks))} of {acc.num_processes} "
            f"(this process: {loss.item()}) at optimizer step {where.step} ({where}, this process's examples "
            f"{where.shown_examples()}); every process stops here"
        )


def _count_step(run: _Run, epoch: int) -> None:
    """After an optimizer step: the scheduler's step, the step count, the progress bar; every ``eval_every`` steps a
    loss row with the learning rate, and ``_evaluate_and_select``."""
    run.scheduler.step()
    run.state["step"] += 1
    run.bar.show(loss=f"{run.loss_sum / run.loss_count:.4f}")
    run.bar.update(1)
    evaluated = bool(run.config.eval_every) and run.state["step"] % run.config.eval_every == 0
    if evaluated:
        _log_loss(run, epoch, lr=run.scheduler.get_last_lr()[0])
        _evaluate_and_select(run)
    if run.beat is not None:
        run.beat.update(run.state["step"], run.state["best_score"], force=evaluated)
    shown = run.pace is not None and run.config.progress and run.acc.is_main_process
    line = run.pace.update(run.state["step"]) if shown else None
    if line:
        print(f"fit: {line}", flush=True)
    _mark_resumable(run)


def _interrupt_saves(run: _Run) -> bool:
    """Whether Ctrl-C saves ``last/``: a fit that checkpoints, on one process (several stop at their own moments,
    and a save on some of them would wait forever for the others)."""
    return run.checkpoints is not None and run.evaluate is not None and run.acc.num_processes == 1


def _mark_resumable(run: _Run) -> None:
    """The run stands at a finished optimizer step: remember this moment's RNG states for ``_save_on_interrupt``."""
    run.rng = rng_states() if _interrupt_saves(run) else None
    run.resumable = True


def _save_on_interrupt(run: _Run) -> None:
    """On Ctrl-C: ``last/`` as of the last finished optimizer step, unless it holds that step already or the
    interrupt came inside an optimizer update or an evaluation (``run.resumable``); the micro-batches of an
    unfinished step are trained again on resume, with the RNG states of the step's start."""
    step = run.state["step"]
    if _interrupt_saves(run) and run.resumable and step != run.writes.step:
        save_last_checkpoint(run.acc, run.model, run.optimizer, run.checkpoints, run.scheduler, run.state, run.rng)
        run.writes.written(step)


def _log_loss(run: _Run, epoch: int, **more: float) -> None:
    """A history row with the mean micro-batch loss since the previous one (and ``more``); the mean starts again."""
    mean = run.loss_sum / run.loss_count
    run.state["history"].append({"step": run.state["step"], "epoch": epoch, "loss": mean, **more})
    run.loss_sum, run.loss_count = 0.0, 0


def _evaluate_and_select(run: _Run) -> None:
    """``evaluate`` on the main process (its score broadcast to the others), a dev row in the history, the weights
    kept when the score beats the best so far (the first one always does), then ``_save_checkpoint``. Nothing
    without an ``evaluate``."""
    if run.evaluate is None:
        return
    run.resumable = False
    state = run.state
    unwrapped = run.acc.unwrap_model(run.model)
    decided = None  # the main process's score, and whether last/ is due: the processes' clocks differ, all must save
    record = None  # the main process's ScoredEvaluation record (what it scored), kept for the dev gate
    if run.acc.is_main_process:
        value = run.evaluate(unwrapped)
        record = value.record() if isinstance(value, ScoredEvaluation) else None
        decided = (float(value), run.writes.due(state["step"], final=state["step"] >= run.total))
    score, write_last = _broadcast(run.acc, decided)
    unwrapped.train()
    state["evaluated_at"] = state["step"]
    state["history"].append({"step": state["step"], "epoch": state["epoch"], "dev": score})
    if state["step"] == 0 and record is not None:
        state["dev_start"] = record
    if state["step"] == 0 and run.gate is not None and run.acc.is_main_process:
        state["gate_start"] = _gate_record(run.gate(unwrapped))
    if run.bar is not None:
        run.bar.show(dev=f"{score:.2f}")
    improved = state["best_score"] is None or score > state["best_score"]
    if improved:
        state["best_score"], state["best_step"] = score, state["step"]
        run.best_weights = trainable_state(unwrapped)
        if record is not None:
            state["dev_kept"] = record
    _save_checkpoint(run, improved, write_last)


def _gate_record(value: Any) -> dict:
    if not isinstance(value, ScoredEvaluation):
        raise TypeError(f"a fit's gate returns a ScoredEvaluation (a DevScore), not {type(value).__name__}")
    return value.record()


def _gate_kept(run: _Run, unwrapped: nn.Module, was_training: bool) -> None:
    """The held-out record of the returned weights (main process): the step-0 one where selection kept step 0."""
    state = run.state
    if run.gate is None or not run.acc.is_main_process or state.get("gate_start") is None:
        return
    state["gate_kept"] = _gate_record(run.gate(unwrapped)) if state["best_step"] else state["gate_start"]
    unwrapped.train(was_training)


def _save_checkpoint(run: _Run, improved: bool, write_last: bool) -> None:
    """With a checkpoint folder: ``best.pt`` (the best weights, by the main process) when the evaluation ``improved``
    on the best, then, when ``write_last``, ``last`` (the full state, every process taking part). Then all processes
    wait for each other."""
    if run.checkpoints is not None:
        if improved and run.acc.is_main_process:
            run.checkpoints.mkdir(parents=True, exist_ok=True)
            save_atomic(run.best_weights, run.checkpoints / "best.pt")
        if write_last:
            save_last_checkpoint(run.acc, run.model, run.optimizer, run.checkpoints, run.scheduler, run.state)
            run.writes.written(run.state["step"])
    run.acc.wait_for_everyone()


def _restore_best(run: _Run, was_training: bool) -> nn.Module:
    """The unwrapped model with the selected weights loaded (when an evaluation selected some) and its mode back to
    ``was_training``."""
    unwrapped = run.acc.unwrap_model(run.model)
    if run.best_weights is not None:
        unwrapped.load_state_dict(run.best_weights, strict=False)
    unwrapped.train(was_training)
    return unwrapped


def _write_about(run: _Run, loss_fn: LossFn, examples: int) -> None:
    """``about.json`` in the checkpoint folder (main process): the loss, the number of examples, the settings, the
    last and best steps, the best score and the step a resumed run continued from."""
    if run.checkpoints is None or not run.acc.is_main_process:
        return
    run.checkpoints.mkdir(parents=True, exist_ok=True)
    about = {
        "loss": describe_loss(loss_fn),
        "examples": examples,
        "config": run_settings(run.config),
        **{k: run.state[k] for k in ("step", "best_step", "best_score")},
        "resumed_at": run.resumed_at,
    }
    (run.checkpoints / "about.json").write_text(json.dumps(about, indent=1, default=str))
