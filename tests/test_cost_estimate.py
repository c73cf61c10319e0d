"""stsnb.gpu.cost_estimate and the time, batch and disk tables of ``stsnb run --check`` (nothing runs a notebook)."""

from __future__ import annotations

from pathlib import Path

import papermill
import pytest

from stsnb.gpu import cost_estimate, plan_check, plan_costs
from stsnb.gpu.cost_estimate import FitRow
from stsnb.gpu.memory_estimate import KNOWN_SHAPES, ModelShape
from stsnb.runs import plans
from stsnb.training.config import TrainConfig

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PLANS = Path(__file__).resolve().parents[1] / "papermill_runs" / "plans"
TINY = ModelShape("encoder", layers=2, hidden=4, intermediate=8, heads=2, kv_heads=2, vocab=10)


def _row(**changes) -> FitRow:
    values = dict(label="x", model="tiny", count=1, examples=10, epochs=2, sequences_per_example=2, tokens=3,
                  tokens_measured=True, global_batch=4, batch_level=False)  # fmt: skip
    return FitRow(**{**values, **changes})


def test_flops_on_a_hand_worked_example():
    # per layer: q, k, v, o 4 x (4 x 4) = 64, the MLP 2 x (4 x 8) = 64; two layers: 256 matmul weights
    assert TINY.linear_parameters() == 256
    # one token's forward at length 3: 2 x 256 + attention's 4 x 2 layers x 3 tokens x 4 hidden = 512 + 96
    assert cost_estimate.forward_flops_per_token(TINY, 3) == 608
    tokens = 10 * 2 * 3  # examples x epochs x tokens per sequence, for each of the 2 sequences of an example
    assert cost_estimate.train_flops(TINY, _row()) == tokens * 608 * 2 * 3  # every weight: 6 N per token
    assert cost_estimate.train_flops(TINY, _row(gradient_checkpointing=True)) == tokens * 608 * 2 * 4  # 8 N
    assert cost_estimate.train_flops(TINY, _row(trainable="lora", lora_r=1)) == tokens * 608 * 2 * 2  # 4 N
    assert cost_estimate.train_flops(TINY, _row(forward_only_sequences=1)) == tokens * 608 * (2 * 3 + 1)
    scored = _row(dev_evaluations=5, dev_sequences=6, test_sequences=7)
    assert cost_estimate.eval_flops(TINY, scored) == (5 * 6 + 7) * 3 * 608
    # the time: training over 2 processes at 312 TFLOP/s x MFU 0.2, 3 steps of 4 x 2 epochs at 0.05 s each
    cost = cost_estimate.fit_cost("nb", _row(count=3, multi_process=True), TINY, processes=2)
    seconds = tokens * 608 * 6 / (2 * 312e12 * 0.2) + 6 * cost_estimate.STEP_OVERHEAD_SECONDS
    # and the disk: last/ once (at the end) and best.pt once, written; the fp32 encoder's weights read once
    best = 4 * TINY.parameters()
    last = 3 * best + 2 * cost_estimate.SMALL_FILES_BYTES  # written: weights, 2 moments, RNGs (best.pt: a link)
    writing = (last + best) / cost_estimate.CHECKPOINT_WRITE_BYTES_PER_S
    loading = 4 * TINY.parameters() / cost_estimate.MODEL_READ_BYTES_PER_S
    assert cost.last_writes == 1 and cost.hours == pytest.approx(3 * (seconds + writing + loading) / 3600)
    assert (cost.write_hours, cost.load_hours) == (pytest.approx(3 * writing / 3600), pytest.approx(3 * loading / 3600))
    assert (cost.split.processes, cost.split.per_process, cost.split.accumulation) == (2, 2, 1)


def test_a_lora_fit_saves_its_adapter_and_optimizer_never_the_frozen_base():
    shape = KNOWN_SHAPES["mistralai/Mistral-7B-v0.1"]
    row = _row(model="mistralai/Mistral-7B-v0.1", trainable="lora", lora_r=64, quantize_4bit=True, global_batch=240,
               batch_level=True, multi_process=True, count=5)  # fmt: skip
    cost = cost_estimate.fit_cost("10_pcc_tuning", row, shape, processes=4)
    adapter = shape.lora_parameters(64)
    assert cost.trainable_parameters == adapter
    assert cost.best_bytes == 4 * adapter  # best.pt: the fp32 adapter
    # + 2 moments, RNGs, and the earlier best.pt that last/best.pt (a link) keeps alive once best.pt moved on
    assert cost.last_bytes == 4 * adapter + 8 * adapter + 4 * cost_estimate.SMALL_FILES_BYTES + 4 * adapter
    assert cost.last_bytes < shape.parameters() * 0.5  # not even a 4-bit copy of the base
    # one unfinished fit's last/ at a time beside every best.pt (a finished fit's last/ keeps a few KiB)
    assert (cost.peak_bytes, cost.kept_bytes) == (cost.last_bytes + 5 * cost.best_bytes, 5 * cost.best_bytes)
    full = cost_estimate.fit_cost("nb", _row(), TINY, processes=1)
    assert full.best_bytes == 4 * TINY.parameters()


def test_a_fit_without_dev_evaluation_and_a_scoring_row_keep_nothing():
    head = cost_estimate.fit_cost("nb", _row(trainable="head", head_parameters=9, checkpoints=False), TINY, 1)
    scoring = cost_estimate.fit_cost("nb", _row(examples=0, trainable="none", global_batch=0), TINY, 1)
    assert head.peak_bytes == scoring.peak_bytes == 0


def test_last_is_written_at_most_every_interval_and_at_the_end():
    row = _row(dev_evaluations=60)  # at the start, 58 in between, at the end
    assert cost_estimate.last_writes(row, seconds=1000, minutes=10) == 2  # one interval passed, then the end
    assert cost_estimate.last_writes(row, seconds=1000, minutes=0) == 60  # at every evaluation, as before
    assert cost_estimate.last_writes(row, seconds=36_000, minutes=10) == 60  # never more than the evaluations
    assert cost_estimate.last_writes(_row(dev_evaluations=1), seconds=36_000) == 1
    assert cost_estimate.LAST_CHECKPOINT_MINUTES == TrainConfig().last_checkpoint_minutes == 10


def test_fewer_last_writes_cost_less_time_and_the_check_shows_the_terms(monkeypatch):
    shape = KNOWN_SHAPES["bert-base-uncased"]
    row = _row(model="bert-base-uncased", examples=942_000, epochs=1, tokens=57, global_batch=64, dev_evaluations=60)
    every = cost_estimate.last_writes(row, 1e9, minutes=0)
    cost = cost_estimate.fit_cost("nb", row, shape, processes=4)
    assert cost.last_writes < every
    monkeypatch.setattr(cost_estimate, "LAST_CHECKPOINT_MINUTES", 0)
    before = cost_estimate.fit_cost("nb", row, shape, processes=4)
    assert before.last_writes == every and before.write_hours > cost.write_hours
    assert before.hours - cost.hours == pytest.approx(before.write_hours - cost.write_hours)
    assert cost.load_hours == pytest.approx(4 * shape.parameters() / cost_estimate.MODEL_READ_BYTES_PER_S / 3600)
    notebook = plan_costs.NotebookCost("nb", [cost], 4, None, [])
    assert "| of which writes + loads | last/ writes per fit |" in plan_costs.fit_cost_table([notebook])
    assert "of which writes + loads" in plan_costs.notebook_cost_table([notebook], 4, cost_estimate.DEFAULT_GPU)
    monkeypatch.undo()
    said = " ".join(plan_costs.cost_assumptions([notebook], cost_estimate.DEFAULT_GPU))
    assert "at most every 10 minutes" in said and "read at 0.5 GB/s" in said


def test_timeout_for_rounds_twice_the_estimate_up_to_hours():
    assert cost_estimate.timeout_for(19.9) == 40 * 3600
    assert cost_estimate.timeout_for(0.01) == 3600


def _table(text: str, title: str) -> list[list[str]]:
    lines = text.split(title, 1)[1].strip().splitlines()
    table = lines[: next((i for i, line in enumerate(lines) if not line.startswith("|")), len(lines))]
    return [[c.strip() for c in line.strip("|").split("|")] for line in table[2:]]


def test_4_and_8_gpus_train_on_the_same_global_batches(capsys):
    from stsnb.cli import main

    out = {}
    for gpus in ("4", "8"):
        main(["run", "--check", "--profile", "paper", "--gpus", gpus])
        out[gpus] = _table(capsys.readouterr().out, "Global batch per fit (stsnb.training.batching):")
    four, eight = ({tuple(r[:4]): r[4] for r in out[g]} for g in ("4", "8"))
    assert four and four == eight  # every fit, every global batch
    processes = {g: {r[0]: int(r[5]) for r in out[g]} for g in out}
    assert processes["4"]["10_pcc_tuning"] == 4 and processes["8"]["10_pcc_tuning"] == 8
    for rows in out.values():
        for r in rows:  # global = processes x per process x accumulation
            assert int(r[4]) == int(r[5]) * int(r[6]) * int(r[7])


def test_a_notebook_estimated_past_its_timeout_fails_the_check(tmp_path):
    path = tmp_path / "short.yaml"
    path.write_text("description: too short\ntimeout: 1\nnotebooks:\n  40_ccl_csts: {profile: cpu}\n")
    report = plan_check.check(plans.load_plan(path), NOTEBOOKS, gpus=1)
    assert not report.ok
    assert any("40_ccl_csts: estimated" in p and "more than its plan timeout of" in p for p in report.problems)
    assert "**no**" in report.text()
    assert plan_check.check(plans.load_plan(path), NOTEBOOKS).ok  # without --gpus: printed, not a problem


def test_notebook_20_paper_plan_fits_are_what_its_cells_run():
    from stsnb.papers.sts_regression.costs import fit_plan
    from stsnb.papers.sts_regression.recipes import STAGE_SETTINGS, TABLE2

    declared = papermill.inspect_notebook(str(NOTEBOOKS / "20_sts_regression.ipynb"))
    plan = plans.load_plan(PLANS / "paper.yaml")
    p = plan_check.effective_params(declared, plan.notebooks["20_sts_regression"])
    losses, seeds = p["table1_losses"], p["seeds"]
    extra_seeds = [s for s in p["main_claim_seeds"] if s not in seeds]
    expected = 0
    for backbone in p["backbones"]:
        row = p["paper_rows"][backbone]
        expected += len(losses) * len(seeds) + 2 * len(extra_seeds)  # Table 1; the main claim's pair on its extra seeds
        table2 = {(n, *TABLE2[(row, n)]) for n in ("translated_relu", "smooth_k2") if n in losses}
        swept = {(n, float(k), float(x0)) for n, k, x0 in p["sweep"]} - table2  # a Table 1 run answers Table 2's
        heads = len(p["ablation_concatenations"]) if "smooth_k2" in losses else 0  # Table 6: Smooth K2, other heads
        expected += (len(swept) + heads) * len(seeds)
    for backbone in p["contrastive_backbones"]:
        official = ("smooth_k2", *STAGE_SETTINGS[p["table3_rows"][backbone]]["stage2"])
        reruns = len({(n, float(k), float(x0)) for n, k, x0 in p["stage2_sweep"]} - {official})
        expected += 2 * (1 + reruns) + 1  # stage 1 and stage 2 of +Ours and each rerun; +Contrast
    rows = fit_plan(p)
    assert sum(r.count for r in rows if r.examples) == expected
