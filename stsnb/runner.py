"""Names ``stsnb.book`` still reads from here until its imports move: ``stsnb run`` now lives in ``stsnb.plans``
(the plans), ``stsnb.execution`` (running them) and ``stsnb.summary`` (summary.md). Import from those."""

from .plans import DEFAULT_OUT, PlanError, load_plan, plan_path
from .summary import (
    CLAIM_COLUMNS,
    MISSING,
    OVERVIEW_COLUMNS,
    OverviewRow,
    claim_cells,
    claim_rows,
    comparison_rows,
    overview_rows,
    recorded_outcome,
    total_seconds,
)

__all__ = [
    "CLAIM_COLUMNS",
    "DEFAULT_OUT",
    "MISSING",
    "OVERVIEW_COLUMNS",
    "OverviewRow",
    "PlanError",
    "claim_cells",
    "claim_rows",
    "comparison_rows",
    "load_plan",
    "overview_rows",
    "plan_path",
    "recorded_outcome",
    "total_seconds",
]
