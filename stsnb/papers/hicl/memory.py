"""Notebook 30's memory plan for ``stsnb run --check`` (``stsnb.gpu.plan_check``): what each arm's forward holds on one
GPU, sentences whole (the baselines) or in segments (+HiCL), measured on the Wikipedia sentences it trains on; and
its ``gradient_checkpointing = "auto"`` resolved from that plan against the GPU (:func:`checkpointing`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import data as data
from ...gpu import worst_case
from ...gpu.memory_estimate import GIB, TrainingSetup, auto_checkpointing, gpu_memory_gib
from ...gpu.plan_check import MemoryPlanRow, activation_bytes, measured_length, memory_rows
from .variants import SNCSE_ANCHOR_PROMPT


def _segments_per_batch(texts, tokenizer: str, batch: int, cap: int, slice_length: int, draws: int = 200) -> int:
    """The 95th percentile, over random batches of ``batch`` texts cut at ``cap`` tokens, of their segment count
    under HiCL's queue rule (``1 + (n - 1) // L`` per text, Section 3.1)."""
    import numpy as np
    from transformers import AutoTokenizer

    from ...models.loading import resolve

    ids = AutoTokenizer.from_pretrained(resolve(tokenizer).path)(list(texts), add_special_tokens=False)["input_ids"]
    counts = np.array([1 + (max(1, min(len(x), cap)) - 1) // slice_length for x in ids])
    rng = np.random.default_rng(0)
    size = min(batch, len(counts))
    totals = [counts[rng.choice(len(counts), size=size, replace=False)].sum() for _ in range(draws)]
    return int(np.percentile(totals, 95) * batch / size)


def memory_plan(params: Mapping[str, Any]) -> list[MemoryPlanRow]:
    """The larger of each arm's forward (Section 4.1, Appendix A.1, A.3): the baselines encode every sentence whole,
    padded to the longest of the batch and cut at SimCSE's 32 tokens under ``truncation="paper"`` (else at
    ``max_length``); +HiCL encodes every segment of at most L tokens. Two views each (SimCSE, ESimCSE), three with
    SNCSE's prompt around each (its negation). ESimCSE's momentum copy (weights only, no gradient) is not counted."""
    batch = int(params.get("batch_size", 32))
    cap = int(params.get("max_length", 128))
    slice_length = int(params.get("slice_length", 32))
    methods = list(params.get("methods") or ["simcse", "esimcse", "sncse"])
    views = 3 if "sncse" in methods else 2
    prompt = 0
    if "sncse" in methods:
        prompt = measured_length(lambda: [SNCSE_ANCHOR_PROMPT.replace("[X]", "")], "minilm-l6", 1, 10**6) - 2
    length = measured_length(lambda: data.load_wiki(2000), "minilm-l6", batch, cap + 2)
    if str(params.get("truncation", "paper")) == "paper":
        length = min(length, int(params.get("baseline_max_length", 32)))
    try:
        segments = _segments_per_batch(data.load_wiki(2000), "minilm-l6", batch, cap, slice_length)
    except (data.DataError, OSError):
        segments = batch * (1 + (cap - 1) // slice_length)  # every sentence at the cap: an upper bound
        worst_case.note(f"+HiCL's segments per batch at every sentence's cap of {cap} tokens")
    common = dict(
        activation_bytes=activation_bytes(params),
        dropout=0.1,
        gradient_checkpointing=params.get("gradient_checkpointing", False) is True,  # "auto": checkpointing()
    )
    return [
        (f"baselines, {views} views", str(params.get("backbone", "smollm2-135m-l6")),
         TrainingSetup(views * batch, length + prompt, **common)),
        (f"+HiCL segments, {views} views", str(params.get("backbone", "smollm2-135m-l6")),
         TrainingSetup(views * segments, slice_length + 2 + prompt, **common)),
    ]  # fmt: skip


def checkpointing(params: Mapping[str, Any], gpu_gib: float | None = None) -> tuple[bool, str]:
    """Notebook 30's ``gradient_checkpointing``: True/False as given; ``"auto"`` on only where the estimate of a
    training setting without it (:func:`memory_plan`, the rows ``stsnb run --check`` prints) does not fit this
    process's GPU (``gpu_gib``, else ``memory_estimate.gpu_memory_gib``); off on the CPU. Returns the choice and a
    line with the figures for the notebook to print."""
    value = params.get("gradient_checkpointing", False)
    if value != "auto":
        return bool(value), f"gradient_checkpointing = {bool(value)} (as set)"
    gpu_gib = gpu_gib if gpu_gib is not None else gpu_memory_gib()
    if gpu_gib is None:
        return False, 'gradient_checkpointing = "auto": off (no GPU: checkpointing would only cost time on the CPU)'
    rows = memory_rows("30_hicl", params)
    on = auto_checkpointing((row.without_checkpointing_gib * GIB for row in rows), gpu_gib)
    figures = "; ".join(
        f"{row.label}: {row.without_checkpointing_gib:.1f} GiB without, {row.with_checkpointing_gib:.1f} with"
        for row in rows
    )
    return on, (
        f'gradient_checkpointing = "auto": {"on" if on else "off"} on this {gpu_gib:.0f} GiB GPU (estimated peak '
        f"per GPU, stsnb.gpu.memory_estimate: {figures}; it must fit within 90% less 1 GiB of CUDA context)"
    )


def timing_checkpointing(params: Mapping[str, Any], gpu_gib: float | None = None) -> tuple[bool, str]:
    """Gradient checkpointing for Table 12's equal-truncation timing (``table12.timed_steps``), whose SimCSE step
    reads each sentence whole up to ``max_length``, which no training run does under the paper's truncation (so the
    rows of :func:`memory_plan` leave it out and ``"auto"`` is not decided on it): on where the training runs have it
    on (:func:`checkpointing`), or where the estimated peak of that step without it does not fit this process's GPU
    (``gpu_gib``); off on the CPU. Both modes of the timing share it, so their comparison stays like for like."""
    training, _ = checkpointing(params, gpu_gib)
    if training:
        return True, "Table 12's timing: gradient checkpointing on, as in the training runs"
    gpu_gib = gpu_gib if gpu_gib is not None else gpu_memory_gib()
    if gpu_gib is None:
        return False, "Table 12's timing: gradient checkpointing off (no GPU)"
    from ...gpu.memory_estimate import estimate, fits
    from ...gpu.plan_costs import model_shape

    shape = model_shape(str(params.get("backbone", "smollm2-135m-l6")))
    batch, cap = int(params.get("batch_size", 32)), int(params.get("max_length", 128))
    length = measured_length(lambda: data.load_wiki(2000), "minilm-l6", batch, cap + 2)
    setup = TrainingSetup(2 * batch, length, activation_bytes=activation_bytes(params), dropout=0.1)
    on = shape is not None and not fits(estimate(shape, setup).total, gpu_gib)
    state = "on: SimCSE whole" if on else "off: SimCSE whole"
    return (
        on,
        f"Table 12's timing: gradient checkpointing {state} at up to {length} tokens on this {gpu_gib:.0f} GiB GPU",
    )
