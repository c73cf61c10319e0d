"""One figure style for every notebook, saving figures beside the run (PNG) while showing them inline, and a check
that a figure is readable (``figure_problems``: no overlapping text, nothing under 9 pt, no legend over the data)."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.text import Text

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
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
}
MIN_POINTS = 9  # the smallest text a projector still shows
CHECK_ENV = "STSNB_CHECK_FIGURES"  # "1": ``save`` refuses a figure with problems (CI's smoke run sets it)


def use_style() -> None:
    """Apply the stsnb figure style (called by ``figure``; call it once if you build figures yourself)."""
    matplotlib.rcParams.update(STYLE)


def figure(ncols: int = 1, nrows: int = 1, width: float | None = None, height: float | None = None, **kwargs):
    """``plt.subplots`` in the stsnb style, sized for ``ncols`` x ``nrows`` panels.

    Axes come back as matplotlib squeezes them: one ``Axes``, a 1-D array for one row or column, else 2-D. The layout
    is ``"constrained"`` unless ``layout=`` says otherwise.
    """
    import matplotlib.pyplot as plt

    use_style()
    size = (width or 4.2 * ncols + 0.6, height or 3.4 * nrows + 0.4)
    kwargs.setdefault("layout", "constrained")  # room for every label and for legends placed outside the axes
    return plt.subplots(nrows, ncols, figsize=size, **kwargs)


SPEARMAN_LABEL = r"Spearman $\times 100$"  # the y (or x) label of every score axis


def blank_figure(width: float, height: float):
    """An empty ``Figure`` in the stsnb style with the constrained layout, for figures that add their own panels
    (``fig.add_subplot``, ``subfigures``)."""
    import matplotlib.pyplot as plt

    use_style()
    return plt.figure(figsize=(width, height), layout="constrained")


def legend_outside(ax, where: str = "right", **kwargs) -> None:
    """The legend of ``ax`` beside it (``"right"``) or under its x-axis label (``"below"``), never over the data.
    Use it in a figure with the constrained layout (``figure``'s default), which makes room for it."""
    from matplotlib.transforms import ScaledTranslation

    if where == "right":
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kwargs)
        return
    fig = ax.figure
    fig.draw_without_rendering()  # where the tick labels and the x label end
    renderer = fig.canvas.get_renderer() if hasattr(fig.canvas, "get_renderer") else fig._get_renderer()
    under = ax.get_window_extent(renderer).y0 - ax.xaxis.get_tightbbox(renderer).y0
    shift = ScaledTranslation(0, -(under * 72 / fig.dpi + 4) / 72, fig.dpi_scale_trans)
    kwargs.setdefault("ncol", 2)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=ax.transAxes + shift, **kwargs)


def plain_log_ticks(axis, subs: tuple[float, ...] = (1.0, 2.0, 5.0)) -> None:
    """Ticks of a log-scaled ``axis`` (``ax.xaxis``) at 1, 2, 5 x 10^k, labelled as plain numbers (2, 5, 10, 20, ...:
    token counts, sizes), the minor ticks unlabelled."""
    from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(StrMethodFormatter("{x:g}"))
    axis.set_minor_formatter(NullFormatter())


def save(fig, run_or_dir, name: str) -> None:
    """Save ``fig`` as ``<run>/figures/<name>.png`` (the notebook still shows it inline). Returns nothing, so a cell
    ending with it shows no ``Out[]`` with a machine path."""
    if os.environ.get(CHECK_ENV) == "1":
        problems = figure_problems(fig)
        if problems:
            raise ValueError(f"figure {name!r} is not readable ({CHECK_ENV}=1): " + "; ".join(problems))
    folder = run_or_dir.figures_dir if hasattr(run_or_dir, "figures_dir") else Path(run_or_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    fig.savefig(path)


# ---- the readability check ----------------------------------------------------------------------------------------

_TOUCH_PX = 1.0  # boxes may share an edge (one pixel) without counting as overlapping


def figure_problems(fig) -> list[str]:
    """What makes ``fig`` hard to read, as matplotlib lays it out (``fig.canvas.draw()``, then each artist's window
    extent): text boxes that overlap (titles, suptitle, axis labels, drawn tick labels, legends as one box each, texts
    and annotations; rotated text as its rotated box), text that reaches into another panel, text under
    ``MIN_POINTS`` pt, and a legend over the lines, markers, bars or step outlines of its own axes (in display
    coordinates; reference lines and spans across the axes aside). Empty [] if none."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer() if hasattr(fig.canvas, "get_renderer") else fig._get_renderer()
    texts = list(_drawn_texts(fig))
    boxes = [(what, owner, _corners(artist, renderer)) for what, owner, artist in texts]
    boxes += [(what, owner, _corners(legend, renderer)) for what, owner, legend in _legends(fig)]
    problems = [
        f"{a!r} overlaps {b!r}" for (a, _, p), (b, _, q) in itertools.combinations(boxes, 2) if _polygons_overlap(p, q)
    ]
    panels = [(ax, _corners(ax, renderer)) for ax in fig.axes if ax.get_visible() and ax.axison]
    for what, owner, box in boxes:
        for ax, area in panels:
            if owner is not None and _same_panel(owner, ax, renderer):
                continue
            if _polygons_overlap(box, area):
                problems.append(f"{what!r} reaches into the panel {_panel_name(ax)!r}")
    small = sorted({(round(float(t.get_fontsize()), 1), t.get_text()) for _, _, t in [*texts, *_legend_texts(fig)]})
    problems += [f"{_plain(text)!r} is {size:g} pt (< {MIN_POINTS})" for size, text in small if size < MIN_POINTS]
    for _, ax, legend in _legends(fig):
        if ax is not None and _legend_over_data(ax, legend.get_window_extent(renderer), renderer):
            problems.append(f"the legend of {_panel_name(ax)!r} covers its data")
    return list(dict.fromkeys(problems))  # each problem once, in the order found


def _shown(text) -> bool:
    return bool(text.get_visible() and text.get_text().strip() and text.get_alpha() != 0)


def _drawn_texts(fig) -> Iterator[tuple[str, object, object]]:
    """(what, its axes or None, Text) for every text drawn outside legends."""
    suptitles = [getattr(fig, name, None) for name in ("_suptitle", "_supxlabel", "_supylabel")]
    figure_texts = [t for t in suptitles if t is not None]
    for text in [*figure_texts, *(t for t in fig.texts if all(t is not s for s in figure_texts))]:
        if _shown(text):
            yield text.get_text(), None, text
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        titles = [ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None)]
        for text in [t for t in titles if t is not None] + list(ax.texts):
            if _shown(text):
                yield text.get_text(), ax, text
        if not ax.axison:
            continue
        for axis in (ax.xaxis, ax.yaxis):
            if not axis.get_visible():
                continue
            for text in (axis.label, axis.get_offset_text()):
                if _shown(text):
                    yield text.get_text(), ax, text
            for label in _drawn_tick_labels(axis):
                yield f"tick label {_plain(label.get_text())}", ax, label


def _drawn_tick_labels(axis) -> Iterator[object]:
    """The tick labels ``axis`` draws: ticks inside the view interval, labels visible and not empty."""
    low, high = sorted(axis.get_view_interval())
    scale = axis.get_transform()
    low_t, high_t = sorted(scale.transform([low, high]))
    slack = 1e-9 * max(abs(high_t - low_t), 1e-300)
    for locs, ticks in (
        (axis.get_majorticklocs(), axis.get_major_ticks()),
        (axis.get_minorticklocs(), axis.get_minor_ticks()),
    ):
        for loc, tick in zip(locs, ticks, strict=False):
            loc_t = scale.transform([loc])[0]
            if not (low_t - slack <= loc_t <= high_t + slack):
                continue
            for label in (tick.label1, tick.label2):
                if _shown(label):
                    yield label


def _legends(fig) -> Iterator[tuple[str, object, object]]:
    for legend in fig.legends:
        if legend.get_visible():
            yield "the figure's legend", None, legend
    for ax in fig.axes:
        legend = ax.get_legend()
        if ax.get_visible() and legend is not None and legend.get_visible():
            yield f"the legend of {_panel_name(ax)!r}", ax, legend


def _legend_texts(fig) -> Iterator[tuple[str, object, object]]:
    for _, owner, legend in _legends(fig):
        for text in [*legend.get_texts(), legend.get_title()]:
            if _shown(text):
                yield text.get_text(), owner, text


def _panel_name(ax) -> str:
    title = ax.get_title() or ax.get_title("left") or ax.get_ylabel() or ax.get_xlabel()
    return title or f"axes {ax.figure.axes.index(ax)}"


def _plain(text: str) -> str:
    """A tick label as a reader sees it: ``$\\mathdefault{10^{1}}$`` -> ``10^{1}``."""
    return re.sub(r"^\$\\mathdefault\{(.*)\}\$$", r"\1", text)


def _corners(artist, renderer) -> np.ndarray:
    """The four corners (display pixels) of what ``artist`` covers: its window extent, or for text rotated by an angle
    that is not a multiple of 90 degrees, the rotated box itself (its extent's centre, its unrotated size)."""
    box = artist.get_window_extent(renderer)
    rotation = artist.get_rotation() if isinstance(artist, Text) else 0.0
    if rotation % 90 == 0:
        return np.array([[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1], [box.x0, box.y1]])
    artist.set_rotation(0)
    flat = artist.get_window_extent(renderer)
    artist.set_rotation(rotation)
    half = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * [flat.width / 2, flat.height / 2]
    turn = np.deg2rad(rotation)
    rotate = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    return half @ rotate.T + [(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2]


def _polygons_overlap(a: np.ndarray, b: np.ndarray, slack: float = _TOUCH_PX) -> bool:
    """Whether two convex polygons overlap by more than ``slack`` pixels (separating axis theorem): boxes that only
    touch do not count; a box of no area overlaps nothing."""
    low, high = np.maximum(a.min(axis=0), b.min(axis=0)), np.minimum(a.max(axis=0), b.max(axis=0))
    if np.any(high - low <= slack):  # their upright extents are apart: no need for the rotated test
        return False
    normals = []
    for polygon in (a, b):
        edges = np.roll(polygon, -1, axis=0) - polygon
        lengths = np.hypot(edges[:, 0], edges[:, 1])
        if np.count_nonzero(lengths > 1e-9) < 2 or _area(polygon) < 1e-9:
            return False
        normals += [np.array([-e[1], e[0]]) / n for e, n in zip(edges, lengths, strict=True) if n > 1e-9]
    for normal in normals:
        pa, pb = a @ normal, b @ normal
        if min(pa.max(), pb.max()) - max(pa.min(), pb.min()) <= slack:
            return False
    return True


def _area(polygon: np.ndarray) -> float:
    x, y = polygon[:, 0], polygon[:, 1]
    return abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))) / 2


def _overlap(p, q, slack: float = _TOUCH_PX) -> bool:
    return p.x0 < q.x1 - slack and q.x0 < p.x1 - slack and p.y0 < q.y1 - slack and q.y0 < p.y1 - slack


def _same_panel(owner, ax, renderer) -> bool:
    """A text belongs to ``ax``'s panel if ``ax`` is its axes, a twin of it (the same box) or one inside the other
    (an inset)."""
    if owner is ax:
        return True
    a, b = owner.get_window_extent(renderer), ax.get_window_extent(renderer)
    inside = (a.x0 <= b.x0 and b.x1 <= a.x1 and a.y0 <= b.y0 and b.y1 <= a.y1) or (
        b.x0 <= a.x0 and a.x1 <= b.x1 and b.y0 <= a.y0 and a.y1 <= b.y1
    )
    return inside


def _legend_over_data(ax, legend_box, renderer) -> bool:
    """Whether the legend's box covers a line segment, a marker, a bar or a polygon's outline (a step histogram) of
    ``ax`` drawn in data coordinates (reference lines and spans drawn across the axes, such as ``axhline`` or
    ``axvspan``, are not data; nor is the inside of a polygon or of a ``fill_between`` band)."""
    from matplotlib.collections import LineCollection, PathCollection
    from matplotlib.patches import Rectangle

    area = ax.get_window_extent(renderer)
    box = legend_box.intersection(legend_box, area)
    if box is None:
        return False
    x0, y0, x1, y1 = box.x0 + _TOUCH_PX, box.y0 + _TOUCH_PX, box.x1 - _TOUCH_PX, box.y1 - _TOUCH_PX
    if x0 >= x1 or y0 >= y1:
        return False
    rect = (x0, y0, x1, y1)

    for line in ax.get_lines():
        if not line.get_visible() or not _in_data_coordinates(line, ax):
            continue
        xy = line.get_transform().transform(np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float))
        if line.get_linestyle() not in ("None", " ", "") and _segments_hit(xy[:-1], xy[1:], rect):
            return True
        if line.get_marker() not in (None, "None", " ", "") and _points_hit(xy, rect):
            return True
    for patch in ax.patches:
        if not patch.get_visible() or not _in_data_coordinates(patch, ax):
            continue
        if isinstance(patch, Rectangle):  # a bar: its whole area
            extent = patch.get_window_extent(renderer)
            if extent.width > 0 and extent.height > 0 and _overlap(extent, _box(rect), 0.0):
                return True
            continue
        for outline in patch.get_path().to_polygons(patch.get_transform(), closed_only=False):
            if len(outline) > 1 and _segments_hit(outline[:-1], outline[1:], rect):  # a step histogram, a polygon
                return True
    for collection in ax.collections:
        if not collection.get_visible():
            continue
        if isinstance(collection, PathCollection) and _in_data_coordinates(collection, ax, offsets=True):
            offsets = collection.get_offset_transform().transform(np.asarray(collection.get_offsets(), float))
            if _points_hit(offsets, rect):
                return True
        elif isinstance(collection, LineCollection) and _in_data_coordinates(collection, ax):
            for segment in collection.get_segments():
                xy = collection.get_transform().transform(np.asarray(segment, float))
                if len(xy) > 1 and _segments_hit(xy[:-1], xy[1:], rect):
                    return True
    return False


def _box(rect):
    from matplotlib.transforms import Bbox

    return Bbox.from_extents(*rect)


def _in_data_coordinates(artist, ax, offsets: bool = False) -> bool:
    transform = artist.get_offset_transform() if offsets else artist.get_transform()
    return transform.contains_branch(ax.transData)


def _points_hit(xy: np.ndarray, rect) -> bool:
    x0, y0, x1, y1 = rect
    xy = xy[np.isfinite(xy).all(axis=1)]
    return bool(np.any((xy[:, 0] > x0) & (xy[:, 0] < x1) & (xy[:, 1] > y0) & (xy[:, 1] < y1)))


def _segments_hit(start: np.ndarray, end: np.ndarray, rect) -> bool:
    """Whether any segment start[i] -> end[i] passes through the open rectangle (Liang-Barsky clipping)."""
    finite = np.isfinite(start).all(axis=1) & np.isfinite(end).all(axis=1)
    start, end = start[finite], end[finite]
    if not len(start):
        return False
    x0, y0, x1, y1 = rect
    d = end - start
    t_low, t_high = np.zeros(len(start)), np.ones(len(start))
    for p, q in (
        (-d[:, 0], start[:, 0] - x0),
        (d[:, 0], x1 - start[:, 0]),
        (-d[:, 1], start[:, 1] - y0),
        (d[:, 1], y1 - start[:, 1]),
    ):
        parallel = p == 0
        t_low[parallel & (q <= 0)], t_high[parallel & (q <= 0)] = 1.0, 0.0  # outside this edge, parallel to it
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(parallel, 0.0, q / np.where(parallel, 1.0, p))
        entering, leaving = (p < 0) & ~parallel, (p > 0) & ~parallel
        t_low = np.where(entering, np.maximum(t_low, t), t_low)
        t_high = np.where(leaving, np.minimum(t_high, t), t_high)
    return bool(np.any(t_low < t_high))
