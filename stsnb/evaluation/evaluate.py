"""STS evaluation in SentEval's "all" setting, with de-duplicated, length-sorted, cached encoding.

Protocol (REFERENCE_NOTES B, SimCSE's modified SentEval): for STS12-16 the headline number is Spearman's
correlation of cosine similarity against gold over the concatenation of all subsets of a year
(``['all']['spearman']['all']``); the unweighted (``mean``) and size-weighted (``wmean``) subset averages are
computed too. STS-B and SICK-R use their test splits. Everything is reported x100.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from scipy.stats import pearsonr, spearmanr

from .. import data as stsdata
from ..models import progress

STS_TASKS = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness")


def parse_tasks(tasks: str | Iterable[str]) -> tuple[str, ...]:
    """``"all"`` or names like ``sts12,stsb,sickr`` (case-insensitive) -> canonical task names."""
    if isinstance(tasks, str):
        tasks = ["all"] if tasks.strip().lower() == "all" else [t for t in tasks.split(",") if t.strip()]
    aliases = {t.lower(): t for t in STS_TASKS}
    aliases.update(
        {
            "stsb": "STSBenchmark",
            "sts-b": "STSBenchmark",
            "sickr": "SICKRelatedness",
            "sick-r": "SICKRelatedness",
            "sick": "SICKRelatedness",
        }
    )
    names: list[str] = []
    for task in tasks:
        key = task.strip().lower()
        if key == "all":
            names.extend(STS_TASKS)
        elif key in aliases:
            names.append(aliases[key])
        else:
            raise ValueError(f"unknown task {task!r}: expected 'all' or names from {STS_TASKS}")
    return tuple(dict.fromkeys(names))


def load_task(task: str, text: stsdata.TextVariant = "senteval", data_dir=None) -> list[stsdata.STSPair]:
    """The evaluation pairs of one task (STS12-16: all subsets; STS-B and SICK-R: test split)."""
    if task in stsdata.STS_SUBSETS:
        return list(stsdata.load_sts_year(task, text, data_dir))
    if task == "STSBenchmark":
        return list(stsdata.load_stsb("test", text, data_dir))
    if task == "SICKRelatedness":
        return list(stsdata.load_sick("test", text, data_dir))
    raise ValueError(f"unknown task {task!r}")


def correlations(predicted: Sequence[float], gold: Sequence[float]) -> tuple[float, float]:
    """(Spearman, Pearson) x100, as scipy computes them (Spearman = Pearson of mid-ranks)."""
    predicted, gold = np.asarray(predicted, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predictions for {len(gold)} gold scores")
    if len(gold) < 2:
        raise ValueError("a correlation needs at least 2 pairs")
    return 100 * float(spearmanr(predicted, gold)[0]), 100 * float(pearsonr(predicted, gold)[0])


@dataclass
class TaskResult:
    """One task's scores (x100). ``spearman``/``pearson`` are the headline ("all" for STS12-16)."""

    task: str
    n: int
    spearman: float
    pearson: float
    spearman_mean: float
    spearman_wmean: float
    pearson_mean: float
    pearson_wmean: float
    subsets: dict[str, dict[str, float]] = field(default_factory=dict)


def score_task(task: str, pairs: Sequence[stsdata.STSPair], similarities: np.ndarray) -> TaskResult:
    gold = np.array([p.score for p in pairs])
    if not np.isfinite(similarities).all():
        raise FloatingPointError(f"{task}: {int((~np.isfinite(similarities)).sum())} similarities are NaN or infinite")
    spearman, pearson = correlations(similarities, gold)
    subsets: dict[str, dict[str, float]] = {}
    names = list(dict.fromkeys(p.subset for p in pairs))
    subset_of = np.array([p.subset for p in pairs])
    for name in names:
        mask = subset_of == name
        s, r = correlations(similarities[mask], gold[mask])
        subsets[name] = {"n": int(mask.sum()), "spearman": s, "pearson": r}
    sizes = np.array([subsets[n]["n"] for n in names], dtype=float)
    sp = np.array([subsets[n]["spearman"] for n in names])
    pe = np.array([subsets[n]["pearson"] for n in names])
    return TaskResult(
        task,
        len(pairs),
        spearman,
        pearson,
        float(sp.mean()),
        float((sp * sizes).sum() / sizes.sum()),
        float(pe.mean()),
        float((pe * sizes).sum() / sizes.sum()),
        subsets,
    )


@dataclass
class STSReport:
    """Results of the STS suite. ``avg`` is the mean of the tasks' headline Spearman (x100)."""

    tasks: dict[str, TaskResult]
    model: str = ""
    seconds: float = 0.0
    encoded: int = 0  # sentences actually run through the model (the rest came from the cache)

    @property
    def spearman(self) -> dict[str, float]:
        return {name: result.spearman for name, result in self.tasks.items()}

    @property
    def avg(self) -> float:
        return float(np.mean([r.spearman for r in self.tasks.values()]))

    def headline(self) -> dict[str, float]:
        """Task -> Spearman x100 rounded to 2 decimals, plus ``avg`` (the ``stsnb eval --json`` object)."""
        out = {name: round(value, 2) for name, value in self.spearman.items()}
        out["avg"] = round(self.avg, 2)
        return out

    def rows(self) -> list[dict]:
        return [
            {
                "task": r.task,
                "n": r.n,
                "spearman_all": r.spearman,
                "spearman_mean": r.spearman_mean,
                "spearman_wmean": r.spearman_wmean,
                "pearson_all": r.pearson,
            }
            for r in self.tasks.values()
        ]

    def to_json(self) -> str:
        return json.dumps({name: asdict(r) for name, r in self.tasks.items()}, indent=1)

    def table(self) -> str:
        """Per task: Spearman over all pairs, mean and size-weighted mean over subsets, Pearson (all); then avg
        (what ``stsnb eval`` prints)."""
        header = f"{'task':<16} {'pairs':>6} {'spearman':>9} {'mean':>7} {'wmean':>7} {'pearson':>8}"
        lines = [header, "-" * len(header)]
        for row in self.rows():
            lines.append(
                f"{row['task']:<16} {row['n']:>6} {row['spearman_all']:>9.2f} {row['spearman_mean']:>7.2f} "
                f"{row['spearman_wmean']:>7.2f} {row['pearson_all']:>8.2f}"
            )
        lines += ["-" * len(header), f"{'avg':<16} {'':>6} {self.avg:>9.2f}"]
        return "\n".join(lines)


class EmbeddingCache:
    """Embeddings keyed by the encoder's fingerprint (``stsnb.models.fingerprint``: weights, tokenizer, pooling,
    template text, max length, dtype / quantization, package version) and the text.

    Kept in memory; with ``folder`` also on disk, one ``.pt`` file per fingerprint, so a second process that
    evaluates the same weights (``stsnb eval`` twice) encodes nothing. A file is written to a temporary name of this
    process and renamed into place (atomic); entries another process saved meanwhile are merged, not lost.
    """

    def __init__(self, folder: str | Path | None = None):
        self.folder = Path(folder) if folder is not None else None
        self._memory: dict[str, dict[str, torch.Tensor]] = {}

    def _path(self, key: str) -> Path | None:
        return self.folder / f"{key}.pt" if self.folder is not None else None

    def _read(self, key: str) -> dict[str, torch.Tensor]:
        path = self._path(key)
        if path is None or not path.is_file():
            return {}
        stored = torch.load(path, weights_only=True)
        return dict(zip(stored["texts"], stored["embeddings"], strict=True))

    def get(self, key: str) -> dict[str, torch.Tensor]:
        if key not in self._memory:
            self._memory[key] = self._read(key)
        return self._memory[key]

    def save(self, key: str) -> None:
        path = self._path(key)
        if path is None:
            return
        table = {**self._read(key), **self._memory[key]}  # keep what another process added meanwhile
        self._memory[key] = table
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp")
        torch.save({"texts": list(table), "embeddings": torch.stack(list(table.values()))}, tmp)
        tmp.replace(path)

    def clear(self) -> None:
        self._memory.clear()


DEFAULT_CACHE = EmbeddingCache()


def check_finite(vectors: torch.Tensor, sentences: Sequence[str]) -> None:
    """Raise when an embedding has NaN or infinite values, with how many and the first such sentence."""
    bad = ~torch.isfinite(vectors).all(dim=-1)
    if bad.any():
        first = int(bad.nonzero()[0])
        raise FloatingPointError(
            f"{int(bad.sum())} of {len(sentences)} embeddings are NaN or infinite (first: sentence {first}, "
            f"{sentences[first][:80]!r}); no score is computed from them"
        )


def embed_sentences(
    encoder,
    sentences: Iterable[str],
    cache: EmbeddingCache | None = DEFAULT_CACHE,
    batch_size: int = 128,
    max_tokens: int | None = None,  # None: the encoder's own per-device budget
) -> tuple[dict[str, torch.Tensor], int]:
    """Encode each distinct sentence once (cached); returns (text -> embedding, number newly encoded). A progress bar
    over the distinct sentences (``stsnb.models.progress``; the cached ones count at once) joins an evaluation's."""
    unique = list(dict.fromkeys(sentences))
    with progress.bar(len(unique), "encode", "sentence", leave=False) as shown:
        start = shown.n
        if cache is None:
            table, missing = {}, unique
        else:
            key = encoder.fingerprint()
            table = cache.get(key)
            missing = [s for s in unique if s not in table]
        if missing:
            vectors = encoder.encode(missing, batch_size=batch_size, max_tokens=max_tokens)
            check_finite(vectors, missing)
            table.update(zip(missing, vectors, strict=True))
            if cache is not None:
                cache.save(key)
        shown.update(start + len(unique) - shown.n)  # the cached ones, and any an encoder without a bar left out
    return table, len(missing)


def cosine_rows(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
    return torch.nn.functional.cosine_similarity(a.double(), b.double(), dim=-1).numpy()


def sts(
    encoder,
    tasks: str | Iterable[str] = "all",
    text: stsdata.TextVariant = "senteval",
    data_dir=None,
    cache: EmbeddingCache | None = DEFAULT_CACHE,
    batch_size: int = 128,
    max_tokens: int | None = None,  # None: the encoder's own per-device budget
    preprocess: Callable[[str], str] | None = None,
) -> STSReport:
    """Evaluate an encoder on the STS suite (cosine similarity, SentEval "all" setting, x100).

    ``preprocess`` maps each sentence before encoding (e.g. Pcc-tuning's evaluation-time text fixes).
    """
    import time

    started = time.perf_counter()
    names = parse_tasks(tasks)
    task_pairs = {name: load_task(name, text, data_dir) for name in names}
    prep = preprocess or (lambda s: s)
    sentences = (prep(s) for pairs in task_pairs.values() for p in pairs for s in (p.sent1, p.sent2))
    table, encoded = embed_sentences(encoder, sentences, cache, batch_size, max_tokens)
    results = {}
    for name, pairs in task_pairs.items():
        left = torch.stack([table[prep(p.sent1)] for p in pairs])
        right = torch.stack([table[prep(p.sent2)] for p in pairs])
        results[name] = score_task(name, pairs, cosine_rows(left, right))
    return STSReport(results, getattr(encoder, "name", ""), time.perf_counter() - started, encoded)


def pair_similarities(
    encoder,
    pairs: Sequence,
    cache: EmbeddingCache | None = DEFAULT_CACHE,
    preprocess: Callable[[str], str] | None = None,
) -> np.ndarray:
    """Cosine similarity of each (sent1, sent2) pair of any records with those fields (e.g. a dev set).
    ``preprocess`` maps each sentence before encoding; the cache is keyed by the text encoded, so a preprocessed
    sentence never meets the embedding of its original."""
    prep = preprocess or (lambda s: s)
    table, _ = embed_sentences(encoder, (prep(s) for p in pairs for s in (p.sent1, p.sent2)), cache)
    left = torch.stack([table[prep(p.sent1)] for p in pairs])
    right = torch.stack([table[prep(p.sent2)] for p in pairs])
    return cosine_rows(left, right)


@dataclass(frozen=True)
class DevScore:
    """A dev evaluation with what it scored: ``score`` (higher is better: Spearman x100) and, per dev item, the gold
    score and the model's prediction; ``groups`` labels rows a bootstrap must draw together (C-STS: a sentence pair's
    two conditions), None when every row is its own unit. ``stsnb.training.train.fit`` keeps the record of its step-0
    evaluation and of the one it selects, which the dev gate reads (``stsnb.evaluation.dev_gates.noise_bound``);
    ``float()`` of it is the score, so ``fit`` selects on it as on a plain float."""

    score: float
    gold: Sequence[float]
    predictions: Sequence[float]
    groups: Sequence | None = None

    def __float__(self) -> float:
        return float(self.score)

    def record(self) -> dict:
        """JSON-ready: the score, the gold scores, the predictions and the groups (as strings, or None)."""
        return {
            "score": float(self.score),
            "gold": [float(v) for v in self.gold],
            "predictions": [float(v) for v in self.predictions],
            "groups": None if self.groups is None else [str(g) for g in self.groups],
        }


def dev_score(
    encoder,
    pairs: Sequence[stsdata.STSPair],
    preprocess: Callable[[str], str] | None = None,
    cache: EmbeddingCache | None = None,
) -> DevScore:
    """Spearman x100 of cosine vs gold on a dev set (STS-B dev is the papers' model-selection set), with the gold
    scores and cosines it was computed from. Uncached by default: during training the weights change at every call."""
    similarities = np.asarray(pair_similarities(encoder, pairs, cache=cache, preprocess=preprocess), dtype=float)
    gold = [p.score for p in pairs]
    return DevScore(correlations(similarities, gold)[0], gold, similarities)


def dev_spearman(encoder, pairs: Sequence[stsdata.STSPair], preprocess: Callable[[str], str] | None = None) -> float:
    """Spearman x100 of cosine vs gold on a dev set (:func:`dev_score`'s score)."""
    return dev_score(encoder, pairs, preprocess).score


def dev_predictions(encoder, pairs: Sequence[stsdata.STSPair]) -> TaskPredictions:
    """``{"STS-B dev": (gold, cosine)}`` of ``pairs``, uncached (the weights change between calls): what a training
    probe compares, as a paired difference, before and after
    (``stsnb.evaluation.stats.paired_predictions_difference``)."""
    cosine = pair_similarities(encoder, pairs, cache=None)
    return {"STS-B dev": (np.array([p.score for p in pairs], dtype=float), np.asarray(cosine, dtype=float))}


def dev_evaluator(
    dev_pairs: Sequence[stsdata.STSPair], preprocess: Callable[[str], str] | None = None
) -> Callable[[torch.nn.Module], DevScore]:
    """``evaluate(model) -> DevScore`` (STS-B dev Spearman with what it scored) for ``stsnb.training.train.fit``: the
    cosine of the model's sentence encoder (``model.encoder`` where the model wraps one, e.g. a Siamese head, else the
    model itself), each sentence mapped by ``preprocess`` first."""

    def score(model: torch.nn.Module) -> DevScore:
        return dev_score(getattr(model, "encoder", model), dev_pairs, preprocess)

    return score


def gate_evaluator(
    dev_pairs: Sequence[stsdata.STSPair] | None, preprocess: Callable[[str], str] | None = None
) -> Callable[[torch.nn.Module], DevScore] | None:
    """``fit``'s ``gate``: the :func:`dev_evaluator` of the dev pairs selection never sees (``dev_pairs.gate``, a
    ``stsnb.data.GatedSelection``), or None where there are none. Cached by the weights' fingerprint: the fits of a
    notebook that start from the same weights (the raw encoder, a stage-1 model) score them once."""
    gate = list(getattr(dev_pairs, "gate", None) or ())
    if not gate:
        return None

    def score(model: torch.nn.Module) -> DevScore:
        return dev_score(getattr(model, "encoder", model), gate, preprocess, cache=DEFAULT_CACHE)

    return score


TaskPredictions = dict[str, tuple[np.ndarray, np.ndarray]]  # task -> (gold scores, cosine of each pair)


def drawn_pairs(task: str, max_pairs: int | None = None, seed: int = 0, data_dir=None) -> list[stsdata.STSPair]:
    """The test pairs of ``task`` that ``task_predictions(..., max_pairs, seed)`` scores, in its order: every pair,
    or ``max_pairs`` drawn with ``seed`` (the same draw for every model)."""
    return stsdata.sample(load_task(task, data_dir=data_dir), max_pairs, seed)


def task_predictions(
    encoder,
    tasks: str | Iterable[str] = "all",
    max_pairs: int | None = None,
    seed: int = 0,
    cache: EmbeddingCache | None = DEFAULT_CACHE,
    preprocess: Callable[[str], str] | None = None,
) -> TaskPredictions:
    """Task -> (gold, cosine) of every test pair (STS12-16 pooled over their subsets, the "all" setting), or of a
    fixed sample of ``max_pairs`` per task: the same draw for every model, so two models' predictions pair up
    for ``stsnb.evaluation.stats.paired_predictions_difference``. The cache is keyed by the weights' fingerprint and the
    text encoded (after ``preprocess``, which maps each sentence before encoding)."""
    drawn = {task: drawn_pairs(task, max_pairs, seed) for task in parse_tasks(tasks)}
    prep = preprocess or (lambda s: s)
    sentences = sum(len({prep(s) for p in pairs for s in (p.sent1, p.sent2)}) for pairs in drawn.values())
    out: TaskPredictions = {}
    with progress.bar(sentences, "evaluate", "sentence", leave=False):  # one bar over every task's sentences
        for task, pairs in drawn.items():
            similarities = pair_similarities(encoder, pairs, cache, preprocess)
            out[task] = (np.array([p.score for p in pairs], dtype=float), np.asarray(similarities, dtype=float))
    return out


@dataclass(frozen=True)
class EvalPairs:
    """The test pairs every model of a comparison is scored on: ``tasks``, and ``max_pairs`` per task drawn with
    ``seed`` (None: every pair). The same draw for every model, so their predictions pair up. ``preprocess`` maps
    each sentence before encoding (a module-level function, so the pairs pickle for several processes)."""

    tasks: str = "all"
    max_pairs: int | None = None
    seed: int = 0
    preprocess: Callable[[str], str] | None = None

    def predictions(self, encoder) -> TaskPredictions:
        """Task -> (gold, cosine), uncached (trained weights change between calls)."""
        return task_predictions(encoder, self.tasks, self.max_pairs, self.seed, cache=None, preprocess=self.preprocess)

    def scope(self) -> str:
        pairs = "every test pair" if self.max_pairs is None else f"the same {self.max_pairs} pairs per task"
        return f"{self.tasks}, {pairs}"


def spearman_scores(predictions: TaskPredictions) -> dict[str, float]:
    """Task -> Spearman x100, plus ``avg`` (the unweighted mean over the tasks given, the papers' "Avg.")."""
    scores = {task: correlations(pred, gold)[0] for task, (gold, pred) in predictions.items()}
    scores["avg"] = float(np.mean(list(scores.values())))
    return scores


def sts_scores(encoder, tasks: str = "all", max_pairs: int | None = None, seed: int = 0) -> dict[str, float]:
    """Task -> Spearman x100 of the cosine, plus ``avg`` (SentEval "all" setting, ``sts``).

    ``max_pairs`` draws that many pairs per task (same draw for every model) for a cheaper, labelled-as-such
    estimate; STS12-16 are then pooled over their subsets as in the "all" setting.
    """
    if max_pairs is None:
        report = sts(encoder, tasks)
        return {**report.spearman, "avg": report.avg}
    return spearman_scores(task_predictions(encoder, tasks, max_pairs, seed))
