"""Progress bars that a batch run keeps quiet: ``tqdm.auto`` with ``TQDM_DISABLE=1`` honoured in Jupyter too.

``stsnb run`` sets ``TQDM_DISABLE=1`` for its kernels. The terminal bar reads the variable, but tqdm's notebook bar
passes ``disable=False`` itself and so ignores it: its widget is saved in the executed notebook, and a static view
(GitHub, the book) shows a loop stuck at 0%. ``progress`` passes the variable's value explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any


def quiet() -> bool:
    """True in a batch run (``TQDM_DISABLE=1``)."""
    return os.environ.get("TQDM_DISABLE") == "1"


def progress(iterable: Iterable | None = None, **kwargs: Any):
    """``tqdm.auto.tqdm(iterable, **kwargs)``, disabled in a batch run unless ``disable`` is given."""
    from tqdm import auto

    kwargs.setdefault("disable", quiet())
    return auto.tqdm(iterable, **kwargs)
