"""``stsnb models fetch --paper`` and ``stsnb run --check --offline``: every Hub repo a plan names put in the HF cache
before compute, and a check that it is there, so compute nodes run with ``HF_HUB_OFFLINE=1``.

The repos (``model_repos``, ``code_repos``): each Hub model the plan's notebooks name (``preflight.plan_models``) at
the commit the plan pins (``trust_remote_code:``, :mod:`stsnb.models.revisions`; main where it pins none), and each
repo its config's ``auto_map`` takes code from (``owner/repo--module.Class``) at the pinned ``code_revision``. Of a
model repo: its top-level config, tokenizer and code files and one weights format (``*.safetensors`` where the repo
has them, else ``pytorch_model*.bin``; never the TF, Flax or ONNX copies); of a code repo: its top-level ``.py`` files.
``fetch`` lists them with their sizes first (the Hub's tree listing), then downloads them with ``huggingface_hub``'s
``snapshot_download`` into the HF cache (``$HF_HOME``, ``$HF_HUB_CACHE``; ``HF_TOKEN`` and ``HF_ENDPOINT`` are read);
a second fetch finds them there.

``check_local`` reads only the cache: each model's snapshot at its revision holds its config, its weights (every
shard an index names) and a tokenizer, each code repo's snapshot the modules the ``auto_map`` names. Each miss names
the repo or file and the command that fetches it. ``offline_check`` adds the data folder: it verifies
(``stsnb.data.manifest``) and holds the ``paper/`` corpora the notebooks' parameters read, and no parameter reads a
dataset from the Hub.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..models.revisions import MAIN, UNPINNED, Pin, is_commit

FETCH_COMMAND = "stsnb models fetch --paper"
CONFIG = "config.json"
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "tokenizer.model", "vocab.json", "spiece.model")
WEIGHT_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
SETTINGS_SUFFIXES = (".json", ".txt", ".model", ".py", ".tiktoken")  # config, tokenizer and code files


@dataclass(frozen=True)
class HubRepo:
    """One repo to have locally: ``role`` "model" (weights, config, tokenizer) or "code" (another model's
    ``auto_map`` code); ``used_by``: the notebooks, or the model whose code it holds."""

    repo: str
    revision: str
    role: str
    used_by: tuple[str, ...]

    @property
    def label(self) -> str:
        at = self.revision[:12] if is_commit(self.revision) else self.revision
        what = f"code of {', '.join(self.used_by)}" if self.role == "code" else ", ".join(self.used_by)
        return f"{self.repo} at {at} [{what}]"


def plan_models_and_pins(plan: Any, notebooks_dir: Path) -> tuple[dict[str, list[str]], dict[str, Pin]]:
    """The plan's Hub models (id -> its notebooks, ``preflight.plan_models``) and the commits it pins them at."""
    from ..runs.plans import plan_pins
    from .preflight import plan_models, plan_params

    return plan_models(plan_params(plan, notebooks_dir)), plan_pins(plan.path)


def model_repos(models: Mapping[str, Sequence[str]], pins: Mapping[str, Pin]) -> list[HubRepo]:
    """The model repos: Hub id -> its notebooks (``preflight.plan_models``), each at its pinned revision."""
    return [HubRepo(m, pins.get(m, UNPINNED).revision, "model", tuple(nb)) for m, nb in sorted(models.items())]


def auto_map_references(config: Mapping[str, Any]) -> list[str]:
    """Every class reference of a config's ``auto_map`` (a tokenizer's entry is a pair, slow and fast)."""
    found: list[str] = []
    for value in (config.get("auto_map") or {}).values():
        for reference in value if isinstance(value, list | tuple) else [value]:
            if isinstance(reference, str) and reference not in found:
                found.append(reference)
    return found


def code_repos(model: HubRepo, config: Mapping[str, Any], pin: Pin) -> list[HubRepo]:
    """The other repos ``model``'s ``auto_map`` takes code from, at the revision ``pin`` gives them."""
    repos = {r.split("--")[0] for r in auto_map_references(config) if "--" in r} - {model.repo}
    return [HubRepo(repo, pin.code_at(repo, model.repo), "code", (model.repo,)) for repo in sorted(repos)]


def modules_in(repo: str, model: str, config: Mapping[str, Any]) -> list[str]:
    """The ``.py`` files of ``repo`` that ``model``'s ``auto_map`` imports (``module.Class`` -> ``module.py``)."""
    files = []
    for reference in auto_map_references(config):
        where, _, target = reference.rpartition("--")
        if (where or model) == repo and f"{target.split('.')[0]}.py" not in files:
            files.append(f"{target.split('.')[0]}.py")
    return files


def chosen_files(listing: Mapping[str, int | None], role: str) -> dict[str, int | None]:
    """Of a repo's files (path -> size), those a run reads: see the module docstring."""
    top = {path: size for path, size in listing.items() if "/" not in path}
    if role == "code":
        return {p: s for p, s in top.items() if p.endswith(".py")}
    settings = {p: s for p, s in top.items() if p.endswith(SETTINGS_SUFFIXES) and not p.endswith(".index.json")}
    safetensors = {p: s for p, s in top.items() if p.endswith(".safetensors") or p == "model.safetensors.index.json"}
    torch_bins = {p: s for p, s in top.items() if p.startswith("pytorch_model") and p.endswith((".bin", ".json"))}
    return {**settings, **(safetensors or torch_bins)}


def human(size: int | None) -> str:
    if size is None:
        return "size unknown"
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1000
    raise AssertionError


def _endpoint() -> str | None:
    return os.environ.get("HF_ENDPOINT") or None


def list_files(repo: HubRepo) -> dict[str, int | None]:
    """The files ``fetch`` takes of ``repo`` (path -> size), from the Hub's listing at its revision."""
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile

    entries = HfApi(endpoint=_endpoint()).list_repo_tree(repo.repo, revision=repo.revision)
    listing = {e.path: e.size for e in entries if isinstance(e, RepoFile)}
    files = chosen_files(listing, repo.role)
    if repo.role == "model" and CONFIG not in files:
        raise FileNotFoundError(f"{repo.repo} at {repo.revision}: no {CONFIG} at the top of the repo")
    return files


def _download(repo: HubRepo, files: Sequence[str], cache_dir: Path | None) -> Path:
    from huggingface_hub import snapshot_download

    return Path(
        snapshot_download(
            repo.repo, revision=repo.revision, allow_patterns=list(files), cache_dir=cache_dir, endpoint=_endpoint()
        )
    )


@dataclass
class FetchResult:
    fetched: list[str]
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def fetch(
    models: Mapping[str, Sequence[str]],
    pins: Mapping[str, Pin],
    *,
    say: Callable[[str], None] = print,
    cache_dir: Path | None = None,
) -> FetchResult:
    """Download every repo of the module docstring: each model's config first (to find its code repos), then the
    list of files with their sizes and the total, then the files. A repo that fails is named and the rest go on."""
    from huggingface_hub import hf_hub_download

    from .preflight import explain

    result = FetchResult([], [])
    planned: list[tuple[HubRepo, dict[str, int | None]]] = []
    for repo in model_repos(models, pins):
        try:
            files = list_files(repo)
            planned.append((repo, files))
            config_path = hf_hub_download(
                repo.repo, CONFIG, revision=repo.revision, cache_dir=cache_dir, endpoint=_endpoint()
            )
            config = json.loads(Path(config_path).read_text())
            for code in code_repos(repo, config, pins.get(repo.repo, UNPINNED)):
                if all((code.repo, code.revision) != (r.repo, r.revision) for r, _ in planned):  # shared code: once
                    planned.append((code, list_files(code)))
        except Exception as err:  # named with its repo; the others are still fetched
            result.problems.append(explain(repo.label, err, remote_code_allowed=True, url=repo.repo))
            say(f"NO  {result.problems[-1]}")
    total = sum(size or 0 for _, files in planned for size in files.values())
    say(f"{len(planned)} repos, {sum(len(f) for _, f in planned)} files, {human(total)} in all:")
    for repo, files in planned:
        say(f"  {repo.label}: {len(files)} files, {human(sum(s or 0 for s in files.values()))}")
    for repo, files in planned:
        try:
            folder = _download(repo, list(files), cache_dir)
            result.fetched.append(f"{repo.label}: {folder}")
            say(f"ok  {repo.label} in {folder}")
        except Exception as err:
            result.problems.append(explain(repo.label, err, remote_code_allowed=True, url=repo.repo))
            say(f"NO  {result.problems[-1]}")
    return result


# ----------------------------------------------------------------------------------------------------------
# the offline check


def local_snapshot(repo: HubRepo, cache_dir: Path | None = None) -> Path | None:
    """The HF cache's snapshot folder of ``repo`` at its revision (a branch through its ``refs/``), None if absent."""
    from huggingface_hub import constants

    root = Path(cache_dir or constants.HF_HUB_CACHE) / f"models--{repo.repo.replace('/', '--')}"
    commit = repo.revision
    if not is_commit(commit):
        ref = root / "refs" / commit
        if not ref.is_file():
            return None
        commit = ref.read_text().strip()
    folder = root / "snapshots" / commit
    return folder if folder.is_dir() else None


def missing_model_files(folder: Path) -> list[str]:
    """What a model snapshot lacks of its config, weights (every shard its index names) and tokenizer."""
    missing = [] if (folder / CONFIG).is_file() else [CONFIG]
    indexes = [folder / name for name in WEIGHT_INDEXES if (folder / name).is_file()]
    if indexes:
        shards = sorted(set(json.loads(indexes[0].read_text()).get("weight_map", {}).values()))
        missing += [s for s in shards if not (folder / s).is_file()]
    elif not any(p.is_file() for p in [*folder.glob("*.safetensors"), *folder.glob("pytorch_model*.bin")]):
        missing.append("weights (*.safetensors or pytorch_model*.bin)")
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        missing.append(f"a tokenizer ({' or '.join(TOKENIZER_FILES[:3])})")
    return missing


def check_local(
    models: Mapping[str, Sequence[str]],
    pins: Mapping[str, Pin],
    *,
    cache_dir: Path | None = None,
    command: str = FETCH_COMMAND,
) -> list[tuple[bool, str]]:
    """``(ok, line)`` per repo of the module docstring, from the HF cache alone (no network)."""
    lines: list[tuple[bool, str]] = []
    for repo in model_repos(models, pins):
        folder = local_snapshot(repo, cache_dir)
        if folder is None:
            lines.append((False, f"{repo.label}: not in the HF cache ({_cache_name(cache_dir)}): `{command}`"))
            continue
        missing = missing_model_files(folder)
        config = json.loads((folder / CONFIG).read_text()) if (folder / CONFIG).is_file() else {}
        missing += [m for m in modules_in(repo.repo, repo.repo, config) if not (folder / m).is_file()]
        lines.append(_line(repo, missing, command))
        for code in code_repos(repo, config, pins.get(repo.repo, UNPINNED)):
            code_folder = local_snapshot(code, cache_dir)
            if code_folder is None:
                lines.append((False, f"{code.label}: not in the HF cache ({_cache_name(cache_dir)}): `{command}`"))
                continue
            wanted = modules_in(code.repo, repo.repo, config)
            lines.append(_line(code, [m for m in wanted if not (code_folder / m).is_file()], command))
    return lines


def _line(repo: HubRepo, missing: Sequence[str], command: str) -> tuple[bool, str]:
    if missing:
        return False, f"{repo.label}: the HF cache lacks {', '.join(missing)}: `{command}`"
    return True, f"{repo.label}: in the HF cache" + ("" if repo.revision == MAIN else " at its pinned commit")


def _cache_name(cache_dir: Path | None) -> str:
    from huggingface_hub import constants

    return str(cache_dir or constants.HF_HUB_CACHE)


def offline_check(
    params_by_notebook: Mapping[str, Mapping[str, Any]],
    pins: Mapping[str, Pin],
    data_dir: Path | None,
    *,
    say: Callable[[str], None] = print,
    cache_dir: Path | None = None,
) -> Any:
    """``stsnb run --check --offline``: ``check_local`` over the plan's models, then the data folder; a
    ``preflight.Preflight`` of what is local and what is missing, each miss with the command that fetches it."""
    import time

    from ..data import manifest as data_manifest
    from .preflight import Preflight, folder_files, plan_datasets, plan_models

    started = time.perf_counter()
    result = Preflight()
    for ok, line in check_local(plan_models(params_by_notebook), pins, cache_dir=cache_dir):
        result.add(line, ok, say)
    for repo in sorted(plan_datasets(params_by_notebook)):
        readers = [f"{nb}.{name}" for nb, p in params_by_notebook.items() for name in ("nli_source", "corpus_source")
                   if p.get(name) == "hub"]  # fmt: skip
        line = (
            f"{repo} (dataset): read from the Hub at run time ({', '.join(readers)} = hub): set them to paper in the "
            "plan and run `stsnb data fetch --paper`"
        )
        result.add(line, False, say)
    if data_dir is None:
        result.add("data folder: not found: `stsnb data fetch --paper` (or set STSNB_DATA_DIR)", False, say)
    else:
        verification = data_manifest.verify(data_dir)
        result.add(f"data folder: {verification.text().splitlines()[0]}", verification.ok, say)
        for relative in folder_files(params_by_notebook):
            present = (Path(data_dir) / relative).is_file() and (Path(data_dir) / relative).stat().st_size > 0
            result.add(
                f"data folder: {relative}" + ("" if present else " missing: `stsnb data fetch --paper`"), present, say
            )
    result.seconds = time.perf_counter() - started
    return result
