"""Pcc-tuning's paper module: the Table 3 templates, Eq. 8 and Eq. 9 as the package computes them, the control of
stage 2 (Eq. 8's form on scored pairs), the corpora and the matched de-duplication arms on real data, QLoRA on CPU,
the transfer probe on real embeddings, stage 2 restarting from the stage-1 adapter, the claims' preconditions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from synthetic_seeds import fit_result

from stsnb import data
from stsnb.evaluation import power, verdict_rules
from stsnb.models import loading as models
from stsnb.papers import pcc_tuning


def test_templates_are_exactly_pcc_tuning_table_3():
    sentence = "A cat."
    assert models.apply_template(sentence, pcc_tuning.template("eol")) == 'This sentence : "A cat." means in one word:"'
    assert models.apply_template(sentence, pcc_tuning.template("sth")) == 'This sentence : "A cat." means something'
    assert (
        models.apply_template(sentence, pcc_tuning.template("sum")) == 'This sentence : "A cat." can be summarized as'
    )
    assert pcc_tuning.DEFAULT_TEMPLATE == "sth"
    with pytest.raises(ValueError, match="Table 3"):
        pcc_tuning.template("xyz")


def test_reported_numbers_are_labelled_as_the_papers():
    assert pcc_tuning.REPORTED.value("Eq. 7", "optimal binary classifier", "max_spearman_limit") == 87.5
    assert pcc_tuning.REPORTED.value("Table 2", "Mistral-7b Pcc-tuning") == 90.61
    assert {n.paper for n in pcc_tuning.REPORTED.numbers} == {"pcc-tuning"}


def test_qlora_on_a_tiny_mistral_takes_a_training_step_on_cpu(tmp_path):
    """Stage 1's setting on the CPU: 4-bit NF4 base with double quantization, LoRA on every linear layer, Eq. 8
    InfoNCE with a hard negative through stsnb.training.train.fit (mechanics: a tiny random Mistral-architecture
    model)."""
    import torch
    from conftest import save_tiny_causal_lm
    from transformers import MistralConfig

    from stsnb.training import losses
    from stsnb.training.config import TrainConfig
    from stsnb.training.train import fit

    folder = save_tiny_causal_lm(tmp_path / "tiny-mistral", MistralConfig)
    encoder = models.load_encoder(
        str(folder),
        template=pcc_tuning.template("sth"),
        quantize_4bit=True,
        lora=models.LoraSettings(r=8),
        device="cpu",
    )
    before = {n: p.detach().clone() for n, p in encoder.named_parameters() if p.requires_grad}
    triplets = [("A man plays a guitar.", "A man is playing guitar.", "Nobody plays music.")] * 4

    def eq8(model, batch):
        anchor, positive, negative = (model([t[i] for t in batch]) for i in range(3))
        return losses.info_nce(anchor, positive, negative, temperature=0.05)

    result = fit(encoder, eq8, triplets, TrainConfig(batch_size=4, lr=1e-3, warmup_ratio=0.0, progress=False))
    assert result.steps == 1
    changed = [n for n, p in encoder.named_parameters() if p.requires_grad and not torch.equal(p.detach(), before[n])]
    assert changed and all("lora_" in n for n in changed)


# ---- the package's stage losses, corpora, transfer probe ------------------------------------------------------


class _StubEncoder(torch.nn.Module):
    """A stand-in sentence encoder for the loss mechanics: a seeded linear map of each text's hashed features."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(6, 4)
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(models.resolve("smollm2-135m").path)

    def features(self, texts):
        rows = []
        for text in texts:
            g = torch.Generator().manual_seed(sum(map(ord, text)) % (2**31))
            rows.append(torch.randn(6, generator=g))
        return torch.stack(rows)

    def forward(self, texts):
        return self.linear(self.features(texts))


TRIPLETS = [
    data.Triplet("A man plays a guitar.", "A man is playing music.", "Nobody is playing."),
    data.Triplet("Two dogs run in a field.", "Dogs are running.", "The dogs are asleep."),
    data.Triplet("A woman slices an onion.", "Someone cuts a vegetable.", "A woman eats cake."),
]
PAIRS = [
    data.STSPair(t.anchor, t.positive, s, "STSBenchmark", "train")
    for t, s in zip(TRIPLETS, (4.5, 3.0, 1.0), strict=True)
] + [data.STSPair("A cat sleeps.", "A kitten naps.", 4.0, "SICK", "train")]


def test_stage1_loss_is_eq8_on_the_encoded_triplets():
    encoder = _StubEncoder()
    loss = pcc_tuning.stage1_loss(temperature=0.05, cutoff=None)(encoder, TRIPLETS)
    fields = [(t.anchor, t.positive, t.negative) for t in TRIPLETS]
    a, p, n = (F.normalize(encoder([f[i] for f in fields]), dim=-1) for i in range(3))
    # Eq. 8 written out: -log e^{cos(a_i,p_i)/t} / sum_j (e^{cos(a_i,p_j)/t} + e^{cos(a_i,n_j)/t})
    terms = []
    for i in range(len(TRIPLETS)):
        numerator = torch.exp(a[i] @ p[i] / 0.05)
        denominator = sum(torch.exp(a[i] @ p[j] / 0.05) + torch.exp(a[i] @ n[j] / 0.05) for j in range(len(TRIPLETS)))
        terms.append(-torch.log(numerator / denominator))
    assert loss.item() == pytest.approx(torch.stack(terms).mean().item(), rel=1e-5)


def test_stage2_loss_is_one_minus_pearson_of_the_cosines():
    encoder = _StubEncoder()
    loss = pcc_tuning.stage2_loss(cutoff=None)(encoder, PAIRS)
    u, v = encoder([p.sent1 for p in PAIRS]), encoder([p.sent2 for p in PAIRS])
    cosine = F.cosine_similarity(u, v).detach().numpy()
    gold = np.array([p.score for p in PAIRS])
    assert loss.item() == pytest.approx(1 - np.corrcoef(cosine, gold)[0, 1], rel=1e-5)


def test_stage2_refuses_gradient_accumulation():
    from stsnb.training.config import TrainConfig

    with pytest.raises(ValueError, match="statistic of the whole batch"):
        pcc_tuning.train_stage(_StubEncoder(), 2, PAIRS, TrainConfig(batch_size=2, grad_accum=2, progress=False))
    with pytest.raises(ValueError, match="stage must be 1 or 2"):
        pcc_tuning.train_stage(_StubEncoder(), 3, PAIRS, TrainConfig(progress=False))


def test_sentences_are_cut_before_templating_so_the_template_end_survives():
    tokenizer = _StubEncoder().tokenizer
    long = " ".join(["word"] * 80)
    (short,) = pcc_tuning.cut(tokenizer, [long], 32)
    assert len(tokenizer(short, add_special_tokens=False)["input_ids"]) == 32
    assert pcc_tuning.cut(tokenizer, ["A short one."], 32) == ["A short one."]
    assert models.apply_template(short, pcc_tuning.template("sth")).endswith("means something")
    with pytest.raises(ValueError, match="cutoff"):
        pcc_tuning.cut(tokenizer, [long], 0)


def test_stage1_triplets_come_from_real_snli_and_say_what_was_skipped(data_dir):
    triplets = pcc_tuning.corpora.stage1_triplets(limit=50, seed=1)
    assert len(triplets) == 50 and all(isinstance(t, data.Triplet) for t in triplets)
    assert triplets.skipped["premise without both entailment and contradiction"] > 0
    assert triplets.skipped["beyond the limit"] == 6339 - 50  # SNLI dev + test make 6,339 triplets


def test_stage2_data_with_and_without_the_test_overlap(data_dir):
    kept = pcc_tuning.corpora.stage2_pairs(dedup=False)
    removed = pcc_tuning.corpora.stage2_pairs(dedup=True)
    assert len(kept.pairs) == 10249 == sum(kept.before.values())  # Section 4.1: 10,249 pairs
    assert removed.removed["SICK"] == 93 and len(removed.pairs) == 5398  # SICK-R train/test share 93 pairs
    assert max(p.score for p in kept.pairs) <= 5.0 and min(p.score for p in kept.pairs) >= 0.0  # SICK rescaled


def test_official_recipes_and_warmup():
    recipe = pcc_tuning.paper_recipe("Mistral-7b", "sth")
    assert (recipe.stage1_batch, recipe.stage2_epochs, recipe.stage2_batch, recipe.lr) == (224, 8, 240, 5e-4)
    assert pcc_tuning.paper_recipe("OPT-6.7b", "eol").stage1_batch == 256
    assert pcc_tuning.warmup_ratio(100, 400) == 0.25 and pcc_tuning.warmup_ratio(100, 50) == 1.0
    with pytest.raises(KeyError, match="no official recipe"):
        pcc_tuning.paper_recipe("GPT-2", "sth")


@pytest.mark.long  # the real model on SICK-E (5 s): off the default tier
@pytest.mark.slow
def test_sick_e_probe_on_real_minilm_embeddings_beats_the_majority_class(data_dir, minilm):
    from stsnb.papers.pcc_tuning import transfer

    train, dev, test = (
        transfer.sick_entailment(s, n, seed=0) for s, n in (("train", 240), ("trial", 60), ("test", 240))
    )
    result = transfer.probe(minilm, train, dev, test)
    labels = [e.label for e in test]
    majority = 100 * max(labels.count(c) for c in set(labels)) / len(labels)
    assert result.accuracy > majority + 5, (result, majority)
    assert result.c in transfer.C_GRID and result.sizes == (240, 60, 240)


def test_stage2_starts_again_from_the_stage1_adapter(tmp_path):
    from conftest import save_tiny_causal_lm
    from transformers import LlamaConfig

    from stsnb.training.checkpoints import trainable_state
    from stsnb.training.config import TrainConfig

    folder = save_tiny_causal_lm(tmp_path / "tiny-llama", LlamaConfig)
    encoder = pcc_tuning.load_prompt_encoder(str(folder), "sth", lora=models.LoraSettings(r=4))
    start = trainable_state(encoder)
    scoring = pcc_tuning.Scoring("stsb", 8)
    config = TrainConfig(batch_size=4, lr=1e-2, warmup_ratio=0.0, eval_at_start=False, progress=False)
    first = pcc_tuning.stage2_from(encoder, start, PAIRS, config, None, scoring, cutoff=16)
    after_first = trainable_state(encoder)
    second = pcc_tuning.stage2_from(encoder, start, PAIRS, config, None, scoring, cutoff=16)
    assert any(not torch.equal(after_first[k], start[k]) for k in start)  # it trained
    assert all(torch.equal(after_first[k], v) for k, v in trainable_state(encoder).items())  # same start, same end
    assert first.scores == second.scores


# ---- the control of stage 2: Eq. 8's form on stage 2's scored pairs ---------------------------------------------


def _eq8_by_hand(first, second, gold, threshold, tau):
    """Eq. 8 written out: anchors are the pairs scored >= threshold, candidates every pair's second sentence."""
    a, s = F.normalize(first, dim=-1), F.normalize(second, dim=-1)
    terms = []
    for i in range(len(gold)):
        if gold[i] < threshold:
            continue
        numerator = torch.exp(a[i] @ s[i] / tau)
        denominator = sum(torch.exp(a[i] @ s[j] / tau) for j in range(len(gold)))
        terms.append(-torch.log(numerator / denominator))
    return torch.stack(terms).mean()


def test_the_controls_loss_is_eq8_on_the_positive_pairs_with_every_second_sentence_a_candidate():
    from stsnb.training import losses

    g = torch.Generator().manual_seed(0)
    first, second = torch.randn(6, 5, generator=g), torch.randn(6, 5, generator=g)
    gold = torch.tensor([4.6, 1.0, 4.0, 3.9, 0.2, 5.0])
    loss = pcc_tuning.scored_pairs_info_nce(first, second, gold, positive_score=4.0, temperature=0.05)
    assert loss.item() == pytest.approx(_eq8_by_hand(first, second, gold, 4.0, 0.05).item(), rel=1e-5)
    # every pair a positive: exactly the in-batch InfoNCE of stsnb.training.losses (Eq. 8 without hard negatives)
    every = pcc_tuning.scored_pairs_info_nce(first, second, torch.full((6,), 5.0), 4.0, 0.05)
    assert every.item() == pytest.approx(losses.info_nce(first, second, temperature=0.05).item(), rel=1e-6)
    # no positive in the batch: a loss of 0 that still back-propagates (no gradient)
    first.requires_grad_(True)
    none = pcc_tuning.scored_pairs_info_nce(first, second, torch.zeros(6), 4.0, 0.05)
    none.backward()
    assert none.item() == 0.0 and torch.count_nonzero(first.grad) == 0
    with pytest.raises(ValueError, match="gold must hold one score per pair"):
        pcc_tuning.scored_pairs_info_nce(first, second, torch.zeros(5))
    with pytest.raises(ValueError, match="temperature"):
        pcc_tuning.scored_pairs_info_nce(first, second, gold, temperature=0.0)


def test_the_control_encodes_the_pairs_as_stage_2_does():
    encoder = _StubEncoder()
    loss = pcc_tuning.control_loss(positive_score=4.0, temperature=0.05, cutoff=None)(encoder, PAIRS)
    first, second = encoder([p.sent1 for p in PAIRS]), encoder([p.sent2 for p in PAIRS])
    gold = torch.tensor([p.score for p in PAIRS])
    assert loss.item() == pytest.approx(_eq8_by_hand(first, second, gold, 4.0, 0.05).item(), rel=1e-5)
    with pytest.raises(ValueError, match="objective must be one of"):
        pcc_tuning.train_stage(_StubEncoder(), 2, PAIRS, _config(), objective="mse")


def _config(**changes):
    from stsnb.training.config import TrainConfig

    base = dict(batch_size=2, lr=1e-2, warmup_ratio=0.0, eval_at_start=False, progress=False)
    return TrainConfig(**{**base, **changes})


def test_the_control_trains_from_the_same_start_in_the_same_steps_as_pearson(tmp_path, data_dir):
    """Mechanics on a tiny random Llama: both stage-2 objectives from one start, same pairs and config, take the
    same steps and move the adapter; the untrained prompt embedding does not depend on the seed (LoRA's B is 0)."""
    from conftest import save_tiny_causal_lm
    from transformers import LlamaConfig

    from stsnb.training.checkpoints import trainable_state

    folder = save_tiny_causal_lm(tmp_path / "tiny-llama", LlamaConfig)
    embeddings = []
    for s in (0, 1):
        torch.manual_seed(s)
        encoder = pcc_tuning.load_prompt_encoder(str(folder), "sth", lora=models.LoraSettings(r=4))
        embeddings.append(encoder(["A cat sleeps.", "Two dogs run."]).detach())
    assert torch.allclose(embeddings[0], embeddings[1])
    start = trainable_state(encoder)
    scoring = pcc_tuning.Scoring("stsb", 8)
    pairs = [p for p in data.load_stsb("train", "raw")[:40] if p.score >= 4.0][:4] + data.load_stsb("train", "raw")[:4]
    runs = {
        objective: pcc_tuning.stage2_from(
            encoder, start, pairs, _config(batch_size=4), None, scoring, cutoff=16, objective=objective
        )
        for objective in ("pearson", "infonce")
    }
    assert runs["pearson"].result.steps == runs["infonce"].result.steps == 2
    assert all(r.result.weight_change > 0 and r.kept_step == 2 for r in runs.values())
    assert all(0 < r.result.relative_change < 1 for r in runs.values())  # a distance: how far the adapter moved
    assert "adapter moved " in runs["pearson"].summary() and "% (relative L2)" in runs["pearson"].summary()
    gold = {t: g.tolist() for t, (g, _) in runs["pearson"].predictions.items()}
    assert gold == {t: g.tolist() for t, (g, _) in runs["infonce"].predictions.items()}  # the same test pairs


# ---- the de-duplication study: two arms with one STS-B / SICK-R mix ------------------------------------------


def test_the_overlap_is_computed_from_the_data(data_dir):
    clean = pcc_tuning.corpora.stage2_pairs(dedup=True)
    shared, total = clean.overlap()
    assert (shared, total) == (4851, 10249)  # 47% of the paper's stage-2 pairs appear verbatim in a test set
    assert clean.removed == {"STSBenchmark": 4758, "SICK": 93}


def test_the_deduplicated_arm_keeps_the_full_arms_mix_and_no_shared_pair(data_dir):
    from collections import Counter

    corpora = pcc_tuning.corpora
    full, clean = corpora.stage2_pairs(dedup=False), corpora.stage2_pairs(dedup=True)
    clean_set = set(clean.pairs)
    for seed in (0, 1, 2):
        arms = corpora.matched_arms(full, clean, 128, seed)
        assert arms.kept == data.sample(full.pairs, 128, seed)  # the kept arm is stage 2's own draw
        assert Counter(p.dataset for p in arms.removed) == Counter(p.dataset for p in arms.kept)
        assert all(p in clean_set for p in arms.removed) and len(set(arms.removed)) == 128
        assert arms.shared_in_kept == sum(p not in clean_set for p in arms.kept) > 0
    assert corpora.matched_arms(full, clean, 128, 0).removed == corpora.matched_arms(full, clean, 128, 0).removed
    assert 1400 < corpora.largest_matched(full, clean) < 1600  # 991 clean STS-B pairs bound the matched size
    with pytest.raises(ValueError, match="dedup_pairs"):
        corpora.matched_arms(full, clean, None, 0)
    with pytest.raises(ValueError, match="too few pairs"):
        corpora.stratified_like(full.pairs[:5], [p for p in clean.pairs if p.dataset == "SICK"], 0)


# ---- which runs the notebook trains ---------------------------------------------------------------------------


def test_plan_runs_the_headline_and_section_6_on_every_seed_and_the_sweeps_on_the_first(data_dir):
    corpora, pipeline = pcc_tuning.corpora, pcc_tuning.pipeline
    full, clean = corpora.stage2_pairs(dedup=False), corpora.stage2_pairs(dedup=True)
    plans = pipeline.plan(
        ["sth", "eol"],
        [0, 1, 2],
        lambda s: data.sample(full.pairs, 64, s),
        lambda t, b, s, n: _config(batch_size=b, seed=s),
        [32, 16],
        arms_of=lambda s: corpora.matched_arms(full, clean, 64, s),
        control_positive_score=4.0,
    )
    assert [(p.template, p.seed) for p in plans] == [("sth", 0), ("sth", 1), ("sth", 2), ("eol", 0)]
    assert list(plans[0].variants) == ["batch 32", "batch 16", pipeline.DEDUP, pipeline.CONTROL]
    assert list(plans[1].variants) == ["batch 32", pipeline.DEDUP, pipeline.CONTROL]
    assert list(plans[3].variants) == ["batch 32"]
    assert [p.score_untrained for p in plans] == [True, False, False, True]
    assert [p.probe for p in plans] == [True, False, False, False]
    control = plans[1].variants[pipeline.CONTROL]
    assert control.objective == "infonce" and control.pairs == plans[1].variants["batch 32"].pairs
    assert control.config == plans[1].variants["batch 32"].config and control.config.seed == 1
    other_size = pipeline.plan(
        ["sth"],
        [0],
        lambda s: data.sample(full.pairs, 64, s),
        lambda t, b, s, n: _config(batch_size=b, seed=s),
        [32],
        arms_of=lambda s: corpora.matched_arms(full, clean, 96, s),
    )
    assert list(other_size[0].variants) == ["batch 32", pipeline.KEPT, pipeline.DEDUP]
    with pytest.raises(ValueError, match="training_seeds must differ"):
        pipeline.plan(["sth"], [0, 0], lambda s: [], lambda t, b, s, n: _config(), [32])


# ---- claims: preconditions, training seeds, equivalence -------------------------------------------------------


def _stage_run(predictions, best_step=4, weight_change=1e-2, steps=4, moved="trained"):
    """A stage's run whose dev records show it ``moved`` ("trained", "lost" or "stayed") from its own start, keeping
    step ``best_step`` of ``steps`` (``synthetic_seeds.fit_result``)."""
    return pcc_tuning.StageRun(fit_result(moved, step=best_step, steps=steps, change=weight_change), predictions)


@pytest.fixture(scope="module")
def sts_gold(data_dir):
    """Gold scores of 80 real STS-B test pairs and 80 of SICK-R test: systems are gold plus noise of a chosen size."""
    return {
        "STSBenchmark": np.array([p.score for p in data.load_stsb("test")[:80]]),
        "SICKRelatedness": np.array([p.score for p in data.load_sick("test")[:80]]),
    }


def _system(gold, noise, seed):
    rng = np.random.default_rng(seed)
    return {t: (g, g + noise * rng.standard_normal(len(g)) * g.std()) for t, g in gold.items()}


def test_stage_claims_are_gated_on_dev_per_seed_and_the_main_claim_is_marked(sts_gold):
    from stsnb.evaluation import claims as stsnb_claims

    untrained = _system(sts_gold, 3.0, 0)
    stage1 = {s: _stage_run(_system(sts_gold, 1.0, 10 + s)) for s in (0, 1, 2)}
    stage2 = {s: _stage_run(_system(sts_gold, 0.2, 20 + s)) for s in (0, 1, 2)}
    first, second = pcc_tuning.claims.stage_claims(
        untrained, stage1, stage2, "Mistral-7b", "PromptSTH", n_resamples=200
    )
    assert (first["verdict"], second["verdict"]) == (verdict_rules.SUPPORTED, verdict_rules.SUPPORTED)
    assert first["seeds"] == second["seeds"] == 3 and second["main_claim"] and not first["main_claim"]
    assert "headline" not in second and stsnb_claims.is_main_claim(second)
    assert pcc_tuning.claims.MAIN_CLAIMS[0].row_in([first, second]) is second
    assert second["paper_difference"] == pytest.approx(90.61 - 85.66)
    # the smallest effect of interest: half the paper's stage-2 gain, with its reason
    assert second["smallest_effect"] == pytest.approx((90.61 - 85.66) / 2)
    assert (
        "half the paper's stage-2 gain (Table 4, Mistral-7b PromptSTH: 85.66 -> 90.61"
        in (second["smallest_effect_reason"])
    )
    # stage 1 against the untrained embedding is a check of our setting; the main claim is the paper's, quoted
    assert (first["kind"], second["kind"]) == ("check", "paper")
    assert first["paper_quote"] == pcc_tuning.quotes.STAGE1 and second["paper_quote"] == pcc_tuning.quotes.STAGE2_GAIN
    both = second["seeds_and_pairs"]  # 3 seeds: the verdict is decided on the hierarchical interval of their mean
    assert both["seeds"] == 3 and both["difference"] == pytest.approx(second["difference"])
    assert both["low"] < both["difference"] < both["high"] and first["seeds_and_pairs"]["seeds"] == 3
    assert list(second["seed_verdicts"].values()) == [verdict_rules.SUPPORTED] * 3
    names = [p["name"] for p in second["preconditions"]]
    assert names[:2] == ["stage 1 trained on dev", "stage 2 trained on dev"]
    assert not any("moved the encoder" in n or "starting point" in n for n in names)  # no gate reads the test pairs
    assert all(p["holds"] for p in first["preconditions"] + second["preconditions"])
    assert stsnb_claims.arms_not_compared(second) == [] and stsnb_claims.arms_not_compared(first) == []
    # stage 1 kept its step-0 checkpoint on seed 1: that seed is left out of both claims ("2 of 3 seeds")
    stayed = {**stage1, 1: _stage_run(untrained, best_step=0, weight_change=0.0, moved="stayed")}
    first, second = pcc_tuning.claims.stage_claims(
        untrained, stayed, stage2, "Mistral-7b", "PromptSTH", n_resamples=200
    )
    assert first["verdict"] == verdict_rules.SUPPORTED  # a gain of 35 points survives even a t with 1 df
    assert second["verdict"] == verdict_rules.UNRESOLVED  # two seeds: their mean's t interval has 1 degree of freedom
    assert stsnb_claims.seeds_text(second) == "2 of 3 seeds" and list(second["seeds_left_out"]) == ["seed 1"]
    assert second["seeds_and_pairs"]["seeds"] == 2  # the hierarchical interval on the kept seeds only
    assert any(line.startswith("left out of this claim: seed 1") for line in pcc_tuning.claims.row_details(second))
    assert pcc_tuning.claims.stayed_at_start({"stage 1 seed 1": stayed[1]}) != []
    # a stage 2 whose dev score fell from its start on two seeds: the main claim is not tested
    flat = {s: _stage_run(stage2[s].predictions, moved="lost") if s != 1 else stage2[s] for s in stage2}
    _, second = pcc_tuning.claims.stage_claims(untrained, stage1, flat, "Mistral-7b", "PromptSTH", n_resamples=200)
    assert (
        second["verdict"] == verdict_rules.NOT_TESTED
        and "'stage 2 trained on dev' does not hold" in (second["not_tested_because"])
    )
    with pytest.raises(TypeError, match="stage1 must be a pipeline.StageRun"):
        pcc_tuning.claims.stage_claims(untrained, untrained, stage2, "Mistral-7b", "PromptSTH")


def test_a_stages_dev_gate_reads_its_fits_records_and_a_fit_without_them_is_refused(sts_gold):
    claims = pcc_tuning.claims
    run = _stage_run(_system(sts_gold, 1.0, 1))
    gate = claims.dev_gate("stage 1", {3: run})
    assert gate.trained_seeds == ["seed 3"] and "seed 3: selected step 4 of 4, dev +" in gate.evidence()
    assert "over its start (best-of-2 noise bound +" in gate.evidence()
    run.result.dev_start = None  # a fit whose evaluator kept no per-pair dev scores
    with pytest.raises(ValueError, match="no per-pair dev records"):
        claims.dev_gate("stage 1", {3: run})


def test_the_control_and_dedup_claims_need_their_runs_and_their_phenomenon(sts_gold):
    from stsnb.evaluation import claims as stsnb_claims

    claims = pcc_tuning.claims
    stage1 = {s: _stage_run(_system(sts_gold, 1.0, 10 + s)) for s in (0, 1, 2)}
    stage2 = {s: _stage_run(_system(sts_gold, 0.2, 20 + s)) for s in (0, 1, 2)}
    control = {s: _stage_run(_system(sts_gold, 0.8, 30 + s)) for s in (0, 1, 2)}
    said = dict(row="Mistral-7b", template_label="PromptSTH", positive_score=4.0, n_pairs=128)
    positives = {0: 40, 1: 35, 2: 38}
    row = claims.control_claim(stage2, control, positives, n_resamples=200, **said)
    assert row["verdict"] == verdict_rules.SUPPORTED and row["seeds"] == 3
    assert row["kind"] == "paper" and row["paper_quote"] == pcc_tuning.quotes.GRANULARITY
    assert "coarse granularity of contrastive learning" in row["paper_quote"] and not row["main_claim"]
    assert row["smallest_effect"] == pytest.approx((90.61 - 85.66) / 2)
    assert "not the loss" in row["smallest_effect_reason"]
    # gated on its own arms only, on dev: a stage 1 that stayed put does not gate the comparison of two objectives
    assert [p["name"] for p in row["preconditions"]][1:3] == [
        "stage 2 trained on dev",
        "the InfoNCE control trained on dev",
    ]
    no_positives = claims.control_claim(stage2, control, {**positives, 1: 0}, n_resamples=200, **said)
    assert (
        no_positives["verdict"] == verdict_rules.NOT_TESTED
        and "control's positives" in no_positives["not_tested_because"]
    )
    # a control that never left its start on dev on two of three seeds: too few seeds left
    stuck = {s: _stage_run(control[s].predictions, best_step=0, moved="stayed") if s else control[s] for s in control}
    untested = claims.control_claim(stage2, stuck, positives, n_resamples=200, **said)
    assert untested["verdict"] == verdict_rules.NOT_TESTED and untested["seeds_left_out"].keys() == {"seed 1", "seed 2"}
    removed = {s: _stage_run(_system(sts_gold, 0.5, 40 + s)) for s in (0, 1, 2)}
    survives = claims.dedup_claim(stage1, removed, n_resamples=200)
    assert survives["verdict"] == verdict_rules.SUPPORTED and survives["kind"] == "check"
    assert survives["paper_quote"] == pcc_tuning.quotes.TEST_DATA
    assert [p["name"] for p in survives["preconditions"]][:2] == [
        "stage 1 trained on dev",
        "de-duplicated stage 2 trained on dev",
    ]
    assert [stsnb_claims.arms_not_compared(r) for r in (row, no_positives, survives)] == [[], [], []]


def test_the_takeaway_names_what_the_control_attributes_the_main_claim_to_and_what_it_recovers():
    main = {
        "difference": 4.98,
        "per_seed": [{"seed_run": f"seed {s}", "difference": d} for s, d in enumerate((5, 6, 4))],
    }
    unresolved = {
        "difference": 0.45,
        "low": -2.11,
        "high": 3.05,
        "verdict": "unresolved",
        "seeds": 3,
        "per_seed": [
            {"seed_run": "seed 0", "difference": 0.5, "low": -2.11, "high": 2.0},
            {"seed_run": "seed 1", "difference": 0.9, "low": -1.0, "high": 3.05},
            {"seed_run": "seed 2", "difference": -0.05, "low": -1.5, "high": 2.5},
        ],
    }
    text = pcc_tuning.claims.attribution(main, unresolved)
    assert text.startswith("the stage-2 gain (+4.98) is not attributed to the Pearson loss by our control")
    detectable = power.detectable_of_seeds([(0.5, -2.11, 2.0), (0.9, -1.0, 3.05), (-0.05, -1.5, 2.5)])
    assert "+0.45 [-2.11, +3.05], unresolved (3 seeds)" in text and f"detect about +-{detectable:.2f}" in text
    supported = {**unresolved, "low": 0.5, "verdict": "supported", "per_seed": []}
    assert pcc_tuning.claims.attribution(main, supported).startswith("our control attributes the stage-2 gain")
    assert "did not run" in pcc_tuning.claims.attribution(main, None)
    recovers = pcc_tuning.claims.control_recovers(main, unresolved)  # (5 + 6 + 4) / 3 = 5.00, control 0.45
    assert recovers.startswith("the InfoNCE control on the same pairs recovers about +4.55 of the +5.00")
    assert "mean of 3 seeds: stage 2 minus the control +0.45" in recovers
    one_seed = {**unresolved, "per_seed": unresolved["per_seed"][1:2]}  # the seeds both rows kept
    assert "recovers about +5.10 of the +6.00" in pcc_tuning.claims.control_recovers(main, one_seed)
    assert "did not run" in pcc_tuning.claims.control_recovers(main, None)
    untested = {**unresolved, "verdict": "not tested"}  # its arms did not train on dev: no share and no attribution
    assert pcc_tuning.claims.control_recovers(main, untested).endswith("is not read: the control not tested")
    assert "is not attributed to the Pearson loss: the control was not tested" in (
        pcc_tuning.claims.attribution(main, untested)
    )


def test_robustness_claims_are_judged_by_equivalence_within_the_margin(sts_gold):
    from stsnb.evaluation import claims as stsnb_claims

    claims = pcc_tuning.claims
    base = _system(sts_gold, 0.2, 1)
    same = {t: (g, p + 1e-4 * np.arange(len(p))) for t, (g, p) in base.items()}  # a hair's difference
    said = {"paper_quote": pcc_tuning.quotes.BATCH_SIZES, "margin_reason": claims.margin_reason("Mistral-7b", 1.0)}
    said["arms"] = ("stage 2 batch 192", "stage 2 batch 224")
    row = claims.robustness_claim(
        "batch", {0: _stage_run(same)}, {0: _stage_run(base)}, margin=1.0, n_resamples=200, **said
    )
    assert row["verdict"] == verdict_rules.EQUIVALENT and row["test"] == "equivalence" and row["margin"] == 1.0
    assert row["kind"] == "paper" and "Table 4's templates 0.22, Table 5's batch sizes 0.07" in row["margin_reason"]
    assert row["reachability"].startswith("equivalence reachable") and row["reachability"] in (claims.row_details(row))
    worse = claims.robustness_claim(
        "batch", {0: _stage_run(_system(sts_gold, 3.0, 2))}, {0: _stage_run(base)}, margin=1.0, n_resamples=200, **said
    )
    assert worse["verdict"] == verdict_rules.CONTRADICTED
    stayed = claims.robustness_claim(
        "batch", {0: _stage_run(same, best_step=0, weight_change=0.0)}, {0: _stage_run(base)}, n_resamples=200, **said
    )
    assert stayed["verdict"] == verdict_rules.NOT_TESTED  # two copies of one model are trivially "equivalent"
    assert stayed["not_tested_because"].startswith("'stage 2 batch 192 trained on dev' does not hold")
    assert (stayed["a"], stayed["b"]) == said["arms"] and stsnb_claims.arms_not_compared(stayed) == []
    assert claims.paper_batch_difference("Mistral-7b", 192, 224) == pytest.approx(90.54 - 90.61)
    assert claims.paper_batch_difference("Mistral-7b", 240, 224) is None  # the official 240 is not in Table 5
    assert claims.paper_template_difference("Mistral-7b", "PromptEOL", "PromptSTH") == pytest.approx(90.39 - 90.61)
    # a run without a sweep says whether one at its size could reach "equivalent"
    wide = {"per_seed": [{"low": -1.0, "high": 3.0}, {"low": 0.5, "high": 1.5}]}
    assert "equivalence not reachable at this size: one seed's interval (+-2.00)" in claims.no_sweep_line([wide], 1.0)
    assert "equivalence reachable" in claims.no_sweep_line([{"low": 0.0, "high": 1.0}], 1.0)


def test_stage1_reads_simcse_nli_for_simcse_csv_from_the_data_folder(tmp_path, monkeypatch, data_dir):
    """nli_source='simcse' (the paper plan): SimCSE's own triplets from <data>/paper/nli_for_simcse.csv, which
    `stsnb data fetch --paper` fetches; missing, the error names the command."""
    import shutil

    from stsnb import data as stsdata
    from stsnb.papers.pcc_tuning import corpora

    folder = tmp_path / "data"
    folder.mkdir()
    monkeypatch.setenv(stsdata.DATA_DIR_ENV, str(folder))
    with pytest.raises(stsdata.DataError, match="stsnb data fetch --paper"):
        corpora.stage1_triplets("simcse")
    (folder / "paper").mkdir()
    rows = stsdata.nli_triplets(stsdata.load_snli("dev", data_dir))[:30]
    lines = ["sent0,sent1,hard_neg"] + [f'"{t.anchor}","{t.positive}","{t.negative}"' for t in rows]
    (folder / "paper" / "nli_for_simcse.csv").write_text("\n".join(lines) + "\n")
    loaded = corpora.stage1_triplets("simcse", limit=10, seed=1)
    assert len(loaded) == 10 and set(loaded) <= set(rows) and loaded.skipped["beyond the limit"] == 20
    shutil.rmtree(folder)


def test_every_quote_is_a_sentence_the_papers_print():
    """Each claim's paper_quote (notebooks 10 and 30) appears verbatim, white space aside, in the paper's text."""
    import re
    from pathlib import Path

    from stsnb.papers import hicl

    for module, paper in ((pcc_tuning.quotes, "pcc-tuning.md"), (hicl.quotes, "hicl.md")):
        path = Path("/work/shared/papers") / paper
        if not path.is_file():
            pytest.skip(f"the paper's text {path} is not on this machine")
        text = " ".join(path.read_text().split())
        quoted = [v for k, v in vars(module).items() if k.isupper() and isinstance(v, str)]
        assert quoted
        for value in quoted:
            where, sentence = re.fullmatch(r'([^:]+): "(.*)"', value).groups()
            assert sentence in text, f"{paper}, {where}: not printed as quoted: {sentence[:60]}"


def test_no_sweep_line_says_why_and_how_wide_the_intervals_are():
    rows = [{"low": -1.0, "high": 2.0}, {"low": 0.5, "high": 1.5}]  # half-widths 1.5 and 0.5
    line = pcc_tuning.claims.no_sweep_line(rows, 1.0)
    assert line.startswith("one template and one batch size in this profile: no Table 4-5 claim.")
    assert (
        "equivalence not reachable at this size: one seed's interval (+-1.50) is at least as wide as the margin +-1"
        in (line)
    )
    # no claim: nothing to size, the line says only how to sweep
    assert pcc_tuning.claims.no_sweep_line([], 1.0).endswith(
        "add values to `templates` / `stage2_batch_sizes` to sweep"
    )
