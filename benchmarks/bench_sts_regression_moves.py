"""Does Table 1's fine-tuning move the raw backbone ``smollm2-135m-l6``? A grid of settings, each against the named
baseline: the same backbone untrained, on the same STS-B dev pairs.

Each setting fine-tunes as notebook 20 does (``stsnb.papers.sts_regression.probe.table1_moves``: the Siamese head on
(u, v, |u-v|), layer-wise decay 0.95, head lr 1e-3, warmup 0.2, the token embedding frozen, no clamp) for one epoch
with no selection, on NLI (SNLI dev + test, the stand-in for the train splits) or on the STS analogue
(de-duplicated STS-B + SICK-R train, Appendix A), and prints STS-B dev Spearman before and after, the paired
bootstrap interval of the difference with its verdict, the loss at the first and last logged interval and the
seconds it took. The grid's defaults are the settings notebook 20's cpu profile was chosen from. Not a timed test:
figures for the notebook's parameters section.

    STSNB_DATA_DIR=../shared/data python benchmarks/bench_sts_regression_moves.py [--dev-pairs 500]
        [--setting sts,smooth_k2,5e-5,960,16,64 ...] [--seed 0] [--seeds 0 1 2] [--json rows.json]

``--seed`` draws the dev pairs and shuffles the training pool (notebook 20's ``seed``); ``--seeds`` are the training
seeds of every setting (head initialisation and batch order, as notebook 20's ``headline_seeds``; default: ``--seed``,
so a row without ``--seeds`` is what the earlier rows were). Task ``sts_rounded`` trains every loss on the class ids
cross entropy learns (``stsnb.papers.sts_regression.tasks``). The probes defined but not yet committed are
``stsnb.papers.sts_regression.probe.ROUNDED_PROBE`` (its command: ``probe.probe_command``).
"""

from __future__ import annotations

import argparse
import random

from stsnb import data
from stsnb.papers import sts_regression as reg
from stsnb.papers.sts_regression.probe import ProbeSetting, table1_moves
from stsnb.runs import probe_tables

DEFAULT_GRID = [
    "nli,cross_entropy,5e-4,960,16,256",  # the earlier cpu profile: did not move the slice
    "nli,cross_entropy,5e-5,4800,32,48",  # moved STS-B dev +2.5 in about 4 minutes in an earlier single run
    "nli,smooth_k2,5e-5,4800,32,48",
    "sts,cross_entropy,5e-5,960,16,64",
    "sts,smooth_k2,5e-5,960,16,64",
    "sts,cross_entropy,1e-4,960,16,64",
    "sts,smooth_k2,1e-4,960,16,64",
]


def parse_setting(text: str) -> ProbeSetting:
    try:
        task, loss, lr, pairs, batch, length = text.split(",")
        return ProbeSetting(task, loss, float(lr), int(pairs), int(batch), int(length))
    except ValueError as error:
        raise SystemExit(
            f"--setting takes task,loss,lr,pairs,batch,length (e.g. sts,smooth_k2,5e-5,960,16,64), got {text!r}: "
            f"{error}"
        ) from None


def training_pairs(task: str, seed: int) -> list[reg.TrainingPair]:
    """The pool a notebook 20 run of ``task`` draws from, shuffled with ``seed`` (as ``split_pairs`` does); the
    STS tasks share it (``sts_rounded``'s targets are rounded where it trains, ``fine_tune_table1``)."""
    if task == "nli":
        pairs = reg.nli_training_pairs(data.load_nli("snli-dev-test"))
    else:
        pairs = reg.filtered_sts_train("raw").pairs
    random.Random(seed).shuffle(pairs)
    return pairs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backbone", default="smollm2-135m-l6")
    parser.add_argument("--dev-pairs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0, help="the dev sample and the training pool's shuffle")
    parser.add_argument("--seeds", type=int, nargs="+", help="training seeds of every setting (default: --seed)")
    parser.add_argument("--setting", nargs="+", default=DEFAULT_GRID, help="task,loss,lr,pairs,batch,length")
    parser.add_argument("--json", help="also write the rows to this file")
    return parser


def main() -> None:
    args = build_parser().parse_args()
    settings = [parse_setting(s) for s in args.setting]
    for setting in settings:
        reg.table1_task(setting.task)  # refuse a typo before an hour of training
    dev = data.sample(list(data.load_stsb("dev")), args.dev_pairs, args.seed)
    pools = {task: training_pairs(task, args.seed) for task in {s.task for s in settings}}
    rows = []
    for setting in settings:
        for seed in args.seeds or [args.seed]:
            row = table1_moves(setting, args.backbone, pools[setting.task], dev, seed=seed)
            probe_tables.add(rows, {**row, "data_seed": args.seed}, args.json)


if __name__ == "__main__":
    main()
