"""Table 1's runs (Section 4.1): which arms train on which seed, one run as a picklable job for
``stsnb.training.distributed.run``, and what the notebook keeps of each run (its kept predictions and scores, the STS-B
dev curve and training history, the head's outputs and accuracy on held-out pairs of its task, the ``metrics.json``
entry and printed line).

An arm is a Table 1 loss trained on the notebook's task, or ``claims.ROUNDED_K2``: Smooth K2 trained on the class
ids cross entropy learns (``tasks.same_labels_task``), the main claim's regression arm on the STS analogue when
``main_claim_targets = "rounded"`` (:func:`isolates`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from torch import Tensor

from ... import data as stsdata
from .claims import BASELINE, MAIN_CLAIM_LOSSES, MAIN_PAIR, ROUNDED_K2, Trained, with_flag
from .recipes import LossSpec, Table1Run, dev_curve, table1_run, table2_loss
from .scoring import Evaluation, compare
from .tasks import NLI_TASK, Table1Task, accuracy_text, heldout_accuracy, majority_accuracy, same_labels_task
from .training_data import TrainingPair

Key = tuple[str, str, int]  # (backbone, loss name, training seed)


def losses_on_seed(losses: Sequence[str], seed: int, seeds: Sequence[int]) -> list[str]:
    """The Table 1 losses trained on ``seed``: every one of ``losses`` on the ``seeds`` of the table, only the
    main claim's pair (cross entropy and Smooth K2, ``MAIN_CLAIM_LOSSES``) on the main claim's extra seeds."""
    return [name for name in losses if seed in seeds or name in MAIN_CLAIM_LOSSES]


MAIN_CLAIM_TARGETS = ("rounded", "continuous")  # notebook 20's ``main_claim_targets``


def isolates(task: Table1Task, main_claim_targets: str, losses: Sequence[str]) -> bool:
    """Whether the main claim trains its own regression arm on cross entropy's labels (:data:`claims.ROUNDED_K2`):
    ``main_claim_targets`` is "rounded", ``task`` gives regression a finer score than the classes (the STS analogue;
    on NLI both already learn the same labels) and both of the main claim's losses are among ``losses``."""
    if main_claim_targets not in MAIN_CLAIM_TARGETS:
        raise ValueError(f"main_claim_targets must be one of {MAIN_CLAIM_TARGETS}, got {main_claim_targets!r}")
    both = all(name in losses for name in MAIN_CLAIM_LOSSES)
    return main_claim_targets == "rounded" and not task.same_labels and both


def arms_on_seed(losses: Sequence[str], seed: int, seeds: Sequence[int], isolated: bool = False) -> list[str]:
    """The Table 1 arms trained on ``seed``: every one of ``losses`` on the ``seeds`` of the table and the
    main claim's two arms on every seed (the main claim's extra seeds too). ``isolated``: those two arms are cross
    entropy and Smooth K2 on its labels (:data:`claims.ROUNDED_K2`, after Table 1's losses), and Smooth K2 on the
    score trains on ``seeds`` only; else cross entropy and Smooth K2 (``losses_on_seed``)."""
    if not isolated:
        return losses_on_seed(losses, seed, seeds)
    return [name for name in losses if seed in seeds or name == BASELINE] + [ROUNDED_K2]


def arm_loss(name: str, row: str) -> LossSpec:
    """The loss an arm trains with, Table 2's ``k``, ``x0`` for ``row`` (the rounded arm: Smooth K2's)."""
    return table2_loss(MAIN_PAIR.a if name == ROUNDED_K2 else name, row)


def arm_label(name: str, row: str) -> str:
    """An arm as printed: its loss with Table 2's ``k``, ``x0``, and "on rounded labels" for the rounded arm."""
    return arm_loss(name, row).label() + (" on rounded labels" if name == ROUNDED_K2 else "")


def runs_per_backbone(
    losses: Sequence[str], seeds: Sequence[int], main_claim_seeds: Sequence[int], isolated: bool
) -> int:
    """Table 1's runs on one backbone: :func:`arms_on_seed` over ``seeds`` and ``main_claim_seeds``."""
    return sum(len(arms_on_seed(losses, s, seeds, isolated)) for s in dict.fromkeys([*seeds, *main_claim_seeds]))


def main_claim_labels_note(
    losses: Sequence[str],
    seeds: Sequence[int],
    main_claim_seeds: Sequence[int],
    task: Table1Task,
    main_claim_targets: str,
    table1_seconds: float,
    runs_trained: int,
) -> str:
    """Markdown on how this run's main claim compares the objectives and what that cost, from the run's numbers:
    the Table 1 runs per backbone of this design and of the design without the rounded arm, and the seconds the
    difference took at this run's mean time per run (``table1_seconds`` over ``runs_trained``)."""
    isolated = isolates(task, main_claim_targets, losses)
    missing = [name for name in MAIN_CLAIM_LOSSES if name not in losses]
    if missing:  # a run of one loss (the class profile): no comparison of the objectives at all
        return (
            f"**The main claim's labels.** This run trains no {', no '.join(missing)} (`table1_losses`), so it "
            "compares no regression with classification: the paper's main claim is **not run** here, whatever the "
            "labels."
        )
    if task.same_labels:
        return (
            f"**The main claim's labels.** On `{task.name}` regression and cross entropy learn the same labels, so the "
            "main claim compares the objectives as it is: no extra arm."
        )
    if not isolated:
        return (
            f"**The main claim's labels.** `main_claim_targets = {main_claim_targets!r}`: no Smooth K2 run learnt the "
            "rounded labels, so the only regression-against-classification comparison is confounded with label "
            "resolution (a check of the analogue) and the paper's main claim is **not tested** in this run."
        )
    now = runs_per_backbone(losses, seeds, main_claim_seeds, True)
    before = runs_per_backbone(losses, seeds, main_claim_seeds, False)
    per_run = table1_seconds / max(1, runs_trained)
    extra = (now - before) * per_run
    return (
        f"**What isolating the main claim cost.** Smooth K2 on the rounded labels trained on "
        f"{len(dict.fromkeys([*seeds, *main_claim_seeds]))} seed(s) beside cross entropy, and Smooth K2 on the score "
        f"on `seeds` only: {now} Table 1 runs per backbone against {before} for the confounded design, "
        f"{now - before:+d} run(s), about {extra:.0f} s at this run's {per_run:.0f} s a run ({runs_trained} runs in "
        f'{table1_seconds:.0f} s). Switching every loss to the rounded labels (`table1_task = "sts_rounded"`) '
        f"would take the confounded design's {before} runs, but would move the four other Table 1 claims and Tables "
        "5-6, whose arms already learn the same labels as each other, onto coarser labels they do not need, and "
        "would drop the confounded comparison; so only the main claim gets the arm."
    )


def arm_task(name: str, task: Table1Task) -> Table1Task:
    """The task an arm trains on: the rounded arm on cross entropy's labels of ``task``, every other on ``task``."""
    return same_labels_task(task) if name == ROUNDED_K2 else task


def table1_job(
    backbone: str,
    pairs: Sequence[TrainingPair],
    loss: LossSpec,
    config,
    dev_pairs: Sequence[stsdata.STSPair] | None,
    heldout: Sequence[TrainingPair],
    evaluation: Evaluation,
    **fine_tune: object,
) -> functools.partial:
    """One Table 1 run as a picklable job (``table1_run`` with every argument bound), scored on ``evaluation``'s
    test pairs: what ``stsnb.training.distributed.run`` starts on the notebook's ``num_processes`` processes."""
    return functools.partial(
        table1_run,
        backbone,
        pairs,
        loss,
        config,
        dev_pairs,
        heldout,
        evaluation.tasks,
        evaluation.max_pairs,
        evaluation.seed,
        **fine_tune,
    )


@dataclass
class Table1Runs:
    """Every Table 1 run of a notebook by ``(backbone, loss, seed)``: what dev selection kept (``trained``, for the
    claims), its scores, its STS-B dev curve and training history, the head's outputs and accuracy on the held-out
    pairs of ``task``."""

    heldout: Sequence[TrainingPair]
    task: Table1Task = NLI_TASK
    trained: dict[Key, Trained] = field(default_factory=dict)
    scores: dict[Key, dict[str, float]] = field(default_factory=dict)
    curves: dict[Key, list[tuple[int, float]]] = field(default_factory=dict)
    histories: dict[Key, list[dict]] = field(
        default_factory=dict
    )  # ``stsnb.training.train``'s rows: loss and dev by step
    heldout_outputs: dict[Key, Tensor] = field(default_factory=dict)
    heldout_accuracy: dict[Key, float] = field(default_factory=dict)

    def add(self, key: Key, outcome: Table1Run, evaluation: Evaluation) -> dict:
        """Keep one run; returns its ``metrics.json`` entry (scores with the average named by ``evaluation``, the
        dev score and step kept, the steps, the largest weight change, the held-out accuracy)."""
        result = outcome.result
        self.trained[key], self.scores[key] = Trained.of(outcome.predictions, result), outcome.scores
        self.curves[key] = dev_curve(result)
        self.histories[key] = list(result.history)
        self.heldout_outputs[key] = outcome.heldout_outputs
        self.heldout_accuracy[key] = heldout_accuracy(outcome.heldout_outputs, self.heldout, self.task)
        return {
            **evaluation.comparable(outcome.scores),
            "best_dev": result.best_score,
            **{k: getattr(result, k) for k in ("best_step", "steps", "weight_change")},
            f"heldout_{self.task.name}_accuracy": self.heldout_accuracy[key],
        }

    @property
    def majority(self) -> float:
        """The held-out accuracy of always guessing the most common class (``tasks.majority_accuracy``)."""
        return majority_accuracy(self.heldout, self.task)

    def labelled_histories(self, seed: int | None = None) -> dict[str, list[dict]]:
        """The training histories (``stsnb.training.train`` rows) by a printable run label, "arm seed N" (the backbone
        first when several ran), for ``stsnb.teaching.training_curves``; ``seed``: that training seed's runs only."""
        several = len({b for b, _, _ in self.histories}) > 1
        return {
            f"{f'{b} ' if several else ''}{n} seed {s}": history
            for (b, n, s), history in self.histories.items()
            if seed is None or s == seed
        }

    def compare(self, backbone: str, name: str, row: str, evaluation: Evaluation, note: str) -> list[dict]:
        """Our mean over the seeds arm ``name`` ran on beside the paper's ``row`` of its loss (the rounded arm beside
        the paper's Smooth K2, named as such), ``note`` ending with the seeds and, where a run kept step 0, the
        UNTRAINED flag (``claims.with_flag``)."""
        ran = [s for b, n, s in self.scores if (b, n) == (backbone, name)]
        if not ran:
            return []
        tasks = self.scores[(backbone, name, ran[0])]
        mean = {t: float(sum(self.scores[(backbone, name, s)][t] for s in ran) / len(ran)) for t in tasks}
        return compare(
            mean,
            evaluation,
            "Table 1",
            f"{row} {arm_loss(name, row).name}",
            our_setting=f"{backbone} {arm_label(name, row)}",
            note=with_flag(f"{note}; mean of {len(ran)} seed(s)", [self.trained[(backbone, name, s)] for s in ran]),
        )

    def line(self, key: Key, outcome: Table1Run, loss: LossSpec, seconds: float) -> str:
        """The printed line of one run: the average, the dev score and step kept, the weight change, the accuracy
        (the rounded arm says so after its loss)."""
        backbone, name, seed = key
        result = outcome.result
        label = loss.label() + (" on rounded labels" if name == ROUNDED_K2 else "")
        return (
            f"{backbone} seed {seed} {label:<28} avg {outcome.scores['avg']:.2f}  best dev "
            f"{result.best_score:.2f} @ step {result.best_step}/{result.steps} (largest weight change "
            f"{result.weight_change:.1e})  {accuracy_text(self.heldout_accuracy[key], self.majority, self.task)}  "
            f"[{seconds:.0f} s]"
        )


def plan_line(
    task: Table1Task,
    main_claim_targets: str,
    losses: Sequence[str],
    seeds: Sequence[int],
    main_claim_seeds: Sequence[int],
) -> str:
    """One line on what this run's Table 1 trains: each arm on which seeds (``arms_on_seed``), how many runs, and
    which comparison of classification with regression it makes, if any (a profile may train one loss alone)."""
    isolated = isolates(task, main_claim_targets, losses)
    groups: dict[tuple[str, ...], list[int]] = {}
    for seed in dict.fromkeys([*seeds, *main_claim_seeds]):
        groups.setdefault(tuple(arms_on_seed(losses, seed, seeds, isolated)), []).append(seed)
    runs = sum(len(arms) * len(on) for arms, on in groups.items())
    trained = "; ".join(
        f"{', '.join(arms)} on seed{'s' * (len(on) > 1)} {', '.join(map(str, on))}" for arms, on in groups.items()
    )
    regression = [name for name in losses if name != BASELINE]
    if BASELINE not in losses or not regression:
        missing = "no cross entropy (classification)" if BASELINE not in losses else "no regression loss"
        compared = (
            f"it trains {missing}, so this run compares no classification with regression: the main claim is not run, "
            "and the section shows what fine-tuning does to the raw backbone"
        )
    elif isolated:
        compared = f"the main claim compares {ROUNDED_K2} with {BASELINE} on the same rounded labels"
    elif all(name in losses for name in MAIN_CLAIM_LOSSES) and task.same_labels:
        compared = f"the main claim compares {MAIN_PAIR.a} with {BASELINE} on the same labels"
    elif all(name in losses for name in MAIN_CLAIM_LOSSES):
        compared = (
            f"{MAIN_PAIR.a} on the score is compared with {BASELINE} on its classes, a check confounded with label "
            "resolution: the paper's main claim is not tested"
        )
    else:
        compared = f"{BASELINE} is compared with {', '.join(regression)}; the main claim's Smooth K2 is not trained"
    return f"This run's Table 1 ({runs} run{'s' * (runs != 1)}): {trained}; {compared}."
