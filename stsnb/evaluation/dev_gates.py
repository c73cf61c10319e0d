"""Whether an arm trained, decided per training seed on dev data, never on the test pairs a claim is scored on.

A claim "a beats b" only says something about the paper where a and b themselves trained. That is decided here from
what checkpoint selection saw on dev data (``stsnb.training.train.fit`` evaluates before its first step and keeps the
best dev score): an arm trained on a seed when dev selection kept a step past 0 and its selected dev score is above
the untrained encoder's on the same dev pairs (and, where given, some trained weight changed). The test pairs only
ever give the claim's intervals: a gate read from them would let the same noise decide both whether a claim is tested
and how it comes out.

A seed on which one of a claim's arms did not train is left out of that claim, which then reports "k of n seeds"
(``stsnb.evaluation.claims.claim(..., dev_gates=...)``); the claim is *not tested* only when fewer than two seeds
remain (or a claim's only seed is left out).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .preconditions import Precondition

TRAINED_ON_DEV = " trained on dev"  # the ending of a dev gate's name: "<arm> trained on dev"


@dataclass(frozen=True)
class SeedTrained:
    """One arm on one training seed: the step dev selection kept (of ``total_steps``), the selected dev score minus the
    untrained encoder's on the same dev pairs (Spearman x100), and the largest change of a trained weight."""

    seed: str
    selected_step: int
    dev_gain: float
    total_steps: int | None = None
    weight_change: float | None = None

    @property
    def trained(self) -> bool:
        return self.selected_step > 0 and self.dev_gain > 0 and (self.weight_change is None or self.weight_change > 0)

    def describe(self) -> str:
        of = f" of {self.total_steps}" if self.total_steps is not None else ""
        text = f"{self.seed}: selected step {self.selected_step}{of}, dev {self.dev_gain:+.2f} over untrained"
        if self.weight_change is not None:
            text += f", largest weight change {self.weight_change:.1e}"
        return text if self.trained else f"{text} (did not train)"


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
