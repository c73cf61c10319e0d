"""``stsnb data verify``: check a data folder against the manifest shipped in the package.

The manifest (``stsnb/data/manifest.json``) is generated from the reference folder our committed runs used
(:func:`build_manifest`; ``python -m stsnb.data.manifest DIR`` rewrites it, and a test checks that the shipped
file equals what the reference folder gives). It lists every *table* the notebooks read, each as the package's own
loader reads it (``stsnb.data.load_*``), so a folder that verifies is one the notebooks can use:

- ``records``: how many records the loader returns (unscored STS pairs and C-STS rows labelled -1 are not records);
- ``score_range``: the smallest and largest gold score (or label);
- ``gold_sha256``: SHA-256 of the gold scores, one ``%.4f`` per line in the loader's order;
- ``text_sha256``: SHA-256 of the text, one record per line (sentences stripped, tab-joined, with the subset name,
  SICK's entailment judgment or C-STS's condition);
- ``fingerprints``: three hex digits per record, to name the first record (file and line) that differs;
- ``files``: the files the loader read, and for those whose bytes are fixed (the Wikipedia sample, a prefix of its
  public file) their SHA-256. The C-STS CSVs are checked by their parsed rows (sentence 1, sentence 2, condition,
  label), so line endings or CSV quoting do not matter and a changed label or word does.

A mismatch names the table, the file and line of the first record that differs, and what was expected. Bytes of the
other files may differ between copies (SentEval's STS files exist in several tokenizer versions; the raw copies
are rebuilt by ``stsnb data fetch``), so for them the records, scores and text are what is checked.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import loading as data
from . import records as data_records

MANIFEST_FILE = Path(__file__).with_name("manifest.json")
FETCH_HINT = "run `stsnb data fetch` to build a folder that verifies (docs/data.md)"
# files whose bytes are fixed (a prefix of their public file); every other file is checked through its records
FIXED_BYTES = ("wiki1m_subset/",)


@dataclass(frozen=True)
class Table:
    """One table the notebooks read: a name and the loader call that reads it from a folder."""

    name: str
    load: Callable[[Path], Sequence[Any]]
    files: Callable[[Path], list[Path]]


def _sts_files(text: str, year: str) -> Callable[[Path], list[Path]]:
    def files(root: Path) -> list[Path]:
        folder = data._sts_root(root, text) / f"{year}-en-test"  # type: ignore[arg-type]
        return [folder / f"STS.{kind}.{s}.txt" for s in data_records.STS_SUBSETS[year] for kind in ("input", "gs")]

    return files


def _one(*parts: str) -> Callable[[Path], list[Path]]:
    return lambda root: [root.joinpath(*parts)]


def tables() -> list[Table]:
    """Every table of the default data folder, in a fixed order."""
    result: list[Table] = []
    for text, prefix in (("senteval", "senteval"), ("raw", "raw")):
        for year in data_records.STS_YEARS:
            result.append(
                Table(
                    f"{prefix}/{year}",
                    lambda root, y=year, t=text: data.load_sts_year(y, t, root, hub=False),
                    _sts_files(text, year),
                )
            )
        stsb = ("senteval", "STS", "STSBenchmark") if text == "senteval" else ("stsbenchmark_raw",)
        for split in data_records.STSB_SPLITS:
            result.append(
                Table(
                    f"{prefix}/STSBenchmark/{split}",
                    lambda root, s=split, t=text: data.load_stsb(s, t, root, hub=False),
                    _one(*stsb, f"sts-{split}.csv"),
                )
            )
        sick = ("senteval", "SICK") if text == "senteval" else ("sick_raw",)
        for split in data_records.SICK_SPLITS:
            result.append(
                Table(
                    f"{prefix}/SICK/{split}",
                    lambda root, s=split, t=text: data.load_sick(s, t, root, hub=False),
                    _one(*sick, data.SICK_FILES[split]),
                )
            )
    for split in data_records.SNLI_SPLITS:
        result.append(
            Table(
                f"senteval/SNLI/{split}",
                lambda root, s=split: data.load_snli(s, root, hub=False),
                lambda root, s=split: [root / "senteval" / "SNLI" / f"{n}.{s}" for n in ("s1", "s2", "labels")],
            )
        )
    result.append(
        Table(
            "wiki1m_subset",
            lambda root: data.load_wiki(None, root, hub=False),
            _one("wiki1m_subset", data.WIKI_FILE),
        )
    )
    for split in data_records.CSTS_SPLITS:
        result.append(
            Table(
                f"csts/{split}",
                lambda root, s=split: data.load_csts(s, root, hub=False),
                _one("csts_reannotated", f"csts_{split}_reannotated.csv"),
            )
        )
    return result


# ----------------------------------------------------------------------------------------------------------
# what a record contributes to the checksums


def record_gold(record: Any) -> float | None:
    if isinstance(record, data_records.STSPair):
        return record.score
    if isinstance(record, data_records.CSTSRecord):
        return record.label
    if isinstance(record, data_records.NLIPair):
        return float(record.label_id)
    return None


def record_text(record: Any) -> str:
    if isinstance(record, data_records.STSPair):
        parts = [record.subset, record.sent1.strip(), record.sent2.strip(), record.entailment or ""]
    elif isinstance(record, data_records.CSTSRecord):
        parts = [record.sent1.strip(), record.sent2.strip(), record.condition.strip()]
    elif isinstance(record, data_records.NLIPair):
        parts = [record.premise.strip(), record.hypothesis.strip(), record.label]
    else:
        parts = [str(record).strip()]
    return "\t".join(parts)


FINGERPRINT_WIDTH = 3  # hex digits per record: enough to find the first record that differs (1 in 4,096 collide)


def fingerprint(record: Any) -> str:
    """A short hash of one record's text and gold score, to locate the first record that differs."""
    gold = record_gold(record)
    line = record_text(record) + ("" if gold is None else f"\t{gold:.4f}")
    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:FINGERPRINT_WIDTH]


def _digest(lines: Sequence[str]) -> str:
    sha = hashlib.sha256()
    for line in lines:
        sha.update(line.encode("utf-8"))
        sha.update(b"\n")
    return sha.hexdigest()


def file_sha256(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def describe_table(table: Table, root: Path) -> dict[str, Any]:
    """The manifest entry of one table as read from ``root`` (raises ``DataError`` if the loader does)."""
    records = table.load(root)
    golds = [g for g in (record_gold(r) for r in records) if g is not None]
    entry: dict[str, Any] = {
        "records": len(records),
        "text_sha256": _digest([record_text(r) for r in records]),
        "fingerprints": "".join(fingerprint(r) for r in records),
        "files": {},
    }
    if golds:
        entry["score_range"] = [min(golds), max(golds)]
        entry["gold_sha256"] = _digest([f"{g:.4f}" for g in golds])
    for path in table.files(root):
        relative = path.relative_to(root).as_posix()
        entry["files"][relative] = file_sha256(path) if relative.startswith(FIXED_BYTES) else None
    return entry


def build_manifest(root: Path) -> dict[str, Any]:
    """The manifest of a reference folder: every table of :func:`tables`."""
    return {
        "about": "stsnb data manifest: the tables the notebooks read, generated by `python -m stsnb.data.manifest DIR`",
        "tables": {table.name: describe_table(table, root) for table in tables()},
    }


def load_manifest(path: Path = MANIFEST_FILE) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------------------------------------
# verification


@dataclass
class Verification:
    """The outcome of :func:`verify`: one line per problem (empty: the folder verifies)."""

    root: Path
    checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def text(self) -> str:
        if self.ok:
            return f"{self.root}: verified, {self.checked} tables match the manifest"
        head = f"{self.root}: {len(self.problems)} of {self.checked} tables do not match the manifest"
        return "\n".join([head, *(f"  - {p}" for p in self.problems), f"  To fix: {FETCH_HINT}."])


def _record_location(records: Sequence[Any], index: int) -> str:
    record = records[index] if index < len(records) else None
    source = getattr(record, "source", "") if record is not None else ""
    return source or f"record {index + 1}"


def _first_mismatch(records: Sequence[Any], fingerprints: str) -> int:
    """Index of the first record whose fingerprint differs from the reference's (``len(records)`` if none does)."""
    width = FINGERPRINT_WIDTH
    for index, record in enumerate(records):
        if fingerprint(record) != fingerprints[index * width : (index + 1) * width]:
            return index
    return len(records)


def verify_table(table: Table, expected: dict[str, Any], root: Path) -> str | None:
    """The problem with one table, or None. Names the file and line, and what was expected."""
    missing = [name for name in expected["files"] if not (root / name).is_file()]
    if missing:
        return f"{table.name}: missing {', '.join(missing)}"
    try:
        records = table.load(root)
    except data_records.DataError as err:
        return f"{table.name}: {err}"
    first = _first_mismatch(records, expected["fingerprints"])
    if len(records) != expected["records"]:
        where = _record_location(records, min(first, len(records) - 1)) if records else "no record read"
        return (
            f"{table.name}: {len(records)} records, expected {expected['records']}; the first that differs from the "
            f"reference copy: {where} (a truncated or edited file)"
        )
    golds = [g for g in (record_gold(r) for r in records) if g is not None]
    if "gold_sha256" in expected:
        low, high = expected["score_range"]
        outside = next((i for i, g in enumerate(golds) if not low <= g <= high), None)
        if outside is not None:
            where = _record_location(records, outside)
            return f"{table.name}: {where}: score {golds[outside]} outside the expected range [{low}, {high}]"
        if _digest([f"{g:.4f}" for g in golds]) != expected["gold_sha256"]:
            where = _record_location(records, first)
            return f"{table.name}: {where}: gold score {golds[first]} differs from the reference copy's"
    if _digest([record_text(r) for r in records]) != expected["text_sha256"]:
        where = _record_location(records, first)
        return f"{table.name}: {where}: text differs from the reference copy's (a different tokenizer or an edit)"
    for name, sha in expected["files"].items():
        if sha is not None and file_sha256(root / name) != sha:
            return f"{table.name}: {name}: bytes differ from the public release (SHA-256 {sha[:12]}... expected)"
    return None


def verify(root: Path | str, manifest: dict[str, Any] | None = None) -> Verification:
    """Check every table of the manifest in ``root``."""
    root = Path(root).expanduser().resolve()
    manifest = manifest if manifest is not None else load_manifest()
    result = Verification(root)
    if not root.is_dir():
        result.problems.append(f"no folder at {root}")
        return result
    by_name = {t.name: t for t in tables()}
    for name, expected in manifest["tables"].items():
        result.checked += 1
        problem = verify_table(by_name[name], expected, root)
        if problem:
            result.problems.append(problem)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m stsnb.data.manifest DIR``: rewrite the shipped manifest from the reference folder DIR."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m stsnb.data.manifest REFERENCE_DATA_DIR", file=sys.stderr)
        return 2
    manifest = build_manifest(Path(args[0]).resolve())
    MANIFEST_FILE.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{MANIFEST_FILE.name}: {len(manifest['tables'])} tables")
    return 0


if __name__ == "__main__":
    sys.exit(main())
