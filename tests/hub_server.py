"""A Hub-shaped HTTP endpoint on 127.0.0.1 for the tests: ``HF_ENDPOINT`` pointed at it, ``huggingface_hub`` runs its
real code path (metadata HEAD, ``resolve`` downloads with ``Range`` resume, the ``tree`` listing, gated-repo errors).

Only what ``hf_hub_download``, ``get_hf_file_metadata`` and ``HfApi.list_repo_files`` use is served, the way the Hub
answers it (``X-Repo-Commit``, ``ETag`` = the SHA-256 of an LFS file, ``X-Error-Code`` on errors). Faults for the
tests: a download cut after some bytes, a file whose bytes differ from its announced SHA-256, a gated repo.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple
from urllib.parse import unquote, urlparse


@dataclass
class Repo:
    """A dataset repo: path -> bytes at ``main``, and ``history``: earlier commits' files by commit. ``gated``:
    downloads need ``Authorization: Bearer <LocalHub.token>``."""

    files: dict[str, bytes]
    gated: bool = False
    history: dict[str, dict[str, bytes]] = field(default_factory=dict)

    @property
    def commit(self) -> str:
        """``main``'s commit: a hash of its files."""
        sha = hashlib.sha1()
        for path in sorted(self.files):
            sha.update(path.encode() + hashlib.sha256(self.files[path]).digest())
        return sha.hexdigest()

    def at(self, revision: str) -> Snapshot | None:
        """The files at ``revision`` (``main``, its commit or one of ``history``), None for an unknown revision."""
        if revision in ("main", self.commit):
            return Snapshot(self.commit, self.files)
        if revision in self.history:
            return Snapshot(revision, self.history[revision])
        return None


class Snapshot(NamedTuple):
    commit: str
    files: dict[str, bytes]


@dataclass
class Fault:
    """``cuts``: the next GETs of the file send only this many bytes each (one entry per GET), then drop the
    connection. ``serve_instead``: bytes served in place of the file, under the real file's SHA-256 and size."""

    cuts: list[int] = field(default_factory=list)
    serve_instead: bytes | None = None


@dataclass
class LocalHub:
    repos: dict[str, Repo]  # dataset repos
    models: dict[str, Repo] = field(default_factory=dict)  # model repos (a legacy id without owner too)
    token: str = "hf_test_token_0123456789"
    faults: dict[str, Fault] = field(default_factory=dict)  # "repo_id:path" -> fault
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __enter__(self) -> LocalHub:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                hub._answer(self, head=True)

            def do_GET(self) -> None:
                hub._answer(self, head=False)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # ------------------------------------------------------------------------------------------------------

    def _answer(self, handler: BaseHTTPRequestHandler, head: bool) -> None:
        url = urlparse(handler.path)
        self.requests.append(
            {
                "method": "HEAD" if head else "GET",
                "path": unquote(url.path),
                "range": handler.headers.get("Range"),
                "authorized": handler.headers.get("Authorization") == f"Bearer {self.token}",
            }
        )
        path = unquote(url.path)
        tree = re.fullmatch(r"/api/(models|datasets)/(.+?)/tree/([^/]+)(/.*)?", path)
        info = re.fullmatch(r"/api/(models|datasets)/(.+?)(?:/revision/([^/]+))?", path)
        resolve = re.fullmatch(r"/(?:(datasets)/)?(.+?)/resolve/([^/]+)/(.+)", path)
        if tree:
            self._tree(handler, self._kind(tree.group(1)), tree.group(2), tree.group(3), (tree.group(4) or "/")[1:])
        elif info:
            self._info(handler, self._kind(info.group(1)), info.group(2), info.group(3) or "main")
        elif resolve:
            self._resolve(handler, head, self._kind(resolve.group(1)), *resolve.groups()[1:])
        else:
            self._error(handler, 404, "EntryNotFound", f"no route {url.path}", None, head)

    def _kind(self, name: str | None) -> dict[str, Repo]:
        return self.repos if name == "datasets" else self.models

    def _repo_or_error(
        self, handler: BaseHTTPRequestHandler, repos: dict[str, Repo], repo_id: str, revision: str, head: bool
    ) -> Snapshot | None:
        repo = repos.get(repo_id)
        if repo is None:
            self._error(handler, 404, "RepoNotFound", f"Repository Not Found for url: {handler.path}.", None, head)
            return None
        if repo.gated and handler.headers.get("Authorization") != f"Bearer {self.token}":
            message = f"Access to dataset {repo_id} is restricted. You must have access to it and be authenticated."
            self._error(handler, 401, "GatedRepo", message, repo.commit, head)
            return None
        snapshot = repo.at(revision)
        if snapshot is None:
            self._error(handler, 404, "RevisionNotFound", f"Invalid rev id: {revision}", None, head)
        return snapshot

    def _info(self, handler: BaseHTTPRequestHandler, repos: dict[str, Repo], repo_id: str, revision: str) -> None:
        snapshot = self._repo_or_error(handler, repos, repo_id, revision, head=False)
        if snapshot is not None:
            body = {
                "id": repo_id,
                "sha": snapshot.commit,
                "siblings": [{"rfilename": f} for f in sorted(snapshot.files)],
            }
            self._send(handler, 200, json.dumps(body).encode(), {"Content-Type": "application/json"}, head=False)

    def _tree(
        self, handler: BaseHTTPRequestHandler, repos: dict[str, Repo], repo_id: str, revision: str, folder: str
    ) -> None:
        snapshot = self._repo_or_error(handler, repos, repo_id, revision, head=False)
        if snapshot is None:
            return
        inside = {p: c for p, c in snapshot.files.items() if not folder or p.startswith(folder.rstrip("/") + "/")}
        if folder and not inside:
            self._error(handler, 404, "EntryNotFound", f"{folder} does not exist on {revision}", snapshot.commit, False)
            return
        entries = [
            {
                "type": "file",
                "path": path,
                "size": len(content),
                "oid": hashlib.sha1(content).hexdigest(),
                "lfs": {"oid": hashlib.sha256(content).hexdigest(), "size": len(content), "pointerSize": 130},
            }
            for path, content in sorted(inside.items())
        ]
        self._send(handler, 200, json.dumps(entries).encode(), {"Content-Type": "application/json"}, head=False)

    def _resolve(
        self,
        handler: BaseHTTPRequestHandler,
        head: bool,
        repos: dict[str, Repo],
        repo_id: str,
        revision: str,
        path: str,
    ) -> None:
        snapshot = self._repo_or_error(handler, repos, repo_id, revision, head)
        if snapshot is None:
            return
        if path not in snapshot.files:
            self._error(handler, 404, "EntryNotFound", f"{path} does not exist on {revision}", snapshot.commit, head)
            return
        content = snapshot.files[path]
        headers = {
            "X-Repo-Commit": snapshot.commit,
            "ETag": f'"{hashlib.sha256(content).hexdigest()}"',
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        fault = self.faults.get(f"{repo_id}:{path}") if repos is self.repos else None
        body = fault.serve_instead if fault and fault.serve_instead is not None and not head else content
        start = 0
        ranged = re.fullmatch(r"bytes=(\d+)-", handler.headers.get("Range") or "")
        status = 200
        if ranged and not head:
            start = int(ranged.group(1))
            status = 206
            headers["Content-Range"] = f"bytes {start}-{len(body) - 1}/{len(body)}"
        piece = body[start:]
        if not head and fault and fault.cuts:
            cut = fault.cuts.pop(0)
            headers["Content-Length"] = str(len(piece))
            handler.send_response(status)
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(piece[:cut])
            handler.wfile.flush()
            handler.close_connection = True
            return
        headers["Content-Length"] = str(len(content) if head else len(piece))
        self._send(handler, status, piece, headers, head)

    def _error(
        self, handler: BaseHTTPRequestHandler, status: int, code: str, message: str, commit: str | None, head: bool
    ) -> None:
        headers = {"X-Error-Code": code, "X-Error-Message": message, "Content-Type": "application/json"}
        if commit:
            headers["X-Repo-Commit"] = commit
        self._send(handler, status, json.dumps({"error": message}).encode(), headers, head)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict, head: bool) -> None:
        handler.send_response(status)
        headers = {"Content-Length": str(len(body)), **headers}
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        if not head:
            handler.wfile.write(body)


# ----------------------------------------------------------------------------------------------------------
# file formats of the real repos, built from rows


def gzip_jsonl(rows: Iterable[dict[str, Any]]) -> bytes:
    """Rows as gzipped JSON lines (MTEB's STS files)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as handle:
        for row in rows:
            handle.write((json.dumps(row) + "\n").encode("utf-8"))
    return buffer.getvalue()


def parquet(columns: dict[str, list]) -> bytes:
    """A parquet file of these columns (the Hub's converted datasets)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.table(columns), buffer)
    return buffer.getvalue()
