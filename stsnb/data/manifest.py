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
- ``unspaced_sha256`` and ``unspaced_fingerprints``: the same over the text with its spacing removed (each field's
  whitespace dropped), which tells a tokenizer's variant from another text;
- ``files``: the files the loader read, and for those whose bytes are fixed (the Wikipedia sample, a prefix of its
  public file) their SHA-256. The C-STS CSVs are checked by their parsed rows (sentence 1, sentence 2, condition,
  label), so line endings or CSV quoting do not matter and a changed label or word does.

Verification has three degrees, per file and line:

- *changes results*: a missing or extra record, a changed gold score or label: a failure naming the table, the file and
  line of the first record that differs, and what was expected;
- *same text, other spacing*: a sentence whose letters, digits and punctuation equal the reference's but which is
  spaced (tokenized) otherwise, as two public copies of SentEval's tree split possessives ("'s" vs "' s"): accepted and
  reported (:class:`SpacingVariants`: lines per file and the first three), since levels can move in the second decimal;
  ``strict=True`` makes it a failure;
- *other text*: anything else: a failure naming the first line.

Bytes of the other files may differ between copies (SentEval's STS files exist in several tokenizer versions; the raw
copies are rebuilt by ``stsnb data fetch``), so for them the records, scores and text are what is checked.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import loading as data
from . import records as data_records
from . import spacing
from .spacing import SpacingVariants

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


def unspaced_text(record: Any) -> str:
    """:func:`record_text` without its spacing: each field's whitespace removed (the fields stay apart)."""
    return "\t".join(re.sub(r"\s+", "", part) for part in record_text(record).split("\t"))


def unspaced_fingerprint(record: Any) -> str:
    """:func:`fingerprint` of the text without its spacing: equal for two tokenizations of the same sentence."""
    gold = record_gold(record)
    line = unspaced_text(record) + ("" if gold is None else f"\t{gold:.4f}")
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
        "unspaced_sha256": _digest([unspaced_text(r) for r in records]),
        "unspaced_fingerprints": "".join(unspaced_fingerprint(r) for r in records),
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
    """The outcome of :func:`verify`: one line per problem (empty: the folder verifies) and the lines spaced otherwise
    than the reference (accepted unless ``strict``)."""

    root: Path
    checked: int = 0
    problems: list[str] = field(default_factory=list)
    variants: list[SpacingVariants] = field(default_factory=list)
    strict: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems

    def text(self) -> str:
        report = spacing.report_text(self.variants)
        if self.ok:
            head = f"{self.root}: verified, {self.checked} tables match the manifest"
            return f"{head}\n{report}" if report else head
        head = f"{self.root}: {len(self.problems)} of {self.checked} tables do not match the manifest"
        fix = (
            "  To fix: drop --strict to accept text that differs only in its spacing, or "
            if self.strict and self.variants
            else "  To fix: "
        )
        return "\n".join(
            [head, *(f"  - {p}" for p in self.problems), *([report] if report else []), f"{fix}{FETCH_HINT}."]
        )


def _record_location(records: Sequence[Any], index: int) -> str:
    record = records[index] if index < len(records) else None
    source = getattr(record, "source", "") if record is not None else ""
    return source or f"record {index + 1}"


def _mismatches(records: Sequence[Any], fingerprints: str, of: Callable[[Any], str] = fingerprint) -> list[int]:
    """Indices of the records whose fingerprint (``of``) differs from the reference's."""
    width = FINGERPRINT_WIDTH
    return [i for i, r in enumerate(records) if of(r) != fingerprints[i * width : (i + 1) * width]]


@dataclass
class TableCheck:
    """What :func:`verify_table` found: a problem (None: none), and the indices of records spaced otherwise."""

    problem: str | None = None
    respaced: list[int] = field(default_factory=list)
    records: Sequence[Any] = ()


def verify_table(table: Table, expected: dict[str, Any], root: Path) -> TableCheck:
    """Check one table in three degrees: records and gold scores, then text with and without its spacing. A problem
    names the file and line, and what was expected."""
    missing = [name for name in expected["files"] if not (root / name).is_file()]
    if missing:
        return TableCheck(f"{table.name}: missing {', '.join(missing)}")
    try:
        records = table.load(root)
    except data_records.DataError as err:
        return TableCheck(f"{table.name}: {err}")
    differing = _mismatches(records, expected["fingerprints"])
    first = differing[0] if differing else len(records)
    if len(records) != expected["records"]:
        where = _record_location(records, min(first, len(records) - 1)) if records else "no record read"
        return TableCheck(
            f"{table.name}: {len(records)} records, expected {expected['records']}; the first that differs from the "
            f"reference copy: {where} (a truncated or edited file)"
        )
    golds = [g for g in (record_gold(r) for r in records) if g is not None]
    if "gold_sha256" in expected:
        low, high = expected["score_range"]
        outside = next((i for i, g in enumerate(golds) if not low <= g <= high), None)
        if outside is not None:
            where = _record_location(records, outside)
            return TableCheck(
                f"{table.name}: {where}: score {golds[outside]} outside the expected range [{low}, {high}]"
            )
        if _digest([f"{g:.4f}" for g in golds]) != expected["gold_sha256"]:
            where = _record_location(records, first)
            return TableCheck(f"{table.name}: {where}: gold score {golds[first]} differs from the reference copy's")
    check = TableCheck(records=records)
    if _digest([record_text(r) for r in records]) != expected["text_sha256"]:
        other = _mismatches(records, expected["unspaced_fingerprints"], unspaced_fingerprint)
        if other or _digest([unspaced_text(r) for r in records]) != expected["unspaced_sha256"]:
            where = _record_location(records, other[0] if other else first)
            return TableCheck(f"{table.name}: {where}: text differs from the reference copy's (not only its spacing)")
        check.respaced = differing
    for name, sha in expected["files"].items():
        if sha is not None and file_sha256(root / name) != sha:
            check.problem = (
                f"{table.name}: {name}: bytes differ from the public release (SHA-256 {sha[:12]}... expected)"
            )
    return check


def _other_copy(name: str, by_name: dict[str, Table]) -> Table | None:
    """The same pairs in the folder's other text version (``senteval/X`` <-> ``raw/X``), if the folder has one."""
    prefix, _, rest = name.partition("/")
    twin = {"senteval": "raw", "raw": "senteval"}.get(prefix)
    return by_name.get(f"{twin}/{rest}") if twin else None


def _spacing_report(table: Table, check: TableCheck, by_name: dict[str, Table], root: Path) -> SpacingVariants:
    report = SpacingVariants(table.name)
    twin = _other_copy(table.name, by_name)
    try:
        others = twin.load(root) if twin else []
    except data_records.DataError:
        others = []
    for index in check.respaced:
        other = record_text(others[index]) if len(others) == len(check.records) else ""
        report.add(_record_location(check.records, index), record_text(check.records[index]), other)
    return report


def verify(root: Path | str, manifest: dict[str, Any] | None = None, *, strict: bool = False) -> Verification:
    """Check every table of the manifest in ``root``. Lines spaced otherwise than the reference are reported in
    ``variants``; ``strict``: each such table is a problem too."""
    root = Path(root).expanduser().resolve()
    manifest = manifest if manifest is not None else load_manifest()
    result = Verification(root, strict=strict)
    if not root.is_dir():
        result.problems.append(f"no folder at {root}")
        return result
    by_name = {t.name: t for t in tables()}
    for name, expected in manifest["tables"].items():
        result.checked += 1
        check = verify_table(by_name[name], expected, root)
        if check.problem:
            result.problems.append(check.problem)
        if check.respaced:
            report = _spacing_report(by_name[name], check, by_name, root)
            result.variants.append(report)
            if strict:
                result.problems.append(f"{report.text()} (--strict)")
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
