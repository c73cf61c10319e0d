"""SentEval's text conversions, for the parts of the data folder that ``stsnb data fetch`` builds from originals.

SentEval's ``get_transfer_data.bash`` converts SNLI with the Penn Treebank tokenizer sed script
(``data/downstream/tokenizer.sed``, Robert MacIntyre's): :func:`ptb_tokenize` applies the same substitutions in the
same order, and :func:`snli_rows` keeps the pairs that script keeps (those with a gold label).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

# (pattern, replacement) in the sed script's order; sed's `&` is \g<0> here
_PTB_RULES: tuple[tuple[str, str], ...] = (
    (r'^"', "`` "),
    (r'([ (\[{<])"', r"\1 `` "),
    (r"\.\.\.", " ... "),
    (r"[,;:@#$%&]", r" \g<0> "),
    # sentences are split already: only a FINAL period is split off
    (r"([^.])([.])([\])}>\"']*)[ \t]*$", r"\1 \2\3 "),
    (r"[?!]", r" \g<0> "),
    (r"[\]\[(){}<>]", r" \g<0> "),
    (r"--", " -- "),
    # a space at both ends lets the rules below match at the line's edges
    (r"$", " "),
    (r"^", " "),
    (r'"', " '' "),
    (r"([^'])' ", r"\1 ' "),
    (r"'([sSmMdD]) ", r" '\1 "),
    (r"'ll ", " 'll "),
    (r"'re ", " 're "),
    (r"'ve ", " 've "),
    (r"n't ", " n't "),
    (r"'LL ", " 'LL "),
    (r"'RE ", " 'RE "),
    (r"'VE ", " 'VE "),
    (r"N'T ", " N'T "),
    (r" ([Cc])annot ", r" \1an not "),
    (r" ([Dd])'ye ", r" \1' ye "),
    (r" ([Gg])imme ", r" \1im me "),
    (r" ([Gg])onna ", r" \1on na "),
    (r" ([Gg])otta ", r" \1ot ta "),
    (r" ([Ll])emme ", r" \1em me "),
    (r" ([Mm])ore'n ", r" \1ore 'n "),
    (r" '([Tt])is ", r" '\1 is "),
    (r" '([Tt])was ", r" '\1 was "),
    (r" ([Ww])anna ", r" \1an na "),
    (r"  *", " "),
    (r"^ *", ""),
)
_COMPILED = tuple((re.compile(pattern), replacement) for pattern, replacement in _PTB_RULES)
_ONCE = {r"$", r"^", r"^ *", r"([^.])([.])([\])}>\"']*)[ \t]*$"}  # sed without /g, or anchored: one match


def ptb_tokenize(line: str) -> str:
    """One line through SentEval's ``tokenizer.sed`` (PTB conventions: ``don't`` -> ``do n't``, quotes ->
    `````` and ``''``, punctuation split off). Like the sed script, the result keeps one trailing space."""
    for (pattern, replacement), (source, _) in zip(_COMPILED, _PTB_RULES, strict=True):
        line = pattern.sub(replacement, line, count=1 if source in _ONCE else 0)
    return line


SNLI_LABELS = ("entailment", "neutral", "contradiction")  # stanfordnlp/snli: 0/1/2; -1 = no gold label ("-")


def snli_rows(rows: Iterable[tuple[str, str, int]]) -> Iterator[tuple[str, str, str]]:
    """(s1, s2, label) in SentEval's SNLI format from (premise, hypothesis, label id) rows of ``stanfordnlp/snli``:
    rows without a gold label are dropped (SentEval's ``awk '$1 != "-"'``), sentences PTB-tokenised."""
    for premise, hypothesis, label in rows:
        if int(label) < 0:
            continue
        yield ptb_tokenize(premise), ptb_tokenize(hypothesis), SNLI_LABELS[int(label)]
