"""The batch runner on tiny fixture notebooks (no models): layout, refusals, failures, good results kept."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import markdown_tables as md
import pytest
import yaml
from synthetic_seeds import stored_claim

from stsnb.evaluation import claims, verdict_rules
from stsnb.runs import context as runs
from stsnb.runs import execution
from stsnb.runs.plans import Plan, PlanError, load_plan, plan_path
from stsnb.runs.summary import (
    CLAIM_COLUMNS,
    MISSING,
    OVERVIEW_COLUMNS,
    overview_rows,
    recorded_outcome,
    recorded_seconds,
    run_commit,
    summary_markdown,
    write_summary,
)

FIXTURES = Path(__file__).parent / "fixtures" / "notebooks"


def write_plan(folder: Path, notebooks: dict, profile: str = "tiny") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{profile}.yaml"
    path.write_text(yaml.safe_dump({"description": "fixture plan, seconds on CPU", "notebooks": notebooks}))
    return path


def run(tmp_path: Path, notebooks: dict, **kwargs) -> int:
    write_plan(tmp_path / "plans", notebooks)
    return execution.run("tiny", out=tmp_path / "out", plans_dir=tmp_path / "plans", notebooks_dir=FIXTURES, **kwargs)


def summary_row(summary: str, notebook: str) -> str:
    """The notebook's row of the overview (summary.md's first table)."""
    return next(line for line in summary.splitlines() if line.startswith((f"| [{notebook}]", f"| {notebook} |")))


def average_lines(summary: str, notebook: str) -> list[str]:
    """The notebook's rows of the averages table."""
    averages = md.sections(summary)["Averages"]
    return [line for line in averages.splitlines() if line.startswith(f"| {notebook} |")]


@pytest.fixture(scope="module")
def good_run(tmp_path_factory) -> tuple[int, Path]:
    tmp_path = tmp_path_factory.mktemp("good")
    return run(tmp_path, {"tiny_ok": {"scale": 0.5}}), tmp_path / "out" / "tiny"


def test_success_writes_the_run_folder_and_summary(good_run):
    code, profile_dir = good_run
    assert code == 0
    folder = profile_dir / "tiny_ok"
    for name in ("tiny_ok.ipynb", "params.yaml", "env.json", "metrics.json", "results.csv", "figures/line.png"):
        assert (folder / name).is_file(), name
    assert (folder / "STATUS").read_text().strip() == "ok"
    assert yaml.safe_load((folder / "params.yaml").read_text())["scale"] == 0.5
    assert not list(profile_dir.glob(".partial-*")) and not list(profile_dir.glob("*.failed"))
    summary = (profile_dir / "summary.md").read_text()
    row = summary_row(summary, "tiny_ok")
    assert "| ok |" in row and f"| {run_commit(folder)} |" in row
    (average,) = average_lines(summary, "tiny_ok")
    assert "| 40.00 | 85.40 | -45.40 |" in average  # ours | paper | delta


def test_kernel_runs_our_interpreter_in_the_notebook_folder_with_the_runner_environment(good_run):
    metrics = json.loads((good_run[1] / "tiny_ok" / "metrics.json").read_text())
    assert metrics["python"] == sys.executable
    assert metrics["cwd"] == str(FIXTURES.resolve())
    assert metrics["env"]["TQDM_DISABLE"] == "1"
    assert metrics["env"]["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
    assert metrics["env"]["STSNB_DATA_DIR"] == os.environ.get("STSNB_DATA_DIR")  # inherited, not overridden
    assert runs.RUN_DIR_ENV not in os.environ  # set for the kernel only


def test_undeclared_parameter_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(PlanError) as refused:
        run(tmp_path, {"tiny_ok": {}, "tiny_fail": {"epochs": 3}})
    message = str(refused.value)
    assert "tiny.yaml" in message and "tiny_fail" in message and "'epochs'" in message
    assert not (tmp_path / "out").exists()


def test_parameter_papermill_cannot_parse_is_named_as_such(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    cell = new_code_cell("x0 = 0.25  # Figure 2 uses x0 = 0.25")
    cell.metadata["tags"] = ["parameters"]
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(new_notebook(cells=[cell], metadata={"kernelspec": kernelspec}), tmp_path / "eq_comment.ipynb")
    write_plan(tmp_path / "plans", {"eq_comment": {"x0": 0.5}})
    with pytest.raises(PlanError, match="'x0' is assigned on a line papermill cannot parse"):
        execution.run("tiny", out=tmp_path / "out", plans_dir=tmp_path / "plans", notebooks_dir=tmp_path)


def test_unknown_notebooks_are_refused(tmp_path):
    with pytest.raises(PlanError, match="no_such_notebook"):
        run(tmp_path, {"tiny_ok": {}, "no_such_notebook": {}})
    with pytest.raises(PlanError, match="--only typo"):
        run(tmp_path, {"tiny_ok": {}}, only=["typo"])
    assert not (tmp_path / "out").exists()


@pytest.mark.long  # three notebook runs (9 s): off the default tier
def test_one_failure_does_not_stop_the_others(tmp_path):
    code = run(tmp_path, {"tiny_fail": {"mode": "raise"}, "tiny_ok": {}})
    assert code == 1
    profile_dir = tmp_path / "out" / "tiny"
    assert (profile_dir / "tiny_ok" / "STATUS").read_text().strip() == "ok"
    assert not (profile_dir / "tiny_fail").exists()
    failed = profile_dir / "tiny_fail.failed"
    assert (failed / "STATUS").read_text().startswith("failed: RuntimeError: deliberate failure")
    assert "deliberate failure of the runner fixture" in (failed / "error.log").read_text()
    assert (failed / "tiny_fail.ipynb").is_file()  # the executed notebook, traceback included
    summary = (profile_dir / "summary.md").read_text()
    assert "failed: RuntimeError: deliberate failure of the runner fixture" in summary_row(summary, "tiny_fail")
    assert "| ok |" in summary_row(summary, "tiny_ok")


@pytest.mark.long  # two notebook runs (11 s): off the default tier
def test_failed_rerun_keeps_the_earlier_good_result(tmp_path):
    profile_dir = tmp_path / "out" / "tiny"
    assert run(tmp_path, {"tiny_fail": {"mode": "ok"}, "tiny_ok": {}}, only=["tiny_fail"]) == 0
    good = profile_dir / "tiny_fail"
    before = {path.name: path.read_bytes() for path in good.iterdir() if path.is_file()}
    summary = (profile_dir / "summary.md").read_text()
    assert "| not run |" in summary_row(summary, "tiny_ok")  # --only still lists the whole plan

    assert run(tmp_path, {"tiny_fail": {"mode": "no_finish"}, "tiny_ok": {}}, only=["tiny_fail"]) == 1
    assert {path.name: path.read_bytes() for path in good.iterdir() if path.is_file()} == before
    assert "without run.finish()" in (profile_dir / "tiny_fail.failed" / "STATUS").read_text()
    row = summary_row((profile_dir / "summary.md").read_text(), "tiny_fail")
    assert "failed: the notebook ended without run.finish()" in row and "previous good result kept" in row
    seconds = recorded_seconds(good / "tiny_fail.ipynb")  # the kept result's runtime and commit are shown
    assert f"| {seconds:.0f} | {run_commit(good)} |" in row

    assert run(tmp_path, {"tiny_fail": {"mode": "ok"}, "tiny_ok": {}}, only=["tiny_fail"]) == 0
    assert not (profile_dir / "tiny_fail.failed").exists()  # a good run supersedes the failed attempt
    assert not list(profile_dir.glob(".*"))  # no scratch or set-aside folders left


def test_git_sha_is_dirty_for_changed_source_and_plans_but_not_for_run_outputs(tmp_path):
    import subprocess

    from stsnb.runs.context import git_sha

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True)

    files = {"src.py": "x = 1\n", "papermill_runs/plans/cpu.yaml": "notebooks: {}\n", "papermill_runs/cpu/m.json": "{}"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "init")
    clean = git_sha(tmp_path)
    assert len(clean) == 40
    (tmp_path / "papermill_runs/cpu/m.json").write_text('{"avg": 1}')  # a batch rewrote a committed result
    assert git_sha(tmp_path) == clean
    (tmp_path / "papermill_runs/plans/cpu.yaml").write_text("notebooks: {a: {}}\n")
    assert git_sha(tmp_path) == clean + "-dirty"
    git("checkout", "-q", "--", "papermill_runs/plans/cpu.yaml")
    (tmp_path / "src.py").write_text("x = 2\n")
    assert git_sha(tmp_path) == clean + "-dirty"


def write_timed_plan(folder: Path, notebooks: dict, timeouts: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tiny.yaml").write_text(
        yaml.safe_dump({"description": "fixture plan", "notebooks": notebooks, "timeouts": timeouts})
    )


@pytest.mark.long  # three notebook runs (11 s): off the default tier
def test_a_cell_over_the_plans_timeout_and_a_killed_kernel_fail_and_the_batch_goes_on(tmp_path):
    write_timed_plan(tmp_path / "plans", {"tiny_sleep": {}, "tiny_kill": {}, "tiny_ok": {}}, {"tiny_sleep": 3})
    code = execution.run("tiny", out=tmp_path / "out", plans_dir=tmp_path / "plans", notebooks_dir=FIXTURES)
    assert code == 1
    profile_dir = tmp_path / "out" / "tiny"
    summary = (profile_dir / "summary.md").read_text()
    assert "Timeout" in summary_row(summary, "tiny_sleep") or "timed out" in summary_row(summary, "tiny_sleep")
    assert "DeadKernel" in summary_row(summary, "tiny_kill") or "died" in summary_row(summary, "tiny_kill")
    assert "| ok |" in summary_row(summary, "tiny_ok")  # the batch went on


def test_plan_timeouts_are_checked(tmp_path):
    write_timed_plan(tmp_path / "plans", {"tiny_ok": {}}, {"tiny_ok": -1})
    with pytest.raises(PlanError, match="positive number of seconds"):
        load_plan(tmp_path / "plans" / "tiny.yaml")
    write_timed_plan(tmp_path / "plans", {"tiny_ok": {}}, {"other": 10})
    with pytest.raises(PlanError, match="does not run"):
        load_plan(tmp_path / "plans" / "tiny.yaml")


def test_a_result_set_aside_by_a_crash_is_restored(tmp_path):
    profile_dir = tmp_path / "out"
    (profile_dir / ".old-nb_a").mkdir(parents=True)  # crashed between "rename aside" and "rename new into place"
    (profile_dir / ".old-nb_a" / "STATUS").write_text("ok\n")
    (profile_dir / ".old-nb_b").mkdir()  # crashed after the new one arrived: the aside is stale
    (profile_dir / "nb_b").mkdir()
    assert execution.recover(profile_dir) == ["nb_a"]
    assert (profile_dir / "nb_a" / "STATUS").read_text() == "ok\n"
    assert not (profile_dir / ".old-nb_a").exists() and not (profile_dir / ".old-nb_b").exists()


def test_sections_recorded_before_a_failure_are_kept_and_shown(tmp_path):
    from stsnb.runs import context as runs

    run_dir = tmp_path / "run"
    os.environ[runs.RUN_DIR_ENV] = str(run_dir)
    try:
        run = runs.start("fixture", params={"seed": 0})
    finally:
        del os.environ[runs.RUN_DIR_ENV]
    rows = [{"paper": "p", "table": "Table 1", "setting": "s", "task": "avg", "ours": 1.0, "paper_value": 2.0}]
    run.record("Table 1", {"table1/avg": 71.5}, rows)
    assert json.loads((run_dir / "metrics.json").read_text())["table1/avg"] == 71.5

    def out_of_memory():
        raise MemoryError("batch 512 does not fit")

    assert run.attempt("Table 4", out_of_memory) is None
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["Table 4/status"] == "out_of_memory" and metrics["sections_done"] == ["Table 1", "Table 4"]
    assert (run_dir / "results.csv").read_text().count("\n") == 2  # header + the Table 1 row
    assert not (run_dir / "STATUS").exists()  # not finished: the runner will call it failed, with these sections
    run.finish({"total": 1})
    final = json.loads((run_dir / "metrics.json").read_text())
    assert final["table1/avg"] == 71.5 and final["total"] == 1 and final["sections_done"] == ["Table 1", "Table 4"]


@pytest.mark.long  # waits out a 20 s plan timeout
def test_timeout_bounds_the_whole_notebook_not_each_cell(tmp_path):
    # two cells of 12 s each: under a 20 s limit per cell, over a 20 s limit for the notebook
    write_timed_plan(tmp_path / "plans", {"tiny_sections": {"ending": "sleep", "sleep_seconds": 12}}, {})
    plan = yaml.safe_load((tmp_path / "plans" / "tiny.yaml").read_text())
    (tmp_path / "plans" / "tiny.yaml").write_text(yaml.safe_dump({**plan, "timeout": 20}))
    assert execution.run("tiny", out=tmp_path / "out", plans_dir=tmp_path / "plans", notebooks_dir=FIXTURES) == 1
    failed = tmp_path / "out" / "tiny" / "tiny_sections.failed"
    status = (failed / "STATUS").read_text()
    assert status.startswith("failed: timed out: the notebook ran past its plan timeout of 20 s"), status
    assert json.loads((failed / "metrics.json").read_text())["a_score"] == 12.5  # recorded before the limit


def test_a_killed_kernel_keeps_the_sections_it_finished_and_the_summary_shows_them(tmp_path):
    assert run(tmp_path, {"tiny_sections": {"ending": "kill"}}) == 1
    failed = tmp_path / "out" / "tiny" / "tiny_sections.failed"
    status = (failed / "STATUS").read_text()
    assert status.startswith("failed: the kernel died mid-cell, killed by SIGKILL"), status
    metrics = json.loads((failed / "metrics.json").read_text())
    assert metrics["stsnb_file"] == str(Path(execution.__file__).with_name("__init__.py"))  # the kernel ran this stsnb
    assert metrics["a_score"] == 12.5 and metrics["sections_done"] == ["Section A", "Section B"]
    assert metrics["Section B/status"] == "out_of_memory" and "can't allocate memory" in metrics["Section B/error"]
    summary = (tmp_path / "out" / "tiny" / "summary.md").read_text()
    row = summary_row(summary, "tiny_sections")
    assert "the kernel died mid-cell, killed by SIGKILL" in row
    assert "partial results from the failed run (sections done: Section A, Section B); Section B: out of memory" in row
    (average,) = average_lines(summary, "tiny_sections")
    assert "| (failed run) fixture Section A: made up | avg | 12.50 | 10.00 | 2.50 |" in average


def test_an_out_of_memory_section_is_shown_as_the_result_of_a_good_run(tmp_path):
    assert run(tmp_path, {"tiny_sections": {"ending": "finish"}}) == 0
    folder = tmp_path / "out" / "tiny" / "tiny_sections"
    assert "section B result: None" in (folder / "tiny_sections.ipynb").read_text()  # the notebook went on
    summary = (tmp_path / "out" / "tiny" / "summary.md").read_text()
    row = summary_row(summary, "tiny_sections")
    assert "| ok; Section B: out of memory |" in row and "partial" not in row
    (average,) = average_lines(summary, "tiny_sections")
    assert "| fixture Section A: made up | avg | 12.50 | 10.00 | 2.50 |" in average


def test_replace_folder_never_deletes_the_only_copy(tmp_path):
    target, aside = tmp_path / "nb", tmp_path / ".old-nb"
    aside.mkdir()  # a crash left the good result aside, and nothing recovered it yet
    (aside / "STATUS").write_text("ok\n")
    new = tmp_path / ".partial-nb"
    new.mkdir()
    (new / "STATUS").write_text("failed: x\n")
    execution.replace_folder(new, tmp_path / "nb.failed")  # another target: the aside is not touched
    assert (aside / "STATUS").is_file()
    new.mkdir()
    (new / "metrics.json").write_text("{}")
    execution.replace_folder(new, target)
    assert (target / "metrics.json").is_file() and not aside.exists() and not new.exists()


def test_kernel_death_names_the_signal_and_plan_timeouts_must_be_finite(tmp_path):
    assert execution.kernel_death(-9) == (
        "the kernel died mid-cell, killed by SIGKILL (on Linux typically the out-of-memory killer)"
    )
    assert execution.kernel_death(-11) == "the kernel died mid-cell, killed by SIGSEGV"
    assert execution.kernel_death(1) == "the kernel died mid-cell, exit code 1"
    assert execution.kernel_death(None) == "the kernel died mid-cell (exit code unknown)"
    (tmp_path / "tiny.yaml").write_text("description: d\ntimeout: .inf\nnotebooks: {tiny_ok: {}}\n")
    with pytest.raises(PlanError, match="positive number of seconds"):
        load_plan(tmp_path / "tiny.yaml")
    plan = "description: d\ntimeout: 600\ntimeouts: {b: null}\nnotebooks: {a: {}, b: {}}\n"  # b: no limit
    (tmp_path / "tiny.yaml").write_text(plan)
    assert load_plan(tmp_path / "tiny.yaml").timeouts == {"a": 600.0, "b": None}


def test_attempt_records_cpu_and_cuda_out_of_memory_but_raises_other_errors(tmp_path, monkeypatch, capsys):
    import torch

    from stsnb.runs import context as runs

    monkeypatch.setenv(runs.RUN_DIR_ENV, str(tmp_path / "run"))
    run_ = runs.start("fixture", params={"seed": 0})
    assert run_.attempt("CPU", lambda: torch.empty(2**62, dtype=torch.uint8)) is None  # the CPU allocator refuses

    def cuda_out_of_memory():
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    assert run_.attempt("CUDA", cuda_out_of_memory) is None

    def bug():
        raise RuntimeError("a bug, not a measurement")

    with pytest.raises(RuntimeError, match="a bug"):
        run_.attempt("Bug", bug)
    assert run_.attempt("Fits", lambda: 42) == 42
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["CPU/status"] == metrics["CUDA/status"] == "out_of_memory"
    assert "DefaultCPUAllocator: can't allocate memory" in metrics["CPU/error"]
    assert "Bug/status" not in metrics and "Fits/status" not in metrics
    assert "CPU: out of memory, recorded as its result" in capsys.readouterr().out


NOTEBOOKS = ("00_math", "01_losses", "10_two_stage", "20_old_schema", "30_never_run", "40_failed")
RESULTS_HEADER = "paper,table,setting,task,ours,paper_value,delta,note\n"


def write_run(folder: Path, sha: str, seconds: float | None, metrics: dict, results: str = "") -> None:
    """A run folder as the runner leaves it: STATUS, env.json, metrics.json, results.csv, the executed notebook."""
    folder.mkdir(parents=True)
    (folder / "STATUS").write_text("ok\n")
    (folder / "env.json").write_text(json.dumps({"git_sha": sha, "cpu_count": 2}))
    (folder / "metrics.json").write_text(json.dumps(metrics))
    if results:
        (folder / "results.csv").write_text(RESULTS_HEADER + results)
    papermill = {"duration": seconds} if seconds is not None else {}
    notebook = folder.name.removesuffix(".failed")  # a failed run's folder holds <notebook>.ipynb too
    (folder / f"{notebook}.ipynb").write_text(json.dumps({"cells": [], "metadata": {"papermill": papermill}}))


def new_claims() -> list[dict]:
    """Rows as ``stsnb.evaluation.claims.claim`` writes them: supported on 2 seeds, not tested, equivalent within 1
    point."""
    moved = claims.precondition("the baseline moved the encoder", True, "stage 1 minus untrained: +18.55")
    still = claims.precondition(
        "the baseline moved the encoder", False, "baseline minus untrained: +0.07 [-0.68, +0.78]"
    )
    quote = claims.quote("Section 4.2", "In contrast, Pcc-tuning provides improvements of about 5 percentage points.")
    return [
        stored_claim(
            "stage 2 beats stage 1",
            {"seed 0": (6.79, 4.10, 9.49), "seed 1": (5.21, 2.95, 7.40)},
            (6.0, 3.5, 8.9),
            paper_quote=quote,
            preconditions=[moved, claims.left_start("stage 2", [120, 80], [0.02, 0.03])],
            paper_difference=4.95,
        ),
        claims.claim(
            "smooth K2 beats cross entropy",
            (-1.11, -1.70, -0.58),
            paper_quote=quote,
            preconditions=[still],
            paper_difference=3.02,
        ),
        claims.claim(
            "the template hardly matters",
            {"seed 0": (0.2, -0.3, 0.6)},
            paper_quote=quote,
            margin=1.0,
            margin_reason="the paper's spread",
            paper_difference=0.1,
        ),
        stored_claim(
            "stage 1 improves the untrained model",
            {"seed 0": (17.0, 12.0, 22.0), "seed 1": (18.0, 13.0, 23.0)},
            (17.5, 11.0, 24.0),
            paper_quote=quote,
            kind="check",
        ),
        claims.claim("stage 2 beats its control", {"seed 0": (0.4, -2.0, 2.8)}, paper_quote=quote),
    ]


def old_claims() -> dict:
    """Rows of a run made before preconditions existed (``verdict_rules.claim_row``, three verdicts, a mapping)."""
    row = verdict_rules.claim_row("+HiCL beats simcse", (0.07, -0.33, 0.47), +1)
    no_seeds = {"claim": "Appendix A: CCL over-estimates less", "verdict": "unresolved", "difference": 0.0}
    return {"simcse": row, "appendix": {**no_seeds, "low": 0.0, "high": 0.0}}


@pytest.fixture
def fake_profile(tmp_path) -> tuple[Plan, Path]:
    """Six notebooks: maths only, no results; a good new-schema run; an old-schema run; one never run; one whose
    only run failed after recording a section."""
    (tmp_path / "plans").mkdir()
    plan_file = tmp_path / "plans" / "fake.yaml"
    plan_file.write_text(yaml.safe_dump({"description": "fake plan", "notebooks": {n: {} for n in NOTEBOOKS}}))
    profile_dir = tmp_path / "runs" / "fake"
    write_run(
        profile_dir / "00_math", "a" * 40, 14.2, {"eq7_limit": 0.875}, "p,Eq. 7,limit,max_spearman_limit,87.5,87.5,0,\n"
    )
    write_run(profile_dir / "01_losses", "b" * 40, None, {"seconds": 17.6, "grad_check": 0.0})
    metrics = {
        "claims": new_claims(),
        "takeaway": "Stage 2 beat stage 1 by +6.00 points on 2 seeds.",
        "comparable": "direction only",
    }
    results = (
        "pcc-tuning,Table 2,ours stage 2 vs Mistral-7b,STS12,71.62,85.77,-14.15,per task\n"
        "pcc-tuning,Table 2,ours stage 2 vs Mistral-7b,avg,69.1573,90.61,-21.4527,the same 60 pairs per task\n"
    )
    write_run(profile_dir / "10_two_stage", "c" * 40 + "-dirty", 414.3, metrics, results)
    old = "sts-regression,Table 1,ours cross_entropy vs BERT-base,avg of stsb,54.26,73.01,-18.75,one seed\n"
    write_run(profile_dir / "20_old_schema", "d" * 40, 1730.2, {"claims": old_claims()}, old)
    failed = profile_dir / "40_failed.failed"
    partial = "ccl,Table 3,ours bi,avg,12.5,44.8,-32.3,section A\n"
    write_run(failed, "e" * 40, 95.0, {"sections_done": ["Section A"], "Section B/status": "out_of_memory"}, partial)
    (failed / "STATUS").write_text("failed: the kernel died mid-cell, killed by SIGKILL\n")
    return load_plan(plan_file), profile_dir


def test_overview_has_one_row_per_notebook_read_from_its_run(fake_profile):
    plan, profile_dir = fake_profile
    rows = overview_rows([recorded_outcome(n, profile_dir) for n in plan.notebooks], profile_dir)
    assert [row.notebook for row in rows] == list(NOTEBOOKS)
    by_name = {row.notebook: row for row in rows}
    two_stage = by_name["10_two_stage"]
    assert two_stage.status == "ok (earlier run)" and two_stage.commit == "ccccccc-dirty"
    assert two_stage.seconds == pytest.approx(414.3)
    assert two_stage.verdicts == {
        "supported": 1,
        "contradicted": 0,
        "unresolved": 1,
        "equivalent": 1,
        "small effect": 0,
        "no meaningful effect": 0,
        "not tested": 1,
    }, "the paper's claims only"
    assert two_stage.one_seed == {**dict.fromkeys(verdict_rules.VERDICTS, 0), "equivalent": 1}, "decisive on 1 seed"
    assert two_stage.checks == {**dict.fromkeys(verdict_rules.VERDICTS, 0), "supported": 1}
    assert two_stage.cells()[len(verdict_rules.VERDICTS) + 4] == "1 supported"
    assert two_stage.cells()[0] == MISSING, "no paper's main claim is registered for a notebook of this name"
    assert two_stage.takeaway == "Stage 2 beat stage 1 by +6.00 points on 2 seeds."
    assert two_stage.comparable == "direction only"
    assert by_name["01_losses"].seconds == pytest.approx(17.6)  # no papermill duration: metrics "seconds"
    assert by_name["00_math"].verdicts is None and by_name["00_math"].takeaway is None  # not invented
    assert by_name["20_old_schema"].verdicts == {**dict.fromkeys(verdict_rules.VERDICTS, 0), "unresolved": 2}
    assert by_name["20_old_schema"].checks == dict.fromkeys(
        verdict_rules.VERDICTS, 0
    )  # rows without a kind: the paper's
    never = by_name["30_never_run"]
    assert never.status == "not run" and never.commit is None and never.seconds is None
    assert never.cells() == [MISSING, "not run", *[MISSING] * (len(OVERVIEW_COLUMNS) - 3)]
    failed = by_name["40_failed"]
    assert failed.status.startswith("failed (earlier run): the kernel died mid-cell, killed by SIGKILL; partial")
    assert failed.commit == "eeeeeee" and failed.folder == profile_dir / "40_failed.failed"


def test_summary_opens_with_the_overview_then_claims_then_averages_only(fake_profile):
    plan, profile_dir = fake_profile
    outcomes = [recorded_outcome(n, profile_dir) for n in plan.notebooks]
    text = summary_markdown(plan, outcomes, profile_dir)
    sections = md.sections(text)
    assert list(sections) == ["", "Overview", "Claims", "Averages"]
    assert "about" not in sections[""] and "together 2271 s (38 min) over 5 of 6 notebooks" in sections[""]
    overview = md.table(sections["Overview"])
    assert len(overview) == 6 and list(overview[0]) == list(OVERVIEW_COLUMNS)
    two_stage = overview[2]
    assert md.link(two_stage["notebook"]) == ("10_two_stage", "10_two_stage/10_two_stage.ipynb")
    assert [two_stage[v] for v in verdict_rules.VERDICTS] == ["1", "0", "1", "1 (1 on one seed)", "0", "0", "1"]
    assert two_stage["checks of our setting"] == "1 supported" and overview[3]["checks of our setting"] == "none"
    assert two_stage["runtime (s)"] == "414" and two_stage["commit"] == "ccccccc-dirty"
    assert two_stage["takeaway"].startswith("Stage 2 beat stage 1") and two_stage["comparable with the paper"] == (
        "direction only"
    )
    assert overview[0]["supported"] == MISSING and overview[0]["takeaway"] == MISSING
    assert overview[4]["status"] == "not run" and overview[4]["commit"] == MISSING

    claims_text = sections["Claims"]
    assert claims_text.index("### Claims of the papers") < claims_text.index("### Checks of our setting")
    papers, checks = claims_text.split("### Checks of our setting")
    assert [r["claim"] for r in md.table(checks)] == ["stage 1 improves the untrained model"]
    assert "stage 1 improves the untrained model" not in papers
    # 2 + 1 + 1 + 2 + 1 per-seed intervals of 10_two_stage, 2 seeds-and-pairs, 1 + 1 of the old schema's rows
    # and the one interval a precondition's evidence prints ("baseline minus untrained: +0.07 [-0.68, +0.78]")
    assert "**Multiplicity.** 11 claim intervals and 1 precondition interval computed (12 in all); about 0.6" in (
        claims_text
    )
    assert "(per notebook, claims + preconditions: 10_two_stage 9 + 1, 20_old_schema 2 + 0)" in claims_text
    claim_rows = {row["claim"]: row for row in md.tables(claims_text)}
    assert list(md.table(claims_text)[0]) == list(CLAIM_COLUMNS)
    supported = claim_rows["stage 2 beats stage 1"]
    assert supported["ours: difference [95% interval]"] == "+6.00 [+2.95, +9.49]"  # mean over seeds, envelope
    assert (supported["seeds"], supported["paper's difference"]) == ("2", "+4.95")
    assert (
        supported["verdict"]
        == "supported; each seed: supported, supported (2 of 2 seeds' intervals on the paper's side)"
    )
    # two seeds (6.79, 5.21): the t interval of their mean, t(0.975, 1) = 12.71 x 1.117 / sqrt(2) = 10.04, is wider
    assert supported["seeds and pairs [95% interval]"] == "+6.00 [-4.04, +16.04] (t floor)"
    assert supported["detectable (80% power)"] == MISSING  # only unresolved claims of the paper
    unresolved = claim_rows["stage 2 beats its control"]
    assert unresolved["detectable (80% power)"] == f"±{verdict_rules.detectable_effect(-2.0, 2.8):.2f}" == "±3.43"
    assert claim_rows["stage 1 improves the untrained model"]["detectable (80% power)"] == MISSING
    assert supported["precondition"] == ("holds: the baseline moved the encoder; stage 2 is not its starting point")
    not_tested = claim_rows["smooth K2 beats cross entropy"]
    assert not_tested["verdict"] == "not tested" and not_tested["seeds"] == "1"
    assert not_tested["precondition"] == (
        "does not hold: the baseline moved the encoder (baseline minus untrained: +0.07 [-0.68, +0.78])"
    )
    assert claim_rows["the template hardly matters"]["verdict"] == "equivalent (margin ±1) (1 seed, provisional)"
    old = claim_rows["+HiCL beats simcse"]
    assert old["verdict"] == "unresolved" and old["precondition"] == "— (the run predates preconditions)"
    no_seeds = claim_rows["Appendix A: CCL over-estimates less"]
    assert no_seeds["seeds"] == MISSING and no_seeds["paper's difference"] == MISSING

    averages = md.table(sections["Averages"])
    assert [(row["notebook"], row["task"], row["ours"]) for row in averages] == [
        ("10_two_stage", "avg", "69.16"),
        ("20_old_schema", "avg of stsb", "54.26"),
        ("40_failed", "avg", "12.50"),
    ]
    assert averages[0]["delta"] == "-21.45" and averages[0]["comparable with the paper"] == "direction only"
    assert averages[2]["setting"].startswith("(failed run) ")
    assert "STS12" not in text and "max_spearman_limit" not in text  # per-task rows stay in results.csv
    assert "[10_two_stage](10_two_stage/results.csv)" in sections["Averages"]
    assert "No average row (its rows are in its results.csv): 00_math." in sections["Averages"]


def test_stsnb_summary_rewrites_summary_md_from_the_run_folders(fake_profile, capsys):
    from stsnb import cli

    plan, profile_dir = fake_profile
    before = {p: p.stat().st_mtime_ns for p in profile_dir.rglob("*")}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("stsnb.runs.plans.PLANS_DIR", plan.path.parent)
        path = write_summary("fake", profile_dir.parent, plan.path.parent)
    assert path == profile_dir / "summary.md"
    assert {p: p.stat().st_mtime_ns for p in profile_dir.rglob("*") if p != path} == before  # nothing else touched
    assert len(md.table(md.sections(path.read_text())["Overview"])) == 6
    with pytest.raises(PlanError, match="no runs at"):
        write_summary("fake", profile_dir.parent / "elsewhere", plan.path.parent)
    with pytest.raises(SystemExit):
        cli.main(["summary", "--profile", "no_such_profile", "--out", str(profile_dir.parent)])
    assert "no plan for profile 'no_such_profile'" in capsys.readouterr().err


def test_a_scratch_folder_left_by_a_dead_runner_is_kept_not_deleted(tmp_path):
    profile_dir = tmp_path / "out" / "tiny"
    abandoned = profile_dir / ".partial-tiny_ok"
    abandoned.mkdir(parents=True)
    (abandoned / "metrics.json").write_text('{"sections_done": ["hours of work"]}')
    assert run(tmp_path, {"tiny_ok": {}}) == 0
    kept = list(profile_dir.glob(".failed-*-tiny_ok"))
    assert len(kept) == 1 and "hours of work" in (kept[0] / "metrics.json").read_text()


@pytest.mark.long  # a notebook stopped by SIGTERM (20 s): off the default tier (README command 2 under 10 min)
@pytest.mark.slow
def test_sigterm_keeps_the_notebook_in_progress_and_writes_summary(tmp_path):
    import signal
    import subprocess
    import time

    write_plan(tmp_path / "plans", {"tiny_ok": {}, "tiny_sleep": {"seconds": 60}})
    script = (
        "import sys; from pathlib import Path; from stsnb.runs import execution; "
        f"execution.run('tiny', out=Path({str(tmp_path / 'out')!r}), plans_dir=Path({str(tmp_path / 'plans')!r}), "
        f"notebooks_dir=Path({str(FIXTURES)!r}))"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    profile_dir = tmp_path / "out" / "tiny"
    deadline = time.monotonic() + 120
    while not (profile_dir / ".partial-tiny_sleep").exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(5)  # the kernel is in the sleeping cell
    child.send_signal(signal.SIGTERM)
    child.wait(timeout=120)
    assert child.returncode != 0
    assert "interrupted" in (profile_dir / "tiny_sleep.failed" / "STATUS").read_text()
    summary = (profile_dir / "summary.md").read_text()
    assert "| ok |" in summary_row(summary, "tiny_ok") and "interrupted" in summary_row(summary, "tiny_sleep")
    assert not list(profile_dir.glob(".lock*"))  # every lock let go


def test_a_plan_that_extends_another_overlays_its_values_in_the_base_order(tmp_path):
    (tmp_path / "base.yaml").write_text("description: b\ntimeout: 100\nnotebooks: {a: {x: 1, y: 2}, b: {z: 3}}\n")
    (tmp_path / "child.yaml").write_text("extends: base\ndescription: c\nnotebooks: {b: {z: 4, w: 5}}\n")
    plan = load_plan(tmp_path / "child.yaml")
    assert list(plan.notebooks) == ["a", "b"]
    assert plan.notebooks == {"a": {"x": 1, "y": 2}, "b": {"z": 4, "w": 5}}
    assert plan.timeouts == {"a": 100.0, "b": 100.0} and plan.description == "c"
    (tmp_path / "child.yaml").write_text("extends: base\ndescription: c\nnotebooks: {c: {}}\n")
    with pytest.raises(PlanError, match="notebook c is not in the plan it extends"):
        load_plan(tmp_path / "child.yaml")
    (tmp_path / "base.yaml").write_text("extends: child\ndescription: b\nnotebooks: {}\n")
    with pytest.raises(PlanError, match="cycle"):
        load_plan(tmp_path / "child.yaml")


def test_the_rehearsal_is_the_paper_plan_with_tiny_models_and_two_processes():
    from stsnb.models import tiny as tiny_models

    paper = load_plan(plan_path("paper"))
    rehearsal = load_plan(plan_path("rehearsal"))
    assert list(rehearsal.notebooks) == list(paper.notebooks)
    for name, values in rehearsal.notebooks.items():
        assert set(paper.notebooks[name]) <= set(values), name  # every paper value is rehearsed or replaced
        for key in ("backbone", "backbones", "contrastive_backbones", "memory_model"):
            names = values.get(key)
            for model in [names] if isinstance(names, str) else names or []:
                assert tiny_models.is_tiny(model), f"{name}.{key}: {model} is not a tiny model"
        if "num_processes" in values:
            assert values["num_processes"] == 2, name
        assert values.get("nli_source", "snli-dev-test") != "hub", name
        assert values.get("corpus_source", "sample") != "hub", name  # offline: no Hub in CI
    assert paper.notebooks["30_hicl"]["corpus_source"] == "paper"  # Section 4.1: wiki1m's 1M sentences, data/paper/
    assert paper.notebooks["20_sts_regression"]["nli_source"] == "paper"  # SNLI + MultiNLI train, data/paper/


def write_checkpointing_plan(folder: Path, notebooks: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    plan = {"description": "fixture plan with checkpoints", "checkpoints": True, "notebooks": notebooks}
    (folder / "tiny.yaml").write_text(yaml.safe_dump(plan))


@pytest.mark.long  # a notebook killed and run again (20 s); fit-level resume is in the default tier (test_train)
def test_a_killed_notebook_resumes_its_training_from_the_checkpoint_with_stsnb_run_resume(tmp_path):
    out, plans = tmp_path / "out", tmp_path / "plans"
    kwargs = dict(out=out, plans_dir=plans, notebooks_dir=FIXTURES)
    write_checkpointing_plan(plans, {"tiny_train": {}})
    assert execution.run("tiny", **kwargs) == 0
    uninterrupted = json.loads((out / "tiny" / "tiny_train" / "metrics.json").read_text())
    weights = sorted(p.name for p in (out / "tiny" / "tiny_train" / "weights").iterdir())
    assert len(weights) == 2 and weights[0].endswith(".json") and weights[1].endswith(".pt"), weights
    assert not (out / "tiny" / ".checkpoints" / "tiny_train").exists()  # folded into weights/ after success

    write_checkpointing_plan(plans, {"tiny_train": {"kill_after_batches": 11}})  # killed after step 9's checkpoint
    assert execution.run("tiny", **kwargs) == 1
    assert (out / "tiny" / ".checkpoints" / "tiny_train").is_dir()  # kept for --resume
    write_checkpointing_plan(plans, {"tiny_train": {}})
    assert execution.run("tiny", resume=True, **kwargs) == 0
    resumed = json.loads((out / "tiny" / "tiny_train" / "metrics.json").read_text())
    assert resumed["resumed_at"] == 9 and resumed["steps"] == uninterrupted["steps"] == 16
    assert resumed["weight"] == pytest.approx(uninterrupted["weight"], abs=1e-6)


@pytest.mark.long  # two notebook runs (19 s): off the default tier (README command 2 under 10 min)
def test_without_resume_an_earlier_runs_checkpoints_are_moved_aside_not_deleted(tmp_path):
    out, plans = tmp_path / "out", tmp_path / "plans"
    write_checkpointing_plan(plans, {"tiny_train": {"kill_after_batches": 11}})
    assert execution.run("tiny", out=out, plans_dir=plans, notebooks_dir=FIXTURES) == 1
    write_checkpointing_plan(plans, {"tiny_train": {}})
    assert execution.run("tiny", out=out, plans_dir=plans, notebooks_dir=FIXTURES) == 0
    (earlier,) = (out / "tiny" / ".checkpoints").glob("tiny_train.earlier-*")
    assert any(earlier.glob("*/last/progress.json"))
    result = json.loads((out / "tiny" / "tiny_train" / "metrics.json").read_text())
    assert result["resumed_at"] is None  # started from zero


def test_plan_checkpoints_must_be_a_boolean_and_are_inherited(tmp_path):
    (tmp_path / "base.yaml").write_text(yaml.safe_dump({"checkpoints": True, "notebooks": {"tiny_ok": {}}}))
    (tmp_path / "child.yaml").write_text(yaml.safe_dump({"extends": "base", "notebooks": {}}))
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"checkpoints": "yes", "notebooks": {"tiny_ok": {}}}))
    assert load_plan(tmp_path / "child.yaml").checkpoints is True
    with pytest.raises(PlanError, match="checkpoints must be true or false"):
        load_plan(tmp_path / "bad.yaml")


def test_the_terminal_shows_the_notebooks_progress_lines_and_not_the_kernels_own_output(tmp_path, capfd):
    """The kernel's progress lines reach the terminal through the live line (in a log: a plain line, with the cell);
    ipykernel's TCP warning and anything else the kernel prints outside its cells go to kernel.log; neither log stays
    in a good run, and the executed notebook holds no progress at all."""
    assert run(tmp_path, {"tiny_progress": {}}) == 0
    err = capfd.readouterr().err
    assert "without encryption" not in err and "IPKernelApp" not in err
    shown = [line for line in err.splitlines() if "train " in line]
    assert shown and shown[0].startswith("[stsnb run] 1/1 tiny_progress: ") and ", cell 4/5, train " in shown[0]
    folder = tmp_path / "out" / "tiny" / "tiny_progress"
    assert not (folder / execution.PROGRESS_LOG).exists() and not (folder / execution.KERNEL_LOG).exists()
    cells = json.loads((folder / "tiny_progress.ipynb").read_text())["cells"]
    assert not [output for cell in cells for output in cell.get("outputs", [])]
