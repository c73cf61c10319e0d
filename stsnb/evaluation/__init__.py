"""The evaluation layer: scores, intervals and verdicts.

Holds the STS suite with cached encoding (``evaluate``), paired bootstrap intervals with seed variance (``stats``),
the seeds-and-pairs interval with its t floor (``seed_bootstrap``), the verdict rules (``verdict_rules``), the power
of a claim on several seeds by simulation (``power``), whether an arm trained on dev (``dev_gates``), claims with
their preconditions and verdicts (``claims``), a stored claim row read back (``claim_rows``) and ours beside a
paper's reported numbers (``comparison``).

May import: data, models.
"""
