"""What notebook 30's training step by hand (Section 3.2, Eq. 1-2) needs of this paper: the terms of one batch's loss
in words. The step itself (the same dropout masks before and after, the printed line) is
``stsnb.training.training_step``, shared with notebooks 10, 20 and 40.

SimCSE's positive is a second dropout pass, so the loss is measured inside ``stsnb.training.training_step.same_dropout``
both times. ESimCSE's momentum queue is state the call changes (it pushes the batch) and its word repetition draws from
the model's own ``rng``, so a second call on the same batch is not the same loss even with the same masks: the notebook
shows a SimCSE+HiCL step.
"""

from __future__ import annotations

from collections.abc import Mapping


def terms_text(terms: Mapping[str, float], alpha: float) -> str:
    """ "L_g 3.1000, L_l 2.9000, alpha 0.15": the terms of ``alpha L_l + (1 - alpha) L_g`` (Section 3.2) that
    ``ContrastiveModel.loss`` left in ``last_parts`` (``global`` L_g, Eq. 1; ``local`` L_l, Eq. 2); the global term
    alone for a loss without the local one (a baseline, or alpha 0)."""
    text = f"L_g {float(terms['global']):.4f}"
    if "local" in terms:
        text += f", L_l {float(terms['local']):.4f}, alpha {alpha:g}"
    return text
