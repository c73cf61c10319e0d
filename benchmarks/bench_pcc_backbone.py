"""Which SmolLM2 backbone the ``cpu`` profile of notebook 10 should use: all 30 layers or the 6-layer slice.

For each backbone, in this process and on the same data: the untrained PromptSTH embedding, stage 1 (Eq. 8) on
``--triplets`` SNLI dev/test triplets, stage 2 (Eq. 9) on ``--pairs`` STS-B + SICK-R train pairs from the stage-1
adapter, each scored on the same ``--eval-pairs`` pairs per task of the seven STS tasks, with the paired interval of
each stage (``stsnb.papers.pcc_tuning.claims.stage_claims``) and the seconds per step. The baseline named in the
ratios is ``smollm2-135m`` (the whole model). A figure for the notebook's parameters section, not a timed test:

    STSNB_DATA_DIR=../shared/data python benchmarks/bench_pcc_backbone.py [--triplets 64] [--pairs 64]
"""

from __future__ import annotations

import argparse
import json
import time

from stsnb import data
from stsnb.evaluation import evaluate
from stsnb.models import loading as models
from stsnb.papers import pcc_tuning
from stsnb.papers.pcc_tuning import claims, corpora, pipeline
from stsnb.training.config import TrainConfig


def measure(backbone: str, args: argparse.Namespace) -> dict:
    triplets = corpora.stage1_triplets("snli-dev-test", args.triplets, 0)
    pairs = data.sample(corpora.stage2_pairs(dedup=False).pairs, args.pairs, 0)
    scoring = pipeline.Scoring("all", args.eval_pairs, 0)
    lora = models.LoraSettings(r=64, alpha=16, dropout=0.05)

    def config(batch: int) -> TrainConfig:
        return TrainConfig(batch_size=batch, lr=5e-4, warmup_ratio=0.1, eval_at_start=False, seed=0, progress=False)

    encoder = pcc_tuning.load_prompt_encoder(backbone, "sth", lora=lora, max_length=128)
    tic = time.perf_counter()
    untrained = scoring.predictions(encoder)
    eval_seconds = time.perf_counter() - tic
    first, weights = pipeline.stage1(encoder, triplets, config(args.stage1_batch), None, scoring)
    second = pipeline.stage2_from(encoder, weights, pairs, config(args.stage2_batch), None, scoring)
    rows = claims.stage_claims(untrained, first, second, "Mistral-7b", "PromptSTH")
    return {
        "avg untrained": round(evaluate.spearman_scores(untrained)["avg"], 2),
        "avg stage 1": round(first.scores["avg"], 2),
        "avg stage 2": round(second.scores["avg"], 2),
        **{r["claim"]: f"{r['difference']:+.2f} [{r['low']:+.2f}, {r['high']:+.2f}] {r['verdict']}" for r in rows},
        "stage-1 seconds per step": round(first.result.seconds / first.result.steps, 1),
        "stage-2 seconds per step": round(second.result.seconds / second.result.steps, 1),
        "seconds per evaluation": round(eval_seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backbones", nargs="+", default=["smollm2-135m", "smollm2-135m-l6"])
    parser.add_argument("--triplets", type=int, default=64)
    parser.add_argument("--pairs", type=int, default=64)
    parser.add_argument("--stage1-batch", type=int, default=16)
    parser.add_argument("--stage2-batch", type=int, default=32)
    parser.add_argument("--eval-pairs", type=int, default=60)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    figures = {backbone: measure(backbone, args) for backbone in args.backbones}
    baseline = figures[args.backbones[0]]
    for row in figures.values():
        row["stage-1 step time vs " + args.backbones[0]] = round(
            row["stage-1 seconds per step"] / baseline["stage-1 seconds per step"], 2
        )
    print(json.dumps(figures, indent=1))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=1)


if __name__ == "__main__":
    main()
