"""The batch runner on tiny fixture notebooks (no models): layout, refusals, failures, good results kept."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from stsnb import runner

FIXTURES = Path(__file__).parent / "fixtures" / "notebooks"


def write_plan(folder: Path, notebooks: dict, profile: str = "tiny") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{profile}.yaml"
    path.write_text(yaml.safe_dump({"description": "fixture plan, seconds on CPU", "notebooks": notebooks}))
    return path


def run(tmp_path: Path, notebooks: dict, **kwargs) -> int:
    write_plan(tmp_path / "plans", notebooks)
    return runner.run("tiny", out=tmp_path / "out", plans_dir=tmp_path / "plans", notebooks_dir=FIXTURES, **kwargs)


def summary_row(summary: str, notebook: str) -> str:
    return next(line for line in summary.splitlines() if line.startswith((f"| [{notebook}]", f"| {notebook} |")))


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
    row = summary_row((profile_dir / "summary.md").read_text(), "tiny_ok")
    assert "| ok |" in row and "avg=40" in row
    assert "| 40.00 | 85.40 | -45.40 |" in row  # ours | paper | delta


def test_kernel_runs_our_interpreter_in_the_notebook_folder_with_the_runner_environment(good_run):
    metrics = json.loads((good_run[1] / "tiny_ok" / "metrics.json").read_text())
    assert metrics["python"] == sys.executable
    assert metrics["cwd"] == str(FIXTURES.resolve())
    assert metrics["env"]["TQDM_DISABLE"] == "1"
    assert metrics["env"]["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
    assert metrics["env"]["STSNB_DATA_DIR"] == os.environ.get("STSNB_DATA_DIR")  # inherited, not overridden
    assert runner.RUN_DIR_ENV not in os.environ  # set for the kernel only


def test_undeclared_parameter_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(runner.PlanError) as refused:
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
    with pytest.raises(runner.PlanError, match="'x0' is assigned on a line papermill cannot parse"):
        runner.run("tiny", out=tmp_path / "out", plans_dir=tmp_path / "plans", notebooks_dir=tmp_path)


def test_unknown_notebooks_are_refused(tmp_path):
    with pytest.raises(runner.PlanError, match="no_such_notebook"):
        run(tmp_path, {"tiny_ok": {}, "no_such_notebook": {}})
    with pytest.raises(runner.PlanError, match="--only typo"):
        run(tmp_path, {"tiny_ok": {}}, only=["typo"])
    assert not (tmp_path / "out").exists()


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
    assert "value=1" in row  # the kept result's metrics

    assert run(tmp_path, {"tiny_fail": {"mode": "ok"}, "tiny_ok": {}}, only=["tiny_fail"]) == 0
    assert not (profile_dir / "tiny_fail.failed").exists()  # a good run supersedes the failed attempt
    assert not list(profile_dir.glob(".*"))  # no scratch or set-aside folders left


def test_git_sha_is_dirty_for_changed_source_and_plans_but_not_for_run_outputs(tmp_path):
    import subprocess

    from stsnb.runs import git_sha

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


def test_a_cell_over_the_plans_timeout_and_a_killed_kernel_fail_and_the_batch_goes_on(tmp_path):
    write_timed_plan(tmp_path / "plans", {"tiny_sleep": {}, "tiny_kill": {}, "tiny_ok": {}}, {"tiny_sleep": 3})
    code = runner.run("tiny", out=tmp_path / "out", plans_dir=tmp_path / "plans", notebooks_dir=FIXTURES)
    assert code == 1
    profile_dir = tmp_path / "out" / "tiny"
    summary = (profile_dir / "summary.md").read_text()
    assert "Timeout" in summary_row(summary, "tiny_sleep") or "timed out" in summary_row(summary, "tiny_sleep")
    assert "DeadKernel" in summary_row(summary, "tiny_kill") or "died" in summary_row(summary, "tiny_kill")
    assert "| ok |" in summary_row(summary, "tiny_ok")  # the batch went on


def test_plan_timeouts_are_checked(tmp_path):
    write_timed_plan(tmp_path / "plans", {"tiny_ok": {}}, {"tiny_ok": -1})
    with pytest.raises(runner.PlanError, match="positive number of seconds"):
        runner.load_plan(tmp_path / "plans" / "tiny.yaml")
    write_timed_plan(tmp_path / "plans", {"tiny_ok": {}}, {"other": 10})
    with pytest.raises(runner.PlanError, match="does not run"):
        runner.load_plan(tmp_path / "plans" / "tiny.yaml")


def test_a_result_set_aside_by_a_crash_is_restored(tmp_path):
    profile_dir = tmp_path / "out"
    (profile_dir / ".old-nb_a").mkdir(parents=True)  # crashed between "rename aside" and "rename new into place"
    (profile_dir / ".old-nb_a" / "STATUS").write_text("ok\n")
    (profile_dir / ".old-nb_b").mkdir()  # crashed after the new one arrived: the aside is stale
    (profile_dir / "nb_b").mkdir()
    assert runner.recover(profile_dir) == ["nb_a"]
    assert (profile_dir / "nb_a" / "STATUS").read_text() == "ok\n"
    assert not (profile_dir / ".old-nb_a").exists() and not (profile_dir / ".old-nb_b").exists()


def test_sections_recorded_before_a_failure_are_kept_and_shown(tmp_path):
    from stsnb import runs

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


def test_timeout_bounds_the_whole_notebook_not_each_cell(tmp_path):
    # two cells of 12 s each: under a 20 s limit per cell, over a 20 s limit for the notebook
    write_timed_plan(tmp_path / "plans", {"tiny_sections": {"ending": "sleep", "sleep_seconds": 12}}, {})
    plan = yaml.safe_load((tmp_path / "plans" / "tiny.yaml").read_text())
    (tmp_path / "plans" / "tiny.yaml").write_text(yaml.safe_dump({**plan, "timeout": 20}))
    assert runner.run("tiny", out=tmp_path / "out", plans_dir=tmp_path / "plans", notebooks_dir=FIXTURES) == 1
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
    assert metrics["stsnb_file"] == str(Path(runner.__file__).with_name("runs.py"))  # the kernel ran this stsnb
    assert metrics["a_score"] == 12.5 and metrics["sections_done"] == ["Section A", "Section B"]
    assert metrics["Section B/status"] == "out_of_memory" and "can't allocate memory" in metrics["Section B/error"]
    row = summary_row((tmp_path / "out" / "tiny" / "summary.md").read_text(), "tiny_sections")
    assert "the kernel died mid-cell, killed by SIGKILL" in row
    assert "partial, from the failed run (sections done: Section A, Section B), Section B: out of memory" in row
    assert "a_score=12.5" in row and "| (failed run) fixture Section A: made up | avg | 12.50 | 10.00 | 2.50 |" in row


def test_an_out_of_memory_section_is_shown_as_the_result_of_a_good_run(tmp_path):
    assert run(tmp_path, {"tiny_sections": {"ending": "finish"}}) == 0
    folder = tmp_path / "out" / "tiny" / "tiny_sections"
    assert "section B result: None" in (folder / "tiny_sections.ipynb").read_text()  # the notebook went on
    row = summary_row((tmp_path / "out" / "tiny" / "summary.md").read_text(), "tiny_sections")
    assert "| ok |" in row and "Section B: out of memory, a_score=12.5" in row and "partial" not in row
    assert "| fixture Section A: made up | avg | 12.50 | 10.00 | 2.50 |" in row


def test_replace_folder_never_deletes_the_only_copy(tmp_path):
    target, aside = tmp_path / "nb", tmp_path / ".old-nb"
    aside.mkdir()  # a crash left the good result aside, and nothing recovered it yet
    (aside / "STATUS").write_text("ok\n")
    new = tmp_path / ".partial-nb"
    new.mkdir()
    (new / "STATUS").write_text("failed: x\n")
    runner.replace_folder(new, tmp_path / "nb.failed")  # another target: the aside is not touched
    assert (aside / "STATUS").is_file()
    new.mkdir()
    (new / "metrics.json").write_text("{}")
    runner.replace_folder(new, target)
    assert (target / "metrics.json").is_file() and not aside.exists() and not new.exists()


def test_kernel_death_names_the_signal_and_plan_timeouts_must_be_finite(tmp_path):
    assert runner.kernel_death(-9) == (
        "the kernel died mid-cell, killed by SIGKILL (on Linux typically the out-of-memory killer)"
    )
    assert runner.kernel_death(-11) == "the kernel died mid-cell, killed by SIGSEGV"
    assert runner.kernel_death(1) == "the kernel died mid-cell, exit code 1"
    assert runner.kernel_death(None) == "the kernel died mid-cell (exit code unknown)"
    (tmp_path / "tiny.yaml").write_text("description: d\ntimeout: .inf\nnotebooks: {tiny_ok: {}}\n")
    with pytest.raises(runner.PlanError, match="positive number of seconds"):
        runner.load_plan(tmp_path / "tiny.yaml")
    plan = "description: d\ntimeout: 600\ntimeouts: {b: null}\nnotebooks: {a: {}, b: {}}\n"  # b: no limit
    (tmp_path / "tiny.yaml").write_text(plan)
    assert runner.load_plan(tmp_path / "tiny.yaml").timeouts == {"a": 600.0, "b": None}


def test_attempt_records_cpu_and_cuda_out_of_memory_but_raises_other_errors(tmp_path, monkeypatch, capsys):
    import torch

    from stsnb import runs

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


def test_summary_shows_each_rows_note_and_every_claims_verdict(tmp_path):
    folder = tmp_path / "cpu" / "nb"
    folder.mkdir(parents=True)
    (folder / "results.csv").write_text(
        "paper,table,setting,task,ours,paper_value,delta,note\n"
        "p,Table 5,x vs y,avg of stsb,70,76,-6,ours on stsb only\n"
    )
    claims = [
        {
            "claim": "a beats b",
            "verdict": "supported",
            "difference": 1.5,
            "low": 0.4,
            "high": 2.6,
            "seeds": 2,
            "paper_difference": 3.0,
        },
        {
            "claim": "c beats d",
            "verdict": "unresolved",
            "difference": 0.1,
            "low": -0.5,
            "high": 0.7,
            "seeds": 1,
            "paper_difference": None,
        },
    ]
    (folder / "metrics.json").write_text(json.dumps({"claims": claims}))
    plan = runner.Plan("cpu", tmp_path / "cpu.yaml", "d", {"nb": {}})
    summary = runner.summary_markdown(plan, [runner.Outcome("nb", "ok", good=folder)], tmp_path / "cpu")
    assert "| 70.00 | 76.00 | -6.00 | ours on stsb only |" in summary
    assert "| nb | a beats b | +1.50 [+0.40, +2.60] | 2 | +3.00 | **supported** |" in summary
    assert "| nb | c beats d | +0.10 [-0.50, +0.70] | 1 |  | **unresolved** |" in summary
