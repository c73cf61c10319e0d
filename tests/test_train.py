"""The training loop's mechanics on a tiny linear model (pure math: synthetic data is the right input here)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from torch import nn

from stsnb.training import checkpoints, train
from stsnb.training.config import NonFiniteLossError, TrainConfig
from stsnb.training.train import accelerator, fit, relative_change


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
    assert result.weight_change == 0.0  # and the result says so (stsnb.evaluation.claims.left_start reads it)


def test_the_gate_scores_the_start_and_the_returned_weights_once_each_and_never_selects():
    """``fit``'s gate (dev items selection never sees) runs at step 0 and on the kept weights only; it does not move
    the selection (the gate's own scores say the start is best, selection still keeps step 4)."""
    from stsnb.evaluation.evaluate import DevScore

    scores, gated = iter([0.5, 1.0, 5.0, 2.0, 0.0]), []

    def gate(model):
        gated.append(model.weight.detach().clone())
        return DevScore(-len(gated), [1.0, 2.0], [float(len(gated)), 0.0])

    model = fresh_model()
    config = TrainConfig(batch_size=8, lr=0.05, eval_every=2)
    result = fit(model, mse, make_data(), config, collate=collate, evaluate=lambda m: next(scores), gate=gate)
    assert result.best_step == 4 and len(gated) == 2
    assert torch.equal(gated[0], fresh_model().weight) and torch.equal(gated[1], model.weight.detach())
    assert result.gate_start["predictions"] == [1.0, 0.0] and result.gate_kept["predictions"] == [2.0, 0.0]


def test_weight_change_is_the_largest_change_of_the_returned_weights():
    model = fresh_model()
    start = {k: v.detach().clone() for k, v in model.state_dict().items()}
    result = fit(model, mse, make_data(), TrainConfig(batch_size=16, lr=0.05), collate=collate)
    expected = max(float((model.state_dict()[k] - start[k]).abs().max()) for k in start)
    assert result.weight_change == pytest.approx(expected) and result.weight_change > 0


def test_relative_change_is_the_distance_moved_over_the_starts_norm():
    model = fresh_model()
    start = {k: v.detach().clone() for k, v in model.state_dict().items()}
    result = fit(model, mse, make_data(), TrainConfig(batch_size=16, lr=0.05), collate=collate)
    after = model.state_dict()
    moved = torch.cat([(after[k] - start[k]).flatten() for k in start]).norm()
    norm = torch.cat([start[k].flatten() for k in start]).norm()
    assert result.relative_change == pytest.approx(float(moved / norm), rel=1e-5) and result.relative_change > 0
    assert relative_change(start, start) == 0.0
    zero = {"w": torch.zeros(3)}
    assert relative_change(zero, {"w": torch.ones(3)}) == math.inf and relative_change(zero, zero) == 0.0
    # a distance, unlike the largest single change: twice the move is twice the relative change
    doubled = {k: start[k] + 2 * (after[k] - start[k]) for k in start}
    assert relative_change(start, doubled) == pytest.approx(2 * result.relative_change, rel=1e-5)
    with pytest.raises(ValueError, match="share no weight"):
        relative_change({"a": torch.ones(1)}, {"b": torch.ones(1)})


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


def killed_at_batch(n: int, loss_fn=mse):
    """``loss_fn`` (``mse``) that raises KeyboardInterrupt at its ``n``-th call, as a killed run would stop."""
    calls = {"n": 0}

    def loss(model, batch):
        calls["n"] += 1
        if calls["n"] == n:
            raise KeyboardInterrupt
        return loss_fn(model, batch)

    return loss


def test_resume_continues_where_the_interrupted_run_stopped(tmp_path):
    data = make_data()
    evaluate = dev_score(data)
    config = dict(epochs=2, batch_size=8, lr=0.05, eval_every=3, max_grad_norm=None)
    reference = fresh_model()
    fit(reference, mse, data, TrainConfig(**config), collate=collate, evaluate=evaluate)
    interrupted = killed_at_batch(11)  # Ctrl-C in optimizer step 11: last/ saved as of step 10

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


def test_a_finished_fit_keeps_a_slim_checkpoint_and_returns_at_once_on_resume(tmp_path):
    """A finished fit's last/ drops the weights and AdamW's moments (best.pt holds what it returns), so a notebook's
    checkpoints hold one unfinished fit's state at a time; resumed, the fit trains no step and returns the
    uninterrupted fit's weights, history and RNG state."""
    data = make_data()
    evaluate = dev_score(data)
    config = dict(epochs=2, batch_size=8, lr=0.05, eval_every=3, max_grad_norm=None)
    checkpoint = dict(checkpoint_dir=str(tmp_path / "ckpt"))
    finished = fresh_model()
    first = fit(finished, mse, data, TrainConfig(**config, **checkpoint), collate=collate, evaluate=evaluate)
    after_first = torch.rand(3)
    last = tmp_path / "ckpt" / "last"
    assert json.loads((last / "progress.json").read_text())["finished"] is True
    assert sorted(p.name for p in last.iterdir()) == ["progress.json", "rng_0.pt", "scheduler.pt"]
    calls = {"n": 0}

    def counted(model, batch):
        calls["n"] += 1
        return mse(model, batch)

    resumed = fresh_model()
    again = fit(resumed, counted, data, TrainConfig(**config, **checkpoint, resume=True), collate=collate,
                evaluate=evaluate)  # fmt: skip
    assert calls["n"] == 0 and again.resumed_at == first.steps == again.steps
    assert (again.best_step, again.best_score, again.history) == (first.best_step, first.best_score, first.history)
    assert torch.equal(resumed.weight, finished.weight) and torch.equal(torch.rand(3), after_first)


def test_a_kill_while_a_checkpoint_is_written_keeps_the_previous_one(tmp_path, monkeypatch):
    data = make_data()
    evaluate = dev_score(data)
    config = dict(epochs=2, batch_size=8, lr=0.05, eval_every=3, max_grad_norm=None, last_checkpoint_minutes=0)
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
    interrupted = killed_at_batch(5)  # Ctrl-C in optimizer step 5: last/ saved as of step 4

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


class StepClock:
    """A clock for ``checkpoints.LastWrites`` that moves one minute per call of ``loss`` (one optimizer step here),
    and a ``loss`` (``mse``) that crashes at its ``crash_at``-th call as a killed server would (no Ctrl-C to catch)."""

    def __init__(self, crash_at: int = 0):
        self.calls, self.crash_at = 0, crash_at

    def __call__(self) -> float:
        return 60.0 * self.calls

    def loss(self, model, batch):
        self.calls += 1
        if self.calls == self.crash_at:
            raise RuntimeError("killed")
        return mse(model, batch)


def recorded_last_writes(monkeypatch, clock: StepClock) -> list[int]:
    """The optimizer steps at which fit writes last/, with ``clock`` as the interval's clock."""
    import functools

    steps: list[int] = []
    real = checkpoints.save_last_checkpoint

    def recording(acc, model, optimizer, folder, scheduler, state, *args):
        steps.append(state["step"])
        return real(acc, model, optimizer, folder, scheduler, state, *args)

    monkeypatch.setattr(train, "save_last_checkpoint", recording)
    monkeypatch.setattr(train, "LastWrites", functools.partial(checkpoints.LastWrites, clock=clock))
    return steps


def peaked_scores(step: int) -> float:
    """Dev scores that peak at step 5 and fall after it."""
    return -abs(step - 5.0)


def test_last_is_written_at_most_every_interval_and_the_selection_is_unchanged(tmp_path, monkeypatch):
    data = make_data()
    config = dict(epochs=2, batch_size=8, lr=0.05, eval_every=1, max_grad_norm=None, progress=False)
    results, writes = {}, {}
    for minutes in (0, 2.5):
        clock = StepClock()
        writes[minutes] = recorded_last_writes(monkeypatch, clock)
        scores = iter([peaked_scores(step) for step in range(17)])
        model = fresh_model()
        ckpt = dict(checkpoint_dir=str(tmp_path / f"ckpt-{minutes}"), last_checkpoint_minutes=minutes)
        result = fit(model, clock.loss, data, TrainConfig(**config, **ckpt), collate=collate,
                     evaluate=lambda m, s=scores: next(s))  # fmt: skip
        results[minutes] = (result.best_step, result.best_score, result.history, model.weight.detach().clone())
    assert writes[0] == list(range(17))  # at every evaluation, as before the interval
    assert writes[2.5] == [3, 6, 9, 12, 15, 16]  # one a step is a minute: every 3 steps, and at the end
    best_step, best_score, history, weight = results[2.5]
    assert (best_step, best_score, history) == results[0][:3] and best_step == 5
    assert torch.equal(weight, results[0][3])
    best = torch.load(tmp_path / "ckpt-2.5" / "best.pt", weights_only=True)["weight"]
    assert torch.equal(best, weight)  # best.pt followed every better score between the writes of last/


def test_a_crash_resumes_from_the_last_write_with_the_selection_of_that_moment(tmp_path, monkeypatch):
    """Killed in step 11 with last/ written at step 9 and a better score at step 10 in best.pt: the resume takes up
    step 9's selection (last/best.pt), trains steps 10-16 again and selects as the uninterrupted fit did."""
    data = make_data()
    config = dict(
        epochs=2, batch_size=8, lr=0.05, eval_every=1, max_grad_norm=None, last_checkpoint_minutes=2.5, progress=False
    )
    normal = [peaked_scores(step) for step in range(17)]
    reference = fresh_model()
    in_order = iter(normal)
    expected = fit(reference, mse, data, TrainConfig(**config), collate=collate, evaluate=lambda m: next(in_order))

    folder = tmp_path / "ckpt"
    clock = StepClock(crash_at=11)
    writes = recorded_last_writes(monkeypatch, clock)
    scores = iter(normal[:10] + [100.0])  # a score at step 10 that the rerun of step 10 will not give
    with pytest.raises(RuntimeError, match="killed"):
        fit(fresh_model(), clock.loss, data, TrainConfig(**config, checkpoint_dir=str(folder)), collate=collate,
            evaluate=lambda m: next(scores))  # fmt: skip
    assert writes == [3, 6, 9] and json.loads((folder / "last" / "progress.json").read_text())["step"] == 9
    assert not (folder / "best.pt").samefile(folder / "last" / "best.pt")  # step 10's weights replaced best.pt

    resumed = fresh_model()
    rest = iter(normal[10:])
    result = fit(resumed, StepClock().loss, data, TrainConfig(**config, checkpoint_dir=str(folder), resume=True),
                 collate=collate, evaluate=lambda m: next(rest))  # fmt: skip
    assert result.resumed_at == 9 and (result.best_step, result.best_score) == (5, 0.0)
    assert result.history == expected.history
    assert torch.allclose(resumed.weight, reference.weight, atol=1e-6)
    assert torch.allclose(torch.load(folder / "best.pt", weights_only=True)["weight"], reference.weight, atol=1e-6)


def test_ctrl_c_saves_last_at_the_last_finished_step_but_not_inside_an_evaluation(tmp_path):
    data = make_data()
    evaluate = dev_score(data)
    config = dict(epochs=2, batch_size=8, lr=0.05, eval_every=3, max_grad_norm=None, last_checkpoint_minutes=1e6)
    reference = fresh_model()
    fit(reference, mse, data, TrainConfig(**config), collate=collate, evaluate=evaluate)
    folder = tmp_path / "ckpt"
    with pytest.raises(KeyboardInterrupt):
        fit(fresh_model(), killed_at_batch(12), data, TrainConfig(**config, checkpoint_dir=str(folder)),
            collate=collate, evaluate=evaluate)  # fmt: skip
    assert json.loads((folder / "last" / "progress.json").read_text())["step"] == 11  # no write before the end
    resumed = fresh_model()
    result = fit(resumed, mse, data, TrainConfig(**config, checkpoint_dir=str(folder), resume=True), collate=collate,
                 evaluate=evaluate)  # fmt: skip
    assert result.resumed_at == 11 and result.steps == 16
    assert torch.allclose(resumed.weight, reference.weight, atol=1e-6)

    calls = {"n": 0}

    def interrupted_evaluation(model):
        calls["n"] += 1
        if calls["n"] == 3:  # the evaluation of step 6: the state is between two steps, nothing is saved
            raise KeyboardInterrupt
        return evaluate(model)

    other = tmp_path / "other"
    with pytest.raises(KeyboardInterrupt):
        fit(fresh_model(), mse, data, TrainConfig(**config, checkpoint_dir=str(other)), collate=collate,
            evaluate=interrupted_evaluation)  # fmt: skip
    assert not (other / "last").exists() and (other / "best.pt").is_file()


def test_last_writes_are_due_after_the_interval_at_the_end_and_never_twice_at_one_step():
    now = {"t": 0.0}
    writes = checkpoints.LastWrites(10, step=0, clock=lambda: now["t"])
    assert not writes.due(0) and writes.due(0, final=True)
    now["t"] = 599.0
    assert not writes.due(4)
    now["t"] = 600.0
    assert writes.due(5)
    writes.written(5)
    assert not writes.due(5, final=True) and not writes.due(6) and writes.count == 1
    assert checkpoints.LastWrites(0, step=0).due(0)  # 0 minutes: at every evaluation
    with pytest.raises(ValueError, match="last_checkpoint_minutes must be >= 0"):
        checkpoints.LastWrites(-1, step=0)


def test_the_interval_is_no_setting_of_the_run_key():
    assert "last_checkpoint_minutes" not in checkpoints.run_settings(TrainConfig(last_checkpoint_minutes=3))


def test_fit_prints_its_pace_once(monkeypatch, capsys):
    import functools

    monkeypatch.setattr(train, "Pace", functools.partial(train.Pace, after=0.0))
    fit(fresh_model(), mse, make_data(), TrainConfig(batch_size=8, progress=True), collate=collate)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("fit: ")]
    assert len(lines) == 1 and lines[0].startswith("fit: step 1/8: ") and "s/step, done in about" in lines[0]


def test_in_a_batch_run_a_fit_writes_plain_lines_with_its_loss_and_dev_score_and_its_evaluations_none(
    tmp_path, monkeypatch, capsys
):
    """The fit's bar, as ``stsnb run`` sees it: plain lines in the progress log (here one per step), the latest loss
    and dev score beside the steps; a bar its dev evaluation opens (an encoder's) stays silent; nothing goes into the
    notebook (stdout, stderr)."""
    from stsnb.models import progress

    monkeypatch.setenv("TQDM_DISABLE", "1")
    monkeypatch.setenv(progress.PROGRESS_LOG_ENV, str(tmp_path / "progress.log"))
    monkeypatch.setattr(progress, "LOG_DELAY", 0.0)
    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)

    def evaluate(model: nn.Module) -> float:
        with progress.bar(100, "encode", "sentence") as encoding:
            encoding.update(100)
        return 50.0

    config = TrainConfig(batch_size=8, eval_every=4, label="stage 1, seed 0")
    fit(fresh_model(), mse, make_data(), config, collate=collate, evaluate=evaluate)
    lines = (tmp_path / "progress.log").read_text().splitlines()
    assert lines[0].startswith("stage 1, seed 0 1/8 steps, ") and " s left, dev 50.00, loss " in lines[0]
    assert lines[-1].startswith("stage 1, seed 0 8/8 steps, ") and " s, dev 50.00, loss " in lines[-1]
    assert ", done in " in lines[-1] and not any("encode" in line for line in lines)
    assert capsys.readouterr() == ("", "")


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
    from stsnb.training.losses import pearson_loss

    data = [(torch.randn(3), torch.tensor(1.0)) for _ in range(8)]

    def pearson(model, batch):
        x, y = batch
        return pearson_loss(model(x).squeeze(-1), y)

    with pytest.raises(ValueError, match=r"zero variance.*optimizer step 0, epoch 0, batch 0"):
        fit(fresh_model(), pearson, data, TrainConfig(batch_size=4), collate=collate)


# The steps of fit, one at a time, on a run as fit starts it (stsnb.training.train._start: no step taken yet).


@pytest.fixture
def make_run(monkeypatch):
    """``make_run(scores=None, **config)``: a fit's ``_Run`` on ``fresh_model()`` and ``make_data()`` (batches of 8,
    lr 0.05); with ``scores`` its ``evaluate`` returns them in turn. The Accelerator lets go of the runs afterwards."""
    import contextlib

    monkeypatch.delenv(checkpoints.CHECKPOINTS_ENV, raising=False)
    bars = contextlib.ExitStack()

    def make(scores=None, **settings):
        answers = iter(scores or ())
        evaluate = (lambda model: next(answers)) if scores is not None else None
        config = TrainConfig(batch_size=8, lr=0.05, progress=False, **settings)
        run = train._start(fresh_model(), mse, make_data(), config, evaluate, None)
        run.bar = bars.enter_context(train._progress_bar(run))
        return run

    yield make
    bars.close()
    accelerator().free_memory()


def weights(run) -> dict[str, torch.Tensor]:
    return checkpoints.trainable_state(run.acc.unwrap_model(run.model))


def nudge(run, by: float = 1.0) -> None:
    with torch.no_grad():
        run.acc.unwrap_model(run.model).weight.add_(by)


def test_check_inputs_refuses_empty_data_and_sizes_below_one():
    train._check_inputs([0], TrainConfig())
    for bad in (dict(batch_size=0), dict(grad_accum=0), dict(epochs=0)):
        with pytest.raises(ValueError, match="must be >= 1"):
            train._check_inputs([0], TrainConfig(**bad))
    with pytest.raises(ValueError, match="empty"):
        train._check_inputs([], TrainConfig())


def test_total_steps_group_each_process_batches_by_accumulation():
    config = TrainConfig(batch_size=8, grad_accum=2, epochs=3)
    assert train._total_steps(40, config, 1) == 9  # 5 batches: groups of 2, 2 and 1, three epochs
    assert train._total_steps(40, config, 2) == 6  # 3 batches per process: groups of 2 and 1
    assert train._total_steps(40, replace(config, max_steps=4), 1) == 4
    assert train._total_steps(47, TrainConfig(batch_size=8, drop_last=True), 1) == 5
    with pytest.raises(ValueError, match="no full batch"):
        train._total_steps(7, TrainConfig(batch_size=8, drop_last=True), 1)


def test_start_prepares_a_run_before_its_first_step(make_run, tmp_path):
    run = make_run(epochs=2, checkpoint_dir=str(tmp_path / "ckpt"))
    assert run.total == 16 and run.state == train._fresh_state() and run.checkpoints == tmp_path / "ckpt"
    assert run.scheduler.get_last_lr() == [0.0, 0.0]  # linear warmup from 0 (two parameter groups)
    assert all(torch.equal(run.initial_weights[k], v) for k, v in weights(run).items())


def test_evaluate_and_select_keeps_the_best_weights_and_checkpoints_them(make_run, tmp_path):
    run = make_run(scores=[1.0, 3.0, 2.0], checkpoint_dir=str(tmp_path / "ckpt"), last_checkpoint_minutes=0)
    train._evaluate_and_select(run)
    nudge(run)
    run.state["step"] = 1
    train._evaluate_and_select(run)  # the best
    best = weights(run)
    nudge(run)
    run.state["step"] = 2
    train._evaluate_and_select(run)
    assert [(row["step"], row["dev"]) for row in run.state["history"]] == [(0, 1.0), (1, 3.0), (2, 2.0)]
    assert (run.state["best_score"], run.state["best_step"], run.state["evaluated_at"]) == (3.0, 1, 2)
    assert torch.equal(run.best_weights["weight"], best["weight"])
    assert torch.equal(torch.load(tmp_path / "ckpt" / "best.pt")["weight"], best["weight"])
    assert json.loads((tmp_path / "ckpt" / "last" / "progress.json").read_text()) == run.state


def test_evaluate_and_select_does_nothing_without_an_evaluate(make_run, tmp_path):
    run = make_run(checkpoint_dir=str(tmp_path / "ckpt"))
    train._evaluate_and_select(run)
    assert run.state == train._fresh_state() and run.best_weights is None and not (tmp_path / "ckpt").exists()


def test_save_checkpoint_writes_best_only_when_the_evaluation_improved(make_run, tmp_path):
    checkpoints = tmp_path / "ckpt"
    run = make_run(checkpoint_dir=str(checkpoints))
    run.best_weights = {"weight": torch.zeros(1, 3)}
    train._save_checkpoint(run, improved=False, write_last=True)
    assert sorted(p.name for p in checkpoints.iterdir()) == ["last"]
    run.state["step"] = 3
    train._save_checkpoint(run, improved=True, write_last=True)
    assert sorted(p.name for p in checkpoints.iterdir()) == ["best.pt", "last"]  # nothing half-written left
    assert torch.equal(torch.load(checkpoints / "best.pt")["weight"], torch.zeros(1, 3))
    assert json.loads((checkpoints / "last" / "progress.json").read_text())["step"] == 3
    assert (checkpoints / "last" / "best.pt").samefile(checkpoints / "best.pt")  # a link: the selection of step 3
    run.state["step"] = 4
    train._save_checkpoint(run, improved=False, write_last=False)  # not due: best.pt alone would change
    assert json.loads((checkpoints / "last" / "progress.json").read_text())["step"] == 3


def test_resume_state_takes_up_the_last_checkpoint(make_run, tmp_path):
    checkpoint = dict(checkpoint_dir=str(tmp_path / "ckpt"))
    first = make_run(scores=[2.0], last_checkpoint_minutes=0, **checkpoint)
    nudge(first)
    first.state.update(step=5, epoch=1, batch=3)
    for _ in range(5):
        first.optimizer.step()
        first.scheduler.step()
    train._evaluate_and_select(first)
    saved, saved_state = weights(first), json.loads(json.dumps(first.state))

    not_resuming = make_run(**checkpoint)
    train._resume_state(not_resuming)
    assert not_resuming.resumed_at is None and not_resuming.state == train._fresh_state()
    assert not_resuming.best_weights is None and not torch.equal(weights(not_resuming)["weight"], saved["weight"])

    resumed = make_run(resume=True, **checkpoint)
    train._resume_state(resumed)
    assert resumed.resumed_at == 5 and resumed.state == saved_state
    assert resumed.scheduler.state_dict()["last_epoch"] == 5
    assert torch.equal(weights(resumed)["weight"], saved["weight"])
    assert torch.equal(resumed.best_weights["weight"], saved["weight"])


def test_stop_on_nan_names_the_processes_step_batch_and_examples():
    acc = accelerator("no")
    where = train._Where(4, 1, 2, range(9), list(range(10)))
    train._stop_on_nan(acc, torch.tensor(0.5), where)  # a finite loss passes
    expected = (
        r"not finite on process 0 of 1 \(this process: inf\) at optimizer step 4 \(epoch 1, batch 2 of 9, this "
        r"process's examples \[0, 1, 2, 3, 4, 5, 6, 7\]\.\.\.\); every process stops here"
    )
    with pytest.raises(NonFiniteLossError, match=expected):
        train._stop_on_nan(acc, torch.tensor(float("inf")), where)


def test_train_batch_steps_the_optimizer_and_names_a_batch_the_loss_refuses(make_run):
    run = make_run(warmup_ratio=0.0)  # no warmup: the first step's learning rate is not 0
    batch = collate(make_data()[:8])
    before = weights(run)
    loss = train._train_batch(run, mse, batch, train._Where(0, 0, 0, range(8), list(range(8))))
    assert loss.item() == pytest.approx(mse(fresh_model(), batch).item())
    assert not torch.equal(weights(run)["weight"], before["weight"])

    def refusing(model, batch):
        raise ValueError("r is undefined")

    with pytest.raises(
        ValueError, match=r"r is undefined \(optimizer step 3, epoch 0, batch 1 of 8, examples \[5, 2\]\)"
    ):
        train._train_batch(run, refusing, batch, train._Where(3, 0, 1, range(8), [5, 2]))


def test_count_step_logs_and_evaluates_every_eval_every_steps(make_run):
    run = make_run(scores=[1.0], eval_every=2)
    run.optimizer.step()  # the scheduler steps after the optimizer
    run.loss_sum, run.loss_count = 3.0, 2
    train._count_step(run, epoch=0)
    assert run.state["step"] == 1 and run.state["history"] == [] and run.loss_count == 2
    train._count_step(run, epoch=0)
    loss_row, dev_row = run.state["history"]
    assert loss_row == {"step": 2, "epoch": 0, "loss": 1.5, "lr": run.scheduler.get_last_lr()[0]}
    assert dev_row == {"step": 2, "epoch": 0, "dev": 1.0} and run.loss_count == 0
    assert run.scheduler.state_dict()["last_epoch"] == 2


def test_log_loss_is_the_mean_since_the_previous_row(make_run):
    run = make_run()
    run.loss_sum, run.loss_count, run.state["step"] = 6.0, 3, 7
    train._log_loss(run, 2)
    assert run.state["history"] == [{"step": 7, "epoch": 2, "loss": 2.0}]
    assert (run.loss_sum, run.loss_count) == (0.0, 0)


def test_train_epoch_skips_what_a_resumed_run_trained_and_stops_at_the_last_step(make_run):
    run = make_run()  # 64 examples: 8 batches of 8, 8 steps
    run.state.update(step=5, batch=5)
    train._train_epoch(run, 0, mse, make_data(), collate)
    assert (run.state["step"], run.state["epoch"], run.state["batch"], run.loss_count) == (8, 0, 8, 3)
    short = make_run(max_steps=2)
    train._train_epoch(short, 0, mse, make_data(), collate)
    assert (short.state["step"], short.state["batch"], short.loss_count) == (2, 2, 2)


def test_restore_best_loads_the_selected_weights_and_the_mode(make_run):
    run = make_run()
    bias = weights(run)["bias"]
    run.best_weights = {"weight": torch.ones(1, 3)}
    model = train._restore_best(run, was_training=False)
    assert torch.equal(model.weight.detach(), torch.ones(1, 3)) and torch.equal(model.bias.detach(), bias)
    assert not model.training and train._restore_best(run, was_training=True).training


def test_write_about_describes_the_run(make_run, tmp_path):
    run = make_run(checkpoint_dir=str(tmp_path / "ckpt"))
    run.state.update(step=8, best_step=4, best_score=1.5)
    run.resumed_at = 3
    train._write_about(run, mse, 64)
    about = json.loads((tmp_path / "ckpt" / "about.json").read_text())
    assert about["loss"] == "test_train.mse()" and about["examples"] == 64 and about["config"]["batch_size"] == 8
    assert {k: about[k] for k in ("step", "best_step", "best_score", "resumed_at")} == dict(
        step=8, best_step=4, best_score=1.5, resumed_at=3
    )
    assert "checkpoint_dir" not in about["config"]


@pytest.mark.long  # three 4-bit fits (5 s; the plain resume stays): off the default tier
def test_a_killed_qlora_fit_resumes_to_the_uninterrupted_weights_and_saves_only_what_trains(tmp_path, data_dir):
    """A tiny Mistral in 4-bit (bitsandbytes' Linear4bit on the CPU) with a LoRA adapter: ``last/`` holds the adapter,
    its optimizer state and the RNGs, never the 4-bit base (whose quantisation keys a strict load could not take back),
    and a fit killed after a checkpoint resumes to the weights of the uninterrupted one."""
    from stsnb import data
    from stsnb.models import loading as models

    pairs = list(data.load_stsb("train", data_dir=data_dir))[:24]
    items = [(p.sent1, p.sent2, p.score / 5.0) for p in pairs]

    def encoder() -> nn.Module:
        torch.manual_seed(0)
        return models.load_encoder(
            "tiny-random-mistral", quantize_4bit=True, lora=models.LoraSettings(r=4, dropout=0.0), max_length=24
        )

    def cosine_mse(model, batch) -> torch.Tensor:
        left, right, gold = zip(*batch, strict=True)
        cos = torch.nn.functional.cosine_similarity(model(list(left)), model(list(right)))
        return ((cos - torch.tensor(gold)) ** 2).mean()

    config = dict(epochs=1, batch_size=4, lr=1e-3, eval_every=2, max_grad_norm=None, progress=False)
    evaluate = lambda model: 0.0  # noqa: E731 -- the last checkpoint is what matters here, not the selection
    encoder()  # a first load builds the tiny model (stsnb.models.tiny.build seeds torch): the fits below load it alike
    reference = encoder()
    fit(reference, cosine_mse, items, TrainConfig(**config), collate=list, evaluate=evaluate)
    checkpoint = dict(checkpoint_dir=str(tmp_path / "ckpt"))
    with pytest.raises(KeyboardInterrupt):
        killed = killed_at_batch(4, cosine_mse)
        fit(encoder(), killed, items, TrainConfig(**config, **checkpoint), collate=list, evaluate=evaluate)
    last = tmp_path / "ckpt" / "last"
    saved = torch.load(last / "trainable.pt", weights_only=True)
    assert saved and all("lora_" in name for name in saved), "only the adapter is saved"
    assert sum(f.stat().st_size for f in last.iterdir()) < 2 * sum(t.numel() * 4 for t in saved.values()) * 3
    resumed = encoder()
    result = fit(
        resumed, cosine_mse, items, TrainConfig(**config, **checkpoint, resume=True), collate=list, evaluate=evaluate
    )
    assert result.resumed_at == 3 and result.steps == 6  # Ctrl-C in step 4 saved step 3
    want, got = checkpoints.trainable_state(reference), checkpoints.trainable_state(resumed)
    assert want.keys() == got.keys() and all(torch.allclose(want[k], got[k], atol=1e-6) for k in want)
