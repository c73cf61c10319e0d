"""Several processes: the global batch for batch-level losses, and launching a training function on N processes.

``gather_with_grad(x)`` concatenates every process's ``x`` in rank order and keeps the autograd graph
(the functional ``all_gather`` with autograd): a contrastive loss then sees the in-batch negatives of all processes
(the Pcc-tuning code all-gathers z1, z2, z3 for Eq. 8 and the scores for Eq. 9, REFERENCE_NOTES A1), and with DDP's
gradient average each process ends with the gradient of one process on the global batch (``stsnb.train``'s docstring
says why; ``tests/test_distributed.py`` checks it). With one process it returns ``x`` itself.

``run(fn, args, num_processes)`` is what a notebook's ``num_processes`` parameter calls: ``fn(*args)`` on that many
processes, the main process's return value handed back (through a file). ``launch(fn, args, num_processes)`` runs
``fn(*args)`` here when ``num_processes`` is 1, through
``accelerate.notebook_launcher`` on that many GPUs, and on a machine without GPUs through ``accelerate.debug_launcher``
(CPU processes over gloo: what the tests use; ``notebook_launcher`` sets up GPU processes only).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch


def world_size() -> int:
    return torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1


def gather_with_grad(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` of every process, concatenated along dim 0 in rank order, differentiable; same shape per process."""
    if world_size() == 1:
        return tensor
    try:  # torch >= 2.4: the functional collective that torch.distributed.nn.functional.all_gather now points to
        from torch.distributed._functional_collectives import all_gather_tensor_autograd
    except ImportError:
        from torch.distributed.nn.functional import all_gather

        return torch.cat(all_gather(tensor.contiguous()), dim=0)
    group = torch.distributed.group.WORLD
    return all_gather_tensor_autograd(tensor.contiguous(), gather_dim=0, group=group)


def launch(function: Callable[..., Any], args: Sequence[Any] = (), num_processes: int = 1, **kwargs: Any) -> Any:
    """Run ``function(*args)`` on ``num_processes`` processes (GPUs if there are, else CPU); 1 = in this process.

    Several processes return nothing: write results to disk from the main process.
    """
    if num_processes < 1:
        raise ValueError(f"num_processes must be >= 1, got {num_processes}")
    if num_processes == 1:
        return function(*args)
    if torch.cuda.is_available():
        from accelerate import notebook_launcher

        return notebook_launcher(function, tuple(args), num_processes=num_processes, **kwargs)
    from accelerate import debug_launcher

    return debug_launcher(function, tuple(args), num_processes=num_processes)


def _run_and_save(function: Callable[..., Any], args: Sequence[Any], path: str) -> None:
    result = function(*args)
    if world_size() == 1 or torch.distributed.get_rank() == 0:
        torch.save(result, path)


def run(function: Callable[..., Any], args: Sequence[Any] = (), num_processes: int = 1) -> Any:
    """``function(*args)`` on ``num_processes`` processes; returns what the main process's call returned.

    A notebook's ``num_processes`` parameter: 1 runs in the kernel, more runs through ``launch`` (GPUs on a server) and
    the result comes back through a temporary file (``torch.save``: tensors, dicts, dataclasses).
    """
    if num_processes == 1:
        return function(*args)
    with tempfile.TemporaryDirectory(prefix="stsnb-run-") as folder:
        path = Path(folder) / "result.pt"
        launch(_run_and_save, (function, tuple(args), str(path)), num_processes)
        if not path.is_file():
            raise RuntimeError(
                f"{getattr(function, '__name__', function)} on {num_processes} processes returned no result"
            )
        return torch.load(path, weights_only=False)
