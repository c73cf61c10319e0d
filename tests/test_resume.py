"""``stsnb run --resume`` skips what finished and goes on with what did not; ``stsnb status`` reads where a run stands
from its folder alone. Both on folders written by the real runner (``stsnb.runs.execution.run``, in a child process
for the run that is stopped) on the tiny fixture notebooks; the rehearsal plan's own resume is in
``tests/test_rehearsal_plan.py``."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from stsnb.runs import execution, resume
from stsnb.runs.status import plan_status
from stsnb.training import heartbeat

FIXTURES = Path(__file__).parent / "fixtures" / "notebooks"


def write_plan(folder: Path, notebooks: dict, **settings) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tiny.yaml"
    plan = {"description": "fixture plan", "notebooks": notebooks, **settings}
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


def status_cli(folder: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "stsnb.cli", "status", str(folder)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def line_of(text: str, notebook: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(notebook + " "))


def test_a_finished_notebook_is_skipped_only_at_its_plan_values_and_source(tmp_path):
    values = {"tiny_ok": {"scale": 0.5}}
    write_plan(tmp_path / "plans", {**values, "tiny_sleep": {"seconds": 1}})
    kwargs = dict(out=tmp_path / "out", plans_dir=tmp_path / "plans", notebooks_dir=FIXTURES)
    assert execution.run("tiny", only=["tiny_ok"], **kwargs) == 0
    profile_dir, source = tmp_path / "out" / "tiny", resume.source_state()
    record = resume.read_record(profile_dir / "tiny_ok")
    assert record["source"] == source and record["values_sha256"] == resume.values_digest({"scale": 0.5})
    assert resume.skip_reason(profile_dir, "tiny_ok", {"scale": 0.5}, source)[0]
    assert resume.skip_reason(profile_dir, "tiny_ok", {"scale": 0.25}, source) == (
        False,
        "its finished run had other plan values",
    )
    skip, why = resume.skip_reason(profile_dir, "tiny_ok", {"scale": 0.5}, "f" * 40)
    assert not skip and why.startswith("its finished run came from ") and why.endswith("this checkout is fffffff")
    assert resume.skip_reason(profile_dir, "tiny_sleep", {"seconds": 1}, source) == (
        False,
        "no finished run in this folder",
    )
    (profile_dir / ".checkpoints" / "tiny_ok" / "key").mkdir(parents=True)  # a later attempt, killed
    assert resume.skip_reason(profile_dir, "tiny_ok", {"scale": 0.5}, source)[1].startswith("a later attempt left")
    (profile_dir / ".checkpoints" / "tiny_ok" / "key").rmdir()

    text = plan_status(profile_dir, {**values, "tiny_sleep": {"seconds": 1}})
    assert re.search(r"^tiny_ok +ok +\d+ s at \w{7}.*; --resume skips it$", line_of(text, "tiny_ok"), re.M)
    assert re.fullmatch(r"tiny_sleep +not run", line_of(text, "tiny_sleep"))
    assert text.splitlines()[0].startswith(f"stsnb status: {profile_dir} at ") and "(1 ok;" in text


@pytest.mark.long  # four notebook runs, one stopped by SIGTERM mid-fit (about 40 s): off the default tier
@pytest.mark.slow
def test_a_run_stopped_after_its_second_notebook_resumes_without_running_the_first_two(tmp_path):
    notebooks = {"tiny_ok": {}, "tiny_fail": {"mode": "ok"}, "tiny_train": {"seconds_per_batch": 0.5}}
    write_plan(tmp_path / "plans", notebooks, checkpoints=True, timeout=600)
    out, profile_dir = tmp_path / "out", tmp_path / "out" / "tiny"
    script = (
        "import sys; from pathlib import Path; from stsnb.runs import execution; "
        f"sys.exit(execution.run('tiny', out=Path({str(out)!r}), plans_dir=Path({str(tmp_path / 'plans')!r}), "
        f"notebooks_dir=Path({str(FIXTURES)!r}), resume={{resume}}))"
    )
    child = subprocess.Popen([sys.executable, "-c", script.format(resume=False)], stderr=subprocess.PIPE, text=True)
    beat_file = profile_dir / ".partial-tiny_train" / heartbeat.HEARTBEAT_FILE
    deadline = time.monotonic() + 180
    while heartbeat.read(beat_file).get("step", 0) < 3:  # the third notebook's fit is past its first evaluation
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()
        time.sleep(0.2)

    running = status_cli(profile_dir)  # while it runs: the fit, its step, pace and projected end
    assert re.search(r"^tiny_ok +ok ", running, re.M) and re.search(r"^tiny_fail +ok ", running, re.M)
    train = line_of(running, "tiny_train")
    assert re.search(r"running +\d+ s of its 10 min timeout; fit 1: step \d+/16: [\d.]+ s/step, done in about", train)
    assert "into the notebook of its 10 min timeout" in train, train

    child.send_signal(signal.SIGTERM)  # a scheduler's stop (scontrol requeue, preemption)
    _, log = child.communicate(timeout=120)
    assert child.returncode != 0, log
    stopped = line_of(status_cli(profile_dir), "tiny_train")
    assert re.search(r"failed +interrupted \(Ctrl-C or SIGTERM\); stopped at fit 1: step \d+/16", stopped), stopped
    done_before = {name: (profile_dir / name / f"{name}.ipynb").stat() for name in ("tiny_ok", "tiny_fail")}

    again = subprocess.run([sys.executable, "-c", script.format(resume=True)], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-3000:]
    for number, name in ((1, "tiny_ok"), (2, "tiny_fail")):
        assert re.search(rf"{number}/3 {name}: finished ok at these plan values and \S+: skipped", again.stderr)
        after = (profile_dir / name / f"{name}.ipynb").stat()
        assert (after.st_ino, after.st_mtime_ns) == (done_before[name].st_ino, done_before[name].st_mtime_ns)
    assert "3/3 tiny_train: no finished run in this folder: run" in again.stderr
    metrics = json.loads((profile_dir / "tiny_train" / "metrics.json").read_text())
    assert metrics["resumed_at"] is not None and metrics["resumed_at"] >= 3 and metrics["steps"] == 16
    assert not (profile_dir / "tiny_train" / heartbeat.HEARTBEAT_FILE).exists()  # a live status, not a result

    after = status_cli(profile_dir)
    assert all(re.search(rf"^{name} +ok ", after, re.M) for name in notebooks), after
    summary = (profile_dir / "summary.md").read_text()
    assert summary.count("| ok") >= 3 and "| ok (earlier run) |" in summary  # written from all three
