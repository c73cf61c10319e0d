"""``stsnb data fetch`` and ``stsnb data verify``, offline on the real code path: ``huggingface_hub`` downloads from a
Hub-shaped endpoint on 127.0.0.1 (``tests/hub_server.py``) serving repos built from the data folder
(``tests/hub_repos.py``), and the folder it builds is checked against the manifest shipped in the package."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from hub_repos import build_repos
from hub_server import Fault, LocalHub, Repo, gzip_jsonl

from stsnb.data import fetch as data_fetch
from stsnb.data import hub as data_fetch_hub
from stsnb.data import manifest as data_manifest
from stsnb.data import revisions
from stsnb.runs import context as runs_context

pytestmark = pytest.mark.usefixtures("local_hub_online")  # served on 127.0.0.1, whatever HF_HUB_OFFLINE says

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def repos(data_dir: Path):
    return build_repos(data_dir)


@pytest.fixture
def hub(repos):
    copies = {
        name: Repo(dict(repo.files), repo.gated, {commit: dict(files) for commit, files in repo.history.items()})
        for name, repo in repos.items()
    }
    with LocalHub(copies) as server:
        yield server


def _client(server: LocalHub, tmp_path: Path) -> data_fetch_hub.Hub:
    return data_fetch_hub.Hub(endpoint=server.url, cache_dir=str(tmp_path / "hf-cache"))


def _cli(args: list[str], env_extra: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "stsnb.cli", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


# ----------------------------------------------------------------------------------------------------------
# the manifest and verify


def test_the_shipped_manifest_is_the_reference_folders(data_dir):
    """Generated, not typed: the package's manifest equals what the reference data folder gives."""
    assert data_manifest.load_manifest() == json.loads(json.dumps(data_manifest.build_manifest(data_dir)))


def test_stsnb_data_verify_accepts_the_reference_folder(data_dir):
    result = _cli(["data", "verify", str(data_dir)], {})
    assert result.returncode == 0, result.stderr
    assert "verified, 27 tables match the manifest" in result.stdout


@pytest.fixture
def copy(data_dir, tmp_path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(data_dir, target)
    return target


def _edit_line(path: Path, number: int, edit) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[number - 1] = edit(lines[number - 1])
    path.write_text("\n".join(lines), encoding="utf-8")


def test_verify_names_file_and_line_of_a_truncated_file(copy):
    path = copy / "senteval" / "STS" / "STSBenchmark" / "sts-test.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:1000]) + lines[1000][:20], encoding="utf-8")  # cut mid-line, as a lost download
    result = data_manifest.verify(copy)
    assert not result.ok
    (problem,) = result.problems
    assert problem.startswith("senteval/STSBenchmark/test: ")
    assert "sts-test.csv:1001: expected at least 7 tab-separated columns" in problem
    assert "stsnb data fetch" in result.text()


def test_verify_names_the_line_of_a_changed_gold_score(copy):
    _edit_line(copy / "senteval" / "STS" / "STS14-en-test" / "STS.gs.images.txt", 17, lambda s: "4.9")
    (problem,) = data_manifest.verify(copy).problems
    assert problem == "senteval/STS14: STS.input.images.txt:17: gold score 4.9 differs from the reference copy's"


def test_verify_names_the_line_of_changed_text_and_a_score_out_of_range(copy):
    _edit_line(copy / "sick_raw" / "SICK_train.txt", 300, lambda s: s.replace(" ", "  ", 1).replace("a", "o", 1))
    _edit_line(copy / "csts_reannotated" / "csts_train_reannotated.csv", 5, lambda s: s.rsplit(",", 1)[0] + ",4.5")
    problems = sorted(data_manifest.verify(copy).problems)
    assert len(problems) == 2
    assert problems[0].startswith("csts/train: csts_train_reannotated.csv:5: gold score 4.5 differs")
    assert problems[1].startswith("raw/SICK/train: SICK_train.txt:300: text differs from the reference copy's")


def test_the_csts_csvs_are_checked_by_their_rows_not_their_bytes(copy):
    """C-STS rewritten with CRLF line endings and every field quoted (another upload of the same rows) verifies; its
    changed label fails (``test_verify_names_the_line_of_changed_text_and_a_score_out_of_range``)."""
    path = copy / "csts_reannotated" / "csts_validation_reannotated.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\r\n").writerows(rows)
    assert b"\r\n" in path.read_bytes() and path.read_bytes().startswith(b'"')
    assert data_manifest.verify(copy).ok


def test_verify_checks_the_bytes_of_the_wikipedia_sample(copy):
    """The Wikipedia sample is the first lines of SimCSE's file byte for byte: other line endings are a change."""
    path = copy / "wiki1m_subset" / "wiki1m_for_simcse.txt"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    (problem,) = data_manifest.verify(copy).problems
    assert "wiki1m_subset/wiki1m_for_simcse.txt: bytes differ from the public release" in problem


def test_verify_of_a_missing_folder_or_file(copy, tmp_path):
    (copy / "sts_raw" / "STS16-en-test" / "STS.gs.plagiarism.txt").unlink()
    (problem,) = data_manifest.verify(copy).problems
    assert problem == "raw/STS16: missing sts_raw/STS16-en-test/STS.gs.plagiarism.txt"
    result = _cli(["data", "verify", str(tmp_path / "nowhere")], {})
    assert result.returncode == 1 and "no folder at" in result.stderr and "stsnb data fetch" in result.stderr


def test_text_spaced_otherwise_is_reported_and_a_changed_word_fails(copy):
    """The three degrees of verify on one file: "( a5-0323 / 2000 )" spaced as "(a5-0323/2000)" on two lines is accepted
    and reported (``strict``: a problem); a changed word on another line is a failure naming that line."""
    path = copy / "senteval" / "STS" / "STS12-en-test" / "STS.input.SMTeuroparl.txt"
    for number in (40, 64):
        _edit_line(path, number, lambda s: s.replace("( a5-0323 / 2000 )", "(a5-0323/2000)"))
    result = data_manifest.verify(copy)
    assert result.ok, result.text()
    (report,) = result.variants
    assert report.table == "senteval/STS12" and report.lines_per_file == {"STS.input.SMTeuroparl.txt": 2}
    location, text, other = report.shown[0]
    assert location == "STS.input.SMTeuroparl.txt:40" and "(a5-0323/2000)" in text
    assert "Maij-Weggen report (A5-0323/2000)" in other, "shown beside the same pair in the raw copy"
    assert "2 lines in 1 tables have the reference copy's letters" in result.text()
    strict = data_manifest.verify(copy, strict=True)
    assert not strict.ok and "--strict" in strict.problems[0] and "drop --strict" in strict.text()
    _edit_line(path, 87, lambda s: s.replace("report", "paper", 1))
    (problem,) = data_manifest.verify(copy).problems
    assert problem == (
        "senteval/STS12: STS.input.SMTeuroparl.txt:87: text differs from the reference copy's (not only its spacing)"
    )


# ----------------------------------------------------------------------------------------------------------
# fetch against the local Hub


def test_fetch_builds_a_folder_that_verifies_and_a_second_fetch_does_nothing(hub, tmp_path):
    """The README's set-up step, as a user runs it: `stsnb data fetch` with STSNB_DATA_DIR naming the folder."""
    target = tmp_path / "data"
    env = {"HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(tmp_path / "hf-cache"), "STSNB_DATA_DIR": str(target)}
    first = _cli(["data", "fetch"], env)
    assert first.returncode == 0, first.stderr
    assert "(sizes before downloading)" in first.stdout and "in all" in first.stdout
    assert data_manifest.verify(target).ok
    sources = (target / "SOURCES.md").read_text()
    for repo in ("princeton-nlp/datasets-for-simcse", "stanfordnlp/snli", "mteb/sts15-sts", "LivNLP/C-STS-Reannotated"):
        assert f"`{repo}`" in sources
    assert f"`{revisions.pinned('mteb/sickr-sts')}` (pinned)" in sources
    assert not list(tmp_path.glob(".data.*")), "no scratch folder left behind"
    requests = len(hub.requests)
    again = _cli(["data", "fetch"], env)
    assert again.returncode == 0 and "nothing to fetch" in again.stdout
    assert len(hub.requests) == requests, "a folder that verifies is left alone without a request to the Hub"


@pytest.mark.long  # two whole fetches (9 s): off the default tier
def test_the_fetch_reads_the_pinned_commit_and_latest_reads_main(hub, tmp_path):
    """A repo whose main moved on after the commit stsnb pins (one gold score changed): the fetch reads the pinned
    commit and verifies; ``--latest`` reads main, says so first, and the changed score stops it."""
    repo = hub.repos["mteb/sickr-sts"]
    pinned = revisions.pinned("mteb/sickr-sts")
    assert repo.history[pinned] == repo.files
    rows = [json.loads(line) for line in gzip.decompress(repo.files["test.jsonl.gz"]).splitlines()]
    rows[0]["score"] = 5.0 if rows[0]["score"] < 4.0 else 1.0
    repo.files = {"test.jsonl.gz": gzip_jsonl(rows)}  # main moves on; the pinned commit keeps the old file
    said: list[str] = []
    result = data_fetch.fetch(tmp_path / "data", hub=_client(hub, tmp_path), say=said.append)
    assert result.fetched and data_manifest.verify(tmp_path / "data").ok
    assert f"`mteb/sickr-sts` : `test.jsonl.gz` @ `{pinned}` (pinned)" in (tmp_path / "data" / "SOURCES.md").read_text()
    said.clear()
    with pytest.raises(data_fetch_hub.FetchError):
        data_fetch.fetch(tmp_path / "latest", hub=_client(hub, tmp_path), say=said.append, latest=True)
    assert said[0].startswith("--latest: every repo at its main branch")


def _edit_served_tar(hub: LocalHub, member_suffix: str, edit) -> None:
    """Rewrite one member of the ``senteval.tar`` served at the pinned commit (another public build of the tree)."""
    served = hub.repos["princeton-nlp/datasets-for-simcse"].history[
        revisions.pinned("princeton-nlp/datasets-for-simcse")
    ]
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(served["senteval.tar"])) as source, tarfile.open(fileobj=out, mode="w") as tar:
        for member in source:
            content = source.extractfile(member).read() if member.isfile() else b""
            if member.name.endswith(member_suffix):
                content = edit(content.decode("utf-8")).encode("utf-8")
                member.size = len(content)
            tar.addfile(member, io.BytesIO(content) if member.isfile() else None)
    served["senteval.tar"] = out.getvalue()


def test_a_tree_spaced_otherwise_is_reported_and_mteb_rows_in_another_order_change_nothing(hub, tmp_path, monkeypatch):
    """Another build of SentEval's tree writes "' s" for " 's" on three lines of STS14 images, and MTEB's STS12 rows
    come reversed. The fetch accepts the first and reports it (SOURCES.md, spacing.json, which each run's env.json
    copies; ``stsnb data verify --strict`` refuses it). STS12's SMTeuroparl has eight pairs SentEval writes alike
    ("( a5-0323 / 2000 )", score 5) that MTEB spaces two ways: each still lands on the reference copy's line (by its
    manifest fingerprint), so raw/STS12 has nothing spaced otherwise."""

    def split_three(text: str) -> str:
        lines = text.split("\n")
        for number in [i for i, line in enumerate(lines) if " 's " in line][:3]:
            lines[number] = lines[number].replace(" 's ", "' s ")
        return "\n".join(lines)

    _edit_served_tar(hub, "STS14-en-test/STS.input.images.txt", split_three)
    served = hub.repos["mteb/sts12-sts"].history[revisions.pinned("mteb/sts12-sts")]
    rows = [json.loads(line) for line in gzip.decompress(served["test.jsonl.gz"]).splitlines()]
    served["test.jsonl.gz"] = gzip_jsonl(rows[::-1])
    target = tmp_path / "data"
    result = data_fetch.fetch(target, hub=_client(hub, tmp_path), say=lambda line: None)
    assert result.fetched and "3 lines in 1 tables have the reference copy's letters" in result.message
    sources = (target / "SOURCES.md").read_text()
    assert "## Spacing variants" in sources and "`STS.input.images.txt` 3" in sources
    (report,) = json.loads((target / "spacing.json").read_text())
    assert report["table"] == "senteval/STS14" and report["lines_per_file"] == {"STS.input.images.txt": 3}
    monkeypatch.setenv("STSNB_DATA_DIR", str(target))
    assert runs_context.environment("cpu")["data_spacing"] == {"senteval/STS14": 3}
    strict = _cli(["data", "verify", str(target), "--strict"], {})
    assert strict.returncode == 1 and "senteval/STS14: 3 lines spaced otherwise" in strict.stderr


def test_every_hub_file_names_a_full_commit():
    """Every file the fetch reads is pinned to a 40-hex commit, but for the repos listed as unpinned (with why)."""
    files = [f for part in data_fetch.PARTS for f in part.files]
    unpinned = sorted({f.repo_id for f in files if not revisions.is_commit(f.revision)})
    assert unpinned == sorted(revisions.UNPINNED)


@pytest.mark.long  # a fetch through dropped connections (8 s): off the default tier
def test_a_dropped_connection_resumes_with_a_range_request(hub, tmp_path, monkeypatch):
    """The connection drops twice during the tar (after 200 kB, then 300 kB more): huggingface_hub resumes each time
    from the bytes it has written, with a Range request, and the folder verifies. (It writes in chunks of
    ``DOWNLOAD_CHUNK_SIZE``, 10 MB, larger than the test's tar: 64 kB here so that bytes arrive before the cut.)"""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 64 * 1024)
    hub.faults["princeton-nlp/datasets-for-simcse:senteval.tar"] = Fault(cuts=[200_000, 300_000])
    result = data_fetch.fetch(tmp_path / "data", hub=_client(hub, tmp_path), say=lambda line: None)
    assert result.fetched and data_manifest.verify(tmp_path / "data").ok
    ranges = [r["range"] for r in hub.requests if r["path"].endswith("/senteval.tar") and r["method"] == "GET"]
    starts = [int(r.removeprefix("bytes=").rstrip("-")) for r in ranges[1:]]
    assert ranges[0] is None and len(starts) == 2 and 0 < starts[0] <= 200_000 < starts[1] <= 500_000, ranges


@pytest.mark.long  # two fetches, one killed (12 s): off the default tier (README command 2 under 10 min)
def test_an_interrupted_fetch_leaves_nothing_half_done_and_a_rerun_reuses_what_completed(hub, tmp_path):
    """The connection to the last file is lost for good (100 kB, then no byte on huggingface_hub's 5 retries): the
    fetch stops naming the file, no data folder, scratch folder or partial file is left, and the rerun downloads only
    that file (huggingface_hub >= 2 keeps no partial file across calls: it starts over; the others are cached)."""
    last = "LivNLP/C-STS-Reannotated:csts_validation_reannotated.csv"
    hub.faults[last] = Fault(cuts=[100_000] + [0] * 5)
    target = tmp_path / "data"
    with pytest.raises(data_fetch_hub.FetchError, match="csts_validation_reannotated.csv"):
        data_fetch.fetch(target, hub=_client(hub, tmp_path), say=lambda line: None)
    assert not target.exists() and not list(tmp_path.glob(".data.*"))
    assert not list((tmp_path / "hf-cache").rglob("*.incomplete"))
    hub.faults.clear()
    done_before = len(hub.requests)
    result = data_fetch.fetch(target, hub=_client(hub, tmp_path), say=lambda line: None)
    assert result.fetched and data_manifest.verify(target).ok
    again = [r["path"] for r in hub.requests[done_before:] if r["method"] == "GET" and "/resolve/" in r["path"]]
    assert [path.rsplit("/", 1)[-1] for path in again] == ["csts_validation_reannotated.csv"]


def test_a_download_whose_checksum_is_wrong_stops_the_fetch(hub, tmp_path):
    name = "mteb/sts13-sts:test.jsonl.gz"
    served = hub.repos["mteb/sts13-sts"].files["test.jsonl.gz"]
    hub.faults[name] = Fault(serve_instead=bytes(reversed(served)))
    target = tmp_path / "data"
    with pytest.raises(data_fetch_hub.FetchError) as caught:
        data_fetch.fetch(target, hub=_client(hub, tmp_path), say=lambda line: None)
    message = str(caught.value)
    assert name in message and "SHA-256" in message and "Run `stsnb data fetch` again" in message
    assert not target.exists() and not list(tmp_path.glob(".data.*"))
    cached = [p for p in (tmp_path / "hf-cache").rglob("*") if "sts13" in str(p) and p.is_file()]
    assert all(p.suffix == ".lock" for p in cached), cached


def _edit_served_stsb_test(hub: LocalHub, tmp_path: Path, edit) -> None:
    """Change row 200 of the STS-B test file served at the pinned commit (in SentEval's order: sts-test.csv:200, a pair
    that occurs once; lines 10 and 11 are the same pair twice)."""
    served = hub.repos["mteb/stsbenchmark-sts"].history[revisions.pinned("mteb/stsbenchmark-sts")]
    path = tmp_path / "served.jsonl.gz"
    path.write_bytes(served["test.jsonl.gz"])
    rows = data_fetch._jsonl_rows(path)
    edit(rows[199])
    served["test.jsonl.gz"] = gzip_jsonl(rows)


def test_an_upstream_row_that_cannot_be_aligned_stops_the_fetch_naming_the_line(hub, tmp_path):
    _edit_served_stsb_test(hub, tmp_path, lambda row: row.update(sentence2=row["sentence2"] + " Indeed."))
    with pytest.raises(data_fetch_hub.FetchError, match="sts-test.csv:200: no pair of mteb/stsbenchmark-sts"):
        data_fetch.fetch(tmp_path / "data", hub=_client(hub, tmp_path), say=lambda line: None)
    assert not (tmp_path / "data").exists() and not list(tmp_path.glob(".data.*"))


@pytest.mark.long  # a whole fetch (6 s): off the default tier
def test_fetched_data_that_does_not_verify_is_kept_aside_not_put_in_place(hub, tmp_path):
    """An upstream text that changed but still aligns (its punctuation): verify fails naming the line, the folder
    already at the target stays as it was, and the built one is kept under a name that says it failed."""
    _edit_served_stsb_test(hub, tmp_path, lambda row: row.update(sentence1=row["sentence1"].rstrip(".") + "!"))
    target = tmp_path / "data"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    with pytest.raises(data_fetch_hub.FetchError) as caught:
        data_fetch.fetch(target, hub=_client(hub, tmp_path), say=lambda line: None)
    message = str(caught.value)
    assert "raw/STSBenchmark/test: sts-test.csv:200: text differs from the reference copy's" in message
    assert (target / "notes.txt").read_text() == "mine" and sorted(p.name for p in target.iterdir()) == ["notes.txt"]
    (kept,) = tmp_path.glob(".data.failed-*")
    assert str(kept) in message and not data_manifest.verify(kept).ok


@pytest.mark.long  # a whole fetch (7 s): off the default tier
def test_a_folder_that_does_not_verify_is_moved_aside_never_deleted(hub, tmp_path):
    target = tmp_path / "data"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    result = data_fetch.fetch(target, hub=_client(hub, tmp_path), say=lambda line: None)
    assert result.fetched and data_manifest.verify(target).ok
    (aside,) = tmp_path.glob("data.old-*")
    assert (aside / "notes.txt").read_text() == "mine"


@pytest.mark.long  # two fetches in fresh processes (13 s): off the default tier
def test_a_gated_dataset_needs_the_token_and_the_token_is_never_printed(hub, tmp_path):
    hub.repos["LivNLP/C-STS-Reannotated"].gated = True
    target = tmp_path / "data"
    env = {"HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(tmp_path / "hf-cache"), "STSNB_DATA_DIR": str(target)}
    refused = _cli(["data", "fetch"], env)
    assert refused.returncode == 1 and not target.exists()
    assert "LivNLP/C-STS-Reannotated is gated" in refused.stderr and "HF_TOKEN" in refused.stderr
    allowed = _cli(["data", "fetch"], {**env, "HF_TOKEN": hub.token})
    assert allowed.returncode == 0, allowed.stderr
    assert [r["authorized"] for r in hub.requests if "C-STS" in r["path"]][-1]
    written = "".join(p.read_text(errors="replace") for p in target.rglob("*.md"))
    assert hub.token not in allowed.stdout + allowed.stderr + refused.stdout + refused.stderr + written


def test_no_network_fails_within_seconds_saying_what_to_do(tmp_path):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {"HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_HUB_CACHE": str(tmp_path / "c")}
    started = time.perf_counter()
    result = _cli(["data", "fetch", "--to", str(tmp_path / "data")], env, timeout=60)
    seconds = time.perf_counter() - started
    assert result.returncode == 1
    assert "cannot reach the Hugging Face Hub" in result.stderr and "STSNB_DATA_DIR" in result.stderr
    assert seconds < 30, f"took {seconds:.0f} s"
    assert not (tmp_path / "data").exists()


def test_paper_adds_the_paper_corpora_and_prints_their_sizes_first(hub, tmp_path):
    lines: list[str] = []
    result = data_fetch.fetch(tmp_path / "data", paper=True, hub=_client(hub, tmp_path), say=lines.append)
    assert result.fetched
    listed = next(i for i, line in enumerate(lines) if "nli_for_simcse.csv" in line)
    assert listed < next(i for i, line in enumerate(lines) if line.startswith("  building"))
    assert not data_fetch.paper_problems(tmp_path / "data")
    from stsnb.data import loading as data
    from stsnb.data import records as data_records

    assert len(data.load_simcse_triplets(tmp_path / "data" / "paper" / "nli_for_simcse.csv")) == 400
    snli = data._read_nli_csv(tmp_path / "data" / "paper" / "snli_train.csv")
    assert len(snli) == 400 and {p.label for p in snli} <= set(data_records.NLI_LABELS)
    multinli = data._read_nli_csv(tmp_path / "data" / "paper" / "multinli_train.csv")
    assert len(multinli) == 400, "both shards of MultiNLI train, their gold-less rows dropped"
    wiki = (tmp_path / "data" / "paper" / data.WIKI_FILE).read_text().splitlines()
    assert len(wiki) == data_fetch.WIKI_SAMPLE_LINES + 200  # whole; the sample keeps the first 11,914
    # a default folder lacks them: --paper on it fetches (the default part is in the cache)
    assert data_fetch.paper_problems(REPO_ROOT)  # the repository root has no paper/ corpora


@pytest.mark.long  # every notebook end to end: minutes (CI runs the long tier)
@pytest.mark.slow
def test_the_smoke_plan_runs_every_notebook_on_a_fetched_folder(hub, tmp_path):
    """README command 1 on a machine without our data folder, CI's end-to-end check: the fetch builds the folder,
    ``stsnb run --profile smoke`` executes every notebook of the smoke plan successfully, the executed notebooks show a
    reader no output noise (``stsnb.runs.notebook_noise``) and every figure they save is readable
    (``STSNB_CHECK_FIGURES=1``: ``stsnb.teaching.plots.save`` raises on ``plots.figure_problems``, so the notebook
    fails). The fetched folder verifies against the same manifest as CI's, so this one run covers both."""
    from stsnb.runs import plans
    from stsnb.runs.notebook_noise import output_noise
    from stsnb.runs.summary import read_status

    target = tmp_path / "data"
    env = {"HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(tmp_path / "hf-cache"), "STSNB_DATA_DIR": str(target)}
    fetched = _cli(["data", "fetch"], env)
    assert fetched.returncode == 0, fetched.stderr
    env["STSNB_CHECK_FIGURES"] = "1"  # the kernels inherit it: an unreadable figure fails its cell
    run = _cli(["run", "--profile", "smoke", "--out", str(tmp_path / "runs")], env, timeout=1800)
    out = tmp_path / "runs" / "smoke"
    plan = plans.load_plan(plans.plan_path("smoke"))
    failed = {name: read_status(out / f"{name}.failed") for name in plan.notebooks}
    assert run.returncode == 0, f"{run.stderr[-3000:]}\nfailed: { {k: v for k, v in failed.items() if v} }"
    for name in plan.notebooks:
        assert read_status(out / name) == "ok", name
        assert (out / name / "metrics.json").is_file(), name
    assert _overview_statuses((out / "summary.md").read_text()) == dict.fromkeys(plan.notebooks, "ok")
    noise = {name: output_noise(json.loads((out / name / f"{name}.ipynb").read_text())) for name in plan.notebooks}
    assert not any(noise.values()), {name: problems for name, problems in noise.items() if problems}


def _overview_statuses(summary: str) -> dict[str, str]:
    """notebook -> the status cell of summary.md's overview table (a claim's text may say "failed" freely)."""
    lines = summary.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| notebook |") and "| status |" in line)
    column = [cell.strip() for cell in lines[start].strip("|").split("|")].index("status")
    statuses = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        statuses[cells[0].split("]")[0].lstrip("[")] = cells[column]
    return statuses
