"""Model resolution, pooling, templates, LoRA / QLoRA. Tiny random models test mechanics only."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import torch

from stsnb.models import loading as models


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    from transformers import BertConfig, BertModel

    folder = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(folder)
    from transformers import AutoTokenizer

    # borrow the packaged tokenizer: any real WordPiece tokenizer would do
    AutoTokenizer.from_pretrained(models.resolve("minilm-l6").path).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    from conftest import save_tiny_causal_lm
    from transformers import LlamaConfig

    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny-llama"), LlamaConfig)


def test_packaged_names_resolve_without_the_hub():
    minilm = models.resolve("minilm-l6")
    assert minilm.source == "package" and minilm.pooling == "mean"
    smollm = models.resolve("smollm2-135m")
    assert smollm.source == "cache" and smollm.kind == "causal" and smollm.pooling == "last"
    with pytest.raises(models.ModelError, match="not a model folder"):
        models.resolve("./no/such/folder")


def test_an_unknown_hub_id_offline_is_a_quick_clear_error(monkeypatch):
    import time

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    models.hub_reachable.cache_clear()
    started = time.perf_counter()
    try:
        with pytest.raises(models.ModelError, match="Hub is unreachable"):
            models.resolve("some-org/some-model")
    finally:
        models.hub_reachable.cache_clear()
    assert time.perf_counter() - started < 10


def test_hub_models_are_encoder_or_causal_by_their_config(monkeypatch):
    configs = {"org/mistral-like": {"architectures": ["MistralForCausalLM"]}, "org/bert-like": {"model_type": "bert"}}
    monkeypatch.setattr(models, "_hub_config", configs.get)
    causal, encoder = models.resolve("org/mistral-like"), models.resolve("org/bert-like")
    assert (causal.source, causal.kind, causal.pooling) == ("hub", "causal", "last")
    assert (encoder.kind, encoder.pooling) == ("encoder", "mean")


SOMETHING = 'This sentence : "*sent_0*" means something'


def test_apply_template_inserts_the_sentence_at_the_slot():
    assert models.apply_template("A cat.", SOMETHING) == 'This sentence : "A cat." means something'
    assert models.apply_template("A cat.", None) == "A cat."
    with pytest.raises(ValueError, match="exactly once"):
        models.apply_template("x", "no slot here")
    with pytest.raises(ValueError, match="exactly once"):
        models.apply_template("x", "*sent_0* and *sent_0*")


def test_mean_and_cls_pooling_match_a_hand_computation(tiny_bert):
    sentences = ["a short one", "a much longer sentence than the first one is"]
    for pooling in ("mean", "cls"):
        encoder = models.load_encoder(str(tiny_bert), pooling=pooling, device="cpu")
        encoder.eval()
        batch = encoder.tokenize(sentences)
        with torch.no_grad():
            hidden = encoder.backbone(**batch).last_hidden_state
            got = encoder(sentences)
        mask = batch["attention_mask"]
        for i in range(2):
            real = hidden[i, : int(mask[i].sum())]
            expected = real.mean(0) if pooling == "mean" else real[0]
            assert torch.allclose(got[i], expected, atol=1e-5)


def test_last_token_pooling_ignores_left_padding(tiny_llama):
    encoder = models.load_encoder(str(tiny_llama), template=SOMETHING, device="cpu")
    assert encoder.pooling == "last" and encoder.tokenizer.padding_side == "left"
    encoder.eval()
    sentences = ["short", "a considerably longer sentence with many more tokens in it"]
    with torch.no_grad():
        together = encoder(sentences)
        alone = torch.cat([encoder([s]) for s in sentences])
    assert torch.allclose(together, alone, atol=1e-4)
    encoded = encoder.encode(sentences)  # batched, sorted, returned in input order
    assert torch.allclose(encoded, alone, atol=1e-4)


def test_length_sorted_chunks_keep_each_padded_run_within_the_budget():
    # lengths 1, 3, 5, 9 in sorted order: 1 and 3 share a run (2 x 3 = 6 <= 8), 5 would make 3 x 5; 9 runs alone
    assert models.length_sorted_chunks([5, 1, 3, 9], max_tokens=8) == [[1, 2], [0], [3]]


@pytest.mark.parametrize("model", ["tiny_llama", "tiny_bert"])  # left padding with rotary positions; right padding
def test_training_forward_in_chunks_matches_one_padded_batch(model, request, monkeypatch):
    template = SOMETHING if model == "tiny_llama" else None
    encoder = models.load_encoder(str(request.getfixturevalue(model)), template=template, device="cpu")
    sentences = ["a considerably longer sentence with many more tokens in it", "short", "a middling one here", "x"]
    monkeypatch.setattr(models, "CPU_TRAINING_CHUNK_TOKENS", 24)
    lengths = [len(i) for i in encoder.tokenizer(encoder.prepare(sentences))["input_ids"]]
    assert len(models.length_sorted_chunks(lengths, 24)) > 1  # the budget does cut this batch
    weight = next(p for p in encoder.parameters() if p.requires_grad and p.dim() == 2)
    outputs, grads = [], []
    for forward in (lambda: encoder.embed(encoder.tokenize(sentences)), lambda: encoder(sentences)):
        out = forward()
        out.pow(2).sum().backward()
        outputs.append(out.detach())
        grads.append(weight.grad.clone())
        weight.grad = None
    assert torch.allclose(outputs[1], outputs[0], atol=1e-5)  # the same embeddings, in input order
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-4, atol=1e-4)  # float rounding: largest gradient about 1


def test_template_needs_last_token_pooling(tiny_bert):
    with pytest.raises(ValueError, match="pooling='last'"):
        models.load_encoder(str(tiny_bert), pooling="mean", template=SOMETHING, device="cpu")


def test_fingerprint_follows_weights_and_settings(tiny_bert):
    encoder = models.load_encoder(str(tiny_bert), device="cpu")
    first = encoder.fingerprint()
    assert encoder.fingerprint() == first
    with torch.no_grad():
        next(encoder.backbone.parameters())[0, 0] += 1e-3
    assert encoder.fingerprint() != first
    other = models.load_encoder(str(tiny_bert), pooling="cls", device="cpu")
    assert other.fingerprint() != models.load_encoder(str(tiny_bert), device="cpu").fingerprint()


def test_lora_trains_only_the_adapters_on_every_linear_layer(tiny_llama):
    encoder = models.load_encoder(str(tiny_llama), lora=models.LoraSettings(r=4, alpha=8), device="cpu")
    trainable = [n for n, p in encoder.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    adapted = {n.split(".lora_")[0].rsplit(".", 1)[-1] for n in trainable}
    assert adapted == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    loss = encoder(["one sentence", "another"]).pow(2).mean()
    loss.backward()
    assert all(p.grad is not None for n, p in encoder.named_parameters() if p.requires_grad)


def test_qlora_loads_nf4_double_quant_weights(tiny_llama):
    import bitsandbytes as bnb

    encoder = models.load_encoder(str(tiny_llama), quantize_4bit=True, lora=models.LoraSettings(r=4), device="cpu")
    base = encoder.backbone.get_base_model()
    quantized = [m for m in base.modules() if isinstance(m, bnb.nn.Linear4bit)]
    assert len(quantized) == 2 * 7
    weight = quantized[0].weight
    assert weight.quant_state.quant_type == "nf4" and weight.quant_state.nested  # double quantization
    out = encoder(["a sentence", "another sentence here"])
    assert out.shape == (2, 64) and torch.isfinite(out).all()
    out.sum().backward()
    assert any(p.grad is not None for n, p in encoder.named_parameters() if "lora_" in n)


@pytest.mark.slow
def test_packaged_smollm2_encodes_with_a_prompt():
    encoder = models.load_encoder("smollm2-135m", template=SOMETHING, device="cpu")
    vectors = encoder.encode(["A man is playing a guitar.", "A man plays the guitar.", "The stock market fell."])
    assert vectors.shape == (3, 576)
    cos = torch.nn.functional.cosine_similarity
    assert cos(vectors[0], vectors[1], dim=0) > cos(vectors[0], vectors[2], dim=0)


def test_loaded_encoder_is_in_eval_mode_before_and_after_encode():
    encoder = models.load_encoder("minilm-l6", device="cpu")  # a fresh copy: the session fixture is shared
    assert not encoder.training and not encoder.backbone.training
    sentences = ["A man is playing a guitar .", "A dog runs ."]
    first = encoder.encode(sentences)
    assert not encoder.training and not encoder.backbone.training  # encode() restores eval, not nn.Module's train
    with torch.no_grad():
        assert torch.allclose(encoder(sentences), first, atol=1e-5)  # no dropout: forward repeats encode


def test_count_parameters_of_the_packaged_minilm(minilm):
    trainable, total = models.count_parameters(minilm)
    assert total == trainable and 22_000_000 < total < 23_000_000  # all-MiniLM-L6-v2: 22.7M


def test_fingerprint_is_cheap_and_follows_changes_since_loading(tiny_bert):
    encoder = models.load_encoder(str(tiny_bert), device="cpu")
    first = encoder.fingerprint()
    assert first == models.folder_cache_key(str(tiny_bert))  # the same key without building the model
    encoder.encode(["a sentence"])
    assert encoder.fingerprint() == first  # inference changes nothing
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
    encoder.train()
    encoder(["a sentence", "another"]).sum().backward()
    optimizer.step()
    stepped = encoder.fingerprint()
    assert stepped != first and stepped == encoder.fingerprint()
    assert encoder.fingerprint(strict=True) != stepped  # the strict key hashes every tensor instead of the files


def test_fingerprint_covers_template_text_length_and_adapters(tiny_llama):
    a = models.load_encoder(str(tiny_llama), template="A *sent_0* B", device="cpu")
    b = models.load_encoder(str(tiny_llama), template="A *sent_0* C", device="cpu")
    c = models.load_encoder(str(tiny_llama), template="A *sent_0* B", max_length=16, device="cpu")
    assert len({a.fingerprint(), b.fingerprint(), c.fingerprint()}) == 3
    adapted = models.load_encoder(str(tiny_llama), template="A *sent_0* B", lora=models.LoraSettings(r=4), device="cpu")
    before = adapted.fingerprint()
    with torch.no_grad():
        next(p for n, p in adapted.named_parameters() if "lora_B" in n).add_(0.5)
    assert adapted.fingerprint() != before


@pytest.mark.parametrize(
    ("name", "model_class"),
    [
        ("tiny-random-bert", "BertModel"),
        ("tiny-random-roberta", "RobertaModel"),
        ("tiny-random-mistral", "MistralModel"),
    ],
)
def test_tiny_models_are_built_offline_in_their_family_and_reproducibly(name, model_class, tmp_path, monkeypatch):
    from stsnb.models import tiny as tiny_models

    tokenizer_source = models.resolve(tiny_models.TINY_MODELS[name].tokenizer_from)  # before the cache moves
    monkeypatch.setenv("STSNB_CACHE", str(tmp_path / "cache"))
    if tokenizer_source.source == "cache":  # SmolLM2's conversion from GGUF (20 s), made once per machine, is shared
        (tmp_path / "cache" / "models").mkdir(parents=True)
        (tmp_path / "cache" / "models" / tokenizer_source.name).symlink_to(tokenizer_source.path)
    resolved = models.resolve(name)
    assert resolved.source == "cache" and resolved.kind == tiny_models.TINY_MODELS[name].kind
    encoder = models.load_encoder(name, device="cpu")
    assert type(encoder.backbone).__name__ == model_class
    embeddings = encoder(["A man plays a guitar.", "A long sentence. " * 60])  # the papers' 512-token inputs fit
    assert embeddings.shape == (2, tiny_models.WIDTH) and torch.isfinite(embeddings).all()
    again = tiny_models.build(name, tmp_path / "again")
    from safetensors.torch import load_file

    built, rebuilt = (load_file(next(Path(f).glob("*.safetensors"))) for f in (resolved.path, again))
    assert built.keys() == rebuilt.keys() and all(torch.equal(built[k], rebuilt[k]) for k in built)


def test_adding_lora_shows_no_library_future_warning():
    """peft reads transformers' old checkpointing names (a FutureWarning per call in a notebook's output)."""
    import warnings

    from stsnb.models import loading as models

    encoder = models.load_encoder("tiny-random-mistral", pooling="last")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        models.add_lora(encoder, models.LoraSettings(r=4, alpha=8, dropout=0.0))
    assert any("lora_" in name for name, _ in encoder.backbone.named_parameters())


def test_the_gguf_readers_bar_is_quiet_in_a_batch_run_and_shown_otherwise(monkeypatch):
    """A batch kernel (TQDM_DISABLE=1) saves no "de-quantizing GGUF tensors" widget; elsewhere the bar shows."""
    from transformers import modeling_gguf_pytorch_utils as gguf_reader

    from stsnb.models.folders import quiet_gguf_bar

    original = gguf_reader.tqdm
    monkeypatch.setenv("TQDM_DISABLE", "1")
    with quiet_gguf_bar():
        assert gguf_reader.tqdm([1], file=io.StringIO()).disable
    assert gguf_reader.tqdm is original
    monkeypatch.delenv("TQDM_DISABLE")
    with quiet_gguf_bar():
        assert not gguf_reader.tqdm([1], file=io.StringIO()).disable
