"""Does unsupervised SimCSE move the raw backbone ``smollm2-135m-l6``? A grid of settings, each against the named
baseline: the same backbone untrained, on the same STS-B dev pairs.

Each setting trains plain SimCSE (Eq. 1 of HiCL, dropout positives, batch 32) on the same Wikipedia-sample
sentences for ``--steps`` steps, no selection, and prints STS-B dev Spearman before and after, the paired bootstrap
interval of the difference with its verdict, the loss at the first and last step, and the seconds it took
(``stsnb.papers.hicl.simcse_moves``). The grid's defaults are the settings notebook 30's cpu profile was chosen
from. Not a timed test: figures for the notebook's parameters section and docs/benchmarks.md.

    STSNB_DATA_DIR=../shared/data python benchmarks/bench_simcse_moves.py [--steps 48] [--dev-pairs 500]
        [--setting 1e-4,0.3,mean ...] [--max-length 32] [--seeds 0 1 2]

``--max-length 32`` trains on sentences cut at 32 tokens, as notebook 30's baselines under the paper's truncation;
``--seeds`` repeats every setting with other training seeds (sentence order and dropout), the same sentences.
"""

from __future__ import annotations

import argparse

from stsnb import data
from stsnb.papers import hicl
from stsnb.runs import probe_tables

DEFAULT_GRID = [
    "3e-5,0.1,mean",
    "5e-5,0.1,mean",
    "5e-5,0.3,mean",
    "1e-4,0.1,mean",
    "1e-4,0.3,mean",
    "2e-4,0.2,mean",
    "5e-5,0.1,last",
]


def parse_setting(text: str) -> hicl.ProbeSetting:
    try:
        lr, dropout, pooling = text.split(",")
        return hicl.ProbeSetting(float(lr), float(dropout), pooling)
    except ValueError as error:
        raise SystemExit(f"--setting takes lr,dropout,pooling (e.g. 1e-4,0.3,mean), got {text!r}: {error}") from None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backbone", default="smollm2-135m-l6")
    parser.add_argument("--steps", type=int, default=48)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--dev-pairs", type=int, default=500)
    parser.add_argument("--max-length", type=int, default=128, help="tokens per training sentence (and evaluation)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="training seeds of every setting")
    parser.add_argument("--setting", nargs="+", default=DEFAULT_GRID, help="lr,dropout,pooling (several)")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    settings = [parse_setting(s) for s in args.setting]
    sentences = data.sample(data.load_wiki(), args.steps * args.batch_size, 0)
    dev = data.sample(list(data.load_stsb("dev")), args.dev_pairs, 0)
    backbone = hicl.BackboneSettings(args.backbone, max_length=args.max_length)
    rows = []
    for setting in settings:
        for seed in args.seeds:
            row = {**hicl.simcse_moves(setting, backbone, sentences, dev, batch_size=args.batch_size, seed=seed)}
            row["seed"], row["max_length"] = seed, args.max_length
            probe_tables.add(rows, row, args.json)


if __name__ == "__main__":
    main()
