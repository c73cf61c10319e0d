"""Notebook 10's figure: each stage's score per task beside the paper's and the contrastive ceilings."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ... import evaluate, plots
from .pipeline import TemplateRun
from .prompts import TEMPLATE_NAMES
from .reported import REPORTED

# how the ceilings of ``notebook.LIMITS`` are written on the figure (mathtext)
LIMIT_TEXT = {"87.5 (Eq. 7)": "87.5 (Eq. 7)", "100 sqrt(3)/2 (ties)": r"$100\sqrt{3}/2 \approx 86.6$ (ties)"}
STAGE_COLOURS = {"untrained": "0.65", "stage 1": "tab:blue", "stage 2": "tab:orange"}


def short_task(task: str) -> str:
    """ "STSBenchmark" -> "STS-B", "SICKRelatedness" -> "SICK-R"."""
    return task.replace("Relatedness", "-R").replace("Benchmark", "-B")


def stages_and_ceiling(
    first: TemplateRun,
    stage2_label: str,
    paper_row: str,
    backbone: str,
    scope: str,
    limits: Mapping[str, float],
):
    """Bars of each task's Spearman x100 untrained, after stage 1 and after stage 2 (``first``: one template on one
    training seed), the paper's stage 2 (Table 2, ``paper_row`` Pcc-tuning) as a black tick on the stage-2 bar, the
    ceilings as horizontal lines; the legend sits below the axes, off the data, at 9 pt or more."""
    fig, ax = plots.figure(width=11, height=5.2)
    tasks = [t for t in first.stage1.scores if t != "avg"] + ["avg"]
    x = np.arange(len(tasks))
    series = {"stage 1": first.stage1.scores, "stage 2": first.stage2[stage2_label].scores}
    if first.untrained is not None:
        series = {"untrained": evaluate.spearman_scores(first.untrained), **series}
    width = 0.8 / len(series)
    offsets = {label: (i - (len(series) - 1) / 2) * width for i, label in enumerate(series)}
    for label, scores in series.items():
        ax.bar(
            x + offsets[label],
            [scores[t] for t in tasks],
            width=width,
            color=STAGE_COLOURS[label],
            label=f"ours, {label} (seed {first.seed})",
        )
    paper = [REPORTED.lookup("Table 2", f"{paper_row} Pcc-tuning", t) for t in tasks]
    ax.scatter(
        x + offsets["stage 2"],
        [p[0].value if p else np.nan for p in paper],
        marker="_",
        s=400,
        linewidths=2.5,
        color="black",
        label=f"paper, {paper_row} Pcc-tuning (Table 2)",
        zorder=3,
    )
    for (label, value), style in zip(limits.items(), ("--", ":"), strict=True):
        text = LIMIT_TEXT.get(label, label)
        ax.axhline(value, color="crimson", linestyle=style, linewidth=1.2, label=f"contrastive ceiling {text}")
    ax.set_xticks(x, [short_task(t) for t in tasks])
    ax.set(
        title=f"{backbone} ({TEMPLATE_NAMES[first.template]}): each stage, {scope}",
        ylabel=r"Spearman $\times 100$",
        ylim=(0, 100),
    )
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: not labels[i].startswith("ours"))  # our bars first
    ax.legend(
        [handles[i] for i in order],
        [labels[i] for i in order],
        fontsize=9,
        ncol=3,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.1),
    )
    return fig
