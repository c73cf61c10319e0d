"""``stsnb.teaching.training_curves`` on synthetic histories shaped as ``stsnb.training.train`` writes them: two
readable panels (no problem ``plots.figure_problems`` finds), one line per run in one colour, and sentences written from
the numbers."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import pytest

from stsnb.teaching import plots, training_curves

matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _history(losses: list[float], devs: list[float], every: int = 10) -> list[dict]:
    """Loss rows every ``every`` steps and a dev row at step 0 and after each loss row, as ``stsnb.training.train``
    logs."""
    rows = [{"step": 0, "epoch": 0, "dev": devs[0]}]
    for i, loss in enumerate(losses, start=1):
        rows.append({"step": i * every, "epoch": 0, "loss": loss, "lr": 1e-5})
        if i < len(devs):
            rows.append({"step": i * every, "epoch": 0, "dev": devs[i]})
    return rows


RUNS = {
    "SimCSE, seed 0": _history([2.5, 1.2, 0.8, 0.61], [41.0, 60.5, 66.25, 65.0, 64.0]),
    "+HiCL, seed 0": _history([2.7, 1.4, 0.9, 0.7], [41.0, 61.0, 67.5, 68.0, 67.9]),
}


def test_series_keeps_the_rows_with_a_finite_value_of_its_key():
    rows = [{"step": 0, "dev": 1.0}, {"step": 5, "loss": 2.0}, {"step": 6, "loss": float("nan")}, {"step": 7}]
    assert training_curves.series(rows, "loss") == [(5, 2.0)]
    assert training_curves.series(rows, "dev") == [(0, 1.0)]


def test_plot_draws_two_readable_panels_one_line_per_run_in_one_colour():
    fig = training_curves.plot(RUNS, title="two runs")
    loss_ax, dev_ax = fig.axes
    assert plots.figure_problems(fig) == []
    assert [line.get_label() for line in loss_ax.get_lines()] == list(RUNS)
    assert [line.get_label() for line in dev_ax.get_lines()] == list(RUNS)
    for a, b in zip(loss_ax.get_lines(), dev_ax.get_lines(), strict=True):
        assert a.get_color() == b.get_color()
    assert list(loss_ax.get_lines()[0].get_xdata()) == [10, 20, 30, 40]
    assert list(dev_ax.get_lines()[1].get_ydata()) == [41.0, 61.0, 67.5, 68.0, 67.9]
    assert dev_ax.get_ylabel() == "dev Spearman x100"
    assert loss_ax.get_yscale() == "linear"


def test_plot_with_many_runs_stays_readable():
    runs = {f"variant {i}, seed 0": _history([3.0 - i * 0.1, 1.0, 0.5], [20.0 + i, 50.0 + i, 60.0]) for i in range(10)}
    assert plots.figure_problems(training_curves.plot(runs, dev_label="STS-B dev")) == []


def test_a_loss_spanning_decades_gets_a_log_axis():
    fig = training_curves.plot({"regression": _history([50.0, 2.0, 0.1], [10.0, 40.0])})
    assert fig.axes[0].get_yscale() == "log"
    assert plots.figure_problems(fig) == []


def test_a_panel_without_points_is_left_out_and_nothing_at_all_is_an_error():
    only_loss = {"run": [{"step": 1, "epoch": 0, "loss": 1.0}, {"step": 2, "epoch": 0, "loss": 0.5}]}
    fig = training_curves.plot(only_loss)
    assert len(fig.axes) == 1 and fig.axes[0].get_title() == "training loss"
    assert plots.figure_problems(fig) == []
    with pytest.raises(ValueError, match="nothing to plot"):
        training_curves.plot({"run": [{"step": 0, "epoch": 0}]})


def test_describe_says_first_and_last_loss_and_the_best_dev_step():
    text = training_curves.describe(RUNS)
    assert text.splitlines() == [
        "SimCSE, seed 0: training loss 2.5 -> 0.61 over 40 steps; "
        "dev 41.00 at step 0 -> best 66.25 at step 20, last 64.00 at step 40.",
        "+HiCL, seed 0: training loss 2.7 -> 0.7 over 40 steps; dev 41.00 at step 0 -> best 68.00 at step 30, "
        "last 67.90 at step 40.",
    ]


def test_describe_says_when_training_never_beat_the_untrained_score():
    text = training_curves.describe({"flat": _history([1.0, 1.0], [50.0, 49.0, 48.5])})
    assert "best 50.00 at step 0 (no later evaluation beat it), last 48.50 at step 20" in text
    assert training_curves.describe({"empty": []}) == "empty: no loss or dev score was logged."


def test_describe_says_one_logged_loss_is_a_mean_not_a_loss_that_stayed_put():
    one_point = [{"step": 0, "epoch": 0, "dev": 50.0}, {"step": 4, "epoch": 0, "loss": 2.96}, {"step": 4, "dev": 57.0}]
    text = training_curves.describe_one("stage 1", one_point)
    assert text.startswith("stage 1: training loss 2.96 (mean over steps 1-4: one logged point); dev 50.00 at step 0")
    assert "->" not in text.split(";")[0]


def test_describe_takes_the_first_step_of_a_tied_best():
    text = training_curves.describe_one("tie", _history([1.0, 0.5], [40.0, 60.0, 60.0]))
    assert "best 60.00 at step 10, last 60.00 at step 20" in text


def test_dips_name_the_runs_whose_dev_score_fell_below_its_start_before_rising():
    def history(*dev):
        return [{"step": 15 * i, "epoch": 0, "dev": d} for i, d in enumerate(dev)] + [{"step": 15, "loss": 1.0}]

    text = training_curves.dips(
        {
            "smooth_k2 seed 0": history(66.5, 65.0, 64.4, 68.0, 70.7),  # falls, then rises past its start
            "cross_entropy seed 0": history(66.5, 67.3, 66.8),  # never below its start
            "mse seed 0": history(66.5, 65.0, 66.0),  # falls and never comes back: its best is step 0
            "one point": history(66.5),
        },
        "untrained",
    )
    lines = text.splitlines()
    assert lines[0] == "1 of 3 runs fell below their untrained dev score before rising past it:"
    assert lines[1] == (
        "smooth_k2 seed 0: dev 66.50 at step 0, down to 64.40 at step 30 (-2.10), then up to its best 70.70 at step 60"
    )
    assert (
        training_curves.dips({"flat": history(66.5, 67.0)})
        == "0 of 1 runs fell below their step-0 dev score before rising past it."
    )
