"""The helpers notebook 20 calls instead of inline plumbing: the shared optimisation settings and the NLI split
(Section 4.1), the Table 1 runs and what is kept of each, Section 4.2's shared runs and Table 3's result, Table 4's
ratios and sanity check, Tables 5-6's comparison rows and claims, and the figures (bars from zero, no text box over
another, nothing under 9 pt, an empty table said in words). Predictions use real STS-B gold scores."""

from __future__ import annotations

import functools
import pickle
import random

import matplotlib
import numpy as np
import pytest
import torch
from synthetic_seeds import fit_result

from stsnb import data
from stsnb.evaluation import evaluate
from stsnb.papers import sts_regression as reg
from stsnb.papers.sts_regression import claims, figures, memory, sweep_claims, sweeps, two_stage
from stsnb.teaching import plots
from stsnb.training.batching import BatchError
from stsnb.training.config import TrainConfig, TrainResult

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def gold(data_dir):
    return np.array([p.score for p in data.sample(list(data.load_stsb("test")), 120, 0)])


def _predictions(gold: np.ndarray, noise: float, seed: int, tasks=("STSBenchmark",)) -> evaluate.TaskPredictions:
    rng = np.random.default_rng(seed)
    return {task: (gold, gold + rng.normal(0, noise, len(gold))) for task in tasks}


def _result(best_step: int = 15, steps: int = 30, change: float | None = 0.01, best: float = 70.0) -> TrainResult:
    history = [{"step": 0, "dev": 60.0}, {"step": 10, "loss": 0.5}, {"step": best_step, "dev": best}]
    return TrainResult(steps, best, best_step, 1.0, history, change)


# ---- the shared settings and the NLI split (Section 4.1) --------------------------------------------------------

RECIPE_PARAMS = {
    "lr": 5e-4,
    "max_grad_norm": 10.0,
    "batch_size": 16,
    "epochs": 1,
    "eval_every": 15,
    "seed": 3,
    "grad_accum": 2,
    "weight_decay": 0.01,
    "warmup_ratio": 0.2,
    "schedule_steps_factor": 4,
    "use_official_recipes": False,
    "profile": "cpu",  # other parameters are ignored
}


def test_recipe_builds_the_train_config_the_notebook_did_by_hand():
    recipe = reg.Recipe.from_params(RECIPE_PARAMS)
    expected = TrainConfig(
        epochs=1,
        batch_size=8,  # the global 16 in grad_accum=2 micro-batches on one process
        grad_accum=2,
        lr=5e-4,
        weight_decay=0.01,
        warmup_ratio=0.2,
        schedule_steps_factor=4,
        max_grad_norm=10.0,
        eval_every=15,
        seed=3,  # with a progress bar (the default): each fit shows one
    )
    assert recipe.config() == expected
    # positional as the notebook calls it: lr, clip, batch, passes, every (None: once per epoch), and the seed
    stage1 = recipe.config(1e-3, 10.0, 32, 5, None)
    assert (stage1.lr, stage1.batch_size, stage1.epochs, stage1.eval_every, stage1.seed) == (1e-3, 16, 5, None, 3)
    assert recipe.config(run_seed=7).seed == 7 and recipe.config(clip=2.0).max_grad_norm == 2.0


def test_recipe_shares_the_global_batch_out_over_the_processes():
    """The paper plan's global batch of 64 (4 GPUs x 16 in the official code) is the same on 4 and 8 processes."""
    for processes, share in ((1, 32), (4, 8), (8, 4)):
        recipe = reg.Recipe.from_params({**RECIPE_PARAMS, "batch_size": 64}, processes)
        config = recipe.config()
        assert (config.batch_size, config.grad_accum) == (share, 2)
        assert config.batch_size * processes * config.grad_accum == 64 == recipe.split().global_batch
    with pytest.raises(BatchError, match="process counts that divide it: \\[1, 2, 4, 8, 16\\]"):
        reg.Recipe.from_params({**RECIPE_PARAMS, "batch_size": 64}, 3).config()


def test_recipe_uses_the_official_lr_and_clip_only_when_asked_and_known():
    plain = reg.Recipe.from_params(RECIPE_PARAMS)
    official = reg.Recipe.from_params({**RECIPE_PARAMS, "use_official_recipes": True})
    assert plain.lr_and_clip("BERT-base", "smooth_k2") == (5e-4, 10.0)
    assert official.lr_and_clip("BERT-base", "smooth_k2") == reg.OFFICIAL_RECIPES[("BERT-base", "smooth_k2")]
    assert official.lr_and_clip("BERT-base", "mse") == (5e-4, 10.0)  # no released recipe for that row
    with pytest.raises(KeyError, match="warmup_ratio"):
        reg.Recipe.from_params({k: v for k, v in RECIPE_PARAMS.items() if k != "warmup_ratio"})


def test_dev_curve_keeps_the_dev_evaluations_in_order():
    assert reg.dev_curve(_result(best_step=20, best=71.5)) == [(0, 60.0), (20, 71.5)]


def test_split_pairs_holds_out_first_and_trains_on_the_next_pairs():
    pairs = [reg.TrainingPair(f"a{i}", f"b{i}", float(i % 3)) for i in range(50)]
    split = reg.split_pairs(pairs, seed=4, heldout=10, train=15)
    shuffled = list(pairs)
    random.Random(4).shuffle(shuffled)  # the notebook's shuffle, in place
    assert split.heldout == shuffled[:10] and split.pool == shuffled[10:] and split.train == shuffled[10:25]
    assert not set(split.heldout) & set(split.pool)
    assert reg.split_pairs(pairs, seed=4, heldout=10, train=None).train == split.pool
    assert pairs[0] == reg.TrainingPair("a0", "b0", 0.0)  # the input is left as it was


# ---- Table 1's runs (Section 4.1) ------------------------------------------------------------------------------


def test_every_loss_trains_on_seeds_and_the_main_claims_pair_on_its_extra_seeds():
    losses = list(reg.LOSSES)
    assert reg.losses_on_seed(losses, 0, seeds=[0]) == losses
    assert reg.losses_on_seed(losses, 1, seeds=[0]) == ["cross_entropy", "smooth_k2"]  # Table 1's order


def test_table1_job_binds_every_argument_and_pickles(gold):
    evaluation = reg.Evaluation("stsb", 32, 5)
    config = TrainConfig(epochs=1)
    loss = reg.table2_loss("smooth_k2")
    job = reg.table1_job("minilm-l6", [], loss, config, None, [], evaluation, clamp="none", seed=2)
    assert isinstance(job, functools.partial) and job.func is reg.recipes.table1_run
    assert job.args == ("minilm-l6", [], loss, config, None, [], "stsb", 32, 5)
    assert job.keywords == {"clamp": "none", "seed": 2}
    assert pickle.loads(pickle.dumps(job)).args == job.args  # what distributed.run sends to its processes


def test_heldout_accuracy_rounds_regression_outputs_and_takes_the_classifiers_argmax():
    heldout = [reg.TrainingPair("a", "b", t) for t in (0.0, 1.0, 2.0, 2.0)]
    assert reg.heldout_accuracy(torch.tensor([0.2, 1.6, 1.6, 0.9]), heldout) == pytest.approx(50.0)
    logits = torch.tensor([[3.0, 0, 0], [0, 3.0, 0], [0, 0, 3.0], [3.0, 0, 0]])
    assert reg.heldout_accuracy(logits, heldout) == pytest.approx(75.0)


def test_heldout_classes_line_shows_where_a_regression_head_lands_beside_the_gold_classes():
    """A regression head pulled towards the middle of the scale reads most pairs of the frequent class 4 as 3:
    below always guessing class 4, although every prediction is within one label of its gold."""
    heldout = [reg.TrainingPair("a", "b", t) for t in (4.0, 4.2, 3.8, 4.4, 1.0)]
    outputs = torch.tensor([3.4, 3.3, 3.6, 4.1, 1.2])
    line = reg.heldout_classes_line(outputs, heldout, reg.STS_TASK)
    assert (
        line == "classes read 0:0% 1:20% 2:0% 3:40% 4:40% 5:0% | gold 0:0% 1:20% 2:0% 3:0% 4:80% 5:0% | accuracy 60.0%"
    )
    assert reg.heldout_accuracy(outputs, heldout, reg.STS_TASK) == pytest.approx(60.0)
    assert reg.class_shares(torch.tensor([0, 2, 2, 2]), 3) == [25.0, 0.0, 75.0]


def test_table1_runs_keep_each_run_and_give_its_metrics_and_line(gold):
    heldout = [reg.TrainingPair("a", "b", t) for t in (0.0, 1.0, 2.0, 2.0)]
    outcome = reg.Table1Run(_predictions(gold, 1.0, 0), _result(), torch.tensor([0.1, 1.2, 1.9, 0.4]))
    runs = reg.Table1Runs(heldout)
    key = ("smollm2-135m-l6", "smooth_k2", 1)
    entry = runs.add(key, outcome, reg.Evaluation("stsb", 120, 0))
    score = evaluate.spearman_scores(outcome.predictions)
    assert entry == {
        "STSBenchmark": score["STSBenchmark"],
        "avg of stsb": score["avg"],  # not the paper's seven-task column
        "best_dev": 70.0,
        "best_step": 15,
        "steps": 30,
        "weight_change": 0.01,
        "heldout_nli_accuracy": pytest.approx(75.0),
    }
    assert runs.trained[key] == claims.Trained(outcome.predictions, 15, 0.01, 70.0, 30, outcome.result)
    assert runs.scores[key] == score and runs.curves[key] == [(0, 60.0), (15, 70.0)]
    assert runs.heldout_outputs[key] is outcome.heldout_outputs
    assert runs.histories[key] == outcome.result.history
    assert runs.labelled_histories() == {"smooth_k2 seed 1": outcome.result.history}
    assert runs.labelled_histories(seed=0) == {}
    line = runs.line(key, outcome, reg.table2_loss("smooth_k2"), 12.4)
    assert line == (
        f"smollm2-135m-l6 seed 1 {'smooth_k2 k=2 x0=0.25':<28} avg {score['avg']:.2f}  best dev 70.00 @ step 15/30 "
        "(largest weight change 1.0e-02)  held-out NLI acc 75.0%  [12 s]"
    )


# ---- Section 4.2: the runs every arm shares, and Table 3's result ---------------------------------------------


def test_section42_runs_both_arms_with_the_shared_settings(monkeypatch):
    calls = {}
    monkeypatch.setattr(two_stage, "two_stage_run", lambda *a, **k: calls.setdefault("ours", []).append((a, k)))
    monkeypatch.setattr(two_stage, "contrast_run", lambda *a, **k: calls.setdefault("contrast", []).append((a, k)))
    s1, s2, held, dev = ["nli"], ["sts"], ["held"], ["dev"]
    c1, c2 = TrainConfig(epochs=5), TrainConfig(epochs=1)
    evaluation = reg.Evaluation("stsb", 10, 0)
    shared = reg.Section42(s1, s2, held, c1, c2, dev, evaluation, clamp="lower", max_length=64, head_lr=1e-3, seed=2)
    official = {stage: reg.LossSpec("smooth_k2", *kx) for stage, kx in reg.STAGE_SETTINGS["Jina v2"].items()}
    swept = reg.LossSpec("smooth_k2", 3.0, 0.2)
    shared.ours("minilm-l6", "Jina v2")
    shared.ours("minilm-l6", "Jina v2", swept)  # Table 5's stage-2 sweep: only stage 2's loss changes
    options = {
        "clamp": "lower",
        "max_length": 64,
        "gradient_checkpointing": False,
        "lr_decay": 0.95,
        "head_lr": 1e-3,
        "seed": 2,
    }
    tail = (c1, c2, dev, evaluation)
    assert calls["ours"] == [
        (("minilm-l6", s1, s2, held, official["stage1"], official["stage2"], *tail), options),
        (("minilm-l6", s1, s2, held, official["stage1"], swept, *tail), options),
    ]
    shared.contrast("minilm-l6", 4.0, 0.07)  # +Contrast: stage 2's pairs and settings, no head, no clamp
    contrast_options = {"threshold": 4.0, "temperature": 0.07, "max_length": 64, "gradient_checkpointing": False}
    assert calls["contrast"] == [(("minilm-l6", s2, c2, dev, evaluation), {**contrast_options, "lr_decay": 0.95})]


def _two_stage(gold, ours_noise=0.5, contrast_step=0):
    ours = reg.TwoStageRun(_predictions(gold, ours_noise, 1, SEVEN), _result(1, 8), _result(20, 40), 61.25)
    contrast = reg.ContrastRun(_predictions(gold, 2.0, 2, SEVEN), _result(contrast_step, 40, 0.0), 12, 8)
    return ours, contrast


SEVEN = tuple(evaluate.STS_TASKS)


def test_table3_result_keeps_what_selection_kept_and_records_it(gold):
    before = _predictions(gold, 4.0, 0, SEVEN)
    ours, contrast = _two_stage(gold)
    result = reg.Table3Result(before, ours, contrast)
    assert result.kept == {
        "+Contrast": claims.Trained(contrast.predictions, 0, 0.0, 70.0, 40, contrast.result),
        "+Ours": claims.Trained(ours.predictions, 20, 0.01, 70.0, 40, ours.stage2),
    }
    assert list(result.predictions) == ["before", "+Contrast", "+Ours"]
    assert result.scores["+Ours"] == evaluate.spearman_scores(ours.predictions)
    assert result.curves == {"+Ours": [(0, 60.0), (20, 70.0)], "+Contrast": [(0, 60.0), (0, 70.0)]}
    evaluation = reg.Evaluation("all", 120, 0)
    entry = result.metrics(evaluation, 24)
    assert entry["+Ours"]["avg"] == result.scores["+Ours"]["avg"]  # the seven tasks: the paper's column
    assert (entry["stage2_pairs"], entry["positives"], entry["stage1_heldout_nli_accuracy"]) == (24, 12, 61.25)
    assert entry["kept (step, weight change)"] == {"+Contrast": (0, 0.0), "+Ours": (20, 0.01)}
    rows = result.comparison(evaluation, "Jina v2", "minilm-l6", "smoke")
    assert len(rows) == 3 * 8  # three arms x (seven tasks + avg)
    assert {r["setting"] for r in rows} == {
        "minilm-l6 before vs Jina v2",
        "minilm-l6 +Contrast vs Jina v2 +Contrast",
        "minilm-l6 +Ours vs Jina v2 +Ours",
    }
    avg_ours = next(r for r in rows if r["setting"].startswith("minilm-l6 +Ours") and r["task"] == "avg")
    assert avg_ours["paper_value"] == reg.REPORTED.value("Table 3", "Jina v2 +Ours")
    assert avg_ours["delta"] == pytest.approx(result.scores["+Ours"]["avg"] - avg_ours["paper_value"])
    assert avg_ours["note"] == f"smoke; ours on {evaluation.scope()}"


def test_the_printed_lines_of_section42(gold):
    ours, contrast = _two_stage(gold)
    shared = reg.Section42(["n"] * 32, ["s"] * 24, [], TrainConfig(), TrainConfig(), None, reg.Evaluation())
    assert shared.ours_line("minilm-l6", ours, 3.2) == (
        "minilm-l6 +Ours: stage 1 32 NLI pairs, 8 steps, held-out NLI accuracy of the head 61.2%; stage 2 24 pairs, "
        "best dev 70.00 @ 20/40  [3 s]"
    )
    assert reg.contrast_line("minilm-l6", contrast, 4.0, 9.6) == (
        "minilm-l6 +Contrast: 12 positive pairs (>= 4), batch 8, best dev 70.00 @ 0/40  [10 s]"
    )
    avg = evaluate.spearman_scores(ours.predictions)["avg"]
    assert reg.stage2_sweep_line("minilm-l6", reg.LossSpec("smooth_k2", 3.0, 0.2), ours, 5.0) == (
        f"minilm-l6 stage 2 {'smooth_k2 k=3 x0=0.2':<26} avg {avg:.2f}  kept step 20/40  [5 s]"
    )


# ---- Table 4 (Section 4.3): ratios and the sanity check ------------------------------------------------------


def _memory_row(method, batch=16, length=128, baseline=500.0, training=100.0):
    run = memory.MemoryRun(method, "minilm-l6", batch, length, 1)
    report = memory.MemoryReport(run, "cpu", "peak RSS", int(baseline * 2**20), int((baseline + training) * 2**20), 4)
    return report.row()


def test_infonce_ratio_is_stored_in_its_row_and_printed():
    rows = [_memory_row("regression", training=100.0), _memory_row("infonce", training=250.0)]
    lines = memory.infonce_ratios(rows)
    assert rows[1]["ratio_added_vs_ours"] == pytest.approx(2.5) and "ratio_added_vs_ours" not in rows[0]
    assert lines == ["InfoNCE (batch 16, length 128) / ours (batch 16, length 128): 2.50x the memory added by training"]
    assert memory.infonce_ratios([_memory_row("infonce")]) == []  # no regression run to divide by


def test_paper_ratios_are_read_from_table4():
    lines = memory.paper_ratios()
    simcse = reg.REPORTED.value("Table 4", "BERT SimCSE len 100", "peak_memory_gb")
    ours = reg.REPORTED.value("Table 4", "BERT Ours len 256", "peak_memory_gb")
    assert len(lines) == 2 and lines[0] == (
        f"paper, BERT: SimCSE {simcse:.2f} GB / ours {ours:.2f} GB = {simcse / ours:.2f}x"
    )
    assert lines[1].startswith("paper, RoBERTa: SimCSE ")


def test_sanity_check_compares_the_same_batch_and_length_only():
    ours = _memory_row("regression", training=100.0)
    passed = memory.sanity_checks([ours, _memory_row("infonce", training=180.0)])
    assert passed == (
        {memory.SANITY_CHECK: "passed"},
        "sanity check, same batch and length: passed (180 vs 100 MiB added)",
    )
    failed = memory.sanity_checks([ours, _memory_row("infonce", training=80.0)])
    assert failed[0] == {memory.SANITY_CHECK: "failed"} and "FAILED" in failed[1]
    # SimCSE's own setting (batch 512, length 100) is the paper's comparison, not this check
    assert memory.sanity_checks([ours, _memory_row("infonce", batch=512, length=100)]) == ({}, None)
    assert memory.sanity_checks([]) == ({}, None)


def test_memory_report_line():
    run = memory.MemoryRun("regression", "minilm-l6", 2, 16, 1)
    report = memory.MemoryReport(run, "cpu", "peak RSS", 500 * 2**20, 640 * 2**20, 4)
    assert report.line(7.4) == (
        "regression batch    2 length   16:    4 sequences/step, peak RSS      640 MiB "
        "(added by training    140 MiB)  [7 s]"
    )


# ---- Tables 5 and 6 on the raw backbone (Sections 4.4-4.5) ------------------------------------------------------


@pytest.fixture(scope="module")
def sweep(gold):
    """A plan with one extra Smooth K2 (k, x0) and the |u-v| head, its runs on seed 0 (real STS-B gold)."""
    row = "BERT-base"
    plan = reg.nli_sweep_plan(row, list(reg.LOSSES), [["smooth_k2", 3.0, 0.25]], ["|u-v|"])
    runs = {(v.label(), 0): claims.Trained.of(_predictions(gold, 0.5 + i, i), fit_result()) for i, v in enumerate(plan)}
    return row, plan, runs, _predictions(gold, 6.0, 99)


def test_sweep_comparison_puts_each_run_beside_its_table5_and_table6_rows(sweep):
    row, plan, runs, _ = sweep
    rows = sweeps.sweep_comparison(plan, runs, 0, reg.Evaluation("stsb", 120, 0), row, "raw", "cpu")
    # the paper reports Tables 5 and 6 as averages only: an average of one task is not compared with it
    assert rows == []
    rows = sweeps.sweep_comparison(plan, runs, 0, reg.Evaluation("all", 120, 0), row, "raw", "cpu")
    assert [(r["table"], r["setting"]) for r in rows] == [
        ("Table 5", "raw translated_relu k=2.5 x0=0.25 vs BERT-base translated_relu k=2.5 x0=0.25"),
        ("Table 5", "raw smooth_k2 k=2 x0=0.25 vs BERT-base smooth_k2 k=2 x0=0.25"),
        ("Table 6", "raw smooth_k2 k=2 x0=0.25 vs BERT-base (u,v,|u-v|)"),  # Table 2's Smooth K2 is both rows
        ("Table 5", "raw smooth_k2 k=3 x0=0.25 vs BERT-base smooth_k2 k=3 x0=0.25"),
        ("Table 6", "raw smooth_k2 k=2 x0=0.25 head |u-v| vs BERT-base |u-v|"),
    ]
    last = evaluate.spearman_scores(runs[(plan[-1].label(), 0)].predictions)["avg"]
    assert rows[-1]["task"] == "avg" and rows[-1]["ours"] == pytest.approx(last)
    assert rows[-1]["paper_value"] == reg.REPORTED.value("Table 6", "BERT-base |u-v|")


def test_a_table1_run_alone_in_its_table_is_not_printed_again_under_tables_5_and_6(sweep):
    row, plan, runs, _ = sweep
    evaluation = reg.Evaluation("all", 120, 0)
    rows = sweeps.sweep_comparison(plan, runs, 0, evaluation, row, "raw", "cpu", table1_losses=list(reg.LOSSES))
    # Translated ReLU's Table 2 run has no other (k, x0) beside it: its row is Table 1's, not repeated
    assert [(r["table"], r["setting"].split(" vs ")[0]) for r in rows] == [
        ("Table 5", "raw smooth_k2 k=2 x0=0.25"),
        ("Table 6", "raw smooth_k2 k=2 x0=0.25"),
        ("Table 5", "raw smooth_k2 k=3 x0=0.25"),
        ("Table 6", "raw smooth_k2 k=2 x0=0.25 head |u-v|"),
    ]
    assert rows[0]["note"].startswith("cpu; the Table 1 run") and "Table 1" not in rows[2]["note"]
    alone = reg.nli_sweep_plan(row, ["smooth_k2"], [], [])  # the class profile: Table 1's Smooth K2 and nothing else
    alone_runs = {(v.label(), 0): runs[(v.label(), 0)] for v in alone}
    assert sweeps.sweep_comparison(alone, alone_runs, 0, evaluation, row, "raw", "class", ["smooth_k2"]) == []
    assert reg.scope_line(row, ["smooth_k2"], [], []).startswith("This run trains no Table 5 or Table 6 run")
    assert reg.scope_line(row, ["smooth_k2"], [["smooth_k2", 3.0, 0.25]], ["|u-v|"]) == (
        "Beyond Table 1's runs, this section trains 2 setting(s) per seed: smooth_k2 k=3 x0=0.25; "
        "smooth_k2 k=2 x0=0.25 head |u-v|."
    )


def test_plan_line_says_which_arms_train_and_what_the_main_claim_compares():
    class_line = reg.plan_line(reg.STS_TASK, "rounded", ["smooth_k2"], [0], [0])
    assert class_line.startswith("This run's Table 1 (1 run): smooth_k2 on seed 0; it trains no cross entropy")
    assert "the main claim is not run" in class_line
    cpu_line = reg.plan_line(reg.STS_TASK, "rounded", list(reg.LOSSES), [0], [0, 1, 2])
    assert cpu_line.startswith("This run's Table 1 (10 runs): cross_entropy, l1, translated_relu, mse, smooth_k2, ")
    assert "smooth_k2_rounded on seed 0; cross_entropy, smooth_k2_rounded on seeds 1, 2;" in cpu_line
    assert cpu_line.endswith("the main claim compares smooth_k2_rounded with cross_entropy on the same rounded labels.")
    class_line = reg.plan_line(reg.STS_ROUNDED_TASK, "rounded", ["cross_entropy", "smooth_k2"], [0], [0])
    assert class_line.endswith("the main claim compares smooth_k2 with cross_entropy on the same labels.")
    assert "confounded" in reg.plan_line(reg.STS_TASK, "continuous", list(reg.LOSSES), [0], [0])
    assert "no regression loss" in reg.plan_line(reg.NLI_TASK, "rounded", ["cross_entropy"], [0], [0])


def test_the_baseline_cell_says_why_it_has_nothing_to_check():
    from stsnb.papers.sts_regression import probe

    assert "its Table 1 trains smooth_k2" in probe.no_main_claim_note(["smooth_k2"])


def test_sweep_claims_equal_the_claims_built_by_hand(sweep):
    row, plan, runs, before = sweep
    dev = {"n_resamples": 200}
    table5 = sweeps.sweep_table5_claims(plan, runs, [0], row, before, margin=1.0, **dev)
    reference = reg.table2_loss("smooth_k2", row).label()
    smooth = [v for v in plan if "Table 5" in v.tables(row) and v.loss.name == "smooth_k2"]
    by_hand = sweep_claims.table5_claims(
        {(v.loss.label(), 0): runs[(v.label(), 0)] for v in smooth},
        reference,
        row,
        before,
        margin=1.0,
        **dev,
    )
    assert table5 == by_hand and len(table5) == 1  # Translated ReLU has only Table 2's setting: no claim
    assert table5[0]["test"] == "equivalence" and table5[0]["b"] == reference
    table6 = sweeps.sweep_table6_claims(plan, runs, [0], row, before, **dev)
    assert [(r["a"], r["b"]) for r in table6] == [("(u,v,|u-v|)", "|u-v|")]
    heads = {(v.concatenation, 0): runs[(v.label(), 0)] for v in plan if "Table 6" in v.tables(row)}
    assert table6 == sweep_claims.table6_claims(heads, before, row, **dev)
    assert sweeps.sweep_table5_claims(plan[:2], runs, [0], row, before, **dev) == []  # Table 2's settings only


def test_table5_claim_names_where_it_was_run(sweep):
    row, plan, runs, before = sweep
    two = {(label, 0): runs[(label, 0)] for label in [plan[1].label(), plan[2].label()]}
    dev = {"n_resamples": 100}
    plain = sweep_claims.table5_claims(two, plan[1].label(), row, before, **dev)
    placed = sweep_claims.table5_claims(two, plan[1].label(), row, before, where="stage 2, minilm-l6", **dev)
    assert placed[0]["claim"] == plain[0]["claim"] + " (stage 2, minilm-l6)"
    assert {k: v for k, v in placed[0].items() if k != "claim"} == {k: v for k, v in plain[0].items() if k != "claim"}


# ---- the figures: bars from zero, no text over other text, nothing under 9 pt, empty tables said in words --------


def _claim(a: str, b: str, difference: float, paper: float | None, verdict="unresolved", seeds=1, **extra) -> dict:
    return {
        "a": a,
        "b": b,
        "difference": difference,
        "low": difference - 0.8,
        "high": difference + 0.8,
        "paper_difference": paper,
        "verdict": verdict,
        "seeds": seeds,
        **extra,
    }


@pytest.fixture(scope="module")
def table1_inputs():
    losses = list(reg.LOSSES)
    scores = {
        ("smollm2-135m-l6", n, s): {"avg": 54.3 + 0.3 * i + 0.1 * s} for i, n in enumerate(losses) for s in (0, 1)
    }
    scores[("smollm2-135m-l6", "smooth_k2", 2)] = {"avg": 56.0}  # the main claim's extra seed
    untrained = {"smollm2-135m-l6": {"avg": 55.24}}
    rows = [
        _claim(c.a, c.b, -0.4 + i, claims.paper_difference("Table 1", "BERT-base", c.a, c.b), seeds=1 + (i == 0))
        for i, c in enumerate(claims.TABLE1_CLAIMS)
    ]
    return scores, untrained, rows, losses


def test_table1_figure_draws_points_not_bars_and_no_text_collides(table1_inputs):
    scores, untrained, rows, losses = table1_inputs
    fig = figures.table1(scores, untrained, rows, losses, "avg", "all, the same 300 pairs per task")
    panels = {ax.get_title().split(":")[0]: ax for ax in fig.axes}
    levels = panels["Ours"]
    assert not levels.patches and levels.get_xlabel() == figures.TABLE1_NOTE  # points, and the figure says why
    runs = [list(line.get_ydata()) for line in levels.get_lines() if line.get_label() == "runs"]
    expected = [[v["avg"] for (_, n, _), v in scores.items() if n == name] for name in losses]
    assert runs == expected  # every run of every arm, the main claim's extra seed too
    means = [float(t.get_text()) for t in levels.texts]
    assert means == [round(float(np.mean(v)), 2) for v in expected]  # each mean labelled
    untrained_line = next(line for line in levels.get_lines() if line.get_label() == "untrained")
    assert list(untrained_line.get_ydata()) == [55.24, 55.24]
    low, high = levels.get_ylim()
    assert 0 < low < min(min(v) for v in expected) and high > max(max(v) for v in expected)  # the axis spans the points
    forest = panels["Table 1 claims"]
    assert [t.get_text().split("\n")[0] for t in forest.get_yticklabels()] == [f"{r['a']} - {r['b']}" for r in rows]
    assert forest.get_yticklabels()[0].get_text().endswith("unresolved (2 seeds)")
    assert plots.figure_problems(fig) == []


def test_table1_figure_without_claims_has_no_claims_panel(table1_inputs):
    scores, untrained, _, losses = table1_inputs
    fig = figures.table1(scores, untrained, [], losses, "avg of stsb", "stsb, the same 32 pairs per task")
    assert len(fig.axes) == 1 and plots.figure_problems(fig) == []
    one = figures.table1({("smollm2-135m-l6", "smooth_k2", 0): {"avg": 57.1}}, untrained, [], ["smooth_k2"], "avg", "x")
    assert len(fig.axes) == 1 and plots.figure_problems(one) == []  # the class profile: one run


def test_a_forest_of_one_claim_is_one_row_high_and_shows_the_margin():
    row = _claim(
        "smooth_k2 k=3 x0=0.25", "smooth_k2 k=2 x0=0.25", 0.1, -0.3, "equivalent", test="equivalence", margin=1.0
    )
    fig, nothing = figures.table5_table6([row], [], "avg")
    assert nothing == [figures_reason("Table 6")]
    (ax,) = fig.axes
    assert ax.get_ylim() == (0.5, -0.5)  # one row, centred (not squeezed between two offsets)
    shaded = [p for p in ax.patches if p.get_label().startswith("equivalence margin")]
    assert len(shaded) == 1 and shaded[0].get_x() == pytest.approx(-1.0)
    assert plots.figure_problems(fig) == []


def test_a_forest_of_two_backbones_names_each_rows_backbone():
    rows = [
        _claim("(u,v,|u-v|)", "(u,v)", 0.4 + i, 22.7, backbone=b)
        for i, b in enumerate(["bert-base-uncased", "roberta-base"])
    ]
    fig, _ = figures.table5_table6([], rows, "avg")
    (ax,) = fig.axes
    labels = [t.get_text().split("\n")[0] for t in ax.get_yticklabels()]
    assert labels == ["bert-base-uncased: (u,v,|u-v|) vs (u,v)", "roberta-base: (u,v,|u-v|) vs (u,v)"]
    assert plots.figure_problems(fig) == []


def figures_reason(table: str) -> str:
    return next(m for m in figures.table5_table6([], [], "avg")[1] if m.startswith(table))


def test_tables_5_and_6_with_nothing_to_draw_say_why_instead_of_an_empty_figure():
    fig, nothing = figures.table5_table6([], [], "avg")
    assert fig is None
    assert [m.split(":")[0] for m in nothing] == ["Table 5", "Table 6"]
    assert "`sweep`" in nothing[0] and "`ablation_concatenations`" in nothing[1]
    head = _claim("(u,v,|u-v|)", "(u,v)", -0.5, 22.7, "not tested")
    fig, nothing = figures.table5_table6([], [head], "avg")
    assert [ax.get_title().split(":")[0] for ax in fig.axes] == ["Table 6"] and len(nothing) == 1


def _table3_inputs(backbones):
    """Synthetic Table 3 results: the arms a few points apart near 80, where bars from zero would hide them."""
    tasks = [*SEVEN, "avg"]
    scores = {
        b: {
            arm: {t: 76.0 + i + 1.5 * j + 0.3 * k for k, t in enumerate(tasks)}
            for j, arm in enumerate(figures.TABLE3_ARMS)
        }
        for i, b in enumerate(backbones)
    }
    curves = {
        b: {"+Ours": [(0, 80.0 + i), (20, 82.5 + i)], "+Contrast": [(0, 80.0 + i), (20, 81.0 + i)]}
        for i, b in enumerate(backbones)
    }
    return scores, curves, {b: 80.0 + i for i, b in enumerate(backbones)}


@pytest.mark.parametrize(
    "backbones", [["minilm-l6"], ["jinaai/jina-embeddings-v2-base-en", "nomic-ai/nomic-embed-text-v1"]]
)
def test_table3_figure_draws_points_not_bars_and_no_text_collides(backbones):
    scores, curves, before_dev = _table3_inputs(backbones)
    fig = figures.table3(scores, curves, before_dev, "all, the same 300 pairs per task")
    left, right = fig.axes
    assert not left.patches  # points, not bars cut off above zero
    assert left.get_xlabel() == figures.TABLE3_NOTE  # the figure says why its axis does not start at 0
    drawn = {line.get_label(): list(line.get_ydata()) for line in left.get_lines()}
    prefix = (lambda b: f"{b} ") if len(backbones) > 1 else (lambda b: "")
    assert drawn == {prefix(b) + arm: list(scores[b][arm].values()) for b in backbones for arm in figures.TABLE3_ARMS}
    low, high = left.get_ylim()
    assert 0 < low < min(min(v) for v in drawn.values()) and high > max(max(v) for v in drawn.values())
    assert [t.get_text() for t in left.get_xticklabels()][-3:] == ["STS-B", "SICK-R", "avg"]
    assert all(float(t) == int(t) for t in left.get_yticks())  # ticks at whole points
    labels = [line.get_label() for line in right.get_lines()]
    assert labels == [f"{prefix(b)}{arm}" for b in backbones for arm in ("+Ours", "+Contrast", "before")]
    assert plots.figure_problems(fig) == []


def test_table4_memory_stacks_what_training_added_on_the_loaded_model():
    rows = [_memory_row("regression", training=100.0), _memory_row("infonce", baseline=510.0, training=250.0)]
    fig = figures.table4_memory(rows, "minilm-l6")
    (ax,) = fig.axes
    bottoms = [(round(p.get_y(), 3), round(p.get_height(), 3)) for p in ax.patches]
    assert bottoms == [(0.0, 500.0), (0.0, 510.0), (500.0, 100.0), (510.0, 250.0)]
    assert ax.get_ylim() == (0.0, pytest.approx(1.3 * 760.0))


def test_table1_figure_of_two_backbones_groups_their_points(table1_inputs):
    scores, untrained, rows, losses = table1_inputs
    both = {**scores, **{("roberta-base", n, s): {"avg": 60.0 + i} for i, n in enumerate(losses) for s in (0,)}}
    two = {**untrained, "roberta-base": {"avg": 58.0}}
    fig = figures.table1(both, two, rows, losses, "avg", "all, every test pair")
    levels = next(ax for ax in fig.axes if ax.get_title().startswith("Ours"))
    labels = [t.get_text() for t in levels.get_legend().get_texts()]
    assert labels == [f"{b} {what}" for b in two for what in ("untrained", "runs", "mean of the runs")]
    assert len(levels.texts) == 2 * len(losses)  # each backbone's mean of each loss, labelled
    assert plots.figure_problems(fig) == []


def test_the_overlap_check_sees_the_old_table1_defects():
    """The check itself: three narrow panels with long titles (the old Table 1 figure) collide."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(8, 3))
    for ax in axes:
        ax.set_title("STS-B dev Spearman during NLI fine-tuning (seed 0; step 0: untrained)")
    assert any(" overlaps " in problem for problem in plots.figure_problems(fig))
    plt.close(fig)
