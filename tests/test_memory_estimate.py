"""stsnb.memory_estimate: the estimate against a measured peak on the CPU (small random models: mechanics only),
and the parts of the estimate on the papers' shapes."""

from __future__ import annotations

import os

import pytest

from stsnb import memory_estimate as me
from stsnb.memory import measure_in_fresh_process


@pytest.fixture(scope="module")
def small_models(tmp_path_factory):
    from transformers import AutoModel, BertConfig, LlamaConfig

    folder = tmp_path_factory.mktemp("shapes")
    decoder = LlamaConfig(
        vocab_size=2000,
        hidden_size=192,
        intermediate_size=512,
        num_hidden_layers=3,
        num_attention_heads=6,
        num_key_value_heads=2,
        max_position_embeddings=512,
    )
    encoder = BertConfig(
        vocab_size=2000,
        hidden_size=192,
        intermediate_size=768,
        num_hidden_layers=3,
        num_attention_heads=4,
        max_position_embeddings=512,
    )
    for name, config in (("decoder", decoder), ("encoder", encoder)):
        AutoModel.from_config(config).save_pretrained(folder / name)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize(
    ("family", "settings"),
    [
        ("decoder", {}),
        ("decoder", {"gradient_checkpointing": True}),
        ("decoder", {"lora_r": 8, "lora_dropout": 0.05}),
        ("encoder", {}),
        ("encoder", {"gradient_checkpointing": True}),
    ],
)
def test_estimate_is_within_25_percent_of_the_measured_peak_on_the_cpu(small_models, monkeypatch, family, settings):
    # a fixed mmap threshold: glibc's adaptive one keeps freed blocks resident, which would count them twice
    monkeypatch.setitem(os.environ, "MALLOC_MMAP_THRESHOLD_", "65536")
    out = measure_in_fresh_process(
        "stsnb.memory_estimate:measure_step",
        {"folder": str(small_models / family), "sequences": 6, "length": 320, **settings},
    )
    ratio = out["estimated_bytes"] / out["measured_bytes"]
    assert 0.75 <= ratio <= 1.25, f"estimated {out['estimated_bytes']:.3e} vs measured {out['measured_bytes']:.3e}"


def test_mistral_7b_has_its_parameter_count_and_checkpointing_cuts_activations():
    mistral = me.KNOWN_SHAPES["mistralai/Mistral-7B-v0.1"]
    assert mistral.parameters() == pytest.approx(7.11e9, rel=0.01)  # 7.24B less the LM head the encoder leaves out
    setup = me.TrainingSetup(sequences=168, length=64, activation_bytes=2, quantize_4bit=True, lora_r=64)
    full = me.estimate(mistral, setup)
    checkpointed = me.estimate(mistral, me.TrainingSetup(**{**setup.__dict__, "gradient_checkpointing": True}))
    assert full.activations > 10 * checkpointed.activations
    assert full.weights == checkpointed.weights < 8 * me.GIB  # 4-bit weights plus fp32 adapters
    assert me.fits(checkpointed.total, 24) and not me.fits(full.total, 24)


def test_bert_base_has_its_parameter_count_and_full_fine_tuning_pays_adam_state():
    bert = me.KNOWN_SHAPES["bert-base-uncased"]
    assert bert.parameters() == pytest.approx(109.5e6, rel=0.03)
    estimate = me.estimate(bert, me.TrainingSetup(sequences=32, length=64))
    assert estimate.optimizer == 8 * bert.parameters() and estimate.gradients == 4 * bert.parameters()


def test_bad_setups_are_refused():
    with pytest.raises(ValueError, match="sequences and length must be >= 1"):
        me.estimate(me.KNOWN_SHAPES["bert-base-uncased"], me.TrainingSetup(sequences=0, length=64))
