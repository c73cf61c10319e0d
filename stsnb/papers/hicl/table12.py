"""HiCL's efficiency claim where the paper makes it: Table 12's comparison at equal truncation, on the training data,
with what segments save in padding told apart from what they save in attention.

The abstract says HiCL "boosts training efficiency by first encoding short segments" and credits "the quadratic time
complexity of transformers"; Section 3.3 puts it as "we are faster than baselines when maintaining the same sequence
truncation size 512", and Appendix A.1 restricts the claim to "training with identical information, where the same
truncation size is maintained" (its Table 12: training minutes of SimCSE and SimCSE+HiCL, both at 512 tokens, on
wiki1m, whose sentences are mostly short). So the main claim's measurement (:func:`timed_steps`) is a SimCSE training
step on the **training data's own batches**, every arm cut at the same length (``max_length``), in three modes:

- ``padded``: each sentence whole, the batch padded to its longest sentence (SimCSE's collator: the paper's baseline);
- ``whole``: each sentence whole, in length-sorted chunks each padded to its own longest (how this project trains
  every batch, ``segments.encode_segments``): no compute spent on padding;
- ``segments``: SimCSE+HiCL, each sentence sliced into segments of L tokens (Section 3.1) with the local loss of
  Eq. 2.

Padded minus whole is what padding costs the paper's baseline; whole minus segments is what segments save beyond
padding (attention's quadratic term, and whatever the extra rows cost), which is what the abstract credits. The main
claim's row (:func:`efficiency_claim`) measures the latter and says so; a check row (:func:`padding_row`) the former.
Each step is a whole optimizer step (forward of both dropout views, the loss, backward, AdamW), timed to completion;
the modes alternate batch by batch on one backbone in one process, so a slow moment of the shared machine falls on
all of them. A row's range is over the timed passes (measured seconds, not a confidence interval: ``unit``
"seconds ...", counted apart from the tests, provisional on its one session); its smallest effect of interest is
half the saving Table 12 reports for the notebook's ``paper_backbone`` (BERT-base: 87.5 -> 69.4 minutes, 21% of
SimCSE's time). Where attention's quadratic term matters, at the paper's 512-token cap on text long enough to fill
it, ``efficiency`` times one step at fixed lengths (:func:`fixed_length_claim` makes its longest a row).
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

MODES = ("padded", "whole", "segments")
EFFICIENCY_CLAIM = (
    "Section 3.3: a SimCSE training step is faster in segments than on whole sequences without padding waste "
    "(length-sorted chunks), on the training data's batches at equal truncation (Table 12; seconds whole minus in "
    "segments: what segments save beyond padding)"
)
PADDING_CHECK = (
    "padding: a SimCSE step on whole sequences padded to each batch's longest is slower than in length-sorted chunks, "
    "on the same batches (seconds padded minus chunked: what padding costs the paper's baseline)"
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
    sentence tokens for every mode), whole and padded, whole in length-sorted chunks, and in segments (``hicl``: L,
    pooling, special tokens; ``objective``: the +HiCL arm's alpha and tau), ``repeats`` passes each after one untimed
    warm-up step per mode, on a freshly loaded backbone. Returns per mode a list of passes, each a list of per-batch
    seconds, and per batch its longest sentence (tokens), its padded and real tokens, and its segment count."""
    import torch

    from ...training.train import resolve_mixed_precision

    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    encoder = backbone.load()
    examples, _ = make_examples(encoder.tokenizer, sentences, max_length, "simcse")
    batches = _batches(examples, batch_size, n_batches, seed)
    torch.manual_seed(seed)
    models = {
        "padded": ContrastiveModel(encoder, "simcse", HiclSettings(False), objective, seed=seed, padded=True),
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
                for mode in MODES[(r + b) % 3 :] + MODES[: (r + b) % 3]:  # rotate which mode goes first
                    passes[mode].append(step(mode, batch))
                    shown.update(1)  # outside the timed step
            for mode in MODES:
                seconds[mode].append(passes[mode])
    encoder.eval()
    segments = models["segments"]
    return {
        "seconds": seconds,
        "batch_longest": [max(len(e.ids) for e in batch) for batch in batches],
        "batch_tokens": [sum(len(e.ids) for e in batch) for batch in batches],
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


def timing_row(text: str, slow: Sequence[float], fast: Sequence[float], saving: float, why: str, **extra) -> dict:
    """A timing claim row, ``slow`` minus ``fast`` seconds: the median of each side with the range over the timed
    passes (lowest slow minus highest fast to highest slow minus lowest fast; measured seconds, not a confidence
    interval), direction +1 (``fast`` faster), the smallest effect ``saving`` of the median slow pass (``why``:
    whose saving), tested only where each side was timed at least twice (one interruption would decide one pass)."""
    middle_slow, middle_fast = statistics.median(slow), statistics.median(fast)
    gap = (middle_slow - middle_fast, min(slow) - max(fast), max(slow) - min(fast))
    repeats = min(len(slow), len(fast))
    enough = claims.precondition(
        "each mode timed over at least two passes", repeats >= 2, f"{len(slow)} and {len(fast)} timed passes"
    )
    return claims.claim(
        text,
        {f"{repeats} timed pass{'es' * (repeats != 1)}": gap},
        direction=+1,
        smallest_effect=max(middle_slow * saving / 2, 1e-9),
        smallest_effect_reason=f"half {why} ({100 * saving:.0f}%), of our median slower pass ({middle_slow:.2f} s)",
        preconditions=[enough],
        ratio=middle_slow / middle_fast,
        **extra,
    )


def efficiency_claim(timing: Mapping, paper_backbone: str = "BERT-base") -> dict:
    """The efficiency main claim as a claim row (module docstring): the median pass whole in length-sorted chunks
    minus in segments, with the range over the passes, sized by half Table 12's saving: what segments save beyond
    padding. ``measures`` says so; the padded baseline's passes ride along (``padded_passes``)."""
    passes = pass_seconds(timing)
    saving, n = table12_saving(paper_backbone), timing["n_batches"]
    return timing_row(
        EFFICIENCY_CLAIM,
        passes["whole"],
        passes["segments"],
        saving,
        f"the saving Table 12 reports for SimCSE-{paper_backbone}",
        paper_quote=quotes.EQUAL_TRUNCATION,
        main_claim=True,
        unit=f"seconds per pass over {n} training batches",
        measures="what segments save beyond padding (the whole-sentence baseline wastes no compute on padding)",
        paper_ratio=1 / (1 - saving),
        n_batches=n,
        batch_size=timing["batch_size"],
        max_length=timing["max_length"],
        slice_length=timing["slice_length"],
        padded_passes=passes["padded"],
        whole_passes=passes["whole"],
        segment_passes=passes["segments"],
    )


def padding_row(timing: Mapping, paper_backbone: str = "BERT-base") -> dict:
    """A check of our setting: the median pass padded to each batch's longest minus in length-sorted chunks (what
    padding costs the paper's whole-sentence baseline), sized like the main claim."""
    passes = pass_seconds(timing)
    return timing_row(
        PADDING_CHECK,
        passes["padded"],
        passes["whole"],
        table12_saving(paper_backbone),
        f"the saving Table 12 reports for SimCSE-{paper_backbone}",
        paper_quote=quotes.EQUAL_TRUNCATION,
        kind=claims.CHECK,
        unit=f"seconds per pass over {timing['n_batches']} training batches",
        measures="what padding costs a whole-sentence step",
        padding_share=padding_share(timing),
    )


def padding_share(timing: Mapping) -> float:
    """The share of the padded mode's token positions that are padding (its batches padded to their longest)."""
    padded = sum(timing["batch_size"] * longest for longest in timing["batch_longest"])
    return 1 - sum(timing["batch_tokens"]) / padded


def fixed_length_claim(cost_rows: Sequence[Mapping], paper_backbone: str = "BERT-base") -> dict | None:
    """Section 3.3 where attention's quadratic term matters: the fixed-length step of ``efficiency.measure`` at its
    longest length (the paper's 512-token cap in the cpu profile, on Wikipedia text long enough to fill it, nothing
    padded), whole minus in segments with the range over its timed steps, sized like the main claim; None when no
    length was timed in both modes."""
    by_mode = {(r["n_tokens"], r["mode"]): r for r in cost_rows}
    lengths = [n for n in sorted({n for n, _ in by_mode}) if (n, "whole") in by_mode and (n, "segments") in by_mode]
    if not lengths:
        return None
    n = lengths[-1]
    whole, parts = by_mode[(n, "whole")], by_mode[(n, "segments")]
    return timing_row(
        f"Section 3.3 at {n} tokens (text long enough to fill them, nothing padded): one SimCSE step in segments of "
        f"L = {parts['slice_length']} is faster than whole (seconds whole minus in segments)",
        whole["seconds_all"],
        parts["seconds_all"],
        table12_saving(paper_backbone),
        f"the saving Table 12 reports for SimCSE-{paper_backbone}",
        paper_quote=quotes.EQUAL_TRUNCATION,
        unit=f"seconds per step of {whole['batch_size']} sequences of {n} tokens",
        measures="what segments save in attention where its quadratic term matters (no padding on either side)",
        n_tokens=n,
    )


def efficiency_line(row: Mapping) -> str:
    """The efficiency main claim in one sentence: the median pass of each mode, what the segments save against the
    padded baseline and how much of it is padding, the verdict (or why it was not tested), beside Table 12's ratio."""
    passes = min(len(row["whole_passes"]), len(row["segment_passes"]))
    verdict = claims.verdict_text(row, mark_provisional=True)
    verdict += f", {passes} timed pass{'es' * (passes != 1)} per mode in one session on this machine"
    if row.get("not_tested_because"):
        verdict += f": {row['not_tested_because']}"
    padded, whole, parts = (statistics.median(row[k]) for k in ("padded_passes", "whole_passes", "segment_passes"))
    return (
        f"SimCSE training steps on {row['n_batches']} batches of {row['batch_size']} training sentences, every mode "
        f"cut at {row['max_length']} tokens, took {padded:.2f} s per pass padded to each batch's longest (the paper's "
        f"baseline), {whole:.2f} s whole in length-sorted chunks and {parts:.2f} s in segments of L = "
        f"{row['slice_length']}: against the padded baseline segments save {padded - parts:+.2f} s "
        f"({padded / parts:.2f}x), of which padding is {padded - whole:+.2f} s and the rest {whole - parts:+.2f} s "
        f"({row['ratio']:.2f}x, the main claim: {row['difference']:+.2f} s [{row['low']:+.2f}, {row['high']:+.2f}], "
        f"the range of the timed passes; Table 12: {row['paper_ratio']:.2f}x): {verdict}"
    )


def batch_table(timing: Mapping) -> str:
    """Per timed batch: its longest sentence, its padding share, its segment count, the median seconds of each mode,
    and whole over segments (a text table): where the batch's sentences fit in one segment, slicing has nothing to
    save; where the batch pads much, the padded baseline loses to both."""
    lines = [
        f"{'batch':>5} {'longest':>7} {'padding':>7} {'segments':>8} {'padded s':>8} {'whole s':>8} {'segm. s':>8}"
    ]
    lines[0] += f" {'whole/segm.':>11}"
    rows = zip(timing["batch_longest"], timing["batch_tokens"], timing["batch_segments"], strict=True)
    for b, (longest, tokens, count) in enumerate(rows):
        median = {mode: statistics.median(p[b] for p in timing["seconds"][mode]) for mode in MODES}
        share = 1 - tokens / (timing["batch_size"] * longest)
        lines.append(
            f"{b:>5} {longest:>7} {share:>7.0%} {count:>8} {median['padded']:>8.2f} {median['whole']:>8.2f} "
            f"{median['segments']:>8.2f} {median['whole'] / median['segments']:>11.2f}"
        )
    return "\n".join(lines)
