"""The Hub repos ``stsnb data fetch`` reads, built from a data folder in the shapes the real repos have (SimCSE's
``senteval.tar`` and text files, parquet for ``stanfordnlp/snli`` and ``nyu-mll/multi_nli``, MTEB's gzipped JSON
lines, the C-STS CSVs), so the fetch runs its real conversions on real data."""

from __future__ import annotations

import csv
import io
import random
import tarfile
from pathlib import Path

from hub_server import Repo, gzip_jsonl, parquet

from stsnb import data
from stsnb.data import revisions

SNLI_IDS = {"entailment": 0, "neutral": 1, "contradiction": 2}  # stanfordnlp/snli's label ids


def _tar(root: Path, folders: list[str], prefix: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for folder in folders:
            for path in sorted((root / folder).rglob("*")):
                if path.is_file():
                    archive.add(path, arcname=prefix + path.relative_to(root).as_posix(), recursive=False)
    return buffer.getvalue()


def _snli_parquet(pairs: list[data.NLIPair], gold_less: int, seed: int) -> bytes:
    """SNLI rows with label ids, and ``gold_less`` rows labelled -1 (no gold label) spread among them."""
    rows = [(p.premise, p.hypothesis, SNLI_IDS[p.label]) for p in pairs]
    rng = random.Random(seed)
    for _ in range(gold_less):
        rows.insert(rng.randrange(len(rows) + 1), ("A man without a gold label .", "Nobody agreed .", -1))
    return parquet({"premise": [r[0] for r in rows], "hypothesis": [r[1] for r in rows], "label": [r[2] for r in rows]})


def _blocks_reordered(rows: list[dict], key: str, seed: int) -> list[dict]:
    """The rows with their blocks (subsets, splits) in another order, each block's rows in theirs: the fetch aligns
    by content, not position (equal pairs of one block keep their order, as in the original files)."""
    blocks: dict[str, list[dict]] = {}
    for row in rows:
        blocks.setdefault(row.pop(key), []).append(row)
    names = sorted(blocks)
    random.Random(seed).shuffle(names)
    return [row for name in names for row in blocks[name]]


def build_repos(root: Path, *, tar_prefix: str = "SentEval/data/downstream/", nli_rows: int = 400) -> dict[str, Repo]:
    """Every repo of ``stsnb.data.fetch.PARTS`` (the ``--paper`` ones included), from the data folder ``root``."""
    snli_dev = list(data.load_snli("dev", root, hub=False))
    snli_test = list(data.load_snli("test", root, hub=False))
    wiki = (root / "wiki1m_subset" / data.WIKI_FILE).read_bytes()
    wiki_whole = wiki + b"".join(f"A later sentence of the corpus, number {i}.\n".encode() for i in range(200))
    triplets = data.nli_triplets(snli_dev)[:nli_rows]
    nli_csv = io.StringIO()
    writer = csv.writer(nli_csv)
    writer.writerow(["sent0", "sent1", "hard_neg"])
    writer.writerows([t.anchor, t.positive, t.negative] for t in triplets)
    repos = {
        "princeton-nlp/datasets-for-simcse": Repo(
            {
                "senteval.tar": _tar(root / "senteval", ["STS", "SICK"], tar_prefix),
                data.WIKI_FILE: wiki_whole,
                "nli_for_simcse.csv": nli_csv.getvalue().encode(),
                "README.md": b"datasets for SimCSE\n",
            }
        ),
        "stanfordnlp/snli": Repo(
            {
                "plain_text/validation-00000-of-00001.parquet": _snli_parquet(snli_dev, 158, 1),
                "plain_text/test-00000-of-00001.parquet": _snli_parquet(snli_test, 176, 2),
                "plain_text/train-00000-of-00001.parquet": _snli_parquet(snli_dev[:nli_rows], 3, 3),
                "README.md": b"SNLI\n",
            }
        ),
        "nyu-mll/multi_nli": Repo(  # a split in two shards, as large splits are stored
            {
                "data/train-00000-of-00002.parquet": _snli_parquet(snli_test[: nli_rows // 2], 1, 4),
                "data/train-00001-of-00002.parquet": _snli_parquet(snli_test[nli_rows // 2 : nli_rows], 1, 5),
                "data/validation_matched-00000-of-00001.parquet": _snli_parquet(snli_test[-10:], 0, 6),
            }
        ),
        "LivNLP/C-STS-Reannotated": Repo(
            {
                f"csts_{split}_reannotated.csv": (
                    root / "csts_reannotated" / f"csts_{split}_reannotated.csv"
                ).read_bytes()
                for split in data.CSTS_SPLITS
            }
        ),
    }
    for number, year in enumerate(data.STS_YEARS):
        rows = [
            {"block": p.subset, "sentence1": p.sent1, "sentence2": p.sent2, "score": p.score}
            for p in data.load_sts_year(year, "raw", root, hub=False)
        ]
        repos[f"mteb/{year.lower()}-sts"] = Repo(
            {"test.jsonl.gz": gzip_jsonl(_blocks_reordered(rows, "block", number))}
        )
    stsb = {}
    for split, name in (("train", "train"), ("dev", "validation"), ("test", "test")):
        rows = [
            {"split": name, "sentence1": p.sent1, "sentence2": p.sent2, "score": p.score}
            for p in data.load_stsb(split, "raw", root, hub=False)
        ]
        stsb[f"{name}.jsonl.gz"] = gzip_jsonl(rows)
    repos["mteb/stsbenchmark-sts"] = Repo(stsb)
    sick = [
        {"block": split, "sentence1": p.sent1, "sentence2": p.sent2, "score": p.score}
        for split in data.SICK_SPLITS
        for p in data.load_sick(split, "raw", root, hub=False)
    ]
    repos["mteb/sickr-sts"] = Repo({"test.jsonl.gz": gzip_jsonl(_blocks_reordered(sick, "block", 11))})
    for repo_id, repo in repos.items():  # what the Hub holds at the commit stsnb pins is what main holds here
        if revisions.is_commit(commit := revisions.pinned(repo_id)):
            repo.history[commit] = repo.files
    return repos
