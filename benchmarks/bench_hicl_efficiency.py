"""HiCL Section 3.3: one SimCSE training step on sequences of 64..512 tokens, encoded whole vs as segments
of L tokens, on the same backbone: median seconds of forward + backward and the peak memory the step added, each
(length, mode) in a fresh process. Prints the measured whole/segments ratio beside the pure-quadratic reading of
Section 3.3 (n / L) and the ratio a fit t = a n + b n^2 of the whole-sequence times predicts. The paper reports no
per-step time: its Table 12 is whole-training time on mostly short sentences, which notebook 30 compares with the
training times of its own Table 1 runs, never with this. Not a timed test: the numbers depend on the machine and on
what else runs on it.

    python benchmarks/bench_hicl_efficiency.py [--model smollm2-135m-l6] [--lengths 64 128 256 512] [--json OUT]
"""

from __future__ import annotations

import argparse
import json

from stsnb.papers.hicl import efficiency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-l6")
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 128, 256, 512])
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--slice-length", type=int, default=32)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", default=None, help="write the raw rows and predictions here")
    args = parser.parse_args()
    rows = efficiency.measure(args.model, args.lengths, args.batch_size, args.repeats, args.slice_length, args.threads)
    table = efficiency.predictions(rows)
    print(
        f"{args.model}, batch {args.batch_size}, L = {args.slice_length}, median of {args.repeats} steps "
        f"(forward + backward, two dropout views), {rows[0]['threads']} threads"
    )
    print(efficiency.step_table(table))
    print(efficiency.step_sentence(table))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"rows": rows, "predictions": {str(k): v for k, v in table.items()}}, handle, indent=1)


if __name__ == "__main__":
    main()
