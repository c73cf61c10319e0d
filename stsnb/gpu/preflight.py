"""``stsnb run --check --online``: reach every model and dataset a plan needs before hours of compute.

For each Hub model of the plan (every parameter naming a model, ``plan_check.MODEL_PARAMETER``): its config and
tokenizer are fetched through ``transformers`` (so through ``huggingface_hub``, with ``HF_TOKEN`` and
``HF_ENDPOINT``), a gated repo is named with what to do, and a model with remote code (``auto_map`` in its config)
is imported, which is where a package the remote code needs (``einops``) shows up. Remote code is run only for the
models the plan lists under ``trust_remote_code``, at the commits it pins there: each is built with one layer and
run on two sentences (:mod:`stsnb.gpu.remote_code`), which is where an API transformers removed shows up. A model
whose weights are ``.bin`` only is named when the installed torch is older than 2.6 (transformers would refuse them
hours into a run, :func:`bin_only_problem`). For each
Hub dataset a notebook's parameters ask for (``nli_source: hub``, ``corpus_source: hub``) the files it reads are
resolved. The data folder is verified against the manifest (:mod:`stsnb.data.manifest`), with the ``paper/``
corpora the parameters read from it (``nli_source: paper``, ...). Weights are not downloaded.
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data import manifest as data_manifest
from ..models.revisions import MAIN, UNPINNED, Pin
from . import plan_check

# what a notebook parameter value of "hub" reads: dataset repo -> file patterns (the loaders in stsnb.data)
HUB_DATASETS_OF = {
    "nli_source": {"stanfordnlp/snli": ("*train*.parquet",), "nyu-mll/multi_nli": ("*train*.parquet",)},
    "corpus_source": {"princeton-nlp/datasets-for-simcse": ("wiki1m_for_simcse.txt",)},
}

# what a notebook parameter value reads from the data folder beyond the default tables (`stsnb data fetch --paper`)
FOLDER_FILES_OF = {
    ("nli_source", "simcse"): ("paper/nli_for_simcse.csv",),
    ("nli_source", "paper"): ("paper/snli_train.csv", "paper/multinli_train.csv"),
    ("corpus_source", "paper"): ("paper/wiki1m_for_simcse.txt",),
}


@dataclass
class Preflight:
    """What was reached and what was not: one line per problem, naming the model or dataset and the fix."""

    reached: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, line: str, ok: bool, say: Callable[[str], None]) -> None:
        """One line, reached or a problem, said as it is found."""
        (self.reached if ok else self.problems).append(line)
        say(f"{'ok' if ok else 'NO'}  {line}")

    def text(self) -> str:
        head = f"preflight: {len(self.reached)} reached, {len(self.problems)} problems ({self.seconds:.0f} s)"
        return "\n".join([head, *(f"  ok  {r}" for r in self.reached), *(f"  NO  {p}" for p in self.problems)])


def plan_models(params_by_notebook: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """Hub model id -> the notebooks that use it (packaged names and local folders are not on the Hub; parameters
    named ``paper_*`` are the paper's row labels, not models)."""
    from ..models.loading import KNOWN_MODELS

    used: dict[str, list[str]] = {}
    for notebook, params in params_by_notebook.items():
        for name, value in params.items():
            if name.startswith("paper_"):
                continue
            for model in plan_check._model_values(name, value):
                if model in KNOWN_MODELS or Path(model).expanduser().is_dir() or model.startswith("tiny-random-"):
                    continue
                if notebook not in used.setdefault(model, []):
                    used[model].append(notebook)
    return used


def plan_datasets(params_by_notebook: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[str, ...]]:
    """Hub dataset repo -> the file patterns the plan's ``*_source: hub`` parameters read."""
    wanted: dict[str, tuple[str, ...]] = {}
    for params in params_by_notebook.values():
        for name, repos in HUB_DATASETS_OF.items():
            if params.get(name) == "hub":
                for repo, patterns in repos.items():
                    wanted[repo] = tuple(sorted({*wanted.get(repo, ()), *patterns}))
    return wanted


def folder_files(params_by_notebook: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The data folder's files (``paper/...``) the notebooks' parameters read (``FOLDER_FILES_OF``), in order."""
    wanted: list[str] = []
    for (name, value), files in FOLDER_FILES_OF.items():
        if any(params.get(name) == value for params in params_by_notebook.values()):
            wanted += [f for f in files if f not in wanted]
    return wanted


def _run_remote_code(model: str, pin: Pin, where: str, result: Preflight, say: Callable[[str], None]) -> None:
    """The model built with one layer and run (:mod:`stsnb.gpu.remote_code`): one line, reached or a problem."""
    from .remote_code import run_remote_code

    try:
        result.add(run_remote_code(model, pin) + where, True, say)
    except Exception as err:  # reported with its model and exception; the check goes on
        cause = err.__cause__ or err
        missing = isinstance(cause, ImportError) and "requires the following packages" in str(cause)
        line = explain(model, cause, remote_code_allowed=True) if missing else str(err)
        result.add(line + where, False, say)


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0][:300] if text else ''}"


def explain(model: str, err: BaseException, *, remote_code_allowed: bool, url: str | None = None) -> str:
    """One line naming the model (or dataset), what failed and the fix."""
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    chain = []
    while err is not None and err not in chain:
        chain.append(err)
        err = err.__cause__ or err.__context__  # type: ignore[assignment]
    for cause in chain:
        if isinstance(cause, GatedRepoError):
            return (
                f"{model}: gated on the Hub. Accept its licence at https://huggingface.co/{url or model} while "
                "logged in, then `hf auth login` (or export HF_TOKEN) on this machine"
            )
        if isinstance(cause, RepositoryNotFoundError):
            return f"{model}: not found on the Hub (a typo, or a private repo: `hf auth login`)"
        if isinstance(cause, ImportError) and "requires the following packages" in str(cause):
            return f"{model}: its remote code needs packages that are not installed ({_first_line(cause)})"
    first = chain[0]
    if "trust_remote_code" in str(first) and not remote_code_allowed:
        return (
            f"{model}: needs the Hub's remote code, which the plan does not allow: add it under "
            "`trust_remote_code:` in the plan after reading that code"
        )
    return f"{model}: {_first_line(first)}"


def check_model(model: str, *, remote_code_allowed: bool, pin: Pin = UNPINNED) -> tuple[str, bool]:
    """Fetch config and tokenizer at ``pin``; import the remote model class. Returns what was reached and whether the
    model has remote code (``auto_map``); raises on a problem."""
    from transformers import AutoConfig, AutoTokenizer

    config = AutoConfig.from_pretrained(model, trust_remote_code=remote_code_allowed, **pin.kwargs())
    auto_map = getattr(config, "auto_map", None) or {}
    AutoTokenizer.from_pretrained(model, trust_remote_code=remote_code_allowed, **pin.kwargs())
    at = "" if pin.revision == MAIN else f" at {pin.revision[:12]}"
    reached = f"{model}: config ({config.model_type}) and tokenizer{at}"
    if auto_map:
        from transformers.dynamic_module_utils import get_class_from_dynamic_module

        from .remote_code import code_repo

        reference = auto_map.get("AutoModel") or next(iter(auto_map.values()))
        code_revision = pin.code_at(code_repo(reference, model), model)
        cls = get_class_from_dynamic_module(reference, model, revision=pin.revision, code_revision=code_revision)
        reached += f", remote code {cls.__name__} imported"
    return reached, bool(auto_map)


SAFE_LOAD_TORCH = (2, 6)  # transformers refuses torch.load of .bin weights under an older torch (CVE-2025-32434)


def bin_only_problem(model: str, files: Iterable[str], torch_version: str) -> str | None:
    """Why ``model`` would fail to load hours into a run: its repo holds its weights only as ``.bin`` (no
    ``.safetensors``) and the installed torch is older than 2.6, under which transformers refuses ``torch.load``;
    None when it loads."""
    names = list(files)
    has_bin = any(n.endswith(".bin") and "pytorch_model" in n for n in names)
    if not has_bin or any(n.endswith(".safetensors") for n in names):
        return None
    numbers = tuple(int(part) for part in torch_version.split("+")[0].split(".")[:2] if part.isdigit())
    if numbers >= SAFE_LOAD_TORCH:
        return None
    return (
        f"{model}: its weights are .bin only, which transformers refuses to load under torch {torch_version} "
        "(older than 2.6, a security fix); install torch >= 2.6 (scripts/torch_index.sh picks the CUDA index)"
    )


def check_weights_format(model: str, pin: Pin) -> str | None:
    """:func:`bin_only_problem` for the repo's files at ``pin`` (listed, not downloaded)."""
    import torch
    from huggingface_hub import HfApi

    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    files = HfApi(endpoint=endpoint).list_repo_files(model, revision=None if pin.revision == MAIN else pin.revision)
    return bin_only_problem(model, files, torch.__version__)


def check_dataset(repo: str, patterns: Sequence[str]) -> str:
    """Every pattern resolves to a file of the dataset repo, and that file answers a metadata request."""
    from huggingface_hub import HfApi, get_hf_file_metadata, hf_hub_url

    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    files = HfApi(endpoint=endpoint).list_repo_files(repo, repo_type="dataset")
    found = []
    for pattern in patterns:
        matches = sorted(f for f in files if fnmatch.fnmatch(f, pattern))
        if not matches:
            raise FileNotFoundError(f"no file matching {pattern!r} in the dataset {repo}")
        for name in matches:
            get_hf_file_metadata(hf_hub_url(repo, name, repo_type="dataset", endpoint=endpoint), endpoint=endpoint)
        found += matches
    return f"{repo} (dataset): {', '.join(found)}"


def plan_params(plan: Any, notebooks_dir: Path) -> dict[str, dict[str, Any]]:
    """Each notebook's parameters under the plan: its parameters cell's defaults with the plan's values over them."""
    import papermill

    params = {}
    for name, overrides in plan.notebooks.items():
        notebook = Path(notebooks_dir) / f"{name}.ipynb"
        if notebook.is_file():
            params[name] = plan_check.effective_params(papermill.inspect_notebook(str(notebook)), overrides)
    return params


def plan_settings(plan_path: Path) -> dict[str, Any]:
    """The plan file's top-level settings this module reads: ``trust_remote_code`` (the ids) and ``pins`` (id ->
    ``Pin``, the commits it pins them at)."""
    from ..runs.plans import plan_pins

    pins = plan_pins(plan_path)
    return {"trust_remote_code": list(pins), "pins": pins}


def run_preflight(
    params_by_notebook: Mapping[str, Mapping[str, Any]],
    *,
    trust_remote_code: Iterable[str] = (),
    data_dir: Path | None = None,
    say: Callable[[str], None] = print,
    pins: Mapping[str, Pin] | None = None,
) -> Preflight:
    """Every check of the module docstring; ``say`` gets one line per model or dataset as it is reached. ``pins``:
    the commits the plan pins (``plan_settings``), else main."""
    started = time.perf_counter()
    result = Preflight()
    allowed, pins = set(trust_remote_code), dict(pins or {})
    for model, notebooks in sorted(plan_models(params_by_notebook).items()):
        where = f" [{', '.join(notebooks)}]"
        pin = pins.get(model, UNPINNED)
        try:
            line, remote = check_model(model, remote_code_allowed=model in allowed, pin=pin)
            result.add(line + where, True, say)
        except Exception as err:  # every failure is reported with its model, none stops the others
            result.add(explain(model, err, remote_code_allowed=model in allowed) + where, False, say)
            continue
        try:
            refused = check_weights_format(model, pin)
        except Exception:  # listing the files is a convenience: the config and tokenizer were reached
            refused = None
        if refused:
            result.add(refused + where, False, say)
        if remote and model in allowed:
            _run_remote_code(model, pin, where, result, say)
    for repo, patterns in sorted(plan_datasets(params_by_notebook).items()):
        try:
            result.add(check_dataset(repo, patterns), True, say)
        except Exception as err:
            result.add(explain(f"{repo} (dataset)", err, remote_code_allowed=False, url=f"datasets/{repo}"), False, say)
    if data_dir is not None:
        verification = data_manifest.verify(data_dir)
        result.add(f"data folder: {verification.text().splitlines()[0]}", verification.ok, say)
        for relative in folder_files(params_by_notebook):
            present = (Path(data_dir) / relative).is_file()
            line = f"data folder: {relative}" + ("" if present else " missing: `stsnb data fetch --paper`")
            result.add(line, present, say)
    result.seconds = time.perf_counter() - started
    return result
