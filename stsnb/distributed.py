"""Several processes: the global batch for batch-level losses, and launching a training function on N processes.

``gather_with_grad(x)`` concatenates every process's ``x`` in rank order and keeps the autograd graph
(``torch.distributed.nn.functional.all_gather``): a contrastive loss then sees the in-batch negatives of all processes
(the Pcc-tuning code all-gathers z1, z2, z3 for Eq. 8 and the scores for Eq. 9, REFERENCE_NOTES A1), and with DDP's
gradient average each process ends with the gradient of one process on the global batch (``stsnb.train``'s docstring
says why; ``tests/test_distributed.py`` checks it). With one process it returns ``x`` itself.

``launch(fn, args, num_processes)`` runs ``fn(*args)`` here when ``num_processes`` is 1 and through
``accelerate.notebook_launcher`` on that many processes otherwise (a notebook's ``num_processes`` parameter).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch


def world_size() -> int:
    return torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1


def gather_with_grad(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` of every process, concatenated along dim 0 in rank order, differentiable; same shape per process."""
    if world_size() == 1:
        return tensor
    from torch.distributed.nn.functional import all_gather

    return torch.cat(all_gather(tensor.contiguous()), dim=0)


def launch(function: Callable[..., Any], args: Sequence[Any] = (), num_processes: int = 1, **kwargs: Any) -> Any:
    """Run ``function(*args)`` on ``num_processes`` processes (GPUs if there are, else CPU); 1 = in this process."""
    if num_processes < 1:
        raise ValueError(f"num_processes must be >= 1, got {num_processes}")
    if num_processes == 1:
        return function(*args)
    from accelerate import notebook_launcher

    return notebook_launcher(function, tuple(args), num_processes=num_processes, **kwargs)
