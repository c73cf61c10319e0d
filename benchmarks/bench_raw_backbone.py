"""Training speed of the raw backbone ``smollm2-135m-l6``: full fine-tune vs the token embedding frozen.

Both runs in this process, on the same STS-B train batches (batch 16, max length 64, cosine-MSE regression on the
gold scores / 5), after one warm-up step each; prints sentences per second and the ratio against the named baseline
(the full fine-tune). Not a timed test: a figure for docs/benchmarks.md.

    STSNB_DATA_DIR=../shared/data python benchmarks/bench_raw_backbone.py [--steps 12] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from stsnb import data
from stsnb.models import loading as models


def sentences_per_second(freeze_embeddings: bool, batches: list, threads: int) -> float:
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    encoder = models.load_encoder("smollm2-135m-l6", device="cpu", max_length=64, freeze_embeddings=freeze_embeddings)
    optimizer = torch.optim.AdamW([p for p in encoder.parameters() if p.requires_grad], lr=1e-5)
    encoder.train()

    def step(batch) -> None:
        u = encoder([p.sent1 for p in batch])
        v = encoder([p.sent2 for p in batch])
        gold = torch.tensor([p.score / 5.0 for p in batch])
        loss = ((torch.nn.functional.cosine_similarity(u, v) - gold) ** 2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    step(batches[0])  # warm-up: allocator, AdamW state
    started = time.perf_counter()
    for batch in batches[1:]:
        step(batch)
    return 2 * 16 * (len(batches) - 1) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    pairs = list(data.load_stsb("train"))[: 16 * (args.steps + 1)]
    batches = [pairs[i : i + 16] for i in range(0, len(pairs), 16)]
    full = sentences_per_second(False, batches, args.threads)
    frozen = sentences_per_second(True, batches, args.threads)
    figures = {"baseline full fine-tune sentences/s": round(full, 1), "frozen embedding sentences/s": round(frozen, 1)}
    figures["speedup"] = round(frozen / full, 2)
    print(json.dumps(figures))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle)


if __name__ == "__main__":
    main()
