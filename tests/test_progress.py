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
