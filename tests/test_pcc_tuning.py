"""Pcc-tuning's paper module: the Table 3 prompt templates, exactly as the official code writes them."""

from __future__ import annotations

import pytest

from stsnb import models
from stsnb.papers import pcc_tuning


def test_templates_are_exactly_pcc_tuning_table_3():
    sentence = "A cat."
    assert models.apply_template(sentence, pcc_tuning.template("eol")) == 'This sentence : "A cat." means in one word:"'
    assert models.apply_template(sentence, pcc_tuning.template("sth")) == 'This sentence : "A cat." means something'
    assert (
        models.apply_template(sentence, pcc_tuning.template("sum")) == 'This sentence : "A cat." can be summarized as'
    )
    assert pcc_tuning.DEFAULT_TEMPLATE == "sth"
    with pytest.raises(ValueError, match="Table 3"):
        pcc_tuning.template("xyz")


def test_reported_numbers_are_labelled_as_the_papers():
    assert pcc_tuning.REPORTED.value("Eq. 7", "optimal binary classifier", "max_spearman_limit") == 87.5
    assert pcc_tuning.REPORTED.value("Table 2", "Mistral-7b Pcc-tuning") == 90.61
    assert {n.paper for n in pcc_tuning.REPORTED.numbers} == {"pcc-tuning"}
