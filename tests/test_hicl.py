"""HiCL (stsnb.papers.hicl): the Section 3.1 queue rule and pooling, the same-sequence relation of Eq. 2 (Table 4),
ESimCSE's repetition and queue, SNCSE's negation, prompt and margin loss, each against a hand check or an
independent loop."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import torch
from synthetic_seeds import fit_result

from stsnb.evaluation import claims as stsnb_claims
from stsnb.evaluation import evaluate
from stsnb.papers import hicl
from stsnb.papers.hicl import efficiency, objectives, segments, variants
from stsnb.teaching import plots
from stsnb.training import losses as L


def cos_np(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# ---- Section 3.1: the queue rule ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "length", "expected"),
    [(1, 32, 1), (31, 32, 1), (32, 32, 1), (33, 32, 2), (64, 32, 2), (65, 32, 3), (131, 32, 5), (11, 5, 3), (7, 1, 7)],
)
def test_segment_count_is_one_plus_floor(n, length, expected):
    assert segments.segment_count(n, length) == expected  # l_i = 1 + floor((|seq_i| - 1) / L), by hand


def test_slice_tokens_queue_rule_by_hand():
    tokens = list(range(11))
    assert segments.slice_tokens(tokens, 5) == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10]]
    assert segments.slice_tokens(tokens, 11) == [tokens]
    assert segments.slice_tokens(tokens[:10], 5) == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]  # last segment may be full


@pytest.mark.parametrize("n", [1, 5, 31, 32, 33, 100])
def test_slices_concatenate_to_the_sequence_and_only_the_last_is_short(n):
    tokens = list(range(1000, 1000 + n))
    pieces = segments.slice_tokens(tokens, 32)
    assert sum(pieces, []) == tokens  # seq_i = concat[seg_i1, ..., seg_il]
    assert all(len(p) == 32 for p in pieces[:-1]) and 1 <= len(pieces[-1]) <= 32


def test_bad_slice_length_and_empty_sequence_raise():
    with pytest.raises(ValueError, match="slice_length"):
        segments.segment_count(10, 0)
    with pytest.raises(ValueError, match="at least 1 token"):
        segments.segment_count(0, 32)
    with pytest.raises(ValueError, match="sequence 1 of the batch is empty"):
        segments.build_segments([[1], []], 4)


def test_build_segments_frames_each_segment_and_counts_sequence_tokens_only():
    template = segments.Template(prefix=(90, 91), suffix=(92,))
    batch = segments.build_segments([[1, 2, 3, 4, 5], [6, 7]], 2, frame=([100], [101]), template=template)
    assert batch.input_ids == [
        [100, 90, 91, 1, 2, 92, 101],
        [100, 90, 91, 3, 4, 92, 101],
        [100, 90, 91, 5, 92, 101],
        [100, 90, 91, 6, 7, 92, 101],
    ]
    assert batch.sequence_ids.tolist() == [0, 0, 0, 1]
    assert batch.lengths.tolist() == [2, 2, 1, 2]
    assert batch.segments_per_sequence.tolist() == [3, 1]
    whole = segments.build_segments([[1, 2, 3, 4, 5], [6, 7]], None)
    assert whole.input_ids == [[1, 2, 3, 4, 5], [6, 7]] and whole.sequence_ids.tolist() == [0, 1]


def test_transform_rewrites_tokens_but_keeps_the_sliced_lengths():
    batch = segments.build_segments([[1, 2, 3]], 2, transform=lambda piece: piece + piece)
    assert batch.input_ids == [[1, 2, 1, 2], [3, 3]]
    assert batch.lengths.tolist() == [2, 1]


# ---- Section 3.1 / Table 3: pooling ------------------------------------------------------------------------------


def test_weighted_pooling_by_hand():
    e = torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [4.0, -4.0]])
    ids = torch.tensor([0, 0, 1, 1])
    lengths = torch.tensor([32, 8, 5, 15])
    weighted = segments.pool_sequences(e, ids, lengths, 2, "weighted")
    # h_0 = (32 e_00 + 8 e_01) / 40, h_1 = (5 e_10 + 15 e_11) / 20
    torch.testing.assert_close(weighted, torch.tensor([[0.8, 0.2], [3.5, -2.5]]))
    unweighted = segments.pool_sequences(e, ids, lengths, 2, "unweighted")
    torch.testing.assert_close(unweighted, torch.tensor([[0.5, 0.5], [3.0, -1.0]]))


def test_pooling_weights_sum_to_one_and_a_single_segment_is_itself():
    rng = np.random.default_rng(0)
    ids = torch.tensor([0, 1, 1, 1, 2])
    lengths = torch.tensor([7, 32, 32, 3, 30])
    for mode in segments.SEGMENT_POOLINGS:
        w = segments.segment_weights(ids, lengths, mode)
        totals = torch.zeros(3, dtype=w.dtype).index_add_(0, ids, w)
        torch.testing.assert_close(totals, torch.ones(3, dtype=w.dtype))
    e = torch.tensor(rng.normal(size=(5, 3)))
    pooled = segments.pool_sequences(e, ids, lengths, 3)
    torch.testing.assert_close(pooled[0], e[0])
    torch.testing.assert_close(pooled[2], e[4])
    with pytest.raises(ValueError, match="at least one segment"):
        segments.pool_sequences(e, ids, lengths, 4)
    with pytest.raises(ValueError, match="segment pooling"):
        segments.segment_weights(ids, lengths, "max")


def test_length_distribution_by_hand():
    shares = segments.length_distribution([10, 32, 33, 64, 65, 600], edges=(32, 64))
    assert shares == pytest.approx({"[0, 32]": 100 * 2 / 6, "(32, 64]": 100 * 2 / 6, "> 64": 100 * 2 / 6})
    assert sum(segments.length_distribution(list(range(1, 600))).values()) == pytest.approx(100.0)


# ---- Eq. 2 with the same-sequence relation of Table 4 -----------------------------------------------------------


def local_np(seg, seg_pos, ids, tau, relation, averaging):
    """Eq. 2 written out per anchor; ``relation`` says what the anchor's sibling segments are."""
    counts = {k: int(np.sum(ids == k)) for k in set(ids.tolist())}
    out = []
    for a in range(len(seg)):
        numerator = math.exp(cos_np(seg[a], seg_pos[a]) / tau)
        negatives = 0.0
        for b in range(len(seg)):
            if b == a:
                continue
            term = math.exp(cos_np(seg[a], seg_pos[b]) / tau)
            if ids[b] == ids[a]:
                if relation == "neither":
                    continue
                if relation == "positive":
                    numerator += term
                    continue
            negatives += (1.0 / counts[ids[b]] if averaging else 1.0) * term
        out.append(-math.log(numerator / (numerator + negatives)))
    return np.array(out)


@pytest.mark.parametrize("relation", ["neither", "negative", "positive"])
@pytest.mark.parametrize("averaging", [False, True])
def test_local_loss_same_sequence_mask_matches_eq2_loops(relation, averaging):
    rng = np.random.default_rng(1)
    ids = np.array([0, 0, 0, 1, 2, 2])  # a small batch: sequence 0 has 3 segments, 1 has 1, 2 has 2
    seg, seg_pos = rng.normal(size=(6, 4)), rng.normal(size=(6, 4))
    got = L.hicl_local_loss(
        torch.tensor(seg),
        torch.tensor(seg_pos),
        torch.tensor(ids),
        0.1,
        "averaging" if averaging else "summation",
        reduction="none",
        same_sequence=relation,
    )
    np.testing.assert_allclose(got.numpy(), local_np(seg, seg_pos, ids, 0.1, relation, averaging), rtol=1e-9)


def test_the_three_relations_differ_only_for_sequences_with_several_segments():
    rng = np.random.default_rng(2)
    ids = torch.tensor([0, 0, 1])
    seg, seg_pos = torch.tensor(rng.normal(size=(3, 4))), torch.tensor(rng.normal(size=(3, 4)))
    values = {
        r: L.hicl_local_loss(seg, seg_pos, ids, 0.1, reduction="none", same_sequence=r)
        for r in ("neither", "negative", "positive")
    }
    assert not torch.allclose(values["neither"][:2], values["negative"][:2])
    assert not torch.allclose(values["neither"][:2], values["positive"][:2])
    for r in ("negative", "positive"):  # sequence 1 has one segment: no sibling, same value
        torch.testing.assert_close(values[r][2], values["neither"][2])
    with pytest.raises(ValueError, match="same_sequence must be one of"):
        L.hicl_local_loss(seg, seg_pos, ids, same_sequence="both")


def test_hicl_objective_mixes_local_and_the_given_global_term():
    rng = np.random.default_rng(3)
    ids = np.array([0, 0, 1, 2])
    seg, seg_pos = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    settings = objectives.ObjectiveSettings(alpha=0.15, temperature=0.05, same_sequence="negative")
    total, local = objectives.hicl_objective(
        torch.tensor(seg), torch.tensor(seg_pos), torch.tensor(ids), torch.tensor(2.0, dtype=torch.float64), settings
    )
    expected_local = local_np(seg, seg_pos, ids, 0.05, "negative", False).mean()
    assert local.item() == pytest.approx(expected_local, rel=1e-9)
    assert total.item() == pytest.approx(0.15 * expected_local + 0.85 * 2.0, rel=1e-9)  # alpha L_l + (1-alpha) L_g


# ---- ESimCSE: repetition and momentum queue ----------------------------------------------------------------------


def test_repetition_count_stays_in_esimcse_range():
    rng = random.Random(0)
    for n in (1, 2, 5, 20, 100):
        bound = min(10, n, max(2, int(0.32 * n)))  # range(bound): 0 .. bound - 1
        draws = {variants.repetition_count(n, 0.32, rng) for _ in range(400)}
        assert draws == set(range(bound)), (n, draws)
    assert variants.repetition_count(0, 0.32, rng) == 0
    with pytest.raises(ValueError, match="dup_rate"):
        variants.repetition_count(5, 1.5, rng)


def test_repeat_tokens_doubles_exactly_the_chosen_positions():
    rng = random.Random(3)
    units = list(range(100, 120))
    for _ in range(50):
        out, positions = variants.repeat_tokens(units, 0.32, rng)
        assert len(out) == len(units) + len(positions) and len(set(positions)) == len(positions)
        expected = [u for i, u in enumerate(units) for _ in range(2 if i in positions else 1)]
        assert out == expected


def tiny_backbone():
    from transformers import LlamaConfig, LlamaModel

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=50,
        hidden_size=8,
        intermediate_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
    )
    return LlamaModel(config)


def test_momentum_queue_update_and_fifo():
    online = tiny_backbone()
    queue = variants.MomentumQueue(online, size=5, momentum=0.9)
    assert all(not p.requires_grad for p in queue.backbone.parameters())
    before = [p.detach().clone() for p in queue.backbone.parameters()]
    with torch.no_grad():
        for p in online.parameters():
            p.add_(1.0)
    queue.update(online)
    for old, new, theirs in zip(before, queue.backbone.parameters(), online.parameters(), strict=True):
        torch.testing.assert_close(new, 0.9 * old + 0.1 * theirs)  # m <- lambda m + (1 - lambda) theta
    queue.train()
    assert not queue.backbone.training  # the momentum encoder never uses dropout
    for start in (0, 3, 6):
        queue.push(torch.arange(start, start + 3, dtype=torch.float32)[:, None].expand(3, 8))
    assert queue.queue[:, 0].tolist() == [4, 5, 6, 7, 8]  # the newest 5 rows, oldest first


def test_queue_info_nce_matches_a_loop():
    rng = np.random.default_rng(4)
    a, p, q = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    got = objectives.queue_info_nce(torch.tensor(a), torch.tensor(p), torch.tensor(q), 0.05)
    expected = []
    for i in range(3):
        terms = [math.exp(cos_np(a[i], p[j]) / 0.05) for j in range(3)] + [
            math.exp(cos_np(a[i], q[k]) / 0.05) for k in range(5)
        ]
        expected.append(-math.log(math.exp(cos_np(a[i], p[i]) / 0.05) / sum(terms)))
    assert got.item() == pytest.approx(np.mean(expected), rel=1e-9)
    empty = objectives.queue_info_nce(torch.tensor(a), torch.tensor(p), torch.zeros(0, 4, dtype=torch.float64))
    torch.testing.assert_close(empty, L.info_nce(torch.tensor(a), torch.tensor(p)))


# ---- SNCSE: negation, prompt, bidirectional margin loss ---------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "negated", "rule"),
    [
        ("He is a doctor .", "He is not a doctor .", "after auxiliary"),
        ("The film was not released in Europe .", "The film was released in Europe .", "remove not"),
        ("They could have won the match .", "They could not have won the match .", "after auxiliary"),
        ("Cats sleep all day .", "Not Cats sleep all day .", "prefix Not"),
        ("It Is raining .", "It Is not raining .", "after auxiliary"),
    ],
)
def test_negate_follows_sncse_rules(sentence, negated, rule):
    assert variants.negate(sentence) == (negated, rule)


def test_prompt_for_a_decoder_ends_after_means_and_keeps_the_slot():
    prompt = variants.prompt_for_backbone(variants.SNCSE_ANCHOR_PROMPT, tokenizer=None, causal=True)
    assert prompt == 'This sentence : "[X]" means'
    with pytest.raises(ValueError, match="one \\[X\\] and one \\[MASK\\]"):
        variants.prompt_for_backbone("no slots", None, True)


def test_bml_loss_matches_its_formula():
    rng = np.random.default_rng(5)
    h, hp, hn = (rng.normal(size=(4, 3)) for _ in range(3))
    expected = np.mean(
        [
            max(0.0, (cos_np(h[i], hn[i]) - cos_np(h[i], hp[i])) + 0.1)
            + max(0.0, -(cos_np(h[i], hn[i]) - cos_np(h[i], hp[i])) - 0.3)
            for i in range(4)
        ]
    )
    got = objectives.bml_loss(torch.tensor(h), torch.tensor(hp), torch.tensor(hn), 0.1, 0.3)
    assert got.item() == pytest.approx(expected, rel=1e-9)


def test_package_exports():
    assert hicl.segment_count(33, 32) == 2


# ---- the SimCSE probe: does the baseline move the backbone at all? -------------------------------------------------


@pytest.mark.slow
def test_simcse_probe_scores_last_weights_against_the_untrained_backbone_on_the_same_pairs(data_dir):
    from stsnb import data

    sentences = data.sample(data.load_wiki(), 16, 0)
    dev = data.sample(list(data.load_stsb("dev")), 24, 0)
    backbone = hicl.BackboneSettings("smollm2-135m-l6")
    row = hicl.simcse_moves(hicl.ProbeSetting(lr=1e-3, dropout=0.1), backbone, sentences, dev, batch_size=8)
    assert row["steps"] == 2  # one epoch of 16 sentences in batches of 8, no selection
    assert row["verdict"] in ("supported", "contradicted", "unresolved")
    assert row["difference"] == pytest.approx(row["dev_after"] - row["dev_before"], abs=1e-9)  # one task: plain
    assert row["low"] <= row["difference"] <= row["high"]
    assert row["dev_after"] != row["dev_before"]  # lr 1e-3 changes the weights: the last step is what is scored
    untrained = evaluate.dev_predictions(backbone.load(), dev)
    assert untrained["STS-B dev"][1].tolist() == pytest.approx(
        evaluate.dev_predictions(backbone.load(), dev)["STS-B dev"][1].tolist()
    )  # the before-score is deterministic (eval mode, no dropout)
    with pytest.raises(ValueError, match="two batches"):
        hicl.simcse_moves(hicl.ProbeSetting(lr=1e-4), backbone, sentences[:8], dev, batch_size=8)


# ---- Table 1 claims: the paper's direction, training seeds, preconditions ----------------------------------------


@pytest.fixture(scope="module")
def gold_by_task(data_dir):
    """Gold scores of the first 300 pairs of the real STS-B and SICK-R test sets."""
    from stsnb import data

    return {
        "STSBenchmark": np.array([p.score for p in list(data.load_stsb("test", data_dir=data_dir))[:300]]),
        "SICKRelatedness": np.array([p.score for p in list(data.load_sick("test", data_dir=data_dir))[:300]]),
    }


def _noisy(gold_by_task, noise: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {t: (g, g + rng.normal(0, noise * g.std(), len(g))) for t, g in gold_by_task.items()}


def _run(predictions, *, seed=0, best_step=20, weight_change=1e-3, method="simcse", on=False, moved="trained"):
    """A scored run with given predictions on real test pairs and dev records that show it ``moved`` from its start
    (``synthetic_seeds.fit_result``; the claim logic under test needs nothing else)."""
    result = fit_result(moved, step=best_step, steps=40, change=weight_change, dev=70.0)
    scores = hicl.spearman_scores(predictions)
    return hicl.RunOutcome(method, on, seed, predictions, scores, result, [], 12.0, 9.0)


def test_histories_are_grouped_by_method_and_labelled_by_arm_and_seed():
    from stsnb.training.config import TrainResult

    def outcome(method, on, seed, dev):
        history = [{"step": 0, "dev": dev}, {"step": 10, "epoch": 0, "loss": 3.2}, {"step": 10, "dev": dev + 1}]
        return hicl.RunOutcome(method, on, seed, {}, {}, TrainResult(10, dev + 1, 10, 1.0, history), [], 1.0)

    outcomes = {
        ("simcse", "baseline", 0): outcome("simcse", False, 0, 66.5),
        ("simcse", "+HiCL", 0): outcome("simcse", True, 0, 66.6),
        ("sncse", "baseline", 0): outcome("sncse", False, 0, 27.0),
    }
    grouped = hicl.histories_by_method(outcomes)
    assert list(grouped) == ["simcse", "sncse"]
    assert list(grouped["simcse"]) == ["baseline seed 0", "+HiCL seed 0"]
    assert grouped["sncse"]["baseline seed 0"] == outcomes[("sncse", "baseline", 0)].result.history


def test_methods_line_names_what_runs_and_what_does_not():
    assert hicl.methods_line(["simcse"], [0], [0]) == (
        "Table 1 in this run, each baseline without and with HiCL: SimCSE on seed 0; not run: ESimCSE, SNCSE "
        "(`methods`)."
    )
    line = hicl.methods_line(["simcse", "esimcse", "sncse"], [0, 1, 2], [0])
    assert line.endswith("SimCSE on seeds 0, 1, 2; ESimCSE on seed 0; SNCSE on seed 0.")


def test_every_table1_direction_is_the_sign_of_the_papers_own_row():
    rows = [name for name in hicl.TABLE1 if not name.endswith("+HiCL")]
    for row in rows:
        gain = hicl.TABLE1[f"{row} +HiCL"][-1] - hicl.TABLE1[row][-1]
        assert hicl.table1_gain(row) == pytest.approx(gain)
        assert hicl.paper_direction(hicl.table1_gain(row)) == (1 if gain > 0 else -1)
    negative = sorted(r for r in rows if hicl.table1_gain(r) < 0)
    # Section 4.2 (iii): HiCL "marginally underperforms (<= 0.1) on three models employing the -base architecture"
    assert negative == ["SNCSE-BERT-base", "SNCSE-RoBERTa-base", "SimCSE-RoBERTa-base"]
    assert hicl.table1_gain("SNCSE-BERT-base") == pytest.approx(78.60 - 78.70)
    assert hicl.paper_direction(0.0) == 0
    with pytest.raises(ValueError, match="paper_difference"):
        hicl.paper_direction(float("nan"))
    with pytest.raises(ValueError, match="paper_backbone"):
        hicl.paper_row("simcse", "BERT-huge")


def test_a_negative_paper_row_is_equivalence_within_the_papers_marginal_tenth(gold_by_task):
    """Section 4.2 (iii): the -base rows where HiCL is lower "marginally underperform (<= 0.1)": no direction claim,
    equivalence within +-0.1, which says it is unreachable with intervals as wide as ours; a gain row is a direction
    claim with half the paper's gain as its smallest effect, and is the main claim for SimCSE only."""
    baseline = {0: _run(_noisy(gold_by_task, 0.5, 1), method="sncse")}
    worse = {0: _run(_noisy(gold_by_task, 1.5, 2), method="sncse", on=True)}
    sncse = hicl.plus_hicl_claim("sncse", "BERT-base", baseline, worse, n_resamples=300)
    assert sncse["claim"] == "Table 1 (SNCSE-BERT-base): +HiCL is within 0.1 of SNCSE"
    assert sncse["test"] == "equivalence" and sncse["margin"] == hicl.MARGINAL == 0.1
    assert sncse["paper_difference"] == pytest.approx(-0.10) and "marginally underperforms" in sncse["margin_reason"]
    assert sncse["high"] < -0.1 and sncse["verdict"] == "contradicted"  # wholly below -0.1: more than marginal
    assert sncse["reachability"].startswith("equivalence not reachable at this size")
    assert not sncse["main_claim"] and "seeds_and_pairs" not in sncse  # one seed: the per-seed interval is all
    assert all(p["holds"] for p in sncse["preconditions"])
    simcse = hicl.plus_hicl_claim("simcse", "BERT-base", baseline, worse, n_resamples=300)
    assert simcse["paper_direction"] == +1 and simcse["paper_difference"] == pytest.approx(1.54)
    assert simcse["claim"] == "Table 1 (SimCSE-BERT-base): +HiCL beats SimCSE" and simcse["main_claim"]
    assert (
        simcse["smallest_effect"] == pytest.approx(0.77) and "half Table 1's +1.54" in simcse["smallest_effect_reason"]
    )
    assert simcse["verdict"] == "contradicted"  # the same runs against a gain row, the estimate beyond 0.77
    esimcse = hicl.plus_hicl_claim("esimcse", "BERT-base", baseline, worse, n_resamples=300)
    assert esimcse["smallest_effect"] == 0.1 and not esimcse["main_claim"]  # half of +0.13 is under the marginal 0.1


def test_smallest_effect_is_half_the_papers_gain_but_never_under_the_marginal_tenth():
    assert hicl.smallest_effect(1.54)[0] == pytest.approx(0.77)
    size, why = hicl.smallest_effect(0.13)
    assert size == 0.1 and "calls marginal" in why and "+0.13" in why
    from stsnb.papers.hicl.claims import MAIN_CLAIMS

    assert [m.statement.split(":")[0] for m in MAIN_CLAIMS] == ["Table 1", "Section 3.3"]


def test_an_arm_that_did_not_train_on_dev_leaves_its_seed_out_and_a_one_seed_claim_untested(gold_by_task):
    before = _noisy(gold_by_task, 1.0, 0)
    stuck = {0: _run(before, best_step=0, weight_change=0.0, moved="stayed")}  # selection kept step 0: untrained
    better = {0: _run(_noisy(gold_by_task, 0.3, 3), on=True)}
    row = hicl.plus_hicl_claim("simcse", "BERT-base", stuck, better, n_resamples=300)
    assert row["low"] > 0  # its interval alone would read "supported"
    assert row["verdict"] == "not tested" and row["seeds_left_out"] == {"seed 0": ANY_TEXT}
    assert "'SimCSE trained on dev' does not hold" in row["not_tested_because"]
    assert "selected step 0 of 40" in row["not_tested_because"]
    assert [p["name"] for p in row["preconditions"] if not p["holds"]][0] == "SimCSE trained on dev"
    check = hicl.untrained_check("simcse", before, stuck, n_resamples=300)  # a check, never a gate
    assert check["kind"] == "check" and check["difference"] == 0.0 and check["preconditions"] == []
    assert check["claim"] == "SimCSE minus the untrained backbone on the test pairs"
    assert check["paper_quote"] == hicl.quotes.BASELINES


class _AnyText(str):
    def __eq__(self, other):
        return isinstance(other, str) and bool(other)

    __hash__ = str.__hash__


ANY_TEXT = _AnyText("any reason")


def test_every_kept_training_seed_gets_an_interval_and_all_must_agree(gold_by_task):
    baseline = {s: _run(_noisy(gold_by_task, 1.0, 10 + s), seed=s) for s in (0, 1, 2)}
    plus = {s: _run(_noisy(gold_by_task, 0.4, 20 + s), seed=s, on=True) for s in (0, 1, 2)}
    row = hicl.plus_hicl_claim("simcse", "BERT-base", baseline, plus, n_resamples=300)
    assert row["seeds"] == 3 and [e["seed_run"] for e in row["per_seed"]] == ["seed 0", "seed 1", "seed 2"]
    assert row["verdict"] == "supported" and stsnb_claims.verdict_text(row) == "supported (3 seeds)"
    assert row["kind"] == "paper" and row["paper_quote"] == hicl.quotes.TABLE1 and row["main_claim"]
    both = row["seeds_and_pairs"]  # the seeds-and-pairs interval beside the per-seed rule
    assert both["seeds"] == 3 and both["difference"] == pytest.approx(row["difference"]) and both["low"] > 0
    assert [g["arm"] for g in row["dev_gates"]] == ["SimCSE", "SimCSE+HiCL"]
    plus[1] = _run(_noisy(gold_by_task, 0.4, 21), seed=1, on=True, moved="lost")  # +HiCL below untrained on dev
    kept = hicl.plus_hicl_claim("simcse", "BERT-base", baseline, plus, n_resamples=300)
    assert kept["seeds"] == 2 and kept["seeds_run"] == 3 and stsnb_claims.seeds_text(kept) == "2 of 3 seeds"
    assert list(kept["seeds_left_out"]) == ["seed 1"] and "SimCSE+HiCL" in kept["seeds_left_out"]["seed 1"]
    assert kept["seeds_and_pairs"]["seeds"] == 2  # over the kept seeds only
    plus[2] = _run(_noisy(gold_by_task, 1.6, 32), seed=2, on=True)  # one kept seed on the other side: no verdict
    assert hicl.plus_hicl_claim("simcse", "BERT-base", baseline, plus, 300)["verdict"] == "unresolved"
    with pytest.raises(ValueError, match="same seeds"):
        hicl.plus_hicl_claim("simcse", "BERT-base", baseline, {0: plus[0]}, 300)


def test_the_main_claims_find_their_rows_and_open_the_takeaway(gold_by_task):
    from stsnb.evaluation import main_claims

    baseline = {0: _run(_noisy(gold_by_task, 1.0, 10))}
    plus = {0: _run(_noisy(gold_by_task, 0.4, 20), on=True)}
    simcse = hicl.plus_hicl_claim("simcse", "BERT-base", baseline, plus, n_resamples=300)
    efficiency_row = hicl.table12.efficiency_claim(_timing(*TIMED))
    rows = [efficiency_row, simcse]
    effectiveness, speed = main_claims.main_claims_of("30_hicl")
    assert effectiveness.row_in(rows) is simcse and speed.row_in(rows) is efficiency_row
    opening = hicl.main_claims_opening(rows)
    assert opening.startswith("The paper's main claim: Table 1: SimCSE+HiCL beats SimCSE: supported (1 seed, ")
    assert "The paper's main claim: Section 3.3: a SimCSE training step in segments is faster than" in opening
    assert hicl.main_claims_opening([]).count("not run in this profile") == 2


def test_training_speedup_is_per_seed_time_over_time_and_table12_whole_over_segments():
    got = efficiency.training_speedup({0: 120.0, 1: 90.0}, {0: 60.0, 1: 60.0})
    assert got["per_seed"] == {0: 2.0, 1: 1.5} and got["mean"] == pytest.approx(1.75) and got["seeds"] == 2
    assert got["median"] == pytest.approx(1.75)
    three = efficiency.training_speedup({0: 2.05, 1: 0.82, 2: 0.77}, {0: 1.0, 1: 1.0, 2: 1.0})
    assert three["median"] == pytest.approx(0.82) and three["mean"] == pytest.approx(1.2133, abs=1e-4)
    sentence = efficiency.training_sentence(three, 1.26, "BERT-base")
    assert "0.82x (median of 3 seeds: seed 0 2.05x, seed 1 0.82x, seed 2 0.77x)" in sentence
    assert (got["min"], got["max"]) == (1.5, 2.0)
    assert hicl.table12_speedup("RoBERTa-large") == pytest.approx(354.5 / 152.0)
    assert hicl.table12_speedup() == pytest.approx(87.5 / 69.4)  # BERT-base
    with pytest.raises(ValueError, match="same non-empty seeds"):
        efficiency.training_speedup({0: 1.0}, {1: 1.0})
    with pytest.raises(ValueError, match="positive seconds"):
        efficiency.training_speedup({0: 1.0}, {0: 0.0})
    with pytest.raises(ValueError, match="Table 12 has"):
        hicl.table12_speedup("GPT-2")


def test_comparability_says_direction_only_unless_the_papers_setting():
    level, why = hicl.comparability("smollm2-135m-l6", "BERT-base", 1280, 100)
    assert level == "direction only" and "bert-base-uncased" in why and "1,280" in why and "100 test pairs" in why
    assert hicl.comparability("bert-base-uncased", "BERT-base", 1_000_000, None)[0] == "yes"
    assert hicl.comparability("bert-base-uncased", "BERT-base", 11914, None)[0] == "direction only"


@pytest.mark.long  # a real training run (4 s): off the default tier
@pytest.mark.slow
def test_a_real_run_records_training_time_apart_from_its_dev_evaluations(data_dir):
    from stsnb import data
    from stsnb.training.config import TrainConfig

    sentences = data.sample(data.load_wiki(), 16, 0)
    dev = data.sample(list(data.load_stsb("dev")), 24, 0)
    config = TrainConfig(batch_size=8, lr=1e-3, eval_every=1, drop_last=True, progress=False)
    outcome = hicl.run_training(
        hicl.BackboneSettings("smollm2-135m-l6"),
        sentences,
        "simcse",
        hicl.HiclSettings(enabled=True),
        hicl.ObjectiveSettings(alpha=0.15),
        config,
        dev,
        eval_tasks="stsb",
        eval_max_pairs=24,
    )
    assert [step for step, _ in outcome.dev_curve] == [0, 1, 2]  # three dev evaluations, step 0 included
    assert 0 < outcome.train_seconds < outcome.result.seconds < outcome.seconds
    assert outcome.result.weight_change is not None
    gate = hicl.dev_gate("SimCSE+HiCL", {0: outcome})  # read from the fit's own dev curve, step 0 the untrained
    (seed,) = gate.seeds
    assert seed.selected_step == outcome.result.best_step and seed.total_steps == 2
    first = outcome.result.history[0]["dev"]
    assert seed.dev_gain == pytest.approx(outcome.result.best_score - first)  # over the fit's own step 0
    assert seed.evaluations == 2 and seed.noise_bound is not None
    assert seed.trained == (seed.left_start and seed.dev_gain > seed.noise_bound)


def test_surprises_and_takeaway_are_written_from_the_run(gold_by_task):
    stuck = _run(_noisy(gold_by_task, 1.0, 0), best_step=0, weight_change=0.0, method="esimcse")
    stuck.losses = [{"global": 3.2}, {"global": 3.9}]
    notes = hicl.results.surprises(stuck, queue_size=80, batch_size=32)
    assert notes[0].startswith("selection kept step 0") and notes[1] == "no trainable weight changed"
    assert "rose from 3.200 to 3.900" in notes[2] and "fills in 3 steps of 32" in notes[2]
    assert hicl.results.surprises(_run(_noisy(gold_by_task, 1.0, 0))) == []
    row = {"method": "simcse", "interval": "+0.10 [-0.20, +0.40]", "verdict": "unresolved", "seeds": 3}
    row.update(paper_difference=1.54, paper_row="SimCSE-BERT-base", preconditions=[])
    verdicts = {"unresolved": 1, "not tested": 2}
    text = hicl.results.takeaway("The paper's main claim: X.", row, "b", "100 pairs", verdicts, {"median": 1.8}, 1.26)
    assert text == (
        "The paper's main claim: X. Table 1 in detail: SimCSE+HiCL minus SimCSE on b (100 pairs): +0.10 [-0.20, "
        "+0.40] seven-task Spearman x100, unresolved (3 seeds), against +1.54 in Table 1's SimCSE-BERT-base; SimCSE / "
        "SimCSE+HiCL training time 1.80x, the median of its seeds (paper's Table 12: 1.26x). 2 of 3 claims not tested."
    )
    row["seeds_and_pairs"] = {"difference": 0.1, "low": -0.5, "high": 0.7}
    text = hicl.results.takeaway("M.", row, "b", "100 pairs", {"unresolved": 1}, {"median": 0.65}, 1.26, 32)
    assert "+0.10 [-0.20, +0.40] (seeds and pairs [-0.50, +0.70]) seven-task" in text
    assert "SimCSE cut at 32 tokens / SimCSE+HiCL, 0.65x, the median of its seeds (the paper's protocol" in text
    del row["seeds_and_pairs"]
    row.update(verdict="not tested", preconditions=[{"name": "SimCSE trained on dev", "holds": False}])
    text = hicl.results.takeaway("M.", row, "b", "100 pairs", {"not tested": 1}, None, 1.26)
    assert "not tested (3 seeds; does not hold: SimCSE trained on dev), against +1.54" in text
    assert "Table 12" not in text
    assert hicl.results.takeaway("M.", None, "b", "100 pairs", {"supported": 1}, None, 1.26) == (
        "M. 0 of 1 claims not tested."
    )


def test_step_predictions_and_table_on_synthetic_timings():
    rows = [
        {"n_tokens": n, "mode": mode, "seconds": t, "slice_length": 32, "peak_added_mb": mb}
        for n, mode, t, mb in (
            (128, "whole", 1.0, 100.0),
            (128, "segments", 1.25, 140.0),
            (512, "whole", 8.0, 900.0),
            (512, "segments", 2.0, 300.0),
        )
    ]
    cost = efficiency.predictions(rows)
    assert cost[512]["measured_ratio"] == 4.0 and cost[512]["quadratic_ratio"] == 16
    # two lengths: a fit of two terms would pass through both whole times exactly and predict nothing
    assert math.isnan(cost[512]["fitted_ratio"]) and math.isnan(cost[512]["fit_a"])
    table = efficiency.step_table(cost).splitlines()
    assert len(table) == 3 and table[2].split()[:6] == ["512", "8.000", "2.000", "4.00", "16.0", "-"]
    assert efficiency.step_sentence(cost, longest_training=128) == (
        "one step, whole over in segments, measured at 128 tokens: segments 1.25x slower (n / L = 4); 512 tokens "
        "(longer than any training sentence): 4.00x faster in segments (n / L = 16); no fit: 2 lengths would fix its "
        "two terms exactly, so it would predict nothing it was not given (3 or more lengths are needed)"
    )
    grown = efficiency.growth(cost)
    assert grown["exponent"] == pytest.approx(1.5) and grown["between"] == {(128, 512): pytest.approx(1.5)}
    assert efficiency.growth_sentence(cost) == (
        "whole-sequence time grew as n^1.50 from 128 to 512 tokens (128-512 tokens n^1.50): slower than quadratic (a "
        "pure quadratic is n^2, work linear in the tokens n^1); in segments it grew as n^0.34"
    )
    assert efficiency.step_surprises(cost) == [
        "at 128 tokens the segments' step took 1.250 s against 1.000 s whole (each the median of the timed steps)",
        "at 128 tokens the segments' step added 140 MB to the process against 100 MB whole",
    ]
    three = rows + [
        {"n_tokens": 256, "mode": m, "seconds": t, "slice_length": 32, "peak_added_mb": 1.0, "seconds_all": [t, t]}
        for m, t in (("whole", 3.0), ("segments", 3.2))
    ]
    fitted = efficiency.predictions(three)
    a, b = fitted[512]["fit_a"], fitted[512]["fit_b"]
    assert fitted[512]["fitted_ratio"] == pytest.approx((a * 512 + b * 512**2) / (a * 512 + b * 512 * 32))
    assert "the linear + quadratic fit gives" in efficiency.step_sentence(fitted)
    assert "256 tokens: segments 1.07x slower (n / L = 8)" in efficiency.step_sentence(fitted)
    quadratic = {n: {"whole_s": (n / 64) ** 2, "segments_s": n / 64} for n in (64, 128, 256)}
    assert "about quadratic" in efficiency.growth_sentence(quadratic)
    assert efficiency.growth(quadratic)["between"][(128, 256)] == pytest.approx(2.0)
    assert "(each the median of 2 timed steps)" in efficiency.step_surprises(fitted)[2]


def test_the_step_figure_has_plain_ticks_and_no_fit_through_two_lengths():
    rows = [
        {"n_tokens": n, "mode": mode, "seconds": t, "slice_length": 32, "peak_added_mb": 1.0}
        for n, mode, t in ((128, "whole", 0.94), (128, "segments", 0.67), (256, "whole", 2.0), (256, "segments", 2.1))
    ]
    fig, axes = plots.figure(ncols=2, width=13)
    efficiency.plot_step_costs(axes, efficiency.predictions(rows), 32, 4)
    assert not any("fit" in line.get_label() for line in axes[1].get_lines())
    fig.canvas.draw()
    for ax in axes:
        labels = [t.get_text() for t in ax.get_yticklabels() if t.get_visible() and t.get_text()]
        assert labels and not any("times" in t or "^" in t for t in labels)  # 1, 2, 5: not 4 x 10^0
    assert plots.figure_problems(fig) == []


def _timing(padded, whole, segments, longest=(20, 70), counts=(32, 60), tokens=(400, 900)):
    """A ``table12.timed_steps`` result: per mode a list of passes, each the seconds of its batches."""
    return {
        "seconds": {"padded": padded, "whole": whole, "segments": segments},
        "batch_longest": list(longest),
        "batch_tokens": list(tokens),
        "batch_segments": list(counts),
        "batch_size": 32,
        "n_batches": len(longest),
        "repeats": len(whole),
        "max_length": 128,
        "slice_length": 32,
    }


TIMED = ([[3.0, 3.1], [2.9, 3.2]], [[2.0, 2.1], [1.9, 2.2]], [[1.5, 1.6], [1.4, 1.7]])  # passes: 6.1, 4.1, 3.1 s


def test_the_efficiency_main_claim_measures_what_segments_save_beyond_padding():
    """Table 12 on the training batches: the median pass whole in length-sorted chunks minus in segments, the range
    over the passes, the smallest effect half Table 12's saving of the median whole pass; padding's cost is a check
    row of its own; not tested with one pass per mode."""
    from stsnb.papers.hicl import table12

    timing = _timing(*TIMED)
    row = table12.efficiency_claim(timing, "BERT-base")
    assert row["claim"] == table12.EFFICIENCY_CLAIM and row["main_claim"] and row["kind"] == "paper"
    assert "beyond padding" in row["measures"] and "without padding waste" in row["claim"]
    assert (row["difference"], row["low"], row["high"]) == pytest.approx((1.0, 1.0, 1.0))
    assert row["verdict"] == "supported" and row["paper_quote"] == hicl.quotes.EQUAL_TRUNCATION
    saving = 1 - 69.4 / 87.5
    assert (
        row["smallest_effect"] == pytest.approx(4.1 * saving / 2)
        and "Table 12 reports for SimCSE-BERT-base (21%)" in row["smallest_effect_reason"]
    )
    assert row["ratio"] == pytest.approx(4.1 / 3.1) and row["paper_ratio"] == pytest.approx(87.5 / 69.4)
    assert stsnb_claims.is_timing_range(row) and stsnb_claims.interval_counts([row]).timing_ranges == 1
    assert stsnb_claims.provisional(row)  # one session on one machine
    line = table12.efficiency_line(row)
    assert line.startswith(
        "SimCSE training steps on 2 batches of 32 training sentences, every mode cut at 128 tokens, took 6.10 s per "
        "pass padded to each batch's longest (the paper's baseline), 4.10 s whole in length-sorted chunks and 3.10 s "
        "in segments of L = 32: against the padded baseline segments save +3.00 s (1.97x), of which padding is "
        "+2.00 s and the rest +1.00 s (1.32x, the main claim"
    )
    padding = table12.padding_row(timing, "BERT-base")
    assert padding["kind"] == "check" and (padding["difference"], padding["verdict"]) == (
        pytest.approx(2.0),
        "supported",
    )
    assert padding["padding_share"] == pytest.approx(1 - (400 + 900) / (32 * 20 + 32 * 70))
    table = table12.batch_table(timing).splitlines()
    assert table[1].split() == ["0", "20", "38%", "32", "2.95", "1.95", "1.45", "1.34"]
    alike = _timing([[3.0, 3.1], [3.0, 3.1]], [[3.0, 3.1], [3.0, 3.1]], [[3.0, 3.09], [3.0, 3.12]])
    same = table12.efficiency_claim(alike, "BERT-base")
    assert same["verdict"] == "no meaningful effect"  # within half Table 12's saving either way
    once = table12.efficiency_claim(_timing([[3.0, 3.1]], [[3.0, 3.1]], [[3.2, 3.4]]), "BERT-base")
    assert once["verdict"] == "not tested" and "at least two passes" in once["not_tested_because"]
    with pytest.raises(ValueError, match="Table 12 has"):
        table12.table12_saving("GPT-2")


def test_the_fixed_length_claim_times_attention_at_the_longest_length():
    from stsnb.papers.hicl import table12

    rows = [
        {"n_tokens": n, "mode": m, "seconds_all": t, "slice_length": 32, "batch_size": 4}
        for n, m, t in ((128, "whole", [1.0, 1.1]), (128, "segments", [1.0, 1.05]), (512, "whole", [8.0, 8.4]))
    ]
    rows.append({"n_tokens": 512, "mode": "segments", "seconds_all": [2.0, 2.2], "slice_length": 32, "batch_size": 4})
    row = table12.fixed_length_claim(rows, "BERT-base")
    assert row["n_tokens"] == 512 and row["claim"].startswith("Section 3.3 at 512 tokens") and not row["main_claim"]
    assert (row["difference"], row["low"], row["high"]) == pytest.approx((6.1, 5.8, 6.4))
    assert row["verdict"] == "supported" and "attention" in row["measures"]
    assert table12.fixed_length_claim(rows[:1], "BERT-base") is None


def test_the_timed_batches_are_drawn_as_an_epoch_deals_them():
    from stsnb.papers.hicl import table12

    batches = table12._batches(list(range(100)), 32, 2, seed=0)
    assert [len(b) for b in batches] == [32, 32] and len({x for b in batches for x in b}) == 64
    assert len(table12._batches(list(range(100)), 32, None, seed=0)) == 3  # every full batch
    with pytest.raises(ValueError, match="n_batches must be 1..3"):
        table12._batches(list(range(100)), 32, 4, seed=0)


@pytest.mark.slow
def test_timed_steps_run_both_modes_on_the_same_batches(data_dir):
    from stsnb import data
    from stsnb.papers.hicl import table12

    sentences = data.sample(data.load_wiki(), 16, 0)
    timing = table12.timed_steps(
        hicl.BackboneSettings("tiny-random-bert", dropout=None),
        sentences,
        max_length=48,
        batch_size=4,
        n_batches=2,
        repeats=2,
        hicl=hicl.HiclSettings(True, 8),
        objective=hicl.ObjectiveSettings(alpha=0.15),
        lr=1e-4,
    )
    assert set(timing["seconds"]) == {"padded", "whole", "segments"}
    assert [len(p) for p in timing["seconds"]["whole"]] == [2, 2] and len(timing["seconds"]["segments"]) == 2
    assert all(t > 0 for mode in timing["seconds"].values() for p in mode for t in p)
    assert all(c >= 4 for c in timing["batch_segments"]) and max(timing["batch_longest"]) <= 48
    assert table12.efficiency_claim(timing)["verdict"] != "not tested"
