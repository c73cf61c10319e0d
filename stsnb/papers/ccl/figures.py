"""Notebook 40's figures in the ``stsnb.teaching.plots`` style: text at 9 pt or more, mathtext for symbols, legends off
the data, bars from zero, one quantity per axis. Each function takes plain results and returns a figure.

- :func:`labels`: the C-STS label distributions and the label gaps of the training quadruples (Section 3.1).
- :func:`objectives`: Quad, FDL, RDL, ACL, W-ACL for one quadruple (Eq. 1, 5-9) and Eq. 11's same-pair weight.
- :func:`table3`: our Table 3 runs beside the paper's numbers, and the selection curves (Section 4.3).
- :func:`table4`: the change when one loss is removed (Section 4.4).
- :func:`table5_figure2`: the paper's Table 5 over sigma, and our sigma / tau claims with their intervals.
- :func:`appendix_a`: the Appendix A plane with the thresholds of Eq. 16-17 drawn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ...data import CSTSRecord
from ...teaching import plots
from ...teaching.pipeline import Pipeline, count
from ...training import conditional_losses
from .objectives import acl, fdl, rdl
from .quadruples import Quadruple
from .reported import SIGMAS

TEXT_PT = plots.MIN_POINTS  # the smallest text of any figure (readable on a projector)
SPEARMAN = plots.SPEARMAN_LABEL


def _bars(ax: Axes, x, heights, **kwargs) -> None:
    container = ax.bar(x, heights, **kwargs)
    ax.bar_label(container, fontsize=TEXT_PT, padding=2)
    ax.set_ylim(0, 1.15 * max(max(heights), 1))  # from zero, with room for the labels


def labels(
    train_records: Sequence[CSTSRecord], validation_records: Sequence[CSTSRecord], quadruples: Sequence[Quadruple]
) -> Figure:
    """Section 3.1: rows per gold label (1-5) in each split, and the training quadruples per label gap
    ``l_pos - l_neg``, each on its own panel (a label and a gap are different quantities)."""
    fig = plots.blank_figure(13.0, 3.6)
    axes = fig.subplots(1, 3)
    levels = np.arange(1, 6)
    for ax, (name, records) in zip(
        axes[:2], (("train", train_records), ("validation", validation_records)), strict=True
    ):
        _bars(ax, levels, [sum(r.label == v for r in records) for v in levels], color="C0")
        ax.set(title=f"{name}: {len(records)} rows by gold label", xlabel="gold label (1-5)", ylabel="rows")
        ax.set_xticks(levels)
    gaps = [q.label_high - q.label_low for q in quadruples]
    steps = np.arange(0, 5)
    _bars(axes[2], steps, [gaps.count(g) for g in steps], color="C1")
    axes[2].set(
        title=f"train: {len(quadruples)} quadruples by label gap",
        xlabel=r"$l_{pos} - l_{neg}$ (on the 1-5 scale)",
        ylabel="quadruples",
    )
    axes[2].set_xticks(steps)
    return fig


def objectives(label_pos: float = 0.75, label_neg: float = 0.5) -> Figure:
    """Eq. 1 and 5-9 for one quadruple as a function of the cosine gap, and Eq. 11's weight of the same-pair
    negative as a function of its label, for each sigma of Table 5."""
    fig = plots.blank_figure(12.5, 3.8)
    axes = fig.subplots(1, 2)
    gap = torch.linspace(-1, 2, 301, dtype=torch.float64)
    zeros = torch.zeros_like(gap)
    pos, neg = torch.full_like(gap, label_pos), torch.full_like(gap, label_neg)
    curves = {
        r"Quad, $\lambda = 1$ (1)": torch.clamp(1 + zeros - gap, min=0),
        "FDL (5)": fdl(gap, zeros, pos, neg, "none"),
        "RDL (6)": rdl(gap, zeros, pos, neg, "none"),
        "ACL (8)": acl(gap, zeros, pos, neg, "none"),
    }
    for name, values in curves.items():
        axes[0].plot(gap, values, label=name)
    axes[0].plot(gap, conditional_losses.w_acl(gap, zeros, pos, neg, "none"), "--", label="W-ACL (9)")
    axes[0].axvline(label_pos - label_neg, color="grey", linestyle=":", label=r"$l_{pos} - l_{neg}$")
    axes[0].set(
        title=rf"one quadruple, $l_{{pos}}$ = {label_pos:g}, $l_{{neg}}$ = {label_neg:g}",
        xlabel=r"$\cos_{pos} - \cos_{neg}$",
        ylabel="loss",
    )
    plots.legend_outside(axes[0])
    label = torch.linspace(0, 1, 101)
    for sigma in SIGMAS:
        weight = [conditional_losses.bcl_weights(torch.tensor([x, 0.0]), sigma)[0, 0].item() for x in label]
        axes[1].plot(label, weight, label=rf"$\sigma$ = {sigma:g}")
    axes[1].set(
        title=r"Eq. 11: weight of the same-pair negative ($i = j$)",
        xlabel="label $l$ (scaled)",
        ylabel=r"$\alpha_{ii}$",
    )
    plots.legend_outside(axes[1])
    return fig


def table3(
    rows: Sequence[tuple[str, float, float, float]], curves: Mapping[str, Sequence[tuple[int, float]]]
) -> Figure:
    """Table 3: ``rows`` = (run, our Spearman, the paper's, our untrained encoder's), as horizontal bars from zero
    (ours on the validation split, the paper's on the original test split: not comparable levels); ``curves`` = the
    selection Spearman of each run by optimizer step."""
    fig = plots.blank_figure(13.0, 1.6 + 0.55 * len(rows))
    axes = fig.subplots(1, 2, width_ratios=[1.1, 1.0])
    ax = axes[0]
    y = np.arange(len(rows))
    ours = ax.barh(y - 0.2, [r[1] for r in rows], 0.4, label="ours (re-annotated validation)")
    ax.barh(y + 0.2, [r[2] for r in rows], 0.4, label="paper (original test)", color="C7")
    ax.bar_label(ours, fmt="%.1f", fontsize=TEXT_PT, padding=2)
    ax.scatter([r[3] for r in rows], y - 0.2, marker="|", s=300, color="black", zorder=3, label="ours untrained")
    ax.set_yticks(y, [r[0] for r in rows])
    ax.set_ylim(len(rows) - 0.5, -0.6)
    ax.set_xlim(0, 1.12 * max(max(r[1], r[2], r[3]) for r in rows))
    ax.set(title="Table 3 (levels not comparable)", xlabel=SPEARMAN)
    ax.grid(False, axis="y")
    plots.legend_outside(ax)
    ax = axes[1]
    for name, points in curves.items():
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", ms=3, label=name)
    ax.set(title="selection Spearman during training", xlabel="optimizer step", ylabel=SPEARMAN)
    plots.legend_outside(ax)
    return fig


def table4(series: Mapping[str, tuple[Sequence[str], Sequence[float]]]) -> Figure:
    """Table 4: per series (ours or the paper's, per architecture), Spearman minus full CCL's for CCL and each
    ablation in the order given, as points (the ablations are categories, not a sweep)."""
    fig = plots.blank_figure(9.0, 3.6)
    ax = fig.subplots()
    names = next(iter(series.values()))[0]
    for i, (name, (_, values)) in enumerate(series.items()):
        x = np.arange(len(values)) + 0.08 * (i - (len(series) - 1) / 2)  # side by side, not on top of each other
        marker = "o" if name.startswith("ours") else "s"
        ax.plot(x, np.asarray(values) - values[0], marker, ms=7, label=name, color=f"C{i}")
    ax.set_xticks(np.arange(len(names)), names)
    ax.set_xlim(-0.5, len(names) - 0.5)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set(title="Table 4: change when one loss is removed", ylabel=f"{SPEARMAN}, minus full CCL")
    plots.legend_outside(ax)
    return fig


def table5_figure2(
    paper_sigmas: Mapping[float, float],
    paper_label: str,
    table2_sigma: float,
    claim_rows: Sequence[Mapping],
    margin: float,
) -> Figure:
    """Left: the paper's Table 5 (Spearman by sigma, its range annotated). Right: our sigma and tau claims, each
    as Table 2's setting minus the other one with its paired 95% interval (the envelope over seeds), on an axis of
    stated span with the equivalence margin shaded, beside the paper's difference where it has one. Our points are
    differences with intervals, not a curve: two runs are no trend. Without a sigma or tau run (the class profile)
    there is no right panel: the left one alone, its title saying that no run of ours is drawn."""
    if not claim_rows:
        fig = plots.blank_figure(6.4, 3.1)
        axes = [fig.subplots(1, 1)]
    else:
        fig = plots.blank_figure(13.0, 1.9 + 0.6 * max(len(claim_rows), 2))
        axes = fig.subplots(1, 2, width_ratios=[0.8, 1.2])
    ax = axes[0]
    sigmas = sorted(paper_sigmas)
    values = [paper_sigmas[s] for s in sigmas]
    ax.plot(sigmas, values, "s-", color="C7")
    ax.scatter([table2_sigma], [paper_sigmas[table2_sigma]], color="C3", zorder=3, s=40)
    ax.annotate(
        rf"Table 2's $\sigma$ = {table2_sigma:g}",
        (table2_sigma, paper_sigmas[table2_sigma]),
        xytext=(0.5, 0.1),
        textcoords="axes fraction",
        ha="center",
        fontsize=TEXT_PT,
        arrowprops={"arrowstyle": "->", "color": "C3"},
    )
    span = max(values) - min(values)
    ax.set_ylim(min(values) - 1.5, max(values) + 1.0)
    none = "" if claim_rows else "\nours: no $\\sigma$ or $\\tau$ run in this profile"
    ax.set(
        title=f"paper, Table 5 ({paper_label}):\nrange {span:.1f} points{none}",
        xlabel=r"$\sigma$",
        ylabel=f"{SPEARMAN} (original validation)",
    )
    ax.set_xticks(sigmas)
    if not claim_rows:
        return fig
    ax = axes[1]
    y = np.arange(len(claim_rows))
    if claim_rows:
        ax.errorbar(
            [r["difference"] for r in claim_rows],
            y,
            xerr=[[r["difference"] - r["low"] for r in claim_rows], [r["high"] - r["difference"] for r in claim_rows]],
            fmt="o",
            capsize=4,
            label="ours, 95% paired interval",
        )
        known = [(i, r["paper_difference"]) for i, r in enumerate(claim_rows) if r.get("paper_difference") is not None]
        if known:
            ax.scatter([d for _, d in known], [i for i, _ in known], marker="s", color="C7", label="paper")
    ends = [abs(r[k]) for r in claim_rows for k in ("low", "high")]
    ends += [abs(r["paper_difference"]) for r in claim_rows if r.get("paper_difference") is not None]
    extent = 1.25 * max([margin, *ends])
    ax.axvspan(-margin, margin, color="C2", alpha=0.15, label=rf"equivalence margin $\pm${margin:g} ($\tau$)")
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlim(-extent, extent)
    ax.set_yticks(y, [f"{sweep_label(r['claim'])}\n{r['verdict']}" for r in claim_rows])
    ax.set_ylim(len(claim_rows) - 0.5, -0.5)
    ax.grid(False, axis="y")
    ax.set(
        title=r"ours: Table 2's $\sigma$, $\tau$ minus another (one run each)",
        xlabel=f"{SPEARMAN} difference (axis spans $\\pm${extent:.2g})",
    )
    plots.legend_outside(ax)
    return fig


_SWEEP = re.compile(r"^(Table 5|Figure 2), .*?(bi|tri)-encoder: CCL is robust to (sigma|tau) \(([^ ]+) vs ([^)]+)\)")
_SIGMA = re.compile(r"^Table 5, .*?(bi|tri)-encoder: CCL sigma=(\S+) > sigma=(\S+)$")  # the direction claim


def is_sweep_claim(claim: Mapping) -> bool:
    """A Table 5 (sigma, a direction claim; older runs: robustness) or Figure 2 (tau) claim of notebook 40."""
    text = str(claim.get("claim", ""))
    return bool(_SWEEP.match(text) or _SIGMA.match(text))


def sweep_label(text: str) -> str:
    """``"Table 5, minilm-l6 bi-encoder: CCL is robust to sigma (0.75 vs 0)"`` -> ``"bi: $\\sigma$ 0.75 minus 0"``."""
    sigma = _SIGMA.match(text)
    if sigma is not None:
        arch, ours, other = sigma.groups()
        return rf"{arch}: $\sigma$ {ours} minus {other}"
    match = _SWEEP.match(text)
    if match is None:
        raise ValueError(f"not a Table 5 / Figure 2 claim: {text!r}")
    _, arch, symbol, ours, other = match.groups()
    return rf"{arch}: $\{symbol}$ {ours} minus {other}"


def appendix_a(
    panels: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]], margin: float = 0.25, reading: str = "mirror"
) -> Figure:
    """Appendix A's plane, one panel per run: x = ``cos_pos - l_pos`` (positive too high), y = ``l_neg - cos_neg``
    (negative too low), flagged quadruples in red; Eq. 16's region (x > margin, y > 0) and, read as Eq. 16's mirror,
    Eq. 17's (y > margin, x > 0) shaded with their thresholds drawn. ``panels`` = name -> (x, y, flags)."""
    fig = plots.blank_figure(5.2 * len(panels) + 0.6, 4.6)
    axes = np.atleast_1d(fig.subplots(1, len(panels), sharex=True, sharey=True))
    for ax, (name, (x, y, flags)) in zip(axes, panels.items(), strict=True):
        ax.scatter(x[~flags], y[~flags], s=5, color="C0", alpha=0.4, label="quadruple")
        ax.scatter(x[flags], y[flags], s=14, color="C3", label="over-estimated (Eq. 16 or 17)")
        high = max(1.0, float(np.abs(np.concatenate([x, y])).max()) * 1.05)
        ax.fill_between([margin, high], 0, high, color="C3", alpha=0.08)
        ax.plot([margin, margin], [0, high], color="C3", lw=1, ls="--")
        box = {"facecolor": "white", "alpha": 0.7, "edgecolor": "none", "pad": 1}
        ax.text(
            high * 0.97, 0.03, f"Eq. 16: $x > {margin:g},\\ y > 0$", color="C3", ha="right", fontsize=TEXT_PT, bbox=box
        )
        if reading == "mirror":
            ax.fill_between([0, high], margin, high, color="C1", alpha=0.08)
            ax.plot([0, high], [margin, margin], color="C1", lw=1, ls="--")
            ax.text(
                0.03,
                high * 0.95,
                f"Eq. 17: $y > {margin:g},\\ x > 0$",
                color="C1",
                va="top",
                fontsize=TEXT_PT,
                bbox=box,
            )
        ax.axvline(0, color="grey", lw=0.8)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xlim(-high, high)
        ax.set_ylim(-high, high)
        ax.set(
            title=f"{name}: {int(flags.sum())} of {len(flags)} over-estimated",
            xlabel=r"$\cos_{pos} - l_{pos}$ (positive too high $\rightarrow$)",
            ylabel=r"$l_{neg} - \cos_{neg}$ (negative too low $\rightarrow$)",
        )
    plots.legend_outside(axes[-1])
    return fig


def pipeline(p: Mapping) -> Pipeline:
    """Notebook 40's opening figure from its parameters ``p`` (``stsnb.teaching.pipeline``): the C-STS quadruples,
    the encoder, QuMSE against CCL, the scored validation rows and the main claim (Table 3 on the bi-encoder)."""
    encoders = " and ".join(f"{a}-" for a in p["architectures"]).removesuffix("-") + "-encoder"
    seeds = p["training_seeds"]
    return Pipeline(
        "40_ccl_csts",
        "CCL on C-STS, as this notebook runs by default (the class profile)",
        (
            f"{count(p['train_pairs'], 'C-STS')}\nsentence pairs,\neach under two\nconditions",
            f"{p['backbones'][0]},\n{encoders}:\none input holds\nsentence, condition",
            "QuMSE vs CCL\n(W-ACL + BCL\n+ C-MSE)",
            f"{count(p['eval_rows'], 'validation')}\nrows (not the\ntest split);\nSpearman x100",
            f"CCL vs QuMSE,\n{seeds} seed{'s' if seeds != 1 else ''}, pairs\nresampled with\nboth conditions",
        ),
    )
