"""The training loss and the dev score of a notebook's runs against the optimizer step, and the same numbers in words.

A history is the list of rows ``stsnb.training.train`` writes while it trains: ``{"step", "epoch", "loss", ...}`` (the
mean micro-batch loss since the previous loss row) and ``{"step", "epoch", "dev"}`` (the dev score of an evaluation;
step 0 is the untrained encoder). ``plot`` draws both against the step, one line per run; ``describe`` says what the
lines show, to print under the figure; ``dips`` names the runs whose dev score fell below its step-0 value before
rising.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

from . import plots

History = Sequence[Mapping[str, Any]]
LOG_RATIO = 30.0  # a loss panel spanning more than this factor (all values > 0) gets a log axis


def series(history: History, key: str) -> list[tuple[int, float]]:
    """The (step, value) points of the rows of ``history`` that hold a finite ``key`` ("loss" or "dev")."""
    points = []
    for row in history:
        value = row.get(key)
        if value is not None and math.isfinite(float(value)):
            points.append((int(row["step"]), float(value)))
    return points


def plot(histories: Mapping[str, History], *, dev_label: str = "dev Spearman x100", title: str | None = None) -> Figure:
    """Two panels sharing the step axis: the training loss (the rows with "loss") and the dev score (the rows with
    "dev", label ``dev_label``), one line per run label of ``histories``, in the same colour in both panels. A panel
    no run has a point for is left out (a figure with one panel), rather than drawn empty; a run with one point
    shows a marker. The loss axis is logarithmic when every loss is positive and they span more than ``LOG_RATIO``.
    """
    kinds = [
        (key, label)
        for key, label in (("loss", "mean loss since the previous point"), ("dev", dev_label))
        if any(series(history, key) for history in histories.values())
    ]
    if not kinds:
        raise ValueError("no history row has a loss or a dev score: nothing to plot")
    fig, axes = plots.figure(ncols=len(kinds), width=4.6 * len(kinds) + 2.4, height=3.6, sharex=True)
    axes = [axes] if len(kinds) == 1 else list(axes)
    for ax, (key, label) in zip(axes, kinds, strict=True):
        values = []
        for i, (name, history) in enumerate(histories.items()):
            points = series(history, key)
            values += [v for _, v in points]
            if points:
                steps, ys = zip(*points, strict=True)
                ax.plot(steps, ys, color=f"C{i % 10}", marker="o" if len(points) < 30 else None, ms=3, label=name)
        if key == "loss" and min(values) > 0 and max(values) / min(values) > LOG_RATIO:
            ax.set_yscale("log")
        ax.set(xlabel="optimizer step", ylabel=label, title="training loss" if key == "loss" else "dev score")
    if title:
        fig.suptitle(title)
    plots.legend_outside(axes[-1])  # one legend for both panels: a run has the same colour in each
    return fig


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def _best(devs: Sequence[tuple[int, float]]) -> tuple[int, float]:
    """The highest dev point, the earliest of equal ones: the checkpoint selection keeps."""
    return max(devs, key=lambda point: (point[1], -point[0]))


def describe_one(name: str, history: History) -> str:
    """One sentence on one run: its loss from the first logged mean to the last, over how many steps (one logged
    mean, as when the loss is logged only at the one evaluation, is said as the mean over its steps, not as a loss
    that stayed put), and its dev score at the first evaluation, the best one and its step, and the last (when it
    differs from the best)."""
    losses, devs = series(history, "loss"), series(history, "dev")
    parts = []
    if len(losses) == 1:
        ((step, mean),) = losses
        over = "step 1" if step == 1 else f"steps 1-{step}"
        parts.append(f"training loss {mean:.3g} (mean over {over}: one logged point)")
    elif losses:
        (_, first), (last_step, last) = losses[0], losses[-1]
        parts.append(f"training loss {first:.3g} -> {last:.3g} over {_steps(last_step)}")
    if devs:
        (start_step, start), (end_step, end) = devs[0], devs[-1]
        best_step, best = _best(devs)
        text = f"dev {start:.2f} at step {start_step} -> best {best:.2f} at step {best_step}"
        if best_step == start_step and len(devs) > 1:
            text += " (no later evaluation beat it)"
        if end_step != best_step:
            text += f", last {end:.2f} at step {end_step}"
        parts.append(text)
    if not parts:
        return f"{name}: no loss or dev score was logged."
    return f"{name}: " + "; ".join(parts) + "."


def describe(histories: Mapping[str, History]) -> str:
    """One sentence per run of ``histories`` (``describe_one``), one per line, to print under ``plot``'s figure."""
    return "\n".join(describe_one(name, history) for name, history in histories.items())


def dips(histories: Mapping[str, History], start_name: str = "step-0") -> str:
    """Which runs' dev score fell below its value at the first evaluation (step 0: ``start_name``, e.g. "untrained")
    before reaching its best above it, by how much and where; a sentence per such run after one that counts them
    among the runs with two or more dev points. A fall that comes back is invisible in the kept checkpoint alone."""
    lines, counted = [], 0
    for name, history in histories.items():
        dev = series(history, "dev")
        if len(dev) < 2:
            continue
        counted += 1
        (start_step, start), (best_step, best) = dev[0], _best(dev)
        low_step, low = min((point for point in dev if point[0] < best_step), key=lambda p: p[1], default=dev[0])
        if low < start < best:
            lines.append(
                f"{name}: dev {start:.2f} at step {start_step}, down to {low:.2f} at step {low_step} "
                f"({low - start:+.2f}), then up to its best {best:.2f} at step {best_step}"
            )
    head = f"{len(lines)} of {counted} runs fell below their {start_name} dev score before rising past it"
    return "\n".join([head + (":" if lines else "."), *lines])
