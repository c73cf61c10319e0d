"""A fit's checkpoints on disk: which fit a folder belongs to (:func:`run_key`), the state that resumes it written
whole or not at all (``last/``, swapped in by renames), the RNG states of every process, and how far a fit moved its
weights (:func:`largest_change`, :func:`relative_change`).

``stsnb.training.train.fit`` writes and reads them; docs/gpu-server.md says how ``stsnb run --resume`` uses them."""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .config import LossFn, TrainConfig


def trainable_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """A CPU copy of the parameters that train (small for LoRA or a frozen encoder)."""
    names = {name for name, p in model.named_parameters() if p.requires_grad}
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items() if k in names}


CHECKPOINTS_ENV = "STSNB_CHECKPOINTS"  # a folder: every fit() without its own checkpoint_dir checkpoints below it


RESUME_ENV = "STSNB_RESUME"  # "1": those fits resume from their checkpoints (``stsnb run --resume``)


def largest_change(before: Mapping[str, torch.Tensor], after: Mapping[str, torch.Tensor]) -> float:
    """The largest absolute difference of any weight named in both state dicts (0.0 when none changed)."""
    shared = [k for k in before if k in after]
    if not shared:
        raise ValueError("the two states share no weight: nothing to compare")
    return max(float((after[k].float() - before[k].float()).abs().max()) if before[k].numel() else 0.0 for k in shared)


def relative_change(before: Mapping[str, torch.Tensor], after: Mapping[str, torch.Tensor]) -> float:
    """``||after - before|| / ||before||``, the L2 norms over every weight named in both states taken as one vector:
    how far training moved the weights, relative to where they started (0.0 when none changed; ``inf`` when the
    start is all zeros and something changed)."""
    shared = [k for k in before if k in after]
    if not shared:
        raise ValueError("the two states share no weight: nothing to compare")
    moved = math.sqrt(sum(float((after[k].double() - before[k].double()).square().sum()) for k in shared))
    start = math.sqrt(sum(float(before[k].double().square().sum()) for k in shared))
    if start == 0.0:
        return 0.0 if moved == 0.0 else math.inf
    return moved / start


def run_key(model: nn.Module, loss_fn: LossFn, train_data: Sequence, config: TrainConfig) -> str:
    """What decides a training run, as a short hash: the settings (progress and checkpoint fields aside), the loss
    function's name, the number of examples and a strided sample of them, and a strided sample of the starting
    weights (``stsnb.models.fingerprint.weights_sample``). A notebook rerun meets the same keys in the same fits; two
    fits with one key would train the same weights, so sharing their checkpoints is right."""
    from ..models.fingerprint import weights_sample

    settings = run_settings(config)
    stride = max(1, len(train_data) // 64)
    examples = [repr(train_data[i])[:500] for i in range(0, len(train_data), stride)][:64]
    digest = hashlib.blake2b(digest_size=8)
    parts = (json.dumps(settings, sort_keys=True, default=str), describe_loss(loss_fn), str(len(train_data)))
    for part in (*parts, *examples):
        digest.update(part.encode() + b"\n")
    digest.update(weights_sample(model).encode())
    key = digest.hexdigest()
    _RUN_KEYS_SEEN[key] = _RUN_KEYS_SEEN.get(key, 0) + 1
    return f"{key}-{_RUN_KEYS_SEEN[key]}"  # the n-th fit with this key in this process: a rerun meets them in order


_RUN_KEYS_SEEN: dict[str, int] = {}


def run_settings(config: TrainConfig) -> dict[str, Any]:
    """The settings that decide a run's weights: the config without how it is shown or where it checkpoints."""
    return {k: v for k, v in asdict(config).items() if k not in _NOT_SETTINGS}


# how a fit is shown, where and how often it checkpoints: the same weights whatever they are (old run keys hold)
_NOT_SETTINGS = {"progress", "label", "checkpoint_dir", "resume", "last_checkpoint_minutes"}


_SIMPLE = (bool, int, float, str, type(None))


def describe_loss(loss_fn: LossFn) -> str:
    """The loss's name with the plain values it closes over or is partially applied to (e.g. Smooth K2's k and x0),
    so that two fits differing only in a loss setting get different keys."""
    import functools

    values: list[str] = []
    while isinstance(loss_fn, functools.partial):
        values += [repr(a) for a in loss_fn.args if isinstance(a, _SIMPLE)]
        values += [f"{k}={v!r}" for k, v in sorted(loss_fn.keywords.items()) if isinstance(v, _SIMPLE)]
        loss_fn = loss_fn.func
    for cell in getattr(loss_fn, "__closure__", None) or ():
        try:
            content = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(content, _SIMPLE) or callable(content) and hasattr(content, "__qualname__"):
            values.append(repr(content) if isinstance(content, _SIMPLE) else content.__qualname__)
    name = f"{getattr(loss_fn, '__module__', '')}.{getattr(loss_fn, '__qualname__', type(loss_fn).__name__)}"
    return f"{name}({', '.join(values)})"


def checkpoint_settings(model: nn.Module, loss_fn: LossFn, train_data: Sequence, config: TrainConfig):
    """``(checkpoint_dir, resume)`` of one fit: the config's own, else ``$STSNB_CHECKPOINTS/<run_key>`` with
    ``$STSNB_RESUME``, which the batch runner sets for a plan with ``checkpoints: true`` (and ``--resume``)."""
    if config.checkpoint_dir is not None:
        return Path(config.checkpoint_dir), config.resume
    root = os.environ.get(CHECKPOINTS_ENV)
    if not root:
        return None, False
    return Path(root) / run_key(model, loss_fn, train_data, config), config.resume or os.environ.get(RESUME_ENV) == "1"


def save_atomic(obj: Any, path: Path) -> None:
    """``torch.save`` to a temporary file renamed over ``path``: a run killed mid-save keeps the previous file."""
    temporary = path.with_name(f".{path.name}.tmp")
    torch.save(obj, temporary)
    temporary.replace(path)


def rng_states() -> dict[str, Any]:
    """This process's random number generators (Python, NumPy, torch CPU and CUDA): dropout and batch order resume."""
    import random

    import numpy as np

    states = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def set_rng_states(states: Mapping[str, Any]) -> None:
    import random

    import numpy as np

    random.setstate(states["python"])
    np.random.set_state(states["numpy"])
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


def _save_training_state(acc, model: nn.Module, optimizer, folder: Path, rng: Mapping[str, Any] | None) -> None:
    """What resumes a fit, without the frozen weights: each process's RNG states (``rng``, else this moment's); on
    the main process the weights that train (``trainable_state``), the optimizer and the gradient scaler (the
    processes of a DDP run hold the same ones)."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(rng if rng is not None else rng_states(), folder / f"rng_{acc.process_index}.pt")
    if acc.is_main_process:
        torch.save(trainable_state(acc.unwrap_model(model)), folder / "trainable.pt")
        torch.save(optimizer.state_dict(), folder / "optimizer.pt")
        if acc.scaler is not None:
            torch.save(acc.scaler.state_dict(), folder / "scaler.pt")


def load_training_state(acc, model: nn.Module, optimizer, folder: Path) -> None:
    """The state ``_save_training_state`` wrote: the trainable weights into the model (a missing or unknown name is
    an error naming it), then the optimizer, the scaler and this process's RNG states."""
    unwrapped = acc.unwrap_model(model)
    weights = torch.load(folder / "trainable.pt", weights_only=True)
    expected = {name for name, p in unwrapped.named_parameters() if p.requires_grad}
    if set(weights) != expected:
        missing, unknown = sorted(expected - set(weights)), sorted(set(weights) - expected)
        raise RuntimeError(
            f"{folder}: the checkpoint's trainable weights do not match the model's (missing {missing[:3]}, "
            f"unknown {unknown[:3]}): a checkpoint of another setting? Run without --resume to start over."
        )
    with torch.no_grad():
        unwrapped.load_state_dict(weights, strict=False)
    optimizer.load_state_dict(torch.load(folder / "optimizer.pt", weights_only=True))
    if acc.scaler is not None and (folder / "scaler.pt").is_file():
        acc.scaler.load_state_dict(torch.load(folder / "scaler.pt", weights_only=True))
    set_rng_states(torch.load(folder / f"rng_{acc.process_index}.pt", weights_only=False))  # our own file


def save_last_checkpoint(
    acc, model: nn.Module, optimizer, checkpoints: Path, scheduler, state: Mapping, rng: Mapping | None = None
) -> None:
    """The state that resumes the fit (``_save_training_state``; ``rng``: the RNG states to save, else this
    moment's) in ``checkpoints/last``, swapped in only once complete, with the ``best.pt`` of that moment.

    Written to ``last.new`` first (every process saves its part); the main process then moves the old ``last``
    aside to ``last.old``, renames ``last.new`` to ``last`` and deletes ``last.old``. A kill at any point leaves a
    complete checkpoint in ``last`` or, between the two renames, in ``last.old`` (``last_checkpoint`` looks there
    too). ``last/best.pt`` is a hard link to ``best.pt`` (no bytes written): ``last/`` is written only every few
    minutes, so a later better score replaces ``best.pt`` while ``last/`` keeps the selection it was saved with, and
    a resume from it takes up that one (``take_up_best``)."""
    import shutil

    new, last, old = checkpoints / "last.new", checkpoints / "last", checkpoints / "last.old"
    if acc.is_main_process and new.exists():
        shutil.rmtree(new)  # an unfinished save of a killed run
    acc.wait_for_everyone()
    _save_training_state(acc, model, optimizer, new, rng)
    acc.wait_for_everyone()
    if not acc.is_main_process:
        return
    if (checkpoints / "best.pt").is_file():
        _link_or_copy(checkpoints / "best.pt", new / "best.pt")
    torch.save(scheduler.state_dict(), new / "scheduler.pt")
    (new / "progress.json").write_text(json.dumps(state))  # written last: its presence marks a complete save
    if last.exists():
        if old.exists():
            shutil.rmtree(old)
        last.rename(old)
    new.rename(last)
    if old.exists():
        shutil.rmtree(old)


HEAVY_STATE_FILES = ("trainable.pt", "optimizer.pt", "scaler.pt")  # what only an unfinished fit needs to go on


def _link_or_copy(source: Path, target: Path) -> None:
    """``target`` as a hard link to ``source`` (the same bytes, none written), a copy where links are refused."""
    import shutil

    try:
        os.link(source, target)
    except OSError:  # a file system without hard links
        shutil.copyfile(source, target)


def take_up_best(checkpoints: Path, last: Path, main: bool) -> dict[str, torch.Tensor] | None:
    """The selected weights of the moment ``last`` was saved: ``last/best.pt`` (else ``best.pt``, for a checkpoint
    saved without one), None when nothing was selected yet. ``last/`` is written only every few minutes, so a
    better score after it may have replaced ``best.pt``; the resumed fit trains those steps again and selects among
    them anew, so on the ``main`` process ``best.pt`` is put back to the selection of ``last/`` (a rename)."""
    saved, best = last / "best.pt", checkpoints / "best.pt"
    if not saved.is_file():
        return torch.load(best, weights_only=True) if best.is_file() else None
    if main and not (best.is_file() and os.path.samefile(saved, best)):
        temporary = best.with_name(".best.pt.tmp")
        temporary.unlink(missing_ok=True)
        _link_or_copy(saved, temporary)
        temporary.replace(best)
    return torch.load(saved, weights_only=True)


class LastWrites:
    """When ``last/`` is written: at a dev evaluation once ``minutes`` have passed since the previous write (or the
    fit's start), and whenever the caller says so (the end of the fit); ``minutes=0``: at every evaluation. The
    clock is ``time.monotonic`` (tests pass their own)."""

    def __init__(self, minutes: float, step: int, clock=None) -> None:
        import time

        if minutes < 0:
            raise ValueError(f"last_checkpoint_minutes must be >= 0, got {minutes}")
        self.seconds = 60.0 * minutes
        self.clock = clock or time.monotonic
        self.at = self.clock()  # when the last write happened (the start: nothing to write before a step)
        self.step = step  # the step it holds (the resumed one; 0 at a fresh start)
        self.count = 0  # writes in this fit() call

    def due(self, step: int, final: bool = False) -> bool:
        """Whether ``last/`` should be written at ``step``: never twice at one step; at the end always."""
        if step == self.step and self.count:
            return False
        return final or self.seconds == 0 or self.clock() - self.at >= self.seconds

    def written(self, step: int) -> None:
        self.at, self.step, self.count = self.clock(), step, self.count + 1


def slim_finished_checkpoint(acc, checkpoints: Path | None) -> None:
    """A finished fit's ``last/`` keeps only what returns it at once on a resume: ``progress.json`` marked
    ``finished``, the scheduler and the RNG states (a few KiB); the trainable weights, the optimizer and the scaler
    (AdamW's two moments: 3x the trainable weights) go, since ``best.pt`` holds the weights the fit returns. So a
    notebook's checkpoints hold one unfinished fit's state at a time, not every fit's until the notebook ends.
    Marked first, then deleted: a kill in between leaves a finished checkpoint with its files. Every process calls
    it (``checkpoints`` None: an unfinished fit, or none) and waits for the others."""
    acc.wait_for_everyone()
    last = last_checkpoint(checkpoints) if checkpoints is not None else None
    if last is None or not acc.is_main_process or not (checkpoints / "best.pt").is_file():
        return  # nothing saved, another process, or no selected weights to return from: keep the full state
    progress = last / "progress.json"
    temporary = progress.with_name(".progress.json.tmp")
    temporary.write_text(json.dumps({**json.loads(progress.read_text()), "finished": True}))
    temporary.replace(progress)
    for name in (*HEAVY_STATE_FILES, "best.pt"):  # last/best.pt: a link to best.pt, the selection it returns
        (last / name).unlink(missing_ok=True)


def last_checkpoint(checkpoints: Path) -> Path | None:
    """The newest complete checkpoint folder (``last``, else ``last.old`` left by a kill between two renames)."""
    for folder in (checkpoints / "last", checkpoints / "last.old"):
        if (folder / "progress.json").is_file():
            return folder
    return None
