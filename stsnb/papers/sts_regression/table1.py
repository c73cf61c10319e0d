"""Table 1's runs (Section 4.1): which losses train on which seed, one run as a picklable job for
``stsnb.distributed.run``, and what the notebook keeps of each run (its kept predictions and scores, the STS-B dev
curve, the head's outputs and accuracy on held-out pairs of its task, the ``metrics.json`` entry and printed line).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from torch import Tensor

from ... import data as stsdata
from .claims import HEADLINE_LOSSES, Trained
from .recipes import LossSpec, Table1Run, dev_curve, table1_run
from .scoring import Evaluation
from .tasks import NLI_TASK, Table1Task, heldout_accuracy
from .training_data import TrainingPair

Key = tuple[str, str, int]  # (backbone, loss name, training seed)


def losses_on_seed(losses: Sequence[str], seed: int, seeds: Sequence[int]) -> list[str]:
    """The Table 1 losses trained on ``seed``: every one of ``losses`` on the ``seeds`` of the table, only the
    headline pair (cross entropy and Smooth K2, ``HEADLINE_LOSSES``) on the headline's extra seeds."""
    return [name for name in losses if seed in seeds or name in HEADLINE_LOSSES]


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
    test pairs: what ``stsnb.distributed.run`` starts on the notebook's ``num_processes`` processes."""
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
    claims), its scores, its STS-B dev curve, the head's outputs and accuracy on the held-out pairs of ``task``."""

    heldout: Sequence[TrainingPair]
    task: Table1Task = NLI_TASK
    trained: dict[Key, Trained] = field(default_factory=dict)
    scores: dict[Key, dict[str, float]] = field(default_factory=dict)
    curves: dict[Key, list[tuple[int, float]]] = field(default_factory=dict)
    heldout_outputs: dict[Key, Tensor] = field(default_factory=dict)
    heldout_accuracy: dict[Key, float] = field(default_factory=dict)

    def add(self, key: Key, outcome: Table1Run, evaluation: Evaluation) -> dict:
        """Keep one run; returns its ``metrics.json`` entry (scores with the average named by ``evaluation``, the
        dev score and step kept, the steps, the largest weight change, the held-out accuracy)."""
        result = outcome.result
        self.trained[key], self.scores[key] = Trained.of(outcome.predictions, result), outcome.scores
        self.curves[key] = dev_curve(result)
        self.heldout_outputs[key] = outcome.heldout_outputs
        self.heldout_accuracy[key] = heldout_accuracy(outcome.heldout_outputs, self.heldout, self.task)
        return {
            **evaluation.comparable(outcome.scores),
            "best_dev": result.best_score,
            **{k: getattr(result, k) for k in ("best_step", "steps", "weight_change")},
            f"heldout_{self.task.name}_accuracy": self.heldout_accuracy[key],
        }

    def line(self, key: Key, outcome: Table1Run, loss: LossSpec, seconds: float) -> str:
        """The printed line of one run: the average, the dev score and step kept, the weight change, the accuracy."""
        backbone, _, seed = key
        result = outcome.result
        return (
            f"{backbone} seed {seed} {loss.label():<28} avg {outcome.scores['avg']:.2f}  best dev "
            f"{result.best_score:.2f} @ step {result.best_step}/{result.steps} (largest weight change "
            f"{result.weight_change:.1e})  held-out {self.task.name.upper()} acc {self.heldout_accuracy[key]:.1f}%  "
            f"[{seconds:.0f} s]"
        )
