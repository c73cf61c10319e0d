"""The training loop's mechanics on a tiny linear model (pure math: synthetic data is the right input here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn

from stsnb.train import NonFiniteLossError, TrainConfig, accelerator, fit


def make_data(n: int = 64, seed: int = 0) -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=generator)
    y = x @ torch.tensor([1.5, -2.0, 0.5]) + 0.3
    return list(zip(x, y, strict=True))


def collate(items):
    return torch.stack([x for x, _ in items]), torch.stack([y for _, y in items])


def mse(model: nn.Module, batch) -> torch.Tensor:
    x, y = batch
    return ((model(x).squeeze(-1) - y) ** 2).mean()


def fresh_model() -> nn.Linear:
    torch.manual_seed(0)
    return nn.Linear(3, 1)


def test_fit_learns_a_linear_map():
    data = make_data()
    model = fresh_model()
    before = mse(model, collate(data)).item()
    result = fit(model, mse, data, TrainConfig(epochs=30, batch_size=8, lr=0.05, max_grad_norm=None), collate=collate)
    after = mse(model, collate(data)).item()
    assert after < 0.01 * before
    assert result.steps == 30 * 8


def test_fit_gives_back_the_mode_the_model_came_in():
    data = make_data()
    for mode in (False, True):
        model = fresh_model().train(mode)
        fit(model, mse, data, TrainConfig(epochs=1, batch_size=8, max_grad_norm=None), collate=collate)
        assert model.training is mode


def test_non_finite_loss_names_step_and_batch():
    data = make_data()
    calls = {"n": 0}

    def exploding(model, batch):
        calls["n"] += 1
        loss = mse(model, batch)
        return loss * float("nan") if calls["n"] == 3 else loss

    with pytest.raises(NonFiniteLossError, match=r"optimizer step 2 \(epoch 0, batch 2 of 8"):
        fit(fresh_model(), exploding, data, TrainConfig(batch_size=8, lr=0.01), collate=collate)


def test_best_dev_weights_are_restored():
    data = make_data()
    scores = iter([0.5, 1.0, 5.0, 2.0, 0.0])
    snapshots = []

    def evaluate(model):
        snapshots.append(model.weight.detach().clone())
        return next(scores)

    model = fresh_model()
    result = fit(model, mse, data, TrainConfig(batch_size=8, lr=0.05, eval_every=2), collate=collate, evaluate=evaluate)
    assert result.best_score == 5.0 and result.best_step == 4
    assert torch.equal(model.weight.detach(), snapshots[2])
    assert [(row["step"], row["dev"]) for row in result.history if "dev" in row] == [
        (0, 0.5),
        (2, 1.0),
        (4, 5.0),
        (6, 2.0),
        (8, 0.0),
    ]


def test_the_start_can_be_the_best_checkpoint():
    data = make_data()
    start = fresh_model().weight.detach().clone()
    scores = iter([9.0, 1.0, 2.0])
    model = fresh_model()
    result = fit(
        model,
        mse,
        data,
        TrainConfig(batch_size=16, lr=0.05, eval_every=2),
        collate=collate,
        evaluate=lambda m: next(scores),
    )
    assert result.best_step == 0 and result.best_score == 9.0
    assert torch.equal(model.weight.detach(), start)  # the untouched weights came back
    assert result.weight_change == 0.0  # and the result says so (stsnb.claims.left_start reads it)


def test_weight_change_is_the_largest_change_of_the_returned_weights():
    model = fresh_model()
    start = {k: v.detach().clone() for k, v in model.state_dict().items()}
    result = fit(model, mse, make_data(), TrainConfig(batch_size=16, lr=0.05), collate=collate)
    expected = max(float((model.state_dict()[k] - start[k]).abs().max()) for k in start)
    assert result.weight_change == pytest.approx(expected) and result.weight_change > 0


def test_gradient_accumulation_equals_the_big_batch_for_a_mean_loss():
    data = make_data()
    big, small = fresh_model(), fresh_model()
    base = dict(epochs=2, lr=0.05, max_grad_norm=None, warmup_ratio=0.0)
    fit(big, mse, data, TrainConfig(batch_size=8, grad_accum=1, **base), collate=collate)
    fit(small, mse, data, TrainConfig(batch_size=4, grad_accum=2, **base), collate=collate)
    assert torch.allclose(big.weight, small.weight, atol=1e-6)
    assert torch.allclose(big.bias, small.bias, atol=1e-6)


def dev_score(data):
    """``evaluate`` for fit: minus the MSE on ``data`` (higher is better)."""

    def evaluate(model):
        return -mse(model, collate(data)).item()

    return evaluate


def killed_at_batch(n: int):
    """``mse`` that raises KeyboardInterrupt at its ``n``-th call, as a killed run would stop."""
    calls = {"n": 0}

    def loss(model, batch):
        calls["n"] += 1
        if calls["n"] == n:
            raise KeyboardInterrupt
        return mse(model, batch)

    return loss


def test_resume_continues_where_the_interrupted_run_stopped(tmp_path):
    data = make_data()
    evaluate = dev_score(data)
    config = dict(epochs=2, batch_size=8, lr=0.05, eval_every=3, max_grad_norm=None)
    reference = fresh_model()
    fit(reference, mse, data, TrainConfig(**config), collate=collate, evaluate=evaluate)
    interrupted = killed_at_batch(11)  # after the checkpoint at optimizer step 9

    checkpoint = dict(checkpoint_dir=str(tmp_path / "ckpt"))
    with pytest.raises(KeyboardInterrupt):
        fit(fresh_model(), interrupted, data, TrainConfig(**config, **checkpoint), collate=collate, evaluate=evaluate)
    assert (tmp_path / "ckpt" / "last" / "progress.json").is_file()
    resumed = fresh_model()
    result = fit(
        resumed, mse, data, TrainConfig(**config, **checkpoint, resume=True), collate=collate, evaluate=evaluate
    )
    assert result.steps == 16
    assert torch.allclose(resumed.weight, reference.weight, atol=1e-6)


def test_a_kill_while_a_checkpoint_is_written_keeps_the_previous_one(tmp_path, monkeypatch):
    data = make_data()
    evaluate = dev_score(data)
    config = dict(epochs=2, batch_size=8, lr=0.05, eval_every=3, max_grad_norm=None)
    reference = fresh_model()
    fit(reference, mse, data, TrainConfig(**config), collate=collate, evaluate=evaluate)

    real_save, saves = torch.save, {"n": 0}

    def save_killed_at_the_third_checkpoint(obj, path, *args, **kwargs):
        if Path(path).name == "scheduler.pt":
            saves["n"] += 1
            if saves["n"] == 3:  # the checkpoint of step 6, half written
                raise KeyboardInterrupt
        return real_save(obj, path, *args, **kwargs)

    checkpoint = dict(checkpoint_dir=str(tmp_path / "ckpt"))
    monkeypatch.setattr(torch, "save", save_killed_at_the_third_checkpoint)
    with pytest.raises(KeyboardInterrupt):
        fit(fresh_model(), mse, data, TrainConfig(**config, **checkpoint), collate=collate, evaluate=evaluate)
    monkeypatch.setattr(torch, "save", real_save)
    progress = json.loads((tmp_path / "ckpt" / "last" / "progress.json").read_text())
    assert progress["step"] == 3  # the complete checkpoint before the kill, not the half-written one
    assert (tmp_path / "ckpt" / "last.new").is_dir()
    resumed = fresh_model()
    result = fit(
        resumed, mse, data, TrainConfig(**config, **checkpoint, resume=True), collate=collate, evaluate=evaluate
    )
    assert result.steps == 16
    assert torch.allclose(resumed.weight, reference.weight, atol=1e-6)
    assert not (tmp_path / "ckpt" / "last.new").exists()


def test_resume_finds_the_checkpoint_moved_aside_between_two_renames(tmp_path):
    data = make_data()
    evaluate = dev_score(data)
    config = dict(epochs=1, batch_size=8, lr=0.05, eval_every=3, max_grad_norm=None)
    reference = fresh_model()
    fit(reference, mse, data, TrainConfig(**config), collate=collate, evaluate=evaluate)
    interrupted = killed_at_batch(5)  # after the checkpoint at optimizer step 3

    checkpoints = tmp_path / "ckpt"
    with pytest.raises(KeyboardInterrupt):
        fit(
            fresh_model(),
            interrupted,
            data,
            TrainConfig(**config, checkpoint_dir=str(checkpoints)),
            collate=collate,
            evaluate=evaluate,
        )
    (checkpoints / "last").rename(checkpoints / "last.old")  # as if killed after moving last aside, before the swap
    resumed = fresh_model()
    result = fit(
        resumed,
        mse,
        data,
        TrainConfig(**config, checkpoint_dir=str(checkpoints), resume=True),
        collate=collate,
        evaluate=evaluate,
    )
    assert result.steps == 8 and (checkpoints / "last").is_dir() and not (checkpoints / "last.old").exists()
    assert result.best_step > 0 and torch.allclose(resumed.weight, reference.weight, atol=1e-6)


def test_schedule_is_transformers_linear_warmup_then_decay():
    data = make_data(n=80)
    result = fit(
        fresh_model(),
        mse,
        data,
        TrainConfig(batch_size=8, lr=1.0, warmup_ratio=0.4, eval_every=1, eval_at_start=False),
        collate=collate,
        evaluate=lambda m: 0.0,
    )
    lrs = [row["lr"] for row in result.history if "lr" in row]  # the LR after each of the 10 steps
    assert lrs == pytest.approx([0.25, 0.5, 0.75, 1.0, 5 / 6, 4 / 6, 3 / 6, 2 / 6, 1 / 6, 0.0])


def test_official_scheduler_quirk_counts_more_steps():
    """STS-Regression's code sizes the schedule for 4x the real steps: warmup spans most of the run, no decay."""
    data = make_data(n=80)
    result = fit(
        fresh_model(),
        mse,
        data,
        TrainConfig(batch_size=8, lr=1.0, warmup_ratio=0.2, eval_every=1, eval_at_start=False, schedule_steps_factor=4),
        collate=collate,
        evaluate=lambda m: 0.0,
    )
    lrs = [row["lr"] for row in result.history if "lr" in row]
    assert lrs == pytest.approx([(i + 1) / 8 for i in range(8)] + [1.0 - 1 / 32, 1.0 - 2 / 32])


def test_same_seed_gives_identical_weights_and_scores():
    """Batch order and dropout both follow the seed (accelerate.utils.set_seed inside fit)."""
    data = make_data()

    def run(seed: int):
        torch.manual_seed(123)  # the same initial weights; what differs is only what fit seeds
        model = nn.Sequential(nn.Dropout(0.3), nn.Linear(3, 1))
        result = fit(
            model,
            mse,
            data,
            TrainConfig(batch_size=8, lr=0.05, eval_every=3, seed=seed),
            collate=collate,
            evaluate=lambda m: -mse(m, collate(data)).item(),
        )
        return model.state_dict(), result.history

    first, again, other = run(0), run(0), run(1)
    assert all(torch.equal(first[0][k], again[0][k]) for k in first[0]) and first[1] == again[1]
    assert not all(torch.equal(first[0][k], other[0][k]) for k in first[0])


def test_one_accelerator_serves_fits_with_different_precision():
    data = make_data()
    fit(fresh_model(), mse, data, TrainConfig(batch_size=8, mixed_precision="no"), collate=collate)
    assert accelerator("no") is accelerator("no")
    model = fresh_model()
    fit(model, mse, data, TrainConfig(batch_size=8, mixed_precision="bf16", max_grad_norm=None), collate=collate)
    assert accelerator("bf16").mixed_precision == "bf16" and torch.isfinite(model.weight).all()
    fit(fresh_model(), mse, data, TrainConfig(batch_size=8, mixed_precision="no"), collate=collate)


def test_accumulation_steps_on_the_last_short_group_of_an_epoch():
    data = make_data(n=40)  # 5 batches of 8: accumulating 2 gives steps after batches 2, 4 and 5
    result = fit(fresh_model(), mse, data, TrainConfig(batch_size=8, grad_accum=2), collate=collate)
    assert result.steps == 3


def test_bad_config_is_refused():
    with pytest.raises(ValueError, match="batch_size"):
        fit(fresh_model(), mse, make_data(), TrainConfig(batch_size=0), collate=collate)
    with pytest.raises(ValueError, match="empty"):
        fit(fresh_model(), mse, [], TrainConfig(), collate=collate)


def test_a_batch_the_loss_refuses_is_named_by_step():
    """pearson_loss raises on constant gold scores (r undefined); fit says at which step and batch."""
    from stsnb.losses import pearson_loss

    data = [(torch.randn(3), torch.tensor(1.0)) for _ in range(8)]

    def pearson(model, batch):
        x, y = batch
        return pearson_loss(model(x).squeeze(-1), y)

    with pytest.raises(ValueError, match=r"zero variance.*optimizer step 0, epoch 0, batch 0"):
        fit(fresh_model(), pearson, data, TrainConfig(batch_size=4), collate=collate)
