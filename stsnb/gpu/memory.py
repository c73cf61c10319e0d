"""Peak memory of a piece of training, measured in a fresh process so that one measurement's peak is not the next's.

``measure_in_fresh_process("package.module:function", kwargs)`` runs ``function(**kwargs)`` in a new Python
interpreter and returns the JSON-able dict it returns. Inside that function, ``PeakMemory`` measures:

- on a GPU, ``torch.cuda.max_memory_allocated`` during the measured block (tensors only: weights, gradients,
  optimizer state, activations) with ``memory_allocated`` before it as the baseline;
- on a CPU, the process's peak resident set size during the block (Linux ``VmHWM``, reset through
  ``/proc/self/clear_refs`` so that the transient peak of loading does not count) with ``VmRSS`` before it as the
  baseline. Where the high-water mark cannot be reset, the lifetime peak (``ru_maxrss``) is used and ``measure``
  says so.

``peak - baseline`` is what the measured block added.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def status_bytes(field: str) -> int | None:
    """A ``kB`` field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``) in bytes, None where there is no procfs."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def reset_peak_rss() -> bool:
    """Reset the resident-set high-water mark (``VmHWM``); False where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        return False
    return status_bytes("VmHWM") is not None


def lifetime_peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


@dataclass
class PeakMemory:
    """``with PeakMemory(cuda) as peak: ...`` then ``peak.baseline_bytes``, ``peak.peak_bytes``, ``peak.measure``."""

    cuda: bool
    baseline_bytes: int = 0
    peak_bytes: int = 0
    measure: str = ""
    _resettable: bool = False

    def __enter__(self) -> PeakMemory:
        if self.cuda:
            import torch

            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self.baseline_bytes = torch.cuda.memory_allocated()
        else:
            self._resettable = reset_peak_rss()
            rss = status_bytes("VmRSS") if self._resettable else None
            self.baseline_bytes = rss if rss is not None else lifetime_peak_rss_bytes()
        return self

    def __exit__(self, *exc) -> None:
        if self.cuda:
            import torch

            torch.cuda.synchronize()
            self.peak_bytes, self.measure = torch.cuda.max_memory_allocated(), "cuda max_memory_allocated"
        elif self._resettable:
            self.peak_bytes, self.measure = status_bytes("VmHWM") or 0, "peak RSS during training (VmHWM)"
        else:
            self.peak_bytes = lifetime_peak_rss_bytes()
            self.measure = "lifetime peak RSS (ru_maxrss; VmHWM not resettable)"

    @property
    def added_bytes(self) -> int:
        return self.peak_bytes - self.baseline_bytes


def measure_in_fresh_process(target: str, kwargs: dict[str, Any], timeout: float = 900.0) -> dict[str, Any]:
    """Run ``target`` (``"package.module:function"``) with ``kwargs`` in a new interpreter; return its dict."""
    module, _, function = target.partition(":")
    if not module or not function:
        raise ValueError(f"target must look like 'package.module:function', got {target!r}")
    env = {**os.environ, "TQDM_DISABLE": "1"}
    completed = subprocess.run(
        [sys.executable, "-m", "stsnb.gpu.memory", target, json.dumps(kwargs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    if completed.returncode != 0:
        out_of_memory = ("OutOfMemoryError", "MemoryError", "can't allocate memory")  # CUDA, Python, CPU allocator
        if any(text in completed.stderr for text in out_of_memory) or completed.returncode == -9:
            # a measured out-of-memory is a result (stsnb.runs.Run.attempt records it), not a crash
            raise MemoryError(f"{target}({kwargs}) ran out of memory in its own process:\n{completed.stderr[-1500:]}")
        raise RuntimeError(f"{target}({kwargs}) failed in its own process:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    """``python -m stsnb.gpu.memory package.module:function '{"json": "kwargs"}'``: print the function's dict as
    JSON."""
    target, kwargs = argv if argv is not None else sys.argv[1:3]
    module, _, function = target.partition(":")
    result = getattr(importlib.import_module(module), function)(**json.loads(kwargs))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
