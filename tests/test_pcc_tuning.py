"""Pcc-tuning's paper module: the Table 3 templates, Eq. 8 and Eq. 9 as the package computes them, the corpora on
real data, QLoRA on CPU, the transfer probe on real embeddings, stage 2 restarting from the stage-1 adapter."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from stsnb import data, models
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
    InfoNCE with a hard negative through stsnb.train.fit (mechanics: a tiny random Mistral-architecture model)."""
    import torch
    from conftest import save_tiny_causal_lm
    from transformers import MistralConfig

    from stsnb import losses
    from stsnb.train import TrainConfig, fit

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
    from stsnb.train import TrainConfig

    with pytest.raises(ValueError, match="Pearson's r over the whole batch"):
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

    from stsnb.train import TrainConfig, trainable_state

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
