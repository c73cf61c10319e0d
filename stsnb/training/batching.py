"""Global batches: what a plan states (the papers' batch sizes) and how they are shared out over the processes.

A paper's batch size is *global*: the examples of one optimizer step, all GPUs together (STS-Regression's official
64 = 4 GPUs x 16; Pcc-tuning's 224-256 all-gathered over 4 GPUs, REFERENCE_NOTES A1-A2). A plan states that number
and the notebook divides it:

    global batch = processes x per-process batch x accumulation steps

so ``stsnb run --check --gpus 4`` and ``--gpus 8`` train on the same global batches (``split_batch``), and a server
with more GPUs finishes sooner rather than training another recipe.

- **Per-pair losses** (regression, cross entropy: a mean over the pairs) may also accumulate: ``grad_accum`` cuts
  each process's share into equal micro-batches, which gives the gradient of the whole batch at once in less memory.
- **Batch-level losses** (InfoNCE over in-batch negatives, Pcc's Pearson over the batch) may not: the batch
  statistic of a micro-batch is not that of the batch (REFERENCE_NOTES "Batch-level losses and single GPU"), so
  the global batch must divide over the processes with no accumulation; the processes all-gather (``stsnb.
  distributed.gather_with_grad``) so each loss sees the global batch.

``num_processes = "auto"`` (the paper plan's) takes the GPUs present: the largest count, at most the visible GPUs,
that divides every global batch the notebook trains on (``resolve_processes``), and says when GPUs stay idle.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

AUTO = "auto"


class BatchError(ValueError):
    """A global batch that cannot be shared out as asked; the message names the counts that work."""


@dataclass(frozen=True)
class BatchSplit:
    """One fit's global batch as ``processes x per_process x accumulation``."""

    global_batch: int
    processes: int
    per_process: int
    accumulation: int = 1

    def describe(self) -> str:
        """``64 = 4 processes x 16`` (``x 2 accumulation steps`` when there are)."""
        processes = f"{self.processes} process{'es' if self.processes > 1 else ''}"
        text = f"{self.global_batch} = {processes} x {self.per_process}"
        return text + (f" x {self.accumulation} accumulation steps" if self.accumulation > 1 else "")


def divisors(n: int, at_most: int | None = None) -> list[int]:
    """The divisors of ``n`` (at most ``at_most``), ascending."""
    return [d for d in range(1, (n if at_most is None else min(n, at_most)) + 1) if n % d == 0]


def split_batch(global_batch: int, processes: int, *, batch_level: bool, accumulation: int = 1) -> BatchSplit:
    """``global_batch`` over ``processes``, each process's share in ``accumulation`` equal micro-batches (per-pair
    losses only). Raises :class:`BatchError` when it does not divide, naming the counts that do."""
    if global_batch < 1 or processes < 1 or accumulation < 1:
        raise BatchError(
            f"a global batch, a process count and accumulation steps must be >= 1, got {global_batch}, {processes} "
            f"and {accumulation}"
        )
    if accumulation > 1 and batch_level:
        raise BatchError(
            f"grad_accum={accumulation} with a loss that is a batch statistic (InfoNCE's in-batch negatives, a "
            "Pearson over the batch): accumulation would change the loss, not just split the work. Set grad_accum=1"
        )
    if global_batch % (processes * accumulation):
        counts = [p for p in divisors(global_batch, 16) if (global_batch // p) % accumulation == 0]
        raise BatchError(
            f"a global batch of {global_batch} does not divide over {processes} processes x {accumulation} "
            f"accumulation steps (every process takes the same share); process counts that divide it: {counts}. "
            'Set num_processes to one of them, or "auto" to take the largest the GPUs allow'
        )
    return BatchSplit(global_batch, processes, global_batch // (processes * accumulation), accumulation)


def visible_gpus() -> int:
    """The GPUs this process may use (``CUDA_VISIBLE_DEVICES`` respected), without creating a CUDA context."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def resolve_processes(num_processes: int | str, global_batches: Iterable[int], gpus: int | None = None) -> int:
    """The process count of a notebook's ``num_processes``: an int as it is (checked against every global batch),
    ``"auto"``: the largest count at most ``gpus`` (default: the visible GPUs; none: 1) dividing every global batch."""
    batches = sorted(set(int(b) for b in global_batches))
    if num_processes == AUTO:
        available = max(1, visible_gpus() if gpus is None else gpus)
        return max(p for p in range(1, available + 1) if all(b % p == 0 for b in batches))
    if isinstance(num_processes, bool) or not isinstance(num_processes, int) or num_processes < 1:
        raise BatchError(f'num_processes must be an int >= 1 or "auto", got {num_processes!r}')
    for batch in batches:
        split_batch(batch, num_processes, batch_level=False)  # raises with the counts that divide
    return num_processes


def processes_line(num_processes: int | str, processes: int, gpus: int | None = None) -> str:
    """What the notebook prints once: the processes chosen and, for ``"auto"``, the GPUs left idle."""
    if num_processes != AUTO:
        return f"{processes} training process{'es' if processes > 1 else ''} (num_processes={num_processes})"
    available = visible_gpus() if gpus is None else gpus
    idle = max(0, available - processes)
    note = f"; {idle} GPU(s) idle: no larger count divides every global batch" if idle else ""
    devices = os.environ.get("CUDA_VISIBLE_DEVICES")
    seen = f"{available} visible GPU(s)" + (f" (CUDA_VISIBLE_DEVICES={devices})" if devices else "")
    return f'{processes} training process{"es" if processes > 1 else ""} (num_processes="auto", {seen}){note}'
