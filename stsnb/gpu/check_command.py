"""``stsnb run --check``'s command: the plan check (``stsnb.gpu.plan_check``) printed as text or as the Markdown tables
of docs/gpu-server.md, then, when asked, the online preflight of the plan's Hub models and data (``--online``,
``stsnb.gpu.preflight``) and the offline check of the HF cache and the data folder (``--offline``,
``stsnb.gpu.local_models``); and the refusal of a plan that requires CUDA where none is usable
(``stsnb.gpu.cuda_check``). ``--only`` checks those notebooks of the plan alone (a Slurm job that runs one).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def only_plan(plan: Any, only: Sequence[str] | None) -> Any:
    """``plan`` with only the notebooks ``only`` names (all of them when None); unknown names are
    ``stsnb.runs.plans.check_plan``'s to refuse."""
    if not only:
        return plan
    return dataclasses.replace(plan, notebooks={k: v for k, v in plan.notebooks.items() if k in only})


def run_check(
    plan: Any,
    notebooks_dir: Path,
    *,
    gpus: int | None,
    gpu_memory: float | None,
    gpu_type: str,
    calibration: Any,
    markdown: bool,
    online: bool,
    offline: bool,
) -> int:
    """Print the check of ``plan`` (and the preflight / offline check when asked); 0 when everything passed."""
    from .plan_check import check

    report = check(plan, notebooks_dir, gpus, gpu_memory, gpu_type, calibration)
    if markdown:
        print(report.markdown(), flush=True)
        if not report.ok:
            print(report.text().split("\n\n")[0], file=sys.stderr)  # the problems, not the tables again
    else:
        print(report.text(), flush=True)
    online_ok = preflight(plan, notebooks_dir) if online else True
    offline_ok = offline_check(plan, notebooks_dir) if offline else True
    return 0 if report.ok and online_ok and offline_ok else 1


def _data_dir(what: str) -> Path | None:
    from ..data import DataError, resolve_data_dir

    try:
        return resolve_data_dir()
    except DataError as err:
        print(f"{what}: {err}", flush=True)
        return None


def preflight(plan: Any, notebooks_dir: Path) -> bool:
    """``--check --online``: :mod:`stsnb.gpu.preflight` over the plan; prints its lines, returns whether all passed."""
    from . import preflight as checks

    data_dir = _data_dir("preflight")
    print("preflight (the Hub's models and datasets of the plan; no weights are downloaded):", flush=True)
    settings = checks.plan_settings(plan.path)
    result = checks.run_preflight(
        checks.plan_params(plan, notebooks_dir),
        trust_remote_code=settings["trust_remote_code"],
        pins=settings["pins"],
        data_dir=data_dir,
        say=lambda line: print(f"  {line}", flush=True),
    )
    print(result.text().splitlines()[0] + (" (data folder missing)" if data_dir is None else ""))
    return result.ok and data_dir is not None


def offline_check(plan: Any, notebooks_dir: Path) -> bool:
    """``--check --offline``: :func:`stsnb.gpu.local_models.offline_check` over the plan; prints its lines."""
    from . import local_models
    from . import preflight as checks

    data_dir = _data_dir("offline check")
    print("offline check (the HF cache and the data folder; no network):", flush=True)
    result = local_models.offline_check(
        checks.plan_params(plan, notebooks_dir),
        checks.plan_settings(plan.path)["pins"],
        data_dir,
        say=lambda line: print(f"  {line}", flush=True),
    )
    head = f"offline check: {len(result.reached)} local, {len(result.problems)} missing ({result.seconds:.0f} s)"
    tail = "; compute nodes can run with HF_HUB_OFFLINE=1" if result.ok else ""
    print(head + tail, flush=True)
    return result.ok


def cuda_refusal(profile: str, plans_dir: Path) -> str | None:
    """Why a plan that requires CUDA cannot run here (``stsnb.gpu.cuda_check``), or None."""
    from ..runs.plans import PlanError, plan_path
    from .cuda_check import plan_requires_cuda, probe, problem

    try:
        path = plan_path(profile, plans_dir)
    except PlanError:
        return None  # the runner names a plan that does not exist
    if not plan_requires_cuda(path):
        return None
    reason = problem(probe())
    if reason is None:
        return None
    return (
        f"the {profile} plan requires CUDA (`requires: [cuda]` in {path.name}), which is not usable here: {reason}. "
        "Nothing was run. `stsnb run --profile rehearsal` runs its code path on the CPU."
    )
