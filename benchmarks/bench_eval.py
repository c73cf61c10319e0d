"""Speed of the seven-task STS evaluation for minilm-l6: stsnb cold and warm against a plain encode loop.

Baseline (run in the same process, same model files, same threads): the sentence-transformers model's own
``encode`` called per task on the first and the second sentences (batch 32, its default), cosine, scipy.
stsnb cold: a fresh in-memory embedding cache (every distinct sentence encoded once, length-sorted, batched
by a token budget). stsnb warm: the same call again with the cache filled.

Targets (foundation issue): cold at least 1.7x faster than the baseline with identical scores; warm under 5 s, also
as a whole process (``stsnb eval --model minilm-l6 --json`` with a filled disk cache: imports, no model built).

    python benchmarks/bench_eval.py [--data-dir DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from scipy.stats import spearmanr

from stsnb.evaluation import evaluate
from stsnb.models import loading as models


def baseline_scores(model, task_pairs) -> dict[str, float]:
    scores = {}
    for task, pairs in task_pairs.items():
        a = model.encode([p.sent1 for p in pairs], batch_size=32, convert_to_tensor=True)
        b = model.encode([p.sent2 for p in pairs], batch_size=32, convert_to_tensor=True)
        cosine = torch.nn.functional.cosine_similarity(a, b).numpy()
        scores[task] = 100 * float(spearmanr(cosine, [p.score for p in pairs])[0])
    return scores


def warm_process_seconds(data_dir: str | None) -> float:
    """Wall time of a whole ``stsnb eval --model minilm-l6 --json`` process once its disk cache is filled."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "stsnb.cli", "eval", "--model", "minilm-l6", "--json"]
    command += ["--data-dir", data_dir] if data_dir else []
    subprocess.run(command, check=True, capture_output=True)  # fills the cache if it is not yet
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args()

    from sentence_transformers import SentenceTransformer

    task_pairs = {task: evaluate.load_task(task, data_dir=args.data_dir) for task in evaluate.STS_TASKS}
    n_pairs = sum(len(p) for p in task_pairs.values())
    reference = SentenceTransformer(models.resolve("minilm-l6").path, device="cpu")
    encoder = models.load_encoder("minilm-l6", device="cpu")
    print(f"minilm-l6, {len(task_pairs)} tasks, {n_pairs} pairs, torch threads {torch.get_num_threads()}")

    started = time.perf_counter()
    base = baseline_scores(reference, task_pairs)
    baseline_s = time.perf_counter() - started

    cache = evaluate.EmbeddingCache()
    started = time.perf_counter()
    cold = evaluate.sts(encoder, data_dir=args.data_dir, cache=cache)
    cold_s = time.perf_counter() - started
    started = time.perf_counter()
    warm = evaluate.sts(encoder, data_dir=args.data_dir, cache=cache)
    warm_s = time.perf_counter() - started

    process_s = warm_process_seconds(args.data_dir)
    diff = max(abs(cold.spearman[t] - base[t]) for t in base)
    figures = {
        "pairs": n_pairs,
        "sentences_baseline": 2 * n_pairs,
        "sentences_stsnb_cold": cold.encoded,
        "baseline_seconds": round(baseline_s, 2),
        "stsnb_cold_seconds": round(cold_s, 2),
        "stsnb_warm_seconds": round(warm_s, 2),
        "stsnb_eval_warm_process_seconds": round(process_s, 2),
        "cold_speedup_vs_baseline": round(baseline_s / cold_s, 2),
        "warm_speedup_vs_baseline": round(baseline_s / warm_s, 1),
        "max_abs_spearman_diff_x100": float(f"{diff:.6f}"),
        "avg_spearman_stsnb": round(cold.avg, 2),
        "avg_spearman_baseline": round(float(np.mean(list(base.values()))), 2),
    }
    print(f"{'run':<36}{'seconds':>9}{'ratio':>9}")
    print(f"{'baseline: sentence-transformers loop':<36}{baseline_s:>9.2f}{1.0:>9.2f}")
    print(f"{'stsnb cold (fresh cache)':<36}{cold_s:>9.2f}{baseline_s / cold_s:>9.2f}")
    print(f"{'stsnb warm (cache filled)':<36}{warm_s:>9.2f}{baseline_s / warm_s:>9.1f}")
    print(f"{'stsnb eval, warm, whole process':<36}{process_s:>9.2f}")
    print(f"sentences encoded: baseline {2 * n_pairs}, stsnb cold {cold.encoded}, warm {warm.encoded}")
    print(f"max |Spearman stsnb - baseline| x100 over the 7 tasks: {diff:.6f}; avg {cold.avg:.2f}")
    print(
        f"targets: cold >= 1.7x -> {'met' if baseline_s / cold_s >= 1.7 else 'NOT met'}; "
        f"warm < 5 s -> {'met' if warm_s < 5 else 'NOT met'}; warm process <= 5 s -> "
        f"{'met' if process_s <= 5 else 'NOT met'}; identical scores (< 0.01) -> "
        f"{'met' if diff < 0.01 else 'NOT met'}"
    )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
