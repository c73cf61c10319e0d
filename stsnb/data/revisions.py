"""The commit of every Hugging Face dataset repo ``stsnb data fetch`` reads: a fetch takes these, never a moving
``main``, so the data folder it builds is the one our manifest describes (``stsnb data fetch --latest`` takes ``main``
instead and says so).

MTEB's STS repos are pinned where MTEB's own task metadata pins them (``embeddings-benchmark/mteb``,
``mteb/tasks/sts/eng/*.py``: ``dataset={"path": ..., "revision": ...}``). The others are the commits whose files the
manifest was checked against, read from the repos' public history; each entry says where.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Pin(NamedTuple):
    commit: str  # the full 40-hex commit
    source: str  # where the commit was read


REVISIONS: dict[str, Pin] = {
    "mteb/sts12-sts": Pin("a0d554a64d88156834ff5ae9920b964011b16384", "MTEB task metadata, sts12_sts.py"),
    "mteb/sts13-sts": Pin("7e90230a92c190f1bf69ae9002b8cea547a64cca", "MTEB task metadata, sts13_sts.py"),
    "mteb/sts14-sts": Pin("6031580fec1f6af667f0bd2da0a551cf4f0b2375", "MTEB task metadata, sts14_sts.py"),
    "mteb/sts15-sts": Pin("ae752c7c21bf194d8b67fd573edf7ae58183cbe3", "MTEB task metadata, sts15_sts.py"),
    "mteb/sts16-sts": Pin("4d8694f8f0e0100860b497b999b3dbed754a0513", "MTEB task metadata, sts16_sts.py"),
    "mteb/stsbenchmark-sts": Pin(
        "b0fddb56ed78048fa8b90373c8a3cfc37b684831", "MTEB task metadata, sts_benchmark_sts.py"
    ),
    "mteb/sickr-sts": Pin("20a6d6f312dd54037fe07a32d58e5e168867909d", "MTEB task metadata, sickr_sts.py"),
    "princeton-nlp/datasets-for-simcse": Pin(
        "e145e8bb659b2aa2669f32ef79cb4cdef6c58fef", "the repo's history: the commit holding senteval.tar (89.8 MB)"
    ),
    "stanfordnlp/snli": Pin(
        "cdb5c3d5eed6ead6e5a341c8e56e669bb666725b", "the repo's history: 'Convert dataset to Parquet (#6)'"
    ),
    "nyu-mll/multi_nli": Pin(
        "da70db2af9d09693783c3320c4249840212ee221", "the repo's history: 'Convert dataset to Parquet (#5)'"
    ),
}
# LivNLP/C-STS-Reannotated: its public history shows only the short hash c7fd046 ("Upload 2 files"), and the Hub
# takes a full commit or a branch: it is read at ``main`` until the full hash is known, and its rows are checked
# against the manifest like every other file's (a changed label fails the fetch).
UNPINNED = {"LivNLP/C-STS-Reannotated": "main"}

LATEST = "main"
_COMMIT = re.compile(r"[0-9a-f]{40}")


def pinned(repo_id: str) -> str:
    """The commit a fetch reads ``repo_id`` at; ``main`` for a repo listed in :data:`UNPINNED`."""
    if repo_id in REVISIONS:
        return REVISIONS[repo_id].commit
    if repo_id in UNPINNED:
        return UNPINNED[repo_id]
    raise KeyError(f"{repo_id}: no pinned revision in stsnb.data.revisions.REVISIONS")


def is_commit(revision: str) -> bool:
    return bool(_COMMIT.fullmatch(revision))
