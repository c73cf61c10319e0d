"""stsnb.runs.runtimes: each notebook's measured runtime per profile, read from its kept runs, and every notebook's
opening (the venue, a section map, the runtimes printed before the parameters cell)."""

from __future__ import annotations

import json
import re

import nbformat
import pytest
import yaml

from stsnb.runs import plans, runtimes, summary

NOTEBOOKS = sorted(plans.NOTEBOOKS_DIR.glob("*.ipynb"))
SHA = "6753319741eefd98550fc4b349d259ca0b12037f"


def _kept_run(root, profile, notebook, seconds, cores=None):
    folder = root / profile / notebook
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps({"seconds": seconds}))
    env = {"git_sha": SHA} | ({} if cores is None else {"cpu_count": cores})
    (folder / "env.json").write_text(json.dumps(env))


def test_runtimes_come_from_kept_runs_only(tmp_path):
    _kept_run(tmp_path, "cpu", "40_ccl_csts", 1053.0, cores=2)
    (tmp_path / "class" / "40_ccl_csts").mkdir(parents=True)  # a folder without a recorded duration is no run
    found = runtimes.measured("40_ccl_csts", tmp_path)
    assert found == {"smoke": None, "class": None, "cpu": runtimes.Measured(1053.0, 2, "6753319")}
    text = runtimes.text("40_ccl_csts", tmp_path)
    assert text.splitlines()[0].endswith("of each profile, on 2 CPU cores):")
    assert "  cpu    1,053 s (about 18 min), run at commit 6753319" in text
    assert "  smoke  no run of this profile yet" in text and "  class  no run of this profile yet" in text
    assert str(tmp_path) not in text, "no machine path"


def test_during_a_run_its_profiles_line_prints_no_earlier_runs_time(tmp_path, monkeypatch):
    """Inside ``stsnb run`` (STSNB_RUN_DIR = <profile>/.partial-<notebook>) the kept run of that profile is the one
    this run replaces: its duration is not printed at all (notebook 40's cpu run printed 1,053 s for a 720 s run, the
    class runs their predecessors' times), only where this run's own is."""
    from stsnb.runs.context import RUN_DIR_ENV

    _kept_run(tmp_path, "cpu", "40_ccl_csts", 1053.0, cores=2)
    _kept_run(tmp_path, "class", "40_ccl_csts", 183.0, cores=2)
    monkeypatch.setenv(RUN_DIR_ENV, str(tmp_path / "cpu" / ".partial-40_ccl_csts"))
    assert runtimes.running_profile("40_ccl_csts") == "cpu" and runtimes.running_profile("30_hicl") is None
    text = runtimes.text("40_ccl_csts", tmp_path)
    assert f"  cpu    {runtimes.THIS_RUN}" in text and "1,053" not in text
    assert "  class  183 s (about 3 min), run at commit 6753319" in text  # another profile's run: as it was
    monkeypatch.setenv(RUN_DIR_ENV, str(tmp_path / "smoke" / ".partial-40_ccl_csts"))
    assert f"  smoke  {runtimes.THIS_RUN}" in runtimes.text("40_ccl_csts", tmp_path)
    monkeypatch.delenv(RUN_DIR_ENV)
    assert runtimes.THIS_RUN not in runtimes.text("40_ccl_csts", tmp_path)


def test_runs_on_different_machines_name_their_cores_on_their_own_line(tmp_path):
    _kept_run(tmp_path, "cpu", "00_contrastive_ceiling", 12.0, cores=2)
    _kept_run(tmp_path, "smoke", "00_contrastive_ceiling", 5.4)
    text = runtimes.text("00_contrastive_ceiling", tmp_path)
    assert "CPU cores):" not in text.splitlines()[0]
    assert "  cpu    12 s, on 2 CPU cores, run at commit 6753319" in text
    assert "  smoke  5 s, cores not recorded, run at commit 6753319" in text


def test_a_notebook_without_any_run_says_so_on_every_line(tmp_path):
    lines = runtimes.text("00_contrastive_ceiling", tmp_path).splitlines()
    assert lines[0] == "measured runtime of this notebook (its last successful run of each profile):"
    assert lines[1:] == [f"  {p:<6} no run of this profile yet" for p in runtimes.PROFILES]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_committed_cpu_runs_are_read_as_the_summary_reads_them(path):
    folder = plans.DEFAULT_OUT / "cpu" / path.stem
    if not folder.is_dir():
        pytest.skip(f"no committed cpu run of {path.stem}")
    found = runtimes.measured(path.stem)["cpu"]
    assert found.seconds == summary.run_seconds(folder, path.stem) and found.cores == 2
    assert found.commit == summary.run_commit(folder)
    assert yaml.safe_load((folder / "params.yaml").read_text()).get("profile", "cpu") == "cpu"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_notebook_opens_with_its_paper_sections_and_runtimes(path):
    """The opening cell names the venue; a markdown cell before section 1 maps every numbered section (the opening, or
    a contents cell after the main claim where the opening's 150 words are spent); the measured runtimes per profile
    are printed before the parameters cell."""
    cells = nbformat.read(path, as_version=4).cells
    first = cells[0].source
    assert cells[0].cell_type == "markdown" and first.startswith(f"# {path.stem[:2]} · ")
    assert re.search(r"EMNLP|COLING|ACL", first), "the venue (the link: test_notebook_hygiene)"
    sections = [int(n) for c in cells if c.cell_type == "markdown" for n in re.findall(r"^## (\d+) · ", c.source, re.M)]
    start = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and re.search(r"^## 1 · ", c.source, re.M))
    before = "\n".join(c.source for c in cells[:start] if c.cell_type == "markdown")
    mapped = [n for n in sections if re.search(rf"^{n}\. |(^|\s){n} · ", before, re.M)]
    assert sections and mapped == sections, "the first cell maps every numbered section"
    parameters = next(i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    printing = [i for i, c in enumerate(cells) if f'print(runtimes.text("{path.stem}"))' in c.source]
    assert printing and printing[0] < parameters, "the measured runtimes are printed before the parameters cell"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_a_class_run_prints_the_other_profiles_runs_and_none_of_its_own(path, monkeypatch):
    """Outside a run (JupyterLab) the kept class run is read as such; a class run made beside it prints no class
    duration (the kept one is the run it replaces), and the kept runs of the other profiles as they are."""
    from stsnb.runs.context import RUN_DIR_ENV

    folder = plans.DEFAULT_OUT / "class" / path.stem
    if summary.run_seconds(folder, path.stem) is None:
        pytest.skip(f"no committed class run of {path.stem}")
    found = runtimes.measured(path.stem)["class"]
    assert found is not None and found.seconds == summary.run_seconds(folder, path.stem)
    assert found.commit == summary.run_commit(folder)
    kept = f"{runtimes.duration(found.seconds)}, run at commit {found.commit}"
    assert "  class  " + kept in runtimes.text(path.stem)  # JupyterLab, or a run of another profile
    monkeypatch.setenv(RUN_DIR_ENV, str(plans.DEFAULT_OUT / "class" / f".partial-{path.stem}"))
    during = runtimes.text(path.stem)
    assert f"  class  {runtimes.THIS_RUN}" in during and kept not in during
    kept_profiles = [p for p, m in runtimes.measured(path.stem).items() if m is not None]
    assert not [line for line in during.splitlines() if line.split()[0] in kept_profiles and "no run" in line]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_last_cell_prints_this_runs_own_wall_time(path):
    """What the runtimes line of the running profile promises ("this run's own: ... the cell that finishes the run");
    an appendix after it may print, but trains nothing."""
    code = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    finishing = [i for i, source in enumerate(code) if "run.finish(" in source]
    assert len(finishing) == 1, "one cell finishes the run"
    assert re.search(r"total \{[^}]+:\.0f\} s", code[finishing[0]]), "it prints the run's total seconds"
    after = code[finishing[0] + 1 :]
    assert not any(re.search(r"\.fit\(|train_", source) for source in after), "nothing trains after it"
