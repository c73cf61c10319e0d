"""Notebook 10's fits for ``stsnb run --check``'s time and disk estimate (``stsnb.gpu.cost_estimate``), counted as
``pipeline.plan`` runs them: the first template on every training seed (stage 1; stage 2 at its first batch size,
at every batch size on the first seed; the de-duplication arms and the InfoNCE control), the other templates on the
first seed (stage 1, stage 2 at their first batch size). Batches, epochs and cutoffs are ``protocol.Protocol``'s
(with ``use_paper_recipe`` each template's official ones, ``recipes.paper_recipe``).

Every fit trains the LoRA adapter on the notebook's processes (both losses are batch statistics: InfoNCE, Pearson),
dev evaluations on the main process; each model is scored once after each stage (and untrained on the first seed)
on its 16-bit copy, and the transfer probe encodes SICK-E twice. A prompt is its template's tokens plus a sentence
padded to the longest of the batch within the cutoff, measured on the data folder's SNLI (stage 1) and STS-B train
(stage 2) sentences with SmolLM2's tokenizer standing in for the 7B model's. Without ``stage1_triplets``, stage 1
reads SimCSE's 275,602 triplets (not counted in the data folder); stage 2 draws from STS-B + SICK-R train. The de-
duplication arms are taken at ``dedup_pairs`` pairs each. Not counted: the speed probe (``speed_probe_steps``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import data as data
from ...gpu.cost_estimate import FitRow, dev_sentences, evaluations, sts_test_sentences
from ...gpu.plan_check import measured_length, measured_or_cap
from . import prompts, protocol

SIMCSE_TRIPLETS = 275_602
STAGE2_PAIRS = 5_749 + 4_500  # STS-B train + SICK-R train
SICK_SPLITS = (4_500, 500, 4_927)  # SICK-E train, trial, test pairs
TOKENIZER = "smollm2-135m"


def _triplets(source: str, limit: int | None) -> int:
    if source in ("simcse", "hub", "paper"):
        total = SIMCSE_TRIPLETS
    else:
        try:
            total = len(data.nli_triplets(list(data.load_nli(source))))
        except (data.DataError, OSError, ValueError):
            total = SIMCSE_TRIPLETS
    return total if limit is None else min(int(limit), total)


def fit_plan(params: Mapping[str, Any]) -> list[FitRow]:
    """The fits of the module docstring, one row per group of identical fits."""
    p = params
    proto = protocol.Protocol.from_plan_values(p)
    templates, seeds = list(p.get("templates") or ["sth"]), list(p.get("training_seeds") or [0])
    model = str(p.get("backbone", "smollm2-135m"))
    n1 = _triplets(str(p.get("nli_source", "snli-dev-test")), p.get("stage1_triplets"))
    n2 = STAGE2_PAIRS if p.get("stage2_pairs") is None else min(int(p["stage2_pairs"]), STAGE2_PAIRS)
    arm = int(p.get("dedup_pairs") or n2)
    test, _ = sts_test_sentences(p.get("eval_max_pairs"))
    dev, every = dev_sentences(p.get("dev_pairs")), p.get("eval_every")
    max_length = int(p.get("max_length") or 512)
    common = dict(
        batch_level=True,
        trainable="lora",
        lora_r=int(p.get("lora_r", 64)),
        quantize_4bit=bool(p.get("quantize_4bit", False)),
        gradient_checkpointing=bool(p.get("gradient_checkpointing", False)),
        multi_process=True,
        dev_sequences=dev,
        test_sequences=test,
    )
    snli = lambda: [s for x in data.load_snli("dev") for s in (x.premise, x.hypothesis)]  # noqa: E731
    stsb = lambda: [s for x in data.load_stsb("train") for s in (x.sent1, x.sent2)]  # noqa: E731
    tests = lambda: [s for x in data.seven_test_sets("senteval") for s in (x.sent1, x.sent2)]  # noqa: E731
    rows = []
    for number, t in enumerate(templates):
        own = measured_length(lambda t=t: [prompts.template(t)], TOKENIZER, 1, 10**6)
        cut1, cut2 = proto.cutoffs(t)
        recipe = proto.recipe(t)
        epochs1 = 1 if recipe is None else recipe.stage1_epochs
        epochs2 = proto.stage2_epochs if recipe is None else recipe.stage2_epochs
        sizes, b1 = proto.batch_sizes(t), proto.stage1_batch(t)
        runs = len(seeds) if number == 0 else 1
        s1 = measured_or_cap(snli, TOKENIZER, 3 * b1, cut1)
        scored = measured_or_cap(tests, TOKENIZER, 128, max_length - own)
        rows.append(FitRow(f"stage 1 (Eq. 8), {t}", model, runs, n1, epochs1, 3, own + s1[0], s1[1], b1,
                           dev_evaluations=evaluations(n1, b1, epochs1, every), eval_tokens=own + scored[0],
                           **common))  # fmt: skip

        def stage2(label: str, count: int, n: int, batch: int, t=t, own=own, cut2=cut2, epochs2=epochs2, sc=scored):
            s2 = measured_or_cap(stsb, TOKENIZER, 2 * batch, cut2)
            return FitRow(f"stage 2 (Eq. 9), {t}, {label}", model, count, n, epochs2, 2, own + s2[0], s2[1], batch,
                          dev_evaluations=evaluations(n, batch, epochs2, every, drop_last=True),
                          eval_tokens=own + sc[0], **common)  # fmt: skip

        rows.append(stage2(f"batch {sizes[0]}", runs, n2, sizes[0]))
        if number == 0:
            rows += [stage2(f"batch {b}", 1, n2, b) for b in sizes[1:]]
            if p.get("dedup_study", True):
                if p.get("dedup_pairs") is not None:
                    rows.append(stage2("kept arm (matched mix)", len(seeds), arm, sizes[0]))
                rows.append(stage2("de-duplicated arm", len(seeds), arm, sizes[0]))
            if p.get("control_study", True):
                rows.append(stage2("InfoNCE control", len(seeds), n2, sizes[0]))
        probe = 0
        if number == 0 and p.get("transfer_pairs"):
            sizes_of = zip(p["transfer_pairs"], SICK_SPLITS, strict=True)
            probe = 2 * 2 * sum(n if n is not None else full for n, full in sizes_of)  # 2 probes, 2 sentences
        rows.append(FitRow(f"untrained, {t} (scoring{', SICK-E probes' if probe else ''})", model, 1, 0, 0, 1,
                           own + scored[0], scored[1], 0, False, "none", test_sequences=test + probe))  # fmt: skip
    return rows
