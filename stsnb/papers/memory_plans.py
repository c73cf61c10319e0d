"""What each training notebook runs, as the memory estimate sees it (``stsnb run --check``): per training setting,
the model, the sequences one GPU holds in a forward pass, their padded length and how the weights are held.

Lengths: where the official code pads to ``max_length`` (STS-Regression) that is the length; elsewhere a batch is
padded to its longest member, measured on the real data (``plan_check.longest_in_batch``) and capped at
``max_length``. Pcc-tuning cuts sentences to the official 32 (stage 1) and 64 (stage 2) tokens inside its prompt.
Without a data folder the cap is used (an upper bound).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import data
from ..memory_estimate import ScoringSetup, TrainingSetup
from ..plan_check import longest_in_batch

Row = tuple[str, str, TrainingSetup | ScoringSetup]


def _bf16(params: Mapping[str, Any]) -> int:
    """Activation bytes: the papers train in bf16 on GPUs (fp32 only on the CPU)."""
    return 2 if str(params.get("profile", "")) in ("paper", "rehearsal") else 4


def _measured(texts_of, tokenizer: str, batch: int, cap: int) -> int:
    try:
        texts = texts_of()
    except (data.DataError, OSError):
        return cap
    return min(cap, longest_in_batch(texts, tokenizer, batch))


def _pcc_stages(params: Mapping[str, Any]) -> list[tuple[str, int, int, int]]:
    """``(template, stage, global batch, cutoff)`` of every training stage notebook 10 runs: ``protocol.Protocol``'s
    batches (with ``use_paper_recipe`` each template's official ones, ``recipes.paper_recipe``, not
    ``stage1_batch_size``) and ``pipeline.plan``'s rule that only the first template runs every stage-2 batch size,
    the others their first."""
    from .pcc_tuning import protocol

    proto = protocol.Protocol(
        num_processes=int(params.get("num_processes", 1)),
        stage1_batch_size=int(params.get("stage1_batch_size", 16)),
        stage2_batch_sizes=tuple(int(b) for b in params.get("stage2_batch_sizes") or [32]),
        recipe_row=str(params.get("paper_row", "Mistral-7b")) if params.get("use_paper_recipe") else None,
        stage1_cutoff=int(params.get("stage1_cutoff", 32)),
        stage2_cutoff=int(params.get("stage2_cutoff", 64)),
    )
    stages = []
    for number, template in enumerate(params.get("templates") or ["sth"]):
        cut1, cut2 = proto.cutoffs(template)
        sizes = proto.batch_sizes(template)
        stages.append((template, 1, proto.stage1_batch(template), cut1))
        stages += [(template, 2, b, cut2) for b in (sizes if number == 0 else sizes[:1])]
    return stages


def pcc_tuning(params: Mapping[str, Any]) -> list[Row]:
    """Stage 1: three prompts per triplet (Eq. 8); stage 2: two per pair, the whole batch in one Pearson (Eq. 9);
    each at its largest per-GPU batch x prompt length over the templates and batch sizes the notebook trains (a
    global batch split over the processes as ``protocol.Protocol`` does). With ``quantize_4bit`` and
    ``score_unquantized``, the scoring on the 16-bit copy of the base (``memory_estimate.scoring_estimate``: on
    the main process only, the training model alive beside it), its batches of at most ``max_tokens`` padded
    tokens (``evaluate.embed_sentences``) of prompts cut at ``max_length``."""
    import inspect

    from .. import evaluate
    from .pcc_tuning import prompts

    processes = max(1, int(params.get("num_processes", 1)))
    lora_r = int(params.get("lora_r", 64))
    quantize = bool(params.get("quantize_4bit", False))
    common = dict(
        activation_bytes=_bf16(params),
        quantize_4bit=quantize,
        lora_r=lora_r,
        lora_dropout=float(params.get("lora_dropout", 0.05)),
        gradient_checkpointing=bool(params.get("gradient_checkpointing", False)),
    )
    widest: dict[int, tuple[int, int, str]] = {}  # stage -> (sequences per GPU, prompt tokens, template)
    stages = _pcc_stages(params)
    template_tokens = {  # each template's own tokens, measured once (a tokenizer load per measurement)
        t: _measured(lambda t=t: [prompts.template(t)], "smollm2-135m", 1, 10**6)
        for t in dict.fromkeys(s[0] for s in stages)
    }
    for template, stage, batch, cutoff in stages:
        tokens = template_tokens[template] + cutoff
        sequences = (3 if stage == 1 else 2) * max(1, batch // processes)
        if stage not in widest or sequences * tokens > widest[stage][0] * widest[stage][1]:
            widest[stage] = (sequences, tokens, template)
    model = str(params.get("backbone", "smollm2-135m"))
    rows = [
        (f"stage {stage} ({'Eq. 8' if stage == 1 else 'Eq. 9'}), {template}", model,
         TrainingSetup(sequences, tokens, **common))
        for stage, (sequences, tokens, template) in sorted(widest.items())
    ]  # fmt: skip
    if quantize and bool(params.get("score_unquantized", True)):
        defaults = inspect.signature(evaluate.embed_sentences).parameters
        batch, max_tokens = defaults["batch_size"].default, defaults["max_tokens"].default
        length = int(params.get("max_length") or 512)
        scoring = ScoringSetup(max(1, min(batch, max_tokens // length)), length, lora_r, activation_bytes=_bf16(params))
        rows.append(("scoring on the 16-bit copy (main process)", model, scoring))
    return rows


def sts_regression(params: Mapping[str, Any]) -> list[Row]:
    """Table 1: both sentences of each pair through the encoder, padded to ``max_length`` (the official code);
    the contrastive backbones' stage 2 likewise."""
    length = int(params.get("max_length", 256))
    common = dict(
        activation_bytes=_bf16(params),
        dropout=0.1,
        gradient_checkpointing=bool(params.get("gradient_checkpointing", False)),
    )
    rows = [
        ("Table 1", str(b), TrainingSetup(2 * int(params.get("batch_size", 16)), length, **common))
        for b in params.get("backbones") or []
    ]
    rows += [
        ("Table 3 stage 2", str(b), TrainingSetup(2 * int(params.get("stage2_batch_size", 16)), length, **common))
        for b in params.get("contrastive_backbones") or []
    ]
    return rows


def _segments_per_batch(texts, tokenizer: str, batch: int, cap: int, slice_length: int, draws: int = 200) -> int:
    """The 95th percentile, over random batches of ``batch`` texts cut at ``cap`` tokens, of their segment count
    under HiCL's queue rule (``1 + (n - 1) // L`` per text, Section 3.1)."""
    import numpy as np
    from transformers import AutoTokenizer

    from ..models import resolve

    ids = AutoTokenizer.from_pretrained(resolve(tokenizer).path)(list(texts), add_special_tokens=False)["input_ids"]
    counts = np.array([1 + (max(1, min(len(x), cap)) - 1) // slice_length for x in ids])
    rng = np.random.default_rng(0)
    size = min(batch, len(counts))
    totals = [counts[rng.choice(len(counts), size=size, replace=False)].sum() for _ in range(draws)]
    return int(np.percentile(totals, 95) * batch / size)


def hicl(params: Mapping[str, Any]) -> list[Row]:
    """The larger of each arm's forward (Section 4.1, Appendix A.1, A.3): the baselines encode every sentence whole,
    padded to the longest of the batch and cut at SimCSE's 32 tokens under ``truncation="paper"`` (else at
    ``max_length``); +HiCL encodes every segment of at most L tokens. Two views each (SimCSE, ESimCSE), three with
    SNCSE's prompt around each (its negation). ESimCSE's momentum copy (weights only, no gradient) is not counted."""
    from .hicl.variants import SNCSE_ANCHOR_PROMPT

    batch = int(params.get("batch_size", 32))
    cap = int(params.get("max_length", 128))
    slice_length = int(params.get("slice_length", 32))
    methods = list(params.get("methods") or ["simcse", "esimcse", "sncse"])
    views = 3 if "sncse" in methods else 2
    prompt = 0
    if "sncse" in methods:
        prompt = _measured(lambda: [SNCSE_ANCHOR_PROMPT.replace("[X]", "")], "minilm-l6", 1, 10**6) - 2
    length = _measured(lambda: data.load_wiki(2000), "minilm-l6", batch, cap + 2)
    if str(params.get("truncation", "paper")) == "paper":
        length = min(length, int(params.get("baseline_max_length", 32)))
    try:
        segments = _segments_per_batch(data.load_wiki(2000), "minilm-l6", batch, cap, slice_length)
    except (data.DataError, OSError):
        segments = batch * (1 + (cap - 1) // slice_length)  # every sentence at the cap: an upper bound
    common = dict(
        activation_bytes=_bf16(params),
        dropout=0.1,
        gradient_checkpointing=bool(params.get("gradient_checkpointing", False)),
    )
    return [
        (f"baselines, {views} views", str(params.get("backbone", "smollm2-135m-l6")),
         TrainingSetup(views * batch, length + prompt, **common)),
        (f"+HiCL segments, {views} views", str(params.get("backbone", "smollm2-135m-l6")),
         TrainingSetup(views * segments, slice_length + 2 + prompt, **common)),
    ]  # fmt: skip


def ccl(params: Mapping[str, Any]) -> list[Row]:
    """A micro-batch of quadruples: two rows each; the bi-encoder encodes two texts per row, the tri-encoder three."""
    quadruples = int(params.get("batch_size", 8))
    cap = int(params.get("max_length", 64))

    def texts():
        return [f"{r.sent1} {r.condition}" for r in data.load_csts("train")][:3000]

    length = _measured(texts, "minilm-l6", 2 * quadruples, cap)
    rows = []
    for backbone in params.get("backbones") or []:
        for arch in params.get("architectures") or ["bi", "tri"]:
            sequences = 2 * quadruples * (3 if arch == "tri" else 2)
            setup = TrainingSetup(
                sequences,
                length,
                activation_bytes=_bf16(params),
                dropout=0.1,
                gradient_checkpointing=bool(params.get("gradient_checkpointing", False)),
            )
            rows.append((f"Table 3 {arch}-encoder", str(backbone), setup))
    return rows
