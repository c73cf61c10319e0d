"""Runs of one profile side by side (``stsnb.runs.locks``, ``stsnb.runs.parallel``): different notebooks at once, the
same one refused naming its holder, a dead run's lock taken over, summary.md from every run's folders, and ``stsnb run
--parallel``: each child on its own ``CUDA_VISIBLE_DEVICES``, bad groups refused, the worst exit code. Tiny fixture
notebooks only (no model): seconds each."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from nbformat.v4 import new_code_cell, new_notebook

from stsnb import cli
from stsnb.runs import execution, locks
from stsnb.runs.parallel import Group, parse_groups, run_parallel

FIXTURES = Path(__file__).parent / "fixtures" / "notebooks"
# ``stsnb run --only`` on a fixture plan, as a child process: argv = notebooks, out, plans folder, notebooks folder
CHILD = (
    "import sys; from pathlib import Path; from stsnb.runs import execution; "
    "sys.exit(execution.run('tiny', only=sys.argv[1].split(','), out=Path(sys.argv[2]), plans_dir=Path(sys.argv[3]), "
    "notebooks_dir=Path(sys.argv[4])))"
)


def write_plan(plans: Path, notebooks: dict) -> None:
    plans.mkdir(parents=True, exist_ok=True)
    (plans / "tiny.yaml").write_text(yaml.safe_dump({"description": "fixture plan", "notebooks": notebooks}))


def child_command(names: str, tmp_path: Path, notebooks_dir: Path = FIXTURES) -> list[str]:
    return [sys.executable, "-c", CHILD, names, str(tmp_path / "out"), str(tmp_path / "plans"), str(notebooks_dir)]


def overview_row(summary: Path, notebook: str) -> str:
    lines = summary.read_text().splitlines()
    return next(line for line in lines if line.startswith((f"| [{notebook}]", f"| {notebook} |")))


def wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.2)


@pytest.mark.long  # two runners at once (15 s): off the default tier (README command 2 under 10 min)
def test_two_runs_of_a_profile_run_different_notebooks_at_once_and_refuse_the_same_one(tmp_path):
    write_plan(tmp_path / "plans", {"tiny_ok": {}, "tiny_sleep": {"seconds": 60}})
    kwargs = dict(out=tmp_path / "out", plans_dir=tmp_path / "plans", notebooks_dir=FIXTURES)
    profile_dir = tmp_path / "out" / "tiny"
    other = subprocess.Popen(child_command("tiny_sleep", tmp_path), stderr=subprocess.PIPE, text=True)
    try:
        wait_for(profile_dir / ".partial-tiny_sleep")  # the other run is in its notebook
        assert execution.run("tiny", only=["tiny_ok"], **kwargs) == 0
        assert other.poll() is None and (profile_dir / ".partial-tiny_sleep").is_dir()  # both ran at once
        refusal = rf"tiny_sleep of {profile_dir} is being run by another stsnb run.*\(pid {other.pid} on \S+, started "
        with pytest.raises(locks.RunLocked, match=refusal):
            execution.run("tiny", only=["tiny_sleep"], **kwargs)
        with pytest.raises(locks.RunLocked, match=refusal):  # the whole plan: refused, tiny_ok's lock let go
            execution.run("tiny", **kwargs)
        assert not locks.notebook_lock_path(profile_dir, "tiny_ok").exists()
    finally:
        other.send_signal(signal.SIGTERM)
        other.wait(timeout=60)
    summary = profile_dir / "summary.md"  # written last by the stopped run, from both runs' folders
    assert "| ok (earlier run) |" in overview_row(summary, "tiny_ok")
    assert "interrupted" in overview_row(summary, "tiny_sleep")
    assert (profile_dir / "tiny_ok" / "STATUS").read_text() == "ok\n"
    assert not list(profile_dir.glob(".lock*")) and not list(profile_dir.glob(".partial-*"))


def test_a_held_notebook_is_refused_and_a_dead_runs_lock_is_taken_over(tmp_path, capfd):
    write_plan(tmp_path / "plans", {"tiny_ok": {}})
    kwargs = dict(out=tmp_path / "out", plans_dir=tmp_path / "plans", notebooks_dir=FIXTURES)
    profile_dir = tmp_path / "out" / "tiny"
    profile_dir.mkdir(parents=True)
    held = rf"another stsnb run.*\(pid {os.getpid()} on {socket.gethostname()}, started .*; lock file "
    with locks.notebook_locks(profile_dir, ["tiny_ok"]), pytest.raises(locks.RunLocked, match=held):
        execution.run("tiny", **kwargs)
    assert not list(profile_dir.glob(".lock*"))
    gone = {"pid": 2**22 + 12345, "started": "long ago"}  # no such process; its locks died with it
    for lock in (locks.notebook_lock_path(profile_dir, "tiny_ok"), profile_dir / locks.FOLDER_LOCK):
        lock.write_text(json.dumps(gone))
    assert execution.run("tiny", **kwargs) == 0
    assert f"that is gone (pid {gone['pid']})" in capfd.readouterr().err
    assert not list(profile_dir.glob(".lock*"))


def env_notebook(path: Path) -> None:
    """A notebook that sleeps ``seconds`` and records the ``CUDA_VISIBLE_DEVICES`` its kernel saw."""
    import nbformat

    parameters = new_code_cell("seconds = 0")
    parameters.metadata["tags"] = ["parameters"]
    body = new_code_cell(
        "import os, time\nfrom stsnb import runs\n\nrun = runs.start('env', params=runs.collect_params(globals()))\n"
        "time.sleep(seconds)\nrun.finish({'cuda_visible_devices': os.environ.get('CUDA_VISIBLE_DEVICES')})"
    )
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(new_notebook(cells=[parameters, body], metadata={"kernelspec": kernelspec}), path)


def papermill_times(executed: Path) -> tuple[str, str]:
    meta = json.loads(executed.read_text())["metadata"]["papermill"]
    return meta["start_time"], meta["end_time"]


@pytest.mark.long  # two child runners (15 s): off the default tier (README command 2 under 10 min)
def test_parallel_children_run_at_once_each_on_its_gpus_and_summary_lists_both(tmp_path, capfd):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    for name in ("env_a", "env_b"):
        env_notebook(notebooks / f"{name}.ipynb")
    write_plan(tmp_path / "plans", {"env_a": {"seconds": 4}, "env_b": {"seconds": 4}})
    groups, before = parse_groups("0,1:env_a 2:env_b"), os.environ.get("CUDA_VISIBLE_DEVICES")
    code = run_parallel(groups, lambda group: child_command(",".join(group.notebooks), tmp_path, notebooks))
    err = capfd.readouterr().err
    assert code == 0, err
    assert "[gpus 0,1] [stsnb run] 1/1 env_a: ok" in err and "[gpus 2] [stsnb run] 1/1 env_b: ok" in err
    profile_dir = tmp_path / "out" / "tiny"
    seen = {
        n: json.loads((profile_dir / n / "metrics.json").read_text())["cuda_visible_devices"]
        for n in ("env_a", "env_b")
    }
    assert seen == {"env_a": "0,1", "env_b": "2"}  # each kernel inherited its child's GPUs
    (a_start, a_end), (b_start, b_end) = (papermill_times(profile_dir / n / f"{n}.ipynb") for n in ("env_a", "env_b"))
    assert a_start < b_end and b_start < a_end  # the two notebooks overlapped in time
    for name in ("env_a", "env_b"):
        assert "| ok" in overview_row(profile_dir / "summary.md", name)
    assert os.environ.get("CUDA_VISIBLE_DEVICES") == before  # set for the children only


def test_parallel_relays_each_childs_lines_and_exits_with_the_worst_code(capfd):
    endings = {"0": "raise SystemExit(0)", "1": "raise SystemExit(1)", "2": "import os; os.kill(os.getpid(), 9)"}

    def command(group: Group) -> list[str]:
        return [
            sys.executable,
            "-c",
            f"import os; print('sees', os.environ['CUDA_VISIBLE_DEVICES']); {endings[group.gpus]}",
        ]

    assert run_parallel(parse_groups("0:a 1:b"), command) == 1
    assert run_parallel(parse_groups("0:a 1:b 2:c"), command) == 128 + 9  # killed by SIGKILL
    err = capfd.readouterr().err
    assert "[gpus 0] sees 0" in err and "[gpus 1] sees 1" in err and "[gpus 2] sees 2" in err


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("0,1,2,3", "'0,1,2,3' is not GPUS:NOTEBOOKS"),
        ("a:10_pcc_tuning", "'a:10_pcc_tuning' is not GPUS:NOTEBOOKS"),
        ("0:", "'0:' is not GPUS:NOTEBOOKS"),
        ("  ", "no group"),
        ("0,1:10_pcc_tuning 1,2:20_sts_regression", "each GPU goes in one group only: 1 named twice"),
        ("0:10_pcc_tuning 1:10_pcc_tuning.ipynb", "each notebook goes in one group only: 10_pcc_tuning named twice"),
    ],
)
def test_a_bad_parallel_spec_is_refused_with_a_clear_message(spec, message, capsys):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse_groups(spec)
    with pytest.raises(SystemExit) as exited:
        cli.main(["run", "--profile", "paper", "--parallel", spec])
    assert exited.value.code == 2 and message in capsys.readouterr().err


def test_parallel_refuses_only_and_unknown_notebooks_before_starting_a_child(capsys, monkeypatch):
    monkeypatch.setattr("stsnb.runs.parallel.run_parallel", lambda *a: pytest.fail("a child was started"))
    for argv, message in (
        (["--parallel", "0:10_pcc_tuning", "--only", "20_sts_regression"], "leave out --only"),
        (["--parallel", "0:10_pcc_tuning 1:no_such_notebook"], "no_such_notebook"),
    ):
        with pytest.raises(SystemExit) as exited:
            cli.main(["run", "--profile", "cpu", *argv])
        assert exited.value.code == 2 and message in capsys.readouterr().err


def test_parallel_starts_one_stsnb_run_only_per_group_with_the_same_options(tmp_path, monkeypatch, capsys):
    started = {}

    def fake_run_parallel(groups, command):
        started.update({group.gpus: command(group) for group in groups})
        return 0

    monkeypatch.setattr("stsnb.runs.parallel.run_parallel", fake_run_parallel)
    spec = "0,1,2,3:10_pcc_tuning 4,5,6,7:20_sts_regression,30_hicl,40_ccl_csts"
    argv = ["run", "--profile", "cpu", "--parallel", spec, "--out", str(tmp_path), "--timeout", "none", "--resume"]
    assert cli.main(argv) == 0
    assert "--parallel leaves out 00_contrastive_ceiling, 01_loss_functions (not run)" in capsys.readouterr().err
    first = started["0,1,2,3"]
    assert first[:4] == [sys.executable, "-m", "stsnb.cli", "run"]
    child = cli.build_parser().parse_args(first[3:])  # what the child `stsnb run` reads
    assert (child.profile, child.only, child.out, child.timeout, child.resume) == (
        "cpu",
        ["10_pcc_tuning"],
        tmp_path.resolve(),
        None,
        True,
    )
    assert cli.build_parser().parse_args(started["4,5,6,7"][3:]).only == ["20_sts_regression", "30_hicl", "40_ccl_csts"]
