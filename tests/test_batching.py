"""Global batches shared out over processes (``stsnb.training.batching``): the same global batch on any GPU count, and
the process count ``"auto"`` picks. Pure arithmetic; the losses on two processes are in tests/test_distributed.py."""

from __future__ import annotations

import pytest

from stsnb.papers.pcc_tuning import protocol
from stsnb.training import batching
from stsnb.training.batching import BatchError, BatchSplit, resolve_processes, split_batch


def test_a_global_batch_is_processes_times_share_times_accumulation():
    for global_batch, processes, accumulation in [(64, 4, 1), (64, 8, 1), (64, 2, 4), (240, 8, 1), (232, 4, 1)]:
        split = split_batch(global_batch, processes, batch_level=accumulation == 1, accumulation=accumulation)
        assert split.per_process * split.processes * split.accumulation == global_batch
    assert split_batch(64, 4, batch_level=False).describe() == "64 = 4 processes x 16"
    assert BatchSplit(64, 2, 8, 4).describe() == "64 = 2 processes x 8 x 4 accumulation steps"


def test_a_batch_that_does_not_divide_is_refused_naming_the_counts_that_do():
    with pytest.raises(BatchError, match=r"64 does not divide over 3 processes .*\[1, 2, 4, 8, 16\]"):
        split_batch(64, 3, batch_level=False)
    with pytest.raises(BatchError, match=r"\[1, 2, 4, 8\]"):  # 16 per process must split into 2 micro-batches
        split_batch(64, 16, batch_level=False, accumulation=8)


def test_a_batch_level_loss_never_accumulates():
    """InfoNCE's negatives and Pcc's Pearson are statistics of the whole batch: micro-batches would change them."""
    with pytest.raises(BatchError, match="batch statistic"):
        split_batch(240, 4, batch_level=True, accumulation=2)


def test_auto_takes_the_largest_gpu_count_dividing_every_global_batch():
    assert resolve_processes("auto", [64, 32], gpus=8) == 8
    assert resolve_processes("auto", [64, 32], gpus=6) == 4  # 6 and 5 divide neither
    assert resolve_processes("auto", [224, 240, 192, 232, 256], gpus=8) == 8
    assert resolve_processes("auto", [64], gpus=0) == 1  # no GPU: this kernel
    assert resolve_processes(4, [64, 32]) == 4
    with pytest.raises(BatchError, match="process counts"):
        resolve_processes(3, [64])
    with pytest.raises(BatchError, match='"auto"'):
        resolve_processes("all", [64])


def test_auto_says_which_gpus_stay_idle():
    line = batching.processes_line("auto", 4, gpus=6)
    assert line.startswith('4 training processes (num_processes="auto", 6 visible GPU(s)') and "2 GPU(s) idle" in line
    assert batching.processes_line(1, 1) == "1 training process (num_processes=1)"


PCC_PAPER = {
    "num_processes": "auto",
    "templates": ["sth", "eol", "sum"],
    "use_paper_recipe": True,
    "paper_row": "Mistral-7b",
    "stage1_batch_size": 224,
    "stage1_lr": 5e-4,
    "stage2_batch_sizes": [240, 192, 224, 232, 256],
    "stage2_epochs": 8,
    "stage2_lr": 5e-4,
    "warmup_ratio": 0.1,
    "eval_every": 25,
    "stage1_cutoff": 32,
    "stage2_cutoff": 64,
}


def test_pcc_trains_on_the_same_global_batches_on_4_and_8_gpus():
    """Notebook 10's paper plan: every stage's batch is global (all-gathered), so a process takes batch / processes
    and the optimizer sees the same batches and steps on 4 or 8 GPUs."""
    configs = {}
    for gpus in (4, 8):
        proto = protocol.Protocol.from_parameters(PCC_PAPER, gpus=gpus)
        assert proto.num_processes == gpus
        configs[gpus] = [
            (t, b, proto.stage2_config(t, b, 10_000, 0).batch_size * gpus)
            for t in PCC_PAPER["templates"]
            for b in proto.batch_sizes(t)
        ] + [(t, proto.stage1_batch(t), proto.stage1_config(t, 10_000, 0).batch_size * gpus) for t in ["sth", "eol"]]
    assert configs[4] == configs[8]
    assert all(batch == global_batch for _, batch, global_batch in configs[4])
