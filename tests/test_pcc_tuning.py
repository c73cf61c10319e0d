"""Pcc-tuning's paper module: the Table 3 prompt templates, exactly as the official code writes them."""

from __future__ import annotations

import pytest

from stsnb import models
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
