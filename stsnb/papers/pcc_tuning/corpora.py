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

Almost all shared pairs are STS-B's (its train pairs come from the sources of STS12-16), so a de-duplicated draw of
the same size is mostly SICK: kept minus removed would mix the shared pairs with the STS-B / SICK-R mix. The two arms
of the study are therefore drawn with the same mix (:func:`matched_arms`, :func:`stratified_like`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ... import data as stsdata

SIMCSE_NLI = "simcse"  # nli_source naming SimCSE's nli_for_simcse.csv, the official stage-1 corpus (Section 4.1)


def simcse_nli_file() -> Path:
    """``<data folder>/paper/nli_for_simcse.csv``, which ``stsnb data fetch --paper`` fetches."""
    path = stsdata.resolve_data_dir() / "paper" / "nli_for_simcse.csv"
    if not path.is_file():
        raise stsdata.DataError(
            f"{path}: not found. nli_source='simcse' reads SimCSE's nli_for_simcse.csv (the official Pcc-tuning "
            "stage-1 corpus, 275,602 triplets): `stsnb data fetch --paper` fetches it into the data folder"
        )
    return path


def stage1_triplets(source: str = "snli-dev-test", limit: int | None = None, seed: int = 0) -> stsdata.Loaded:
    """(anchor, positive, hard negative) triplets for Eq. 8, shuffled with ``seed``, the first ``limit`` kept.

    ``source``: ``"simcse"``, SimCSE's own triplets (``nli_for_simcse.csv``, the official code's corpus), or any
    ``stsnb.data.load_nli`` source, whose labelled pairs are made into triplets (``stsnb.data.nli_triplets``)."""
    if source == SIMCSE_NLI:
        triplets = stsdata.load_simcse_triplets(simcse_nli_file())
    else:
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

    def overlap(self) -> tuple[int, int]:
        """(pairs removed as shared with a test set, pairs before): the paper's stage-2 set's overlap."""
        return sum(self.removed.values()), sum(self.before.values())


def sts_b_and_sick_train(text: stsdata.TextVariant = "raw") -> list[stsdata.STSPair]:
    """STS-B train and SICK-R train, SICK's scores rescaled to 0-5 (Section 4.1)."""
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


def stratified_like(
    reference: Sequence[stsdata.STSPair], pool: Sequence[stsdata.STSPair], seed: int
) -> list[stsdata.STSPair]:
    """As many pairs of each dataset (STS-B, SICK) from ``pool`` as ``reference`` holds, drawn without replacement
    with ``seed``: the same mix as ``reference`` (the de-duplicated arm beside the full one)."""
    wanted = _count(reference)
    by_dataset: dict[str, list[stsdata.STSPair]] = {}
    for p in pool:
        by_dataset.setdefault(p.dataset, []).append(p)
    short = {d: (n, len(by_dataset.get(d, []))) for d, n in wanted.items() if n > len(by_dataset.get(d, []))}
    if short:
        raise ValueError(
            "the pool has too few pairs for the reference's mix (dataset: wanted, available): "
            + ", ".join(f"{d}: {n}, {a}" for d, (n, a) in short.items())
        )
    rng = random.Random(seed)
    drawn = [p for d, n in wanted.items() for p in rng.sample(by_dataset[d], n)]
    rng.shuffle(drawn)
    return drawn


def largest_matched(full: Stage2Data, clean: Stage2Data, margin: float = 0.9) -> int:
    """The largest arm size at which the de-duplicated pool can match the full pool's mix, times ``margin`` (a
    random draw of the full pool varies around its mix): at most about 1,600 of the 10,249 pairs, since only 991
    STS-B train pairs are not shared with a test set."""
    shares = {d: n / sum(full.before.values()) for d, n in full.before.items()}
    clean_counts = _count(clean.pairs)
    return int(margin * min(clean_counts.get(d, 0) / share for d, share in shares.items() if share > 0))


@dataclass(frozen=True)
class Arms:
    """The two arms of the de-duplication study on one seed: ``kept`` (drawn from all stage-2 pairs, shared ones
    included), ``removed`` (drawn from the pairs shared with no test set, with ``kept``'s mix), and how many of
    ``kept``'s pairs a test set shares."""

    kept: list[stsdata.STSPair]
    removed: list[stsdata.STSPair]
    shared_in_kept: int

    def mix(self) -> str:
        """ "kept: STSBenchmark 71, SICK 57 (60 shared); removed: STSBenchmark 71, SICK 57"."""
        kept, removed = sorted(_count(self.kept).items()), sorted(_count(self.removed).items())
        return (
            f"kept: {', '.join(f'{d} {n}' for d, n in kept)} ({self.shared_in_kept} shared with a test set); "
            f"removed: {', '.join(f'{d} {n}' for d, n in removed)}"
        )


def matched_arms(full: Stage2Data, clean: Stage2Data, n: int | None, seed: int) -> Arms:
    """``n`` pairs drawn from ``full`` with ``seed`` (``stsnb.data.sample``, the same draw as stage 2's when ``n``
    equals its size), and as many from ``clean`` stratified to the same STS-B / SICK-R mix."""
    if n is None or n > largest_matched(full, clean, margin=1.0):
        raise ValueError(
            f"dedup_pairs (or stage2_pairs) must be at most {largest_matched(full, clean)} for two arms of one mix "
            f"(the de-duplicated pool has {dict(_count(clean.pairs))} pairs), got {n}"
        )
    kept = stsdata.sample(full.pairs, n, seed)
    clean_set = set(clean.pairs)
    return Arms(kept, stratified_like(kept, clean.pairs, seed), sum(p not in clean_set for p in kept))


def _count(pairs) -> dict[str, int]:
    counts: dict[str, int] = {}
    for p in pairs:
        counts[p.dataset] = counts.get(p.dataset, 0) + 1
    return counts
