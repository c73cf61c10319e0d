"""The raw backbone ``smollm2-135m-l6`` (SmolLM2-135M's first 6 layers) and the dropout it needs for SimCSE-style
objectives. Loads the real packaged weights."""

from __future__ import annotations

import pytest
import torch

from stsnb.models import loading as models
from stsnb.models import raw_backbone

pytestmark = pytest.mark.slow

SENTENCES = ["A man is playing a guitar.", "A woman slices an onion on a board."]


@pytest.fixture(scope="module")
def raw():
    return models.load_encoder("smollm2-135m-l6", device="cpu")


def test_it_is_the_full_models_first_six_layers_with_mean_pooling(raw):
    from transformers import AutoModel

    assert raw.pooling == "mean" and raw.dim == 576 and raw.backbone.config.num_hidden_layers == 6
    full = AutoModel.from_pretrained(models.resolve("smollm2-135m").path)
    kept = raw.backbone.state_dict()
    for key, tensor in full.state_dict().items():
        layer = key.split(".")[1] if key.startswith("layers.") else None
        if layer is None or int(layer) < 6:
            assert torch.equal(kept[key], tensor), key
        else:
            assert key not in kept
    assert not raw.training  # evaluation mode after loading: no dropout


def test_dropout_acts_in_train_mode_only():
    encoder = models.load_encoder("smollm2-135m-l6", device="cpu", dropout=0.1)
    encoder.eval()
    with torch.no_grad():
        assert torch.equal(encoder(SENTENCES), encoder(SENTENCES))
        encoder.train()
        assert not torch.allclose(encoder(SENTENCES), encoder(SENTENCES))  # two masks: SimCSE's positive pair
    raw_backbone.set_dropout(encoder.backbone, attention=0.0, hidden=0.0)
    with torch.no_grad():
        assert torch.equal(encoder(SENTENCES), encoder(SENTENCES))  # dropout 0 in train mode: identical
    with pytest.raises(ValueError, match="hidden dropout must be in"):
        raw_backbone.set_dropout(encoder.backbone, hidden=1.5)


def test_frozen_token_embedding_does_not_train_but_the_layers_do():
    encoder = models.load_encoder("smollm2-135m-l6", device="cpu", freeze_embeddings=True)
    embedding = encoder.backbone.get_input_embeddings().weight
    assert not embedding.requires_grad
    before = {n: p.detach().clone() for n, p in encoder.named_parameters() if p.requires_grad}
    optimizer = torch.optim.AdamW([p for p in encoder.parameters() if p.requires_grad], lr=1e-3)
    encoder.train()
    u, v = encoder(SENTENCES[:1]), encoder(SENTENCES[1:])
    (1 - torch.nn.functional.cosine_similarity(u, v)).sum().backward()
    optimizer.step()
    assert embedding.grad is None
    changed = [n for n, p in encoder.named_parameters() if p.requires_grad and not torch.equal(p, before[n])]
    assert any("layers.5" in n for n in changed)


def test_build_truncated_writes_a_plain_folder_with_the_first_layers(tmp_path, capfd):
    import json
    from pathlib import Path

    target = raw_backbone.build_truncated(Path(models.resolve("smollm2-135m").path), tmp_path / "l2", layers=2)
    assert "LOAD REPORT" not in capfd.readouterr().err  # the unread layers 2-29 are expected: no table on stderr
    assert json.loads((target / "config.json").read_text())["num_hidden_layers"] == 2
    assert (target / "tokenizer.json").is_file() and not list(tmp_path.glob("*.partial-*"))
    with pytest.raises(ValueError, match="layers must be 1..30"):
        raw_backbone.build_truncated(Path(models.resolve("smollm2-135m").path), tmp_path / "l99", layers=99)


def test_a_load_that_leaves_other_weights_unread_is_refused(tmp_path):
    from pathlib import Path

    from transformers import AutoConfig, AutoModel

    source = Path(models.resolve("smollm2-135m").path)
    config = AutoConfig.from_pretrained(source)
    config.num_hidden_layers = 2
    config.layer_types = config.layer_types[:2] if getattr(config, "layer_types", None) else None
    with pytest.raises(RuntimeError, match="unexpected outside the cut layers"):
        raw_backbone._load_first_layers(AutoModel, source, config, layers=3)  # claims layer 2 should have been read
