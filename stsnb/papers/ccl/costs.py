"""Notebook 40's fits for ``stsnb run --check``'s time and disk estimate (``stsnb.gpu.cost_estimate``): Table 3's
QuMSE and CCL on every backbone and architecture (``training_seeds`` seeds for ``seeded_architectures``, else one),
the raw backbones' bi-encoder rows, Table 4's ablations (``ablation_terms`` x ``ablation_architectures``, on up to
``ablation_seeds`` of CCL's seeds), Table 5's sigmas and Figure 2's temperatures besides Table 2's (x
``sweep_architectures``), those three on the first backbone with one seed; each backbone and architecture scored
untrained once (seed-dependent new layers aside). Every fit runs in the notebook's kernel: one process, one GPU.

A quadruple is two C-STS rows; the bi-encoder encodes two texts per row (each sentence with the condition), the
tri-encoder three (the sentences and the condition apart). The global batch is ``batch_size`` quadruples x
``grad_accum`` micro-batches, as the paper accumulates; CCL's in-batch terms see one micro-batch (batch-level),
QuMSE is a mean over rows. Lengths: a sentence with its condition, padded to the longest of a micro-batch and cut at
``max_length``, measured on the data folder's C-STS train rows (MiniLM's WordPiece standing in for RoBERTa's BPE),
used for the tri-encoder's shorter texts too (an upper side). Epochs: ``epochs``, else Table 6's per paper row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import data as data
from ...gpu.cost_estimate import FitRow, evaluations
from ...gpu.plan_check import measured_or_cap
from .quadruples import pair_conditions, split_quadruples
from .reported import hyperparameters

CSTS_TRAIN_QUADRUPLES = 5_671  # 11,342 train rows in pairs (the count where the data folder is missing)
VALIDATION_ROWS = 2_620
TOKENIZER = "minilm-l6"


def _quadruples(keep_ties: bool, heldout: int, limit: int | None) -> int:
    try:
        pool = pair_conditions(data.load_csts("train"), keep_ties=keep_ties).quadruples
        total = len(split_quadruples(pool, heldout, 0)[0])
    except (data.DataError, OSError):
        total = CSTS_TRAIN_QUADRUPLES - heldout
    return total if limit is None else min(int(limit), total)


def fit_plan(params: Mapping[str, Any]) -> list[FitRow]:
    """The fits of the module docstring, one row per (backbone, architecture, method) and per sweep."""
    p = params
    quads, accumulation = int(p.get("batch_size", 8)), int(p.get("grad_accum", 1))
    heldout = int(p.get("selection_pairs", 100))
    n = _quadruples(bool(p.get("keep_ties", True)), heldout, p.get("train_pairs"))
    texts = lambda: [f"{r.sent1} {r.condition}" for r in data.load_csts("train")][:3000]  # noqa: E731
    tokens, measured = measured_or_cap(texts, TOKENIZER, 2 * quads, int(p.get("max_length", 64)))
    eval_rows = int(p.get("eval_rows") or VALIDATION_ROWS)
    selection_rows = eval_rows if p.get("selection") == "validation" else 2 * heldout
    rows_of = {**(p.get("paper_rows") or {}), **(p.get("raw_paper_rows") or {})}
    seeded = set(p.get("seeded_architectures") or [])
    checkpointing = bool(p.get("gradient_checkpointing", False))

    def fit(label: str, backbone: str, arch: str, count: int, batch_level: bool) -> FitRow:
        texts_per_row = 3 if arch == "tri" else 2
        epochs = float(p.get("epochs") or hyperparameters(arch, rows_of.get(backbone, "SimCSE-base")).epochs)
        return FitRow(label, backbone, count, n, epochs, 2 * texts_per_row, tokens, measured,
                      quads * accumulation, batch_level, accumulation=accumulation,
                      gradient_checkpointing=checkpointing,
                      dev_evaluations=evaluations(n, quads * accumulation, epochs, p.get("eval_every")),
                      dev_sequences=selection_rows * texts_per_row,
                      test_sequences=eval_rows * texts_per_row)  # fmt: skip

    rows = []
    backbones, raw = list(p.get("backbones") or []), list(p.get("raw_backbones") or [])
    for backbone in [*backbones, *raw]:
        for arch in list(p.get("architectures") or ["bi", "tri"]) if backbone in backbones else ["bi"]:
            seeds = int(p.get("training_seeds", 1)) if arch in seeded else 1
            rows.append(fit(f"Table 3 {arch} QuMSE", backbone, arch, seeds, False))
            rows.append(fit(f"Table 3 {arch} CCL", backbone, arch, seeds, True))
            rows.append(FitRow(f"untrained {arch} (scoring)", backbone, 1, 0, 0, 1, tokens, measured, 0, False,
                               "none", test_sequences=eval_rows * (3 if arch == "tri" else 2)))  # fmt: skip
    if backbones:
        first = backbones[0]
        for arch in p.get("ablation_architectures") or []:
            ccl_seeds = int(p.get("training_seeds", 1)) if arch in seeded else 1
            runs = len(p.get("ablation_terms") or []) * min(int(p.get("ablation_seeds", 1)), ccl_seeds)
            rows.append(fit(f"Table 4 {arch} ablations", first, arch, runs, True))
        for arch in p.get("sweep_architectures") or []:
            table2 = hyperparameters(arch, rows_of.get(first, "SimCSE-base"))
            sigmas = [s for s in p.get("sigmas") or [] if s != table2.sigma]
            taus = [t for t in p.get("temperatures") or [] if t != table2.temperature]
            if sigmas:
                rows.append(fit(f"Table 5 {arch} sigmas", first, arch, len(sigmas), True))
            if taus:
                rows.append(fit(f"Figure 2 {arch} temperatures", first, arch, len(taus), True))
    return rows
