"""The pipeline figure each training notebook opens with: drawn by ``stsnb figures`` from the notebook's parameters
cell (the class profile's values), committed as notebooks/figures/<notebook>_pipeline.png and attached to the opening
markdown; legible at a notebook's width."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from stsnb import cli
from stsnb.papers import pipelines
from stsnb.runs import plans
from stsnb.teaching import pipeline, plots

FIGURES = plans.NOTEBOOKS_DIR / "figures"
BUILDERS = pipelines()


def test_every_training_notebook_has_a_builder():
    training = sorted(p.stem for p in plans.NOTEBOOKS_DIR.glob("*.ipynb") if p.stem[:2] in {"10", "20", "30", "40"})
    assert sorted(BUILDERS) == training


@pytest.mark.parametrize("notebook", sorted(BUILDERS))
def test_the_committed_figure_shows_what_the_parameters_cell_runs_and_the_notebook_carries_it(notebook):
    """The PNG's parts are what the builder makes of the parameters cell now (a changed default makes this fail
    until `stsnb figures` redraws it), and the notebook's attachment is that very file."""
    path = plans.NOTEBOOKS_DIR / f"{notebook}.ipynb"
    expected = BUILDERS[notebook](plans.parameter_values(path))
    committed = pipeline.path(notebook, FIGURES).read_bytes()
    assert pipeline.parts_of(committed) == json.loads(expected.record()), "run `stsnb figures`"
    assert pipeline.attachment(path) == committed, "run `stsnb figures`"


@pytest.mark.parametrize("notebook", sorted(BUILDERS))
def test_the_figure_is_legible_at_a_notebooks_width(notebook):
    """About 1,000 pixels wide (shown at its own size in JupyterLab), text of 12 pt or more that overlaps nothing,
    no line wider than its box, and little empty space: the boxes take most of the height."""
    from PIL import Image

    path = plans.NOTEBOOKS_DIR / f"{notebook}.ipynb"
    shown = BUILDERS[notebook](plans.parameter_values(path))
    with Image.open(pipeline.path(notebook, FIGURES)) as image:
        assert 900 <= image.width <= 1000 and image.height <= 260
    fig = pipeline.pipeline_figure(shown.parts, title=shown.title)
    assert plots.figure_problems(fig) == []
    texts = [t for t in fig.axes[0].texts if t.get_text()]  # not the arrows
    assert min(t.get_fontsize() for t in texts) >= 12
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = sorted((p.get_window_extent(renderer) for p in fig.axes[0].patches), key=lambda b: b.x0)
    for text in texts:
        extent = text.get_window_extent(renderer)
        inside = [b for b in boxes if b.x0 <= (extent.x0 + extent.x1) / 2 <= b.x1 and b.y0 <= extent.y0 <= b.y1]
        if inside:  # a stage or a part: within its box
            assert inside[0].x0 <= extent.x0 and extent.x1 <= inside[0].x1, text.get_text()
    assert sum(b.height for b in boxes[:1]) / fig.bbox.height > 0.75


def test_stsnb_figures_redraws_a_figure_whose_parameters_changed_and_check_says_so(tmp_path, capsys):
    notebooks = tmp_path / "notebooks"
    shutil.copytree(plans.NOTEBOOKS_DIR, notebooks)
    assert pipeline.write_all(BUILDERS, notebooks, check=True) == []
    source = (notebooks / "30_hicl.ipynb").read_text()
    value = re.search(r"train_sentences = (\d+)  #", source)[0]  # the parameters cell's value, whatever it is
    (notebooks / "30_hicl.ipynb").write_text(source.replace(value, "train_sentences = 320  #"))
    assert pipeline.write_all(BUILDERS, notebooks, check=True) == ["30_hicl"]
    assert pipeline.write_all(BUILDERS, notebooks) == ["30_hicl"]
    redrawn = pipeline.path("30_hicl", notebooks / "figures").read_bytes()
    assert (
        "320 Wikipedia" in pipeline.parts_of(redrawn)["parts"][0]
        and pipeline.attachment(notebooks / "30_hicl.ipynb") == redrawn
    )
    assert pipeline.write_all(BUILDERS, notebooks, check=True) == []
    assert cli.main(["figures", "--check"]) == 0  # the checkout's own figures
    assert "0 out of date" in capsys.readouterr().out
