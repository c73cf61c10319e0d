"""One figure style for every notebook, and saving figures beside the run (PNG) while showing them inline."""

from __future__ import annotations

from pathlib import Path

import matplotlib

STYLE = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "font.size": 10,
}


def use_style() -> None:
    """Apply the stsnb figure style (called by ``figure``; call it once if you build figures yourself)."""
    matplotlib.rcParams.update(STYLE)


def figure(ncols: int = 1, nrows: int = 1, width: float | None = None, height: float | None = None, **kwargs):
    """``plt.subplots`` in the stsnb style, sized for ``ncols`` x ``nrows`` panels.

    Axes come back as matplotlib squeezes them: one ``Axes``, a 1-D array for one row or column, else 2-D.
    """
    import matplotlib.pyplot as plt

    use_style()
    size = (width or 4.2 * ncols + 0.6, height or 3.4 * nrows + 0.4)
    return plt.subplots(nrows, ncols, figsize=size, **kwargs)


def save(fig, run_or_dir, name: str) -> None:
    """Save ``fig`` as ``<run>/figures/<name>.png`` (the notebook still shows it inline). Returns nothing, so a cell
    ending with it shows no ``Out[]`` with a machine path."""
    folder = run_or_dir.figures_dir if hasattr(run_or_dir, "figures_dir") else Path(run_or_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    fig.savefig(path)
