"""Progress bars stay off in batch runs, the Jupyter widget bar included (it ignores TQDM_DISABLE by itself)."""

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


def test_pace_reports_once_after_its_delay_from_the_steps_of_this_call(monkeypatch):
    from stsnb.training.progress import NOTEBOOK_STARTED_ENV, NOTEBOOK_TIMEOUT_ENV, Pace

    monkeypatch.delenv(NOTEBOOK_STARTED_ENV, raising=False)
    monkeypatch.delenv(NOTEBOOK_TIMEOUT_ENV, raising=False)
    now = {"t": 0.0}
    pace = Pace(total=14_720, step=100, after=180.0, clock=lambda: now["t"])  # resumed at step 100
    now["t"] = 179.0
    assert pace.update(110) is None  # too early to tell
    now["t"] = 210.0
    assert pace.update(200) == "step 200/14,720: 2.10 s/step, done in about 8.5 h"  # 100 steps in 210 s
    now["t"] = 400.0
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
