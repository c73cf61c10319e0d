"""``stsnb data fetch``: build the data folder from public Hugging Face Hub copies, then verify it.

Every file comes through ``huggingface_hub`` (``hf_hub_download``: its cache, resumable downloads, progress bars,
``HF_TOKEN`` and ``HF_ENDPOINT``); nothing here speaks HTTP itself. Each repo is read at the commit
:mod:`stsnb.data.revisions` pins (``--latest``: at ``main``), and SOURCES.md records every file's commit. The parts,
their sources and conversions:

- ``senteval/STS``, ``senteval/SICK``: ``princeton-nlp/datasets-for-simcse``'s ``senteval.tar`` (SimCSE's SentEval
  data), extracted unchanged;
- ``senteval/SNLI`` (dev, test): ``stanfordnlp/snli`` (parquet) with SentEval's conversion: pairs without a gold
  label dropped, sentences through the PTB tokenizer (:mod:`stsnb.data.senteval_text`);
- ``sts_raw``, ``stsbenchmark_raw``, ``sick_raw``: the original text of ``mteb/sts1{2..6}-sts``,
  ``mteb/stsbenchmark-sts`` and ``mteb/sickr-sts``, aligned onto SentEval's rows;
- ``wiki1m_subset``: the first 11,914 lines of ``princeton-nlp/datasets-for-simcse``'s ``wiki1m_for_simcse.txt``;
- ``csts_reannotated``: ``LivNLP/C-STS-Reannotated``'s two CSVs, verbatim.

``--paper`` adds ``paper/``: wiki1m whole, SimCSE's ``nli_for_simcse.csv``, SNLI and MultiNLI train.

The folder is built aside (``.<name>.partial-<pid>`` beside it), verified against the manifest
(:mod:`stsnb.data.manifest`), and only then renamed into place; a folder already there is moved aside, never
deleted. A folder that already verifies is left alone without touching the network. A download whose SHA-256
differs from the one the Hub announces (its ETag, for files stored with LFS) is removed from the cache and stops
the fetch.
"""

from __future__ import annotations

import csv
import functools
import gzip
import json
import os
import re
import shutil
import tarfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import loading as data
from . import manifest as data_manifest
from . import records as data_records
from . import senteval_text, spacing
from .hub import FetchError, Files, Hub, HubFile, Resolved
from .revisions import LATEST, is_commit

WIKI_SAMPLE_LINES = 11_914  # the data folder's wiki sample: a contiguous prefix of wiki1m_for_simcse.txt
SIMCSE_REPO = "princeton-nlp/datasets-for-simcse"


@dataclass(frozen=True)
class Part:
    """One part of the data folder: the Hub files it needs and how it is built from them."""

    name: str
    files: tuple[HubFile, ...]
    build: Callable[[Files, Path], str]  # returns how it was built, for SOURCES.md
    paper: bool = False


# ----------------------------------------------------------------------------------------------------------
# building each part from its downloaded files


def _extract_senteval(files: Files, out: Path) -> str:
    """SentEval's STS12-16, STS Benchmark and SICK from SimCSE's ``senteval.tar``, wherever the tar roots them."""
    tar_path = _local(files, "senteval.tar")
    wanted = re.compile(r"(^|.*/)(STS/STS1[2-6]-en-test/[^/]+|STS/STSBenchmark/[^/]+|SICK/[^/]+)$")
    extracted = 0
    with tarfile.open(tar_path) as archive:
        for member in archive:
            match = wanted.match(member.name)
            if not member.isfile() or match is None:
                continue
            target = out / "senteval" / match.group(2)
            target.parent.mkdir(parents=True, exist_ok=True)
            source = archive.extractfile(member)
            assert source is not None
            with source, target.open("wb") as handle:
                shutil.copyfileobj(source, handle)
            extracted += 1
    if not extracted:
        raise FetchError(f"{tar_path.name}: no STS/ or SICK/ folder inside; expected SentEval's downstream data")
    return f"extracted {extracted} files of STS/STS1{{2..6}}-en-test, STS/STSBenchmark and SICK/ unchanged"


def _parquet_rows(path: Path, columns: Sequence[str]) -> list[tuple]:
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=list(columns))
    return list(zip(*(table.column(c).to_pylist() for c in columns), strict=True))


def _build_snli(files: Files, out: Path) -> str:
    folder = out / "senteval" / "SNLI"
    folder.mkdir(parents=True, exist_ok=True)
    counts = []
    for split, key in (("dev", "snli-validation"), ("test", "snli-test")):
        rows = list(senteval_text.snli_rows(_parquet_rows(_local(files, key), ("premise", "hypothesis", "label"))))
        for index, name in enumerate(("s1", "s2", "labels")):
            (folder / f"{name}.{split}").write_text("".join(f"{row[index]}\n" for row in rows), encoding="utf-8")
        counts.append(f"{split} {len(rows)}")
    return (
        "SentEval's conversion of the original: pairs without a gold label dropped, sentences through the PTB "
        f"tokenizer (stsnb.data.senteval_text, the rules of SentEval's tokenizer.sed); {', '.join(counts)} pairs"
    )


def _normalised(sentence: str) -> str:
    """What survives every tokenizer and casing of a sentence: its letters and digits, lower-cased."""
    return re.sub(r"[^0-9a-z]", "", sentence.lower())


def _jsonl_rows(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
        return [json.loads(line) for line in handle if line.strip()]


class RawText:
    """Original sentences of one source, looked up by the normalised pair and its score (each row used once)."""

    def __init__(self, rows: Iterable[dict[str, Any]], where: str):
        self.where = where
        self._rows: dict[tuple[str, str, str], list[tuple[str, str]]] = defaultdict(list)
        for row in rows:
            key = (_normalised(row["sentence1"]), _normalised(row["sentence2"]), f"{float(row['score']):.2f}")
            self._rows[key].append((row["sentence1"].strip(), row["sentence2"].strip()))

    def take(
        self, sent1: str, sent2: str, score: float, location: str, is_reference: Callable[[tuple[str, str]], bool]
    ) -> tuple[str, str]:
        """The original pair of this SentEval row. Among equal candidates (the same letters, digits and score), the one
        the reference copy has at this row (its fingerprint in the manifest), so another upstream row order gives the
        same folder; else the first whose punctuation matches too; else the first in the source's order."""
        key = (_normalised(sent1), _normalised(sent2), f"{score:.2f}")
        candidates = self._rows.get(key)
        if not candidates:
            raise FetchError(
                f"{location}: no pair of {self.where} has this pair's text and score {score}; the raw copy cannot be "
                "aligned onto SentEval's rows (a changed upstream file?). The SentEval text is in senteval/."
            )
        best = next((i for i, c in enumerate(candidates) if is_reference(c)), None) if len(candidates) > 1 else 0
        if best is None:
            wanted = (_unspaced(sent1), _unspaced(sent2))
            best = next((i for i, c in enumerate(candidates) if (_unspaced(c[0]), _unspaced(c[1])) == wanted), 0)
        return candidates.pop(best)


@functools.cache
def _reference_fingerprints(table: str) -> str:
    return data_manifest.load_manifest()["tables"][table]["fingerprints"]


def _is_reference(
    table: str, index: int, record: Callable[[tuple[str, str]], Any]
) -> Callable[[tuple[str, str]], bool]:
    """Whether a candidate pair, as the loader's record, is the reference copy's record ``index`` of ``table``."""
    width = data_manifest.FINGERPRINT_WIDTH
    wanted = _reference_fingerprints(table)[index * width : (index + 1) * width]
    return lambda pair: data_manifest.fingerprint(record(pair)) == wanted


def _raw_pair(pair: tuple[str, str], **fields: Any) -> data_records.STSPair:
    return data_records.STSPair(pair[0], pair[1], **fields)


def _unspaced(sentence: str) -> str:
    return re.sub(r"\s+", "", sentence.lower())


def _build_sts_raw(files: Files, out: Path) -> str:
    counts = []
    for year in data_records.STS_YEARS:
        raw = RawText(_jsonl_rows(_local(files, f"{year}-raw")), f"mteb/{year.lower()}-sts")
        source = out / "senteval" / "STS" / f"{year}-en-test"
        target = out / "sts_raw" / f"{year}-en-test"
        target.mkdir(parents=True, exist_ok=True)
        scored = 0
        for subset in data_records.STS_SUBSETS[year]:
            inputs = (source / f"STS.input.{subset}.txt").read_text(encoding="utf-8").splitlines()
            golds = (source / f"STS.gs.{subset}.txt").read_text(encoding="utf-8").splitlines()
            lines, gold_lines = [], []
            for number, (line, gold) in enumerate(zip(inputs, golds, strict=True), start=1):
                if not gold.strip():  # unscored: no raw copy has it, and the loaders drop it
                    continue
                sent1, sent2 = line.split("\t")
                location = f"senteval/STS/{year}-en-test/STS.input.{subset}.txt:{number}"
                record = functools.partial(_raw_pair, score=float(gold), dataset=year, subset=subset)
                is_reference = _is_reference(f"raw/{year}", scored + len(lines), record)
                lines.append("\t".join(raw.take(sent1, sent2, float(gold), location, is_reference)))
                gold_lines.append(gold)
            (target / f"STS.input.{subset}.txt").write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
            (target / f"STS.gs.{subset}.txt").write_text("".join(f"{x}\n" for x in gold_lines), encoding="utf-8")
            scored += len(lines)
        counts.append(f"{year} {scored}")
    return (
        "original (cased, untokenised) sentences aligned onto SentEval's scored rows by their letters, digits and "
        f"score; unscored STS15/16 rows left out (no raw copy has them); {', '.join(counts)} pairs"
    )


def _build_stsb_raw(files: Files, out: Path) -> str:
    target = out / "stsbenchmark_raw"
    target.mkdir(parents=True, exist_ok=True)
    counts = []
    for split, key in (("train", "stsb-train"), ("dev", "stsb-validation"), ("test", "stsb-test")):
        raw = RawText(_jsonl_rows(_local(files, key)), f"mteb/stsbenchmark-sts {key}")
        lines = []
        source = out / "senteval" / "STS" / "STSBenchmark" / f"sts-{split}.csv"
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), start=1):
            columns = line.split("\t")
            record = functools.partial(_raw_pair, score=float(columns[4]), dataset="STSBenchmark", subset=split)
            is_reference = _is_reference(f"raw/STSBenchmark/{split}", len(lines), record)
            sent1, sent2 = raw.take(columns[5], columns[6], float(columns[4]), f"{source.name}:{number}", is_reference)
            lines.append("\t".join([*columns[:5], sent1, sent2]))
        (target / f"sts-{split}.csv").write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
        counts.append(f"{split} {len(lines)}")
    return (
        f"original sentences aligned onto SentEval's STS-B rows (genre, file, year, id, score kept); "
        f"{', '.join(counts)} pairs"
    )


def _build_sick_raw(files: Files, out: Path) -> str:
    raw = RawText(_jsonl_rows(_local(files, "sickr")), "mteb/sickr-sts")
    target = out / "sick_raw"
    target.mkdir(parents=True, exist_ok=True)
    counts = []
    for split, name in data.SICK_FILES.items():
        source = out / "senteval" / "SICK" / name
        lines = source.read_text(encoding="utf-8").splitlines()
        rows = [lines[0]]
        for number, line in enumerate(lines[1:], start=2):
            columns = line.split("\t")
            record = functools.partial(
                _raw_pair, score=float(columns[3]), dataset="SICK", subset=split, entailment=columns[4]
            )
            is_reference = _is_reference(f"raw/SICK/{split}", len(rows) - 1, record)
            sent1, sent2 = raw.take(columns[1], columns[2], float(columns[3]), f"{source.name}:{number}", is_reference)
            rows.append("\t".join([columns[0], sent1, sent2, *columns[3:]]))
        (target / name).write_text("".join(f"{x}\n" for x in rows), encoding="utf-8")
        counts.append(f"{split} {len(rows) - 1}")
    return (
        f"original sentences aligned onto SentEval's SICK rows (pair id, score, judgment kept); "
        f"{', '.join(counts)} pairs"
    )


def _build_wiki_sample(files: Files, out: Path) -> str:
    target = out / "wiki1m_subset" / data.WIKI_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    with _local(files, "wiki1m").open("rb") as source, target.open("wb") as handle:
        for _ in range(WIKI_SAMPLE_LINES):
            line = source.readline()
            if not line:
                break
            handle.write(line)
    return f"its first {WIKI_SAMPLE_LINES:,} lines, unchanged (a contiguous prefix, not a random sample)"


def _copy_verbatim(*pairs: tuple[str, str]) -> Callable[[Files, Path], str]:
    def build(files: Files, out: Path) -> str:
        for key, relative in pairs:
            target = out / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(_local(files, key), target)
        return "copied unchanged"

    return build


def _nli_csv(files: Files, out: Path) -> str:
    """SNLI and MultiNLI train as ``gold_label,sentence1,sentence2`` CSVs (label names), gold-less pairs dropped."""
    counts = []
    for key, name in (("snli-train", "snli_train.csv"), ("multinli-train", "multinli_train.csv")):
        rows = [row for path in _locals(files, key) for row in _parquet_rows(path, ("premise", "hypothesis", "label"))]
        target = out / "paper" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        kept = 0
        with target.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["gold_label", "sentence1", "sentence2"])
            for premise, hypothesis, label in rows:
                if int(label) >= 0:
                    writer.writerow([senteval_text.SNLI_LABELS[int(label)], premise, hypothesis])
                    kept += 1
        counts.append(f"{name} {kept:,} pairs")
    return f"pairs with a gold label, original text, label names; {', '.join(counts)}"


def _mteb(key: str, repo: str, filename: str = "test.jsonl.gz") -> HubFile:
    return HubFile(key, f"mteb/{repo}", filename)


PARTS: tuple[Part, ...] = (
    Part("senteval", (HubFile("senteval.tar", SIMCSE_REPO, "senteval.tar"),), _extract_senteval),
    Part(
        "senteval/SNLI",
        (
            HubFile("snli-validation", "stanfordnlp/snli", "plain_text/*validation*.parquet"),
            HubFile("snli-test", "stanfordnlp/snli", "plain_text/*test*.parquet"),
        ),
        _build_snli,
    ),
    Part("sts_raw", tuple(_mteb(f"{y}-raw", f"{y.lower()}-sts") for y in data_records.STS_YEARS), _build_sts_raw),
    Part(
        "stsbenchmark_raw",
        tuple(_mteb(f"stsb-{s}", "stsbenchmark-sts", f"{s}.jsonl.gz") for s in ("train", "validation", "test")),
        _build_stsb_raw,
    ),
    Part("sick_raw", (_mteb("sickr", "sickr-sts"),), _build_sick_raw),
    Part("wiki1m_subset", (HubFile("wiki1m", SIMCSE_REPO, data.WIKI_FILE),), _build_wiki_sample),
    Part(
        "csts_reannotated",
        tuple(
            HubFile(f"csts-{s}", "LivNLP/C-STS-Reannotated", f"csts_{s}_reannotated.csv")
            for s in data_records.CSTS_SPLITS
        ),
        _copy_verbatim(
            *((f"csts-{s}", f"csts_reannotated/csts_{s}_reannotated.csv") for s in data_records.CSTS_SPLITS)
        ),
    ),
    Part(
        "paper/wiki1m, paper/nli_for_simcse.csv",
        (HubFile("wiki1m", SIMCSE_REPO, data.WIKI_FILE), HubFile("nli_for_simcse", SIMCSE_REPO, "nli_for_simcse.csv")),
        _copy_verbatim(("wiki1m", f"paper/{data.WIKI_FILE}"), ("nli_for_simcse", "paper/nli_for_simcse.csv")),
        paper=True,
    ),
    Part(
        "paper/snli_train.csv, paper/multinli_train.csv",
        (
            HubFile("snli-train", "stanfordnlp/snli", "plain_text/*train*.parquet", shards=True),
            HubFile("multinli-train", "nyu-mll/multi_nli", "*train*.parquet", shards=True),
        ),
        _nli_csv,
        paper=True,
    ),
)

PAPER_FILES = tuple(
    f"paper/{name}" for name in (data.WIKI_FILE, "nli_for_simcse.csv", "snli_train.csv", "multinli_train.csv")
)


def _locals(files: Files, key: str) -> list[Path]:
    """The downloaded paths of a file key (a split's shards in name order)."""
    paths = [item.local for item in files[key]]
    if any(path is None for path in paths):
        raise FetchError(f"{files[key][0].wanted.name} was not downloaded")
    return paths  # type: ignore[return-value]


def _local(files: Files, key: str) -> Path:
    (path,) = _locals(files, key)
    return path


# ----------------------------------------------------------------------------------------------------------
# talking to the Hub through huggingface_hub


# ----------------------------------------------------------------------------------------------------------
# the fetch


def default_target() -> Path:
    """Where the data folder goes: ``$STSNB_DATA_DIR``, else ``data/`` at the repository root."""
    value = os.environ.get(data.DATA_DIR_ENV) or str(data.DEFAULT_DATA_DIR)
    if value == data_records.HUB:
        raise FetchError(
            f"{data.DATA_DIR_ENV}=hub reads the Hub copies directly and has no folder to fetch into: "
            "unset it, or pass --to DIR"
        )
    return Path(value).expanduser().resolve()


def paper_problems(root: Path) -> list[str]:
    """What is missing or unreadable among the ``--paper`` corpora of a folder."""
    problems = []
    for relative in PAPER_FILES:
        path = root / relative
        if not path.is_file() or path.stat().st_size == 0:
            problems.append(f"{relative}: missing (stsnb data fetch --paper)")
    return problems


def _human(size: int | None) -> str:
    if size is None:
        return "size unknown"
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1000  # type: ignore[assignment]
    raise AssertionError


def _asked(item: Resolved) -> str:
    """How a file's commit was chosen: the pinned commit, or the branch the fetch asked for (``--latest``)."""
    return "pinned" if is_commit(item.wanted.revision) else f"at {item.wanted.revision}"


def sources_markdown(parts: Sequence[Part], files: Files, notes: dict[str, str], endpoint: str) -> str:
    """SOURCES.md of a fetched folder: each part's Hub files at their exact commits, and how it was built."""
    lines = [
        "# Data sources (written by `stsnb data fetch`)",
        "",
        f"Fetched {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} from {endpoint} through huggingface_hub, "
        "then verified with `stsnb data verify` against the manifest in the stsnb package.",
        "",
        "| part | Hub dataset : file @ commit (pinned, or the branch asked for) | size | how it was built |",
        "|---|---|---|---|",
    ]
    for part in parts:
        items = [item for f in part.files for item in files[f.key]]
        sources = "<br>".join(f"`{r.wanted.repo_id}` : `{r.filename}` @ `{r.commit}` ({_asked(r)})" for r in items)
        sizes = "<br>".join(_human(r.size) for r in items)
        lines.append(f"| `{part.name}` | {sources} | {sizes} | {notes[part.name]} |")
    lines += [
        "",
        "Licences are those of each source: SentEval's STS and SICK files (see the readme and LICENSE files beside "
        "them), SNLI CC BY-SA 4.0, SICK CC BY-NC-SA 3.0, Wikipedia text CC BY-SA, the re-annotated C-STS as its "
        "Hub card states.",
    ]
    return "\n".join(lines) + "\n"


@dataclass
class FetchResult:
    target: Path
    fetched: bool  # False: the folder already verified, nothing was downloaded
    message: str


def fetch(
    target: Path | None = None,
    *,
    paper: bool = False,
    say: Callable[[str], None] = print,
    hub: Hub | None = None,
    latest: bool = False,
    strict: bool = False,
) -> FetchResult:
    """Build (or leave alone) the data folder at ``target``; see the module docstring. Every file is read at its
    repo's pinned commit (``stsnb.data.revisions``); ``latest``: at ``main`` instead, said before anything is read.
    Lines spaced otherwise than the reference copy are accepted and reported (SOURCES.md, ``spacing.json``);
    ``strict``: they fail the fetch."""
    target = (target or default_target()).expanduser().resolve()
    if target.is_dir():
        existing = data_manifest.verify(target, strict=strict)
        missing = paper_problems(target) if paper else []
        if existing.ok and not missing:
            return FetchResult(target, False, f"{existing.text()}: nothing to fetch")
        say(f"{target}: exists but does not verify ({len(existing.problems) + len(missing)} problems); fetching anew")
    hub = hub or Hub()
    parts = [p for p in PARTS if paper or not p.paper]
    wanted = {f.key: f for p in parts for f in p.files}
    if latest:
        wanted = {key: replace(f, revision=LATEST) for key, f in wanted.items()}
        say("--latest: every repo at its main branch, not at the commits stsnb pins; the manifest still checks it")
    say(f"stsnb data fetch: {len(wanted)} files from {hub.endpoint} (sizes before downloading):")
    files: Files = {}
    for key, hub_file in wanted.items():
        files[key] = hub.resolve(hub_file)
        for item in files[key]:
            say(f"  {hub_file.repo_id}:{item.filename}  {_human(item.size)}")
    items = [item for shards in files.values() for item in shards]
    total = _human(sum(r.size or 0 for r in items))
    say(f"  in all {total} (files already in the Hugging Face cache are not downloaded again)")
    for item in items:
        item.local = hub.download(item)
    return _build(target, parts, files, hub.endpoint, say, strict)


def _build(
    target: Path, parts: Sequence[Part], files: Files, endpoint: str, say: Callable[[str], None], strict: bool
) -> FetchResult:
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f".{target.name}.partial-*"):
        if not _process_alive(stale.name.rsplit("-", 1)[-1]):
            shutil.rmtree(stale, ignore_errors=True)  # a killed fetch's scratch: never complete, never kept
    partial = target.parent / f".{target.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    try:
        notes = {}
        for part in parts:
            say(f"  building {part.name}")
            notes[part.name] = part.build(files, partial)
        result = data_manifest.verify(partial, strict=strict)
        sources = sources_markdown(parts, files, notes, endpoint) + spacing.report_markdown(result.variants)
        (partial / "SOURCES.md").write_text(sources, encoding="utf-8")
        spacing.write_report(partial, result.variants)
        missing = paper_problems(partial) if any(p.paper for p in parts) else []
        if not result.ok or missing:
            kept = target.parent / f".{target.name}.failed-{time.strftime('%Y%m%d-%H%M%S')}"
            partial.rename(kept)
            report = "\n".join([result.text(), *missing]).replace(str(partial), str(kept))
            raise FetchError(
                f"the fetched data does not verify; nothing was put at {target}. The folder is kept for a look "
                f"at {kept}.\n{report}"
            )
        if target.exists():
            aside = target.parent / f"{target.name}.old-{time.strftime('%Y%m%d-%H%M%S')}"
            target.rename(aside)
            say(f"  the folder that was at {target} (it did not verify) is kept at {aside}")
        partial.rename(target)
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
    return FetchResult(
        target, True, f"{result.text().replace(str(partial), str(target))}\nsources in {target / 'SOURCES.md'}"
    )


def _process_alive(pid: str) -> bool:
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
