"""The notebook's figures of STS-Regression's tables, in the ``stsnb.teaching.plots`` style (text at 9 pt or more,
legends off the data, bars from zero, or points where bars from zero would hide the differences, as in Tables 1 and 3):
Table 1 (Section 4.1), Table 3 (Section 4.2), Table 4 (Section 4.3), Tables 5 and 6 (Sections 4.4-4.5).

Each function takes the notebook's results and returns a figure (``None`` when there is nothing to draw, with
the reason in a sentence the notebook prints instead of an empty panel).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ...evaluation import claims
from ...teaching import plots
from ...teaching.pipeline import Pipeline, count

TEXT_PT = plots.MIN_POINTS  # the smallest text of any figure (readable on a projector)
SPEARMAN = plots.SPEARMAN_LABEL


def claims_forest(ax: Axes, rows: Sequence[Mapping], title: str, xlabel: str, separator: str = " vs ") -> None:
    """One claim per row, the first on top: our difference ``a - b`` with its 95% paired interval (the envelope
    over training seeds), the paper's difference where it has one, 0 marked, and the equivalence margin shaded
    for a robustness claim. Each row's label names ``a``, ``b`` (after the row's ``backbone``, when it names one) and
    the verdict with its seeds."""
    y = np.arange(len(rows))
    ax.errorbar(
        [r["difference"] for r in rows],
        y,
        xerr=[[r["difference"] - r["low"] for r in rows], [r["high"] - r["difference"] for r in rows]],
        fmt="o",
        capsize=3,
        label="ours (95% paired interval)",
    )
    known = [(i, r["paper_difference"]) for i, r in enumerate(rows) if r.get("paper_difference") is not None]
    if known:
        ax.scatter(
            [d for _, d in known],
            [i for i, _ in known],
            marker="s",
            color="grey",
            zorder=3,
            label="the paper's difference",
        )
    margins = {r["margin"] for r in rows if claims.is_equivalence(r)}
    for margin in margins:
        ax.axvspan(-margin, margin, color="C2", alpha=0.12, label=rf"equivalence margin $\pm${margin:g}")
    ax.axvline(0, color="black", linewidth=0.8)
    names = [f"{r['backbone']}: " if r.get("backbone") else "" for r in rows]  # when several backbones ran
    labels = [
        f"{name}{r['a']}{separator}{r['b']}\n{claims.verdict_text(r)}" for name, r in zip(names, rows, strict=True)
    ]
    ax.set_yticks(y, labels, fontsize=TEXT_PT)
    ax.set_ylim(len(rows) - 0.5, -0.5)  # the first claim on top, one row's height each (one row too)
    ax.grid(False, axis="y")
    ax.set(title=title, xlabel=xlabel)
    plots.legend_outside(ax)


LOSS_NAMES = {  # Table 1's row names, on two lines where they are long (tick labels under narrow bars)
    "cross_entropy": "cross\nentropy",
    "l1": "L1",
    "translated_relu": "Translated\nReLU",
    "mse": "MSE",
    "smooth_k2": "Smooth\nK2",
    "smooth_k2_rounded": "Smooth K2\nrounded",  # claims.ROUNDED_K2: on cross entropy's class ids
}


TABLE1_NOTE = "points, not bars: the losses lie a few points apart (the axis does not start at 0)"


def table1(
    scores: Mapping[tuple[str, str, int], Mapping[str, float]],
    untrained: Mapping[str, Mapping[str, float]],
    claim_rows: Sequence[Mapping],
    arms: Sequence[str],
    average_name: str,
    scope: str,
) -> Figure:
    """Table 1 (Section 4.1) on our runs, by backbone (the keys of ``untrained``, its scores before fine-tuning).
    Top: each arm's test average as a **point** per training run (``scores`` by (backbone, arm, seed): every seed it
    ran on), their mean as a short bar labelled with its value, and the untrained encoder as a dashed line. Not bars
    from zero: the losses lie a few points apart near 55-60, which bars from zero would flatten into equal heights
    (``TABLE1_NOTE`` says so on the figure). Below, when there are any, the Table 1 claims ``a - b`` of
    ``claim_rows`` with their intervals beside the paper's differences (``claims_forest``). The training curves are
    ``stsnb.teaching.training_curves``' figure."""
    backbones = list(untrained)
    layout = [["levels"]] + ([["claims"]] if claim_rows else [])
    ratios = [3.8] + ([0.8 + 0.55 * len(claim_rows)] if claim_rows else [])
    fig = plots.blank_figure(11.0 + 2.0 * (len(backbones) - 1), sum(ratios) + 0.8)
    panels = fig.subplot_mosaic(layout, height_ratios=ratios)
    ax = panels["levels"]
    x = np.arange(len(arms))
    width = 0.8 / len(backbones)
    for i, backbone in enumerate(backbones):
        prefix = f"{backbone} " if len(backbones) > 1 else ""
        colour = f"C{i}"
        ax.axhline(untrained[backbone]["avg"], color=colour, linestyle="--", linewidth=1, label=f"{prefix}untrained")
        offset = (i - (len(backbones) - 1) / 2) * width
        for j, name in enumerate(arms):
            values = [v["avg"] for (b, n, _), v in scores.items() if (b, n) == (backbone, name)]
            if not values:
                continue
            ax.plot([x[j] + offset] * len(values), values, "o", color=colour, alpha=0.7, label=f"{prefix}runs")
            mean = float(np.mean(values))
            bar = [x[j] + offset - width / 3, x[j] + offset + width / 3]
            ax.plot(bar, [mean] * 2, color=colour, linewidth=2.5, label=f"{prefix}mean of the runs")
            ax.annotate(
                f"{mean:.2f}",
                (x[j] + offset + width / 3, mean),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize=TEXT_PT,
            )
    ax.set_xticks(x, [LOSS_NAMES.get(n, n) for n in arms])
    ax.set_xlim(-0.6, len(arms) - 0.2)  # room for the last mean's label
    ax.yaxis.set_major_locator(MaxNLocator(steps=[1, 2, 5, 10]))
    ax.set(title=f"Ours: {average_name} of each run (points) and their mean (bar)\n({scope})", ylabel=SPEARMAN)
    ax.set_xlabel(TABLE1_NOTE)
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))  # one entry per backbone's runs and untrained line
    plots.legend_outside(ax, handles=list(unique.values()), labels=list(unique.keys()))

    if claim_rows:
        claims_forest(
            panels["claims"],
            claim_rows,
            "Table 1 claims: a - b on the same test pairs, beside the paper's a - b",
            f"{average_name} difference, {SPEARMAN}",
            separator=" - ",
        )
    return fig


TASK_NAMES = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R"}  # short tick labels
TABLE3_ARMS = ("before", "+Contrast", "+Ours")  # Table 3's rows of one encoder: untrained, the baseline, ours
TABLE3_NOTE = "points, not bars: the arms differ by a few points (the axis does not start at 0)"


def table3(
    scores: Mapping[str, Mapping[str, Mapping[str, float]]],
    curves: Mapping[str, Mapping[str, Sequence[tuple[int, float]]]],
    before_dev: Mapping[str, float],
    scope: str,
) -> Figure:
    """Table 3 (Section 4.2) on our contrastive encoders. Left: each arm's test score per task (``scores``: backbone
    -> arm of ``TABLE3_ARMS`` -> task -> Spearman x100) as a **point**, the arms side by side, one marker shape per
    backbone. Not bars: the arms of a contrastively trained encoder lie a few points apart near 80, which bars from
    zero would flatten into equal heights, so the axis spans the points (``TABLE3_NOTE`` says so on the figure).
    Right: the STS-B dev curve of stage 2 (+Ours) and of +Contrast (``curves``: backbone -> arm -> (step, score)),
    the encoder's dev score before training (``before_dev``) as a grey reference line."""
    backbones = list(scores)
    wider = 5.0 * (len(backbones) > 1)  # room for the legends' backbone names
    fig, (left, right) = plots.figure(ncols=2, width=13.0 + wider, height=4.2)
    tasks = list(scores[backbones[0]]["before"]) if backbones else []
    x = np.arange(len(tasks))
    group = 0.8 / max(1, len(backbones))  # each backbone's share of a task's slot, its arms a quarter of it apart
    markers, styles = "os^D", [("-", ":"), ("--", "-.")]
    for i, backbone in enumerate(backbones):
        prefix = f"{backbone} " if len(backbones) > 1 else ""
        for j, arm in enumerate(TABLE3_ARMS):
            offset = (i - (len(backbones) - 1) / 2) * group + (j - 1) * group / 4
            values = [scores[backbone][arm][t] for t in tasks]
            left.plot(x + offset, values, linestyle="none", marker=markers[i % 4], color=f"C{j}", label=prefix + arm)
        line, reference = styles[i % 2]
        for arm, points in curves.get(backbone, {}).items():
            if points:
                steps, values = zip(*points, strict=True)
                style = {"color": f"C{TABLE3_ARMS.index(arm)}", "linestyle": line, "marker": markers[i % 4]}
                right.plot(steps, values, label=prefix + arm, **style)
        right.axhline(before_dev[backbone], color="grey", linestyle=reference, label=f"{prefix}before")
    left.set_xticks(x, [TASK_NAMES.get(t, t) for t in tasks], rotation=30)
    left.yaxis.set_major_locator(MaxNLocator(steps=[1, 2, 5, 10]))  # ticks 1, 2 or 5 x 10^k apart, never 2.5
    left.set(title=f"Table 3, ours ({scope})", xlabel=TABLE3_NOTE, ylabel=SPEARMAN)
    right.set(title="STS-B dev Spearman: stage 2 vs +Contrast", xlabel="optimizer step", ylabel=SPEARMAN)
    for ax in (left, right):
        plots.legend_outside(ax)
    return fig


def table4_memory(rows: Sequence[Mapping], model: str) -> Figure:
    """Table 4 (Section 4.3), our sanity check: each memory run's figure after loading the model, with what
    training added stacked on it (``memory.MemoryReport.row`` rows; MiB of the measure they name)."""
    fig, ax = plots.figure()
    labels = [f"{r['method']}\nB={r['batch_size']} L={r['max_length']}" for r in rows]
    ax.bar(labels, [r["baseline_mb"] for r in rows], label="after loading the model")
    ax.bar(
        labels,
        [r["training_mb"] for r in rows],
        bottom=[r["baseline_mb"] for r in rows],
        label="added by training",
    )
    ax.set(title=f"Table 4 analogue: {model}", ylabel=f"MiB, {rows[0]['measure'] if rows else ''}")
    ax.set_ylim(0, 1.3 * max((r["peak_mb"] for r in rows), default=1))
    ax.legend(loc="upper left")
    return fig


def table5_table6(
    table5_rows: Sequence[Mapping], table6_rows: Sequence[Mapping], average_name: str
) -> tuple[Figure | None, list[str]]:
    """Tables 5 and 6 (Sections 4.4-4.5) on the Table 1 backbones: one ``claims_forest`` panel per table that has
    claims (Table 5: each (k, x0) minus Table 2's, with the equivalence margin; Table 6: (u,v,|u-v|) minus another
    head input). Returns the figure (None when neither table has a claim) and one sentence per table left out,
    saying why there is nothing to draw."""
    reasons = {
        "Table 5": "no buffered loss (Translated ReLU, Smooth K2) trained at a (k, x0) beside Table 2's setting "
        "(`sweep` adds none), so there is no Table 5 claim to draw",
        "Table 6": "no head input beside (u,v,|u-v|) was trained (`ablation_concatenations` is empty), so there is "
        "no Table 6 claim to draw",
    }
    panels = [
        ("Table 5", table5_rows, "Table 5: setting minus Table 2's"),
        ("Table 6", table6_rows, "Table 6: (u,v,|u-v|) minus another head input"),
    ]
    drawn = [(rows, title) for _, rows, title in panels if rows]
    missing = [f"{table}: {reasons[table]}." for table, rows, _ in panels if not rows]
    if not drawn:
        return None, missing
    fig = plots.blank_figure(11.0, sum(1.4 + 0.6 * len(rows) for rows, _ in drawn))
    axes = fig.subplots(len(drawn), 1, squeeze=False, height_ratios=[0.6 + 0.6 * len(rows) for rows, _ in drawn])
    for ax, (rows, title) in zip(axes[:, 0], drawn, strict=True):
        claims_forest(ax, rows, title, f"{average_name} difference, {SPEARMAN}")
    return fig, missing


LOSS_TEXT = {
    "cross_entropy": "cross entropy",
    "l1": "L1",
    "translated_relu": "Translated ReLU",
    "mse": "MSE",
    "smooth_k2": "Smooth K2",
}
TASK_TEXT = {  # Table 1's training pairs, as the figure's data box names them ({n}: how many)
    "nli": "{n} NLI pairs,\n3 ordered labels",
    "sts": "{n} STS-B +\nSICK-R pairs,\nscores 0-5",
    "sts_rounded": "{n} STS-B +\nSICK-R pairs,\nscores rounded\nto 6 classes",
}


def pipeline(p: Mapping) -> Pipeline:
    """Notebook 20's opening figure from its parameters ``p`` (``stsnb.teaching.pipeline``): Table 1's training
    pairs, the Siamese model, its losses, the scored test pairs and the main claim (Smooth K2 against cross
    entropy)."""
    seeds = len(p["main_claim_seeds"])
    losses = [LOSS_TEXT.get(loss, loss) for loss in p["table1_losses"]]
    tasks = "7 STS tasks" if p["eval_tasks"] == "all" else p["eval_tasks"]
    return Pipeline(
        "20_sts_regression",
        "STS-Regression, as this notebook runs by default (the class profile)",
        (
            TASK_TEXT.get(p["table1_task"], "{n} pairs").format(n=count(p["table1_pairs"], "").strip()),
            f"{p['backbones'][0]},\nSiamese: a head\non (u, v, |u - v|)",
            " vs\n".join(losses) + "\non the same labels",
            f"{tasks},\n{count(p['eval_max_pairs'], 'test pairs', 'every')}\nper task;\nSpearman x100",
            f"Smooth K2 vs\ncross entropy,\n{seeds} seed{'s' if seeds != 1 else ''}, paired\nbootstrap",
        ),
    )
