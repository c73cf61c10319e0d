"""Notebook 10's memory plan for ``stsnb run --check`` (``stsnb.gpu.plan_check``): what each training stage holds on
one GPU. A batch is padded to its longest prompt; Pcc-tuning cuts sentences to the official 32 (stage 1) and 64
(stage 2) tokens inside its prompt, so a prompt is its template's own tokens plus the cutoff.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from ...gpu.memory_estimate import ScoringSetup, TrainingSetup, uses_ddp
from ...gpu.plan_check import MemoryPlanRow, activation_bytes, measured_length
from . import prompts, protocol


def _stages(params: Mapping[str, Any]) -> list[tuple[str, int, int, int]]:
    """``(template, stage, global batch, cutoff)`` of every training stage notebook 10 runs: ``protocol.Protocol``'s
    batches (with ``use_paper_recipe`` each template's official ones, ``recipes.paper_recipe``, not
    ``stage1_batch_size``) and ``pipeline.plan``'s rule that only the first template runs every stage-2 batch size,
    the others their first."""
    proto = protocol.Protocol.from_plan_values(params, _processes(params))
    stages = []
    for number, template in enumerate(params.get("templates") or ["sth"]):
        cut1, cut2 = proto.cutoffs(template)
        sizes = proto.batch_sizes(template)
        stages.append((template, 1, proto.stage1_batch(template), cut1))
        stages += [(template, 2, b, cut2) for b in (sizes if number == 0 else sizes[:1])]
    return stages


def _processes(params: Mapping[str, Any]) -> int:
    """``num_processes`` as a count: ``stsnb run --check`` resolves ``"auto"`` for ``--gpus`` before calling the
    plan; left unresolved it counts as one process here (the whole global batch on one GPU, an upper bound)."""
    value = params.get("num_processes", 1)
    return 1 if value == "auto" else max(1, int(value))


def memory_plan(params: Mapping[str, Any]) -> list[MemoryPlanRow]:
    """Stage 1: three prompts per triplet (Eq. 8); stage 2: two per pair, the whole batch in one Pearson (Eq. 9);
    each at its largest per-GPU batch x prompt length over the templates and batch sizes the notebook trains (a
    global batch split over the processes as ``protocol.Protocol`` does). With ``quantize_4bit`` and
    ``score_unquantized``, the scoring on the 16-bit copy of the base (``memory_estimate.scoring_estimate``: on
    the main process only, the training model alive beside it), its batches of at most a GPU's evaluation budget of
    padded tokens (``SentenceEncoder.encode``) of prompts cut at ``max_length``."""
    from ...evaluation import evaluate
    from ...models import loading as models_loading

    processes = _processes(params)
    lora_r = int(params.get("lora_r", 64))
    quantize = bool(params.get("quantize_4bit", False))
    common = dict(
        activation_bytes=activation_bytes(params),
        quantize_4bit=quantize,
        lora_r=lora_r,
        lora_dropout=float(params.get("lora_dropout", 0.05)),
        gradient_checkpointing=bool(params.get("gradient_checkpointing", False)),
        ddp=uses_ddp(params.get("num_processes", 1)),  # "auto" counted as DDP
    )
    widest: dict[int, tuple[int, int, str]] = {}  # stage -> (sequences per GPU, prompt tokens, template)
    stages = _stages(params)
    template_tokens = {  # each template's own tokens, measured once (a tokenizer load per measurement)
        t: measured_length(lambda t=t: [prompts.template(t)], "smollm2-135m", 1, 10**6)
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
        batch, max_tokens = defaults["batch_size"].default, models_loading.ACCELERATOR_EVALUATION_CHUNK_TOKENS
        length = int(params.get("max_length") or 512)
        scoring = ScoringSetup(
            max(1, min(batch, max_tokens // length)), length, lora_r, activation_bytes=activation_bytes(params)
        )
        rows.append(("scoring on the 16-bit copy (main process)", model, scoring))
    return rows
