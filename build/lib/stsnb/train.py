"""One small training loop on ``accelerate``: the same code on CPU, one GPU or several.

AdamW, linear warmup then linear decay, gradient accumulation, gradient clipping, mixed precision where the
hardware has it, evaluation on a dev set every N optimizer steps keeping the best weights, resume from the
last checkpoint, progress bars (``tqdm.auto``; quiet when ``TQDM_DISABLE=1``, which the batch runner sets).

Gradient accumulation and batch statistics: accumulation sums the gradients of ``grad_accum`` micro-batches.
That equals one big batch only for losses that are a mean of per-example terms (MSE, Smooth K2, Translated
ReLU, cross entropy). For a loss that is a statistic of the whole batch, such as Pearson's r (Pcc-tuning
Eq. 9) or InfoNCE with in-batch negatives (Eq. 1, 8), accumulating k micro-batches of size b optimizes the
mean of k correlations / k softmaxes over b examples each, not one over k*b: fewer negatives, noisier r.
Set ``batch_size`` to the batch the paper means and keep ``grad_accum=1`` there when memory allows.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

LossFn = Callable[[nn.Module, Any], torch.Tensor]
EvalFn = Callable[[nn.Module], float]


class NonFiniteLossError(FloatingPointError):
    """The loss became NaN or infinite; the message says at which step, epoch and batch."""


@dataclass
class TrainConfig:
    epochs: int = 1
    batch_size: int = 16
    lr: float = 2e-5
    weight_decay: float = 0.0
    warmup_ratio: float = 0.1  # fraction of optimizer steps with linearly rising LR, then linear decay to 0
    grad_accum: int = 1  # micro-batches per optimizer step (see the module docstring for batch statistics)
    max_grad_norm: float | None = 1.0  # None: no clipping
    max_steps: int | None = None  # stop after this many optimizer steps (None: run all epochs)
    eval_every: int | None = None  # evaluate every N optimizer steps (None: once per epoch)
    mixed_precision: str = "auto"  # "no", "fp16", "bf16"; "auto": bf16 on a GPU that has it, else "no"
    seed: int = 0
    drop_last: bool = False  # drop a short last batch (batch statistics dislike tiny batches)
    checkpoint_dir: str | None = None  # best.pt (trainable weights) and last/ (full state) go here
    resume: bool = False  # continue from checkpoint_dir/last if it exists
    progress: bool = True


@dataclass
class TrainResult:
    steps: int
    best_score: float | None
    best_step: int | None
    seconds: float
    history: list[dict] = field(default_factory=list)  # one row per logged interval / evaluation

    def to_dict(self) -> dict:
        return asdict(self)


def resolve_mixed_precision(choice: str) -> str:
    if choice != "auto":
        if choice not in ("no", "fp16", "bf16"):
            raise ValueError(f"mixed_precision must be 'auto', 'no', 'fp16' or 'bf16', got {choice!r}")
        return choice
    if torch.cuda.is_available():
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "no"


def default_param_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """Trainable parameters, no weight decay on biases and normalization weights (BERT convention)."""
    decay, no_decay = [], []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        (no_decay if name.endswith("bias") or "norm" in name.lower() else decay).append(parameter)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def linear_schedule(optimizer: torch.optim.Optimizer, warmup_steps: int, total_steps: int):
    """Linear warmup from 0 to the base LR over ``warmup_steps``, then linear decay to 0 at ``total_steps``."""

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / max(1, warmup_steps)
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


_LAYER = re.compile(r"\.layers?\.(\d+)\.")


def layerwise_param_groups(
    model: nn.Module,
    lr: float,
    decay: float = 0.95,
    weight_decay: float = 0.01,
    head_lr: float | None = None,
    head_prefix: str = "head.",
) -> list[dict]:
    """AdamW groups with layer-wise LR decay (STS-Regression's official ``train-*.py``, REFERENCE_NOTES A2).

    The top transformer layer gets ``lr``, each layer below it ``decay`` times its upper neighbour's (BERT-base:
    layer 0 at ``lr * 0.95**11``). Parameters outside the numbered layers (embeddings, the head) stay at ``lr``,
    as in the official code, unless ``head_lr`` is given: then the parameters named ``head_prefix...`` get it (a new,
    randomly initialised head that has tens of steps instead of the paper's thousands needs a larger step). No
    weight decay on biases and normalisation weights. ``decay=1`` is plain AdamW.
    """
    named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    layers = [int(m.group(1)) for name, _ in named if (m := _LAYER.search(name))]
    top = max(layers, default=0)
    groups: dict[tuple[float, float], list[nn.Parameter]] = {}
    for name, parameter in named:
        match = _LAYER.search(name)
        group_lr = lr * decay ** (top - int(match.group(1))) if match else lr
        if head_lr is not None and name.startswith(head_prefix):
            group_lr = head_lr
        no_decay = name.endswith("bias") or "norm" in name.lower()
        groups.setdefault((group_lr, 0.0 if no_decay else weight_decay), []).append(parameter)
    return [{"params": params, "lr": g_lr, "weight_decay": wd} for (g_lr, wd), params in groups.items()]


def trainable_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """A CPU copy of the parameters that train (small for LoRA or a frozen encoder)."""
    names = {name for name, p in model.named_parameters() if p.requires_grad}
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items() if k in names}


def _epoch_batches(n: int, batch_size: int, seed: int, epoch: int, drop_last: bool) -> list[list[int]]:
    generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    order = torch.randperm(n, generator=generator).tolist()
    batches = [order[i : i + batch_size] for i in range(0, n, batch_size)]
    if drop_last and batches and len(batches[-1]) < batch_size:
        batches.pop()
    return batches


def fit(
    model: nn.Module,
    loss_fn: LossFn,
    train_data: Sequence,
    config: TrainConfig,
    *,
    collate: Callable[[list], Any] = list,
    evaluate: EvalFn | None = None,
    param_groups: list[dict] | None = None,
) -> TrainResult:
    """Train ``model`` on ``train_data`` with ``loss_fn(model, batch) -> scalar``; return the history.

    ``evaluate(model) -> score`` (higher is better, e.g. STS-B dev Spearman) runs every ``eval_every``
    optimizer steps and at the end; the best weights are restored into ``model`` before returning, and so is
    the train/eval mode ``model`` came in with.
    """
    from accelerate import Accelerator
    from tqdm.auto import tqdm

    if len(train_data) == 0:
        raise ValueError("train_data is empty")
    if config.batch_size < 1 or config.grad_accum < 1 or config.epochs < 1:
        raise ValueError(f"batch_size, grad_accum and epochs must be >= 1, got {config}")
    started = time.perf_counter()
    was_training = model.training
    accelerator = Accelerator(
        gradient_accumulation_steps=config.grad_accum,
        mixed_precision=resolve_mixed_precision(config.mixed_precision),
        cpu=not torch.cuda.is_available(),
    )
    groups = param_groups if param_groups is not None else default_param_groups(model, config.weight_decay)
    optimizer = torch.optim.AdamW(groups, lr=config.lr)
    shards = accelerator.num_processes  # each process takes every shards-th batch: data parallel
    per_epoch = len(
        _epoch_batches(len(train_data), config.batch_size, config.seed, 0, config.drop_last)[
            accelerator.process_index :: shards
        ]
    )
    if per_epoch == 0:
        raise ValueError(f"{len(train_data)} examples make no full batch of {config.batch_size} with drop_last")
    total = math.ceil(per_epoch / config.grad_accum) * config.epochs
    if config.max_steps is not None:
        total = min(total, config.max_steps)
    scheduler = linear_schedule(optimizer, round(config.warmup_ratio * total), total)
    # the scheduler is stepped by hand once per optimizer step (not prepared: accelerate would step it once per
    # process), so it counts this process's optimizer steps, as ``total`` does
    model, optimizer = accelerator.prepare(model, optimizer)
    accelerator.register_for_checkpointing(scheduler)

    checkpoints = Path(config.checkpoint_dir) if config.checkpoint_dir else None
    state = {
        "step": 0,
        "epoch": 0,
        "batch": 0,
        "best_score": None,
        "best_step": None,
        "evaluated_at": None,
        "history": [],
    }
    best_weights: dict[str, torch.Tensor] | None = None
    if checkpoints is not None and config.resume and (checkpoints / "last" / "progress.json").is_file():
        accelerator.load_state(str(checkpoints / "last"))
        state = json.loads((checkpoints / "last" / "progress.json").read_text())
        if (checkpoints / "best.pt").is_file():
            best_weights = torch.load(checkpoints / "best.pt", weights_only=True)

    def run_evaluation() -> None:
        nonlocal best_weights
        if evaluate is None:
            return
        unwrapped = accelerator.unwrap_model(model)
        score = float(evaluate(unwrapped))
        state["evaluated_at"] = state["step"]
        unwrapped.train()
        state["history"].append({"step": state["step"], "epoch": state["epoch"], "dev": score})
        if state["best_score"] is None or score > state["best_score"]:
            state["best_score"], state["best_step"] = score, state["step"]
            best_weights = trainable_state(unwrapped)
            if checkpoints is not None and accelerator.is_main_process:
                checkpoints.mkdir(parents=True, exist_ok=True)
                torch.save(best_weights, checkpoints / "best.pt")
        if checkpoints is not None:
            accelerator.save_state(str(checkpoints / "last"))
            if accelerator.is_main_process:
                (checkpoints / "last" / "progress.json").write_text(json.dumps(state))

    quiet = not config.progress or os.environ.get("TQDM_DISABLE") == "1" or not accelerator.is_main_process
    bar = tqdm(total=total, initial=state["step"], desc="train", disable=quiet)
    model.train()
    running, count = 0.0, 0
    done = state["step"] >= total
    for epoch in range(state["epoch"], config.epochs):
        if done:
            break
        batches = _epoch_batches(len(train_data), config.batch_size, config.seed, epoch, config.drop_last)
        batches = batches[accelerator.process_index :: shards]
        skip = state["batch"] if epoch == state["epoch"] else 0
        for index in range(skip, len(batches)):
            batch = collate([train_data[i] for i in batches[index]])
            with accelerator.accumulate(model):
                loss = loss_fn(model, batch)
                if not torch.isfinite(loss.detach()).all():
                    raise NonFiniteLossError(
                        f"loss is {loss.item()} at optimizer step {state['step']} (epoch {epoch}, batch {index} "
                        f"of {len(batches)}, examples {batches[index][:8]}{'...' if len(batches[index]) > 8 else ''})"
                    )
                accelerator.backward(loss)
                if accelerator.sync_gradients and config.max_grad_norm is not None:
                    accelerator.clip_grad_norm_(model.parameters(), config.max_grad_norm)
                optimizer.step()
                optimizer.zero_grad()
            running += loss.item()
            count += 1
            state["epoch"], state["batch"] = epoch, index + 1
            if not accelerator.sync_gradients:
                continue
            scheduler.step()
            state["step"] += 1
            bar.update(1)
            bar.set_postfix(loss=f"{running / count:.4f}")
            if config.eval_every and state["step"] % config.eval_every == 0:
                state["history"].append(
                    {"step": state["step"], "epoch": epoch, "loss": running / count, "lr": scheduler.get_last_lr()[0]}
                )
                running, count = 0.0, 0
                run_evaluation()
            if state["step"] >= total:
                done = True
                break
        if not done:
            state["epoch"], state["batch"] = epoch + 1, 0
            if not config.eval_every:
                run_evaluation()
    bar.close()
    if count:
        state["history"].append({"step": state["step"], "epoch": state["epoch"], "loss": running / count})
    if state["evaluated_at"] != state["step"]:
        run_evaluation()
    unwrapped = accelerator.unwrap_model(model)
    if best_weights is not None:
        unwrapped.load_state_dict(best_weights, strict=False)
    unwrapped.train(was_training)
    accelerator.free_memory()
    return TrainResult(
        state["step"], state["best_score"], state["best_step"], time.perf_counter() - started, state["history"]
    )
