"""SentEval's PTB tokenizer (``tokenizer.sed``) as ``stsnb data fetch`` applies it to SNLI: its rules on sentences
whose tokenisation the sed script fixes, and the real SNLI dev/test text of the data folder unchanged by it."""

from __future__ import annotations

import pytest

from stsnb import data
from stsnb.data.senteval_text import ptb_tokenize, snli_rows


@pytest.mark.parametrize(
    ("raw", "tokenised"),
    [
        (
            "Two women are embracing while holding to go packages.",
            "Two women are embracing while holding to go packages . ",
        ),
        ('He said "I don\'t know," and left...', "He said `` I do n't know , '' and left ... "),
        ("It's the man's dog (a big one)!", "It 's the man 's dog ( a big one ) ! "),
        ("I cannot go; we're late--sorry.", "I can not go ; we 're late -- sorry . "),
        ("Dr. Smith arrived at 5 p.m.", "Dr. Smith arrived at 5 p.m . "),  # only a final period is split off
    ],
)
def test_the_sed_rules(raw, tokenised):
    assert ptb_tokenize(raw) == tokenised


def test_snli_dev_and_test_of_the_data_folder_are_fixed_points(data_dir):
    """SentEval's files were made by this script: tokenising them again changes nothing (39,332 sentences)."""
    for split in data.SNLI_SPLITS:
        for pair in data.load_snli(split, data_dir):
            for sentence in (pair.premise, pair.hypothesis):
                assert ptb_tokenize(sentence).strip() == sentence.strip()


def test_gold_less_pairs_are_dropped_and_labels_named():
    rows = [("A man .", "A person .", 0), ("No gold .", "None .", -1), ("A dog .", "A cat .", 2)]
    assert list(snli_rows(rows)) == [
        ("A man . ", "A person . ", "entailment"),
        ("A dog . ", "A cat . ", "contradiction"),
    ]
