"""Table 6: SentEval-style transfer tasks, a logistic-regression probe on frozen sentence embeddings.

SentEval trains a logistic regression on the frozen embeddings (pair tasks on ``[u, v, |u - v|, u * v]``), picks
its L2 strength on the dev split (or by inner cross-validation) and reports test accuracy. Here SICK-E (SentEval's
SICKEntailment: 3-way entailment on SICK's pairs, train / trial / test) runs from the data folder. The other six of
Table 6 (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC) are not in this workplace; :data:`HUB_TASKS` names Hub copies for the
``paper`` profile. Those ids could not be checked here (no network), and SentEval's MR, CR, SUBJ and MPQA use 10-fold
cross-validation, which :func:`cross_validated_accuracy` provides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ... import data as stsdata

C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)  # L2 strengths tried (SentEval's logistic regression grid, 10^-2..10^2)


@dataclass(frozen=True)
class Labelled:
    """One example of a transfer task: a sentence (``text2`` None) or a pair, and its class."""

    text: str
    label: str
    text2: str | None = None


def sick_entailment(split: str, limit: int | None = None, seed: int = 0) -> list[Labelled]:
    """SICK-E from the data folder (``train``, ``trial`` = SentEval's dev, ``test``), a fixed sample of ``limit``."""
    pairs = stsdata.sample(list(stsdata.load_sick(split)), limit, seed)
    return [Labelled(p.sent1, p.entailment, p.sent2) for p in pairs]


# Hub copies of Table 6's other tasks for the paper profile: (dataset id, config, text column(s), label column).
HUB_TASKS: dict[str, tuple[str, str | None, tuple[str, ...], str]] = {
    "MR": ("cornell-movie-review-data/rotten_tomatoes", None, ("text",), "label"),
    "CR": ("SetFit/CR", None, ("text",), "label"),
    "SUBJ": ("SetFit/subj", None, ("text",), "label"),
    "MPQA": ("jxm/mpqa", None, ("sentence",), "label"),
    "SST2": ("stanfordnlp/sst2", None, ("sentence",), "label"),
    "TREC": ("CogComp/trec", None, ("text",), "coarse_label"),
    "MRPC": ("nyu-mll/glue", "mrpc", ("sentence1", "sentence2"), "label"),
}


def hub_task(name: str, split: str) -> list[Labelled]:
    """One of Table 6's other tasks from the Hugging Face Hub (needs the network); a clear error otherwise."""
    if name not in HUB_TASKS:
        raise ValueError(f"transfer task must be one of {sorted(HUB_TASKS)} or 'SICK-E', got {name!r}")
    dataset_id, config, columns, label = HUB_TASKS[name]
    try:
        from datasets import load_dataset

        rows = load_dataset(dataset_id, config, split=split)
    except Exception as err:
        raise RuntimeError(
            f"{name} needs {dataset_id} from the Hugging Face Hub, which could not be read here "
            f"({type(err).__name__}: {str(err).splitlines()[0][:160]}); only SICK-E runs from the data folder"
        ) from err
    return [Labelled(str(r[columns[0]]), str(r[label]), str(r[columns[1]]) if len(columns) > 1 else None) for r in rows]


def features(encoder, examples: Sequence[Labelled]) -> np.ndarray:
    """Frozen embeddings: ``u`` for a sentence task, ``[u, v, |u - v|, u * v]`` for a pair task (SentEval)."""
    u = encoder.encode([e.text for e in examples]).numpy()
    if examples and examples[0].text2 is not None:
        v = encoder.encode([e.text2 for e in examples]).numpy()
        return np.concatenate([u, v, np.abs(u - v), u * v], axis=1)
    return u


@dataclass(frozen=True)
class ProbeResult:
    """Test accuracy (%) of the probe, the chosen L2 strength and its dev accuracy, and the split sizes."""

    accuracy: float
    c: float
    dev_accuracy: float
    sizes: tuple[int, int, int]


def _fit(x, y, c: float, seed: int):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000, random_state=seed)).fit(x, y)


def probe(
    encoder, train: Sequence[Labelled], dev: Sequence[Labelled], test: Sequence[Labelled], seed: int = 0
) -> ProbeResult:
    """Logistic regression on frozen embeddings: C chosen on ``dev`` from :data:`C_GRID`, accuracy on ``test``."""
    if not train or not dev or not test:
        raise ValueError(f"probe needs non-empty splits, got {len(train)} / {len(dev)} / {len(test)}")
    x_train, x_dev, x_test = features(encoder, train), features(encoder, dev), features(encoder, test)
    y_train, y_dev, y_test = ([e.label for e in split] for split in (train, dev, test))
    scored = [(float(np.mean(_fit(x_train, y_train, c, seed).predict(x_dev) == np.array(y_dev))), c) for c in C_GRID]
    dev_accuracy, c = max(scored, key=lambda t: (t[0], -t[1]))
    model = _fit(x_train, y_train, c, seed)
    accuracy = 100 * float(np.mean(model.predict(x_test) == np.array(y_test)))
    return ProbeResult(accuracy, c, 100 * dev_accuracy, (len(train), len(dev), len(test)))


def cross_validated_accuracy(encoder, examples: Sequence[Labelled], folds: int = 10, seed: int = 0) -> float:
    """SentEval's protocol for MR, CR, SUBJ and MPQA: mean test accuracy (%) over ``folds`` stratified folds, C
    chosen in each by an inner split of its training part."""
    from sklearn.model_selection import StratifiedKFold, train_test_split

    x, y = features(encoder, examples), np.array([e.label for e in examples])
    scores = []
    for train_index, test_index in StratifiedKFold(folds, shuffle=True, random_state=seed).split(x, y):
        inner_train, inner_dev = train_test_split(
            train_index, test_size=0.1, random_state=seed, stratify=y[train_index]
        )
        best_c = max(
            C_GRID,
            key=lambda c: np.mean(_fit(x[inner_train], y[inner_train], c, seed).predict(x[inner_dev]) == y[inner_dev]),
        )
        scores.append(
            np.mean(_fit(x[train_index], y[train_index], best_c, seed).predict(x[test_index]) == y[test_index])
        )
    return 100 * float(np.mean(scores))
