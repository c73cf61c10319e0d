"""The Hugging Face Hub copies of the data sets (``STSNB_DATA_DIR=hub``), read with ``datasets`` and mapped onto
the same records as the data folder's files."""

from __future__ import annotations

from .records import (
    GET_THE_DATA,
    HUB_DATASETS,
    WIKI_FILE,
    CSTSRecord,
    DataError,
    Loaded,
    NLIPair,
    STSPair,
    parse_score,
)


def hub_multinli() -> list[NLIPair]:
    from datasets import load_dataset

    labels = ("entailment", "neutral", "contradiction")  # nyu-mll/multi_nli: 0/1/2, -1 = no gold label
    rows = load_dataset("nyu-mll/multi_nli", split="train")
    return [
        NLIPair(r["premise"], r["hypothesis"], labels[int(r["label"])], f"multi_nli:{i}")
        for i, r in enumerate(rows)
        if int(r["label"]) >= 0
    ]


def _load_dataset(dataset_id: str, *args, **kwargs):
    try:
        from datasets import load_dataset
    except ImportError as err:  # pragma: no cover - datasets is a dependency
        raise DataError("the Hub path needs the `datasets` package") from err
    try:
        return load_dataset(dataset_id, *args, **kwargs)
    except Exception as err:  # connection errors, missing datasets: all mean "not readable from here"
        raise DataError(
            f"could not read the Hub dataset {dataset_id} ({type(err).__name__}: {str(err).splitlines()[0][:200]}). "
            f"{GET_THE_DATA}"
        ) from err


def hub_sts(year: str) -> Loaded:
    rows = _load_dataset(HUB_DATASETS[year], split="test")
    return Loaded(
        STSPair(
            r["sentence1"],
            r["sentence2"],
            parse_score(str(r["score"]), f"{HUB_DATASETS[year]} row {i}", 0.0, 5.0),
            year,
            "hub-all",  # the Hub copies carry no subset names: per-subset means are not available
            f"{HUB_DATASETS[year]}:{i}",
        )
        for i, r in enumerate(rows)
    )


def hub_stsb(split: str) -> Loaded:
    name = {"train": "train", "dev": "validation", "test": "test"}[split]
    rows = _load_dataset(HUB_DATASETS["STSBenchmark"], split=name)
    # sentence-transformers/stsb stores scores divided by 5
    return Loaded(
        STSPair(
            r["sentence1"],
            r["sentence2"],
            5.0 * parse_score(str(r["score"]), f"{HUB_DATASETS['STSBenchmark']} row {i}", 0.0, 1.0),
            "STSBenchmark",
            split,
            f"hub:{i}",
        )
        for i, r in enumerate(rows)
    )


def hub_sick(split: str) -> Loaded:
    name = {"train": "train", "trial": "validation", "test": "test"}[split]
    rows = _load_dataset(HUB_DATASETS["SICK"], split=name)
    labels = ("ENTAILMENT", "NEUTRAL", "CONTRADICTION")
    return Loaded(
        STSPair(
            r["sentence_A"],
            r["sentence_B"],
            parse_score(str(r["relatedness_score"]), f"{HUB_DATASETS['SICK']} row {i}", 1.0, 5.0),
            "SICK",
            split,
            f"hub:{i}",
            entailment=labels[int(r["label"])],
        )
        for i, r in enumerate(rows)
    )


def hub_snli(split: str) -> Loaded:
    name = {"train": "train", "dev": "validation", "test": "test"}[split]
    rows = _load_dataset(HUB_DATASETS["SNLI"], split=name)
    labels = ("entailment", "neutral", "contradiction")  # stanfordnlp/snli: 0/1/2, -1 = no gold label
    pairs, unlabelled = [], 0
    for i, r in enumerate(rows):
        if int(r["label"]) < 0:
            unlabelled += 1
            continue
        pairs.append(NLIPair(r["premise"], r["hypothesis"], labels[int(r["label"])], f"hub:{i}"))
    return Loaded(pairs, {"no gold label": unlabelled} if unlabelled else {})


def hub_wiki(limit: int | None) -> list[str]:
    rows = _load_dataset(HUB_DATASETS["wiki1m"], data_files=WIKI_FILE, split="train")
    sentences = [r["text"].strip() for r in rows if r["text"].strip()]
    return sentences[:limit] if limit is not None else sentences


def hub_csts(split: str) -> Loaded:
    rows = _load_dataset(HUB_DATASETS["CSTS"], split=split)
    records, unlabelled = [], 0
    for i, r in enumerate(rows):
        if float(r["label"]) < 0:
            unlabelled += 1
            continue
        records.append(CSTSRecord(r["sentence1"], r["sentence2"], r["condition"], float(r["label"]), f"hub:{i}"))
    return Loaded(records, {"label -1 (no usable label)": unlabelled} if unlabelled else {})
