"""``stsnb run --parallel "0,1,2,3:10_pcc_tuning 4,5,6,7:20_sts_regression,30_hicl"``: notebooks side by side on
disjoint GPU sets, since the whole paper plan is days of work.

Each group ``GPUS:NOTEBOOKS`` becomes a child ``stsnb run --only NOTEBOOKS`` with ``CUDA_VISIBLE_DEVICES=GPUS``,
which its kernels inherit (jupyter_client starts a kernel with the runner's environment) and so do the notebook's
torchrun workers, so ``num_processes: "auto"`` resolves to the group's GPUs. Child processes rather than threads or
one scheduler: a child is exactly the ``stsnb run`` of a shell (its locks, recovery, summary.md, Ctrl-C), and the
notebook locks of ``stsnb.runs.locks`` already let runs of one profile share its folder; this module only adds what a
batch server wants from one command: the children's lines relayed with their GPUs as a prefix, one stop for all
(Ctrl-C or SIGTERM to this process is sent on once to each child as SIGTERM; the children are in their own session
so a terminal's Ctrl-C does not reach them twice), and the worst child's exit code.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO


@dataclass(frozen=True)
class Group:
    """Notebooks run one after the other by one child, on its GPUs."""

    gpus: str  # CUDA_VISIBLE_DEVICES, e.g. "0,1,2,3"
    notebooks: tuple[str, ...]


def parse_groups(spec: str) -> list[Group]:
    """``"0,1:10_pcc_tuning 2,3:20_sts_regression,30_hicl"``: groups separated by spaces, each GPU indices and
    notebooks; raises ValueError unless every group is well formed and the GPU sets and notebooks are disjoint."""
    groups: list[Group] = []
    for text in spec.split():
        gpus, colon, names = text.partition(":")
        notebooks = tuple(n.strip().removesuffix(".ipynb") for n in names.split(",") if n.strip())
        if not colon or not re.fullmatch(r"\d+(,\d+)*", gpus) or not notebooks:
            raise ValueError(f"{text!r} is not GPUS:NOTEBOOKS (e.g. '0,1,2,3:10_pcc_tuning 4,5:20_sts_regression')")
        groups.append(Group(gpus, notebooks))
    if not groups:
        raise ValueError("no group: expected GPUS:NOTEBOOKS groups separated by spaces")
    for kind, items in (
        ("GPU", [g for group in groups for g in group.gpus.split(",")]),
        ("notebook", [n for group in groups for n in group.notebooks]),
    ):
        twice = sorted({item for item in items if items.count(item) > 1})
        if twice:
            raise ValueError(f"each {kind} goes in one group only: {', '.join(twice)} named twice")
    return groups


def _relay(stream: IO[str], prefix: str) -> None:
    for line in stream:
        sys.stderr.write(f"{prefix}{line}")
        sys.stderr.flush()


def run_parallel(groups: Sequence[Group], command: Callable[[Group], list[str]]) -> int:
    """Start ``command(group)`` per group with its ``CUDA_VISIBLE_DEVICES``, relay their output, wait for all;
    returns the worst exit code (a child killed by signal N counts 128 + N)."""
    from .execution import sigterm_as_interrupt

    children = []
    for group in groups:
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": group.gpus, "PYTHONUNBUFFERED": "1"}
        child = subprocess.Popen(
            command(group),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        relay = threading.Thread(target=_relay, args=(child.stdout, f"[gpus {group.gpus}] "), daemon=True)
        relay.start()
        children.append((child, relay))
    try:
        with sigterm_as_interrupt():
            for child, _ in children:
                child.wait()
    except KeyboardInterrupt:
        for child, _ in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)  # each records its notebook in progress and writes summary.md
        for child, _ in children:
            child.wait()
        raise
    finally:
        for _, relay in children:
            relay.join(timeout=10)
    return max(code if code >= 0 else 128 - code for code in (child.returncode for child, _ in children))
