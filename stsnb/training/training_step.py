"""One training step done by hand in a notebook: a batch, a paper's loss, ``backward``, an optimizer step, and the
loss on the same batch before and after, so a reader sees what ``stsnb.training.train.fit`` repeats. Notebooks 10, 20,
30 and 40 write that cell the same way with these helpers; what a paper adds (its batch, its loss terms) stays in its
package.

The loss is measured twice on one batch, before and after the step. With dropout on (as in training) the two
forward passes would draw different dropout masks and differ even without a step; :func:`same_dropout` replays one
mask for both, so the difference is the step's alone. It also leaves the caller's random numbers as they were, so a
notebook's later runs draw what they would have drawn without the demonstration.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn


@contextmanager
def same_dropout(seed: int) -> Iterator[None]:
    """Inside the block torch's random numbers (CPU and every visible GPU) start from ``seed``, so two identical
    forward passes inside two such blocks draw the same dropout masks; outside it the random state is what it was
    before the block."""
    with torch.random.fork_rng(devices=list(range(torch.cuda.device_count()))):
        torch.manual_seed(seed)
        yield


def trainable(model: nn.Module) -> list[nn.Parameter]:
    """The parameters an optimizer steps: those with ``requires_grad`` (a LoRA adapter's, not the frozen base's)."""
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("the model has no trainable parameter: nothing for an optimizer to step")
    return params


def _value(loss: float | torch.Tensor) -> float:
    return float(loss.detach()) if isinstance(loss, torch.Tensor) else float(loss)


def describe(
    what: str, before: float | torch.Tensor, after: float | torch.Tensor, batch: str, *, seconds: float | None = None
) -> str:
    """ "Eq. 9 (1 - r) on 8 pairs: 0.7312 before the step, 0.6120 after (-0.1192); 3 s": the loss on one batch
    before and after one optimizer step on that batch, and with ``seconds`` what the cell took."""
    b, a = _value(before), _value(after)
    text = f"{what} on {batch}: {b:.4f} before the step, {a:.4f} after ({a - b:+.4f})"
    return text if seconds is None else f"{text}; {seconds:.0f} s"


def release_memory() -> None:
    """After a cell that loaded a model in the kernel and ``del``-eted it: collect what the deleted names still
    hold (a peft model keeps reference cycles) and hand the CUDA caching allocator's free blocks back to the driver
    (``torch.cuda.empty_cache``), so the GPU is as the cell found it for what runs next (notebook 10's torchrun
    workers train on that GPU too). A no-op on the CPU; it never initialises CUDA."""
    import gc

    gc.collect()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()
