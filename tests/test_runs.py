"""stsnb.runs: the run record must not initialise CUDA in the notebook kernel (workers cannot be forked after it)."""

from __future__ import annotations

import os
import stat

import torch

from stsnb import runs


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
    from stsnb import plots

    run = runs.Run("nb", tmp_path, {}, 0, "cpu")
    assert run.record("section", {"a": 1.0}, [{"setting": "x", "ours": 1.0}]) is None
    assert (tmp_path / "metrics.json").exists()
    fig, _ = plots.figure()
    assert plots.save(fig, run, "a_figure") is None
    assert (tmp_path / "figures" / "a_figure.png").exists()
    assert run.finish({"total": 1}) is None
    assert (tmp_path / "STATUS").read_text() == "ok\n"


def test_bitsandbytes_optional_kernel_warning_is_quiet_once_stsnb_is_imported():
    """A notebook's output carries no library noise: the missing-`kernels` warning of bitsandbytes' CPU backend."""
    import logging

    import stsnb  # noqa: F401

    assert not logging.getLogger("bitsandbytes.backends.cpu.ops").isEnabledFor(logging.WARNING)
    assert logging.getLogger("bitsandbytes.backends.cpu.ops").isEnabledFor(logging.ERROR)
