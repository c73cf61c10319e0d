"""``stsnb.plots.figure`` hands back axes shaped as notebooks index them."""

from __future__ import annotations

from stsnb import plots


def test_figure_axes_follow_matplotlib_squeeze():
    _, single = plots.figure()
    _, row = plots.figure(ncols=3)
    _, grid = plots.figure(ncols=2, nrows=2)
    assert hasattr(single, "plot")
    assert row.shape == (3,) and hasattr(row[0], "plot")
    assert grid.shape == (2, 2)
