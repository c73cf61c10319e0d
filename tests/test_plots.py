"""``stsnb.teaching.plots``: ``figure`` hands back axes shaped as notebooks index them; ``figure_problems`` finds what
makes a figure hard to read (overlapping text, text under 9 pt, a legend over the data) and ``save`` refuses such a
figure when ``STSNB_CHECK_FIGURES=1``."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from stsnb.teaching import plots

matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_figure_axes_follow_matplotlib_squeeze():
    _, single = plots.figure()
    _, row = plots.figure(ncols=3)
    _, grid = plots.figure(ncols=2, nrows=2)
    assert hasattr(single, "plot")
    assert row.shape == (3,) and hasattr(row[0], "plot")
    assert grid.shape == (2, 2)


def _clean_figure():
    fig, axes = plots.figure(ncols=2)
    x = np.linspace(0, 1, 50)
    for ax, power in zip(axes, (1, 2), strict=True):
        ax.plot(x, x**power, label=f"$x^{power}$")
        ax.bar([0.2, 0.5], [0.1, 0.2], width=0.1, label="bars")
        ax.axhline(0.5, color="k", linestyle="--", label="reference")
        ax.set(title=f"power {power}", xlabel="x", ylabel="y")
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), ncol=3)
    fig.suptitle("two clean panels")
    return fig


def test_a_clean_figure_made_with_plots_figure_has_no_problems():
    assert plots.figure_problems(_clean_figure()) == []


def test_two_colliding_titles_are_flagged():
    fig, axes = plots.figure(ncols=2)
    for ax in axes:
        ax.set_title("STS-B dev Spearman during NLI fine-tuning (seed 0; step 0: untrained)")
    problems = plots.figure_problems(fig)
    assert any("overlaps" in p and p.count("STS-B dev Spearman") == 2 for p in problems), problems


def test_text_under_9_pt_is_flagged():
    fig, ax = plots.figure()
    ax.set_xlabel("a 7-pt label", fontsize=7)
    ax.plot([0, 1], [0, 1], label="legend at 8 pt")
    ax.legend(fontsize=8, loc="upper left")
    problems = plots.figure_problems(fig)
    assert "'a 7-pt label' is 7 pt (< 9)" in problems
    assert "'legend at 8 pt' is 8 pt (< 9)" in problems


def test_long_tick_labels_spilling_into_the_next_panel_are_flagged():
    fig, axes = plots.figure(ncols=2, layout=None)  # without the constrained layout, which would make room
    axes[1].barh(range(3), [1, 2, 3])
    axes[1].set_yticks(range(3), [f"an extremely long tick label of row {i}" for i in range(3)])
    problems = plots.figure_problems(fig)
    assert any("reaches into the panel" in p and "row 0" in p for p in problems), problems


def test_crowded_tick_labels_of_one_axis_are_flagged():
    fig, ax = plots.figure()
    ax.set_xticks(range(8), [f"category {i}" for i in range(8)])
    assert any("'tick label category 0' overlaps 'tick label category 1'" in p for p in plots.figure_problems(fig))


def test_rotated_tick_labels_are_checked_as_the_rotated_boxes_they_are():
    fig, ax = plots.figure()
    ax.set_xticks(range(6), [f"h+ seq{i}" for i in range(6)])
    ax.tick_params(axis="x", rotation=45)  # their upright extents overlap, the rotated texts do not
    assert plots.figure_problems(fig) == []
    ax.set_xticks(range(6), [f"a much longer label {i}" for i in range(6)])
    ax.tick_params(axis="x", rotation=10)
    assert any("overlaps 'tick label a much longer label 1'" in p for p in plots.figure_problems(fig))


def test_a_legend_over_lines_bars_or_markers_is_flagged_but_not_over_a_reference_line():
    fig, ax = plots.figure()
    ax.plot([0, 1], [0, 1], label="diagonal")
    ax.legend(loc="center")
    assert plots.figure_problems(fig) == ["the legend of 'axes 0' covers its data"]
    fig, ax = plots.figure()
    ax.bar(range(4), [1, 2, 3, 4], label="bars")
    ax.set_title("bars")
    ax.legend(loc="upper right")
    assert plots.figure_problems(fig) == ["the legend of 'bars' covers its data"]
    fig, ax = plots.figure()
    ax.scatter([0, 0.5, 1], [0, 0.5, 1], label="points")
    ax.legend(loc="center")
    assert plots.figure_problems(fig) == ["the legend of 'axes 0' covers its data"]
    fig, ax = plots.figure()
    ax.hist(np.random.default_rng(0).normal(size=500), bins=20, histtype="step", label="a step histogram")
    ax.legend(loc="upper center")
    assert plots.figure_problems(fig) == ["the legend of 'axes 0' covers its data"]
    fig, ax = plots.figure()
    ax.plot([0, 1], [0, 0.2], label="low line")
    ax.axhline(0.8, label="a reference line under the legend")
    ax.axvspan(0.4, 0.6, alpha=0.1, label="a span")
    ax.legend(loc="upper left")
    assert plots.figure_problems(fig) == []


def test_a_legend_reaching_into_the_next_panel_is_flagged():
    fig, axes = plots.figure(ncols=2, layout=None)
    axes[0].plot([0, 1], [0, 1], label="a long legend entry")
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    assert any("reaches into the panel 'axes 1'" in p for p in plots.figure_problems(fig))


def test_empty_invisible_and_hidden_axis_texts_are_ignored():
    fig, axes = plots.figure(ncols=2)
    axes[0].set_title("")
    axes[0].text(0.5, 0.5, "   ")
    axes[0].text(0.5, 0.5, "hidden", fontsize=5, visible=False)
    axes[1].axis("off")
    axes[1].set_xlabel("an 8-pt label nobody sees", fontsize=8)
    assert plots.figure_problems(fig) == []


def test_save_refuses_an_unreadable_figure_only_when_asked(tmp_path, monkeypatch):
    fig, ax = plots.figure()
    ax.set_xlabel("small", fontsize=7)
    monkeypatch.delenv(plots.CHECK_ENV, raising=False)
    plots.save(fig, tmp_path, "small_text")
    assert (tmp_path / "small_text.png").is_file()
    monkeypatch.setenv(plots.CHECK_ENV, "1")
    with pytest.raises(ValueError, match=r"figure 'small_text_checked' is not readable.*'small' is 7 pt"):
        plots.save(fig, tmp_path, "small_text_checked")
    assert not (tmp_path / "small_text_checked.png").exists()
    plots.save(_clean_figure(), tmp_path, "clean")
    assert (tmp_path / "clean.png").is_file()


def test_legend_outside_keeps_a_crowded_legend_off_the_data_right_of_or_under_the_panel():
    fig, axes = plots.figure(ncols=2)
    x = np.linspace(0, 1, 20)
    for ax in axes:
        for i in range(6):
            ax.plot(x, x ** (i + 1), label=f"curve number {i}")
        ax.set(xlabel="x", ylabel="y")
    plots.legend_outside(axes[0], "below")
    plots.legend_outside(axes[1])
    assert plots.figure_problems(fig) == []
    renderer = fig.canvas.get_renderer()
    below, right = (ax.get_legend().get_window_extent(renderer) for ax in axes)
    assert below.y1 <= axes[0].xaxis.get_tightbbox(renderer).y0  # under the tick labels and the x label
    assert right.x0 >= axes[1].get_window_extent(renderer).x1


def test_plain_log_ticks_label_a_log_axis_with_plain_numbers():
    fig, ax = plots.figure()
    ax.plot([2, 200], [0, 1])
    ax.set_xscale("log")
    plots.plain_log_ticks(ax.xaxis)
    fig.canvas.draw()
    low, high = ax.get_xlim()
    shown = [t.get_text() for t, loc in zip(ax.get_xticklabels(), ax.get_xticks(), strict=True) if low <= loc <= high]
    assert shown == ["2", "5", "10", "20", "50", "100", "200"]
    assert not any(t.get_text() for t in ax.xaxis.get_minorticklabels())
    assert plots.figure_problems(fig) == []


def test_the_pipeline_figure_names_five_stages_readably_and_refuses_a_missing_part():
    from stsnb.teaching.pipeline import STAGES, Pipeline, pipeline_figure

    fig = pipeline_figure(["STS-B\ntrain", "MiniLM-L6", "Smooth K2\nvs cross entropy", "Spearman x100", "verdict"])
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert all(stage in texts for stage in STAGES) and plots.figure_problems(fig) == []
    with pytest.raises(ValueError, match="needs 5 parts"):
        pipeline_figure(["data", "model"])
    with pytest.raises(ValueError, match="needs 5 parts"):
        Pipeline("10_x", "title", ("data", "model"))
