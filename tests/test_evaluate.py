"""STS evaluation: the protocol's arithmetic, the cache, and agreement with an independent computation."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import pearsonr, spearmanr

from stsnb import data
from stsnb.evaluation import evaluate


def test_task_names_parse_case_insensitively():
    assert evaluate.parse_tasks("all") == evaluate.STS_TASKS
    assert evaluate.parse_tasks("sts12,STSB,sickr") == ("STS12", "STSBenchmark", "SICKRelatedness")
    with pytest.raises(ValueError, match="unknown task 'sts17'"):
        evaluate.parse_tasks("sts17")


def test_all_mean_and_wmean_follow_senteval():
    rng = np.random.default_rng(0)
    pairs, sims = [], []
    for subset, n in (("a", 30), ("b", 10)):
        gold = rng.uniform(0, 5, n)
        pairs += [data.STSPair("x", "y", float(g), "T", subset) for g in gold]
        sims += list(gold + rng.normal(0, 2 if subset == "a" else 0.5, n))
    sims = np.array(sims)
    gold = np.array([p.score for p in pairs])
    result = evaluate.score_task("T", pairs, sims)
    assert result.spearman == pytest.approx(100 * spearmanr(sims, gold)[0])  # "all": the concatenation
    per = [100 * spearmanr(sims[:30], gold[:30])[0], 100 * spearmanr(sims[30:], gold[30:])[0]]
    assert result.spearman_mean == pytest.approx(np.mean(per))
    assert result.spearman_wmean == pytest.approx((30 * per[0] + 10 * per[1]) / 40)
    assert result.pearson == pytest.approx(100 * pearsonr(sims, gold)[0])
    assert result.subsets["b"]["n"] == 10


def test_correlations_refuse_mismatched_or_tiny_input():
    with pytest.raises(ValueError, match="3 predictions for 2 gold"):
        evaluate.correlations([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="at least 2"):
        evaluate.correlations([1], [1])


@pytest.mark.long  # two evaluations of the real model (11 s): off the default tier
def test_cache_makes_a_second_evaluation_encode_nothing(minilm, tmp_path, data_dir):
    cache = evaluate.EmbeddingCache(tmp_path / "emb")
    first = evaluate.sts(minilm, "sts13", data_dir=data_dir, cache=cache)
    assert first.encoded > 0
    again = evaluate.sts(minilm, "sts13", data_dir=data_dir, cache=cache)
    assert again.encoded == 0 and again.headline() == first.headline()
    from_disk = evaluate.sts(minilm, "sts13", data_dir=data_dir, cache=evaluate.EmbeddingCache(tmp_path / "emb"))
    assert from_disk.encoded == 0 and from_disk.headline() == first.headline()
    with torch.no_grad():  # changed weights -> a new fingerprint -> encoded again
        param = next(minilm.backbone.parameters())
        param[0, 0] += 1.0
    try:
        assert evaluate.sts(minilm, "sts13", data_dir=data_dir, cache=cache).encoded == first.encoded
    finally:
        with torch.no_grad():
            param[0, 0] -= 1.0


@pytest.mark.slow
@pytest.mark.long
def test_stsnb_eval_equals_sentence_transformers_plus_scipy_on_all_seven_tasks(data_dir, tmp_path):
    """The independent computation: the model's own sentence-transformers encode, cosine, scipy Spearman."""
    import json
    import os
    import subprocess
    import sys

    from sentence_transformers import SentenceTransformer

    from stsnb.models.loading import resolve

    # an empty cache of its own: the embeddings compared are computed now, not read from an earlier run
    env = {**os.environ, "STSNB_CACHE": str(tmp_path / "cache")}
    out = subprocess.run(
        [sys.executable, "-m", "stsnb.cli", "eval", "--model", "minilm-l6", "--json", "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    assert "26289 sentences encoded" in out.stderr, out.stderr[-500:]
    ours = json.loads(out.stdout)
    reference = SentenceTransformer(resolve("minilm-l6").path, device="cpu")
    tasks = {task: evaluate.load_task(task, data_dir=data_dir) for task in evaluate.STS_TASKS}
    sentences = sorted({s for pairs in tasks.values() for p in pairs for s in (p.sent1, p.sent2)})
    encoded = reference.encode(sentences, batch_size=64, convert_to_tensor=True)  # each sentence once
    row = {sentence: i for i, sentence in enumerate(sentences)}
    expected = {}
    for task, pairs in tasks.items():
        a, b = (encoded[[row[getattr(p, side)] for p in pairs]] for side in ("sent1", "sent2"))
        cosine = torch.nn.functional.cosine_similarity(a, b).numpy()
        expected[task] = 100 * spearmanr(cosine, [p.score for p in pairs])[0]
    for task, value in expected.items():
        assert ours[task] == pytest.approx(value, abs=0.01), task
    assert ours["avg"] == pytest.approx(np.mean(list(expected.values())), abs=0.01)


class _FixedEncoder:
    """Stands in for a model: known vectors, a fixed fingerprint."""

    def __init__(self, key: str, value: float):
        self.key, self.value = key, value

    def fingerprint(self) -> str:
        return self.key

    def encode(self, sentences, **kwargs):
        return torch.full((len(sentences), 3), self.value)


def test_cache_files_merge_what_two_processes_saved(tmp_path):
    first, second = evaluate.EmbeddingCache(tmp_path), evaluate.EmbeddingCache(tmp_path)
    evaluate.embed_sentences(_FixedEncoder("k", 1.0), ["one", "two"], first)
    evaluate.embed_sentences(_FixedEncoder("k", 1.0), ["three"], second)  # did not see first's entries in memory
    table, encoded = evaluate.embed_sentences(
        _FixedEncoder("k", 1.0), ["one", "two", "three"], evaluate.EmbeddingCache(tmp_path)
    )
    assert encoded == 0 and set(table) == {"one", "two", "three"}
    assert not list(tmp_path.glob("*.tmp"))  # written atomically: no leftovers


def test_nan_embeddings_raise_with_their_count():
    with pytest.raises(FloatingPointError, match="2 of 2 embeddings are NaN"):
        evaluate.embed_sentences(_FixedEncoder("nan", float("nan")), ["a", "b"], cache=None)


def _fresh_minilm():
    from stsnb.models.loading import load_encoder

    return load_encoder("minilm-l6", device="cpu")


def test_cache_key_changes_with_a_dtype_cast_on_the_real_minilm():
    encoder = _fresh_minilm()
    before = encoder.fingerprint()
    encoder.backbone.to(torch.bfloat16)  # swaps param.data: no version counter moves
    assert encoder.fingerprint() != before
    encoder.backbone.to(torch.float32)  # bf16 lost bits: still not the loaded model
    assert encoder.fingerprint() != before


def test_cache_key_changes_with_load_state_dict_of_other_weights_on_the_real_minilm():
    encoder = _fresh_minilm()
    before = encoder.fingerprint()
    other = {k: v + 0.01 if v.is_floating_point() else v for k, v in encoder.backbone.state_dict().items()}
    encoder.backbone.load_state_dict(other)
    assert encoder.fingerprint() != before


def test_cache_key_changes_with_a_lora_merge_and_unload_on_the_real_minilm():
    from stsnb.models.loading import LoraSettings, add_lora

    encoder = _fresh_minilm()
    before = encoder.fingerprint()
    add_lora(encoder, LoraSettings(r=4, alpha=8, dropout=0.0, target_modules=("query", "value")))
    with torch.no_grad():  # a trained adapter: B is zero at initialisation, so give it values
        for name, param in encoder.backbone.named_parameters():
            if "lora_B" in name:
                param.normal_(std=0.05)
    with_adapter = encoder.fingerprint()
    encoder.backbone = encoder.backbone.merge_and_unload()  # adds B A to the base weights through .data
    merged = encoder.fingerprint()
    assert len({before, with_adapter, merged}) == 3


def test_an_untouched_model_keeps_its_key_and_the_folder_key_matches_it():
    from stsnb.models.loading import folder_cache_key

    encoder = _fresh_minilm()
    assert encoder.fingerprint() == encoder.fingerprint()
    assert folder_cache_key("minilm-l6") == encoder.fingerprint()


class _LengthEncoder(_FixedEncoder):
    """Vectors that depend on the text: (length, 1, number of '.')."""

    def encode(self, sentences, **kwargs):
        return torch.tensor([[float(len(s)), 1.0, float(s.count("."))] for s in sentences])


def test_preprocess_maps_sentences_before_encoding_and_keys_the_cache_by_the_encoded_text(data_dir):
    pairs = [data.STSPair("a cat", "a cat.", 5.0, "t", "s"), data.STSPair("dogs", "a dog", 1.0, "t", "s")]
    cache, encoder = evaluate.EmbeddingCache(), _LengthEncoder("k", 0.0)
    plain = evaluate.pair_similarities(encoder, pairs, cache)
    fixed = evaluate.pair_similarities(encoder, pairs, cache, preprocess=lambda s: s if s.endswith(".") else s + ".")
    assert plain[0] < 1.0 and fixed[0] == pytest.approx(1.0)  # "a cat" became "a cat." before encoding
    assert set(cache.get("k")) == {"a cat", "a cat.", "dogs", "a dog", "dogs.", "a dog."}  # both texts, own entries
    seen = []
    evaluate.EvalPairs("stsb", 4, 0, preprocess=lambda s: seen.append(s) or s).predictions(encoder)
    assert len(seen) >= 8  # the scored test pairs went through preprocess (data folder: real STS-B test)
