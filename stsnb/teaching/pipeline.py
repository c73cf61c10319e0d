"""The pipeline figure each training notebook opens with: data -> model -> loss -> evaluation -> verdict, with this
paper's parts named in each box, so a student sees the whole run before its details."""

from __future__ import annotations

from collections.abc import Sequence

from .plots import use_style

STAGES = ("data", "model", "loss", "evaluation", "verdict")


def pipeline_figure(parts: Sequence[str], *, title: str | None = None, width: float = 10.0):
    """Five boxes left to right, one per stage of ``STAGES``, each with its stage name and this paper's part under it
    (``parts``: five short texts, "\\n" for a second line), joined by arrows. Returns the figure."""
    parts = [str(p) for p in parts]
    if len(parts) != len(STAGES):
        raise ValueError(f"pipeline_figure needs {len(STAGES)} parts ({', '.join(STAGES)}), got {len(parts)}")
    import matplotlib.pyplot as plt

    use_style()
    fig = plt.figure(figsize=(width, 2.2))  # no constrained layout: one axes over the whole figure
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(0, len(STAGES))
    ax.set_ylim(0, 1)
    box = {"boxstyle": "round,pad=0.4", "facecolor": "#eef3fa", "edgecolor": "#4a6fa5"}
    for i, (stage, part) in enumerate(zip(STAGES, parts, strict=True)):
        ax.text(i + 0.5, 0.78, stage, ha="center", va="center", fontsize=11, fontweight="bold")
        ax.text(i + 0.5, 0.42, part, ha="center", va="center", fontsize=9, bbox=box, wrap=True)
        if i:
            ax.annotate("", xy=(i + 0.08, 0.78), xytext=(i - 0.08, 0.78), arrowprops={"arrowstyle": "->"})
    if title:
        ax.text(len(STAGES) / 2, 0.98, title, ha="center", va="top", fontsize=10)
    return fig
