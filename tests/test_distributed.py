"""Two CPU processes (``stsnb.training.distributed.launch``: accelerate's ``debug_launcher``, gloo): global-batch losses
and even batches across ranks.

Marked ``distributed``. What is checked inside the launched processes raises there, which fails the launcher and so
the test.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from stsnb.training import losses
from stsnb.training.distributed import gather_with_grad, world_size

pytestmark = pytest.mark.distributed

GLOBAL_BATCH = 8


def _global_batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    anchors = torch.randn(GLOBAL_BATCH, 5, generator=generator)
    positives = anchors + 0.3 * torch.randn(GLOBAL_BATCH, 5, generator=generator)
    labels = torch.rand(GLOBAL_BATCH, generator=generator)
    return anchors, positives, labels


def _encoder() -> nn.Linear:
    torch.manual_seed(0)
    return nn.Linear(5, 4)


def _losses(encoder: nn.Module, anchors, positives, labels, gather=gather_with_grad) -> dict[str, torch.Tensor]:
    """InfoNCE with in-batch negatives (Eq. 8 without the hard negative) and 1 - Pearson (Eq. 9) on the global batch."""
    u, v = gather(encoder(anchors)), gather(encoder(positives))
    cosine = torch.nn.functional.cosine_similarity(u, v)
    return {
        "info_nce": losses.info_nce(u, v, temperature=0.05),
        "pearson": losses.pearson_loss(cosine, gather(labels)),
    }


def _reference() -> dict[str, tuple[float, torch.Tensor]]:
    """One process on the global batch: loss value and the encoder's weight gradient."""
    out = {}
    for name in ("info_nce", "pearson"):
        encoder = _encoder()
        loss = _losses(encoder, *_global_batch(), gather=lambda x: x)[name]  # the whole batch, no gathering
        loss.backward()
        out[name] = (loss.item(), encoder.weight.grad.clone())
    return out


def _two_process_gradients_equal_one_process() -> None:
    from accelerate import Accelerator

    accelerator = Accelerator(cpu=True)
    rank, size = accelerator.process_index, accelerator.num_processes
    assert size == 2 and world_size() == 2
    anchors, positives, labels = _global_batch()
    shard = slice(rank * GLOBAL_BATCH // size, (rank + 1) * GLOBAL_BATCH // size)
    expected = _reference()
    for name, (value, gradient) in expected.items():
        model = accelerator.prepare(_encoder())  # DDP: averages the gradients of the two processes
        loss = _losses(model, anchors[shard], positives[shard], labels[shard])[name]
        accelerator.backward(loss)
        assert abs(loss.item() - value) < 1e-5, (name, rank, loss.item(), value)
        got = accelerator.unwrap_model(model).weight.grad
        assert torch.allclose(got, gradient, atol=1e-5), (name, rank, (got - gradient).abs().max().item())
        accelerator.free_memory()


def _uneven_data_trains_on_both_ranks() -> None:
    from stsnb.training.config import TrainConfig
    from stsnb.training.train import fit

    data = [(torch.randn(3), torch.randn(())) for _ in range(13)]  # 13 examples, batches of 4: 4 batches for 2 ranks

    def collate(items):
        return torch.stack([x for x, _ in items]), torch.stack([y for _, y in items])

    def mse(model, batch):
        x, y = batch
        return ((model(x).squeeze(-1) - y) ** 2).mean()

    seen = []

    def evaluate(model):
        seen.append(1)
        return 0.0

    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    result = fit(
        model, mse, data, TrainConfig(epochs=2, batch_size=4, progress=False), collate=collate, evaluate=evaluate
    )
    assert result.steps == 4, result.steps  # ceil(4 batches / 2 ranks) x 2 epochs, the same on both ranks
    assert len(seen) == (3 if torch.distributed.get_rank() == 0 else 0)  # start + 2 epochs, on the main process only


def _killed_two_process_run_resumes_to_the_same_weights(folder: str) -> None:
    from stsnb.training.config import TrainConfig
    from stsnb.training.train import fit

    generator = torch.Generator().manual_seed(0)
    data = [(torch.randn(3, generator=generator), torch.randn((), generator=generator)) for _ in range(48)]

    def collate(items):
        return torch.stack([x for x, _ in items]), torch.stack([y for _, y in items])

    def mse(model, batch):
        x, y = batch
        return ((model(x).squeeze(-1) - y) ** 2).mean()

    def evaluate(model):
        x, y = collate(data)
        return -((model(x).squeeze(-1) - y) ** 2).mean().item()

    def fresh() -> nn.Linear:
        torch.manual_seed(1)
        return nn.Linear(3, 1)

    config = dict(epochs=2, batch_size=4, lr=0.05, eval_every=2, max_grad_norm=None, progress=False)
    config["last_checkpoint_minutes"] = 0  # last/ at every evaluation: a kill of several processes saves nothing
    reference = fresh()
    fit(reference, mse, data, TrainConfig(**config), collate=collate, evaluate=evaluate)
    calls = {"n": 0}

    def killed_after_step_4(model, batch):
        calls["n"] += 1
        if calls["n"] == 6:  # both ranks, after the checkpoint of optimizer step 4
            raise KeyboardInterrupt
        return mse(model, batch)

    checkpoint = dict(checkpoint_dir=folder)
    try:
        fit(fresh(), killed_after_step_4, data, TrainConfig(**config, **checkpoint), collate=collate, evaluate=evaluate)
        raise AssertionError("the run was not interrupted")
    except KeyboardInterrupt:
        pass
    resumed = fresh()
    result = fit(
        resumed, mse, data, TrainConfig(**config, **checkpoint, resume=True), collate=collate, evaluate=evaluate
    )
    assert result.steps == 12 and result.resumed_at == 4, result  # 6 batches per rank per epoch x 2 epochs
    assert torch.allclose(resumed.weight, reference.weight, atol=1e-6), (resumed.weight, reference.weight)


@pytest.mark.long  # two 2-process fits (12 s; one-process resume stays, test_train): off the default tier
def test_a_killed_two_process_run_resumes_to_the_same_weights(tmp_path):
    from stsnb.training.distributed import launch

    launch(_killed_two_process_run_resumes_to_the_same_weights, (str(tmp_path / "ckpt"),), num_processes=2)


def test_gathered_losses_give_the_single_process_gradient_on_two_processes():
    from stsnb.training.distributed import launch

    launch(_two_process_gradients_equal_one_process, num_processes=2)


@pytest.mark.long  # two processes (11 s): off the default tier (README command 2 under 10 min)
def test_uneven_data_does_not_hang_two_processes():
    from stsnb.training.distributed import launch

    launch(_uneven_data_trains_on_both_ranks, num_processes=2)


def test_one_process_gather_is_the_identity():
    x = torch.randn(3, 2, requires_grad=True)
    assert gather_with_grad(x) is x


def _gather_ranks(path: str) -> None:
    rank = torch.distributed.get_rank()
    gathered = gather_with_grad(torch.tensor([float(rank)]))
    if rank == 0:
        with open(path, "w") as handle:
            handle.write(" ".join(str(v) for v in gathered.tolist()))


def test_launch_runs_a_function_on_two_processes(tmp_path):
    from stsnb.training.distributed import launch

    assert launch(lambda: 7) == 7  # one process: called here
    launch(_gather_ranks, (str(tmp_path / "ranks.txt"),), num_processes=2)
    assert (tmp_path / "ranks.txt").read_text() == "0.0 1.0"


def _rank_and_square(x: int) -> dict:
    rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else None
    return {"rank": rank, "square": x * x}


def test_run_hands_back_the_main_processes_result():
    from stsnb.training.distributed import run

    assert run(_rank_and_square, (3,), num_processes=1) == {"rank": None, "square": 9}  # one process: in this one
    assert run(_rank_and_square, (3,), num_processes=2) == {"rank": 0, "square": 9}


def _group_timeout() -> float:
    """The seconds the default process group's collectives now wait (gloo's backend options)."""
    group = torch.distributed.distributed_c10d._get_default_group()
    return group._get_backend(torch.device("cpu")).options._timeout.total_seconds()


def test_the_first_collective_waits_minutes_then_the_job_waits_hours(monkeypatch):
    """The workers join with the short first timeout, meet in a barrier, and the job's collectives then wait up to
    COLLECTIVE_TIMEOUT (the main process scoring alone); the first timeout comes from the environment."""
    from stsnb.training.distributed import COLLECTIVE_TIMEOUT, FIRST_COLLECTIVE_ENV, run

    monkeypatch.setenv(FIRST_COLLECTIVE_ENV, "0.5")  # inherited by the torchrun child
    assert run(_group_timeout, (), num_processes=2) == COLLECTIVE_TIMEOUT.total_seconds()


def test_meet_the_others_sets_the_long_timeout_after_the_first_barrier(tmp_path):
    from datetime import timedelta

    from stsnb.training.distributed import COLLECTIVE_TIMEOUT, meet_the_others

    first = timedelta(minutes=1)
    meet_the_others(first)  # one process, no group: nothing to meet
    torch.distributed.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1, timeout=first
    )
    try:
        assert _group_timeout() == 60
        meet_the_others(first)
        assert _group_timeout() == COLLECTIVE_TIMEOUT.total_seconds()
    finally:
        torch.distributed.destroy_process_group()


def test_the_first_collective_timeout_is_minutes_from_the_environment(monkeypatch):
    from datetime import timedelta

    from stsnb.training.distributed import FIRST_COLLECTIVE_ENV, LaunchError, first_collective_timeout

    monkeypatch.delenv(FIRST_COLLECTIVE_ENV, raising=False)
    assert first_collective_timeout() == timedelta(minutes=10)
    monkeypatch.setenv(FIRST_COLLECTIVE_ENV, "2.5")
    assert first_collective_timeout() == timedelta(minutes=2.5)
    for bad in ("0", "-1", "ten", "nan"):
        monkeypatch.setenv(FIRST_COLLECTIVE_ENV, bad)
        with pytest.raises(LaunchError, match="give minutes, a number above 0"):
            first_collective_timeout()


def _ddp_world(x: int) -> dict:
    from accelerate import Accelerator

    accelerator = Accelerator(cpu=not torch.cuda.is_available())
    return {"processes": accelerator.num_processes, "type": str(accelerator.distributed_type), "x": x}


@pytest.fixture
def kernel_accelerator():
    """An Accelerator in this process, as a notebook's training cell leaves one; reset afterwards, or the forked
    workers of later tests would inherit it (the very failure stsnb.training.distributed.run avoids)."""
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    yield Accelerator(cpu=True)
    AcceleratorState._reset_state(reset_partial_state=True)


def test_run_starts_a_child_and_ignores_the_kernels_accelerator(kernel_accelerator):
    """The kernel holds an Accelerator (as after notebook 10's speed probe): run() still gets two real DDP workers,
    because it starts a fresh child through torchrun instead of forking this process."""
    from stsnb.training.distributed import run

    out = run(_ddp_world, (5,), num_processes=2)
    assert out["processes"] == 2 and out["x"] == 5 and "MULTI" in out["type"]


_MULTITHREADED_PARENT = """
import torch
from stsnb.training.distributed import launch


def products():
    for _ in range(20):
        torch.randn(400, 400) @ torch.randn(400, 400)
        torch.nn.Linear(6, 4)(torch.randn(8, 6))


if __name__ == "__main__":
    torch.set_num_threads(2)
    products()  # multi-threaded products before the launch, as in pytest's process after other tests
    launch(products, num_processes=2)
"""


@pytest.mark.long  # two processes (5 s): off the default tier
def test_two_process_workers_of_a_multithreaded_parent_finish(tmp_path):
    """A parent that ran multi-threaded matrix products starts two workers that multiply too: they finish. (Forked
    workers of such a parent could wait forever in their first product; ``launch`` spawns them.)"""
    import os
    import signal
    import subprocess
    import sys

    script = tmp_path / "parent.py"
    script.write_text(_MULTITHREADED_PARENT)
    parent = subprocess.Popen([sys.executable, str(script)], stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, stderr = parent.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(parent.pid, signal.SIGKILL)  # the parent and its hung workers
        parent.communicate()
        pytest.fail("the workers of a multi-threaded parent did not finish in 180 s")
    assert parent.returncode == 0, stderr[-2000:]


def test_fork_launch_refuses_a_process_with_accelerate_state(kernel_accelerator):
    from stsnb.training.distributed import LaunchError, launch

    with pytest.raises(LaunchError, match="already holds accelerate state"):
        launch(_gather_ranks, ("unused",), num_processes=2)


def test_a_job_that_cannot_pickle_is_refused_with_the_reason():
    from stsnb.training.distributed import LaunchError, run

    with pytest.raises(LaunchError, match="the job must pickle"):
        run(lambda: 1, (), num_processes=2)


def _fails() -> None:
    raise RuntimeError("worker exploded on purpose")


@pytest.mark.long  # two processes (5 s): off the default tier
def test_a_failing_worker_is_reported_with_its_last_lines():
    from stsnb.training.distributed import LaunchError, run

    with pytest.raises(LaunchError, match="worker exploded on purpose"):
        run(_fails, (), num_processes=2)


def _train_with_one_bad_example() -> int:
    from stsnb.training.config import TrainConfig
    from stsnb.training.train import fit

    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    data = [(torch.randn(3), torch.tensor(1.0)) for _ in range(16)]
    data[5] = (torch.full((3,), float("nan")), torch.tensor(1.0))  # lands in one process's batch only

    def collate(items):
        return torch.stack([x for x, _ in items]), torch.stack([y for _, y in items])

    def mse(m, batch):
        x, y = batch
        return ((m(x).squeeze(-1) - y) ** 2).mean()

    return fit(model, mse, data, TrainConfig(batch_size=2, lr=0.01, progress=False), collate=collate).steps


@pytest.mark.long  # two processes, one stopping (14 s): off the default tier (README command 2 under 10 min)
def test_a_nan_on_one_process_stops_every_process_with_the_step_named():
    """Without the shared check the healthy process would wait forever in the next gradient all-reduce."""
    from stsnb.training.distributed import LaunchError, run

    with pytest.raises(LaunchError, match=r"loss is not finite on process \d of 2 .* at optimizer step \d"):
        run(_train_with_one_bad_example, (), num_processes=2)


def _lora_with_checkpointing_steps(folder: str) -> dict:
    from stsnb.models.loading import LoraSettings, load_encoder
    from stsnb.training.config import TrainConfig
    from stsnb.training.train import fit

    encoder = load_encoder(
        folder, pooling="last", lora=LoraSettings(r=4, alpha=8), gradient_checkpointing=True, max_length=16
    )
    texts = [f"sentence number {i} about a cat" for i in range(8)]

    def loss(model, batch):  # through the (DDP-wrapped) forward: sentences -> embeddings
        return model(list(batch)).pow(2).mean()

    before = {k: v.clone() for k, v in encoder.named_parameters() if v.requires_grad}
    result = fit(encoder, loss, texts, TrainConfig(batch_size=2, lr=1e-2, epochs=1, progress=False))
    return {"steps": result.steps, "change": result.weight_change, "trainable": len(before)}


@pytest.mark.long  # LoRA under DDP on two processes (20 s): off the default tier (README command 2 under 10 min)
def test_lora_with_non_reentrant_checkpointing_trains_under_ddp(tmp_path):
    """Issue: reentrant checkpointing under DDP with find_unused_parameters fails with "Expected to mark a variable
    ready only once". A tiny random Mistral (mechanics only), LoRA on every linear layer, checkpointing on, two
    processes through the launcher a GPU server uses."""
    from conftest import save_tiny_causal_lm
    from transformers import MistralConfig

    from stsnb.training.distributed import run

    folder = save_tiny_causal_lm(tmp_path / "tiny-mistral", MistralConfig)
    out = run(_lora_with_checkpointing_steps, (str(folder),), num_processes=2)
    assert out["steps"] == 2 and out["change"] > 0 and out["trainable"] > 0


class _TextEncoder(nn.Module):
    """Texts -> a seeded linear map of fixed random features (a stand-in encoder for Pcc-tuning's losses)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = nn.Linear(6, 4)
        self.tokenizer = None

    def forward(self, texts):
        rows = [torch.randn(6, generator=torch.Generator().manual_seed(sum(map(ord, t)))) for t in texts]
        return self.linear(torch.stack(rows))


def _pcc_batches():
    from stsnb import data

    triplets = [data.Triplet(f"anchor {i}", f"positive {i}", f"negative {i}") for i in range(GLOBAL_BATCH)]
    pairs = [
        data.STSPair(f"left {i}", f"right {i}", float(i % 5), "STSBenchmark", "train") for i in range(GLOBAL_BATCH)
    ]
    return {"stage1": triplets, "stage2": pairs}


def _pcc_losses():
    from stsnb.papers import pcc_tuning

    return {"stage1": pcc_tuning.stage1_loss(0.05, cutoff=None), "stage2": pcc_tuning.stage2_loss(cutoff=None)}


def _pcc_two_processes_equal_one() -> None:
    from accelerate import Accelerator

    from stsnb.papers.pcc_tuning import training

    accelerator = Accelerator(cpu=True)
    rank, size = torch.distributed.get_rank(), torch.distributed.get_world_size()
    batches, loss_fns = _pcc_batches(), _pcc_losses()
    for name, loss_fn in loss_fns.items():
        reference = _TextEncoder()
        gather, training.gather_with_grad = training.gather_with_grad, lambda x: x  # as one process would
        try:
            expected = loss_fn(reference, batches[name])  # the whole global batch, nothing gathered
        finally:
            training.gather_with_grad = gather
        expected.backward()
        model = accelerator.prepare(_TextEncoder())
        shard = batches[name][rank * GLOBAL_BATCH // size : (rank + 1) * GLOBAL_BATCH // size]
        loss = loss_fn(model, shard)  # the DDP-wrapped model, as stsnb.training.train.fit hands it to the loss
        accelerator.backward(loss)
        assert abs(loss.item() - expected.item()) < 1e-5, (name, rank, loss.item(), expected.item())
        got = accelerator.unwrap_model(model).linear.weight.grad
        # DDP averages the ranks' gradients; each rank's loss is the global-batch loss, so the average is its gradient
        assert torch.allclose(got, reference.linear.weight.grad, atol=1e-5), (name, rank)
        accelerator.free_memory()


@pytest.mark.long  # two processes (8 s): off the default tier
def test_pcc_tuning_stage_losses_on_two_processes_equal_the_global_batch_on_one():
    """Pcc-tuning's Eq. 8 and Eq. 9 as the package computes them (stsnb.papers.pcc_tuning.stage1_loss / stage2_loss),
    each process holding half the batch: the gathered loss and gradient equal one process on the whole batch."""
    from stsnb.training.distributed import launch

    launch(_pcc_two_processes_equal_one, num_processes=2)


def _contrast_two_processes_equal_one() -> None:
    """Notebook 20's +Contrast (Eq. 3 of STS-Regression): each process embeds its share, the negatives are gathered."""
    from accelerate import Accelerator

    from stsnb.papers import sts_regression as reg
    from stsnb.training import distributed

    accelerator = Accelerator(cpu=True)
    rank, size = torch.distributed.get_rank(), torch.distributed.get_world_size()
    pairs = [reg.TrainingPair(f"left {i}", f"right {i}", 4.5) for i in range(GLOBAL_BATCH)]
    loss_fn = reg.contrast_loss(0.05)
    reference = _TextEncoder()
    gather, distributed.gather_with_grad = distributed.gather_with_grad, lambda x: x  # as one process would
    try:
        expected = loss_fn(reference, pairs)
    finally:
        distributed.gather_with_grad = gather
    expected.backward()
    model = accelerator.prepare(_TextEncoder())
    loss = loss_fn(model, pairs[rank * GLOBAL_BATCH // size : (rank + 1) * GLOBAL_BATCH // size])
    accelerator.backward(loss)
    assert abs(loss.item() - expected.item()) < 1e-5, (rank, loss.item(), expected.item())
    assert torch.allclose(accelerator.unwrap_model(model).linear.weight.grad, reference.linear.weight.grad, atol=1e-5)


def test_the_contrast_baseline_on_two_processes_sees_the_global_batch():
    """+Contrast (Table 3) through the launcher: its InfoNCE over two processes' halves equals one process on the
    whole batch, loss and gradient, so `stage2_batch_size` is the same global batch on any GPU count."""
    from stsnb.training.distributed import launch

    launch(_contrast_two_processes_equal_one, num_processes=2)


@pytest.mark.long  # a paper pipeline on two processes (30 s)
@pytest.mark.slow
def test_section42_arms_run_through_the_launcher_on_two_processes(data_dir):
    """Notebook 20's Section 4.2 on two processes: +Ours (stage 1 on the frozen real MiniLM, stage 2 jointly) and
    +Contrast each start as one torchrun job, share the global batch of 8 (4 per process) and hand back the main
    process's scored run."""
    from stsnb import data
    from stsnb.papers import sts_regression as reg
    from stsnb.training.config import TrainConfig

    nli = reg.nli_training_pairs(list(data.load_snli("dev", data_dir=data_dir))[:40])
    sts = [reg.TrainingPair(p.sent1, p.sent2, p.score) for p in list(data.load_stsb("train", data_dir=data_dir))[:32]]
    sts = [p for p in sts if p.target >= 4.0][:16] + [p for p in sts if p.target < 4.0][:16]
    config = TrainConfig(batch_size=4, lr=5e-5, progress=False)  # one process's share of the global 8
    dev = list(data.load_stsb("dev", data_dir=data_dir))[:24]
    shared = reg.Section42(nli, sts, [], config, config, dev, reg.Evaluation("stsb", 24, 0), max_length=32, processes=2)
    ours = shared.ours("minilm-l6", "Jina v2")
    # every step takes the global batch of 8, the last one what is left
    assert (ours.stage1.steps, ours.stage2.steps) == (-(-len(nli) // 8), -(-len(sts) // 8))
    contrast = shared.contrast("minilm-l6", 4.0)
    assert contrast.batch_size == 8 and contrast.positives >= 8 and contrast.result.steps >= 1
    assert ours.predictions.keys() == contrast.predictions.keys() == {"STSBenchmark"}


# ---- the test sets are scored once, on the main process -----------------------------------------------------------


def _counting_scores(calls: str, job):
    """``job()`` with each call of ``evaluate.task_predictions`` (every test-set scoring goes through it) in this
    process appended to the file ``calls`` as this process's rank."""
    from stsnb.evaluation import evaluate

    rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else 0
    real = evaluate.task_predictions

    def counted(*args, **kwargs):
        with open(calls, "a") as handle:
            handle.write(f"{rank}\n")
        return real(*args, **kwargs)

    evaluate.task_predictions = counted
    try:
        return job()
    finally:
        evaluate.task_predictions = real


def _scored_on_one_and_two_processes(tmp_path, job) -> tuple[object, object, list[str], list[str]]:
    import functools

    from stsnb.training.distributed import run

    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    single = run(functools.partial(_counting_scores, str(one), job), (), num_processes=1)
    double = run(functools.partial(_counting_scores, str(two), job), (), num_processes=2)
    return single, double, one.read_text().split(), two.read_text().split()


def _same_predictions(a, b) -> bool:
    import numpy as np

    return a.keys() == b.keys() and all(
        np.array_equal(a[t][0], b[t][0]) and np.allclose(a[t][1], b[t][1], atol=1e-6) for t in a
    )


@pytest.mark.long  # a paper pipeline on two processes (20 s)
def test_a_table1_run_scores_the_test_sets_once_on_the_main_process(tmp_path, data_dir):
    """Notebook 20's num_processes path (a tiny random BERT, mechanics only): both processes train, only rank 0
    scores, and what comes back equals the one-process run's scores. lr 0 keeps the weights where seeded
    initialisation put them (two processes share out the batches differently, so trained weights would differ):
    the comparison is of the scoring alone."""
    import functools

    from stsnb import data
    from stsnb.papers import sts_regression as reg
    from stsnb.training.config import TrainConfig

    pairs = reg.nli_training_pairs(list(data.load_snli("dev", data_dir=data_dir))[:24])
    job = functools.partial(
        reg.table1_run,
        "tiny-random-bert",
        pairs[:16],
        reg.table2_loss("smooth_k2"),
        TrainConfig(batch_size=4, lr=0.0, progress=False),
        None,
        pairs[16:],
        "stsb",
        12,
        max_length=24,
    )
    single, double, calls_one, calls_two = _scored_on_one_and_two_processes(tmp_path, job)
    assert calls_one == ["0"] and calls_two == ["0"]  # once, and on rank 0 only
    assert _same_predictions(single.predictions, double.predictions)
    assert torch.allclose(single.heldout_outputs, double.heldout_outputs, atol=1e-6)
    assert (single.result.steps, double.result.steps) == (4, 2)  # both processes trained: 2 batches of 4 each


@pytest.mark.long  # a paper pipeline on two processes (20 s)
def test_pcc_tuning_scores_every_stage_once_on_the_main_process(tmp_path, data_dir):
    """Notebook 10's num_processes path with the paper's 4-bit base scored on its 16-bit copy (a tiny random
    Mistral, mechanics only): the untrained model, stage 1 and stage 2 are each scored once, on rank 0; the run that
    comes back equals the one-process run's (lr 0, as above)."""
    import functools

    from stsnb import data
    from stsnb.evaluation import evaluate
    from stsnb.models import loading as models
    from stsnb.papers.pcc_tuning import pipeline
    from stsnb.training.config import TrainConfig

    config = TrainConfig(batch_size=4, lr=0.0, progress=False)
    triplets = list(data.nli_triplets(list(data.load_snli("dev", data_dir=data_dir))[:200]))[:8]
    stage2 = list(data.load_stsb("train", data_dir=data_dir))[:8]
    job = functools.partial(
        pipeline.run_template,
        "tiny-random-mistral",
        "sth",
        triplets,
        {"batch 4": pipeline.Stage2Variant(stage2, config)},
        config,
        None,
        evaluate.EvalPairs("stsb", 8),
        lora=models.LoraSettings(r=4),
        quantize_4bit=True,
        score_unquantized=True,
        max_length=48,
    )
    single, double, calls_one, calls_two = _scored_on_one_and_two_processes(tmp_path, job)
    assert calls_one == ["0", "0", "0"] and calls_two == ["0", "0", "0"]  # untrained, stage 1, stage 2
    assert _same_predictions(single.untrained, double.untrained)
    assert _same_predictions(single.stage1.predictions, double.stage1.predictions)
    assert _same_predictions(single.stage2["batch 4"].predictions, double.stage2["batch 4"].predictions)
