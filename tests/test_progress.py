"""Progress bars: off in batch runs, the Jupyter widget bar included (it ignores TQDM_DISABLE by itself), which write
plain lines instead; nested bars; the pace line from a fit's own bar; what ``stsnb run`` shows of them."""

from __future__ import annotations

import pytest

from stsnb.training.progress import progress


def test_the_notebook_bar_is_off_in_a_batch_run_and_on_otherwise(monkeypatch):
    pytest.importorskip("ipywidgets")
    from tqdm import auto, notebook

    monkeypatch.setattr(auto, "tqdm", notebook.tqdm)  # what tqdm.auto picks inside a Jupyter kernel
    monkeypatch.setenv("TQDM_DISABLE", "1")
    assert notebook.tqdm(range(3)).disable is False  # tqdm's own notebook bar ignores the variable
    assert progress(range(3)).disable is True
    assert list(progress(range(3))) == [0, 1, 2]
    monkeypatch.delenv("TQDM_DISABLE")
    assert progress(range(3), display=False).disable is False
    assert progress(range(3), disable=True).disable is True


def test_pace_reports_once_after_its_delay_from_the_steps_of_its_bar(monkeypatch):
    """The pace line reads the fit's own bar: the steps of this call (a resumed fit's earlier ones do not count) over
    the bar's seconds."""
    from stsnb.training.progress import NOTEBOOK_STARTED_ENV, NOTEBOOK_TIMEOUT_ENV, Bar, Pace

    monkeypatch.delenv(NOTEBOOK_STARTED_ENV, raising=False)
    monkeypatch.delenv(NOTEBOOK_TIMEOUT_ENV, raising=False)
    now = {"t": 0.0}
    steps = Bar(14_720, "train", initial=100, clock=lambda: now["t"], write=lambda line: None)  # resumed at 100
    pace = Pace(steps, after=180.0)
    now["t"] = 179.0
    steps.update(10)
    assert pace.update(110) is None  # too early to tell
    now["t"] = 210.0
    steps.update(90)
    assert pace.update(200) == "step 200/14,720: 2.10 s/step, done in about 8.5 h"  # 100 steps in 210 s
    now["t"] = 400.0
    steps.update(100)
    assert pace.update(300) is None  # once per fit


def test_pace_line_projects_the_end_against_the_notebook_timeout(monkeypatch):
    import time

    from stsnb.training.progress import NOTEBOOK_STARTED_ENV, NOTEBOOK_TIMEOUT_ENV, notebook_clock, pace_line

    line = pace_line(120, 14_720, 0.21, elapsed=7200.0, timeout=41 * 3600.0)
    assert line == "step 120/14,720: 0.21 s/step, done in about 51 min, 2.9 h into the notebook of its 41.0 h timeout"
    late = pace_line(120, 14_720, 10.0, elapsed=7200.0, timeout=41 * 3600.0)
    assert late.endswith("42.6 h into the notebook: PAST its 41.0 h timeout")
    assert pace_line(1, 2, 1.0, elapsed=0.0, timeout=None).endswith("into the notebook (no timeout)")
    monkeypatch.setenv(NOTEBOOK_STARTED_ENV, str(time.time() - 3600))
    monkeypatch.setenv(NOTEBOOK_TIMEOUT_ENV, "147600")
    elapsed, timeout = notebook_clock()
    assert 3600 <= elapsed < 3700 and timeout == 147600
    monkeypatch.setenv(NOTEBOOK_TIMEOUT_ENV, "none")
    assert notebook_clock()[1] is None


def test_stsnb_run_tells_the_kernel_when_it_started_and_its_timeout(tmp_path, monkeypatch):
    import os
    import time

    from stsnb.runs.execution import kernel_environment
    from stsnb.training.progress import NOTEBOOK_STARTED_ENV, NOTEBOOK_TIMEOUT_ENV, notebook_clock

    monkeypatch.delenv(NOTEBOOK_TIMEOUT_ENV, raising=False)
    with kernel_environment(tmp_path, timeout=147600):
        assert os.environ[NOTEBOOK_TIMEOUT_ENV] == "147600"
        assert abs(float(os.environ[NOTEBOOK_STARTED_ENV]) - time.time()) < 60
        assert notebook_clock()[1] == 147600
    assert NOTEBOOK_TIMEOUT_ENV not in os.environ  # restored
    with kernel_environment(tmp_path):
        assert notebook_clock()[1] is None  # no limit


def _plain_bar(monkeypatch, total: int = 120, **kwargs):
    """A bar in a batch run with a hand-moved clock, and the plain lines it wrote."""
    from stsnb.models.progress import Bar

    monkeypatch.setenv("TQDM_DISABLE", "1")
    now, lines = {"t": 0.0}, []
    return Bar(total, "train", clock=lambda: now["t"], write=lines.append, **kwargs), now, lines


def test_a_batch_run_gets_plain_lines_with_steps_rate_time_left_and_the_latest_scores(monkeypatch):
    from stsnb.models.progress import LINE_DELAY, LINE_EVERY

    bar, now, lines = _plain_bar(monkeypatch)
    assert bar.tqdm is None  # no widget for a saved notebook to show stuck at 0%
    for step in range(120):
        now["t"] += 0.5
        bar.show(loss=f"{1 / (step + 1):.4f}")
        bar.update()
        if step == 39:
            bar.show(dev="66.50")
    bar.close()
    assert LINE_DELAY == 10.0 and LINE_EVERY == 30.0
    assert lines == [
        "train 20/120 steps, 2.00 steps/s, 50 s left, loss 0.0500",  # after LINE_DELAY
        "train 80/120 steps, 2.00 steps/s, 20 s left, loss 0.0125, dev 66.50",  # LINE_EVERY later
        "train 120/120 steps, 2.00 steps/s, done in 60 s, loss 0.0083, dev 66.50",  # the end
    ]


def test_a_short_loop_writes_no_line_and_a_slow_one_reads_in_seconds_per_step(monkeypatch):
    bar, now, lines = _plain_bar(monkeypatch, total=3)
    now["t"] = 9.0
    bar.update(3)
    bar.close()
    assert lines == []  # under LINE_DELAY: nothing to follow
    slow, now, lines = _plain_bar(monkeypatch, total=10, initial=4)  # resumed at 4: its rate counts its own steps
    now["t"] = 12.0
    slow.update(1)
    assert lines == ["train 5/10 steps, 12.00 s/step, 60 s left"]


def test_plain_lines_go_to_the_progress_log_and_never_into_the_notebook(tmp_path, monkeypatch, capsys):
    from stsnb.models.progress import PROGRESS_LOG_ENV, write_line

    log = tmp_path / "progress.log"
    monkeypatch.setenv(PROGRESS_LOG_ENV, str(log))
    write_line("train 1/2 steps")
    write_line("train 2/2 steps")
    assert log.read_text() == "train 1/2 steps\ntrain 2/2 steps\n"
    assert capsys.readouterr() == ("", "")  # sys.stdout / sys.stderr: what a kernel puts in the notebook


def test_a_nested_bar_joins_one_of_its_unit_and_is_silent_inside_another(monkeypatch):
    from stsnb.models.progress import bar

    monkeypatch.setenv("TQDM_DISABLE", "1")
    with bar(20, "evaluate", "sentence", write=lambda line: None) as outer:
        with bar(8, "encode", "sentence") as inner:
            inner.update(8)
        assert inner is outer and outer.n == 8
    with bar(5, "train", "step", write=lambda line: None) as fit:
        with bar(8, "encode", "sentence") as inner:
            inner.update(8)
        assert inner is not fit and not inner.enabled and fit.n == 0
    with bar(8, "encode", "sentence", write=lambda line: None) as alone:
        assert alone.enabled  # nothing open: a bar of its own


def test_in_jupyter_the_bar_is_a_tqdm_auto_widget_with_the_latest_figures(monkeypatch):
    pytest.importorskip("ipywidgets")
    from tqdm import auto, notebook

    from stsnb.models import progress

    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    monkeypatch.setattr(progress, "in_jupyter", lambda: True)
    monkeypatch.setattr(auto, "tqdm", notebook.tqdm)  # what tqdm.auto picks inside a Jupyter kernel
    bar = progress.Bar(4, "train")
    assert isinstance(bar.tqdm, notebook.tqdm) and bar.tqdm.delay == progress.DELAY
    bar.show(loss="0.1234", dev="66.50")
    bar.update(4)
    assert bar.tqdm.postfix == "loss=0.1234, dev=66.50" and bar.tqdm.n == 4
    bar.close()


def test_the_live_line_shows_the_cell_and_the_latest_progress_line(tmp_path):
    import io

    from stsnb.runs.live import LiveLine

    log = tmp_path / "progress.log"
    stream = io.StringIO()
    live = LiveLine("[stsnb run] 3/6 20_x: ", log, stream=stream, plain_every=0.0)
    live.cell(18, 54)
    live.show()
    assert stream.getvalue() == ""  # in a log: nothing new to say
    log.write_text("train 10/120 steps, 2.00 steps/s, 55 s left\ntrain 40/120 steps, 2.10 steps/s, 38 s left\n")
    live.show()
    (line,) = stream.getvalue().splitlines()
    assert line.startswith("[stsnb run] 3/6 20_x: ") and line.endswith(
        ", cell 19/54, train 40/120 steps, 2.10 steps/s, 38 s left"
    )
    with log.open("a") as handle:
        handle.write("evaluate 300/1,200 sentences")  # not a whole line yet
    live.show()
    assert len(stream.getvalue().splitlines()) == 1
    with log.open("a") as handle:
        handle.write(", done in 8 s\n")  # the end of the cell's evaluation
    live.cell(19, 54)  # the next cell: what came before is not its progress
    live.show()
    assert live.text().endswith(", cell 20/54") and len(stream.getvalue().splitlines()) == 1


def test_on_a_terminal_the_live_line_is_rewritten_in_place_and_cleared_for_the_result(tmp_path):
    import io

    from stsnb.runs.live import LiveLine

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    log = tmp_path / "progress.log"
    log.write_text("evaluate 300/1,200 sentences, 150.00 sentences/s, 6 s left\n")
    stream = Terminal()
    live = LiveLine("[stsnb run] 1/6 00_x: ", log, stream=stream)
    live.show()
    live.show()
    live.stop()
    writes = stream.getvalue().split("\r\x1b[K")
    assert "\n" not in stream.getvalue() and writes[0] == "" and writes[-1] == ""  # cleared at the end
    assert writes[1] == writes[2] and writes[1].endswith(", evaluate 300/1,200 sentences, 150.00 sentences/s, 6 s left")
