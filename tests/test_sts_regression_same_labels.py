"""Table 1's main claim on the same labels: on the STS analogue regression learns the gold score and cross entropy
its 6 rounded classes, so the main claim trains Smooth K2 on those very class ids (``sts_rounded``). Its targets are
cross entropy's classes, pair for pair; the isolated claim quotes the paper and is gated on its two arms' dev gates;
the continuous comparison is a check flagged as confounded; the arm plan and its cost; the probe defined (not
run); notebook 20's parameter. Predictions use real STS-B gold scores."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest
import torch
from synthetic_seeds import fit_result

from stsnb import data
from stsnb.evaluation import claims as generic
from stsnb.evaluation import evaluate
from stsnb.papers import sts_regression as reg
from stsnb.papers.sts_regression import claims, conclusions, probe, recipes, table1
from stsnb.runs import plans, probe_tables

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "20_sts_regression.ipynb"
LOSSES = list(reg.LOSSES)


@pytest.fixture(scope="module")
def filtered(data_dir):
    return reg.filtered_sts_train("raw").pairs


@pytest.fixture(scope="module")
def gold(data_dir):
    return np.array([p.score for p in data.sample(list(data.load_stsb("test")), 150, 0)])


def _predictions(gold: np.ndarray, noise: float, seed: int) -> evaluate.TaskPredictions:
    rng = np.random.default_rng(seed)
    return {"STSBenchmark": (gold, gold + rng.normal(0, noise, len(gold)))}


def _run(predictions, step: int = 10, change: float | None = 0.01) -> claims.Trained:
    """A run that trained on dev (its dev error shrank well past the noise bound) unless it kept step 0."""
    moved = "trained" if step else "stayed"
    return claims.Trained.of(predictions, fit_result(moved, step=step, change=change, dev=70.0 if step else 60.0))


# ---- the task: regression on cross entropy's class ids ------------------------------------------------------


def test_the_rounded_tasks_targets_are_cross_entropys_class_ids_pair_for_pair(filtered):
    pairs = filtered[:600]
    rounded = reg.STS_ROUNDED_TASK.training_pairs(pairs)
    assert [(p.sent1, p.sent2) for p in rounded] == [(p.sent1, p.sent2) for p in pairs]  # same pairs, same order
    targets = torch.tensor([p.target for p in pairs])
    ce_classes = targets.round().long()  # what LossSpec("cross_entropy") makes of the targets it is given
    assert [p.target for p in rounded] == [float(c) for c in ce_classes.tolist()]
    assert torch.equal(reg.STS_TASK.class_ids(targets), ce_classes)
    assert {p.target for p in rounded} <= {0.0, 1.0, 2.0, 3.0, 4.0, 5.0}
    assert any(p.target != int(p.target) for p in pairs)  # the score was finer than the classes
    # cross entropy learns the same from either task: its loss is the same on both targets
    logits = torch.randn(len(pairs), 6, generator=torch.Generator().manual_seed(0))
    ce = reg.LossSpec("cross_entropy")
    assert torch.equal(ce(logits, targets), ce(logits, torch.tensor([p.target for p in rounded])))
    assert reg.STS_TASK.training_pairs(pairs) == pairs  # the score task and NLI keep their targets
    assert reg.NLI_TASK.training_pairs(pairs[:3]) == pairs[:3]


def test_which_tasks_give_both_objectives_the_same_labels():
    assert (reg.NLI_TASK.same_labels, reg.STS_TASK.same_labels, reg.STS_ROUNDED_TASK.same_labels) == (True, False, True)
    assert reg.same_labels_task(reg.STS_TASK) is reg.STS_ROUNDED_TASK
    assert reg.same_labels_task(reg.NLI_TASK) is reg.NLI_TASK
    rounded = reg.table1_task("sts_rounded")
    assert (rounded.classes, rounded.label_range) == (reg.STS_TASK.classes, reg.STS_TASK.label_range)


def test_fine_tune_table1_trains_on_the_tasks_targets(monkeypatch, minilm):
    seen = {}
    monkeypatch.setattr(recipes, "load_backbone", lambda *a, **k: minilm)
    monkeypatch.setattr(recipes, "train_siamese", lambda model, pairs, *a, **k: seen.setdefault("pairs", pairs))
    pairs = [reg.TrainingPair("a", "b", 3.6), reg.TrainingPair("c", "d", 1.25)]
    loss = reg.table2_loss("smooth_k2")
    recipes.fine_tune_table1("minilm-l6", pairs, loss, None, dev_pairs=None, task=reg.STS_ROUNDED_TASK)
    assert [p.target for p in seen.pop("pairs")] == [4.0, 1.0]
    recipes.fine_tune_table1("minilm-l6", pairs, loss, None, dev_pairs=None, task=reg.STS_TASK)
    assert [p.target for p in seen["pairs"]] == [3.6, 1.25]


# ---- the arms: which trains where, and what it costs ----------------------------------------------------------


def test_the_rounded_arm_trains_on_every_seed_and_smooth_k2_on_the_score_on_seeds_only():
    rounded = claims.ROUNDED_K2
    assert reg.arms_on_seed(LOSSES, 0, [0], isolated=True) == [*LOSSES, rounded]
    assert reg.arms_on_seed(LOSSES, 1, [0], isolated=True) == ["cross_entropy", rounded]
    assert reg.arms_on_seed(LOSSES, 1, [0], isolated=False) == ["cross_entropy", "smooth_k2"]  # the old design
    assert (reg.arm_loss(rounded, "BERT-base"), reg.arm_task(rounded, reg.STS_TASK)) == (
        reg.table2_loss("smooth_k2", "BERT-base"),
        reg.STS_ROUNDED_TASK,
    )
    assert reg.arm_task("smooth_k2", reg.STS_TASK) is reg.STS_TASK
    assert reg.arm_label(rounded, "BERT-base") == "smooth_k2 k=2 x0=0.25 on rounded labels"
    # one run more than the confounded design on the cpu profile's seeds: 10 against 9
    assert table1.runs_per_backbone(LOSSES, [0], [0, 1, 2], True) == 10
    assert table1.runs_per_backbone(LOSSES, [0], [0, 1, 2], False) == 9


def test_only_the_sts_analogue_with_rounded_main_claim_targets_adds_the_arm():
    assert reg.isolates(reg.STS_TASK, "rounded", LOSSES)
    assert not reg.isolates(reg.STS_TASK, "continuous", LOSSES)
    assert not reg.isolates(reg.NLI_TASK, "rounded", LOSSES)  # NLI: both learn the same three labels already
    assert not reg.isolates(reg.STS_ROUNDED_TASK, "rounded", LOSSES)
    assert not reg.isolates(reg.STS_TASK, "rounded", ["l1", "mse"])  # no main-claim pair to isolate
    with pytest.raises(ValueError, match="main_claim_targets must be one of"):
        reg.isolates(reg.STS_TASK, "rounding", LOSSES)


def test_the_labels_note_reports_this_runs_cost_and_the_designs_it_did_not_choose():
    note = reg.main_claim_labels_note(LOSSES, [0], [0, 1, 2], reg.STS_TASK, "rounded", 1500.0, 10)
    assert "10 Table 1 runs per backbone against 9" in note and "+1 run(s), about 150 s" in note
    assert '`table1_task = "sts_rounded"`' in note and "drop the confounded comparison" in note
    assert "**not tested**" in reg.main_claim_labels_note(LOSSES, [0], [0, 1, 2], reg.STS_TASK, "continuous", 1.0, 9)
    assert "no extra arm" in reg.main_claim_labels_note(LOSSES, [0], [0, 1, 2], reg.NLI_TASK, "rounded", 1.0, 9)


def test_the_cost_estimate_counts_the_rounded_arm():
    from stsnb.papers.sts_regression.costs import fit_plan

    params = {"backbones": ["smollm2-135m-l6"], "table1_losses": LOSSES, "seeds": [0], "main_claim_seeds": [0, 1, 2]}
    params |= {"table1_pairs": 32, "heldout_pairs": 8, "eval_max_pairs": 10, "dev_pairs": 10}
    designs = {
        "the STS analogue, main claim on rounded labels (the cpu default)": ({}, 10),
        "the main claim on the score (confounded)": ({"main_claim_targets": "continuous"}, 9),
        "NLI (the same labels already)": ({"table1_task": "nli"}, 9),
        "every loss on rounded labels": ({"table1_task": "sts_rounded"}, 9),
    }
    for what, (changed, runs) in designs.items():
        count = next(r.count for r in fit_plan({**params, **changed}) if r.label == "Table 1")
        assert count == runs, what


# ---- the claims: the isolated main claim, the confounded check-----------------------------------------------


@pytest.fixture(scope="module")
def rounded_runs(gold):
    """Cross entropy trained on dev; Smooth K2 on the rounded labels beats it; Smooth K2 on the score and MSE ran
    on seed 0 only; three seeds for the main claim's arms."""
    runs = {}
    for s in (0, 1, 2):
        runs[("cross_entropy", s)] = _run(_predictions(gold, 1.0, 10 + s))
        runs[(claims.ROUNDED_K2, s)] = _run(_predictions(gold, 0.3, 20 + s))
    runs[("smooth_k2", 0)] = _run(_predictions(gold, 0.2, 30))
    runs[("mse", 0)] = _run(_predictions(gold, 1.0, 31))
    return runs


def test_the_isolated_claim_is_the_papers_main_claim_with_its_quote_and_its_own_gates(rounded_runs, gold):
    before = _predictions(gold, 8.0, 9)
    dev = {}
    rows = claims.table1_claims(rounded_runs, before, "BERT-base", n_resamples=200, task=reg.STS_TASK, **dev)
    by_arms = {(r["a"], r["b"]): r for r in rows}
    isolated = by_arms[(claims.ROUNDED_K2, "cross_entropy")]
    assert rows[0] is isolated and isolated["main_claim"] and isolated["kind"] == "paper"
    assert isolated["paper_quote"] == reg.quotes.TABLE1_K2 and isolated["mechanism_quote"] == reg.quotes.MECHANISM
    assert isolated["labels"] == claims.SAME_LABELS and "same rounded labels" in isolated["claim"]
    assert isolated["seeds"] == 3 and isolated["verdict"] == "supported"
    assert isolated["paper_difference"] == pytest.approx(76.03 - 73.01)  # Table 1's Smooth K2 minus cross entropy
    assert [p["name"] for p in isolated["preconditions"]] == [
        f"{claims.ROUNDED_K2} trained on dev",
        "cross_entropy trained on dev",
        "every arm trained on dev on the same seeds (at least 2)",
    ]
    confounded = by_arms[("smooth_k2", "cross_entropy")]
    assert confounded["kind"] == "check" and not confounded["main_claim"] and confounded["seeds"] == 1
    assert confounded["confounded_with"] == claims.CONFOUND and "label resolution" in confounded["claim"]
    assert confounded["paper_quote"] == reg.quotes.NLI_LABELS and "smallest_effect" not in confounded
    assert conclusions.main_claim_row(rows) is isolated
    assert generic.split_by_kind(rows)[1] == [confounded]
    assert by_arms[("smooth_k2", "mse")]["kind"] == "paper" and not by_arms[("smooth_k2", "mse")]["main_claim"]


def test_an_isolated_arm_that_did_not_train_on_one_seed_leaves_that_seed_out(rounded_runs, gold):
    runs = dict(rounded_runs)
    runs[(claims.ROUNDED_K2, 1)] = _run(runs[(claims.ROUNDED_K2, 1)].predictions, step=0)
    before, dev = _predictions(gold, 8.0, 9), {}
    rows = claims.table1_claims(runs, before, "BERT-base", n_resamples=100, task=reg.STS_TASK, **dev)
    isolated = conclusions.main_claim_row(rows)
    assert isolated["a"] == claims.ROUNDED_K2 and isolated["verdict"] == "supported"
    assert generic.seeds_text(isolated) == "2 of 3 seeds" and list(isolated["seeds_left_out"]) == ["seed 1"]
    assert f"{claims.ROUNDED_K2}: selected step 0 of 20" in isolated["seeds_left_out"]["seed 1"]
    # the rounded arm gates no other claim: Smooth K2 on the score against MSE stands on its own two arms
    other = next(r for r in rows if (r["a"], r["b"]) == ("smooth_k2", "mse"))
    assert all(claims.ROUNDED_K2 not in p["name"] for p in other["preconditions"])


def test_without_the_rounded_arm_the_continuous_comparison_is_a_check_and_the_main_claim_is_not_run(gold):
    runs = {("cross_entropy", 0): _run(_predictions(gold, 1.0, 1)), ("smooth_k2", 0): _run(_predictions(gold, 0.3, 2))}
    before, dev = _predictions(gold, 8.0, 9), {}
    (row,) = claims.table1_claims(runs, before, "BERT-base", n_resamples=100, task=reg.STS_TASK, **dev)
    assert (row["kind"], row["main_claim"], row["confounded_with"]) == ("check", False, claims.CONFOUND)
    text = conclusions.takeaway([row])
    assert text.startswith("The paper's main claim") and "not run in this profile" in text
    assert "label resolution" in text
    # on NLI both objectives learn the same three labels: the same runs are the paper's main claim
    (nli,) = claims.table1_claims(runs, before, "BERT-base", n_resamples=100, task=reg.NLI_TASK, **dev)
    assert (nli["kind"], nli["main_claim"], nli["paper_quote"]) == ("paper", True, reg.quotes.TABLE1_K2)
    assert "confounded_with" not in nli


# ---- the probe: defined, not run --------------------------------------------------------------------------------


def _bench():
    spec = importlib.util.spec_from_file_location("bench_moves", REPO / "benchmarks" / "bench_sts_regression_moves.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rounded_probe_builds_a_command_the_benchmark_parses():
    spec = probe.ROUNDED_PROBE
    assert spec.seeds == (0, 1, 2) and spec.name == "bench_sts_regression_moves_rounded"
    (setting,) = spec.settings
    # the cpu profile's Table 1 setting (notebook 20's parameters), on the rounded task, with Smooth K2
    assert (setting.task, setting.loss, setting.lr, setting.pairs, setting.batch_size, setting.max_length) == (
        "sts_rounded",
        "smooth_k2",
        2e-4,
        2880,
        16,
        64,
    )
    assert reg.table1_task(setting.task).targets == "rounded"
    command = shlex.split(probe.probe_command(spec))
    assert command[:3] == ["STSNB_DATA_DIR=../shared/data", "python", "benchmarks/bench_sts_regression_moves.py"]
    bench = _bench()
    args = bench.build_parser().parse_args(command[3:])
    assert args.seeds == [0, 1, 2] and args.seed == 0 and args.dev_pairs == 500
    assert [bench.parse_setting(s) for s in args.setting] == [setting]
    assert args.json == "benchmarks/results/bench_sts_regression_moves_rounded.json"


def test_the_probe_says_it_is_not_yet_run_until_its_rows_are_committed(tmp_path):
    text = probe.spec_text(probe.ROUNDED_PROBE, tmp_path)
    assert "defined, not yet run" in text and probe.probe_command(probe.ROUNDED_PROBE, None) in text
    assert "shared/" not in text  # printed in the notebook: no path of our workplace
    row = {
        "setting": probe.ROUNDED_PROBE.settings[0].label(),
        "dev_before": 68.0,
        "dev_after": 70.0,
        "difference": 2.0,
        "low": 1.0,
        "high": 3.0,
        "verdict": "supported",
        "loss_first": 1.0,
        "loss_last": 0.5,
        "steps": 180,
        "seconds": 110.0,
        "seed": 1,
    }
    (tmp_path / f"{probe.ROUNDED_PROBE.name}.json").write_text(json.dumps([row]))
    assert probe.spec_text(probe.ROUNDED_PROBE, tmp_path).endswith(probe_tables.row_line(row))


# ---- notebook 20 and the quotes -----------------------------------------------------------------------------------


def test_the_notebooks_parameters_cell_documents_main_claim_targets():
    import nbformat

    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    parameters = next(c.source for c in cells if "parameters" in c.metadata.get("tags", []))
    line = next(x for x in parameters.splitlines() if x.startswith("main_claim_targets = "))
    assert line.startswith('main_claim_targets = "rounded"  # ')
    assert '"rounded"' in line.split("#", 1)[1] and '"continuous"' in line
    prose = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    assert "`main_claim_targets" in prose and "confounded" in prose and "same labels" in prose
    assert "main_claim_targets" in plans.assigned_parameters(NOTEBOOK)
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert "reg.isolates(task, main_claim_targets, table1_losses)" in code and "task=task" in code


def test_every_notebook_20_quote_is_printed_in_the_paper():
    path = Path("/work/shared/papers/sts-regression.md")
    if not path.is_file():
        pytest.skip(f"the paper's text {path} is not on this machine")
    text = " ".join(path.read_text().split())
    for name, value in vars(reg.quotes).items():
        if not (name.isupper() and isinstance(value, str)):
            continue
        where, sentence = re.fullmatch(r'([^:]+): "(.*)"', value).groups()
        if name == "SETTING":  # the text file breaks this sentence around Table 1: both halves are printed
            head, tail = sentence.split(" BERT ", 1)
            assert f"{head} BERT" in text and tail in text, where
            continue
        assert sentence in text, f"{where}: not printed as quoted: {sentence[:60]}"


def test_a_head_no_better_than_guessing_the_most_common_class_is_said_to_be():
    """Class 20's held-out accuracy (31%) sat below always guessing the most common class (36%): the line says so."""
    from stsnb.papers.sts_regression import tasks
    from stsnb.papers.sts_regression.training_data import TrainingPair

    heldout = [TrainingPair("a", "b", target) for target in (0.0, 1.0, 1.0, 2.0, 5.0)]  # 40% in class 1
    assert tasks.majority_accuracy(heldout, reg.STS_TASK) == pytest.approx(40.0)
    assert tasks.accuracy_text(31.0, 36.0, reg.STS_TASK) == (
        "held-out STS acc 31.0% (not above always guessing the most common class, 36.0%)"
    )
    assert tasks.accuracy_text(45.0, 36.0, reg.STS_TASK) == "held-out STS acc 45.0%"
