"""HiCL Section 3.3 / Appendix A.1 (Table 12): the cost of encoding a sequence whole vs as segments of L tokens.

Two different quantities, never set side by side:

- **Whole training** (:func:`training_speedup`), the runs' own quantity: the training time of SimCSE over that of
  SimCSE +HiCL, our measured optimizer time of the Table 1 runs (``RunOutcome.train_seconds``: ``fit`` without its
  dev evaluations), one ratio per training seed. Under the paper's protocol the baseline reads each sentence cut at
  32 tokens, so this is not Table 12's equal-truncation quantity (``table12`` measures that one, the main claim).
- **One step at a fixed length** (:func:`step_cost`): the mechanism of Section 3.3, at lengths of our choosing.
  Encoding ``n`` tokens costs ``O(n^2)`` whole but ``O(L^2 (l - 1) + |seg_l|^2)`` in segments, "``(l_i - 1)``
  times" less. That counts self-attention only; every transformer layer also has work linear in ``n``
  (projections, MLP), which slicing does not reduce. ``step_cost`` measures one forward + backward of a SimCSE step
  (two dropout views, Eq. 1) on ``batch_size`` sequences of exactly ``n_tokens`` tokens, whole or sliced, on the
  same backbone; ``measure`` runs each (length, mode) in a fresh process (``stsnb.gpu.memory``) so that each peak
  memory is its own. ``predictions`` sets the measurements beside (a) the pure-quadratic reading of Section 3.3 and
  (b) a fit ``t(n) = a n + b n^2`` of the whole-sequence times, whose segment prediction is ``a n + b n L`` (from
  three lengths on: through two it is exact). The paper reports no per-step time. ``step_sentence`` gives the ratio
  at every measured length (marking those longer than any training sentence), ``growth`` and ``growth_sentence``
  how fast the whole-sequence time grew with the length (the exponent of a power law through the measured times),
  ``step_surprises`` where slicing did not pay.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

from ...models import progress
from ...teaching import plots

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
    device: str | None = None,
) -> dict:
    """Median seconds of one forward + backward SimCSE step (Eq. 1 on two dropout views) and its peak memory.

    Runs in the calling process; ``measure`` calls it in a fresh one. The first step is a warm-up, not timed.
    ``device``: None for this process's default (its GPU on a server). ``dropout`` is added to Llama-family
    decoders, which have none; an encoder such as BERT keeps its own (0.1).
    """
    import torch

    from ...gpu.memory import PeakMemory
    from ...models.loading import load_encoder
    from ...training import losses
    from .segments import build_segments, encode_segments, pool_sequences

    if mode not in ("whole", "segments"):
        raise ValueError(f"mode must be 'whole' or 'segments', got {mode!r}")
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(0)
    encoder = load_encoder(model, device=device, max_length=n_tokens)
    if hasattr(encoder.backbone, "layers"):  # a Llama-family decoder: no dropout of its own
        from ...models.raw_backbone import set_dropout

        set_dropout(encoder.backbone, attention=dropout, hidden=dropout)
    encoder.train()
    cuda = encoder.device.type == "cuda"
    block = _token_block(encoder.tokenizer, n_tokens, batch_size)
    length = slice_length if mode == "segments" else None
    batch = build_segments(block, length)

    def one_step() -> None:
        rows = batch.input_ids + batch.input_ids  # two dropout views in one forward, as SimCSE
        embedded = encode_segments(encoder, rows, padded=True)  # rows of one length: one forward, nothing padded
        first, second = torch.split(embedded, [len(batch), len(batch)])
        h = pool_sequences(first, batch.sequence_ids, batch.lengths, batch.n_sequences)
        h_pos = pool_sequences(second, batch.sequence_ids, batch.lengths, batch.n_sequences)
        losses.info_nce(h, h_pos).backward()
        encoder.zero_grad(set_to_none=True)

    one_step()  # warm-up
    seconds = []
    with PeakMemory(cuda=cuda) as peak:
        for _ in range(repeats):
            if cuda:
                torch.cuda.synchronize()
            started = time.perf_counter()
            one_step()
            if cuda:
                torch.cuda.synchronize()  # kernels run asynchronously: time them to completion
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
        "device": str(encoder.device),
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
    from ...gpu.memory import measure_in_fresh_process

    rows = []
    with progress.bar(2 * len(lengths), "step costs", "process") as shown:
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
                shown.update(1)
    return rows


MIN_FIT_LENGTHS = 3  # a fit t = a n + b n^2 has two terms: through two lengths it is exact and predicts nothing


def predictions(rows: Sequence[dict]) -> dict[int, dict[str, float]]:
    """Per length: measured whole / segment seconds and their ratio, the pure-quadratic ratio of Section 3.3
    (``n / L``: ``n^2`` against ``(n / L) L^2``), and the ratio a fit ``t = a n + b n^2`` of the whole times
    predicts (``(a n + b n^2) / (a n + b n L)``). The fit needs ``MIN_FIT_LENGTHS`` lengths or more: through two it
    passes exactly and tests nothing, so its ratio (and ``fit_a``, ``fit_b``) is NaN then."""
    whole = {r["n_tokens"]: r for r in rows if r["mode"] == "whole"}
    parts = {r["n_tokens"]: r for r in rows if r["mode"] == "segments"}
    lengths = sorted(set(whole) & set(parts))
    if len(lengths) < 2:
        raise ValueError(f"need whole and segment timings at 2 or more lengths, got {lengths}")
    n = np.array(lengths, dtype=float)
    t = np.array([whole[k]["seconds"] for k in lengths])
    a = b = float("nan")
    if len(lengths) >= MIN_FIT_LENGTHS:
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
            "repeats": len(whole[k].get("seconds_all", [])) or None,
        }
    return out


def step_sentence(cost: Mapping[int, dict], longest_training: int | None = None) -> str:
    """Every measured length's step in words: how much faster (or slower) the segments were, beside Section 3.3's
    pure-quadratic ``n / L``; lengths above ``longest_training`` (the longest training sentence, in tokens) are marked
    as lengths the training data does not have; then the fit's ratio at the longest length, or why there is no fit
    (fewer than ``MIN_FIT_LENGTHS`` lengths)."""
    parts = []
    for n, r in sorted(cost.items()):
        ratio = r["measured_ratio"]
        said = f"{ratio:.2f}x faster in segments" if ratio >= 1 else f"segments {1 / ratio:.2f}x slower"
        beyond = " (longer than any training sentence)" if longest_training is not None and n > longest_training else ""
        parts.append(f"{n} tokens{beyond}: {said} (n / L = {r['quadratic_ratio']:.0f})")
    text = "one step, whole over in segments, measured at " + "; ".join(parts)
    n = max(cost)
    if math.isfinite(cost[n]["fitted_ratio"]):
        return text + f"; the linear + quadratic fit gives {cost[n]['fitted_ratio']:.2f}x at {n} tokens"
    return text + (
        f"; no fit: {len(cost)} lengths would fix its two terms exactly, so it would predict nothing it was not "
        f"given ({MIN_FIT_LENGTHS} or more lengths are needed)"
    )


def growth(cost: Mapping[int, dict], key: str = "whole_s") -> dict:
    """How fast a step's time grew with the length: the exponent ``k`` of ``t ~ n^k`` through all measured lengths
    (least squares on log t against log n) and between each pair of neighbouring lengths. Pure attention cost would
    give 2 whole (Section 3.3's count), work linear in the tokens 1."""
    lengths = sorted(cost)
    if len(lengths) < 2:
        raise ValueError(f"need two or more lengths for a growth exponent, got {lengths}")
    logs_n = np.log(np.array(lengths, dtype=float))
    logs_t = np.log(np.array([cost[n][key] for n in lengths], dtype=float))
    overall = float(np.polyfit(logs_n, logs_t, 1)[0])
    steps = {
        (lengths[i], lengths[i + 1]): float((logs_t[i + 1] - logs_t[i]) / (logs_n[i + 1] - logs_n[i]))
        for i in range(len(lengths) - 1)
    }
    return {"exponent": overall, "between": steps, "lengths": lengths}


QUADRATIC_TOLERANCE = 0.1  # an exponent within 2 +- 0.1 reads "about quadratic"


def growth_sentence(cost: Mapping[int, dict]) -> str:
    """The whole-sequence time's growth in words, from :func:`growth`: slower than, about, or faster than the pure
    quadratic of Section 3.3 (within +-``QUADRATIC_TOLERANCE`` of 2 reads "about"), with each neighbouring pair's
    exponent, and the segments' overall exponent beside it."""
    whole, parts = growth(cost, "whole_s"), growth(cost, "segments_s")
    k = whole["exponent"]
    shape = (
        "about quadratic"
        if abs(k - 2) <= QUADRATIC_TOLERANCE
        else "slower than quadratic"
        if k < 2
        else "faster than quadratic"
    )
    pairs = ", ".join(f"{a}-{b} tokens n^{e:.2f}" for (a, b), e in whole["between"].items())
    lengths = whole["lengths"]
    return (
        f"whole-sequence time grew as n^{k:.2f} from {lengths[0]} to {lengths[-1]} tokens ({pairs}): {shape} (a pure "
        f"quadratic is n^2, work linear in the tokens n^1); in segments it grew as n^{parts['exponent']:.2f}"
    )


def step_surprises(cost: Mapping[int, dict]) -> list[str]:
    """A sentence for each length where slicing did not pay as Section 3.3 leads one to expect: the segments' step
    slower than the whole one, or adding more memory; with how many timed steps each time is (the median of)."""
    out = []
    for n, r in cost.items():
        repeats = f"{r['repeats']} timed step{'s' * (r['repeats'] != 1)}" if r.get("repeats") else "the timed steps"
        if r["measured_ratio"] < 1:
            out.append(
                f"at {n} tokens the segments' step took {r['segments_s']:.3f} s against {r['whole_s']:.3f} s whole "
                f"(each the median of {repeats})"
            )
        if r["segments_mb"] > r["whole_mb"]:
            out.append(
                f"at {n} tokens the segments' step added {r['segments_mb']:.0f} MB to the process against "
                f"{r['whole_mb']:.0f} MB whole"
            )
    return out


def training_speedup(baseline_seconds: Mapping[int, float], hicl_seconds: Mapping[int, float]) -> dict:
    """Table 12's quantity on our runs: baseline training time over +HiCL training time, per training seed (same
    seeds on both sides), with their median (what the sentences report: a mean of ratios is pulled by one slow run),
    mean, min and max and the seconds behind them."""
    if not baseline_seconds or set(baseline_seconds) != set(hicl_seconds):
        raise ValueError(
            f"baseline and +HiCL training times need the same non-empty seeds, got {sorted(baseline_seconds)} and "
            f"{sorted(hicl_seconds)}"
        )
    for name, values in (("baseline_seconds", baseline_seconds), ("hicl_seconds", hicl_seconds)):
        bad = {s: v for s, v in values.items() if not (math.isfinite(float(v)) and float(v) > 0)}
        if bad:
            raise ValueError(f"{name} must be positive seconds, got {bad}")
    ratios = {s: float(baseline_seconds[s]) / float(hicl_seconds[s]) for s in sorted(baseline_seconds)}
    return {
        "per_seed": ratios,
        "median": statistics.median(ratios.values()),
        "mean": statistics.fmean(ratios.values()),
        "min": min(ratios.values()),
        "max": max(ratios.values()),
        "seeds": len(ratios),
        "baseline_seconds": {s: float(baseline_seconds[s]) for s in ratios},
        "hicl_seconds": {s: float(hicl_seconds[s]) for s in ratios},
    }


def training_sentence(
    speedup: Mapping, paper_speedup: float, paper_backbone: str, baseline_cut: int | None = None
) -> str:
    """The whole-training ratio of SimCSE over SimCSE+HiCL in one sentence, per training seed with their median, set
    beside Table 12 only as what it is: ``baseline_cut`` (the baselines' truncation under the paper's protocol) makes
    it another quantity than Table 12's, which keeps the same truncation on both sides (Appendix A.1: SimCSE at 32
    tokens "is indeed faster")."""
    per_seed = ", ".join(f"seed {s} {r:.2f}x" for s, r in speedup["per_seed"].items())
    seeds = f"median of {speedup['seeds']} seed{'s' * (speedup['seeds'] > 1)}: {per_seed}"
    if baseline_cut is None:
        return (
            f"Whole training, SimCSE over SimCSE+HiCL on the same sentences: {speedup['median']:.2f}x ({seeds}); the "
            f"paper's Table 12 ({paper_backbone}): {paper_speedup:.2f}x."
        )
    return (
        f"Whole training, SimCSE cut at {baseline_cut} tokens over SimCSE+HiCL on the whole sentences: "
        f"{speedup['median']:.2f}x ({seeds}), the paper's protocol; not Table 12's quantity ({paper_speedup:.2f}x for "
        f"{paper_backbone} at equal truncation, measured above on the training batches; Appendix A.1 expects SimCSE "
        "at 32 tokens to be the faster)."
    )


def step_table(cost: Mapping[int, dict]) -> str:
    """``predictions``' rows as a text table: seconds whole / in segments, their ratio, n / L, the fit's ratio ("-"
    without a fit), MB."""
    lines = [
        f"{'tokens':>6} {'whole s':>8} {'segments s':>10} {'ratio':>6} {'n/L':>5} {'fit':>5} {'whole MB':>9} "
        f"{'segm. MB':>9}"
    ]
    for n, r in cost.items():
        fit = f"{r['fitted_ratio']:>5.2f}" if math.isfinite(r["fitted_ratio"]) else f"{'-':>5}"
        lines.append(
            f"{n:>6} {r['whole_s']:>8.3f} {r['segments_s']:>10.3f} {r['measured_ratio']:>6.2f} "
            f"{r['quadratic_ratio']:>5.1f} {fit} {r['whole_mb']:>9.0f} {r['segments_mb']:>9.0f}"
        )
    return "\n".join(lines)


def plot_step_costs(axes, cost: Mapping[int, dict], slice_length: int, batch_size: int) -> None:
    """Left: seconds per step against length (log-log), whole and in segments, beside a pure-quadratic and a linear
    growth from the first point. Right: the measured ratio, the fit's (with ``MIN_FIT_LENGTHS`` lengths or more) and
    Section 3.3's ``n / L``, with 1 (no faster) marked. Plain tick labels on every log axis."""
    n = np.array(sorted(cost))
    for mode, key in (("whole", "whole_s"), ("segments", "segments_s")):
        axes[0].plot(n, [cost[k][key] for k in n], marker="o", label=f"measured, {mode}")
    first = cost[int(n[0])]
    axes[0].plot(n, first["whole_s"] * (n / n[0]) ** 2, linestyle=":", label="whole, pure quadratic from 1st point")
    axes[0].plot(n, first["segments_s"] * n / n[0], linestyle=":", label="segments, linear from the first point")
    axes[0].set(
        title=f"one SimCSE step, batch {batch_size}, L = {slice_length}",
        xlabel="tokens per sequence",
        ylabel="seconds",
        xscale="log",
        yscale="log",
    )
    axes[1].plot(n, [cost[k]["measured_ratio"] for k in n], marker="o", label="measured")
    fitted = [cost[k]["fitted_ratio"] for k in n]
    if all(math.isfinite(f) for f in fitted):  # no fit through two lengths (``MIN_FIT_LENGTHS``)
        axes[1].plot(n, fitted, marker="x", label=r"fit $a n + b n^2$")
    axes[1].axhline(1.0, color="grey", linewidth=0.8, label="1: no faster")
    axes[1].plot(n, n / slice_length, linestyle=":", label="Section 3.3's reading, $n / L$")
    axes[1].set(title="one step: whole / segments time", xlabel="tokens per sequence", ylabel="ratio", xscale="log")
    axes[1].set_yscale("log")
    for ax in axes[:2]:
        plots.plain_log_ticks(ax.yaxis)  # seconds and ratios read as 1, 2, 5, not 2 x 10^0
        plots.plain_log_ticks(ax.xaxis)
        ax.set_xticks(n, [str(k) for k in n])  # the measured lengths as token counts, not 10^2
        plots.legend_outside(ax, "below")  # off the curves, whatever the measured times
