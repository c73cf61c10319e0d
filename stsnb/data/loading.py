"""Real STS / NLI / Wikipedia / C-STS data from a SentEval-layout data folder (or the Hugging Face Hub).

The folder is the one ``stsnb data fetch`` builds and ``stsnb data verify`` checks (:mod:`stsnb.data.fetch`,
:mod:`stsnb.data.manifest`; docs/data.md)::

    senteval/STS/STS1{2..6}-en-test/STS.input.<subset>.txt + STS.gs.<subset>.txt
    senteval/STS/STSBenchmark/sts-{train,dev,test}.csv
    senteval/SICK/SICK_{train,trial,test_annotated}.txt
    senteval/SNLI/{s1,s2,labels}.{dev,test}
    sts_raw/..., stsbenchmark_raw/..., sick_raw/...   (the same sets as original cased text)
    wiki1m_subset/wiki1m_for_simcse.txt
    csts_reannotated/csts_{train,validation}_reannotated.csv

Every loader returns plain frozen records (``STSPair``, ``NLIPair``, ``Triplet``, ``CSTSRecord``); every record
remembers the file and line it came from. Malformed input raises :class:`DataError` naming file, line and
what was expected. Nothing is dropped silently: the only rows a loader skips are the ones the protocol says
to skip (unscored STS15/16 pairs, C-STS rows labelled -1), and it says how many through ``skipped``.
"""

from __future__ import annotations

import csv
import os
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .hub_copies import hub_csts, hub_multinli, hub_sick, hub_snli, hub_sts, hub_stsb, hub_wiki
from .records import (
    CSTS_SPLITS,
    DATA_DIR_ENV,
    GET_THE_DATA,
    HUB,
    HUB_DATASETS,
    NLI_LABEL_TO_ID,
    NLI_LABELS,
    PAPER,
    PAPER_NLI_FILES,
    SICK_SPLITS,
    SNLI_SPLITS,
    STS_SUBSETS,
    STS_YEARS,
    STSB_SPLITS,
    WIKI_FILE,
    CSTSRecord,
    DataError,
    Loaded,
    NLIPair,
    STSPair,
    TextVariant,
    Triplet,
    paper_file,
    parse_score,
)

DEFAULT_DATA_DIR = Path(__file__).resolve().parents[2] / "data"


# ----------------------------------------------------------------------------------------------------------
# locating files


def _setting(override: str | os.PathLike | None) -> tuple[str, str]:
    """(value, where it came from) of the data source setting."""
    if override is not None:
        return str(override), "the data_dir argument"
    if os.environ.get(DATA_DIR_ENV):
        return os.environ[DATA_DIR_ENV], f"${DATA_DIR_ENV}"
    return str(DEFAULT_DATA_DIR), f"the default (data/ at the repository root; {DATA_DIR_ENV} is not set)"


def resolve_data_dir(override: str | os.PathLike | None = None) -> Path:
    """The data folder: the argument, else ``$STSNB_DATA_DIR``, else ``data/`` at the repository root.

    The one resolution the package and the tests use. A missing folder raises ``DataError`` saying where it looked
    and how to get the data; it never falls back to the network.
    """
    value, origin = _setting(override)
    if value == HUB:
        raise DataError(f"the data source is the Hugging Face Hub ({origin} = 'hub'), not a folder")
    path = Path(value).expanduser().resolve()
    if not path.is_dir():
        raise DataError(f"no data folder at {path} (from {origin}). {GET_THE_DATA}")
    return path


def has_data_dir(override: str | os.PathLike | None = None) -> bool:
    try:
        resolve_data_dir(override)
    except DataError:
        return False
    return True


def uses_hub(override: str | os.PathLike | None = None) -> bool:
    """True when the data source is the Hub: ``data_dir="hub"`` or ``STSNB_DATA_DIR=hub``."""
    return _setting(override)[0] == HUB


def describe_source(override: str | os.PathLike | None = None) -> str:
    """One line naming the data in use, for logs and the CLI."""
    if uses_hub(override):
        return "the Hugging Face Hub copies (raw text; STS12-16 without subset names)"
    return f"the data folder {resolve_data_dir(override)}"


def _use_hub(hub: bool | None, override: str | os.PathLike | None, text: str = "raw") -> bool:
    """``hub=None`` (the default) follows the data source setting; the Hub copies hold raw text only."""
    use = uses_hub(override) if hub is None else hub
    if use and text != "raw":
        raise DataError(
            f"the Hugging Face Hub copies hold the original (raw) text, not SentEval's tokenised {text!r} text: "
            "pass text='raw' (stsnb eval --text raw) or use a data folder"
        )
    return use


def _file(root: Path, *parts: str) -> Path:
    path = root.joinpath(*parts)
    if not path.is_file():
        raise DataError(
            f"{path}: file not found (expected in the data folder; `stsnb data verify` checks the folder, "
            "`stsnb data fetch` builds it)"
        )
    return path


def _read_lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        line = text_line_of_offset(path.read_bytes(), err.start)
        raise DataError(f"{path}:{line}: not valid UTF-8 ({err.reason})") from err
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def text_line_of_offset(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


# ----------------------------------------------------------------------------------------------------------
# STS12-16 (SentEval "all" subsets)


def _sts_root(root: Path, text: TextVariant) -> Path:
    if text == "senteval":
        return root / "senteval" / "STS"
    if text == "raw":
        return root / "sts_raw"
    raise ValueError(f"text must be 'senteval' or 'raw', got {text!r}")


def load_sts_year(
    year: str, text: TextVariant = "senteval", data_dir: str | os.PathLike | None = None, *, hub: bool | None = None
) -> Loaded:
    """All subsets of one STS year (``"STS12"`` ... ``"STS16"``), subset name kept per pair.

    Pairs whose gold line is empty (unscored, STS15/16) are dropped as SentEval does; their count is in
    ``result.skipped["unscored"]``.
    """
    if year not in STS_SUBSETS:
        raise ValueError(f"year must be one of {STS_YEARS}, got {year!r}")
    if _use_hub(hub, data_dir, text):
        return hub_sts(year)
    folder = _sts_root(resolve_data_dir(data_dir), text) / f"{year}-en-test"
    pairs: list[STSPair] = []
    unscored = 0
    for subset in STS_SUBSETS[year]:
        input_path = _file(folder, f"STS.input.{subset}.txt")
        gold_path = _file(folder, f"STS.gs.{subset}.txt")
        inputs, golds = _read_lines(input_path), _read_lines(gold_path)
        if len(inputs) != len(golds):
            raise DataError(
                f"{input_path} has {len(inputs)} lines but {gold_path} has {len(golds)}: expected one gold "
                "line (possibly empty) per input line"
            )
        for number, (line, gold) in enumerate(zip(inputs, golds, strict=True), start=1):
            columns = line.split("\t")
            if len(columns) != 2:
                raise DataError(
                    f"{input_path}:{number}: expected 2 tab-separated sentences, got {len(columns)} columns"
                )
            if gold.strip() == "":
                unscored += 1
                continue
            score = parse_score(gold.strip(), f"{gold_path}:{number}", 0.0, 5.0)
            pairs.append(STSPair(columns[0], columns[1], score, year, subset, f"{input_path.name}:{number}"))
    return Loaded(pairs, {"unscored": unscored} if unscored else {})


# ----------------------------------------------------------------------------------------------------------
# STS-B


def load_stsb(
    split: str = "test",
    text: TextVariant = "senteval",
    data_dir: str | os.PathLike | None = None,
    *,
    hub: bool | None = None,
) -> Loaded:
    """STS Benchmark train/dev/test (scores 0-5). The raw files can have 9 columns (2 extra source columns)."""
    if split not in STSB_SPLITS:
        raise ValueError(f"split must be one of {STSB_SPLITS}, got {split!r}")
    if _use_hub(hub, data_dir, text):
        return hub_stsb(split)
    root = resolve_data_dir(data_dir)
    folder = root / "senteval" / "STS" / "STSBenchmark" if text == "senteval" else root / "stsbenchmark_raw"
    if text not in ("senteval", "raw"):
        raise ValueError(f"text must be 'senteval' or 'raw', got {text!r}")
    path = _file(folder, f"sts-{split}.csv")
    pairs = []
    for number, line in enumerate(_read_lines(path), start=1):
        columns = line.split("\t")
        if len(columns) < 7:
            raise DataError(f"{path}:{number}: expected at least 7 tab-separated columns, got {len(columns)}")
        score = parse_score(columns[4], f"{path}:{number}", 0.0, 5.0)
        pairs.append(STSPair(columns[5], columns[6], score, "STSBenchmark", split, f"{path.name}:{number}"))
    return Loaded(pairs)


# ----------------------------------------------------------------------------------------------------------
# SICK


SICK_FILES = {"train": "SICK_train.txt", "trial": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}
SICK_HEADER = ["pair_ID", "sentence_A", "sentence_B", "relatedness_score", "entailment_judgment"]
SICK_ENTAILMENT = ("NEUTRAL", "ENTAILMENT", "CONTRADICTION")


def load_sick(
    split: str = "test",
    text: TextVariant = "senteval",
    data_dir: str | os.PathLike | None = None,
    *,
    hub: bool | None = None,
) -> Loaded:
    """SICK train/trial/test: relatedness score (1-5) and the entailment judgment of each pair."""
    if split not in SICK_SPLITS:
        raise ValueError(f"split must be one of {SICK_SPLITS}, got {split!r}")
    if _use_hub(hub, data_dir, text):
        return hub_sick(split)
    root = resolve_data_dir(data_dir)
    if text not in ("senteval", "raw"):
        raise ValueError(f"text must be 'senteval' or 'raw', got {text!r}")
    folder = root / "senteval" / "SICK" if text == "senteval" else root / "sick_raw"
    path = _file(folder, SICK_FILES[split])
    lines = _read_lines(path)
    if not lines or lines[0].split("\t")[:5] != SICK_HEADER:
        raise DataError(f"{path}:1: expected the header {' '.join(SICK_HEADER)}")
    pairs = []
    for number, line in enumerate(lines[1:], start=2):
        columns = line.split("\t")
        if len(columns) < 5:
            raise DataError(f"{path}:{number}: expected 5 tab-separated columns, got {len(columns)}")
        score = parse_score(columns[3], f"{path}:{number}", 1.0, 5.0)
        if columns[4] not in SICK_ENTAILMENT:
            raise DataError(f"{path}:{number}: expected an entailment label in {SICK_ENTAILMENT}, got {columns[4]!r}")
        pairs.append(
            STSPair(columns[1], columns[2], score, "SICK", split, f"{path.name}:{number}", entailment=columns[4])
        )
    return Loaded(pairs)


def rescale_sick(score: float) -> float:
    """SICK relatedness 1-5 onto the STS 0-5 scale: 5 * (l - 1) / 4 (STS-Regression Section 4.2)."""
    if not 1.0 <= score <= 5.0:
        raise ValueError(f"SICK relatedness must be in [1, 5], got {score}")
    return 5.0 * (score - 1.0) / 4.0


# ----------------------------------------------------------------------------------------------------------
# SNLI (dev and test only: the train split is not in the data folder, see SOURCES.md)


def load_snli(split: str = "dev", data_dir: str | os.PathLike | None = None, *, hub: bool | None = None) -> Loaded:
    """SNLI pairs with labels (SentEval files, PTB-tokenised). Only dev and test exist in the data folder."""
    if split not in SNLI_SPLITS and not (_use_hub(hub, data_dir) and split == "train"):
        raise ValueError(
            f"split must be one of {SNLI_SPLITS} (SNLI train is not in the data folder; hub=True reads it), "
            f"got {split!r}"
        )
    if _use_hub(hub, data_dir):
        return hub_snli(split)
    folder = resolve_data_dir(data_dir) / "senteval" / "SNLI"
    paths = [_file(folder, f"{name}.{split}") for name in ("s1", "s2", "labels")]
    s1, s2, labels = (_read_lines(p) for p in paths)
    if not len(s1) == len(s2) == len(labels):
        raise DataError(
            f"{folder}: s1.{split} has {len(s1)} lines, s2.{split} {len(s2)}, labels.{split} {len(labels)}: "
            "expected the same number of lines in all three"
        )
    pairs = []
    for number, (premise, hypothesis, label) in enumerate(zip(s1, s2, labels, strict=True), start=1):
        label = label.strip()
        if label not in NLI_LABEL_TO_ID:
            raise DataError(f"{paths[2]}:{number}: expected one of {NLI_LABELS}, got {label!r}")
        pairs.append(NLIPair(premise.strip(), hypothesis.strip(), label, f"labels.{split}:{number}"))
    return Loaded(pairs)


def nli_triplets(pairs: Sequence[NLIPair]) -> Loaded:
    """(premise, entailment, contradiction) triplets, SimCSE style, from labelled NLI pairs.

    Every premise with at least one entailed and one contradicted hypothesis yields one triplet per
    entailment hypothesis (paired with the premise's contradictions in turn). Premises without both are
    counted in ``skipped``.
    """
    by_premise: dict[str, dict[str, list[str]]] = {}
    for pair in pairs:
        by_premise.setdefault(pair.premise, {}).setdefault(pair.label, []).append(pair.hypothesis)
    triplets, incomplete = [], 0
    for premise, hyps in by_premise.items():
        positives, negatives = hyps.get("entailment", []), hyps.get("contradiction", [])
        if not positives or not negatives:
            incomplete += 1
            continue
        for i, positive in enumerate(positives):
            triplets.append(Triplet(premise, positive, negatives[i % len(negatives)]))
    return Loaded(triplets, {"premise without both entailment and contradiction": incomplete})


# ----------------------------------------------------------------------------------------------------------
# Wikipedia


def load_wiki(
    limit: int | None = None, data_dir: str | os.PathLike | None = None, *, hub: bool | None = None
) -> list[str]:
    """Sentences of SimCSE's wiki1m file (here its first 11,914 lines, a contiguous prefix)."""
    if _use_hub(hub, data_dir):
        return hub_wiki(limit)
    return _read_sentences(_file(resolve_data_dir(data_dir), "wiki1m_subset", "wiki1m_for_simcse.txt"), limit)


def _read_sentences(path: Path, limit: int | None) -> list[str]:
    """One sentence per line (the first ``limit``); an empty line is a ``DataError`` naming file and line."""
    sentences = []
    for number, line in enumerate(_read_lines(path), start=1):
        if not line.strip():
            raise DataError(f"{path}:{number}: empty line, expected one sentence per line")
        sentences.append(line.strip())
        if limit is not None and len(sentences) >= limit:
            break
    return sentences


# ----------------------------------------------------------------------------------------------------------
# C-STS (public re-annotated release; the original is encrypted and its test labels withheld)


def load_csts(
    split: str = "validation",
    data_dir: str | os.PathLike | None = None,
    *,
    hub: bool | None = None,
    path: str | os.PathLike | None = None,
) -> Loaded:
    """C-STS rows (sentence1, sentence2, condition, label 1-5). Rows labelled -1 are dropped and counted.

    By default the public re-annotated release in the data folder (``split`` = train | validation). ``path`` reads
    any CSV in the C-STS format instead, e.g. the original C-STS ``csts_train.csv`` / ``csts_validation.csv`` once a
    user has decrypted them (they are never shipped here); ``split`` is then ignored. The header must name the
    columns ``sentence1, sentence2, condition, label`` (in any order; other columns are ignored). A row with a
    wrong number of fields, an empty sentence or condition, or a label that is neither -1 nor within 1..5 raises
    :class:`DataError` naming the file and line. The original test split (labels withheld, all -1) loads as an
    empty list whose ``skipped`` says so.
    """
    if path is not None:
        return _read_csts_csv(Path(path).expanduser())
    if split not in CSTS_SPLITS:
        raise ValueError(f"split must be one of {CSTS_SPLITS} (test labels are withheld), got {split!r}")
    if _use_hub(hub, data_dir):
        return hub_csts(split)
    return _read_csts_csv(_file(resolve_data_dir(data_dir), "csts_reannotated", f"csts_{split}_reannotated.csv"))


CSTS_COLUMNS = ("sentence1", "sentence2", "condition", "label")


def _read_csts_csv(path: Path) -> Loaded:
    if not path.is_file():
        raise DataError(f"{path}: file not found (expected a C-STS CSV with columns {', '.join(CSTS_COLUMNS)})")
    records, unlabelled = [], 0
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            missing = [c for c in CSTS_COLUMNS if header is None or c not in header]
            if missing:
                raise DataError(f"{path}:1: expected a header with the columns {','.join(CSTS_COLUMNS)}, got {header}")
            index = {c: header.index(c) for c in CSTS_COLUMNS}
            last = reader.line_num
            for row in reader:
                number, last = last + 1, reader.line_num  # the line the row starts on (a quoted field may span lines)
                if len(row) != len(header):
                    raise DataError(
                        f"{path}:{number}: expected {len(header)} comma-separated fields ({','.join(header)}), "
                        f"got {len(row)}"
                    )
                sent1, sent2, condition, raw = (row[index[c]] for c in CSTS_COLUMNS)
                for name, value in (("sentence1", sent1), ("sentence2", sent2), ("condition", condition)):
                    if not value.strip():
                        raise DataError(f"{path}:{number}: empty {name}, expected text")
                if raw.strip() in ("-1", "-1.0"):
                    unlabelled += 1
                    continue
                label = parse_score(raw, f"{path}:{number}", 1.0, 5.0)
                records.append(CSTSRecord(sent1, sent2, condition, label, f"{path.name}:{number}"))
    except UnicodeDecodeError as err:
        line = text_line_of_offset(path.read_bytes(), err.start)
        raise DataError(f"{path}:{line}: not valid UTF-8 ({err.reason})") from err
    except csv.Error as err:
        raise DataError(f"{path}:{reader.line_num}: malformed CSV ({err})") from err
    return Loaded(records, {"label -1 (no usable label)": unlabelled} if unlabelled else {})


# ----------------------------------------------------------------------------------------------------------
# train/test de-duplication (STS-Regression Appendix A)


NLI_SOURCES = ("snli-dev-test", "hub", PAPER)


def load_nli(source: str = "snli-dev-test", data_dir=None) -> list[NLIPair]:
    """An NLI training corpus (the papers train on SNLI + MultiNLI train).

    - ``"snli-dev-test"``: SNLI dev + test from the data folder (19,666 pairs). A stand-in: the paper trains on
      SNLI + MultiNLI *train*, which this workplace does not have.
    - ``"hub"``: SNLI train (``stanfordnlp/snli``) + MultiNLI train (``nyu-mll/multi_nli``) from the Hugging Face
      Hub, the paper's corpus; ``"paper"``: the same from the data folder (``paper/snli_train.csv`` and
      ``paper/multinli_train.csv``, which ``stsnb data fetch --paper`` builds).
    - a path to a CSV with columns ``gold_label, sentence1, sentence2`` (the official ``nli_012.csv``: labels
      0/1/2 = contradiction/neutral/entailment).

    Raises ``RuntimeError`` naming what is missing; it never falls back to another corpus.
    """
    if source == "snli-dev-test":
        return list(load_snli("dev", data_dir)) + list(load_snli("test", data_dir))
    if source == "hub":
        try:
            snli = list(load_snli("train", hub=True))
            mnli = hub_multinli()
        except Exception as err:
            raise RuntimeError(
                "nli_source='hub' needs SNLI train (stanfordnlp/snli) and MultiNLI train (nyu-mll/multi_nli) from "
                f"the Hugging Face Hub, which could not be read here ({type(err).__name__}: {err}). Use 'paper' after "
                "`stsnb data fetch --paper`, an official nli_012.csv's path, or 'snli-dev-test' (a stand-in)."
            ) from err
        return snli + mnli
    if source == PAPER:
        return [p for name in PAPER_NLI_FILES for p in _read_nli_csv(paper_file(resolve_data_dir(data_dir), name))]
    path = Path(source).expanduser()
    if not path.is_file():
        raise RuntimeError(
            f"nli_source={source!r} is neither {NLI_SOURCES} nor an existing CSV file (gold_label,sentence1,sentence2)"
        )
    return _read_nli_csv(path)


def _csv_rows(path: Path, columns: Sequence[str], expected: str) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) of a CSV with a header naming ``columns``; a row with a missing or empty field is a
    ``DataError`` naming the file and line."""
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = set(columns) - set(reader.fieldnames or ())
        if missing:
            raise DataError(
                f"{path}:1: missing columns {sorted(missing)} in the header {reader.fieldnames}; expected {expected}"
            )
        for row in reader:
            empty = [c for c in columns if not (row.get(c) or "").strip()]
            if empty:
                raise DataError(f"{path}:{reader.line_num}: empty or missing {', '.join(empty)}; expected {expected}")
            yield reader.line_num, row


def _read_nli_csv(path: Path) -> list[NLIPair]:
    """STS-Regression's ``nli_012.csv``: ``gold_label`` 0/1/2 (contradiction/neutral/entailment) or a label name."""
    by_id = {str(i): name for i, name in enumerate(NLI_LABELS)}
    expected = "gold_label,sentence1,sentence2 with gold_label 0/1/2 or an NLI label"
    pairs = []
    for line, row in _csv_rows(path, ("gold_label", "sentence1", "sentence2"), expected):
        label = row["gold_label"].strip()
        name = by_id.get(label, label)
        if name not in NLI_LABEL_TO_ID:
            raise DataError(f"{path}:{line}: gold_label {label!r} is not 0/1/2 or one of {NLI_LABELS}")
        pairs.append(NLIPair(row["sentence1"], row["sentence2"], name, f"{path.name}:{line}"))
    return pairs


def load_simcse_triplets(path: str | os.PathLike) -> Loaded:
    """SimCSE's supervised NLI file ``nli_for_simcse.csv`` (columns ``sent0, sent1, hard_neg``: premise, entailed
    hypothesis, contradicted hypothesis; about 275k rows), the stage-1 data of Pcc-tuning (Section 4.1) in its own
    format. A malformed row is a ``DataError`` naming the file and line."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise DataError(f"{path}: no such file; expected SimCSE's nli_for_simcse.csv (sent0,sent1,hard_neg)")
    rows = _csv_rows(path, ("sent0", "sent1", "hard_neg"), "sent0,sent1,hard_neg (SimCSE's nli_for_simcse.csv)")
    return Loaded(Triplet(r["sent0"], r["sent1"], r["hard_neg"]) for _, r in rows)


WIKI_SOURCES = ("sample", "hub", PAPER)


def load_wiki_corpus(source: str = "sample", limit: int | None = None, data_dir=None) -> list[str]:
    """The unsupervised training corpus (HiCL Section 4.1: wiki1m), chosen apart from where the evaluation data
    come from: STS evaluation stays on the SentEval folder whatever the source.

    - ``"sample"``: the data folder's first 11,914 lines of SimCSE's wiki1m file (``load_wiki``);
    - ``"hub"``: all 1M sentences from the Hugging Face Hub (``princeton-nlp/datasets-for-simcse``, its
      ``wiki1m_for_simcse.txt``), the papers' corpus; ``"paper"``: the same from ``<data folder>/paper/``;
    - a path to a text file with one sentence per line, such as a local ``wiki1m_for_simcse.txt``.

    A path that is not a file, an empty corpus or an empty line is a ``DataError`` naming the file.
    """
    if source == "sample":
        sentences = load_wiki(limit, data_dir, hub=False)
        where = "the data folder's wiki1m sample"
    elif source == "hub":
        sentences = hub_wiki(limit)
        where = f"{HUB_DATASETS['wiki1m']}/{WIKI_FILE}"
    elif source == PAPER:
        where = str(paper_file(resolve_data_dir(data_dir), WIKI_FILE))
        sentences = _read_sentences(Path(where), limit)
    else:
        path = Path(source).expanduser()
        if not path.is_file():
            raise DataError(
                f"{path}: no such file; the training corpus source must be one of {WIKI_SOURCES} or a text file with "
                f"one sentence per line (e.g. SimCSE's {WIKI_FILE})"
            )
        sentences = _read_sentences(path, limit)
        where = str(path)
    if not sentences:
        raise DataError(f"{where}: no sentences (empty); expected one sentence per line")
    return sentences


def sample(items: Sequence, n: int | None, seed: int) -> list:
    """``n`` items drawn without replacement (all of them, in order, when ``n`` is None or too large)."""
    if n is None or n >= len(items):
        return list(items)
    return random.Random(seed).sample(list(items), n)


def seven_test_sets(text: TextVariant = "senteval", data_dir: str | os.PathLike | None = None) -> list[STSPair]:
    """Every test pair of STS12-16, STS-B test and SICK-R test."""
    pairs: list[STSPair] = []
    for year in STS_YEARS:
        pairs += load_sts_year(year, text, data_dir)
    pairs += load_stsb("test", text, data_dir)
    pairs += load_sick("test", text, data_dir)
    return pairs


@dataclass
class DedupReport:
    kept: list[STSPair]
    removed: list[STSPair]

    def summary(self) -> str:
        total = len(self.kept) + len(self.removed)
        by_dataset: dict[str, int] = {}
        for pair in self.removed:
            by_dataset[pair.dataset] = by_dataset.get(pair.dataset, 0) + 1
        parts = ", ".join(f"{name} {count}" for name, count in sorted(by_dataset.items()))
        return f"removed {len(self.removed)} of {total} training pairs that occur in a test set ({parts})"


def _normalise(sentence: str) -> str:
    return " ".join(sentence.split())


def dedup_against_tests(train: Sequence[STSPair], tests: Sequence[STSPair]) -> DedupReport:
    """Drop a train pair whose (s1, s2) equals a test pair in either order, scores ignored (Appendix A).

    Sentences are compared after collapsing white space (the files' trailing spaces are not content).
    """
    seen = {(_normalise(p.sent1), _normalise(p.sent2)) for p in tests}
    kept, removed = [], []
    for pair in train:
        a, b = _normalise(pair.sent1), _normalise(pair.sent2)
        (removed if (a, b) in seen or (b, a) in seen else kept).append(pair)
    return DedupReport(kept, removed)


# ----------------------------------------------------------------------------------------------------------
# Hugging Face Hub fallback (thin; mapped onto the same records)
