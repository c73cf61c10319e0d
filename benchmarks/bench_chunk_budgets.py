"""Token budgets of a batch on the CPU: training steps cut into length-sorted chunks, and evaluation batches.

Training.
Baseline (same process, same model, same batches, same threads): the batch padded to its longest sentence in one
forward, ``encoder.embed(encoder.tokenize(texts))``, as ``forward`` did before it cut batches. Each arm runs the
forward and the backward of a sum of squared embeddings on the same batches, after one untimed warm-up step; the
table gives each budget's mean seconds per step and its ratio to the baseline, and the largest difference between the
two arms' embeddings in eval mode (chunks change no result beyond float rounding).

Workloads: notebook 10's stage-2 batch (smollm2-135m with LoRA r=64 and PromptSTH, 32 STS-B / SICK-R train pairs cut
at 64 tokens), notebook 20's Table 1 batch (smollm2-135m-l6, 16 pairs at 64 tokens) and notebook 40's bi-encoder
batch (minilm-l6, 8 C-STS quadruples: 32 (sentence, condition) inputs).

Evaluation: ``SentenceEncoder.encode`` of the distinct sentences of the first 60 pairs of each of the seven STS tasks
(745 sentences; smollm2-135m with LoRA and PromptSTH cut to 400), each budget timed twice, against 8,192 padded tokens
per batch (the budget before ``CPU_EVALUATION_CHUNK_TOKENS``), with the largest difference of the embeddings.

    python benchmarks/bench_chunk_budgets.py [--batches 3] [--out benchmarks/results/chunk_budgets]
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from stsnb.data.loading import load_csts, load_sick, load_stsb
from stsnb.evaluation import evaluate
from stsnb.models import loading as models
from stsnb.papers import ccl
from stsnb.papers.pcc_tuning import training as pcc_training

BUDGETS = (256, 512, 1024, 2048)
EVALUATION_BUDGETS = (8192, 4096, 2048, 1024)  # the first is the baseline


def evaluation_row(name: str, encoder: models.SentenceEncoder, sentences: list[str]) -> dict:
    """Seconds of ``encode`` at each budget (best of two) and the ratio to the first."""
    encoder.encode(sentences[:50])  # warm-up
    row: dict = {"workload": name, "sentences": len(sentences), "budgets": {}}
    reference = encoder.encode(sentences, max_tokens=EVALUATION_BUDGETS[0])
    for budget in EVALUATION_BUDGETS:
        times = []
        for _ in range(2):
            started = time.perf_counter()
            embeddings = encoder.encode(sentences, max_tokens=budget)
            times.append(time.perf_counter() - started)
        row["budgets"][budget] = {"seconds": min(times), "difference": float((embeddings - reference).abs().max())}
    for value in row["budgets"].values():
        value["ratio"] = value["seconds"] / row["budgets"][EVALUATION_BUDGETS[0]]["seconds"]
    return row


def sts_sentences(pairs_per_task: int = 60) -> list[str]:
    """The distinct sentences of the first pairs of each STS task."""
    pairs = [p for task in evaluate.STS_TASKS for p in evaluate.load_task(task)[:pairs_per_task]]
    return list(dict.fromkeys(s for p in pairs for s in (p.sent1, p.sent2)))


@dataclass
class Workload:
    """One notebook's training batches and the two ways of running them through its encoder."""

    name: str
    encoder: models.SentenceEncoder
    batches: list
    one_padded_batch: Callable  # batch -> embeddings, the batch padded to its longest input in one forward
    chunked: Callable  # batch -> embeddings, through ``SentenceEncoder.embed_unpadded``
    lengths: Callable  # batch -> token counts of its inputs


def sentence_workload(name: str, encoder: models.SentenceEncoder, batches: list[list[str]]) -> Workload:
    """Batches of sentences through ``SentenceEncoder.forward``."""
    return Workload(
        name,
        encoder,
        batches,
        lambda texts: encoder.embed(encoder.tokenize(texts)),
        encoder,
        lambda texts: [len(i) for i in encoder.tokenizer(encoder.prepare(texts))["input_ids"]],
    )


def bi_encoder_workload(quadruples: int, batches: int) -> Workload:
    """Notebook 40's bi-encoder (minilm-l6, mean pooling) on C-STS train rows: each quadruple's two sentences under
    both its conditions, as CCL's loss encodes them."""
    bi = ccl.build_encoder("minilm-l6", "bi", pooling="mean", device="cpu")
    rows = list(load_csts("train"))
    random.Random(0).shuffle(rows)
    size = 2 * quadruples  # two rows (conditions) per quadruple
    chosen = [rows[b * size : (b + 1) * size] for b in range(batches)]
    batch_inputs = [([r.sent1 for r in b] + [r.sent2 for r in b], [r.condition for r in b] * 2) for b in chosen]
    return Workload(
        f"40 bi-encoder: minilm-l6, {quadruples} quadruples",
        bi.encoder,
        batch_inputs,
        lambda b: bi.encoder.embed(bi.tokenize_pairs(*b)),
        lambda b: bi.represent_batch(*b),
        lambda b: [len(i) for i in bi.pair_ids(*b)["input_ids"]],
    )


def pair_batches(pairs_per_batch: int, batches: int) -> list[list[str]]:
    """Shuffled STS-B + SICK-R train pairs, each batch as its first sentences then its second ones."""
    pairs = list(load_stsb("train")) + list(load_sick("train"))
    random.Random(0).shuffle(pairs)
    out = []
    for b in range(batches):
        batch = pairs[b * pairs_per_batch : (b + 1) * pairs_per_batch]
        out.append([p.sent1 for p in batch] + [p.sent2 for p in batch])
    return out


def step_seconds(work: Workload, forward: Callable) -> float:
    """Mean seconds of forward + backward over the workload's batches, after one untimed warm-up step."""
    work.encoder.train()
    for i, batch in enumerate([work.batches[0], *work.batches]):
        if i == 1:
            started = time.perf_counter()
        forward(batch).pow(2).sum().backward()
        work.encoder.zero_grad(set_to_none=True)
    return (time.perf_counter() - started) / len(work.batches)


def measure(work: Workload) -> dict:
    """The baseline and every budget; the largest eval-mode difference at the default budget."""
    real = padded = 0
    for batch in work.batches:
        lengths = work.lengths(batch)
        real, padded = real + sum(lengths), padded + len(lengths) * max(lengths)
    baseline = step_seconds(work, work.one_padded_batch)
    row = {"workload": work.name, "baseline_s": baseline, "padding_share": 1 - real / padded, "budgets": {}}
    default = models.CPU_TRAINING_CHUNK_TOKENS
    for budget in BUDGETS:
        models.CPU_TRAINING_CHUNK_TOKENS = budget
        seconds = step_seconds(work, work.chunked)
        row["budgets"][budget] = {"seconds": seconds, "ratio": seconds / baseline}
    models.CPU_TRAINING_CHUNK_TOKENS = default
    work.encoder.eval()
    with torch.no_grad():
        differences = [(work.one_padded_batch(b) - work.chunked(b)).abs().max() for b in work.batches]
    row["max_abs_difference"] = float(max(differences))
    return row


def table(report: dict) -> str:
    """The report as markdown: seconds per step and the ratio to one padded batch for each budget."""
    lines = [
        f"Host `{report['host']}`, {report['threads']} threads, {report['batches']} timed batches per arm "
        f"(python benchmarks/bench_chunk_budgets.py, {report['date']}).",
        "",
        "| workload | padding in one batch | one padded batch (s/step) | "
        + " | ".join(f"chunks of {b} tokens" for b in BUDGETS)
        + " | largest embedding difference |",
        "|---|---|---|" + "---|" * len(BUDGETS) + "---|",
    ]
    for r in report["rows"]:
        cells = [f"{v['seconds']:.2f} s ({v['ratio']:.2f}x)" for v in r["budgets"].values()]
        lines.append(
            f"| {r['workload']} | {r['padding_share']:.0%} | {r['baseline_s']:.2f} s | "
            + " | ".join(cells)
            + f" | {r['max_abs_difference']:.1e} |"
        )
    lines += [
        "",
        "Evaluation (`SentenceEncoder.encode`, best of two, ratio to 8,192 padded tokens per batch):",
        "",
        "| model | sentences | " + " | ".join(f"{b} tokens" for b in EVALUATION_BUDGETS) + " |",
        "|---|---|" + "---|" * len(EVALUATION_BUDGETS),
    ]
    for r in report["evaluation"]:
        cells = [f"{v['seconds']:.2f} s ({v['ratio']:.2f}x, {v['difference']:.0e})" for v in r["budgets"].values()]
        lines.append(f"| {r['workload']} | {r['sentences']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=3, help="timed batches per arm")
    parser.add_argument("--out", default=None, help="also write OUT.json and OUT.md")
    args = parser.parse_args()
    torch.manual_seed(0)
    pcc = pcc_training.load_prompt_encoder("smollm2-135m", "sth", lora=models.LoraSettings())
    texts = [pcc_training.cut(pcc.tokenizer, t, 64) for t in pair_batches(32, args.batches)]
    rows = [measure(sentence_workload("10 stage 2: smollm2-135m + LoRA, 32 pairs", pcc, texts))]
    sentences = sts_sentences()
    evaluation = [evaluation_row("smollm2-135m + LoRA, PromptSTH", pcc, sentences[:400])]
    del pcc
    raw = models.load_encoder("smollm2-135m-l6", max_length=64)
    rows.append(
        measure(sentence_workload("20 Table 1: smollm2-135m-l6, 16 pairs", raw, pair_batches(16, args.batches)))
    )
    evaluation.append(evaluation_row("smollm2-135m-l6", raw, sentences))
    rows.append(measure(bi_encoder_workload(8, args.batches)))
    evaluation.append(evaluation_row("minilm-l6", models.load_encoder("minilm-l6"), sentences))
    report = {
        "host": platform.platform(),
        "threads": torch.get_num_threads(),
        "batches": args.batches,
        "date": datetime.date.today().isoformat(),
        "rows": rows,
        "evaluation": evaluation,
    }
    print(table(report))
    if args.out:
        Path(f"{args.out}.json").write_text(json.dumps(report, indent=1) + "\n")
        Path(f"{args.out}.md").write_text(
            "# bench_chunk_budgets: token budgets of training and evaluation batches on the CPU\n\n" + table(report)
        )


if __name__ == "__main__":
    main()
