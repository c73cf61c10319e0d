"""HiCL's main claims, fixed from its abstract (``main_claims.FIXED`` says when): hierarchical contrast improves
effectiveness (Table 1, SimCSE against SimCSE+HiCL) and training efficiency (Section 3.3 and Table 12, where the paper
makes it: both arms at the same truncation, here on the training data's own batches). Every profile's summary leads with
their verdicts, whatever they are (``stsnb.evaluation.main_claims.MainClaim``); the rows themselves are built in
``results`` (``plus_hicl_claim``) and ``table12`` (``efficiency_claim``: Table 12's equal truncation on the training
batches, the row's own text says so)."""

from __future__ import annotations

from ...evaluation.main_claims import MainClaim
from . import quotes

MAIN_CLAIMS = (
    MainClaim(
        "30_hicl",
        quotes.MAIN_CLAIM_EFFECTIVENESS,
        "Table 1",
        "SimCSE+HiCL",
        "SimCSE",
        ("Table 1 (SimCSE-", "+HiCL beats SimCSE"),
    ),
    MainClaim(
        "30_hicl",
        quotes.MAIN_CLAIM_EFFICIENCY,
        "Section 3.3",
        "a SimCSE training step in segments",
        "on whole sequences",
        ("Section 3.3: a SimCSE training step is faster in segments", "equal truncation"),
        relation="is faster than",
    ),
)
