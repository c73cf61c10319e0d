"""The records every loader returns and the data layer's names: the sets and splits, the Hub copies' ids, and
:class:`DataError`, which names file, line and what was expected."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

DATA_DIR_ENV = "STSNB_DATA_DIR"  # the data folder (or "hub"); unset: data/ at the repository root

WIKI_FILE = "wiki1m_for_simcse.txt"  # SimCSE's unsupervised corpus: 1M Wikipedia sentences, one per line

TextVariant = Literal["senteval", "raw"]


# SentEval's STS12-16 subsets (SimCSE's modified SentEval, REFERENCE_NOTES B). STS13 has no SMT (licence).
STS_SUBSETS: dict[str, tuple[str, ...]] = {
    "STS12": ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"),
    "STS13": ("FNWN", "headlines", "OnWN"),
    "STS14": ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"),
    "STS15": ("answers-forums", "answers-students", "belief", "headlines", "images"),
    "STS16": ("answer-answer", "headlines", "plagiarism", "postediting", "question-question"),
}


STS_YEARS = tuple(STS_SUBSETS)


STSB_SPLITS = ("train", "dev", "test")


SICK_SPLITS = ("train", "trial", "test")


SNLI_SPLITS = ("dev", "test")


CSTS_SPLITS = ("train", "validation")


NLI_LABELS = ("contradiction", "neutral", "entailment")


# STS-Regression Section 4.1: contradiction/neutral/entailment -> 0/1/2 (ordered by similarity)
NLI_LABEL_TO_ID = {name: i for i, name in enumerate(NLI_LABELS)}


# Hub datasets used when no data folder exists (kept thin: they are unreachable from this workplace).
HUB_DATASETS = {
    "STS12": "mteb/sts12-sts",
    "STS13": "mteb/sts13-sts",
    "STS14": "mteb/sts14-sts",
    "STS15": "mteb/sts15-sts",
    "STS16": "mteb/sts16-sts",
    "STSBenchmark": "sentence-transformers/stsb",
    "SICK": "RobZamp/sick",
    "SNLI": "stanfordnlp/snli",
    "wiki1m": "princeton-nlp/datasets-for-simcse",
    "CSTS": "LivNLP/C-STS-Reannotated",
}


class DataError(ValueError):
    """A data file is missing or malformed; the message names the file, the line and what was expected."""


@dataclass(frozen=True)
class STSPair:
    """One scored sentence pair. ``score`` is on the dataset's own scale (STS 0-5, SICK 1-5)."""

    sent1: str
    sent2: str
    score: float
    dataset: str
    subset: str
    source: str = field(default="", compare=False)
    entailment: str | None = None  # SICK only: NEUTRAL / ENTAILMENT / CONTRADICTION


@dataclass(frozen=True)
class NLIPair:
    premise: str
    hypothesis: str
    label: str  # one of NLI_LABELS
    source: str = field(default="", compare=False)

    @property
    def label_id(self) -> int:
        """contradiction/neutral/entailment -> 0/1/2 (STS-Regression Section 4.1)."""
        return NLI_LABEL_TO_ID[self.label]


@dataclass(frozen=True)
class Triplet:
    """(anchor, positive, hard negative) as in SimCSE's supervised NLI data (Pcc-tuning Eq. 8)."""

    anchor: str
    positive: str
    negative: str


@dataclass(frozen=True)
class CSTSRecord:
    sent1: str
    sent2: str
    condition: str
    label: float  # 1-5
    source: str = field(default="", compare=False)


class Loaded(list):
    """A list of records that also says what the loader skipped on purpose (``skipped``: reason -> count)."""

    def __init__(self, items: Iterable = (), skipped: dict[str, int] | None = None):
        super().__init__(items)
        self.skipped: dict[str, int] = dict(skipped or {})


HUB = "hub"  # STSNB_DATA_DIR=hub (or data_dir="hub"): read the Hugging Face Hub copies instead of a folder


PAPER = "paper"  # a *_source reading the paper plan's corpora from <data folder>/paper/ (`stsnb data fetch --paper`)
PAPER_NLI_FILES = ("snli_train.csv", "multinli_train.csv")  # SNLI + MultiNLI train: gold_label,sentence1,sentence2


def paper_file(folder: Path, name: str) -> Path:
    """``<folder>/paper/<name>``, one of the corpora ``stsnb data fetch --paper`` builds; a ``DataError`` naming the
    file and the command when it is missing or empty."""
    path = Path(folder) / PAPER / name
    if not path.is_file() or path.stat().st_size == 0:
        raise DataError(
            f"{path}: {'empty' if path.is_file() else 'not found'}; expected the paper plan's corpus there: "
            "`stsnb data fetch --paper` builds it (in the data folder, $STSNB_DATA_DIR)"
        )
    return path


GET_THE_DATA = (
    "Get the data: `stsnb data fetch` builds the folder from the Hugging Face Hub and verifies it (at ./data in the "
    f"repository, or where {DATA_DIR_ENV} points; `--to DIR` for another place; docs/data.md); `stsnb data verify "
    "DIR` checks a folder copied from elsewhere."
)


def parse_score(text: str, where: str, low: float, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{where}: expected a score in [{low}, {high}], got {text!r}") from None
    if not (low <= value <= high) or math.isnan(value):
        raise DataError(f"{where}: score {value} outside the range [{low}, {high}]")
    return value
