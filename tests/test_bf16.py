"""bf16 without a GPU: ``STSNB_PRECISION=bf16`` puts training (accelerate's mixed precision) and evaluation
(``models.evaluation_precision``) under bf16 autocast on the CPU, so the casting paths a GPU takes run in CI; the
rehearsal plan runs every notebook so in the long tier (``tests/test_rehearsal_plan.py``)."""

from __future__ import annotations

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
