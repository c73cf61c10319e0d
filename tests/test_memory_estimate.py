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


def test_scoring_a_4bit_run_counts_its_16bit_copy_beside_the_training_model():
    """Pcc-tuning's official evaluation scores a QLoRA run on the base loaded at 16 bits, while the 4-bit training
    model stays alive (stage 2 trains it again): both sets of weights, two fp32 adapters, no gradients or AdamW
    state, and one layer's inference activations."""
    mistral = me.KNOWN_SHAPES["mistralai/Mistral-7B-v0.1"]
    scoring = me.scoring_estimate(mistral, me.ScoringSetup(sequences=16, length=512, lora_r=64))
    adapter = 4 * mistral.lora_parameters(64)
    four_bit = me.estimate(mistral, me.TrainingSetup(16, 512, quantize_4bit=True, lora_r=64)).weights
    assert scoring.weights == pytest.approx(four_bit + 2 * mistral.parameters() + adapter)
    assert 19 * me.GIB < scoring.total < 21 * me.GIB  # 14.2 GiB of bf16 copy on top of ~4.6 GiB of QLoRA model
    assert scoring.gradients == scoring.optimizer == scoring.backward_work == 0
    assert scoring.activations == 16 * 512 * (2 * 4096 + 3 * 14336) * 2  # 8,192 tokens through the widest MLP step
    assert me.fits(scoring.total, 24) and not me.fits(scoring.total, 20)
    with pytest.raises(ValueError, match="sequences and length must be >= 1"):
        me.scoring_estimate(mistral, me.ScoringSetup(sequences=0, length=512, lora_r=64))


def _pcc_rows(**params) -> dict:
    from stsnb import plan_check

    base = {"backbone": "mistralai/Mistral-7B-v0.1", "num_processes": 4, "profile": "paper", "paper_row": "Mistral-7b"}
    return {r.label.split(",")[0]: r for r in plan_check.memory_rows("10_pcc_tuning", {**base, **params})}


def test_pcc_memory_uses_the_recipes_batch_per_gpu_and_counts_the_scoring_copy():
    """With use_paper_recipe the stage-1 batch is each template's official one (recipes.paper_recipe: Mistral 224 for
    PromptSTH, 240 for the others), not stage1_batch_size; the first template also runs every stage-2 batch size.
    The scoring row appears only when a 4-bit run is scored on its 16-bit copy."""
    from stsnb.papers.pcc_tuning import recipes

    small = {"stage1_batch_size": 16, "stage2_batch_sizes": [32]}
    own = _pcc_rows(templates=["sth"], use_paper_recipe=True, **small)
    assert own["stage 1 (Eq. 8)"].per_gpu_sequences == 3 * (recipes.paper_recipe("Mistral-7b", "sth").stage1_batch // 4)
    assert own["stage 1 (Eq. 8)"].per_gpu_sequences == 3 * 56
    assert own["stage 2 (Eq. 9)"].per_gpu_sequences == 2 * (240 // 4)  # the recipe's 240 beats the swept 32
    three = _pcc_rows(templates=["sth", "eol", "sum"], use_paper_recipe=True, **small)
    assert three["stage 1 (Eq. 8)"].per_gpu_sequences == 3 * 60  # eol / sum: 240
    assert three["stage 1 (Eq. 8)"].label.split(", ")[1] in ("eol", "sum")
    plain = _pcc_rows(templates=["sth"], use_paper_recipe=False, **small)
    assert plain["stage 1 (Eq. 8)"].per_gpu_sequences == 3 * 4 and plain["stage 2 (Eq. 9)"].per_gpu_sequences == 2 * 8
    assert "scoring on the 16-bit copy (main process)" not in plain  # no 4-bit base: scored on the model itself

    qlora = _pcc_rows(templates=["sth"], quantize_4bit=True, score_unquantized=True, max_length=512)
    scoring = qlora["scoring on the 16-bit copy (main process)"]
    assert (scoring.per_gpu_sequences, scoring.length, scoring.backward) == (16, 512, False)
    assert scoring.used_gib == pytest.approx(
        me.scoring_estimate(me.KNOWN_SHAPES["mistralai/Mistral-7B-v0.1"], me.ScoringSetup(16, 512, 64)).total / me.GIB
    )
    on_itself = _pcc_rows(templates=["sth"], quantize_4bit=True, score_unquantized=False)
    assert "scoring on the 16-bit copy (main process)" not in on_itself
