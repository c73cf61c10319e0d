"""STS-Regression's claims, Table 5/6 plan and scoring: the paper's sentence on every claim, paired intervals on the
same test pairs, dev gates per seed on each claim's own arms (a seed on which an arm kept step 0 or did not beat the
untrained encoder's STS-B dev score is left out, "k of n seeds"; never a gate from the test pairs), the smallest
effect of interest from the paper's own differences, the main claim's row, the dev-only choice of the best loss,
Table 3 counting one comparison once, Table 5 judged by equivalence within a margin from the paper's numbers; real
STS-B gold scores (and a real MiniLM run where the result is the point)."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_seeds import fit_result

from stsnb import data
from stsnb.evaluation import claims as generic
from stsnb.evaluation import evaluate, main_claims, stats, verdict_rules
from stsnb.papers import sts_regression as reg
from stsnb.papers.sts_regression import claims, conclusions, sweep_claims
from stsnb.training.config import TrainResult

UNTRAINED_DEV = 60.0  # the untrained encoder's STS-B dev Spearman x100 in these tests


@pytest.fixture(scope="module")
def stsb_gold(data_dir):
    pairs = data.sample(list(data.load_stsb("test")), 150, 0)
    return np.array([p.score for p in pairs])


def _predictions(gold: np.ndarray, noise: float, seed: int) -> evaluate.TaskPredictions:
    rng = np.random.default_rng(seed)
    return {"STSBenchmark": (gold, gold + rng.normal(0, noise, len(gold)))}


def _run(
    predictions: evaluate.TaskPredictions,
    step: int = 10,
    change: float | None = 0.01,
    dev: float = 70.0,
    moved: str = "trained",
) -> claims.Trained:
    """A run that trained on dev by default (kept step 10 of 20, its dev error shrunk well past the noise bound)."""
    return claims.Trained.of(predictions, fit_result(moved, step=step, change=change, dev=dev))


def _stayed(predictions: evaluate.TaskPredictions) -> claims.Trained:
    """A run whose dev selection kept its step-0 checkpoint: the untrained encoder's dev score, no weight changed."""
    return claims.Trained.of(predictions, fit_result("stayed", step=0, change=0.0, dev=UNTRAINED_DEV))


@pytest.fixture(scope="module")
def arms(stsb_gold):
    """Untrained (very noisy), a moved baseline, a better run, a clearly better one: real STS-B gold scores."""
    return {
        "untrained": _predictions(stsb_gold, 8.0, 9),
        "fair": _predictions(stsb_gold, 1.0, 2),
        "good": _predictions(stsb_gold, 0.3, 1),
    }


def test_paper_difference_is_read_from_the_reported_table():
    assert claims.paper_difference("Table 1", "BERT-base", "smooth_k2", "cross_entropy") == pytest.approx(76.03 - 73.01)
    assert claims.paper_difference("Table 3", "Jina v2", "+Ours", "+Contrast") == pytest.approx(83.55 - 81.83)
    assert claims.paper_difference("Table 3", "Jina v2", "+Ours", "") == pytest.approx(83.55 - 82.00)


def test_the_main_claim_is_the_papers_best_loss_against_its_baseline_and_its_constant_finds_every_form():
    for row in ("BERT-base", "RoBERTa-base"):
        best = max(reg.LOSSES, key=lambda name: reg.REPORTED.value("Table 1", f"{row} {name}"))
        assert (claims.MAIN_PAIR.a, claims.MAIN_PAIR.b) == (best, "cross_entropy")
    assert set(claims.MAIN_CLAIM_LOSSES) == {"smooth_k2", "cross_entropy"}
    (main,) = main_claims.main_claims_of("20_sts_regression")
    assert main == claims.MAIN_CLAIMS[0] and main.statement.startswith("Table 1: regression (Smooth K2) beats")
    for pair in (claims.MAIN_PAIR, claims.ISOLATED, claims.ROUNDED_MAIN):  # NLI, the analogue, the rounded task
        row = {"claim": f"Table 1, {pair.text}", "main_claim": True}
        assert pair.main and main.row_in([row]) is row
    assert main.row_in([{"claim": f"Table 1, {claims.CONFOUNDED.text}", "main_claim": True}]) is None


def test_the_smallest_effect_is_half_the_papers_smaller_difference():
    size, reason = claims.smallest_effect("Table 1", "smooth_k2", "cross_entropy")
    assert size == pytest.approx((76.04 - 74.46) / 2)  # RoBERTa's +1.58 is the smaller of the two
    assert "BERT-base +3.02, RoBERTa-base +1.58" in reason and reason.startswith("half the smaller")
    assert claims.smallest_effect("Table 3", "+Ours", "")[0] == pytest.approx((82.83 - 81.52) / 2)
    assert claims.smallest_effect("Table 6", claims.FULL_HEAD, "(u,v)")[0] == pytest.approx((76.04 - 60.99) / 2)


def test_table1_claims_give_each_verdict_when_both_arms_trained_on_dev(arms):
    good, fair = arms["good"], arms["fair"]
    runs = {("smooth_k2", 0): _run(good), ("cross_entropy", 0): _run(fair), ("mse", 0): _run(fair)}
    runs[("l1", 0)] = _run(good)
    rows = {
        r["a"] + ">" + r["b"]: r for r in claims.table1_claims(runs, arms["untrained"], "BERT-base", n_resamples=300)
    }
    # translated_relu was not run: the two claims that need it are left out, not guessed
    assert set(rows) == {"smooth_k2>cross_entropy", "smooth_k2>mse", "mse>l1"}
    main = rows["smooth_k2>cross_entropy"]
    assert main["verdict"] == "supported" and main["main_claim"] and main["paper_direction"] == 1
    assert main["smallest_effect"] == pytest.approx(0.79) and "both read as real" in main["smallest_effect_reason"]
    assert rows["mse>l1"]["verdict"] == "contradicted"  # the paper has mse > l1; ours is clearly below, beyond 1.78
    assert not rows["mse>l1"]["main_claim"]
    second = claims.table1_claims(runs, arms["untrained"], "BERT-base", n_resamples=50, main_claim=False)
    assert not any(r["main_claim"] for r in second)  # a second backbone's rows: one main-claim row per notebook
    assert all(p["holds"] for p in main["preconditions"])
    assert [g["arm"] for g in main["dev_gates"]] == ["smooth_k2", "cross_entropy"] and main["seeds_left_out"] == {}
    expected = stats.paired_predictions_difference(good, fair, n_resamples=300, seed=0)
    assert (main["difference"], main["low"], main["high"]) == pytest.approx(tuple(expected))


def test_a_baseline_that_did_not_train_on_dev_gates_only_the_claims_about_it(arms):
    # cross entropy kept its step-0 checkpoint: Smooth K2's lead over it says nothing about losses, but Smooth K2
    # against MSE stands on its own two arms, which both trained on dev
    runs = {("smooth_k2", 0): _run(arms["good"]), ("cross_entropy", 0): _stayed(arms["untrained"])}
    runs[("mse", 0)] = _run(arms["fair"])
    rows = claims.table1_claims(runs, arms["untrained"], "BERT-base", n_resamples=300)
    assert [(r["b"], r["verdict"]) for r in rows] == [("cross_entropy", "not tested"), ("mse", "supported")]
    main = rows[0]
    assert main["low"] > 0  # the interval alone would have said "supported"
    assert "'cross_entropy trained on dev' does not hold (seed 0: selected step 0 of 20" in main["not_tested_because"]
    assert "not tested (1 seed): " in generic.describe(main)
    assert [p["name"] for p in rows[1]["preconditions"]] == [
        "smooth_k2 trained on dev",
        "mse trained on dev",
        "every arm trained on dev on the same seeds (at least 1)",
    ]


def test_a_baseline_that_trained_on_dev_is_tested_whatever_its_test_interval_against_the_untrained_encoder(arms):
    # the committed cpu run's case: cross entropy trained on dev (a later step, dev above the untrained encoder's) but
    # its test interval against the untrained encoder touched 0; the test pairs no longer gate the claim
    runs = {("smooth_k2", 0): _run(arms["good"]), ("cross_entropy", 0): _run(arms["untrained"], step=20)}
    (main,) = claims.table1_claims(runs, arms["untrained"], "BERT-base", n_resamples=200)
    assert main["verdict"] == "supported" and main["seeds"] == 1
    assert not any("untrained" in p["name"] or "moved" in p["name"] for p in main["preconditions"])


def test_a_claim_without_cross_entropy_is_tested_without_the_baseline_run(arms):
    runs = {("smooth_k2", 0): _run(arms["good"]), ("mse", 0): _run(arms["fair"])}
    (row,) = claims.table1_claims(runs, arms["untrained"], "BERT-base", n_resamples=100)
    assert (row["a"], row["b"], row["verdict"]) == ("smooth_k2", "mse", "supported")
    assert row["paper_quote"] == reg.quotes.BUFFER_MSE and row["kind"] == "paper"


def test_a_run_that_kept_step_0_changed_nothing_or_lost_dev_is_not_tested(arms):
    runs = {
        ("cross_entropy", 0): _run(arms["fair"]),
        ("smooth_k2", 0): _run(arms["good"], step=0),
        ("translated_relu", 0): _run(arms["good"], change=0.0),
        ("l1", 0): _run(arms["fair"]),
        ("mse", 0): _run(arms["fair"], moved="lost"),  # a later step kept, but its dev score fell
    }
    rows = {(r["a"], r["b"]): r for r in claims.table1_claims(runs, arms["untrained"], "BERT-base")}
    assert rows[("smooth_k2", "cross_entropy")]["verdict"] == "not tested"
    assert (
        "'smooth_k2 trained on dev' does not hold (seed 0: selected step 0 of 20"
        in (rows[("smooth_k2", "cross_entropy")]["not_tested_because"])
    )
    assert rows[("translated_relu", "l1")]["verdict"] == "not tested"
    assert (
        "largest weight change 0.0e+00 (did not train: it is its starting point)"
        in (rows[("translated_relu", "l1")]["not_tested_because"])
    )
    assert "within best-of-2 noise" in rows[("mse", "l1")]["not_tested_because"]
    lines = claims.stayed_at_start({("b", name, s): r for (name, s), r in runs.items()})
    assert len(lines) == 2 and lines[0].startswith("b smooth_k2 0: dev selection kept step 0")


def test_the_main_claim_stands_on_its_extra_seeds_and_the_rest_on_one(stsb_gold):
    before = _predictions(stsb_gold, 8.0, 9)
    runs = {}
    for s in (0, 1, 2):
        runs[("cross_entropy", s)] = _run(_predictions(stsb_gold, 1.0, 10 + s))
        runs[("smooth_k2", s)] = _run(_predictions(stsb_gold, 0.3, 20 + s))
    runs[("mse", 0)] = _run(_predictions(stsb_gold, 1.0, 30))
    rows = {r["b"]: r for r in claims.table1_claims(runs, before, "BERT-base", n_resamples=200)}
    assert rows["cross_entropy"]["seeds"] == 3 and generic.verdict_text(rows["cross_entropy"]) == "supported (3 seeds)"
    assert rows["mse"]["seeds"] == 1 and generic.verdict_text(rows["mse"]).endswith("(1 seed)")
    assert [p["seed_run"] for p in rows["cross_entropy"]["per_seed"]] == ["seed 0", "seed 1", "seed 2"]


def test_a_seed_on_which_cross_entropy_did_not_train_on_dev_is_left_out_of_the_main_claim(stsb_gold):
    before = _predictions(stsb_gold, 8.0, 9)
    runs = {(claims.ROUNDED_K2, s): _run(_predictions(stsb_gold, 0.3, 20 + s)) for s in (0, 1, 2)}
    runs |= {("cross_entropy", s): _run(_predictions(stsb_gold, 1.0, 10 + s)) for s in (1, 2)}
    runs[("cross_entropy", 0)] = _stayed(before)
    (main,) = claims.table1_claims(runs, before, "BERT-base", n_resamples=200, task=reg.STS_TASK)
    assert main["claim"] == "Table 1, " + claims.SAME_ROUNDED and main["main_claim"]
    assert main["verdict"] == "supported" and generic.seeds_text(main) == "2 of 3 seeds"
    assert list(main["seeds_left_out"]) == ["seed 0"] and "cross_entropy" in main["seeds_left_out"]["seed 0"]
    text = conclusions.conclusions([main], profile="t", scope="s")
    assert "on 2 of 3 seeds; left out, not trained on dev: seed 0 (cross_entropy" in text
    assert any(note.startswith("left out: seed 0") for note in conclusions.row_notes(main))
    one = {k: v for k, v in runs.items() if k[1] in (0, 1)}  # two seeds, one left out: not tested
    (row,) = claims.table1_claims(one, before, "BERT-base", n_resamples=100, task=reg.STS_TASK)
    assert row["verdict"] == "not tested"
    assert "'cross_entropy trained on dev' does not hold" in row["not_tested_because"]


def test_a_verdict_needs_every_seed(stsb_gold):
    good = {0: _predictions(stsb_gold, 0.3, 1), 1: _predictions(stsb_gold, 3.0, 4)}
    bad = {0: _predictions(stsb_gold, 3.0, 2), 1: _predictions(stsb_gold, 0.3, 5)}
    row = claims.pair_claim(
        "seeds disagree", good, bad, 1.0, table="Table 1", paper_quote=reg.quotes.ADAPTIVE, n_resamples=200
    )
    assert row["seeds"] == 2 and row["verdict"] == "unresolved"
    assert row["difference_std"] is not None and row["difference_std"] > 0


def test_the_best_loss_is_chosen_on_dev_never_on_test(arms):
    # l1 has the best test predictions but the worse dev score: the dev score decides
    runs = {
        ("l1", 0): _run(arms["good"], dev=60.0),
        ("mse", 0): _run(arms["fair"], dev=65.0),
        ("l1", 1): _run(arms["good"], dev=61.0),
        ("mse", 1): _run(arms["fair"], dev=64.0),
        ("smooth_k2", 1): _run(arms["fair"], dev=99.0),  # not run on seed 0: not a candidate
    }
    assert claims.best_by_dev(runs, [0, 1]) == "mse"
    assert claims.best_by_dev(runs, [1]) == "smooth_k2"
    with pytest.raises(ValueError, match="no dev score"):
        claims.best_by_dev({("mse", 0): claims.Trained(arms["fair"], 5, 0.1)}, [0])
    with pytest.raises(ValueError, match="no setting ran on every seed"):
        claims.best_by_dev(runs, [7])


def test_trained_reads_what_selection_kept_from_a_fit_result(arms):
    result = fit_result(step=15, steps=60, change=0.02, dev=67.2)
    kept = claims.Trained.of(arms["fair"], result)
    assert (kept.best_step, kept.weight_change, kept.dev_score, kept.total_steps) == (15, 0.02, 67.2, 60)
    unselected = claims.Trained.of(arms["fair"], TrainResult(4, None, None, 1.0, weight_change=0.5))
    assert unselected.best_step == 4  # no dev selection: the last step is what is kept
    with pytest.raises(ValueError, match="no per-pair dev records"):  # and no dev records to gate a claim on
        claims.dev_gate("mse", {0: unselected})
    with pytest.raises(ValueError, match="carry no fit record"):
        claims.dev_gate("mse", {0: claims.Trained(arms["fair"], 5, 0.1)})
    (entry,) = claims.dev_gate("mse", {0: kept}).to_dict()["seeds"]
    expected = stats.spearman_x100(np.array(result.dev_kept["predictions"]), np.array(result.dev_kept["gold"]))
    expected -= stats.spearman_x100(np.array(result.dev_start["predictions"]), np.array(result.dev_start["gold"]))
    assert entry["seed"] == "seed 0" and entry["dev_gain"] == pytest.approx(expected) and entry["trained"]
    assert entry["evaluations"] == 2 and 0 < entry["noise_bound"] < entry["dev_gain"]


def test_improvement_claim_has_a_direction_but_no_paper_number(arms):
    row = claims.improvement_claim(
        "trained beats untrained",
        "smooth_k2",
        {0: _run(arms["good"])},
        arms["untrained"],
        table="Table 1",
    )
    assert row["verdict"] == "supported" and row["paper_difference"] is None and row["paper_direction"] == 1
    assert row["kind"] == "check" and row["paper_quote"].startswith("Section 4.1: ")  # a check of our setting
    assert "smallest_effect" not in row  # a check of our setting, not a claim of the paper
    stayed = claims.improvement_claim(
        "trained beats untrained",
        "smooth_k2",
        {0: _stayed(arms["untrained"])},
        arms["untrained"],
        table="T",
    )
    assert stayed["verdict"] == "not tested" and (stayed["difference"], stayed["low"], stayed["high"]) == (0, 0, 0)


def test_table3_counts_the_same_comparison_once_and_says_what_contrast_did(arms):
    before, ours = arms["fair"], {0: _run(arms["good"])}
    stayed = {0: claims.Trained.of(before, fit_result("stayed", step=0, steps=17, change=0.0))}  # kept its step 0
    improves, beats = claims.table3_claims(before, stayed, ours, "Jina v2", n_resamples=200)
    assert improves["verdict"] == "supported" and beats["verdict"] == "not tested"
    assert improves["smallest_effect"] == pytest.approx(0.655)
    assert (beats["difference"], beats["low"], beats["high"]) == pytest.approx(
        (improves["difference"], improves["low"], improves["high"])
    )  # the interval is the first claim's again
    assert beats["same_comparison_as"] == improves["claim"]
    assert "'+Contrast trained on dev' does not hold (seed 0: selected step 0 of 17" in beats["not_tested_because"]
    assert not any("staying put" in p["name"] for p in beats["preconditions"])  # no finding the paper does not state
    text = conclusions.conclusions([improves, beats], profile="test", scope="one seed")
    assert "+Contrast did not train on STS-B dev (seed 0: selected step 0 of 17, dev +0.00 over its start" in text
    assert "counted once, as not tested" in text and "did train" not in text
    counts = generic.verdict_counts([improves, beats])
    assert counts["supported"] == 1 and counts["not tested"] == 1
    trained = {0: _run(arms["untrained"])}  # +Contrast trained on dev, and its test scores fell
    _, beats = claims.table3_claims(before, trained, ours, "Jina v2", n_resamples=200)
    assert beats["verdict"] == "supported" and beats["same_comparison_as"] is None
    text = conclusions.conclusions([beats], profile="t", scope="s")
    assert "+Contrast trained on STS-B dev (seed 0: selected step 10 of 20, dev +" in text


def test_table6_is_not_tested_where_a_head_kept_step_0_on_dev(arms):
    # the committed cpu run's (u,v) head kept its step-0 checkpoint: the comparison with it is not tested, as Table 3's
    # +Contrast, whatever the test pairs say (the paper never says that head stays put)
    heads = {("(u,v,|u-v|)", 0): _run(arms["good"]), ("(u,v)", 0): _run(arms["fair"])}
    heads[("|u-v|", 0)] = _stayed(arms["untrained"])
    rows = {r["b"]: r for r in sweep_claims.table6_claims(heads, arms["untrained"], "BERT-base")}
    assert rows["(u,v)"]["verdict"] == "supported" and rows["(u,v)"]["paper_quote"] == reg.quotes.TABLE6
    assert rows["(u,v)"]["smallest_effect"] == pytest.approx((76.04 - 60.99) / 2)
    assert rows["|u-v|"]["verdict"] == "not tested" and rows["|u-v|"]["low"] > 0  # the interval alone: "supported"
    assert (
        "'the head on |u-v| trained on dev' does not hold (seed 0: selected step 0"
        in (rows["|u-v|"]["not_tested_because"])
    )
    assert not any("staying put" in p["name"] for r in rows.values() for p in r["preconditions"])
    heads[("(u,v,|u-v|)", 0)] = _stayed(arms["untrained"])  # the full head must have trained too
    rows = {r["b"]: r for r in sweep_claims.table6_claims(heads, arms["untrained"], "BERT-base")}
    assert rows["(u,v)"]["verdict"] == "not tested"
    assert "'the head on (u,v,|u-v|) trained on dev' does not hold" in rows["(u,v)"]["not_tested_because"]


def test_table5_is_a_robustness_claim_judged_by_equivalence(arms, stsb_gold):
    reference = _run(arms["fair"])
    runs = {
        ("smooth_k2 k=2 x0=0.25", 0): reference,
        ("smooth_k2 k=3 x0=0.25", 0): _run(arms["fair"]),  # the same model: equivalent
        ("smooth_k2 k=9 x0=0.1", 0): _run(arms["untrained"]),  # far worse: outside the margin
    }
    rows = {
        r["a"]: r
        for r in sweep_claims.table5_claims(
            runs,
            "smooth_k2 k=2 x0=0.25",
            "BERT-base",
            arms["untrained"],
            n_resamples=200,
        )
    }
    same, far = rows["smooth_k2 k=3 x0=0.25"], rows["smooth_k2 k=9 x0=0.1"]
    assert same["test"] == "equivalence" and same["kind"] == "paper" and same["margin"] == verdict_rules.DEFAULT_MARGIN
    assert same["paper_quote"] == reg.quotes.TABLE5 and same["paper_effect"] == pytest.approx(76.04 - 74.87)
    assert "spreads up to 0.28 points" in same["margin_reason"] and "from 1.17 points" in same["margin_reason"]
    assert "lies between them" in same["margin_reason"]
    assert same["verdict"] == "equivalent" and same["paper_difference"] == pytest.approx(75.75 - 76.03)
    assert same["reachability"].startswith("equivalence reachable")
    assert far["verdict"] == "contradicted" and far["paper_difference"] is None
    assert far["reachability"].startswith("equivalence not reachable")
    assert f"- {far['claim']}: equivalence not reachable" in conclusions.conclusions([far], profile="t", scope="s")
    # neither setting trained on dev: two copies of the untrained model are not "equivalent" evidence
    idle = {label: _stayed(arms["untrained"]) for label in ("smooth_k2 k=2 x0=0.25", "smooth_k2 k=3 x0=0.25")}
    (row,) = sweep_claims.table5_claims(
        {(k, 0): v for k, v in idle.items()},
        "smooth_k2 k=2 x0=0.25",
        "BERT-base",
        arms["untrained"],
    )
    assert row["verdict"] == "not tested" and "x0=0.25 trained on dev' does not hold" in row["not_tested_because"]
    # a margin wider than the smallest gain the paper reads as real could not tell it from none: not tested
    wide = sweep_claims.table5_claims(runs, "smooth_k2 k=2 x0=0.25", "BERT-base", arms["untrained"], margin=1.5)
    assert {r["verdict"] for r in wide} == {"not tested"}
    assert "+1.17 lies inside the margin +-1.5" in wide[0]["not_tested_because"]


def _named_claims(arms, backbone: str, row: str, contrastive_row: str) -> list[dict]:
    """Every claim builder of Tables 1, 3, 5 and 6 on the same runs, for one ``backbone`` ("": none named)."""
    before, good, fair = arms["untrained"], _run(arms["good"]), _run(arms["fair"])
    losses = {(name, 0): good if name == "smooth_k2" else fair for name in reg.LOSSES}
    heads = {(head, 0): good if head == claims.FULL_HEAD else fair for head in ("(u,v,|u-v|)", "(u,v)", "|u-v|")}
    sweep = {("smooth_k2 k=2 x0=0.25", 0): good, ("smooth_k2 k=3 x0=0.25", 0): good}
    named = {"n_resamples": 100, "backbone": backbone}
    return [
        *claims.table1_claims(losses, before, row, **named),
        *claims.table3_claims(before, {0: fair}, {0: good}, contrastive_row, **named),
        *sweep_claims.table5_claims(sweep, "smooth_k2 k=2 x0=0.25", row, before, **named),
        *sweep_claims.table6_claims(heads, before, row, **named),
    ]


def test_claims_of_two_backbones_name_each_and_never_read_alike(arms):
    bert = _named_claims(arms, "bert-base-uncased", "BERT-base", "Jina v2")
    roberta = _named_claims(arms, "roberta-base", "RoBERTa-base", "Nomic Embed v1")
    texts = [r["claim"] for r in bert + roberta]
    assert len(bert) == len(roberta) == 5 + 2 + 1 + 2 and len(set(texts)) == len(texts)
    for backbone, rows in (("bert-base-uncased", bert), ("roberta-base", roberta)):
        assert all(backbone in r["claim"] and r["backbone"] == backbone for r in rows), backbone
        assert all(not generic.arms_not_compared(r) for r in rows)  # every gate is on the claim's own arms
    assert bert[0]["claim"] == "Table 1, bert-base-uncased: " + claims.MAIN_PAIR.text
    assert bert[5]["claim"] == "Table 3, bert-base-uncased: +Ours (two stages) improves the contrastive encoder"
    assert bert[7]["claim"].endswith("the setting hardly matters (bert-base-uncased)")
    assert bert[8]["claim"] == "Table 6, bert-base-uncased: the head input (u,v,|u-v|) beats (u,v)"
    # one backbone names none: the texts (and every other entry of a row) are those of a single-backbone run
    plain = _named_claims(arms, "", "BERT-base", "Jina v2")
    assert plain[0]["claim"] == "Table 1, " + claims.MAIN_PAIR.text and "backbone" not in plain[0]
    assert not any("bert-base-uncased" in r["claim"] for r in plain)
    for one, other in zip(plain, bert, strict=True):
        assert {k: v for k, v in one.items() if k != "claim"} == {
            k: v for k, v in other.items() if k not in ("claim", "backbone")
        }
    opening = "The paper's main claim: Table 1: regression (Smooth K2) beats classification (cross entropy) on the "
    assert conclusions.takeaway(roberta).startswith(opening + "same labels: supported (1 seed, provisional), +")
    assert "What our controls attribute it to: the zero-gradient buffer (Translated ReLU beats L1 " in (
        conclusions.takeaway(roberta)
    )
    assert all(isinstance(r["paper_quote"], str) and r["paper_quote"] for r in bert + roberta + plain)
    sized = [r for r in bert if r["kind"] == "paper" and r["test"] == "direction"]
    assert sized and all(r["smallest_effect"] > 0 and r["smallest_effect_reason"] for r in sized)


def test_different_test_pairs_cannot_be_compared(stsb_gold):
    a = _predictions(stsb_gold, 1.0, 1)
    b = {"STSBenchmark": (stsb_gold[::-1].copy(), stsb_gold)}
    with pytest.raises(ValueError, match="different pairs"):
        claims.pair_claim("x", {0: a}, {0: b}, 1.0, table="Table 1", paper_quote=reg.quotes.TABLE1_K2, n_resamples=50)


def test_the_takeaway_opens_with_the_main_claims_verdict_whatever_it_is(arms):
    runs = {("smooth_k2", 0): _run(arms["good"]), ("cross_entropy", 0): _stayed(arms["untrained"])}
    rows = claims.table1_claims(runs, arms["untrained"], "BERT-base", n_resamples=100)
    text = conclusions.takeaway(rows)
    assert text.startswith(
        "The paper's main claim: Table 1: regression (Smooth K2) beats classification (cross entropy) on the same "
        "labels: not tested (1 seed), +"
    )
    assert text.endswith("because 'cross_entropy trained on dev' does not hold; no control of it ran.")
    assert text.count(". ") == 0
    assert "not run in this profile" in conclusions.takeaway([])


def test_comparability_of_levels():
    paper = {"bert-base-uncased": "BERT-base", "jinaai/jina-embeddings-v2-base-en": "Jina v2"}
    assert conclusions.comparability(paper, True, True) == "yes"
    assert conclusions.comparability(paper, True, False) == "direction only"  # a sample of pairs, or stand-in data
    assert conclusions.comparability({"smollm2-135m-l6": "BERT-base"}, True, True) == "direction only"
    assert conclusions.comparability(paper, False, True) == "no"  # not the seven-task average


def test_sweep_plan_reuses_table1_and_adds_table6_heads():
    plan = reg.nli_sweep_plan("BERT-base", reg.LOSSES, [["smooth_k2", 3.0, 0.25], ["smooth_k2", 2.0, 0.25]], ["|u-v|"])
    labels = [v.label() for v in plan]
    assert labels == [
        "translated_relu k=2.5 x0=0.25",
        "smooth_k2 k=2 x0=0.25",
        "smooth_k2 k=3 x0=0.25",
        "smooth_k2 k=2 x0=0.25 head |u-v|",
    ]  # the sweep's repeat of Table 2's setting and the full head input appear once
    answered = [reg.answered_by_table1(v, "BERT-base", reg.LOSSES) for v in plan]
    assert answered == [True, True, False, False]
    assert plan[1].tables("BERT-base") == ("Table 5", "Table 6") and plan[3].tables("BERT-base") == ("Table 6",)
    with pytest.raises(ValueError, match="head inputs"):
        reg.nli_sweep_plan("BERT-base", reg.LOSSES, [], ["u*v"])
    with pytest.raises(ValueError, match=r"\[loss, k, x0\]"):
        reg.nli_sweep_plan("BERT-base", reg.LOSSES, [["smooth_k2", 3.0]], [])


def test_stage2_sweep_starts_from_the_official_setting():
    plan = reg.stage2_sweep_plan("Jina v2", [["smooth_k2", 3.5, 0.2], ["smooth_k2", 4.0, 0.2]])
    assert [s.label() for s in plan] == ["smooth_k2 k=3.5 x0=0.2", "smooth_k2 k=4 x0=0.2"]
    with pytest.raises(KeyError, match="no stage settings"):
        reg.stage2_sweep_plan("BERT-base", [])


def test_an_average_of_fewer_tasks_is_not_compared_with_the_papers_average():
    seven, one = reg.Evaluation("all", 50), reg.Evaluation("stsb", 50)
    assert seven.comparable({"avg": 1.0}) == {"avg": 1.0}
    assert one.comparable({"STSBenchmark": 1.0, "avg": 1.0}) == {"STSBenchmark": 1.0, "avg of stsb": 1.0}
    rows = reg.compare({"avg": 70.0}, one, "Table 5", "BERT-base smooth_k2 k=2 x0=0.25", our_setting="x", note="n")
    assert rows == []  # Table 5 reports only the seven-task average
    rows = reg.compare({"avg": 70.0}, seven, "Table 5", "BERT-base smooth_k2 k=2 x0=0.25", our_setting="x", note="n")
    assert rows[0]["delta"] == pytest.approx(70.0 - 76.03) and "50 pairs per task" in rows[0]["note"]


@pytest.mark.slow
def test_sampled_predictions_score_like_sts_scores_and_pair_up_across_models(minilm):
    first = evaluate.task_predictions(minilm, "stsb,sickr", 40, seed=3, cache=None)
    again = evaluate.task_predictions(minilm, "stsb,sickr", 40, seed=3, cache=None)
    scores = evaluate.spearman_scores(first)
    assert scores == pytest.approx(evaluate.sts_scores(minilm, "stsb,sickr", 40, 3))
    assert all(np.array_equal(first[t][0], again[t][0]) for t in first)  # same draw: the gold scores line up
    assert tuple(stats.paired_predictions_difference(first, again, n_resamples=50)) == (0.0, 0.0, 0.0)


@pytest.mark.long  # a real training run (8 s): off the default tier
@pytest.mark.slow
def test_a_real_run_whose_dev_selection_kept_step_0_is_not_tested(data_dir):
    """The real MiniLM fine-tuned on real SNLI pairs at learning rate 0: every dev score ties the untrained one,
    selection keeps step 0, no weight changes, the predictions are the untrained encoder's, and the claim that
    training improved it is not tested (not "unresolved" with a zero interval)."""
    from stsnb.training.config import TrainConfig

    pairs = reg.nli_training_pairs(list(data.load_snli("dev", data_dir=data_dir))[:48])
    dev = list(data.load_stsb("dev", data_dir=data_dir))[:60]
    config = TrainConfig(batch_size=16, lr=0.0, eval_every=1, progress=False)
    evaluation = reg.Evaluation("stsb", 60)
    before = evaluation.predictions(reg.load_backbone("minilm-l6", 64))
    model, result = reg.fine_tune_table1(
        "minilm-l6", pairs, reg.table2_loss("smooth_k2"), config, dev_pairs=dev, max_length=64, head_lr=0.0
    )
    run = claims.Trained.of(evaluation.predictions(model.encoder), result)
    assert (run.best_step, run.weight_change) == (0, 0.0) and claims.same_predictions(run.predictions, before)
    row = claims.improvement_claim("NLI fine-tuning improves MiniLM", "smooth_k2", {0: run}, before, table="T")
    assert row["verdict"] == "not tested" and "selected step 0" in row["not_tested_because"]


def test_rounded_smooth_k2_check_reads_the_same_arm_in_either_task(arms):
    """The cpu profile trains Smooth K2 on the rounded labels as the main claim's own arm on three seeds; the class
    profile trains it as Table 1's Smooth K2 on the rounded task. Both give one check with the same text, so a class
    run finds the cpu run's row, and the class run's best-on-dev check is not the same runs counted twice."""
    good, fair = _run(arms["good"]), _run(arms["fair"], dev=65.0)
    cpu_runs = {
        ("smooth_k2", 0): good,
        ("cross_entropy", 0): fair,
        **{(claims.ROUNDED_K2, s): good for s in (0, 1, 2)},
    }
    cpu = claims.raw_encoder_checks(
        cpu_runs,
        arms["untrained"],
        reg.STS_TASK,
        [0],
        backbone="b",
        n_resamples=100,
    )
    assert [r["claim"] for r in cpu] == [
        "Table 1, b: STS fine-tuning with the loss best on dev (smooth_k2) improves the raw encoder",
        f"Table 1, b: {claims.ROUNDED_K2_CHECK}",
    ]
    assert cpu[1]["seeds"] == 3 and all(r["kind"] == generic.CHECK for r in cpu)
    class_runs = {("smooth_k2", 0): good}
    only = claims.raw_encoder_checks(class_runs, arms["untrained"], reg.STS_ROUNDED_TASK, [0], backbone="b")
    assert [r["claim"] for r in only] == [cpu[1]["claim"]] and only[0]["seeds"] == 1
    assert claims.rounded_k2_runs(class_runs, reg.STS_TASK) == {}  # Smooth K2 on the score is another arm


def test_the_class_profiles_rounded_task_runs_the_main_claim_with_the_cpu_runs_text(arms):
    """The class profile trains cross entropy and Smooth K2 on the sts_rounded task: its main-claim row reads as the
    cpu run's (Smooth K2 on the same rounded labels), so the cpu result is found and set beside it."""
    both = {("smooth_k2", 0): _run(arms["good"]), ("cross_entropy", 0): _run(arms["fair"])}
    rows = claims.table1_claims(both, arms["untrained"], "BERT-base", task=reg.STS_ROUNDED_TASK)
    (main,) = [r for r in rows if r["main_claim"]]
    assert main["claim"] == "Table 1, " + claims.SAME_ROUNDED and main["labels"] == claims.SAME_LABELS
    assert conclusions.main_claim_row(rows) is main
    text = conclusions.takeaway(rows, cpu="cpu: +1.63 [+0.08, +3.46], supported (3 seeds)")
    assert "supported (1 seed, provisional), +" in text and "(cpu: +1.63 [+0.08, +3.46], supported (3 seeds))" in text
    assert conclusions.row_notes(main)[0] == "verdict: supported (1 seed, provisional)"


def test_a_run_without_cross_entropy_says_its_main_claim_was_not_run(arms):
    runs = {("smooth_k2", 0): _run(arms["good"])}
    rows = claims.raw_encoder_checks(runs, arms["untrained"], reg.STS_ROUNDED_TASK, [0], backbone="b")
    rows += claims.table1_claims(runs, arms["untrained"], "BERT-base", task=reg.STS_ROUNDED_TASK)
    assert conclusions.main_claim_row(rows) is None
    text = conclusions.takeaway(rows)
    assert text.startswith("The paper's main claim: Table 1: ") and "not run in this profile" in text
    assert text.endswith("1 other claim(s) and check(s) were run.")
