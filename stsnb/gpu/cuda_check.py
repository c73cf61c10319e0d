"""No silent CPU: a plan that declares ``requires: [cuda]`` (the paper plan) is refused in seconds where CUDA is not
usable, instead of training for days in fp32 on the CPU.

The probe runs ``torch.cuda`` in a short child process, so neither the runner nor any kernel initialises CUDA (a
process that did cannot fork workers safely), and reads the driver's CUDA version from ``nvidia-smi``. The reason
names the likely cause: no driver, a CPU build of torch, or a torch built for a newer CUDA than the driver runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

PROBE = (
    "import json, torch\n"
    "print(json.dumps({'torch': torch.__version__, 'built_for': torch.version.cuda, "
    "'available': torch.cuda.is_available(), 'devices': torch.cuda.device_count()}))\n"
)
HOW_TO_FIX = "docs/gpu-server.md, section 'The CUDA environment'; `bash scripts/setup.sh` on the GPU machine"


@dataclass(frozen=True)
class CudaState:
    torch: str
    built_for: str | None  # the CUDA version torch was built for (None: a CPU build)
    available: bool
    devices: int
    driver_cuda: str | None  # the highest CUDA version the driver supports (nvidia-smi), None without a driver


def driver_cuda_version() -> str | None:
    """``CUDA Version: X.Y`` from ``nvidia-smi`` (None when there is no NVIDIA driver)."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"CUDA Version:\s*([0-9]+\.[0-9]+)", out)
    return match.group(1) if match else None


def probe() -> CudaState:
    """What torch sees, asked in a child process."""
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"torch could not be imported to check CUDA: {done.stderr.strip().splitlines()[-1:]}")
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    return CudaState(seen["torch"], seen["built_for"], seen["available"], seen["devices"], driver_cuda_version())


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def problem(state: CudaState) -> str | None:
    """Why CUDA is not usable, with the likely cause and the fix; None when it is."""
    if state.available and state.devices > 0:
        return None
    if state.driver_cuda is None:
        return f"no NVIDIA driver (nvidia-smi not found or silent); torch {state.torch} sees no GPU"
    if state.built_for is None:
        return (
            f"torch {state.torch} is a CPU build, on a machine whose driver runs CUDA {state.driver_cuda}: install a "
            f"CUDA build of torch ({HOW_TO_FIX})"
        )
    if _version(state.built_for) > _version(state.driver_cuda):
        return (
            f"torch {state.torch} was built for CUDA {state.built_for}, newer than the driver's CUDA "
            f"{state.driver_cuda}: install a torch build for CUDA <= {state.driver_cuda}, or update the driver "
            f"({HOW_TO_FIX})"
        )
    return (
        f"torch {state.torch} (CUDA {state.built_for}) sees no usable GPU although the driver runs CUDA "
        f"{state.driver_cuda}: check CUDA_VISIBLE_DEVICES and `nvidia-smi` ({HOW_TO_FIX})"
    )


def plan_requires_cuda(plan_path: str | os.PathLike[str]) -> bool:
    """``requires: [cuda]`` in the plan file itself (``plans.plan_file_setting``: the rehearsal does not inherit it)."""
    from ..runs.plans import plan_file_setting

    return "cuda" in plan_file_setting(Path(plan_path), "requires", [])
