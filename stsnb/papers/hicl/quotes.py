"""The paper's sentences each claim of notebook 30 tests, as the paper prints them (``stsnb.claims.quote``): the
``paper_quote`` of every claim row, with its section and table."""

from __future__ import annotations

from ...claims import quote

TABLE1 = quote(
    "Section 4.2, Table 1",
    "(iii) HiCL enhances the performance across nine backbone models, yet marginally underperforms (≤ 0.1) on three "
    "models employing the -base architecture.",
)
