"""The evaluation layer: scores, intervals and verdicts.

Holds the STS suite with cached encoding (``evaluate``), paired bootstrap intervals with seed variance (``stats``),
claims with their preconditions and verdicts (``claims``) and ours beside a paper's reported numbers
(``comparison``).

May import: data, models.
"""
