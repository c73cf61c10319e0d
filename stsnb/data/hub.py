"""The Hugging Face Hub as ``stsnb data fetch`` reads it: which files a part needs (:class:`HubFile`), where each
resolved to (:class:`Resolved`) and the client that lists and downloads them (:class:`Hub`)."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from . import manifest as data_manifest
from .revisions import pinned

HUB_TIMEOUT = 10.0  # seconds to wait for the Hub's answer to a metadata request


class FetchError(RuntimeError):
    """The fetch cannot go on; the message says what failed and what to do."""


@dataclass(frozen=True)
class HubFile:
    """One file of a Hub dataset repo; ``filename`` may be a glob, resolved by listing the repo, which must match one
    file, or with ``shards`` one or more (a split stored in several parquet files)."""

    key: str  # the name a build function asks for
    repo_id: str
    filename: str
    revision: str = ""  # a full commit; empty: the repo's pinned commit (``stsnb.data.revisions``)
    repo_type: str = "dataset"
    shards: bool = False

    def __post_init__(self) -> None:
        if not self.revision:
            object.__setattr__(self, "revision", pinned(self.repo_id))

    @property
    def name(self) -> str:
        return f"{self.repo_id}:{self.filename}"


@dataclass
class Resolved:
    """A Hub file after its metadata request: the exact path, commit and size, and once downloaded, its path."""

    wanted: HubFile
    filename: str
    commit: str
    size: int | None
    etag: str | None
    local: Path | None = None


Files = dict[str, list[Resolved]]  # HubFile.key -> the file (or a split's shards), resolved and downloaded


@dataclass
class Hub:
    """``huggingface_hub`` calls with the endpoint and cache read when the fetch starts (not at import)."""

    endpoint: str = field(default_factory=lambda: os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    cache_dir: str | None = field(default_factory=lambda: os.environ.get("HF_HUB_CACHE"))

    def explain(self, err: Exception, what: str) -> FetchError:
        """A ``FetchError`` that names the file and says what to do, for an error of ``huggingface_hub``."""
        from huggingface_hub.errors import (
            EntryNotFoundError,
            GatedRepoError,
            LocalEntryNotFoundError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        repo = what.split(":", 1)[0]
        if isinstance(err, GatedRepoError):
            return FetchError(
                f"{what}: the dataset {repo} is gated. Accept its terms at {self.endpoint}/datasets/{repo} while "
                "logged in, then make a read token available (`hf auth login`, or export HF_TOKEN) and run "
                "`stsnb data fetch` again."
            )
        if isinstance(err, RepositoryNotFoundError):
            return FetchError(
                f"{what}: the Hub answers that the dataset {repo} does not exist or needs a token you do not have "
                f"({self.endpoint}). If it is private to you, `hf auth login` or export HF_TOKEN."
            )
        if isinstance(err, (EntryNotFoundError, RevisionNotFoundError)):
            return FetchError(
                f"{what}: no such file or revision on the Hub ({self.endpoint}); the upstream repository may have "
                "changed its layout: please report it with this message."
            )
        if isinstance(err, LocalEntryNotFoundError) or _is_connection_error(err):
            return FetchError(
                f"{what}: cannot reach the Hugging Face Hub at {self.endpoint} ({type(err).__name__}). "
                "`stsnb data fetch` needs network access to the Hub, or HF_ENDPOINT set to a mirror of it. "
                "Without a network: copy a data folder built elsewhere (`stsnb data fetch --to DIR` there) and "
                "point STSNB_DATA_DIR at it; `stsnb data verify DIR` checks it."
            )
        return FetchError(f"{what}: {type(err).__name__}: {err}")

    def resolve(self, wanted: HubFile) -> list[Resolved]:
        """The exact file(s) (a glob resolved by listing the repo), each with its commit, size and ETag."""
        from huggingface_hub import HfApi, get_hf_file_metadata, hf_hub_url

        try:
            names = [wanted.filename]
            if any(c in wanted.filename for c in "*?["):
                listed = HfApi(endpoint=self.endpoint).list_repo_files(
                    wanted.repo_id, repo_type=wanted.repo_type, revision=wanted.revision
                )
                names = sorted(f for f in listed if fnmatch.fnmatch(f, wanted.filename))
                if not names or (len(names) > 1 and not wanted.shards):
                    raise FetchError(
                        f"{wanted.name}: expected {'one or more files' if wanted.shards else 'exactly one file'} "
                        f"matching {wanted.filename!r} in {wanted.repo_id}, found {names or 'none'}; the upstream "
                        "repository may have changed its layout"
                    )
            resolved = []
            for name in names:
                url = hf_hub_url(
                    wanted.repo_id, name, repo_type=wanted.repo_type, revision=wanted.revision, endpoint=self.endpoint
                )
                meta = get_hf_file_metadata(url, timeout=HUB_TIMEOUT, endpoint=self.endpoint)
                if meta.commit_hash is None:
                    raise FetchError(f"{wanted.name}: the Hub's answer names no commit (is HF_ENDPOINT a Hub?)")
                resolved.append(Resolved(wanted, name, meta.commit_hash, meta.size, meta.etag))
        except FetchError:
            raise
        except Exception as err:
            raise self.explain(err, wanted.name) from err
        return resolved

    def download(self, item: Resolved) -> Path:
        """The file in the Hub cache (downloaded unless it is there; a dropped connection is resumed within the
        download); its SHA-256 checked against the ETag where the Hub gives one (files stored with LFS or Xet)."""
        from huggingface_hub import hf_hub_download

        what = f"{item.wanted.repo_id}:{item.filename}"
        try:
            path = Path(
                hf_hub_download(
                    item.wanted.repo_id,
                    item.filename,
                    repo_type=item.wanted.repo_type,
                    revision=item.commit,
                    endpoint=self.endpoint,
                    cache_dir=self.cache_dir,
                    etag_timeout=HUB_TIMEOUT,
                )
            )
        except Exception as err:
            raise self.explain(err, what) from err
        if item.etag and re.fullmatch(r"[0-9a-f]{64}", item.etag):
            actual = data_manifest.file_sha256(path)
            if actual != item.etag:
                blob = path.resolve()
                with contextlib.suppress(OSError):
                    path.unlink()
                    blob.unlink()
                raise FetchError(
                    f"{what}: the downloaded file's SHA-256 is {actual[:16]}..., the Hub announced {item.etag[:16]}... "
                    "(a corrupted download or a changed file). It was removed from the cache; nothing was written "
                    "to the data folder. Run `stsnb data fetch` again."
                )
        return path


def _is_connection_error(err: BaseException) -> bool:
    names = {type(e).__name__ for e in _chain(err)}
    return bool(names & {"ConnectError", "ConnectTimeout", "ConnectionError", "TimeoutException", "ReadTimeout"})


def _chain(err: BaseException | None) -> Iterable[BaseException]:
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        yield err
        err = err.__cause__ or err.__context__
