"""Notebook 30's fits for ``stsnb run --check``'s time and disk estimate (``stsnb.gpu.cost_estimate``): each method of
``methods`` on its seeds (``main_claim_seeds`` for SimCSE, the main claim's pair; ``seeds`` for the others),
baseline and +HiCL arm, then one +HiCL fit of ``ablation_method`` per entry of ``ablations``; the untrained backbone
scored (plain, and with SNCSE's prompt). Every fit runs in the notebook's kernel: one process, one GPU.

Views per sentence (Section 4.1): SimCSE 2, ESimCSE 2 plus its momentum encoder's forward on the positives (no
backward), SNCSE 3, each inside SNCSE's prompt. The baselines encode each sentence whole, padded to the longest of
the batch and cut at ``baseline_max_length`` under ``truncation="paper"``; +HiCL encodes every segment of at most
``slice_length`` tokens (``1 + (n - 1) // L`` per sentence cut at ``max_length``, Section 3.1) padded to L plus
[CLS] and [SEP], so a sentence costs its mean segment count x (L + 2) tokens. Lengths are measured on the data
folder's Wikipedia sentences (MiniLM's WordPiece, bert-base-uncased's vocabulary) standing in for the whole corpus;
the Hub's corpus has 1M sentences. An ablation with ``full_segments`` trains the baseline on every segment as a
sentence: the same tokens as a +HiCL arm. Not counted: the efficiency probes (a few steps at fixed lengths, and
``efficiency_train_batches`` training steps per mode and pass at equal truncation) and the queue-fill probe.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ... import data as data
from ...gpu import worst_case
from ...gpu.cost_estimate import FitRow, dev_sentences, evaluations, sts_test_sentences
from ...gpu.memory_estimate import KNOWN_SHAPES
from ...gpu.plan_check import measured_length, measured_or_cap
from .variants import SNCSE_ANCHOR_PROMPT

WIKI1M_SENTENCES = 1_000_000
TOKENIZER = "minilm-l6"
VIEWS = {"simcse": (2, 0), "esimcse": (2, 1), "sncse": (3, 0)}  # (trained views, forward-only views)


@functools.lru_cache(maxsize=16)
def _segments_per_sentence(cap: int, slice_length: int) -> tuple[float, bool]:
    """Mean segment count of a sentence cut at ``cap`` tokens (measured; else every sentence at the cap)."""
    from transformers import AutoTokenizer

    from ...models.loading import resolve

    try:
        texts = data.load_wiki(2000)
    except (data.DataError, OSError):
        worst_case.note(f"+HiCL's segments at every sentence's cap of {cap} tokens")
        return float(1 + (cap - 1) // slice_length), False
    ids = AutoTokenizer.from_pretrained(resolve(TOKENIZER).path)(texts, add_special_tokens=False)["input_ids"]
    return sum(1 + (max(1, min(len(x), cap)) - 1) // slice_length for x in ids) / len(ids), True


def _corpus(source: str, limit: int | None) -> int:
    if source == "sample":
        try:
            total = len(data.load_wiki())
        except (data.DataError, OSError):
            total = WIKI1M_SENTENCES
    else:
        total = WIKI1M_SENTENCES
    return total if limit is None else min(int(limit), total)


def fit_plan(params: Mapping[str, Any]) -> list[FitRow]:
    """The fits of the module docstring, one row per (method, arm) and per ablation."""
    p = params
    model = str(p.get("backbone", "smollm2-135m-l6"))
    batch, epochs = int(p.get("batch_size", 32)), float(p.get("epochs", 1))
    cap, slice_length = int(p.get("max_length", 128)), int(p.get("slice_length", 32))
    n = _corpus(str(p.get("corpus_source", "sample")), p.get("train_sentences"))
    methods = list(p.get("methods") or ["simcse", "esimcse", "sncse"])
    prompt = measured_length(lambda: [SNCSE_ANCHOR_PROMPT.replace("[X]", "")], TOKENIZER, 1, 10**6) - 2
    baseline_cap = int(p.get("baseline_max_length", 32)) if p.get("truncation", "paper") == "paper" else cap + 2
    whole = measured_or_cap(lambda: data.load_wiki(2000), TOKENIZER, batch, baseline_cap)
    shape = KNOWN_SHAPES.get(model)
    frozen = shape.vocab * shape.hidden if shape is not None and p.get("freeze_embeddings") else 0
    test, _ = sts_test_sentences(p.get("eval_max_pairs"))
    dev = dev_sentences(p.get("dev_pairs"))
    common = dict(
        examples=n,
        epochs=epochs,
        global_batch=batch,
        batch_level=True,
        frozen_parameters=frozen,
        # "auto" turns it on only where the estimate without it does not fit (hicl.memory.checkpointing): off on the
        # 24 and 80 GiB GPUs --check shows, so the time is priced without it (a smaller GPU pays about a third more)
        gradient_checkpointing=p.get("gradient_checkpointing") is True,
        dev_evaluations=evaluations(n, batch, epochs, p.get("eval_every")),
        dev_sequences=dev,
        test_sequences=test,
    )

    def arm(label: str, method: str, count: int, hicl: bool, length: int = slice_length) -> FitRow:
        views, forward_only = VIEWS.get(method, (2, 0))
        extra = prompt if method == "sncse" else 0
        if hicl:
            segments, measured = _segments_per_sentence(cap, length)
            tokens = round(segments * (length + 2 + extra))
        else:
            tokens, measured = whole[0] + extra, whole[1]
        return FitRow(label, model, count, sequences_per_example=views, forward_only_sequences=forward_only,
                      tokens=tokens, tokens_measured=measured, **common)  # fmt: skip

    rows = []
    for method in methods:
        seeds = list(p.get("main_claim_seeds") or [0]) if method == "simcse" else list(p.get("seeds") or [0])
        rows.append(arm(f"{method} baseline", method, len(seeds), False))
        rows.append(arm(f"{method} +HiCL", method, len(seeds), True))
    ablation_method = str(p.get("ablation_method", "simcse"))
    for change in p.get("ablations") or []:
        name = ", ".join(f"{k}={v}" for k, v in change.items())
        length = int(change.get("slice_length", slice_length))
        rows.append(arm(f"ablation {name}", ablation_method, 1, True, length))
    untrained = ["plain"] + (["sncse"] if "sncse" in methods else [])
    rows += [
        FitRow(f"untrained, {u} (scoring)", model, 1, 0, 0, 1, whole[0], whole[1], 0, False, "none",
               test_sequences=test)
        for u in untrained
    ]  # fmt: skip
    return rows
