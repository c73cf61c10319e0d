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
