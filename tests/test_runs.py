"""stsnb.runs: the run record must not initialise CUDA in the notebook kernel (workers cannot be forked after it), and
it names the lock of the environment."""

from __future__ import annotations

import hashlib
import json
import os
import stat

import torch

from stsnb.runs import context as runs


def _fake_nvidia_smi(folder, output: str):
    script = folder / "nvidia-smi"
    script.write_text(f"#!/bin/sh\nprintf '{output}'\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_gpu_names_come_from_nvidia_smi_not_from_cuda(tmp_path, monkeypatch):
    _fake_nvidia_smi(tmp_path, "NVIDIA A100-SXM4-80GB\\nNVIDIA A100-SXM4-80GB\\n")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")

    def no_cuda(*_):
        raise AssertionError("the run record initialised CUDA")

    monkeypatch.setattr(torch.cuda, "get_device_name", no_cuda)
    monkeypatch.setattr(torch.cuda, "init", no_cuda)
    info = runs.environment("cpu")
    assert info["gpus"] == ["NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB"]
    assert not torch.cuda.is_initialized()


def test_no_nvidia_smi_means_no_gpus_listed(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: nvidia-smi is not found
    assert runs.gpu_names() == []
    assert "gpus" not in runs.environment("cpu")


def test_a_run_tells_the_reader_where_results_go_without_a_machine_path(tmp_path, monkeypatch):
    """A notebook prints ``run.location``: the finished folder relative to the repository, never the absolute
    ``.partial-`` working folder the runner executes in."""
    partial = runs.REPO_ROOT / "papermill_runs" / "cpu" / ".partial-40_ccl_csts"
    run = runs.Run("40_ccl_csts", partial, {}, 0, "cpu")
    assert run.location == "papermill_runs/cpu/40_ccl_csts"
    elsewhere = runs.Run("nb", tmp_path / "out" / "cpu" / ".partial-nb", {}, 0, "cpu")
    monkeypatch.chdir(tmp_path)
    assert elsewhere.location == "out/cpu/nb"
    monkeypatch.chdir(runs.REPO_ROOT)
    assert elsewhere.location == "cpu/nb"


def test_recording_and_saving_return_nothing_so_a_cell_shows_no_out_prompt(tmp_path):
    """A cell ending with ``run.record(...)`` or ``plots.save(...)`` would otherwise show ``Out[]: PosixPath(...)``."""
    import matplotlib

    matplotlib.use("Agg")
    from stsnb.teaching import plots

    run = runs.Run("nb", tmp_path, {}, 0, "cpu")
    assert run.record("section", {"a": 1.0}, [{"setting": "x", "ours": 1.0}]) is None
    assert (tmp_path / "metrics.json").exists()
    fig, _ = plots.figure()
    assert plots.save(fig, run, "a_figure") is None
    assert (tmp_path / "figures" / "a_figure.png").exists()
    assert run.finish({"total": 1}) is None
    assert (tmp_path / "STATUS").read_text() == "ok\n"


def test_elapsed_is_the_seconds_finish_records(tmp_path):
    import datetime as dt
    import json

    run = runs.Run("nb", tmp_path, {}, 0, "cpu", started=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=90))
    assert 90 <= run.elapsed() < 120
    run.finish({})
    assert 90 <= json.loads((tmp_path / "metrics.json").read_text())["seconds"] <= run.elapsed()


def test_bitsandbytes_optional_kernel_warning_is_quiet_once_stsnb_is_imported():
    """A notebook's output carries no library noise: the missing-`kernels` warning of bitsandbytes' CPU backend."""
    import logging

    import stsnb  # noqa: F401

    assert not logging.getLogger("bitsandbytes.backends.cpu.ops").isEnabledFor(logging.WARNING)
    assert logging.getLogger("bitsandbytes.backends.cpu.ops").isEnabledFor(logging.ERROR)


def test_env_json_names_the_lock_by_its_sha256():
    """A run records which lock its environment came from: the file's sha256, relative name (no machine path)."""
    record = runs.lock_record()
    lock = runs.REPO_ROOT / runs.LOCK_FILE
    assert record["file"] == "requirements/cpu.lock.txt"
    assert record["sha256"] == hashlib.sha256(lock.read_bytes()).hexdigest()
    assert isinstance(record["matches"], bool)
    assert record["matches"] == (record["differs"] == {})


def test_a_version_other_than_the_locked_one_is_a_mismatch(tmp_path, monkeypatch):
    (tmp_path / "requirements").mkdir()
    (tmp_path / runs.LOCK_FILE).write_text("# a lock\ntorch==2.13.0\nnumpy==2.4.6\n")
    installed = {"torch": "2.13.0+cpu", "numpy": "2.4.6"}
    monkeypatch.setattr(runs, "installed_version", installed.get)
    assert runs.lock_record(tmp_path)["matches"] is True  # torch's +cpu local label matches torch==2.13.0
    installed["numpy"] = "2.5.0"
    record = runs.lock_record(tmp_path)
    assert record["matches"] is False and record["differs"] == {"numpy": "2.5.0"}
    del installed["numpy"]
    assert runs.lock_record(tmp_path)["differs"] == {"numpy": None}


def test_no_lock_file_outside_a_checkout_gives_null_values(tmp_path):
    assert runs.lock_record(tmp_path) == {"file": runs.LOCK_FILE, "sha256": None, "matches": None, "differs": None}


def test_the_env_json_of_a_started_run_has_the_lock(tmp_path, monkeypatch):
    monkeypatch.setenv(runs.RUN_DIR_ENV, str(tmp_path))
    runs.start("nb", params={"seed": 0}, device="cpu")
    env = json.loads((tmp_path / "env.json").read_text())
    assert env["lock"]["file"] == runs.LOCK_FILE
    assert env["lock"]["sha256"] == runs.lock_record()["sha256"]
    assert str(runs.REPO_ROOT) not in json.dumps(env["lock"])
