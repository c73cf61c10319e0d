"""bf16 without a GPU: ``STSNB_PRECISION=bf16`` puts training (accelerate's mixed precision) and evaluation
(``models.evaluation_precision``) under bf16 autocast on the CPU, so the casting paths a GPU takes run in CI; the
rehearsal's training notebooks run so in the long tier."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from stsnb.models import loading as models
from stsnb.training import train


def test_the_switch_sets_training_and_evaluation_to_bf16_on_the_cpu(monkeypatch):
    monkeypatch.delenv(models.PRECISION_ENV, raising=False)
    assert train.resolve_mixed_precision("auto") == "no"
    layer = torch.nn.Linear(4, 4)
    with models.evaluation_precision(torch.device("cpu")):
        assert layer(torch.ones(1, 4)).dtype == torch.float32
    monkeypatch.setenv(models.PRECISION_ENV, "bf16")
    assert train.resolve_mixed_precision("auto") == "bf16"
    assert train.resolve_mixed_precision("no") == "no", "an explicit choice wins"
    with models.evaluation_precision(torch.device("cpu")):
        assert layer(torch.ones(1, 4)).dtype == torch.bfloat16


@pytest.mark.long
def test_the_rehearsals_training_notebooks_run_under_bf16_autocast(tmp_path):
    """Notebooks 10 (QLoRA, 2 processes) and 20 (2 processes) of the rehearsal under STSNB_PRECISION=bf16: both
    finish and their run records say bf16 (measured here: 20 153 s, 10 57 s)."""
    env = {**os.environ, models.PRECISION_ENV: "bf16"}
    only = "10_pcc_tuning,20_sts_regression"
    command = [sys.executable, "-m", "stsnb.cli", "run", "--profile", "rehearsal", "--only", only]
    command += ["--out", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1500)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for notebook in only.split(","):
        record = json.loads((Path(tmp_path) / "rehearsal" / notebook / "env.json").read_text())
        assert record["precision"] == "bf16"
