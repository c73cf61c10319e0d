"""stsnb.evaluation.claims: preconditions, the verdicts, seeds; stats' equivalence rule and grouped bootstrap."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy.stats import spearmanr
from synthetic_seeds import paired_seeds

from stsnb.evaluation import claims, main_claims, stats, verdict_rules

UP, DOWN, ACROSS = (1.0, 0.4, 1.6), (-1.0, -1.6, -0.4), (0.2, -0.5, 0.9)
Q = claims.quote("Section 4.1", "A beats B.")
WHY = "synthetic margin"


def test_failed_precondition_makes_a_clear_win_not_tested():
    moved = claims.baseline_moved({"seed 0": (0.1, -0.3, 0.5)}, "NLI fine-tuning")
    row = claims.claim("Smooth K2 beats cross entropy", paper_quote=Q, intervals={"seed 0": UP}, preconditions=[moved])
    assert not moved.holds and "NLI fine-tuning minus untrained: seed 0: +0.10 [-0.30, +0.50]" in moved.evidence
    assert row["verdict"] == "not tested"
    assert row["not_tested_because"].startswith("'NLI fine-tuning moved the encoder' does not hold")
    assert (row["difference"], row["low"], row["high"]) == UP  # the interval is still shown
    assert json.loads(json.dumps(row))["preconditions"][0]["holds"] is False


def test_preconditions_that_hold_leave_the_direction_verdict():
    moved = claims.baseline_moved([(0.8, 0.2, 1.4), (0.5, 0.1, 0.9)], "SimCSE")
    assert moved.holds
    assert claims.claim("a beats b", paper_quote=Q, intervals=[UP], preconditions=[moved])["verdict"] == "supported"
    assert (
        claims.claim("a beats b", paper_quote=Q, intervals=[DOWN], preconditions=[moved])["verdict"] == "contradicted"
    )
    assert claims.claim("a loses to b", paper_quote=Q, intervals=[DOWN], direction=-1)["verdict"] == "supported"
    assert claims.claim("a differs from b", paper_quote=Q, intervals=[UP], direction=0)["verdict"] == "unresolved"
    with pytest.raises(ValueError, match="several seeds need their intervals keyed by seed label"):
        claims.claim("a beats b", paper_quote=Q, intervals=[UP, DOWN])


def test_baseline_moved_needs_every_seed_above_zero():
    assert not claims.baseline_moved([(0.8, 0.2, 1.4), (0.3, -0.1, 0.7)]).holds
    assert not claims.baseline_moved([(-0.8, -1.4, -0.2)]).holds  # moved, but the wrong way


def test_left_start_fails_on_step_zero_or_no_weight_change():
    assert claims.left_start("+Contrast", {0: 120, 1: 40}, {0: 1e-3, 1: 2e-3}).holds
    kept_start = claims.left_start("+Contrast", {0: 0})
    assert not kept_start.holds and "selected step 0" in kept_start.evidence
    frozen = claims.left_start("the generative backbone", [50], [0.0])
    assert not frozen.holds and "0.0e+00" in frozen.evidence


def test_phenomenon_occurs_counts_cases():
    absent = claims.phenomenon_occurs("over-estimation", 0, out_of=1211)
    assert not absent.holds and absent.evidence == "0 of 1211 cases (needs >= 1)"
    assert claims.phenomenon_occurs("over-estimation", 12).holds
    row = claims.claim("CCL over-estimates less", paper_quote=Q, intervals=[UP], preconditions=[absent])
    assert row["verdict"] == "not tested"


@pytest.mark.parametrize(
    ("intervals", "expected"),
    [
        ([(0.1, -0.4, 0.6)], "equivalent"),
        ([(0.1, -0.4, 0.6), (-0.2, -0.9, 0.5)], "equivalent"),
        ([(0.1, -0.4, 0.6), (0.5, -0.2, 1.2)], "unresolved"),  # one seed reaches past the margin
        ([(0.0, -1.5, 1.5)], "unresolved"),  # too wide to tell
        ([(5.0, 3.3, 6.9)], "contradicted"),  # matters by more than the margin
        ([(-5.0, -6.9, -3.3), (-4.0, -5.0, -2.0)], "contradicted"),
        ([(1.0, 1.0, 1.0)], "unresolved"),  # touching the margin is not inside it
    ],
)
def test_equivalence_verdict(intervals, expected):
    assert verdict_rules.equivalence_verdict(intervals, margin=1.0) == expected
    if len(intervals) == 1:  # a claim on one seed is decided on its interval
        row = claims.claim(
            "the template hardly matters", paper_quote=Q, intervals=intervals, margin=1.0, margin_reason=WHY
        )
        assert row["verdict"] == expected


def test_equivalence_margin_is_a_parameter_and_checked():
    assert verdict_rules.equivalence_verdict([(0.5, -1.5, 1.9)], margin=2.0) == "equivalent"
    with pytest.raises(ValueError, match="margin must be a positive number"):
        verdict_rules.equivalence_verdict([UP], margin=0)
    row = claims.claim("tau hardly matters", paper_quote=Q, intervals=[UP], margin=2.0, margin_reason=WHY)
    assert (
        row["test"] == "equivalence" and row["kind"] == "paper" and row["margin"] == 2.0 and row["paper_direction"] == 0
    )


def _three_seeds(mean: float = 6.0) -> dict:
    data, intervals = paired_seeds({f"seed {s}": mean for s in range(3)}, np.random.default_rng(11))
    return {"intervals": intervals, "paired": data}


def test_verdict_text_shows_seeds_and_counts_cover_every_verdict():
    one = claims.claim("a beats b", paper_quote=Q, intervals={"seed 0": UP})
    three = claims.claim("a beats b", paper_quote=Q, paper_difference=1.2, **_three_seeds())
    assert claims.verdict_text(one) == "supported (1 seed)"
    assert claims.verdict_text(three) == "supported (3 seeds)"
    described = claims.describe(three)
    assert "paper +1.20" in described and "; seeds and pairs +" in described and "each seed: supported" in described
    counts = claims.verdict_counts(
        [one, three, claims.claim("x", paper_quote=Q, intervals=[UP], margin=1.0, margin_reason=WHY)]
    )
    assert set(counts) == set(verdict_rules.VERDICTS)
    assert counts["supported"] == 2 and counts["unresolved"] == 1


def test_a_decisive_verdict_on_one_seed_is_marked_provisional():
    one = claims.claim("a beats b", paper_quote=Q, intervals={"seed 0": UP})
    three = claims.claim("a beats b", paper_quote=Q, **_three_seeds())
    unresolved = claims.claim("a beats b", paper_quote=Q, intervals=[ACROSS])
    equivalent = claims.claim("x", paper_quote=Q, intervals=[(0.1, -0.2, 0.4)], margin=1.0, margin_reason=WHY)
    assert claims.provisional(one) and claims.provisional(equivalent)
    assert not claims.provisional(three) and not claims.provisional(unresolved)
    assert claims.provisional({"verdict": "no meaningful effect", "seeds": 1})
    assert claims.provisional({"verdict": "small effect", "seeds": 1})
    assert not claims.provisional({"verdict": "not tested", "seeds": 1})
    assert claims.verdict_text(one, mark_provisional=True) == "supported (1 seed, provisional)"
    assert claims.verdict_text(equivalent, mark_provisional=True) == "equivalent (1 seed, provisional)"
    assert claims.verdict_text(three, mark_provisional=True) == "supported (3 seeds)"
    assert claims.verdict_text(unresolved, mark_provisional=True) == "unresolved (1 seed)"
    assert claims.verdict_text(one) == "supported (1 seed)", "unmarked by default"


def test_interval_counts_separate_preconditions_and_leave_timing_ranges_out():
    """Two claims on 3 seeds gated on the same baseline (3 intervals, counted once), each with its seeds-and-pairs
    interval; a timing range (seconds per step) is counted apart; a precondition without intervals counts none."""
    moved = claims.baseline_moved([UP, UP, UP], "SimCSE")
    steps = claims.left_start("SimCSE", [4, 4, 4])
    rows = [
        claims.claim("a beats b", paper_quote=Q, preconditions=[moved, steps], **_three_seeds()),
        claims.claim("a beats c", paper_quote=Q, preconditions=[moved], **_three_seeds(-6.0)),
        claims.claim("segments are faster", paper_quote=Q, intervals=[(1.0, 0.5, 1.5)], unit="seconds per step"),
    ]
    assert claims.is_timing_range(rows[2]) and not claims.is_timing_range(rows[0])
    counts = claims.interval_counts(rows)
    assert counts == (4 + 4, 3, 1) and counts.preconditions == 3
    chance = verdict_rules.multiplicity(
        counts.claims, preconditions=counts.preconditions, timing_ranges_excluded=counts.timing_ranges
    )
    assert chance.total == 11 and chance.expected_false == pytest.approx(0.55)
    assert claims.interval_counts([]) == (0, 0, 0)


def test_claim_refuses_a_bad_direction():
    with pytest.raises(ValueError, match=r"direction must be \+1, -1 or 0"):
        claims.claim("a beats b", paper_quote=Q, intervals=[UP], direction=2)


def test_every_claim_quotes_the_paper_with_its_section():
    row = claims.claim("a beats b", [UP], paper_quote=Q)
    assert row["paper_quote"] == 'Section 4.1: "A beats B."' and row["kind"] == "paper"
    assert 'the paper: Section 4.1: "A beats B."' in claims.describe(row)
    with pytest.raises(ValueError, match="needs paper_quote"):
        claims.claim("a beats b", [UP], paper_quote="")
    with pytest.raises(ValueError, match="must say where the paper prints it"):
        claims.claim("a beats b", [UP], paper_quote="A beats B.")
    with pytest.raises(ValueError, match="must name the paper's Section"):
        claims.quote("somewhere", "A beats B.")
    with pytest.raises(ValueError, match="kind must be one of"):
        claims.claim("a beats b", [UP], paper_quote=Q, kind="ours")


def test_checks_of_our_setting_are_counted_apart_from_the_papers_claims():
    paper = claims.claim("a beats b", [UP], paper_quote=Q)
    check = claims.claim("training improved the untrained model", [UP], paper_quote=Q, kind="check")
    assert claims.split_by_kind([check, paper]) == ([paper], [check])
    assert claims.verdict_counts([paper, check])["supported"] == 2
    by_kind = claims.verdict_counts_by_kind([paper, check, check])
    assert by_kind["paper"]["supported"] == 1 and by_kind["check"]["supported"] == 2
    assert claims.verdict_counts([paper, check], "check")["supported"] == 1
    assert claims.describe(check).startswith("check: training improved")
    old = {"claim": "x", "verdict": "equivalent", "kind": "equivalence", "margin": 1.0}  # a row of an older run
    assert claims.kind_of(old) == "paper" and claims.tested_as(old) == "equivalence" and claims.is_equivalence(old)


def test_a_claim_whose_own_arms_trained_is_tested_though_an_unrelated_baseline_stayed_put():
    gates = {
        "cross entropy": claims.left_start("cross entropy", [0]),  # stayed put
        "Translated ReLU": claims.left_start("Translated ReLU", [40], [1e-3]),
        "L1": claims.left_start("L1", [60], [2e-3]),
    }
    own = claims.own_arms_trained(gates, ["Translated ReLU", "L1"])
    assert [p.name for p in own] == ["Translated ReLU is not its starting point", "L1 is not its starting point"]
    assert claims.claim("Translated ReLU beats L1", [UP], paper_quote=Q, preconditions=own)["verdict"] == "supported"
    with_ce = claims.own_arms_trained(gates, ["cross entropy", "L1"])
    assert claims.claim("L1 beats CE", [UP], paper_quote=Q, preconditions=with_ce)["verdict"] == "not tested"
    with pytest.raises(ValueError, match="no gate for arm"):
        claims.own_arms_trained(gates, ["MSE"])


def test_the_guard_names_a_gate_on_an_arm_the_claim_does_not_compare():
    """The defect of the old Table 1 rows: "Translated ReLU beats L1" gated on cross entropy having moved."""
    gates = [
        claims.baseline_moved([DOWN], "cross_entropy"),
        claims.left_start("translated_relu", [40], [1e-3]),
        claims.left_start("l1", [60], [2e-3]),
        claims.phenomenon_occurs("a tie", 3),  # about no arm: never counted
    ]
    wrong = claims.claim("Table 1: Translated ReLU beats L1", [UP], paper_quote=Q, preconditions=gates)
    assert claims.arms_not_compared(wrong) == ["cross_entropy"]
    right = claims.claim("Table 1: Translated ReLU beats L1", [UP], paper_quote=Q, preconditions=gates[1:])
    assert claims.arms_not_compared(right) == []
    # a parenthesised detail of the arm's name and the row's a / b count as naming it
    staged = claims.claim(
        "+Ours beats +Contrast",
        [UP],
        paper_quote=Q,
        preconditions=[
            claims.left_start("+Ours (stage 2)", [20], [1e-3]),
            claims.staying_put("+Contrast", claims.left_start("+Contrast", [0]), "Section 4.2: the reason"),
        ],
    )
    assert claims.arms_not_compared(staged) == []
    assert claims.arms_not_compared(
        {
            "claim": "x",
            "a": "CCL",
            "b": "QuMSE",
            "preconditions": [{"name": "QuMSE moved the encoder"}, {"name": "SimCSE is not its starting point"}],
        }
    ) == ["SimCSE"]
    assert (
        claims.arms_not_compared(
            {
                "claim": "+HiCL beats SimCSE",
                "preconditions": [
                    {"name": "SimCSE+HiCL is not its starting point"},
                    {"name": "the SimCSE baseline moved the encoder"},
                ],
            }
        )
        == []
    )
    head = {
        "claim": "Table 6, the head input (u,v,|u-v|) beats |u-v|",
        "preconditions": [
            {"name": "the head on (u,v,|u-v|) is not its starting point"},
            {"name": "|u-v| staying put is the finding"},
        ],
    }
    assert claims.arms_not_compared(head) == []
    assert claims.gated_arm("the margin is narrower than the paper's own effect") is None


def test_staying_put_is_the_finding_holds_and_records_why_and_what_was_measured():
    gates = {"(u,v) head": claims.left_start("(u,v) head", [0]), "full head": claims.left_start("full", [30], [1e-3])}
    reason = 'Table 6: "(u,v) never improves"'
    own = claims.own_arms_trained(gates, staying_put_is_the_finding={"(u,v) head": reason})
    assert own[0].holds and own[0].name == "(u,v) head staying put is the finding"
    assert reason in own[0].evidence and "it stayed put" in own[0].evidence and "selected step 0" in own[0].evidence
    assert own[1] is gates["full head"]
    assert claims.claim("full beats (u,v)", [UP], paper_quote=Q, preconditions=own)["verdict"] == "supported"
    with pytest.raises(ValueError, match="needs the reason"):
        claims.own_arms_trained(gates, staying_put_is_the_finding={"(u,v) head": " "})
    with pytest.raises(ValueError, match="not arms of this claim"):
        claims.own_arms_trained(gates, ["full head"], staying_put_is_the_finding={"(u,v) head": reason})


def test_a_robustness_claim_with_the_papers_effect_inside_its_margin_is_not_tested():
    inside = claims.claim(
        "sigma hardly matters", [ACROSS], paper_quote=Q, margin=1.0, margin_reason=WHY, paper_effect=0.9
    )
    assert inside["verdict"] == "not tested" and inside["paper_effect"] == 0.9
    assert "+0.90 lies inside the margin +-1" in inside["not_tested_because"]
    outside = claims.claim("x hardly matters", [ACROSS], paper_quote=Q, margin=0.5, margin_reason=WHY, paper_effect=0.9)
    assert outside["verdict"] == "unresolved" and outside["preconditions"][0]["holds"]
    narrow = claims.claim("x hardly matters", [(0.1, -0.2, 0.3)], paper_quote=Q, margin=0.5, margin_reason=WHY)
    assert narrow["verdict"] == "equivalent" and narrow["margin_reason"] == WHY
    with pytest.raises(ValueError, match="needs margin_reason"):
        claims.claim("x hardly matters", [UP], paper_quote=Q, margin=1.0)


def test_a_paper_sentence_that_a_setting_matters_is_a_direction_claim():
    """CCL Section 4.5.1: sigma = 0 cannot reach the optimum, so sigma 0.75 beats sigma 0 (direction +1)."""
    row = claims.claim("sigma 0.75 beats sigma 0", [(0.9, 0.3, 1.5)], paper_quote=Q, direction=+1, paper_difference=0.9)
    assert row["test"] == "direction" and row["paper_direction"] == 1 and row["verdict"] == "supported"
    worse = claims.claim("sigma 0.75 beats sigma 0", [(-0.03, -0.06, -0.01)], paper_quote=Q, direction=+1)
    assert worse["verdict"] == "contradicted"


# ---- grouped (cluster) bootstrap -----------------------------------------------------------------------------


def _pairs(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    gold = rng.normal(size=n)
    return gold, gold + rng.normal(scale=0.8, size=n), gold + rng.normal(scale=1.0, size=n)


def test_grouped_difference_matches_a_brute_force_cluster_bootstrap():
    gold, a, b = _pairs(40)
    groups = np.repeat(np.arange(20), 2)
    result = stats.paired_grouped_difference(gold, a, b, groups, n_resamples=300, seed=3)
    rng = np.random.default_rng(3)
    replicates = []
    for _ in range(300):
        drawn = rng.integers(0, 20, size=20)
        rows = np.concatenate([np.flatnonzero(groups == g) for g in drawn])
        replicates.append(100 * (spearmanr(a[rows], gold[rows])[0] - spearmanr(b[rows], gold[rows])[0]))
    low, high = np.quantile(replicates, [0.025, 0.975])
    assert result.low == pytest.approx(low, abs=1e-9) and result.high == pytest.approx(high, abs=1e-9)
    assert result.difference == pytest.approx(100 * (spearmanr(a, gold)[0] - spearmanr(b, gold)[0]))
    assert result.n == 20


def test_resampling_rows_of_duplicated_pairs_is_too_narrow():
    gold, a, b = _pairs(150, seed=1)
    twice = [np.repeat(x, 2) for x in (gold, a, b)]
    rows = stats.paired_spearman_difference(*twice, n_resamples=1000)
    grouped = stats.paired_grouped_difference(*twice, np.repeat(np.arange(150), 2), n_resamples=1000)
    once = stats.paired_spearman_difference(gold, a, b, n_resamples=1000)
    assert grouped.high - grouped.low > 1.25 * (rows.high - rows.low)
    assert grouped.high - grouped.low == pytest.approx(once.high - once.low, rel=0.15)


def test_grouped_difference_checks_its_groups():
    gold, a, b = _pairs(10)
    with pytest.raises(ValueError, match="groups has 9 labels but gold has 10"):
        stats.paired_grouped_difference(gold, a, b, list(range(9)))
    with pytest.raises(ValueError, match="at least 3 groups"):
        stats.paired_grouped_difference(gold, a, b, [0] * 5 + [1] * 5)
    assert stats.paired_grouped_difference(gold, a, a, range(10)).as_tuple() == (0.0, 0.0, 0.0)


def test_the_main_claim_row_is_marked_and_old_headline_rows_are_not_main_claims():
    lead = claims.claim("a beats b", [UP], paper_quote=Q, main_claim=True)
    other = claims.claim("c beats d", [UP], paper_quote=Q)
    assert lead["main_claim"] is True and other["main_claim"] is False
    assert claims.is_main_claim(lead) and not claims.is_main_claim(other)
    old = {"claim": "a beats b", "verdict": "supported", "headline": True}  # a notebook-chosen headline of an old run
    assert not claims.is_main_claim(old)
    assert claims.describe(lead).startswith("main claim: a beats b: ours")
    assert claims.describe(other).startswith("c beats d: ours")


MAIN_CLAIM_NOTEBOOKS = {
    "10_pcc_tuning": "pcc-tuning.md",
    "20_sts_regression": "sts-regression.md",
    "30_hicl": "hicl.md",
    "40_ccl_csts": "ccl-csts.md",
}


def test_each_papers_main_claim_is_a_sentence_of_its_abstract():
    """The main claims are fixed in the package from the abstracts (HiCL's makes two), one entry point each."""
    import re
    from pathlib import Path

    for notebook, paper in MAIN_CLAIM_NOTEBOOKS.items():
        mains = main_claims.main_claims_of(notebook)
        assert len(mains) == (2 if notebook == "30_hicl" else 1) and all(m.notebook == notebook for m in mains)
        path = Path("/work/shared/papers") / paper
        if not path.is_file():
            pytest.skip(f"the paper's text {path} is not on this machine")
        text = " ".join(path.read_text().split())
        abstract = text[text.index("Abstract") : text.index("1 Introduction")]
        for main in mains:
            where, sentence = re.fullmatch(r'([^:]+): "(.*)"', main.abstract).groups()
            assert where == "Abstract" and sentence in abstract, f"{paper}: not in its abstract: {sentence[:60]}"


@pytest.mark.parametrize("profile", ["cpu", "class"])
@pytest.mark.parametrize("notebook", sorted(MAIN_CLAIM_NOTEBOOKS))
def test_the_committed_runs_lead_with_each_papers_main_claim(profile, notebook):
    """Every committed cpu and class run marks a row for each main claim, in the paper's direction, and summary.md's
    overview shows it (whatever its verdict) in the column after the notebook's name."""
    import json
    from pathlib import Path

    from stsnb.runs.summary import main_claim_cell

    root = Path(__file__).resolve().parent.parent / "papermill_runs" / profile
    summary = (root / "summary.md").read_text()
    rows = json.loads((root / notebook / "metrics.json").read_text())["claims"]
    texts = []
    for main in main_claims.main_claims_of(notebook):
        row = main.row_in(rows)
        assert row is not None, f"{notebook}: no row for its main claim {main.statement}"
        assert row["paper_direction"] == main.direction and row["kind"] == claims.PAPER
        texts.append(main_claim_cell(main, rows, root))
        if profile != "cpu":  # the cpu run's verdict beside the class one
            assert re.search(r"\(cpu: [a-z ]+ \((\d+ of )?\d+ seeds?", texts[-1]), texts[-1]
    line = next(line for line in summary.splitlines() if line.startswith(f"| [{notebook}]"))
    assert line.split(" | ")[1] == "; ".join(texts)


def test_a_main_claim_the_run_did_not_make_reads_not_run():
    main = main_claims.MainClaim("nb", claims.quote("Abstract", "X."), "Table 9", "a", "b", ("a beats b",))
    assert main_claims.main_claim_text(main, []) == "Table 9: a beats b: not run in this profile"
    assert main_claims.main_claim_text(main, None) == "Table 9: a beats b: no claims recorded"
