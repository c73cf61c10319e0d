"""Notebook 20's fits for ``stsnb run --check``'s time and disk estimate (``stsnb.gpu.cost_estimate``): what the
notebook trains with given parameters, counted as its cells count them.

- Table 1: every loss of ``table1_losses`` on ``seeds``, the main claim's two arms on ``main_claim_seeds`` too (on
  the STS analogue with ``main_claim_targets = "rounded"``: cross entropy and Smooth K2 on its rounded labels, on
  every seed; ``table1.arms_on_seed``), per backbone.
- Tables 5-6: ``sweeps.nli_sweep_plan`` on ``seeds``, without the settings a Table 1 run already answers
  (``sweeps.answered_by_table1``).
- Section 4.2, per contrastive backbone: "+Ours" (stage 1: the head on the frozen encoder's cached embeddings;
  stage 2: everything on the de-duplicated STS pairs), "+Contrast" (InfoNCE on the pairs scored >= the threshold),
  and Table 5's stage-2 sweep (``sweeps.stage2_sweep_plan`` beyond the official setting: both stages again; stage 1
  reads the cached embeddings, its head fit has no dev evaluation, so no checkpoint).
- The scoring of each backbone before fine-tuning. Not counted: Table 4's memory runs (two steps each).

Every fit runs on the notebook's processes (``batching.resolve_processes`` of its three global batches). Sentences
are padded to the longest of a batch (``stsnb.models``), measured on the data folder's SNLI (NLI) and STS-B train
(STS) sentences at the global batch, an upper side for a process's share. The Hub's NLI training set is not in the
data folder: its size is SNLI train's labelled pairs plus MultiNLI train's.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ... import data as data
from ...gpu.cost_estimate import FitRow, dev_sentences, evaluations, sts_test_sentences
from ...gpu.memory_estimate import KNOWN_SHAPES
from ...gpu.plan_check import measured_or_cap
from .sweeps import answered_by_table1, nli_sweep_plan, stage2_sweep_plan
from .table1 import arms_on_seed, isolates
from .tasks import table1_task

HUB_NLI_PAIRS = 549_367 + 392_702  # SNLI train (gold label) + MultiNLI train
FILTERED_STS_PAIRS = 5_398  # Section 4.2 after Appendix A's de-duplication (raw text)
POSITIVE_STS_PAIRS = 1_543  # of them scored >= 4.0
TOKENIZER = "minilm-l6"  # bert-base-uncased's WordPiece, as the memory plans use


def _nli_pairs(source: str) -> int:
    if source in ("hub", "paper"):  # the Hub's copies, or the data folder's paper/ copies of them
        return HUB_NLI_PAIRS
    try:
        return len(data.load_nli(source))
    except (data.DataError, OSError, ValueError):
        return HUB_NLI_PAIRS


@functools.lru_cache(maxsize=4)
def _sts_pairs(text: str, threshold: float) -> tuple[int, int]:
    """(de-duplicated STS-B + SICK-R train pairs, those scored >= ``threshold``), measured where the data is."""
    from .training_data import filtered_sts_train, positive_pairs

    try:
        pairs = filtered_sts_train(text).pairs  # type: ignore[arg-type]
    except (data.DataError, OSError):
        return FILTERED_STS_PAIRS, POSITIVE_STS_PAIRS
    return len(pairs), len(positive_pairs(pairs, threshold))


def _frozen(model: str, freeze_embeddings: bool) -> int:
    shape = KNOWN_SHAPES.get(model)
    return shape.vocab * shape.hidden if shape is not None and freeze_embeddings else 0


def fit_plan(params: Mapping[str, Any]) -> list[FitRow]:
    """The fits of the module docstring, one row per group of identical fits."""
    p = params
    cap = int(p.get("max_length", 64))
    batch, accumulation = int(p.get("batch_size", 16)), int(p.get("grad_accum", 1))
    seeds, main = list(p.get("seeds") or [0]), list(p.get("main_claim_seeds") or [])
    losses = list(p.get("table1_losses") or [])
    heldout = int(p.get("heldout_pairs") or 0)
    sts_total, positives = _sts_pairs(str(p.get("dedup_text", "raw")), float(p.get("contrast_threshold", 4.0)))
    nli_total = _nli_pairs(str(p.get("nli_source", "snli-dev-test")))
    task_total = nli_total if p.get("table1_task") == "nli" else sts_total
    table1_n = task_total - heldout if p.get("table1_pairs") is None else min(int(p["table1_pairs"]), task_total)
    nli_tokens = measured_or_cap(
        lambda: [s for x in data.load_snli("dev") for s in (x.premise, x.hypothesis)], TOKENIZER, 2 * batch, cap
    )
    sts_texts = lambda: [s for x in data.load_stsb("train") for s in (x.sent1, x.sent2)]  # noqa: E731
    nli_task = p.get("table1_task") == "nli"
    table1_tokens = nli_tokens if nli_task else measured_or_cap(sts_texts, TOKENIZER, 2 * batch, cap)
    test, _ = sts_test_sentences(p.get("eval_max_pairs"))
    dev = dev_sentences(p.get("dev_pairs"))
    epochs = float(p.get("epochs", 1))
    checkpointing = bool(p.get("gradient_checkpointing", False))
    common = dict(multi_process=True, gradient_checkpointing=checkpointing, dev_sequences=dev, test_sequences=test)
    table1 = dict(
        examples=table1_n,
        epochs=epochs,
        sequences_per_example=2,
        tokens=table1_tokens[0],
        tokens_measured=table1_tokens[1],
        global_batch=batch,
        batch_level=False,
        accumulation=accumulation,
        dev_evaluations=evaluations(table1_n, batch, epochs, p.get("eval_every")),
        **common,
    )
    task = table1_task(str(p.get("table1_task", "sts")))
    isolated = isolates(task, str(p.get("main_claim_targets", "rounded")), losses)  # the main claim's rounded arm
    rows = []
    for backbone in p.get("backbones") or []:
        row = (p.get("paper_rows") or {}).get(backbone, "BERT-base")
        frozen = _frozen(backbone, bool(p.get("freeze_embeddings", False)))
        runs = sum(len(arms_on_seed(losses, s, seeds, isolated)) for s in dict.fromkeys([*seeds, *main]))
        rows.append(FitRow("Table 1", backbone, runs, frozen_parameters=frozen, **table1))
        plan = nli_sweep_plan(row, losses, p.get("sweep") or [], p.get("ablation_concatenations") or [])
        new = [v for v in plan if not answered_by_table1(v, row, losses)]
        if new:
            rows.append(FitRow("Tables 5-6 sweep", backbone, len(new) * len(seeds), frozen_parameters=frozen, **table1))
    rows += _section42(p, cap, nli_total - heldout, sts_total, positives, common)
    before = list(dict.fromkeys([*(p.get("backbones") or []), *(p.get("contrastive_backbones") or [])]))
    rows += [
        FitRow("before fine-tuning (scoring)", b, 1, 0, 0, 1, table1_tokens[0], table1_tokens[1], 0, False, "none",
               dev_evaluations=1, dev_sequences=dev, test_sequences=test)
        for b in before
    ]  # fmt: skip
    return rows


def _section42(
    p: Mapping[str, Any], cap: int, nli_pool: int, sts_total: int, positives: int, common: dict
) -> list[FitRow]:
    """Section 4.2's fits per contrastive backbone (module docstring)."""
    stage1_n = nli_pool if p.get("stage1_nli_pairs") is None else min(int(p["stage1_nli_pairs"]), nli_pool)
    stage2_n = sts_total if p.get("stage2_pairs") is None else min(int(p["stage2_pairs"]), sts_total)
    batch1, batch2 = int(p.get("stage1_batch_size", 16)), int(p.get("stage2_batch_size", 16))
    epochs1, epochs2 = float(p.get("stage1_epochs", 5)), float(p.get("stage2_epochs", 1))
    every = p.get("stage2_eval_every")
    nli = measured_or_cap(lambda: [s for x in data.load_snli("dev") for s in (x.premise, x.hypothesis)], TOKENIZER,
                          2 * batch1, cap)  # fmt: skip
    sts = measured_or_cap(lambda: [s for x in data.load_stsb("train") for s in (x.sent1, x.sent2)], TOKENIZER,
                          2 * batch2, cap)  # fmt: skip
    contrast_batch = max(1, min(batch2, positives))
    rows = []
    for backbone in p.get("contrastive_backbones") or []:
        row = (p.get("table3_rows") or {}).get(backbone, "Jina v2")
        reruns = len(stage2_sweep_plan(row, p.get("stage2_sweep") or [])) - 1
        shape = KNOWN_SHAPES.get(backbone)
        head = 3 * (shape.hidden if shape else 768) + 1  # the regression head on (u, v, |u-v|)
        stage1 = dict(sequences_per_example=2, global_batch=batch1, batch_level=False, trainable="head",
                      head_parameters=head, checkpoints=False, multi_process=True)  # fmt: skip
        rows.append(FitRow("4.2 stage 1 (frozen encoder)", backbone, 1, stage1_n, epochs1, tokens=nli[0],
                           tokens_measured=nli[1], **stage1))  # fmt: skip
        if reruns:
            rows.append(FitRow("4.2 stage 1, sweep reruns (cached)", backbone, reruns, stage1_n, epochs1, tokens=0,
                               tokens_measured=nli[1], **stage1))  # fmt: skip
        stage2 = dict(epochs=epochs2, sequences_per_example=2, tokens=sts[0], tokens_measured=sts[1], **common)
        rows.append(FitRow("4.2 stage 2 (+Ours and the stage-2 sweep)", backbone, 1 + reruns, stage2_n,
                           global_batch=batch2, batch_level=False,
                           dev_evaluations=evaluations(stage2_n, batch2, epochs2, every), **stage2))  # fmt: skip
        rows.append(FitRow("4.2 +Contrast", backbone, 1, positives, global_batch=contrast_batch, batch_level=True,
                           dev_evaluations=evaluations(positives, contrast_batch, epochs2, every, drop_last=True),
                           **stage2))  # fmt: skip
    return rows
