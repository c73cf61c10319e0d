"""HiCL's efficiency claim where the paper makes it: Table 12's comparison at equal truncation, on the training data.

The abstract says HiCL "boosts training efficiency by first encoding short segments"; Section 3.3 puts it as "we are
faster than baselines when maintaining the same sequence truncation size 512", and Appendix A.1 restricts the claim
to "training with identical information, where the same truncation size is maintained" (its Table 12: training
minutes of SimCSE and SimCSE+HiCL, both at 512 tokens, on wiki1m). So the main claim's measurement
(:func:`timed_steps`) is a SimCSE training step on the **training data's own batches**, both arms cut at the same
length (``max_length``): SimCSE encoding each sentence whole (padded to the batch's longest), SimCSE+HiCL slicing it
into segments of L tokens (Section 3.1) with the local loss of Eq. 2. Each step is a whole optimizer step (forward of
both dropout views, the loss, backward, AdamW), timed to completion; the two modes alternate batch by batch on one
backbone in one process, so a slow moment of the shared machine falls on both.

:func:`efficiency_claim` makes it the main-claim row: the seconds of a pass over the timed batches whole minus in
segments, the median pass of each mode, with the **range over the passes** (lowest whole minus highest segments to
highest whole minus lowest segments; a range of measured seconds, not a confidence interval, so it stays out of the
interval count: ``unit`` "seconds ..."). Its smallest effect of interest is half the saving Table 12 reports for the
notebook's ``paper_backbone`` (BERT-base: 87.5 -> 69.4 minutes, 21% of SimCSE's time). The fixed-length step of
``efficiency`` is the mechanism at lengths of our choosing; this is the claim at the lengths the data has.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ...evaluation import claims
from ...models import progress
from . import quotes
from .objectives import ObjectiveSettings
from .reported import REPORTED, TABLE12
from .training import BackboneSettings, ContrastiveModel, HiclSettings, make_examples

MODES = ("whole", "segments")
EFFICIENCY_CLAIM = (
    "Section 3.3: a SimCSE training step is faster in segments than on whole sequences, on the training data's "
    "batches at equal truncation (Table 12; seconds whole minus in segments)"
)


def _batches(examples: Sequence, batch_size: int, n_batches: int | None, seed: int) -> list[list]:
    """``n_batches`` batches of ``batch_size`` examples drawn without replacement with ``seed`` (as a shuffled epoch
    would deal them; None: every full batch of the epoch)."""
    if batch_size < 2:
        raise ValueError(f"batch_size must be >= 2 (Eq. 1 needs an in-batch negative), got {batch_size}")
    available = len(examples) // batch_size
    count = available if n_batches is None else int(n_batches)
    if not 1 <= count <= available:
        raise ValueError(f"n_batches must be 1..{available} ({len(examples)} sentences of {batch_size}), got {count}")
    order = random.Random(seed).sample(range(len(examples)), count * batch_size)
    return [[examples[i] for i in order[k * batch_size : (k + 1) * batch_size]] for k in range(count)]


def timed_steps(
    backbone: BackboneSettings,
    sentences: Sequence[str],
    *,
    max_length: int,
    batch_size: int,
    n_batches: int | None,
    repeats: int,
    hicl: HiclSettings,
    objective: ObjectiveSettings,
    lr: float,
    seed: int = 0,
) -> dict:
    """Seconds of every SimCSE training step on ``n_batches`` batches of ``sentences`` (cut at ``max_length``
    sentence tokens for both modes), whole and in segments (``hicl``: L, pooling, special tokens; ``objective``: the
    +HiCL arm's alpha and tau), ``repeats`` passes each after one untimed warm-up step per mode, on a freshly loaded
    backbone. Returns per mode a list of passes, each a list of per-batch seconds, and per batch its longest sentence
    (tokens) and its segment count."""
    import torch

    from ...training.train import resolve_mixed_precision

    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    encoder = backbone.load()
    examples, _ = make_examples(encoder.tokenizer, sentences, max_length, "simcse")
    batches = _batches(examples, batch_size, n_batches, seed)
    torch.manual_seed(seed)
    models = {
        "whole": ContrastiveModel(encoder, "simcse", HiclSettings(False), objective, seed=seed),
        "segments": ContrastiveModel(encoder, "simcse", replace(hicl, enabled=True), objective, seed=seed),
    }
    parameters = [p for p in encoder.backbone.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(parameters, lr=lr)
    cuda = next(encoder.backbone.parameters()).device.type == "cuda"
    precision = resolve_mixed_precision("auto") if cuda else "no"
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)

    def step(mode: str, batch: list) -> float:
        if cuda:
            torch.cuda.synchronize()
        started = time.perf_counter()
        with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
            loss = models[mode].loss(batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if cuda:
            torch.cuda.synchronize()  # kernels run asynchronously: time them to completion
        return time.perf_counter() - started

    encoder.train()
    for mode in MODES:
        step(mode, batches[0])  # warm-up, not timed
    seconds: dict[str, list[list[float]]] = {mode: [] for mode in MODES}
    with progress.bar(repeats * len(batches) * len(MODES), "timed steps", "step") as shown:
        for r in range(repeats):
            passes = {mode: [] for mode in MODES}
            for b, batch in enumerate(batches):
                for mode in MODES if (r + b) % 2 == 0 else MODES[::-1]:  # alternate which mode goes first
                    passes[mode].append(step(mode, batch))
                    shown.update(1)  # outside the timed step
            for mode in MODES:
                seconds[mode].append(passes[mode])
    encoder.eval()
    segments = models["segments"]
    return {
        "seconds": seconds,
        "batch_longest": [max(len(e.ids) for e in batch) for batch in batches],
        "batch_segments": [len(segments.segments([e.ids for e in b], segments.anchor_template)) for b in batches],
        "batch_size": batch_size,
        "n_batches": len(batches),
        "repeats": repeats,
        "max_length": max_length,
        "slice_length": hicl.slice_length,
        "device": str(next(encoder.backbone.parameters()).device),
        "threads": torch.get_num_threads(),
        "precision": precision,
    }


def pass_seconds(timing: Mapping) -> dict[str, list[float]]:
    """Per mode, the seconds of each timed pass over the batches (the sum of its steps)."""
    return {mode: [sum(p) for p in timing["seconds"][mode]] for mode in MODES}


def table12_saving(paper_backbone: str = "BERT-base") -> float:
    """The share of SimCSE's training time Table 12 saves with HiCL for ``paper_backbone`` (BERT-base: 1 - 69.4 /
    87.5 = 0.21)."""
    if paper_backbone not in TABLE12:
        raise ValueError(f"Table 12 has {sorted(TABLE12)}, got {paper_backbone!r}")
    whole = REPORTED.value("Table 12", f"SimCSE-{paper_backbone}", "train_minutes")
    return 1 - REPORTED.value("Table 12", f"SimCSE-{paper_backbone} +HiCL", "train_minutes") / whole


def efficiency_claim(timing: Mapping, paper_backbone: str = "BERT-base") -> dict:
    """The efficiency main claim as a claim row (module docstring): median pass whole minus in segments, with the
    range over the passes; direction +1 (segments faster), the smallest effect half Table 12's saving of the median
    whole pass; tested only where each mode was timed over at least two passes (one pass has no range, and one
    interruption would decide it)."""
    passes = pass_seconds(timing)
    whole, parts = passes["whole"], passes["segments"]
    middle_whole, middle_parts = statistics.median(whole), statistics.median(parts)
    gap = (middle_whole - middle_parts, min(whole) - max(parts), max(whole) - min(parts))
    saving = table12_saving(paper_backbone)
    n, repeats = timing["n_batches"], min(len(whole), len(parts))
    enough = claims.precondition(
        "each mode timed over at least two passes", repeats >= 2, f"{len(whole)} passes whole, {len(parts)} in segments"
    )
    return claims.claim(
        EFFICIENCY_CLAIM,
        {f"{repeats} timed pass{'es' * (repeats != 1)} over {n} batches": gap},
        paper_quote=quotes.EQUAL_TRUNCATION,
        direction=+1,
        smallest_effect=max(middle_whole * saving / 2, 1e-9),
        smallest_effect_reason=(
            f"half the saving Table 12 reports for SimCSE-{paper_backbone} ({100 * saving:.0f}% of SimCSE's time), "
            f"of our median whole pass ({middle_whole:.1f} s)"
        ),
        preconditions=[enough],
        main_claim=True,
        unit=f"seconds per pass over {n} training batches",
        ratio=middle_whole / middle_parts,
        paper_ratio=1 / (1 - saving),
        n_batches=n,
        batch_size=timing["batch_size"],
        max_length=timing["max_length"],
        slice_length=timing["slice_length"],
        whole_passes=whole,
        segment_passes=parts,
    )


def efficiency_line(row: Mapping) -> str:
    """The efficiency main claim in one sentence: the ratio of the median passes, the seconds with their range, the
    verdict (or why it was not tested), beside Table 12's ratio."""
    passes = min(len(row["whole_passes"]), len(row["segment_passes"]))
    verdict = f"{row['verdict']} ({passes} timed pass{'es' * (passes != 1)} per mode, one session on this machine)"
    if row.get("not_tested_because"):
        verdict += f": {row['not_tested_because']}"
    ratio, segments = row["ratio"], f"in segments of L = {row['slice_length']}"
    took = f"{ratio:.2f}x less time {segments} than" if ratio >= 1 else f"{1 / ratio:.2f}x as long {segments} as"
    return (
        f"SimCSE training steps on {row['n_batches']} batches of {row['batch_size']} training sentences, both modes "
        f"cut at {row['max_length']} tokens, took {took} whole ({row['difference']:+.2f} s [{row['low']:+.2f}, "
        f"{row['high']:+.2f}] per pass, the range of the timed passes; Table 12: {row['paper_ratio']:.2f}x): {verdict}"
    )


def batch_table(timing: Mapping) -> str:
    """Per timed batch: its longest sentence, its segment count, the median seconds whole and in segments, and their
    ratio (a text table): where the batch's sentences fit in one segment, slicing has nothing to save."""
    lines = [f"{'batch':>5} {'longest':>7} {'segments':>8} {'whole s':>8} {'segm. s':>8} {'ratio':>6}"]
    for b, (longest, count) in enumerate(zip(timing["batch_longest"], timing["batch_segments"], strict=True)):
        whole = statistics.median(p[b] for p in timing["seconds"]["whole"])
        parts = statistics.median(p[b] for p in timing["seconds"]["segments"])
        lines.append(f"{b:>5} {longest:>7} {count:>8} {whole:>8.2f} {parts:>8.2f} {whole / parts:>6.2f}")
    return "\n".join(lines)
