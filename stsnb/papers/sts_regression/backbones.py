"""The backbones of STS-Regression's paper profile: BERT/RoBERTa and two encoders that need the Hub's remote code.

The ``paper`` profile needs Hub weights; here only packaged names load. Nothing is ever substituted. Jina v2's and
Nomic v1's code was written for transformers 4.x, so each contrastive backbone loads in a guarded step
(``guarded_backbone``): one whose code fails is recorded as not run, with the reason, its tables are skipped and the
rest of the notebook runs. A Hub model loads at the commits the plan pins (``stsnb.models.revisions``).
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import Any

from ...models import loading as models
from ...models import revisions as model_revisions

REMOTE_CODE_MODELS = ("jinaai/jina-embeddings-v2-base-en", "nomic-ai/nomic-embed-text-v1")
GUARD_SENTENCES = ("A man is playing a guitar.", "A woman is slicing an onion.")
CONTRASTIVE_TABLES = ("Table 3", "Table 5 (stage-2 sweep)")  # what a contrastive backbone that cannot run skips


def load_backbone(
    name: str,
    max_length: int | None = None,
    pooling: models.Pooling = "mean",
    *,
    freeze_embeddings: bool = False,
    gradient_checkpointing: bool = False,
) -> models.SentenceEncoder:
    """An encoder with mean pooling (Section 3.1) by name; Jina v2 / Nomic v1 need the Hub's remote code.

    ``freeze_embeddings`` keeps the token embedding fixed (``stsnb.models.load_encoder``): on the raw backbone
    ``smollm2-135m-l6`` that table is most of the weights, and freezing it makes a training step faster
    (``benchmarks/bench_raw_backbone.py``); the paper trains it. ``gradient_checkpointing`` (non-reentrant
    activation checkpointing) recomputes activations in the backward pass: less memory, the same gradients.

    Raises ``RuntimeError`` naming the weights when they cannot be loaded; nothing is substituted.
    """
    try:
        return models.load_encoder(
            name,
            pooling=pooling,
            max_length=max_length,
            trust_remote_code=name in REMOTE_CODE_MODELS,
            freeze_embeddings=freeze_embeddings,
            gradient_checkpointing=gradient_checkpointing,
        )
    except (OSError, ValueError, models.ModelError) as err:
        raise RuntimeError(
            f"backbone {name!r} could not be loaded ({type(err).__name__}: {err}). The paper profile needs its "
            "weights from the Hugging Face Hub or the local cache; packaged names are "
            f"{sorted(models.KNOWN_MODELS)}. Nothing is substituted."
        ) from err


def require_backbones(names: Sequence[str]) -> None:
    """Fail before any training when a backbone's weights are out of reach (a missing Hub model, no network).

    Packaged names and local folders pass; a Hub id passes when its config can be read (from the local Hugging
    Face cache or the network; a remote-code model's config file is found, its code not run). The error lists every
    missing name.
    """
    from transformers import AutoConfig

    missing = []
    for name in names:
        try:
            resolved = models.resolve(name)
        except models.ModelError as err:
            missing.append(f"{name} ({err})")
            continue
        if resolved.source != "hub":
            continue
        revision = model_revisions.pin_of(name).revision
        try:
            if name in REMOTE_CODE_MODELS:  # reachable, its code not run: that is guarded_backbone's step
                from transformers.utils import cached_file

                cached_file(resolved.path, "config.json", revision=revision)
            else:
                AutoConfig.from_pretrained(resolved.path, revision=revision)
        except Exception as err:  # OSError, connection errors, missing remote code: all mean "not available"
            missing.append(f"{name} ({type(err).__name__}: {str(err).splitlines()[0][:160]})")
    if missing:
        raise RuntimeError(
            "these backbones are not available here, and the notebook does not substitute others: "
            + "; ".join(missing)
            + ". Run where the Hugging Face Hub (or a filled HF cache) is reachable, or choose packaged models "
            f"{sorted(models.KNOWN_MODELS)}."
        )


def guarded_backbone(
    name: str,
    max_length: int | None,
    *,
    run: Any,
    metrics: MutableMapping[str, Any],
    skips: Sequence[str] = CONTRASTIVE_TABLES,
) -> models.SentenceEncoder | None:
    """``load_backbone(name, max_length)`` and a forward pass on two sentences, or None where either raises (the
    Hub's remote code under this transformers) or its embeddings are not finite: then a not-run row naming the model,
    the tables it ``skips`` and the reason goes to ``metrics["not_run"]``, ``run.record`` writes it to metrics.json,
    and the notebook goes on."""
    try:
        encoder = load_backbone(name, max_length)
        embeddings = encoder.encode(list(GUARD_SENTENCES))
        if not bool(embeddings.isfinite().all()):  # code that runs but computes garbage trains on nothing
            raise ValueError(f"its embeddings of {len(GUARD_SENTENCES)} sentences hold non-finite values (NaN or inf)")
        return encoder
    except Exception as err:  # whatever the model's code raises: recorded, its tables skipped
        cause = err.__cause__ if isinstance(err, RuntimeError) and err.__cause__ is not None else err
        lines = str(cause).strip().splitlines()
        reason = f"{type(cause).__name__}: {lines[0][:300] if lines else ''}"
        row = {"model": name, "status": "not run", "skipped": list(skips), "reason": reason}
        metrics["not_run"] = [*(r for r in metrics.get("not_run", []) if r.get("model") != name), row]
        run.record(f"{name} not run", metrics)
        print(f"{name}: not run ({reason}); {', '.join(skips)} skipped for it, recorded in metrics.json (not_run)")
        return None
