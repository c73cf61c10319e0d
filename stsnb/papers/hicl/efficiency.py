"""HiCL Section 3.3 / Appendix A.1 (Table 12): the cost of encoding a sequence whole vs as segments of L tokens.

Section 3.3: encoding a sequence of ``n`` tokens costs ``O(n^2)`` whole but ``O(L^2 (l - 1) + |seg_l|^2)`` in
segments, "``(l_i - 1)`` times" less. That counts self-attention only; every transformer layer also has work linear
in ``n`` (projections, MLP), which slicing does not reduce. ``step_cost`` measures one forward + backward of a
SimCSE step (two dropout views, Eq. 1) on ``batch_size`` sequences of exactly ``n_tokens`` tokens, whole or sliced,
on the same backbone; ``measure`` runs each (length, mode) in a fresh process (``stsnb.memory``) so that each peak
memory is its own. ``predictions`` sets the measurements beside (a) the pure-quadratic reading of Section 3.3 and
(b) a fit ``t(n) = a n + b n^2`` of the whole-sequence times, whose segment prediction is ``a n + b n L``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Literal

import numpy as np

Mode = Literal["whole", "segments"]


def _token_block(tokenizer, n_tokens: int, batch_size: int) -> list[list[int]]:
    """``batch_size`` sequences of exactly ``n_tokens`` real Wikipedia tokens (sentences joined end to end)."""
    from ...data import load_wiki

    stream: list[int] = []
    for ids in tokenizer(load_wiki(limit=4000), add_special_tokens=False)["input_ids"]:
        stream.extend(ids)
        if len(stream) >= n_tokens * batch_size:
            break
    if len(stream) < n_tokens * batch_size:
        raise ValueError(f"the wiki sample has {len(stream)} tokens, fewer than {n_tokens} x {batch_size}")
    return [stream[i * n_tokens : (i + 1) * n_tokens] for i in range(batch_size)]


def step_cost(
    model: str,
    n_tokens: int,
    mode: Mode,
    batch_size: int = 4,
    repeats: int = 3,
    slice_length: int = 32,
    dropout: float = 0.1,
    threads: int | None = None,
) -> dict:
    """Median seconds of one forward + backward SimCSE step (Eq. 1 on two dropout views) and its peak memory.

    Runs in the calling process; ``measure`` calls it in a fresh one. The first step is a warm-up, not timed.
    """
    import torch

    from ... import losses
    from ...memory import PeakMemory
    from ...models import load_encoder
    from .segments import build_segments, encode_segments, pool_sequences

    if mode not in ("whole", "segments"):
        raise ValueError(f"mode must be 'whole' or 'segments', got {mode!r}")
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(0)
    encoder = load_encoder(model, device="cpu", dropout=dropout, max_length=n_tokens)
    encoder.train()
    block = _token_block(encoder.tokenizer, n_tokens, batch_size)
    length = slice_length if mode == "segments" else None
    batch = build_segments(block, length)

    def one_step() -> None:
        rows = batch.input_ids + batch.input_ids  # two dropout views in one forward, as SimCSE
        embedded = encode_segments(encoder, rows)
        first, second = torch.split(embedded, [len(batch), len(batch)])
        h = pool_sequences(first, batch.sequence_ids, batch.lengths, batch.n_sequences)
        h_pos = pool_sequences(second, batch.sequence_ids, batch.lengths, batch.n_sequences)
        losses.info_nce(h, h_pos).backward()
        encoder.zero_grad(set_to_none=True)

    one_step()  # warm-up
    seconds = []
    with PeakMemory(cuda=False) as peak:
        for _ in range(repeats):
            started = time.perf_counter()
            one_step()
            seconds.append(time.perf_counter() - started)
    return {
        "model": model,
        "n_tokens": n_tokens,
        "mode": mode,
        "batch_size": batch_size,
        "segments_per_sequence": len(batch) // batch_size,
        "slice_length": slice_length,
        "seconds": statistics.median(seconds),
        "seconds_all": seconds,
        "peak_added_mb": peak.added_bytes / 2**20,
        "memory_measure": peak.measure,
        "threads": torch.get_num_threads(),
    }


def measure(
    model: str,
    lengths: Sequence[int] = (64, 128, 256, 512),
    batch_size: int = 4,
    repeats: int = 3,
    slice_length: int = 32,
    threads: int | None = None,
) -> list[dict]:
    """``step_cost`` of every length, whole and in segments, each in its own fresh process."""
    from ...memory import measure_in_fresh_process

    rows = []
    for n in lengths:
        for mode in ("whole", "segments"):
            kwargs = dict(
                model=model,
                n_tokens=int(n),
                mode=mode,
                batch_size=batch_size,
                repeats=repeats,
                slice_length=slice_length,
                threads=threads,
            )
            rows.append(measure_in_fresh_process("stsnb.papers.hicl.efficiency:step_cost", kwargs))
    return rows


def predictions(rows: Sequence[dict]) -> dict[int, dict[str, float]]:
    """Per length: measured whole / segment seconds and their ratio, the pure-quadratic ratio of Section 3.3
    (``n / L``: ``n^2`` against ``(n / L) L^2``), and the ratio a fit ``t = a n + b n^2`` of the whole times
    predicts (``(a n + b n^2) / (a n + b n L)``)."""
    whole = {r["n_tokens"]: r for r in rows if r["mode"] == "whole"}
    parts = {r["n_tokens"]: r for r in rows if r["mode"] == "segments"}
    lengths = sorted(set(whole) & set(parts))
    if len(lengths) < 2:
        raise ValueError(f"need whole and segment timings at 2 or more lengths, got {lengths}")
    n = np.array(lengths, dtype=float)
    t = np.array([whole[k]["seconds"] for k in lengths])
    (a, b), *_ = np.linalg.lstsq(np.stack([n, n**2], axis=1), t, rcond=None)
    out = {}
    for k in lengths:
        slice_length = parts[k]["slice_length"]
        fitted_whole = a * k + b * k * k
        fitted_segments = a * k + b * k * slice_length
        out[k] = {
            "whole_s": whole[k]["seconds"],
            "segments_s": parts[k]["seconds"],
            "measured_ratio": whole[k]["seconds"] / parts[k]["seconds"],
            "quadratic_ratio": k / slice_length,
            "fitted_ratio": fitted_whole / fitted_segments if fitted_segments > 0 else float("nan"),
            "whole_mb": whole[k]["peak_added_mb"],
            "segments_mb": parts[k]["peak_added_mb"],
            "fit_a": float(a),
            "fit_b": float(b),
        }
    return out
