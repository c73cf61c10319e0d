"""Notebook 10's figure: each stage's score per task beside the paper's and the contrastive ceilings."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ...evaluation import evaluate, stats
from ...teaching import plots
from ...teaching.pipeline import Pipeline, count
from .pipeline import TemplateRun
from .prompts import TEMPLATE_NAMES
from .reported import REPORTED

# how the ceilings of ``notebook.LIMITS`` are written on the figure (mathtext)
LIMIT_TEXT = {"87.5 (Eq. 7)": "87.5 (Eq. 7)", "100 sqrt(3)/2 (ties)": r"$100\sqrt{3}/2 \approx 86.6$ (ties)"}
STAGE_COLOURS = {"untrained": "0.65", "stage 1": "tab:blue", "stage 2": "tab:orange"}


def short_task(task: str) -> str:
    """ "STSBenchmark" -> "STS-B", "SICKRelatedness" -> "SICK-R"."""
    return task.replace("Relatedness", "-R").replace("Benchmark", "-B")


def score_intervals(
    predictions: evaluate.TaskPredictions, *, n_resamples: int = 1000, seed: int = 0, confidence_level: float = 0.95
) -> dict[str, tuple[float, float]]:
    """Each task's Spearman x100 with its percentile bootstrap interval over the scored test pairs (the pairs of a
    task drawn with replacement), and ``"avg"``'s: each replicate's mean over the tasks, every task resampled
    independently (a stratified bootstrap, as ``stats.paired_average_difference`` for a difference). One model's
    interval: two models scored on the same pairs can overlap here while their paired difference excludes 0."""
    if not predictions:
        raise ValueError("no task to score")
    rng = np.random.default_rng(seed)
    tail = 100 * (1 - confidence_level) / 2
    replicates = {}
    for task, (gold, pred) in predictions.items():
        n = len(gold)
        replicates[task] = stats.resampled_spearman(gold, pred, rng.integers(0, n, size=(n_resamples, n)))
    replicates["avg"] = np.nanmean(np.stack(list(replicates.values())), axis=0)
    return {
        t: (float(np.nanpercentile(r, tail)), float(np.nanpercentile(r, 100 - tail))) for t, r in replicates.items()
    }


def stages_and_ceiling(
    first: TemplateRun,
    stage2_label: str,
    paper_row: str,
    backbone: str,
    scope: str,
    limits: Mapping[str, float],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
):
    """Bars of each task's Spearman x100 untrained, after stage 1 and after stage 2 (``first``: one template on one
    training seed), each with its 95% bootstrap interval over the test pairs (:func:`score_intervals`), the paper's
    stage 2 (Table 2, ``paper_row`` Pcc-tuning) as a black tick on the stage-2 bar, the ceilings as horizontal lines;
    the legend sits below the axes, off the data, at 9 pt or more."""
    fig, ax = plots.figure(width=11, height=5.2)
    tasks = [t for t in first.stage1.scores if t != "avg"] + ["avg"]
    x = np.arange(len(tasks))
    series = {"stage 1": first.stage1.predictions, "stage 2": first.stage2[stage2_label].predictions}
    if first.untrained is not None:
        series = {"untrained": first.untrained, **series}
    width = 0.8 / len(series)
    offsets = {label: (i - (len(series) - 1) / 2) * width for i, label in enumerate(series)}
    for number, (label, predictions) in enumerate(series.items()):
        scores = evaluate.spearman_scores(predictions)
        ax.bar(
            x + offsets[label],
            [scores[t] for t in tasks],
            width=width,
            color=STAGE_COLOURS[label],
            label=f"ours, {label} (seed {first.seed})",
        )
        intervals = score_intervals(predictions, n_resamples=n_resamples, seed=seed)
        ax.vlines(
            x + offsets[label],
            [intervals[t][0] for t in tasks],
            [intervals[t][1] for t in tasks],
            color="0.15",
            linewidth=1.2,
            label="95% interval of each bar over the test pairs" if number == 0 else None,
            zorder=3,
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


def pipeline(p: Mapping) -> Pipeline:
    """Notebook 10's opening figure from its parameters ``p`` (``stsnb.teaching.pipeline``): the two stages' data,
    the prompt embedding with its adapter, Eq. 8 then Eq. 9, the scored test pairs, and the main claim with the
    control when ``control_study`` runs it."""
    seeds = len(p["training_seeds"])
    template = TEMPLATE_NAMES.get(p["templates"][0], p["templates"][0])
    adapter = f"QLoRA r {p['lora_r']}" if p["quantize_4bit"] else f"LoRA r {p['lora_r']}"
    tasks = "7 STS tasks" if p["eval_tasks"] == "all" else p["eval_tasks"]
    verdict = f"stage 2 vs stage 1,\n{seeds} seed{'s' if seeds != 1 else ''}"
    if p["control_study"]:
        verdict += "; control:\nInfoNCE on the\nstage-2 pairs"
    return Pipeline(
        "10_pcc_tuning",
        "Pcc-tuning, as this notebook runs by default (the class profile)",
        (
            f"{count(p['stage1_triplets'], 'NLI triplets')}\n(stage 1); {count(p['stage2_pairs'], '').strip()}"
            "\nSTS-B + SICK-R\npairs (stage 2)",
            f"{p['backbone']},\n{template} prompt,\nlast token;\n{adapter}",
            "stage 1: InfoNCE\n(Eq. 8); stage 2:\n1 - Pearson (Eq. 9)",
            f"{tasks},\n{count(p['eval_max_pairs'], 'test pairs', 'every')}\nper task;\nSpearman x100",
            verdict,
        ),
    )
