"""HiCL's main claims, fixed from its abstract before any run: hierarchical contrast improves effectiveness (Table 1,
SimCSE against SimCSE+HiCL) and training efficiency (Section 3.3). Every profile's summary leads with their verdicts,
whatever they are (``stsnb.evaluation.main_claims.MainClaim``); the rows themselves are built in ``results``."""

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
        ("Section 3.3: a SimCSE training step is faster in segments",),
        relation="is faster than",
    ),
)
