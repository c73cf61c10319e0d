"""Pcc-tuning's two training corpora (Section 4.1), built from the data folder.

Stage 1 trains on SimCSE's NLI triplets (premise, entailment, contradiction; 275,602 rows from SNLI + MultiNLI
train). Only SNLI dev + test are in this workplace, so the ``cpu`` and ``smoke`` profiles build the triplets from
them (``stsnb.data.nli_triplets``): a stand-in of the same kind, not the paper's file. Stage 2 trains on STS-B train
+ SICK-R train (10,249 pairs), SICK's 1-5 relatedness rescaled to 0-5 by ``5 (l - 1) / 4``.

SICK-R's train and test splits share sentence pairs (STS-Regression Appendix A lists such pairs). ``stage2_pairs``
can drop every training pair that appears in any of the seven test sets (either order, scores ignored), so the
notebook can measure how much of the stage-2 gain depends on them. The match runs on the original (raw) text: the
SentEval copies of STS-B train and of STS12-16 test were tokenised differently, so exact matching misses shared
pairs there (notebook 20 prints both counts); stage 2 therefore trains on the raw text too.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ... import data as stsdata


def stage1_triplets(source: str = "snli-dev-test", limit: int | None = None, seed: int = 0) -> stsdata.Loaded:
    """(anchor, positive, hard negative) triplets for Eq. 8, shuffled with ``seed``, the first ``limit`` kept."""
    triplets = stsdata.nli_triplets(stsdata.load_nli(source))
    order = list(triplets)
    random.Random(seed).shuffle(order)
    kept = order if limit is None else order[:limit]
    return stsdata.Loaded(kept, {**triplets.skipped, "beyond the limit": len(order) - len(kept)})


@dataclass(frozen=True)
class Stage2Data:
    """Stage 2's pairs (scores on 0-5), and how many the test-set de-duplication removed per dataset."""

    pairs: list[stsdata.STSPair]
    removed: dict[str, int]
    before: dict[str, int]


def sts_b_and_sick_train(text: stsdata.TextVariant = "raw") -> list[stsdata.STSPair]:
    """STS-B train and SICK-R train, SICK's scores rescaled to 0-5 (Section 3.2)."""
    sick = [
        stsdata.STSPair(p.sent1, p.sent2, stsdata.rescale_sick(p.score), p.dataset, p.subset, p.source)
        for p in stsdata.load_sick("train", text)
    ]
    return list(stsdata.load_stsb("train", text)) + sick


def stage2_pairs(dedup: bool, text: stsdata.TextVariant = "raw") -> Stage2Data:
    """Stage 2's training pairs; ``dedup`` drops those that appear in a test set of the seven tasks."""
    train = sts_b_and_sick_train(text)
    before = _count(train)
    if not dedup:
        return Stage2Data(train, {name: 0 for name in before}, before)
    report = stsdata.dedup_against_tests(train, stsdata.seven_test_sets(text))
    return Stage2Data(list(report.kept), _count(report.removed), before)


def _count(pairs) -> dict[str, int]:
    counts: dict[str, int] = {}
    for p in pairs:
        counts[p.dataset] = counts.get(p.dataset, 0) + 1
    return counts
