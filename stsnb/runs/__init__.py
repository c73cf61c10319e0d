"""The runs layer: a notebook's run folder, and ``stsnb run`` executing the plans.

Holds the run context (``context``: output folder, seed, params.yaml, env.json, metrics recorded per section), the
plans and profiles (``plans``, ``profiles``), papermill execution with its locks, signals and GPU sets
(``execution``, ``locks``, ``parallel``; ``live``: the terminal's line for the notebook running), what
``--resume`` skips (``resume``), ``stsnb status`` (``status``), summary.md (``summary``), and what is read back from
committed runs (``committed``, ``runtimes``, ``probe_tables``, ``notebook_noise``).

May import: data, models, training, evaluation.

The run context's names are re-exported here, so a notebook reads ``from stsnb import runs; run = runs.start(...)``.
"""

from .context import Run, collect_params, seed_everything, start

__all__ = ["Run", "collect_params", "seed_everything", "start"]
