"""What ``stsnb run --resume`` may skip: a notebook whose run in the profile folder finished ok at the same plan values
and the same source, so that a requeued batch job goes on where it stopped instead of training finished notebooks
again (the paper plan's notebooks 20, 30 and 40 are about 34 GPU-hours before notebook 10).

Before a notebook runs, the runner writes ``runner.json`` in its scratch folder (:func:`write_record`): the digest of
the plan's values for it, the source it runs (:func:`source_state`: HEAD's commit, and a digest of the uncommitted
changes to tracked source where there are any), when it started and its timeout. The record moves with the folder:
into ``<nb>/`` when the notebook ends ``ok``, into ``<nb>.failed/`` otherwise. ``stsnb status`` reads it too.

:func:`skip_reason` skips a notebook only when its good result holds such a record with the same values and source
and no later attempt left checkpoints (a notebook that succeeds deletes its own, so checkpoints in
``.checkpoints/<nb>`` belong to an attempt after it, which ``--resume`` continues). A result from before these
records, from other values or from other code runs again, and the runner says why.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .context import REPO_ROOT, changed_source, git_sha, write_text_atomic

RECORD_FILE = "runner.json"


def values_digest(values: Mapping[str, Any]) -> str:
    """A digest of a notebook's plan values (its overrides, as the plan gives them)."""
    text = json.dumps(dict(values), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def source_state(root: Path = REPO_ROOT) -> str:
    """HEAD's commit (``git_sha``); with uncommitted changes to tracked source, ``<sha>-dirty:<digest of the diff>``,
    so two runs from the same edited tree match and runs from differently edited trees do not. Run outputs under
    ``papermill_runs/`` (other than the plans) do not count, as in ``git_sha``."""
    sha = git_sha(root)
    if not sha.endswith("-dirty"):
        return sha
    try:
        paths = changed_source(root)
        diff = subprocess.run(["git", "diff", "HEAD", "--", *paths], cwd=root, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return sha
    return f"{sha}:{hashlib.sha256(diff).hexdigest()[:12]}"


def write_record(folder: Path, notebook: str, values: Mapping[str, Any], timeout: float | None, resume: bool) -> None:
    """``runner.json`` in the notebook's scratch folder, before it runs."""
    record = {
        "notebook": notebook,
        "values_sha256": values_digest(values),
        "source": source_state(),
        "started": round(time.time(), 1),
        "timeout": timeout,
        "resume": resume,
    }
    write_text_atomic(Path(folder) / RECORD_FILE, json.dumps(record, indent=1) + "\n")


def read_record(folder: Path) -> dict[str, Any]:
    """A run folder's ``runner.json`` ({} when it has none or it does not parse)."""
    try:
        record = json.loads((Path(folder) / RECORD_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def short(source: str) -> str:
    """``abcdef1`` of a source state (``abcdef1-dirty:...`` keeps its marks)."""
    sha, _, rest = source.partition("-dirty")
    return sha[:7] + (f"-dirty{rest}" if _ else "")


def skip_reason(profile_dir: Path, notebook: str, values: Mapping[str, Any], source: str) -> tuple[bool, str]:
    """``(True, why)`` when ``--resume`` skips ``notebook`` (its run in ``profile_dir`` finished ok at these plan
    ``values`` and this ``source``), else ``(False, why it runs)``; ``why`` is a short phrase."""
    from .summary import read_status

    good = Path(profile_dir) / notebook
    if read_status(good) != "ok":
        return False, "no finished run in this folder"
    record = read_record(good)
    if not record:
        return False, f"its finished run has no {RECORD_FILE} (it predates them)"
    if record.get("values_sha256") != values_digest(values):
        return False, "its finished run had other plan values"
    if record.get("source") != source:
        return False, f"its finished run came from {short(str(record.get('source')))}, this checkout is {short(source)}"
    checkpoints = Path(profile_dir) / ".checkpoints" / notebook
    if checkpoints.is_dir() and any(checkpoints.iterdir()):
        return False, "a later attempt left checkpoints, which it goes on from"
    return True, f"finished ok at these plan values and {short(source)}"
