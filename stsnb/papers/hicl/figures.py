"""Notebook 30's opening figure (``stsnb.teaching.pipeline``): the run in one picture, from the parameters."""

from __future__ import annotations

from collections.abc import Mapping

from ...teaching.pipeline import Pipeline, count

METHOD_TEXT = {"simcse": "SimCSE", "esimcse": "ESimCSE", "sncse": "SNCSE"}
CORPUS_TEXT = {"sample": "(a wiki1m sample)", "paper": "(wiki1m)", "hub": "(wiki1m, Hub)"}


def pipeline(p: Mapping) -> Pipeline:
    """Notebook 30's opening figure from its parameters ``p``: the Wikipedia sentences, the backbone and its
    baselines, the sentence and segment losses, the scored test pairs and timed steps, and the two main claims
    (accuracy with HiCL on the main baseline; speed over whole sequences)."""
    methods = "/".join(METHOD_TEXT.get(m, m) for m in p["methods"])
    seeds = len(p["main_claim_seeds"])
    lengths = p["efficiency_lengths"]
    speed = f"{', '.join(map(str, lengths[:-1]))} and {lengths[-1]}" if len(lengths) > 1 else str(lengths[0])
    tasks = "7 STS tasks" if p["eval_tasks"] == "all" else p["eval_tasks"]
    return Pipeline(
        "30_hicl",
        "HiCL, as this notebook runs by default (the class profile)",
        (
            f"{count(p['train_sentences'], 'Wikipedia')}\nsentences\n{CORPUS_TEXT.get(p['corpus_source'], '')}",
            f"{p['backbone']},\n{p['pooling']} pooling",
            f"{methods}: InfoNCE;\n+HiCL adds a\nsegment loss\n(L = {p['slice_length']} tokens)",
            f"{tasks},\n{count(p['eval_max_pairs'], 'test pairs', 'every')}\nper task; timed\ntraining steps",
            f"+HiCL vs {methods},\n{seeds} seed{'s' if seeds != 1 else ''}; speed at\n{speed} tokens",
        ),
    )
