#!/usr/bin/env bash
# Print PyTorch's wheel index for this machine's NVIDIA driver: the newest CUDA build (of those PyTorch publishes for
# the torch range in pyproject.toml) that the driver's CUDA version can run: STSNB_CUDA=X.Y where the GPUs are
# elsewhere (a cluster's login node: scripts/setup.sh --cuda X.Y sets it), else nvidia-smi's "CUDA Version: X.Y".
# TORCH_INDEX_URL overrides it; STSNB_TORCH_CUDA_BUILDS the list of builds tried (newest first). Exit 1, printing
# nothing, when there is no driver or no build fits. scripts/setup.sh uses it; tests/test_environment.py tests it.
set -euo pipefail
if [ -n "${TORCH_INDEX_URL:-}" ]; then echo "$TORCH_INDEX_URL"; exit 0; fi
if [ -n "${STSNB_CUDA:-}" ]; then
  driver=$(echo "$STSNB_CUDA" | sed -n 's/^\([0-9][0-9]*\)\.\([0-9][0-9]*\)$/\1 \2/p')
else
  driver=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p' | head -n 1 || true)
fi
[ -n "$driver" ] || exit 1
read -r major minor <<<"$driver"
# CUDA's minor-version compatibility: a driver that reports CUDA 12.x (so 525 or newer) runs any 12.y build, and
# torch >= 2.6 (pyproject.toml: older torch refuses the .bin weights transformers loads) has no build below cu124.
if [ -z "${STSNB_TORCH_CUDA_BUILDS:-}" ] && [ "$major" -eq 12 ] && [ "$minor" -lt 6 ]; then
  echo "https://download.pytorch.org/whl/cu126"
  exit 0
fi
for build in ${STSNB_TORCH_CUDA_BUILDS:-cu130 cu129 cu128 cu126 cu124 cu118}; do
  digits=${build#cu}
  build_major=${digits:0:$((${#digits} - 1))}
  build_minor=${digits: -1}
  if [ "$build_major" -lt "$major" ] || { [ "$build_major" -eq "$major" ] && [ "$build_minor" -le "$minor" ]; }; then
    echo "https://download.pytorch.org/whl/$build"
    exit 0
  fi
done
exit 1
