"""Peak memory of a few training steps, each measured in a fresh process (STS-Regression Section 4.3, Table 4).

Two methods at a given batch size and cutoff length, on real SNLI sentences padded to exactly ``max_length``
tokens (the official scripts pad to ``max_length``, so the cutoff is the sequence length):

- ``"regression"``: ours. Both sentences of each pair through the shared encoder, the head on ``(u, v, |u-v|)``,
  Smooth K2 (Section 3.1): ``2 x batch`` sequences per step.
- ``"infonce"``: supervised SimCSE. Anchor, entailment and contradiction through the encoder, InfoNCE with
  in-batch and hard negatives (Eq. 3; SimCSE's Table 4 setting): ``3 x batch`` sequences per step.

What is measured: after loading the model and one tiny warm-up step (see ``_train_steps``), on a GPU
``torch.cuda.max_memory_allocated`` during training (tensors only: weights, gradients, AdamW state, activations)
with ``memory_allocated`` before it as ``baseline``; on a CPU the process's peak resident set size during training
(Linux ``VmHWM``, reset through ``/proc/self/clear_refs`` so that the transient peak of loading does not count;
Python, the libraries and the weights are in it) with the resident set size before it (``VmRSS``) as ``baseline``.
``peak - baseline`` is what the training batch added. Where the high-water mark cannot be reset, the lifetime peak
(``ru_maxrss``) is used and ``measure`` says so. A fresh process per run keeps one run's peak out of the next.

Run one measurement by hand: ``python -m stsnb.memory '{"method": "regression", "model": "minilm-l6"}'``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

Method = Literal["regression", "infonce"]
METHODS: tuple[Method, ...] = ("regression", "infonce")


@dataclass(frozen=True)
class MemoryRun:
    method: Method
    model: str = "minilm-l6"
    batch_size: int = 16
    max_length: int = 256
    steps: int = 2


@dataclass(frozen=True)
class MemoryReport:
    run: MemoryRun
    device: str
    measure: str  # what peak_bytes is: peak RSS during training (CPU) or cuda max_memory_allocated (GPU)
    baseline_bytes: int  # after loading the model, before training
    peak_bytes: int
    sequences_per_step: int

    @property
    def training_bytes(self) -> int:
        return self.peak_bytes - self.baseline_bytes

    def row(self) -> dict:
        return {
            **asdict(self.run),
            "device": self.device,
            "measure": self.measure,
            "sequences_per_step": self.sequences_per_step,
            "baseline_mb": self.baseline_bytes / 2**20,
            "peak_mb": self.peak_bytes / 2**20,
            "training_mb": self.training_bytes / 2**20,
        }


def measure(run: MemoryRun, timeout: float = 900.0) -> MemoryReport:
    """Run ``run`` in a fresh Python process and return its memory figures."""
    if run.method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {run.method!r}")
    env = {**os.environ, "TQDM_DISABLE": "1"}
    completed = subprocess.run(
        [sys.executable, "-m", "stsnb.memory", json.dumps(asdict(run))],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"memory run {run} failed:\n{completed.stderr[-3000:]}")
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    return MemoryReport(
        run,
        result["device"],
        result["measure"],
        result["baseline_bytes"],
        result["peak_bytes"],
        result["sequences_per_step"],
    )


def _status_bytes(field: str) -> int | None:
    """A ``kB`` field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``) in bytes, None where there is no procfs."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_peak_rss() -> bool:
    """Reset the resident-set high-water mark (``VmHWM``); False where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        return False
    return _status_bytes("VmHWM") is not None


def _lifetime_peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def _train_steps(run: MemoryRun) -> dict:
    """The child process: load, one tiny warm-up step, record the baseline, train ``steps`` steps, record the peak.

    The warm-up step (2 examples, 8 tokens) pays the one-time costs both methods share (library initialisation,
    the AdamW state) before the baseline, so that ``peak - baseline`` is what the batch itself needs.
    """
    import torch

    from . import data, losses, regression

    encoder = regression.load_backbone(run.model, run.max_length)
    cuda = encoder.device.type == "cuda"
    triplets = data.nli_triplets(list(data.load_snli("dev")))[: run.batch_size * run.steps]
    if len(triplets) < run.batch_size * run.steps:
        raise ValueError(f"not enough SNLI triplets for {run.steps} steps of {run.batch_size}")
    model = regression.SiameseModel(encoder) if run.method == "regression" else encoder
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    model.train()

    def step(batch: list, length: int) -> int:
        """One optimizer step of the method on ``batch``, inputs padded to ``length`` tokens; returns #sequences."""
        columns = [[t.anchor for t in batch], [t.positive for t in batch]]
        if run.method == "infonce":
            columns.append([t.negative for t in batch])
        sentences = [s for column in columns for s in column]
        features = encoder.tokenizer(
            encoder.prepare(sentences), padding="max_length", truncation=True, max_length=length, return_tensors="pt"
        )
        out = encoder.embed({k: features[k].to(encoder.device) for k in ("input_ids", "attention_mask")})
        n = len(batch)
        if run.method == "regression":
            pred = model.score(out[:n], out[n:])
            loss = losses.smooth_k2(pred, torch.full_like(pred, 2.0), k=2.0, x0=0.25)
        else:
            loss = losses.info_nce(out[:n], out[n : 2 * n], out[2 * n :], temperature=0.05)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return len(sentences)

    step(triplets[:2], 8)
    resettable = False
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        baseline = torch.cuda.memory_allocated()
    else:
        resettable = _reset_peak_rss()
        baseline = _status_bytes("VmRSS") if resettable else _lifetime_peak_rss_bytes()
    per_step = 0
    for index in range(run.steps):
        per_step = step(triplets[index * run.batch_size : (index + 1) * run.batch_size], run.max_length)
    if cuda:
        torch.cuda.synchronize()
        peak, measure_name = torch.cuda.max_memory_allocated(), "cuda max_memory_allocated"
    elif resettable:
        peak, measure_name = _status_bytes("VmHWM"), "peak RSS during training (VmHWM)"
    else:
        peak, measure_name = _lifetime_peak_rss_bytes(), "lifetime peak RSS (ru_maxrss; VmHWM not resettable)"
    return {
        "device": str(encoder.device),
        "measure": measure_name,
        "baseline_bytes": int(baseline),
        "peak_bytes": int(peak),
        "sequences_per_step": per_step,
    }


def main(argv: list[str] | None = None) -> None:
    args = json.loads((argv if argv is not None else sys.argv[1:])[0])
    print(json.dumps(_train_steps(MemoryRun(**args))))


if __name__ == "__main__":
    main()
