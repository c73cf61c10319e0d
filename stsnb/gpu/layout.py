"""``stsnb run --check --gpus N``'s layout: the plan's notebooks on N GPUs in groups that run side by side, as a
``stsnb run --parallel`` spec and as one Slurm job per group (``scripts/slurm/paper.sbatch --only``).

Each training notebook's hours are priced again for each group size it could run on (``plan_costs.notebook_cost``'s
fits on that many processes): a multi-process notebook with ``num_processes: "auto"`` takes every GPU of its group that
divides its global batches, so only the sizes where it uses them all are considered, and only those whose memory rows
fit the GPU (``--gpu-memory``, else the memory of ``--gpu-type``); a single-process notebook uses one GPU of any
group. Every split of the N GPUs into groups and every assignment of the notebooks to them is tried (a few thousand
for 8 GPUs); the layout kept finishes first (the slowest group's hours), then holds the fewest GPU-hours (each group
as a job of its own, its GPUs held until its last notebook ends), then has the fewest groups; GPUs that no group needs
stay free. A notebook estimated
past its timeout at a size is not placed there. Notebooks without fits (00, 01) join the group that ends first.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# GPU memory per type (GiB), for the layout when --gpu-memory is not given (cost_estimate.GPU_TYPES' cards)
GPU_MEMORY_GIB = {"a100-80gb": 80, "h100-sxm": 80, "h200": 141, "l40s": 48, "rtx-4090": 24, "a6000": 48}
SLURM_SCRIPT = "scripts/slurm/paper.sbatch"


@dataclass(frozen=True)
class Group:
    gpus: tuple[int, ...]
    notebooks: tuple[str, ...]
    hours: float  # the notebooks one after the other
    used: int  # the most GPUs one of its notebooks uses


@dataclass(frozen=True)
class Layout:
    groups: tuple[Group, ...]
    sequential_hours: float  # every notebook one after the other on all the GPUs
    timeouts: Mapping[str, float | None]
    light: tuple[str, ...] = ()  # notebooks without fits (minutes): their timeouts do not set a job's time limit
    gpus: int = 0  # the GPUs given (those no group takes stay free)

    @property
    def hours(self) -> float:
        return max(group.hours for group in self.groups)

    def spec(self) -> str:
        """The ``--parallel`` argument."""
        return " ".join(f"{','.join(map(str, g.gpus))}:{','.join(g.notebooks)}" for g in self.groups)

    def sbatch_lines(self, profile: str) -> list[str]:
        """One Slurm job per group (``job_line``): its GPUs, its training notebooks' timeouts and an hour."""
        return [
            job_line(
                len(g.gpus), g.notebooks, [self.timeouts.get(n) for n in g.notebooks if n not in self.light], profile
            )
            for g in self.groups
        ]

    def markdown(self, profile: str) -> str:
        lines = [
            "| GPUs | notebooks, one after the other | estimated hours | GPUs used |",
            "|---|---|---:|---:|",
        ]
        for g in self.groups:
            lines.append(f"| {','.join(map(str, g.gpus))} | {', '.join(g.notebooks)} | {g.hours:.1f} | {g.used} |")
        taken = sum(len(g.gpus) for g in self.groups)
        free = ""
        if taken < self.gpus:
            which = f"GPU {taken} stays" if taken == self.gpus - 1 else f"GPUs {taken}-{self.gpus - 1} stay"
            free = f" {which} free: no notebook is faster on more."
        lines += [
            "",
            f'`stsnb run --profile {profile} --parallel "{self.spec()}"`: about {self.hours:.1f} h, against '
            f"{self.sequential_hours:.1f} h one notebook after another on all {self.gpus} GPUs.{free} As Slurm jobs, "
            "one per group:",
            "",
            "```bash",
            *self.sbatch_lines(profile),
            "```",
        ]
        return "\n".join(lines)


def job_line(gpus: int, notebooks: Sequence[str], timeouts: Sequence[float | None], profile: str) -> str:
    """``sbatch --gpus-per-node=N --time=D-HH:00:00 scripts/slurm/paper.sbatch --only ...``: the time limit is the
    notebooks' timeouts and an hour (none where one has no timeout: the script's own)."""
    time_limit = ""
    if all(timeouts):
        days, hours = divmod(int(-(-(sum(timeouts) / 3600 + 1) // 1)), 24)
        time_limit = f" --time={days}-{hours:02d}:00:00"
    only = ",".join(notebooks) + (f" --profile {profile}" if profile != "paper" else "")
    return f"sbatch --gpus-per-node={gpus}{time_limit} {SLURM_SCRIPT} --only {only}"


def notebook_jobs(used: Mapping[str, int], order: Sequence[str], timeouts: Mapping[str, float | None],
                  profile: str) -> list[str]:  # fmt: skip
    """One Slurm job per training notebook, with the GPUs it uses (``used``; a cluster runs them side by side on
    its nodes); the notebooks without fits (not in ``used``) go with the job of fewest GPUs."""
    timed = [name for name in order if name in used]
    light = [name for name in order if name not in used]
    smallest = min(timed, key=lambda name: (used[name], -timed.index(name)), default=None)
    lines = []
    for name in timed:
        names = [*light, name] if name == smallest else [name]
        lines.append(job_line(used[name], names, [timeouts.get(name)], profile))
    return lines


def _partitions(n: int, largest: int | None = None) -> list[tuple[int, ...]]:
    """The ways to write ``n`` as a sum of group sizes, largest first."""
    largest = n if largest is None else largest
    if n == 0:
        return [()]
    return [(k, *rest) for k in range(min(n, largest), 0, -1) for rest in _partitions(n - k, k)]


def best_layout(
    order: Sequence[str],
    hours_at: Callable[[str, int], tuple[float, int] | None],
    gpus: int,
    timeouts: Mapping[str, float | None],
) -> Layout | None:
    """The layout of the module docstring for the notebooks in ``order`` on ``gpus`` GPUs. ``hours_at(name, size)``:
    ``(hours, GPUs used)`` of a notebook in a group of ``size`` GPUs, None where it cannot run there, ``(0.0, 0)`` for
    a notebook without fits. None when no layout places every notebook."""
    light = [name for name in order if hours_at(name, 1) == (0.0, 0)]
    timed = [name for name in order if name not in light]
    sequential = sum((hours_at(name, gpus) or (float("inf"), 0))[0] for name in order)
    best: tuple[tuple[float, float, int], tuple[Group, ...]] | None = None
    for sizes in (split for n in range(1, gpus + 1) for split in _partitions(n)):  # GPUs no group needs stay free
        for assignment in itertools.product(range(len(sizes)), repeat=len(timed)):
            groups = _groups(sizes, assignment, timed, hours_at, timeouts)
            if groups is None:
                continue
            held = sum(len(g.gpus) * g.hours for g in groups)
            key = (round(max(g.hours for g in groups), 3), round(held, 3), len(groups))
            if best is None or key < best[0]:
                best = (key, groups)
    if best is None:
        return None
    groups = list(best[1])
    if light:  # the notebooks without fits go first in the group that ends first
        first = min(range(len(groups)), key=lambda i: groups[i].hours)
        g = groups[first]
        groups[first] = Group(g.gpus, tuple(light) + g.notebooks, g.hours, g.used)
    return Layout(tuple(sorted(groups, key=lambda g: g.gpus)), sequential, timeouts, tuple(light), gpus)


def _groups(sizes, assignment, timed, hours_at, timeouts) -> tuple[Group, ...] | None:
    """The groups of one assignment of ``timed`` notebooks to groups of ``sizes`` (GPU indices in order), or None
    where a group is empty or a notebook cannot run in its group or would pass its timeout there."""
    members: list[list[str]] = [[] for _ in sizes]
    for name, index in zip(timed, assignment, strict=True):
        members[index].append(name)
    if any(not m for m in members):
        return None
    groups, start = [], 0
    for size, names in zip(sizes, members, strict=True):
        total, used = 0.0, 0
        for name in names:
            priced = hours_at(name, size)
            limit = timeouts.get(name)
            if priced is None or (limit is not None and priced[0] * 3600 > limit):
                return None
            total, used = total + priced[0], max(used, priced[1])
        if used < size:  # a GPU no notebook of the group uses: a smaller group does the same
            return None
        ordered = tuple(name for name in timed if name in names)
        groups.append(Group(tuple(range(start, start + size)), ordered, total, used))
        start += size
    return tuple(groups)
