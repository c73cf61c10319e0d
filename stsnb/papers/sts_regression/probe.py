"""Does Table 1's baseline train the raw backbone at all, and in which setting?

Table 1's claims compare losses *after* fine-tuning; on an encoder that fine-tuning did not move they compare two
copies of the untrained model. This probe asks the prior question for one setting (task, loss, learning rate,
pairs, batch, cutoff length): fine-tune ``fine_tune_table1`` as notebook 20 does (layer-wise decay, the head's own
learning rate, warmup then decay) for one epoch with **no checkpoint selection**, then score the last weights
against the untrained backbone on the same STS-B dev pairs as a paired bootstrap difference with a verdict
(``stsnb.evaluation.stats``). The loss at the first and last logged interval tells whether the objective itself trained.

:data:`ROUNDED_PROBE` is the probe of the main claim's arm on the same labels (Smooth K2 on the class ids cross
entropy learns, ``tasks.STS_ROUNDED_TASK``) at the ``cpu`` settings, training seeds 0-2: defined, its command
:func:`probe_command`, its rows to be committed as ``benchmarks/results/<name>.json``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...data import STSPair
from ...evaluation import dev_gates, evaluate, stats, verdict_rules
from ...runs import probe_tables
from ...runs.probe_tables import row_line
from ...training.config import TrainConfig
from .backbones import load_backbone
from .recipes import fine_tune_table1, table2_loss
from .tasks import table1_task
from .training_data import TrainingPair

BASELINE_PROBES = (  # the committed probe tables (benchmarks/results/) notebook 20 quotes, in the order they were run
    "bench_sts_regression_moves",
    "bench_sts_regression_moves_after_run",
    "bench_sts_regression_moves_all_pairs",
)
LOSS_INTERVALS = 6  # logged loss intervals per run (the first and the last are reported)
BENCHMARK = "benchmarks/bench_sts_regression_moves.py"  # the script that runs a probe (from the repository root)


@dataclass(frozen=True)
class ProbeSetting:
    """One Table 1 setting to probe on a backbone."""

    task: str  # "nli" | "sts" (``tasks.TASKS``)
    loss: str  # a Table 1 loss, with Table 2's k, x0 for the buffered ones
    lr: float
    pairs: int
    batch_size: int = 16
    max_length: int = 64

    def label(self) -> str:
        return (
            f"{self.task} {self.loss}, lr {self.lr:g}, {self.pairs} pairs, batch {self.batch_size}, "
            f"length {self.max_length}"
        )

    def argument(self) -> str:
        """The benchmark's ``--setting`` text of this setting (``task,loss,lr,pairs,batch,length``)."""
        return f"{self.task},{self.loss},{self.lr:g},{self.pairs},{self.batch_size},{self.max_length}"


@dataclass(frozen=True)
class ProbeSpec:
    """A probe to run and commit: its name (``benchmarks/results/<name>.json`` and ``.md``), the settings, the
    training seeds of each (the dev sample and the pool's shuffle stay ``data_seed``'s, as notebook 20 keeps its
    ``seed`` for the data while ``main_claim_seeds`` vary the training), the STS-B dev pairs and why it is run."""

    name: str
    settings: tuple[ProbeSetting, ...]
    seeds: tuple[int, ...] = (0,)
    data_seed: int = 0
    dev_pairs: int = 500
    question: str = ""


def probe_command(spec: ProbeSpec, data_dir: str | None = "../shared/data") -> str:
    """The command that runs ``spec`` from the repository root and writes its rows (``--json``); ``data_dir``
    sets ``STSNB_DATA_DIR`` in front of it (None: the data folder the environment names)."""
    prefix = f"STSNB_DATA_DIR={data_dir} " if data_dir else ""
    return (
        f"{prefix}python {BENCHMARK} --dev-pairs {spec.dev_pairs} --seed {spec.data_seed} "
        f"--seeds {' '.join(map(str, spec.seeds))} --setting {' '.join(s.argument() for s in spec.settings)} "
        f"--json benchmarks/results/{spec.name}.json"
    )


def spec_text(spec: ProbeSpec, results_dir=None) -> str:
    """The committed rows of ``spec`` as printed lines, or, before they are committed, that the probe is defined and
    not yet run, with its question and command."""
    try:
        rows = probe_tables.load(spec.name, *([results_dir] if results_dir is not None else []))
    except FileNotFoundError:
        command = probe_command(spec, None)
        return f"{spec.name}: defined, not yet run ({spec.question}); run it with:\n    {command}"
    return f"{spec.name} ({spec.question}):\n" + probe_tables.table(rows)


# Notebook 20's main claim on the same labels: does Smooth K2 on cross entropy's rounded class ids move the
# raw backbone at the cpu profile's settings (2,880 pairs, lr 2e-4, batch 16, length 64) on each main-claim seed?
# The committed rows of the same setting on the continuous score (seed 0) are in bench_sts_regression_moves.json.
ROUNDED_PROBE = ProbeSpec(
    "bench_sts_regression_moves_rounded",
    (ProbeSetting("sts_rounded", "smooth_k2", 2e-4, 2880, 16, 64),),
    seeds=(0, 1, 2),
    question="Smooth K2 on the rounded class ids (the labels cross entropy learns) moves the raw backbone on STS-B dev",
)


def table1_moves(
    setting: ProbeSetting,
    backbone: str,
    pairs: Sequence[TrainingPair],
    dev_pairs: Sequence[STSPair],
    *,
    row: str = "BERT-base",
    head_lr: float | None = 1e-3,
    lr_decay: float = 0.95,
    warmup_ratio: float = 0.2,
    weight_decay: float = 0.01,
    max_grad_norm: float | None = 10.0,
    freeze_embeddings: bool = True,
    seed: int = 0,
    n_resamples: int = 1000,
) -> dict:
    """Fine-tune ``backbone`` on the first ``setting.pairs`` of ``pairs`` (one epoch, no selection) and return
    ``verdict_rules.claim_row`` of last-step minus untrained STS-B dev Spearman, with ``dev_before``, ``dev_after``,
    ``loss_first``, ``loss_last``, ``steps`` and ``seconds`` (loading, training and both scorings)."""
    if len(pairs) < setting.pairs:
        raise ValueError(f"{setting.label()}: needs {setting.pairs} training pairs, got {len(pairs)}")
    started = time.perf_counter()
    before = evaluate.dev_predictions(load_backbone(backbone, setting.max_length), dev_pairs)
    steps = setting.pairs // setting.batch_size
    config = TrainConfig(
        batch_size=setting.batch_size,
        lr=setting.lr,
        weight_decay=weight_decay,
        warmup_ratio=warmup_ratio,
        max_grad_norm=max_grad_norm,
        eval_every=max(1, steps // LOSS_INTERVALS),  # logs the loss; no dev pairs, so no selection
        eval_at_start=False,
        seed=seed,
        progress=False,
    )
    model, result = fine_tune_table1(
        backbone,
        list(pairs[: setting.pairs]),
        table2_loss(setting.loss, row),
        config,
        dev_pairs=None,
        clamp="none",
        max_length=setting.max_length,
        lr_decay=lr_decay,
        head_lr=head_lr,
        seed=seed,
        freeze_embeddings=freeze_embeddings,
        task=table1_task(setting.task),
    )
    after = evaluate.dev_predictions(model.encoder, dev_pairs)
    gap = stats.paired_predictions_difference(after, before, n_resamples=n_resamples, seed=seed)
    row_out = verdict_rules.claim_row(f"{setting.label()} improves STS-B dev", [gap], paper_direction=+1)
    row_out.pop("per_seed")
    losses = [h["loss"] for h in result.history if "loss" in h]
    return {
        **row_out,
        "setting": setting.label(),
        "dev_before": evaluate.spearman_scores(before)["avg"],
        "dev_after": evaluate.spearman_scores(after)["avg"],
        "loss_first": losses[0] if losses else float("nan"),
        "loss_last": losses[-1] if losses else float("nan"),
        "steps": result.steps,
        "seconds": round(time.perf_counter() - started, 1),
        "seed": seed,
    }


def _pairs(row: Mapping) -> int:
    """The training pairs of a probe row, read from its ``ProbeSetting.label``."""
    found = re.search(r", (\d+) pairs,", row["setting"])
    if found is None:
        raise ValueError(f"probe row {row['setting']!r} names no number of pairs")
    return int(found.group(1))


def _baseline_gate(row: Mapping, loss: str) -> Mapping | None:
    """The dev gate of ``loss`` stored in a claim row (``dev_gates``: arm and per-seed entries), or None."""
    return next((g for g in row.get("dev_gates") or [] if g.get("arm") == loss), None)


def baseline_note(
    main_row: Mapping,
    probe_rows: Sequence[Mapping],
    cpu_setting: ProbeSetting,
    *,
    table1_seconds: float,
    budget_seconds: float = 1800.0,
) -> str:
    """Markdown on whether the main claim's baseline (``cpu_setting.loss``, cross entropy) trained, read from its dev
    gate in the main claim's row (``dev_gates``: per seed, the step STS-B dev selection kept and its dev gain over the
    untrained encoder against its noise bound), and on the committed probe rows of the baseline (``cpu_setting.task``
    and ``.loss``).

    If it trained on every seed, says so. Otherwise names the seeds left out of the main claim, lists the baseline's
    probe rows and scales this run's Table 1 time ``table1_seconds`` by the probe's time at the most pairs over its
    time at ``cpu_setting``, to say whether that setting fits ``budget_seconds``."""
    gate = _baseline_gate(main_row, cpu_setting.loss)
    if gate is None:
        return f"The main claim's row has no dev gate of {cpu_setting.loss}: nothing to say whether it trained."
    seeds = list(gate["seeds"])
    idle = [e for e in seeds if not e.get("trained")]
    evidence = dev_gates.seed_evidence(gate)
    if not idle:
        return (
            f"**The main claim's baseline trained on dev.** {cpu_setting.loss} kept a step past 0 with a dev gain "
            f"over its start beyond its dev noise bound and the claim's smallest effect on each of its "
            f"{len(seeds)} seed(s) ({evidence}), so no seed is left out: {main_row['verdict']}."
        )
    rows = [r for r in probe_rows if r["setting"].startswith(f"{cpu_setting.task} {cpu_setting.loss},")]
    left = ", ".join(e["seed"] for e in idle)
    lines = [
        f"**The main claim's baseline did not train on dev on every seed.** {cpu_setting.loss}: {evidence}. So "
        f"{left} {'is' if len(idle) == 1 else 'are'} left out of the main claim, which keeps {len(seeds) - len(idle)} "
        f"of {len(seeds)} seed(s): {main_row['verdict']}. The committed probes of {cpu_setting.loss} (one epoch, "
        "the last weights against the untrained backbone on STS-B dev; commands, dev pairs and seeds in "
        "`benchmarks/results/`):",
        "",
        *(f"- {row_line(r)}" for r in rows),
    ]
    at_cpu = next((r for r in rows if r["setting"] == cpu_setting.label()), None)
    largest = max(rows, key=_pairs, default=None)
    if at_cpu is not None and largest is not None and _pairs(largest) > _pairs(at_cpu):
        ratio = largest["seconds"] / at_cpu["seconds"]
        estimate = ratio * table1_seconds
        fits = "within" if estimate <= budget_seconds else "past"
        lines += [
            "",
            f"With {_pairs(largest)} pairs a probe run took {ratio:.1f}x as long as with this run's {_pairs(at_cpu)} "
            f"({largest['seconds']:.0f} s against {at_cpu['seconds']:.0f} s), for a dev gain of "
            f"{largest['difference']:+.2f} against {at_cpu['difference']:+.2f}. Table 1's runs took "
            f"{table1_seconds:.0f} s here; at that size they would take about {estimate:.0f} s, {fits} the "
            f"{budget_seconds / 60:.0f}-minute budget.",
        ]
    return "\n".join(lines)


def no_main_claim_note(losses: Sequence[str]) -> str:
    """What the "did the main claim's baseline train?" cell prints when this run has no main-claim row: which Table 1
    losses it trained instead (``losses``), so the cell never stands empty."""
    return (
        f"This run does not test the paper's main claim, so there is no baseline to check: its Table 1 trains "
        f"{', '.join(losses)}, and the main claim needs both cross entropy and Smooth K2."
    )
