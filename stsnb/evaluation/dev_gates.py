"""Whether an arm trained, decided per training seed on dev data, never on the test pairs a claim is scored on.

A claim "a beats b" only says something about the paper where a and b themselves trained. That is decided here from
what checkpoint selection saw on dev data (``stsnb.training.train.fit`` evaluates before its first step, every
``eval_every`` steps, and keeps the best dev score). **The rule: an arm trained on a seed when the checkpoint selection
kept beats the arm's own starting point on dev by more than noise, on dev items selection never saw**:

- selection kept a step past 0 and some trained weight changed (else the returned model *is* its start), and
- on the **held-out dev pairs** (``stsnb.data.selection_and_gate``: drawn from the dev items selection does not use;
  ``fit``'s ``gate`` scores them at the start and on the kept weights) the kept model's Spearman minus the start's
  exceeds ``1.96 x SE``, SE the paired bootstrap standard error of that gain (rows of one C-STS sentence pair drawn
  together): a paired 95% interval above 0. Selection picked the best of k checkpoints on *its* items, which
  inflates the gain there; on items it never saw the kept checkpoint is one fixed model, so one comparison's bound
  holds whatever k was. The first cpu rerun under the earlier rule (below) showed why it matters: at 300 selection
  pairs the best-of-8 bound was +5.07, more than most arms' whole effect, so trained arms failed it.
- Where selection used every dev item (the paper profiles, ``dev_pairs = None``), none is left to hold out, and the
  gain on the selection items must exceed the **best-of-k noise bound** ``z_k x SE`` (:func:`noise_bound`): ``z_k``
  the normal quantile at ``1 - 0.025 / k``, k the evaluations selection chose among after step 0. Under "no
  checkpoint is better than the start" the best of k draws exceeds it with probability at most 2.5% (a union
  bound). A gain of +0.07 that the best of 4 evaluations gives by chance fails either way.

Where a claim says a method improves on a trained baseline, the baseline must also have moved dev by at least the
claim's smallest effect of interest (:meth:`DevGate.at_least`): a baseline that barely trained leaves "a beats b" a
comparison of a trained model with a near-untrained one ("not tested: the baseline barely trained (dev +x)").

The test pairs only ever give the claim's intervals: a gate read from them would let the same noise decide both
whether a claim is tested and how it comes out. A seed on which one of a claim's arms did not train is left out of
that claim, which then reports "k of n seeds" (``stsnb.evaluation.claims.claim(..., dev_gates=...)``); the claim is
*not tested* only when fewer than two seeds remain (or a claim's only seed is left out).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, NamedTuple

import numpy as np
from scipy.stats import norm

from .preconditions import Precondition
from .stats import paired_grouped_difference, paired_spearman_difference

TRAINED_ON_DEV = " trained on dev"  # the ending of a dev gate's name: "<arm> trained on dev"


NOISE_LEVEL = 0.025  # one-sided: the chance at most that the best of k evaluations of an untrained arm passes


class NoiseBound(NamedTuple):
    """The kept checkpoint's dev gain over its start (``gain``, Spearman x100 on the same dev pairs), the paired
    bootstrap standard error of that gain, the k evaluations selection chose among, ``z_k`` and the bound
    ``z_k x standard_error`` the gain must exceed (:func:`noise_bound`)."""

    gain: float
    standard_error: float
    evaluations: int
    z: float
    bound: float


def noise_bound(
    start: Mapping[str, Any], kept: Mapping[str, Any], evaluations: int, *, n_resamples: int = 2000, seed: int = 0
) -> NoiseBound:
    """What the best of ``evaluations`` noisy dev evaluations could give by chance, from the records of a fit's step-0
    evaluation (``start``) and of the one selection kept (``kept``; ``DevScore.record()``: gold, predictions, groups).

    The gain is kept minus start on the same dev items (their gold must match); its standard error is the paired
    bootstrap's over the dev pairs (``stats.paired_spearman_difference``; with groups, a cluster bootstrap drawing a
    group's rows together, ``stats.paired_grouped_difference``). The bound is ``z_k x SE`` with ``z_k`` the normal
    quantile at ``1 - NOISE_LEVEL / k`` (k = ``evaluations``, at least 1): for k = 1 (step 0 against one later
    evaluation) 1.96, for k = 4 2.50, for k = 10 2.81."""
    gold = np.asarray(start.get("gold", ()), dtype=float)
    if len(gold) == 0 or not np.array_equal(gold, np.asarray(kept.get("gold", ()), dtype=float)):
        raise ValueError("the step-0 and kept dev records must hold the same dev items (their gold scores differ)")
    k = max(1, int(evaluations))
    z = float(norm.ppf(1 - NOISE_LEVEL / k))
    a, b, groups = kept["predictions"], start["predictions"], kept.get("groups")
    if groups:
        paired = paired_grouped_difference(gold, a, b, groups, n_resamples=n_resamples, seed=seed)
    else:
        paired = paired_spearman_difference(gold, a, b, n_resamples=n_resamples, seed=seed)
    return NoiseBound(paired.difference, paired.standard_error, k, z, z * paired.standard_error)


@dataclass(frozen=True)
class SeedTrained:
    """One arm on one training seed: the step dev selection kept (of ``total_steps``), the kept dev score minus the
    arm's starting point's on the same dev pairs (Spearman x100), the largest change of a trained weight, and the
    noise bound that gain must exceed (:func:`noise_bound`, of ``evaluations`` selection evaluations; None where the
    run recorded no per-pair dev scores: then only "above 0" is asked, the rule of runs before the bound).
    ``minimum_gain`` (with ``minimum_reason``): the least dev gain a claim asks of a baseline
    (:meth:`DevGate.at_least`)."""

    seed: str
    selected_step: int
    dev_gain: float
    total_steps: int | None = None
    weight_change: float | None = None
    noise_bound: float | None = None
    evaluations: int | None = None
    minimum_gain: float | None = None
    minimum_reason: str | None = None
    held_out_items: int | None = None  # the gain is on this many dev pairs selection never saw (None: on its own)

    @property
    def left_start(self) -> bool:
        return self.selected_step > 0 and (self.weight_change is None or self.weight_change > 0)

    @property
    def beats_noise(self) -> bool:
        """The dev gain exceeds the best-of-k noise bound (above 0 where no bound was recorded)."""
        return self.dev_gain > (self.noise_bound if self.noise_bound is not None else 0.0)

    @property
    def moved_enough(self) -> bool:
        return self.minimum_gain is None or self.dev_gain >= self.minimum_gain

    @property
    def trained(self) -> bool:
        return self.left_start and self.beats_noise and self.moved_enough

    def why_not(self) -> str | None:
        """Why the arm did not count as trained on this seed, or None when it did."""
        if not self.left_start:
            return "did not train: it is its starting point"
        if not self.beats_noise:
            if self.noise_bound is None:
                return "did not train: no dev gain"
            if self.held_out_items is not None:
                return "did not train: within noise on held-out dev"
            return f"did not train: within best-of-{self.evaluations} noise"
        if not self.moved_enough:
            return f"barely trained: below {self.minimum_reason or f'the least gain {self.minimum_gain:.2f}'}"
        return None

    def describe(self) -> str:
        of = f" of {self.total_steps}" if self.total_steps is not None else ""
        held_out = self.held_out_items is not None
        text = f"{self.seed}: selected step {self.selected_step}{of}, {'held-out ' * held_out}dev {self.dev_gain:+.2f}"
        text += " over its start"
        if held_out:
            text += f" (noise bound +{self.noise_bound:.2f} on {self.held_out_items} pairs selection never saw)"
        elif self.noise_bound is not None:
            text += f" (best-of-{self.evaluations} noise bound +{self.noise_bound:.2f})"
        if self.weight_change is not None:
            text += f", largest weight change {self.weight_change:.1e}"
        why = self.why_not()
        return f"{text} ({why})" if why else text


@dataclass(frozen=True)
class DevGate:
    """Whether ``arm`` trained, seed by seed, on dev data (:func:`trained_on_dev`)."""

    arm: str
    seeds: tuple[SeedTrained, ...]

    @property
    def name(self) -> str:
        return f"{self.arm}{TRAINED_ON_DEV}"

    @property
    def trained_seeds(self) -> list[str]:
        return [s.seed for s in self.seeds if s.trained]

    def evidence(self) -> str:
        return "; ".join(s.describe() for s in self.seeds)

    def precondition(self, needed: int) -> Precondition:
        """ "<arm> trained on dev": holds when the arm trained on at least ``needed`` seeds."""
        return Precondition(self.name, len(self.trained_seeds) >= needed, self.evidence())

    def to_dict(self) -> dict:
        return {"arm": self.arm, "seeds": [{**vars(s), "trained": s.trained} for s in self.seeds]}

    def at_least(self, minimum: float, reason: str) -> DevGate:
        """This gate asking also a dev gain of at least ``minimum`` on every seed (``reason`` says why, e.g. "the
        claim's smallest effect 0.77"): a baseline that barely trained does not count as trained for that claim."""
        return DevGate(
            self.arm, tuple(replace(s, minimum_gain=float(minimum), minimum_reason=reason) for s in self.seeds)
        )


def _per_seed(values, name: str) -> dict[str, object]:
    if isinstance(values, Mapping):
        out = {str(k): v for k, v in values.items()}
    elif isinstance(values, Sequence) and not isinstance(values, str | bytes):
        out = {f"seed {i}": v for i, v in enumerate(values)}
    else:
        raise ValueError(f"{name} must be a {{seed label: value}} mapping or one value per seed, got {values!r}")
    if not out:
        raise ValueError(f"{name} is empty: one value per training seed")
    return out


def trained_on_dev(
    arm: str,
    selected_steps: Mapping | Sequence[int],
    dev_gains: Mapping | Sequence[float],
    *,
    total_steps: int | Mapping | None = None,
    weight_changes: Mapping | Sequence[float] | None = None,
) -> DevGate:
    """The dev gate of ``arm``: per seed (labels as the claim's intervals are keyed, e.g. "seed 0"), the step dev
    selection kept and the selected dev score minus the untrained encoder's on the same dev pairs (Spearman x100;
    :func:`dev_gain`). Trained: step > 0 and dev gain > 0 (and a weight changed, where ``weight_changes`` is given)."""
    if not str(arm).strip():
        raise ValueError("a dev gate needs the arm's name")
    steps = _per_seed(selected_steps, f"{arm}: selected_steps")
    gains = _per_seed(dev_gains, f"{arm}: dev_gains")
    changes = _per_seed(weight_changes, f"{arm}: weight_changes") if weight_changes is not None else {}
    if set(gains) != set(steps) or (changes and set(changes) != set(steps)):
        raise ValueError(f"{arm}: selected_steps, dev_gains and weight_changes must name the same seeds")
    seeds = []
    for label, step in steps.items():
        gain = float(gains[label])
        if not math.isfinite(gain):
            raise ValueError(f"{arm}, {label}: the dev gain is {gain}: a finite dev score is needed on both sides")
        total = total_steps.get(label) if isinstance(total_steps, Mapping) else total_steps
        change = float(changes[label]) if label in changes else None
        seeds.append(SeedTrained(label, int(step or 0), gain, None if total is None else int(total), change))
    return DevGate(str(arm), tuple(seeds))


def stored_seed(entry: Mapping[str, Any]) -> SeedTrained:
    """One seed of a stored gate (an entry of ``DevGate.to_dict()["seeds"]`` as metrics.json keeps it)."""
    names = {f.name for f in fields(SeedTrained)}
    return SeedTrained(**{k: v for k, v in entry.items() if k in names})


def seed_evidence(gate: Mapping[str, Any]) -> str:
    """A stored gate's per-seed evidence (``DevGate.to_dict()``), as :meth:`DevGate.evidence` words it."""
    return "; ".join(stored_seed(s).describe() for s in gate["seeds"])


def _pairs_of(record: Mapping[str, Any]) -> int:
    """The dev pairs a record scored: its sentence pairs where rows are grouped (C-STS: two rows a pair), else rows."""
    groups = record.get("groups")
    return len(set(map(str, groups))) if groups else len(record["gold"])


def from_fits(arm: str, fits: Mapping[str, Any], *, n_resamples: int = 2000) -> DevGate:
    """The dev gate of ``arm`` from its fits, ``{seed label: TrainResult}`` (labels as the claim's intervals are keyed,
    e.g. "seed 0"): per seed the step selection kept, the largest weight change and the kept model's dev gain over the
    fit's own start with the bound it must exceed.

    - Where the fit scored held-out dev items (``gate_start`` / ``gate_kept``, from ``fit``'s ``gate``): the gain on
      those items, which selection never saw, and the bound of one paired comparison (k = 1, ``1.96 x SE``).
    - Else (selection used every dev item): the gain on the selection items with the best-of-k bound
      (:func:`noise_bound`, from ``dev_start`` / ``dev_kept``; k = ``selection_evaluations``).

    A fit with neither is refused: the gate needs what its dev scores were computed from."""
    if not str(arm).strip():
        raise ValueError("a dev gate needs the arm's name")
    if not isinstance(fits, Mapping) or not fits:
        raise ValueError(f"{arm}: fits must be a non-empty {{seed label: TrainResult}} mapping")
    seeds = []
    for label, result in fits.items():
        held_out = result.gate_start is not None and result.gate_kept is not None
        if held_out:
            try:
                bound = noise_bound(result.gate_start, result.gate_kept, 1, n_resamples=n_resamples)
            except ValueError as err:  # e.g. a gate of a few C-STS pairs whose resamples draw one tied group
                raise ValueError(
                    f"{arm}, {label}: the held-out gate of {_pairs_of(result.gate_kept)} dev pairs cannot bound its "
                    f"noise ({err}): raise the notebook's gate_pairs parameter (8 or more)"
                ) from err
        elif result.dev_start is not None and result.dev_kept is not None:
            bound = noise_bound(
                result.dev_start, result.dev_kept, result.selection_evaluations, n_resamples=n_resamples
            )
        else:
            raise ValueError(
                f"{arm}, {label}: the fit kept no per-pair dev records (gate_start / gate_kept or dev_start / "
                "dev_kept): evaluate with a DevScore evaluator (stsnb.evaluation.evaluate.dev_evaluator) and "
                "eval_at_start, with a gate (evaluate.gate_evaluator) where dev items are left over, so the gate can "
                "bound the noise"
            )
        change = result.weight_change
        seeds.append(
            SeedTrained(
                str(label),
                int(result.best_step or 0),
                bound.gain,
                int(result.steps),
                None if change is None else float(change),
                bound.bound,
                bound.evaluations,
                held_out_items=_pairs_of(result.gate_kept) if held_out else None,
            )
        )
    return DevGate(str(arm), tuple(seeds))


def dev_gain(selected_dev: float | None, untrained_dev: float, *, scale: float = 1.0) -> float:
    """The selected dev score minus the untrained encoder's on the same dev pairs, times ``scale`` (100 for scores
    kept as Spearman in [-1, 1]); a fit that recorded no dev score has no gain (``-inf`` would hide it: an error)."""
    if selected_dev is None:
        raise ValueError("the fit recorded no dev score: run it with a dev evaluation to gate a claim on it")
    return (float(selected_dev) - float(untrained_dev)) * scale


@dataclass(frozen=True)
class SeedSelection:
    """The seeds a claim keeps: those on which every arm trained on dev; ``left_out`` says why each other one went."""

    kept: tuple[str, ...]
    left_out: dict[str, str]
    needed: int

    @property
    def enough(self) -> bool:
        return len(self.kept) >= self.needed

    def precondition(self) -> Precondition:
        """ "every arm trained on the same seeds (at least N)": fails when fewer than ``needed`` seeds remain."""
        kept = ", ".join(self.kept) or "none"
        out = "; ".join(f"{seed} left out ({why})" for seed, why in self.left_out.items())
        evidence = f"kept {kept}" + (f"; {out}" if out else "")
        name = f"every arm trained on dev on the same seeds (at least {self.needed})"
        return Precondition(name, self.enough, evidence)


def select_seeds(seed_labels: Sequence[str], gates: Sequence[DevGate]) -> SeedSelection:
    """The seeds of ``seed_labels`` on which every gate's arm trained; at least two must remain, or the only one."""
    labels = [str(s) for s in seed_labels]
    left_out: dict[str, str] = {}
    for gate in gates:
        known = {s.seed: s for s in gate.seeds}
        if missing := [s for s in labels if s not in known]:
            raise ValueError(f"the dev gate of {gate.arm} has no entry for {missing} (it has {sorted(known)})")
        for label in labels:
            if not known[label].trained:
                reason = f"{gate.arm}: {known[label].describe().split(': ', 1)[1]}"
                left_out[label] = f"{left_out[label]}; {reason}" if label in left_out else reason
    kept = tuple(s for s in labels if s not in left_out)
    return SeedSelection(kept, left_out, needed=min(2, len(labels)))
