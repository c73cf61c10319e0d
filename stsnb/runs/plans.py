"""The plans of ``stsnb run``: loading one, ``extends``, and checking its parameters against each notebook's
parameters cell, before anything runs.

A plan is ``papermill_runs/plans/<profile>.yaml``::

    description: what the profile is for and the hardware it assumes (no runtimes: summary.md has the measured ones)
    timeout: 3600                   # optional: seconds each notebook may run (null or absent: no limit)
    timeouts: {20_sts_regression: 7200}  # optional: per-notebook limits that replace ``timeout``
    checkpoints: true               # optional: every training run checkpoints, so ``stsnb run --resume`` can go on
    notebooks:                      # executed in this order
      00_contrastive_ceiling: {}    # no overrides: the parameters cell's values (those of the class profile)
      20_sts_regression:            # only what differs from the notebook's parameters cell
        profile: cpu                # required where the cell declares profile (its default "class": JupyterLab's)
        epochs: 1

``stsnb.runs.execution`` runs a plan's notebooks into ``<out>/<profile>/`` (``DEFAULT_OUT``: ``papermill_runs/``) and
``stsnb.runs.summary`` writes its summary.md from the run folders.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .context import REPO_ROOT

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
PLANS_DIR = REPO_ROOT / "papermill_runs" / "plans"
DEFAULT_OUT = REPO_ROOT / "papermill_runs"


class PlanError(ValueError):
    """A plan (or --only) that cannot run as written; raised before any notebook starts."""


@dataclass(frozen=True)
class Plan:
    profile: str
    path: Path
    description: str
    notebooks: dict[str, dict[str, Any]]  # notebook name -> parameter overrides, in execution order
    timeouts: dict[str, float | None] = field(default_factory=dict)  # notebook -> seconds it may run (None: no limit)
    checkpoints: bool = False  # every training run checkpoints (``stsnb run --resume`` continues a killed run)


def plan_path(profile: str, plans_dir: Path = PLANS_DIR) -> Path:
    path = Path(plans_dir) / f"{profile}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in Path(plans_dir).glob("*.yaml"))
        raise PlanError(f"no plan for profile {profile!r}: {path} does not exist (profiles: {', '.join(known)})")
    return path


def load_plan(path: Path, _extending: tuple[Path, ...] = ()) -> Plan:
    """Read and shape-check a plan file (parameters are checked against the notebooks by ``check_plan``).

    ``extends: <profile>`` starts from that plan in the same folder: its notebooks, in its order, each with its
    values and this plan's values on top (a notebook this plan names that the base lacks is refused); this plan's
    ``timeout`` and ``timeouts`` apply when given, else the base's. The ``rehearsal`` plan is the ``paper`` plan
    with smaller models and data, so the two cannot drift apart."""
    path = Path(path)
    if path.resolve() in _extending:
        raise PlanError(f"{path}: 'extends' forms a cycle ({' -> '.join(p.stem for p in _extending)} -> {path.stem})")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise PlanError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(raw, dict) or not isinstance(raw.get("notebooks"), dict):
        raise PlanError(f"{path}: expected a mapping with 'description' and 'notebooks: {{name: {{param: value}}}}'")
    base = None
    if raw.get("extends") is not None:
        base = load_plan(plan_path(str(raw["extends"]), path.parent), (*_extending, path.resolve()))
    notebooks: dict[str, dict[str, Any]] = {
        name: dict(values) for name, values in (base.notebooks if base else {}).items()
    }
    for name, overrides in raw["notebooks"].items():
        if overrides is None:
            overrides = {}
        if not isinstance(overrides, dict):
            raise PlanError(f"{path}: notebook {name}: overrides must be a mapping of parameter -> value")
        if base is not None and str(name) not in base.notebooks:
            raise PlanError(f"{path}: notebook {name} is not in the plan it extends ({base.path.name})")
        notebooks[str(name)] = {**notebooks.get(str(name), {}), **overrides}
    if base is not None and "timeout" not in raw:
        raw = {**raw, "timeout": None, "timeouts": {**base.timeouts, **(raw.get("timeouts") or {})}}
    default = _timeout(raw.get("timeout"), f"{path}: timeout")
    per_notebook = raw.get("timeouts") or {}
    if not isinstance(per_notebook, dict):
        raise PlanError(f"{path}: timeouts must be a mapping of notebook -> seconds")
    unknown = sorted(set(per_notebook) - set(notebooks))
    if unknown:
        raise PlanError(f"{path}: timeouts names notebooks the plan does not run: {unknown}")
    timeouts = {name: _timeout(per_notebook.get(name, default), f"{path}: timeouts.{name}") for name in notebooks}
    checkpoints = raw.get("checkpoints", base.checkpoints if base is not None else False)
    if not isinstance(checkpoints, bool):
        raise PlanError(f"{path}: checkpoints must be true or false, got {checkpoints!r}")
    return Plan(path.stem, path, str(raw.get("description", "")).strip(), notebooks, timeouts, checkpoints)


def _timeout(value: Any, where: str) -> float | None:
    """Seconds a notebook may run (see ``execution.execute``); None or absent: no limit."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise PlanError(f"{where}: expected a positive number of seconds, got {value!r}")
    return float(value)


def check_plan(plan: Plan, notebooks_dir: Path = NOTEBOOKS_DIR, only: Sequence[str] | None = None) -> list[str]:
    """The notebooks to run, after refusing unknown notebooks, parameters a notebook does not declare, and a plan
    entry without ``profile`` for a notebook that declares it (its cell's default, ``"class"``, would otherwise
    apply the class plan under this one: ``stsnb.runs.profiles``)."""
    import papermill

    problems = []
    for name in only or ():
        if name not in plan.notebooks:
            problems.append(f"--only {name}: not a notebook of {plan.path} (it has: {', '.join(plan.notebooks)})")
    selected = [name for name in plan.notebooks if not only or name in only]
    for name in plan.notebooks:
        notebook = Path(notebooks_dir) / f"{name}.ipynb"
        if not notebook.is_file():
            problems.append(f"{plan.path}: notebook {name}: {notebook} does not exist")
            continue
        try:
            declared = papermill.inspect_notebook(str(notebook))
        except ValueError as err:  # e.g. no kernelspec in its metadata
            problems.append(f"{plan.path}: notebook {name}: papermill cannot read its parameters: {err}")
            continue
        if "profile" in declared and "profile" not in plan.notebooks[name]:
            problems.append(
                f"{plan.path}: notebook {name}: sets no 'profile' (its parameters cell's default is the class "
                f"profile's; add profile: {plan.profile} for this plan's values over the cell's)"
            )
        for parameter in plan.notebooks[name]:
            if parameter in declared:
                continue
            if parameter in assigned_parameters(notebook):
                why = "is assigned on a line papermill cannot parse (a second '=', e.g. in its comment)"
            else:
                why = f"is not declared in its parameters cell (declared: {', '.join(declared) or 'none'})"
            problems.append(f"{plan.path}: notebook {name}: parameter {parameter!r} {why}")
    if problems:
        raise PlanError("the plan cannot run as written:\n  " + "\n  ".join(problems))
    return selected


def assigned_parameters(notebook: Path) -> list[str]:
    """Names the ``parameters``-tagged cell assigns, read with ``ast`` (papermill's own parser skips any line
    holding a second ``=``, so a parameter it misses cannot be overridden)."""
    import nbformat

    names: list[str] = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            for statement in ast.parse(cell.source).body:
                if isinstance(statement, ast.Assign):
                    names += [target.id for target in statement.targets if isinstance(target, ast.Name)]
                elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                    names.append(statement.target.id)
    return names


def parameter_values(notebook: Path) -> dict[str, Any]:
    """What the ``parameters``-tagged cell assigns, by name: the values a notebook opened in JupyterLab runs (those of
    the ``class`` profile, ``stsnb.runs.profiles``). Each value must be a literal (``ast.literal_eval``)."""
    import nbformat

    values: dict[str, Any] = {}
    for cell in nbformat.read(notebook, as_version=4).cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            for statement in ast.parse(cell.source).body:
                if isinstance(statement, ast.Assign) and statement.value is not None:
                    for target in statement.targets:
                        if isinstance(target, ast.Name):
                            values[target.id] = ast.literal_eval(statement.value)
    return values


def plan_file_setting(path: Path, key: str, default: Any = None) -> Any:
    """A top-level setting of the plan file itself, not inherited through ``extends`` (``requires``,
    ``trust_remote_code``: the rehearsal extends the paper plan but runs on the CPU, with tiny models)."""
    raw = yaml.safe_load(Path(path).read_text()) or {}
    return raw.get(key) or default


def plan_pins(path: Path) -> dict[str, Any]:
    """Hub id -> ``stsnb.models.revisions.Pin``: the commits the plan file's ``trust_remote_code:`` pins its models at
    (a list of ids pins none; not inherited through ``extends``). A malformed pin is a ``PlanError`` naming it."""
    from ..models.revisions import PinError, parse

    try:
        return parse(plan_file_setting(path, "trust_remote_code"), f"{path}: trust_remote_code")
    except PinError as err:
        raise PlanError(str(err)) from err
