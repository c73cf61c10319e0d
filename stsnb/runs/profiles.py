"""A profile chosen inside the notebook: the parameters cell's ``profile`` applies that plan's values.

The parameters cell holds the ``class`` profile's values, and ``profile = "class"`` is its default: opening a
notebook in JupyterLab and running all cells runs the class profile (each training notebook in a few minutes) with
exactly the values the reader sees (``CELL_PROFILE``: its plan names no value but the profile). The notebook's first
setup line calls ``apply(globals(), name)``, which puts the values of ``papermill_runs/plans/NAME.yaml`` into the
notebook, so nobody types YAML into a cell: ``profile = "cpu"`` gives the cpu profile's larger settings.
``stsnb run --profile NAME`` injects a plan's values through papermill, its
``profile`` among them (every plan names the profile of each notebook that has the parameter: ``plans.check_plan``).
Values the plan does not name stay as the cell has them. Applying a plan twice (papermill, then this) changes
nothing, so a batch run and a JupyterLab run of one profile run the same values.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from . import plans

CELL_PROFILE = "class"  # the profile whose values the parameters cell holds: applying it changes nothing
NOTEBOOK_DEFAULT = "class"  # the parameters cell's ``profile``: what a notebook opened in JupyterLab runs
CPU_NOTEBOOK_BUDGET_SECONDS = 45 * 60  # the cpu profile's goal for one training notebook on 2 cores (DESIGN.md)


def apply(namespace: MutableMapping[str, Any], notebook: str, plans_dir: Path = plans.PLANS_DIR) -> dict[str, Any]:
    """Set the values that ``namespace["profile"]``'s plan gives ``notebook`` (``CELL_PROFILE``'s for a namespace
    without ``profile``); return those that changed (nothing for ``CELL_PROFILE``: the cell's own values).

    Raises ``plans.PlanError`` for a profile without a plan (naming the profiles there are) and for a plan value
    the notebook's parameters cell does not define (a typo would otherwise be a silent new variable)."""
    profile = namespace.get("profile", CELL_PROFILE)
    plan = plans.load_plan(plans.plan_path(str(profile), plans_dir))
    if notebook not in plan.notebooks:
        raise plans.PlanError(f"profile {profile!r}: {plan.path.name} has no entry for {notebook}")
    values = plan.notebooks[notebook]
    unknown = sorted(set(values) - set(namespace))
    if unknown:
        raise plans.PlanError(f"profile {profile!r}: {plan.path.name} sets {unknown}, not parameters of {notebook}")
    changed = {key: value for key, value in values.items() if namespace[key] != value}
    namespace.update(values)
    return changed


def describe(profile: str, changed: dict[str, Any]) -> str:
    """One line for the notebook: which profile runs and what it changed in the parameters cell."""
    if not changed and profile == CELL_PROFILE:
        return f"profile {profile!r}: the parameters cell's values"
    if not changed:
        return f"profile {profile!r}: its plan's values (already set)"
    return f"profile {profile!r}: {len(changed)} values from its plan: " + ", ".join(
        f"{key}={value!r}" for key, value in changed.items()
    )


def use(namespace: MutableMapping[str, Any], notebook: str, plans_dir: Path = plans.PLANS_DIR) -> None:
    """``apply`` then print ``describe``'s line: the notebook's first setup statement, before ``runs.start`` (it
    leaves no new variable behind, so ``runs.collect_params`` records exactly the parameters)."""
    changed = apply(namespace, notebook, plans_dir)
    print(describe(str(namespace.get("profile", CELL_PROFILE)), changed))
