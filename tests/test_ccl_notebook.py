"""Notebook 40's helpers (stsnb.papers.ccl.protocol): the protocol table printed from the parameters cell's values."""

from __future__ import annotations

import re
import warnings

import matplotlib.pyplot as plt
import nbformat
import numpy as np
import pytest
from matplotlib.text import Text

from stsnb import data
from stsnb.papers import ccl
from stsnb.runs import plans
from stsnb.teaching import plots

NOTEBOOK = plans.NOTEBOOKS_DIR / "40_ccl_csts.ipynb"


def _with_plan(params: dict, profile: str) -> dict:
    plan = plans.load_plan(plans.plan_path(profile))
    return {**params, **plan.notebooks["40_ccl_csts"]}


def _cell() -> dict:
    """The parameters cell's own values (the class profile's), executed as the notebook would."""
    cell = next(c for c in nbformat.read(NOTEBOOK, as_version=4).cells if "parameters" in c.metadata.get("tags", []))
    namespace: dict = {}
    exec(cell.source, namespace)
    return {k: v for k, v in namespace.items() if not k.startswith("__")}


@pytest.fixture(scope="module")
def cpu_params() -> dict:
    """The cpu profile's values: the parameters cell's with the cpu plan's over them."""
    return _with_plan(_cell(), "cpu")


def test_the_cpu_protocol_names_every_difference_from_the_paper(cpu_params):
    rows = {r.detail: r for r in ccl.protocol_rows(cpu_params)}
    differ = {d for d, r in rows.items() if r.differs}
    assert {"backbone", "pooling", "data", "evaluation rows", "training data", "epochs", "batch"} <= differ
    assert {"checkpoint selection", "selection frequency", "learning rates", "training seeds"} <= differ
    assert rows["pooling"].ours == "minilm-l6: mean" and "first token" in rows["pooling"].paper
    assert rows["epochs"].paper.startswith("5 (Table 6, SimCSE-base)") and rows["epochs"].ours == "1"
    assert rows["batch"].ours == "16 rows (8 quadruples) x 1 accumulated"
    assert rows["training seeds"].ours.startswith("0, 1, 2 for Table 3's bi-encoder")
    text = ccl.protocol_markdown(cpu_params)
    assert text.count("| detail | paper | this run | why |") == 2 and "`cpu`" in text
    assert all(r.why for r in rows.values())


def test_the_paper_profile_follows_the_paper_where_it_can(cpu_params):
    rows = {r.detail: r for r in ccl.protocol_rows(_with_plan(cpu_params, "paper"))}
    same = {d for d, r in rows.items() if not r.differs}
    assert {"backbone", "pooling", "training data", "epochs", "batch", "learning rates", "Table 4 ablations"} <= same
    assert rows["data"].differs and rows["evaluation rows"].differs  # no plan can undo these


def test_the_temperature_reading_row_follows_the_parameter(cpu_params):
    def reading(params):
        return next(r for r in ccl.reading_rows(params) if "Eq. 10" in r.detail)

    assert not reading(cpu_params).differs and "divisor" in reading(cpu_params).ours
    multiplier = reading({**cpu_params, "temperature_reading": "multiplier"})
    assert multiplier.differs and "multiplier" in multiplier.ours


# ---------------------------------------------------------------------------------------------------------------
# data_look: real quadruples with a model's cosines (Section 3.1, Eq. 2)


@pytest.fixture(scope="module")
def validation_quads(data_dir):
    return ccl.pair_conditions(data.load_csts("validation", data_dir)).quadruples


@pytest.fixture(scope="module")
def bi_encoder():
    """The real all-MiniLM-L6-v2 as an untrained bi-encoder, mean-pooled as notebook 40's cpu profile."""
    return ccl.ModelSettings("minilm-l6", "bi", "mean", 64, "mlp", False).build(seed=0)


def test_spread_examples_take_one_real_quadruple_per_label_gap(validation_quads):
    chosen = ccl.spread_examples(validation_quads, 5, seed=0)
    assert [q.label_high - q.label_low for q in chosen] == [4, 3, 2, 1, 0]
    assert len({(q.sent1, q.sent2) for q in chosen}) == 5 and all(q.condition_high != q.condition_low for q in chosen)
    assert chosen == ccl.spread_examples(validation_quads, 5, seed=0)
    assert len(ccl.spread_examples(validation_quads, 7, seed=1)) == 7  # more than the gaps: random ones after
    with pytest.raises(ValueError, match="k must be"):
        ccl.spread_examples(validation_quads, 0)


def test_looks_error_and_order_on_hand_made_cosines(validation_quads):
    quad = next(q for q in validation_quads if q.label_high == 5 and q.label_low == 1)  # labels 1.0 and 0.0
    right, wrong = ccl.QuadrupleLook(quad, 0.9, 0.3), ccl.QuadrupleLook(quad, 0.4, 0.6)
    assert right.error == pytest.approx(0.3) and not right.wrong_order
    assert wrong.error == pytest.approx(0.6) and wrong.wrong_order
    tie = next(q for q in validation_quads if q.is_tie)
    assert not ccl.QuadrupleLook(tie, 0.1, 0.9).wrong_order  # equal labels rank nothing
    assert ccl.most_wrong([right, wrong], 1) == [wrong]
    assert ccl.wrong_order([right, wrong, ccl.QuadrupleLook(tie, 0.1, 0.9)]) == [wrong]
    table = ccl.looks_markdown([right, wrong])
    assert table.count("\n") == 3 and table.count("(order wrong)") == 1 and "| 5 (1.00) | 0.90 |" in table


def test_looks_from_predictions_and_from_the_model_agree(validation_quads, bi_encoder):
    quads = ccl.spread_examples(validation_quads, 5, seed=0)
    from_model = ccl.looks_of_model(bi_encoder, quads)
    rows = ccl.rows_of(quads)
    predictions = dict(zip([r.source for r in rows], bi_encoder.similarities(rows), strict=True))
    from_predictions = ccl.looks(quads, predictions)
    assert [c for a in from_model for c in (a.cos_pos, a.cos_neg)] == pytest.approx(
        [c for b in from_predictions for c in (b.cos_pos, b.cos_neg)]
    )
    assert all(-1 <= item.cos_pos <= 1 and item.quadruple in quads for item in from_model)


def test_condition_spread_of_a_perfect_and_of_a_condition_blind_model(validation_quads):
    quads = validation_quads[:300]
    perfect = {}
    for q in quads:
        perfect[q.source_high], perfect[q.source_low] = ccl.scale_label(q.label_high), ccl.scale_label(q.label_low)
    spread = ccl.condition_spread("perfect", ccl.looks(quads, perfect))
    assert spread.right_order == 1.0 and spread.gap_spearman == pytest.approx(100.0)
    assert spread.mean_cosine_gap == pytest.approx(spread.mean_label_gap)
    blind = {source: 0.5 for source in perfect}  # the same cosine under both conditions
    flat = ccl.condition_spread("blind", ccl.looks(quads, blind))
    assert flat.mean_cosine_gap == 0.0 and flat.right_order == 0.0 and flat.gap_spearman == 0.0
    notes = ccl.conditioning_notes({"bi untrained": flat, "bi CCL": flat}, 0.14, "minilm-l6")
    assert "barely" in notes and "14%" in notes and "Hypothesis" in notes
    assert "barely" not in ccl.conditioning_notes({"bi CCL": spread}, 0.14, "minilm-l6")
    assert "perfect" in ccl.spread_table([spread, flat])
    ranked = sum(q.label_high > q.label_low for q in quads)
    assert (spread.ranked, spread.tied) == (ranked, 0) and (flat.ranked, flat.tied) == (ranked, ranked)
    assert "Below chance before any training" in notes and f"{ranked} of them have two equal cosines" in notes
    assert "Below chance" not in ccl.conditioning_notes({"bi untrained": spread, "bi CCL": spread}, 0.14, "minilm-l6")


def test_order_by_condition_length_splits_the_ranked_quadruples(validation_quads, bi_encoder):
    quads = validation_quads[:200]
    tokens = ccl.condition_tokens(bi_encoder, [c for q in quads for c in (q.condition_high, q.condition_low)])
    assert all(isinstance(n, int) and n > 0 for n in tokens.values())
    # a model whose cosine is the lower condition's token count minus the higher one's: right exactly when shorter
    predictions = {}
    for q in quads:
        predictions[q.source_high], predictions[q.source_low] = -tokens[q.condition_high], -tokens[q.condition_low]
    groups = {g.group: g for g in ccl.order_by_length(ccl.looks(quads, predictions), tokens)}
    assert groups["higher condition shorter"].right_order == 1.0 and groups["higher condition longer"].right_order == 0
    assert groups["same length"].right_order == 0.0  # equal cosines: not right
    assert sum(g.quadruples for g in groups.values()) == sum(q.label_high > q.label_low for q in quads)
    flat = ccl.condition_spread("blind", ccl.looks(quads, {k: 0.5 for k in predictions}))
    notes = ccl.conditioning_notes({"bi untrained": flat}, None, "minilm-l6", list(groups.values()))
    assert "where the higher condition has fewer tokens than the lower" in notes and "Hypothesis" in notes


def test_the_architecture_note_says_what_was_measured_when_the_tri_encoder_wins():
    spread = ccl.ConditionSpread("x", 100, 0.1, 0.5, 0.7, 20.0, 90, 0)
    kwargs = dict(paper={"bi": 46.8, "tri": 44.1}, paper_row="SimCSE-base", lr=3e-5)
    spreads = {"bi CCL": spread, "tri CCL": spread}
    tri_wins = ccl.architecture_note(
        {"bi": 25.3, "tri": 36.8}, {"bi": 0.9, "tri": 9.2}, spreads, head_lr=1e-3, **kwargs
    )
    assert "Ours is the reverse" in tri_wins and "Hypothesis, not tested here" in tri_wins and "head_lr" in tri_wins
    same = ccl.architecture_note({"bi": 36.8, "tri": 25.3}, {"bi": 0.9, "tri": 9.2}, spreads, head_lr=1e-3, **kwargs)
    assert same.endswith("Here too the bi-encoder is ahead.")
    assert ccl.architecture_note({"bi": 25.3}, {"bi": 0.9}, spreads, head_lr=None, **kwargs) == ""
    one_rate = ccl.architecture_note({"bi": 25.3, "tri": 36.8}, {"bi": 0.9, "tri": 9.2}, {}, head_lr=None, **kwargs)
    assert "Hypothesis" not in one_rate and "Ours is the reverse" in one_rate


def test_the_sides_note_measures_which_way_the_cosines_miss():
    cos_pos, cos_neg = np.array([0.6, 0.55, 0.9]), np.array([0.5, 0.6, 0.1])
    label_pos, label_neg = np.array([1.0, 0.75, 0.5]), np.array([0.0, 0.25, 0.25])
    sides = ccl.error_sides(cos_pos, cos_neg, label_pos, label_neg)
    assert (sides.total, sides.positive_under, sides.negative_over, sides.both, sides.wide_gaps) == (3, 2, 2, 2, 1)
    note = ccl.sides_note({"bi QuMSE": sides})
    assert "bi QuMSE: the positive under-estimated in 67% of the 3 quadruples" in note and "above 0.25 in 1" in note


def test_condition_token_share_on_real_rows(bi_encoder, data_dir):
    rows = list(data.load_csts("validation", data_dir))[:50]
    share = ccl.condition_token_share(bi_encoder, [r.sent1 for r in rows], [r.condition for r in rows])
    tokenizer = bi_encoder.encoder.tokenizer
    first = len(tokenizer.tokenize(rows[0].condition)) / len(tokenizer(rows[0].sent1, rows[0].condition)["input_ids"])
    one = ccl.condition_token_share(bi_encoder, [rows[0].sent1], [rows[0].condition])
    assert one == pytest.approx(first) and 0.02 < share < 0.5


# ---------------------------------------------------------------------------------------------------------------
# probes: BCL's share of the gradient (Eq. 10-14)


def test_probe_readings_and_the_even_share_at_a_large_tau(bi_encoder, data_dir):
    quads = ccl.pair_conditions(data.load_csts("train", data_dir)).quadruples[:8]
    objective = ccl.ccl(sigma=0.75, temperature=3.0)
    settings = [("divisor", 1000.0), ("multiplier", 4.0), ("divisor", 0.25), ("divisor", 0.05)]
    shares = ccl.gradient_shares(bi_encoder, quads, objective, settings, batch_size=4, batches=2, seed=0)
    flat, multiplier, divisor, sharp = shares
    assert flat.same_pair_share == pytest.approx(1 / 8, abs=1e-3)  # logits ~0: every one of 8 negatives alike
    assert multiplier.bcl_ratio == pytest.approx(divisor.bcl_ratio) and multiplier.logit_bound == 4.0
    assert sharp.logit_bound == pytest.approx(20.0) and sharp.same_pair_share > flat.same_pair_share
    assert flat.bcl_ratio < divisor.bcl_ratio and all(s.batches == 2 for s in shares)
    assert ccl.probe_settings(3.0, [10.0]) == [
        ("divisor", 0.05),
        ("divisor", 3.0),
        ("divisor", 10.0),
        ("multiplier", 3.0),
        ("multiplier", 10.0),
    ]
    assert "+-20" in ccl.shares_table(shares)
    with pytest.raises(ValueError, match="one batch"):
        ccl.gradient_shares(bi_encoder, quads[:3], objective, settings, batch_size=4)


def _share(reading, tau, ratio, same=0.07):
    bound = 1 / tau if reading == "divisor" else tau
    return ccl.GradientShare(reading, tau, bound, ratio, same, 2)


def test_sweep_notes_are_written_from_the_probe_and_the_claims():
    mean = [_share("divisor", 0.05, 0.22, 0.58), _share("divisor", 3.0, 0.19), _share("multiplier", 3.0, 1.2, 0.16)]
    cls = [_share("divisor", 0.05, 2.49, 0.41), _share("divisor", 3.0, 0.23), _share("multiplier", 3.0, 1.9, 0.1)]
    sigma = {"claim": "Table 5, m bi-encoder: CCL sigma=0.75 > sigma=0", "interval": "-0.03 [-0.06, -0.01]"}
    sigma |= {"verdict": "equivalent", "seeds": 1}
    text = ccl.sweep_notes({"mean": mean, "cls": cls}, "mean", 3.0, "divisor", 16, [sigma], [])
    assert "7.0% of BCL's softmax mass" in text and "1/16 = 6.2%" in text and "0.19x" in text
    assert "-0.03 [-0.06, -0.01], equivalent (1 seed, provisional)" in text and "60x sharper" in text
    assert "which this probe supports" in text and "a much smaller cost" in text
    assert "a small part of a small part" in text
    assert "Figure 2 claims: none in this run" in text
    blunt = ccl.sweep_notes({"mean": mean, "cls": mean}, "mean", 3.0, "divisor", 16, [], [])
    assert "does not support" in blunt
    multiplied = ccl.sweep_notes({"mean": mean}, "mean", 3.0, "multiplier", 16, [], [])
    assert "a sizeable part" in multiplied and "Read as a divisor" in multiplied
    alone = ccl.sweep_notes({"cls": cls}, "cls", 3.0, "divisor", 16, [], [])
    assert "earlier run" not in alone and "2.49x" in alone


# ---------------------------------------------------------------------------------------------------------------
# figures: readable (9 pt or more, no overlapping text boxes)


def _readable(fig) -> bool:
    fig.canvas.draw()
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    texts = re.sub(r"\$[^$]*\$", "", " ".join(t.get_text() for t in fig.findobj(Text)))  # mathtext aside
    ascii_math = any(word in texts for word in ("alpha", "sigma", "tau", "lambda", "->", " x100"))
    plt.close(fig)
    return min(sizes) >= 9 and not ascii_math


def _claim(text: str, difference: float, paper: float | None, verdict: str) -> dict:
    return {
        "claim": text,
        "difference": difference,
        "low": difference - 0.03,
        "high": difference + 0.02,
        "paper_difference": paper,
        "verdict": verdict,
    }


def test_the_figures_are_readable_and_draw_what_was_asked(data_dir, validation_quads):
    train = data.load_csts("train", data_dir)
    validation = data.load_csts("validation", data_dir)
    labels = ccl.figures.labels(train, validation, ccl.pair_conditions(train).quadruples)
    assert len(labels.axes) == 3 and {ax.get_xlabel() for ax in labels.axes} == {
        "gold label (1-5)",
        r"$l_{pos} - l_{neg}$ (on the 1-5 scale)",
    }  # a label and a gap never share an axis
    sweep = [
        _claim("Table 5, minilm-l6 bi-encoder: CCL sigma=0.75 > sigma=0", -0.03, 0.9, "contradicted"),
        _claim("Figure 2, minilm-l6 bi-encoder: CCL is robust to tau (3 vs 10)", -0.75, None, "unresolved"),
    ]
    paper = {
        s: ccl.REPORTED.value("Table 5", ccl.setting("bi", "CCL", "SimCSE-base", f"sigma={s:g}"), "spearman")
        for s in ccl.SIGMAS
    }
    table5 = ccl.figures.table5_figure2(paper, "bi-encoder SimCSE-base", 0.75, sweep, 1.0)
    ours = table5.axes[1]
    assert ours.get_xlim() == pytest.approx((-1.25, 1.25)) and "spans $\\pm$1.2" in ours.get_xlabel()
    assert not ours.lines or all(len(line.get_xdata()) <= 2 for line in ours.lines)  # points, no trend line
    assert "range 1.1 points" in table5.axes[0].get_title()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "identical low and high ylims" when no sigma / tau ran (class profile)
        no_sweep = ccl.figures.table5_figure2(paper, "bi-encoder SimCSE-base", 0.75, [], 1.0)
    assert len(no_sweep.axes) == 1  # no empty panel of ours: the paper's alone, saying nothing of ours ran
    assert "ours: no $\\sigma$ or $\\tau$ run in this profile" in no_sweep.axes[0].get_title()
    rng = np.random.default_rng(0)
    x, y = rng.normal(0, 0.2, 200), rng.normal(0, 0.2, 200)
    flags = ((x > 0.25) & (y > 0)) | ((y > 0.25) & (x > 0))
    appendix = ccl.figures.appendix_a({"bi QuMSE": (x, y, flags), "bi CCL": (x, y, flags)})
    dashed = [line for line in appendix.axes[0].lines if line.get_linestyle() == "--"]
    assert sorted(tuple(line.get_xdata())[0] for line in dashed) == [0, 0.25]  # both thresholds drawn
    table3 = ccl.figures.table3(
        [("minilm-l6 bi QuMSE", 25.8, 44.8, 0.9), ("minilm-l6 bi CCL", 25.3, 46.8, 0.9)],
        {"minilm-l6 bi QuMSE": [(0, 10.0), (20, 30.0)], "minilm-l6 bi CCL": [(0, 10.0), (20, 31.0)]},
    )
    assert table3.axes[0].get_xlim()[0] == 0  # bars from zero
    table4 = ccl.figures.table4({"ours, bi-encoder": (["CCL", "w/o BCL"], [25.3, 26.0])})
    for fig in (labels, table5, no_sweep, appendix, table3, table4, ccl.figures.objectives()):
        assert plots.figure_problems(fig) == []  # no overlapping text, nothing under 9 pt, no legend over data
        assert _readable(fig)


def test_one_step_of_ccl_by_hand_as_notebook_40_shows_it(data_dir):
    """Notebook 40's cell on the real MiniLM bi-encoder and a real training batch: Eq. 3's four terms with Table 2's
    sigma and tau, backward, one AdamW step with the notebook's parameter groups; with the same dropout masks the
    loss on that batch goes down, and the printed terms add up to it."""
    import torch

    from stsnb.training import training_step

    quads = ccl.pair_conditions(data.load_csts("train", data_dir)).quadruples[:8]
    table2 = ccl.hyperparameters("bi", "SimCSE-base")
    objective = ccl.ccl(sigma=table2.sigma, temperature=table2.temperature)
    demo = ccl.ModelSettings("minilm-l6", "bi", "mean", 64, "mlp", False).build(seed=0)
    optimizer = torch.optim.AdamW(ccl.param_groups(demo, table2.lr, 0.1, 1e-3))
    demo.train()
    with training_step.same_dropout(0):
        terms = ccl.batch_terms(demo, quads, objective)
    loss = ccl.total(terms, objective)
    loss.backward()
    optimizer.step()
    with training_step.same_dropout(0), torch.no_grad():
        after = ccl.total(ccl.batch_terms(demo, quads, objective), objective)
    assert after.item() < loss.item()
    text = ccl.terms_text(terms, objective)
    assert text.startswith("W-ACL ") and " + BCL " in text and text.endswith(f"= {loss.item():.4f}")
    assert ccl.terms_text(terms, objective.with_settings(weights={**objective.weights, "bcl": 2.0})).count("2 x BCL")


def test_the_protocol_says_when_no_sigma_or_tau_runs(cpu_params):
    rows = {r.detail: r for r in ccl.protocol_rows(_with_plan(_cell(), "class"))}
    assert rows[r"Table 5 $\sigma$"].ours == r"not run in this profile (every CCL run uses Table 2's $\sigma$ = 0.75)"
    assert rows[r"Figure 2 $\tau$"].ours == r"not run in this profile (every CCL run uses Table 2's $\tau$ = 3)"
    cpu = {r.detail: r for r in ccl.protocol_rows(cpu_params)}
    assert cpu[r"Table 5 $\sigma$"].ours == "0, 0.75 (bi-encoder)" and cpu[r"Figure 2 $\tau$"].ours == "3, 10"


def test_the_notebook_opens_short_with_the_pipeline_and_the_main_claim_and_leads_with_it():
    """The takeaway opens with the main claim's verdict; no notebook-chosen headline is left; the protocol table sits
    in the appendix at the end (the opening and the main-claim cell: test_notebook_hygiene)."""
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    code = [c.source for c in cells if c.cell_type == "code"]
    takeaway = next(source for source in code if 'metrics["takeaway"] =' in source)
    assert 'f"{opening} Other claims' in takeaway and "The paper's main claim: " in takeaway
    assert 'main_claim=(backbone, arch) == (backbones[0], "bi")' in "".join(code)
    text = "".join(c.source for c in cells)
    assert "headline_table" not in text and "headline_row" not in text and "headline_of" not in text
    appendix = next(i for i, c in enumerate(cells) if c.source.startswith("## Appendix"))
    assert appendix > next(i for i, c in enumerate(cells) if c.source.startswith("## 9 ·"))
    assert any("protocol_markdown" in c.source for c in cells[appendix:])
