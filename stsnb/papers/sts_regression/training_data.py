"""STS-Regression's training pairs: NLI with the Section 4.1 label order, STS-B + SICK-R on 0-5 (SICK rescaled), and
the de-duplicated STS training set of Section 4.2 / Appendix A.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ... import data as stsdata

# Section 4.1: ours orders the classes by similarity; Sentence-BERT's contradiction 0, entailment 1, neutral 2 does
# not (harmless for cross entropy, wrong for regression).
NLI_TARGETS: dict[str, int] = dict(stsdata.NLI_LABEL_TO_ID)
SENTENCE_BERT_LABELS: dict[str, int] = {"contradiction": 0, "entailment": 1, "neutral": 2}
NLI_RANGE = (0.0, 2.0)
STS_RANGE = (0.0, 5.0)


# ---- training pairs (Sections 4.1, 4.2, Appendix A) ------------------------------------------------------------


@dataclass(frozen=True)
class TrainingPair:
    """Two sentences and the regression target (NLI: 0/1/2; STS: 0-5) or class id (cross entropy)."""

    sent1: str
    sent2: str
    target: float


def nli_training_pairs(pairs: Sequence[stsdata.NLIPair], mapping: dict[str, int] = NLI_TARGETS) -> list[TrainingPair]:
    """NLI pairs with the Section 4.1 mapping contradiction/neutral/entailment -> 0/1/2 (premise = sentence 1)."""
    return [TrainingPair(p.premise, p.hypothesis, float(mapping[p.label])) for p in pairs]


def sts_training_pairs(pairs: Sequence[stsdata.STSPair]) -> list[TrainingPair]:
    """STS pairs on the 0-5 scale; SICK relatedness is rescaled by 5(l - 1)/4 (Section 4.2)."""
    return [
        TrainingPair(p.sent1, p.sent2, stsdata.rescale_sick(p.score) if p.dataset == "SICK" else p.score) for p in pairs
    ]


def positive_pairs(pairs: Sequence[TrainingPair], threshold: float = 4.0) -> list[TrainingPair]:
    """The pairs InfoNCE can use as positives: gold >= ``threshold`` (Section 4.2: 4.0 -> 1,543 of 5,398)."""
    return [p for p in pairs if p.target >= threshold]


@dataclass
class FilteredSTSTrain:
    """STS-B train + SICK-R train without the pairs that occur in a test set (Appendix A), SICK rescaled."""

    report: stsdata.DedupReport
    pairs: list[TrainingPair]

    @property
    def removed(self) -> int:
        return len(self.report.removed)

    def removed_by_dataset(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for pair in self.report.removed:
            counts[pair.dataset] = counts.get(pair.dataset, 0) + 1
        return counts


def filtered_sts_train(text: stsdata.TextVariant = "raw", data_dir=None) -> FilteredSTSTrain:
    """Section 4.2 + Appendix A: STS-B train and SICK-R train minus every pair found in a test set, either order.

    ``text="raw"`` compares the original untokenised files and reproduces the paper's counts (5,398 kept, 1,543
    scored >= 4.0). With ``"senteval"`` the STS-B train file and the STS12-16 test files went through different
    tokenisers, so many shared pairs no longer match and more survive (see the notebook).
    """
    train = list(stsdata.load_stsb("train", text, data_dir)) + list(stsdata.load_sick("train", text, data_dir))
    report = stsdata.dedup_against_tests(train, stsdata.seven_test_sets(text, data_dir))
    return FilteredSTSTrain(report, sts_training_pairs(report.kept))


@dataclass(frozen=True)
class PairSplit:
    """The labelled pairs of a notebook (NLI, Section 4.1, or the STS analogue), shuffled once: ``heldout`` (never
    trained on, for the heads' accuracy), ``pool`` (the rest; stage 1 of Section 4.2 draws NLI from it too) and
    ``train`` (the first pairs of the pool, for Tables 1, 5 and 6)."""

    heldout: list[TrainingPair]
    pool: list[TrainingPair]
    train: list[TrainingPair]


def split_pairs(pairs: Sequence[TrainingPair], seed: int, heldout: int, train: int | None) -> PairSplit:
    """Shuffle ``pairs`` with ``random.Random(seed)``, keep the first ``heldout`` out, train on the next ``train``
    (None: all the rest)."""
    shuffled = list(pairs)
    random.Random(seed).shuffle(shuffled)
    held, pool = shuffled[:heldout], shuffled[heldout:]
    return PairSplit(held, pool, pool[:train] if train is not None else pool)
