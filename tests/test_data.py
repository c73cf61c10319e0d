"""Loaders on the real data folder (counts from shared/data/SOURCES.md) and on corrupted copies of it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from stsnb.data import hub_copies, selection
from stsnb.data import loading as data
from stsnb.data import records as data_records

STS_COUNTS = {
    "STS12": {"MSRpar": 750, "MSRvid": 750, "SMTeuroparl": 459, "surprise.OnWN": 750, "surprise.SMTnews": 399},
    "STS13": {"FNWN": 189, "headlines": 750, "OnWN": 561},
    "STS14": {"deft-forum": 450, "deft-news": 300, "headlines": 750, "images": 750, "OnWN": 750, "tweet-news": 750},
    "STS15": {"answers-forums": 375, "answers-students": 750, "belief": 375, "headlines": 750, "images": 750},
    "STS16": {"answer-answer": 254, "headlines": 249, "plagiarism": 230, "postediting": 244, "question-question": 209},
}


@pytest.mark.parametrize("year", data_records.STS_YEARS)
@pytest.mark.parametrize("text", ["senteval", "raw"])
def test_sts_years_have_every_subset_with_the_documented_counts(year, text, data_dir):
    pairs = data.load_sts_year(year, text, data_dir)
    counts: dict[str, int] = {}
    for pair in pairs:
        counts[pair.subset] = counts.get(pair.subset, 0) + 1
        assert 0.0 <= pair.score <= 5.0 and pair.dataset == year
    assert counts == STS_COUNTS[year]


def test_unscored_pairs_are_dropped_and_counted(data_dir):
    sts15 = data.load_sts_year("STS15", data_dir=data_dir)
    assert sts15.skipped == {"unscored": 8500 - 3000}
    assert data.load_sts_year("STS12", data_dir=data_dir).skipped == {}


def test_raw_and_senteval_text_share_gold_scores_but_not_case(data_dir):
    senteval = data.load_stsb("test", "senteval", data_dir)
    raw = data.load_stsb("test", "raw", data_dir)
    assert [p.score for p in senteval] == [p.score for p in raw]
    assert senteval[0].sent1 == "a girl is styling her hair ."
    assert raw[0].sent1 == "A girl is styling her hair."


@pytest.mark.parametrize(("split", "n"), [("train", 5749), ("dev", 1500), ("test", 1379)])
def test_stsb_splits(split, n, data_dir):
    assert len(data.load_stsb(split, data_dir=data_dir)) == n
    assert len(data.load_stsb(split, "raw", data_dir)) == n  # raw rows with 9 columns are read too


def test_the_gate_pairs_are_dev_pairs_selection_never_sees_and_selection_is_the_sample_it_was(data_dir):
    dev = data.load_stsb("dev", data_dir=data_dir)
    split = selection.selection_and_gate(dev, 300, 600, seed=0)
    assert list(split) == data.sample(dev, 300, 0) and len(split.gate) == 600
    assert not {id(p) for p in split} & {id(p) for p in split.gate}
    assert len(selection.selection_and_gate(dev, 300, None, 0).gate) == len(dev) - 300
    assert selection.selection_and_gate(dev, None, 600, 0).gate == []  # selection on every pair leaves none to hold out


@pytest.mark.parametrize(
    ("split", "n", "labels"),
    [("train", 4500, (2536, 1299, 665)), ("trial", 500, (282, 144, 74)), ("test", 4927, (2793, 1414, 720))],
)
def test_sick_splits_with_entailment_labels(split, n, labels, data_dir):
    pairs = data.load_sick(split, data_dir=data_dir)
    assert len(pairs) == n
    assert tuple(sum(p.entailment == name for p in pairs) for name in data.SICK_ENTAILMENT) == labels
    assert min(p.score for p in pairs) >= 1.0 and max(p.score for p in pairs) <= 5.0


def test_sick_rescaling_maps_1_to_5_onto_0_to_5():
    assert [data.rescale_sick(s) for s in (1.0, 3.0, 5.0)] == [0.0, 2.5, 5.0]
    with pytest.raises(ValueError, match=r"\[1, 5\]"):
        data.rescale_sick(0.5)


def test_snli_pairs_and_triplets(data_dir):
    dev = data.load_snli("dev", data_dir=data_dir)
    assert len(dev) == 9842
    assert [sum(p.label == name for p in dev) for name in ("entailment", "neutral", "contradiction")] == [
        3329,
        3235,
        3278,
    ]
    assert {p.label_id for p in dev} == {0, 1, 2}
    assert dev[0].label_id == data_records.NLI_LABEL_TO_ID[dev[0].label]
    triplets = data.nli_triplets(dev)
    assert len(triplets) > 3000
    entailed = {(p.premise, p.hypothesis) for p in dev if p.label == "entailment"}
    contradicted = {(p.premise, p.hypothesis) for p in dev if p.label == "contradiction"}
    for t in triplets[:200]:
        assert (t.anchor, t.positive) in entailed and (t.anchor, t.negative) in contradicted
    with pytest.raises(ValueError, match="SNLI train is not in the data folder"):
        data.load_snli("train", data_dir=data_dir)


def test_wikipedia_and_csts(data_dir):
    assert len(data.load_wiki(data_dir=data_dir)) == 11914
    assert len(data.load_wiki(limit=10, data_dir=data_dir)) == 10
    train = data.load_csts("train", data_dir)
    validation = data.load_csts("validation", data_dir)
    assert len(train) == 11342 and train.skipped == {}
    assert len(validation) == 2834 - 214 and validation.skipped == {"label -1 (no usable label)": 214}
    assert {r.label for r in validation} <= {1.0, 2.0, 3.0, 4.0, 5.0}


def test_dedup_removes_train_pairs_seen_in_any_test_set_in_either_order(data_dir):
    tests = data.seven_test_sets(data_dir=data_dir)
    sick_train = data.load_sick("train", data_dir=data_dir)
    report = data.dedup_against_tests(sick_train, tests)
    assert 0 < len(report.removed) < len(sick_train)
    assert len(report.kept) + len(report.removed) == len(sick_train)
    # Appendix A, Table 7: this SICK train pair occurs reversed in the SICK test set
    removed = {(p.sent1, p.sent2) for p in report.removed}
    assert any("wheelie" in a and "courageously" in a for a, _ in removed)
    test_pairs = {(p.sent1, p.sent2) for p in tests}
    for pair in report.kept:
        assert (pair.sent1, pair.sent2) not in test_pairs and (pair.sent2, pair.sent1) not in test_pairs
    assert "removed" in report.summary() and "SICK" in report.summary()


def test_dedup_on_synthetic_pairs_ignores_scores_and_order():
    test = [data_records.STSPair("a b", "c", 1.0, "T", "t")]
    train = [
        data_records.STSPair("c", "a  b", 4.0, "X", "train"),  # reversed, extra space, other score
        data_records.STSPair("a b", "d", 1.0, "X", "train"),
    ]
    report = data.dedup_against_tests(train, test)
    assert [p.sent2 for p in report.kept] == ["d"]


# ---------------------------------------------------------------------------------------------------------
# bad input: a corrupted copy of the folder, one fault at a time


@pytest.fixture()
def corrupt_copy(tmp_path, data_dir) -> Path:
    target = tmp_path / "data"
    shutil.copytree(data_dir / "senteval", target / "senteval")
    shutil.copytree(data_dir / "csts_reannotated", target / "csts_reannotated")
    return target


def _rewrite_line(path: Path, number: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[number - 1] = text
    path.write_text("\n".join(lines), encoding="utf-8")


def test_missing_folder_names_the_variable(tmp_path):
    with pytest.raises(data_records.DataError, match="STSNB_DATA_DIR"):
        data.load_stsb("test", data_dir=tmp_path / "nowhere", hub=False)


def test_missing_file_is_named(corrupt_copy):
    (corrupt_copy / "senteval/STS/STS13-en-test/STS.gs.FNWN.txt").unlink()
    with pytest.raises(data_records.DataError, match=r"STS\.gs\.FNWN\.txt: file not found"):
        data.load_sts_year("STS13", data_dir=corrupt_copy)


def test_score_out_of_range_names_file_and_line(corrupt_copy):
    _rewrite_line(corrupt_copy / "senteval/STS/STS12-en-test/STS.gs.MSRvid.txt", 7, "5.6")
    with pytest.raises(
        data_records.DataError, match=r"STS\.gs\.MSRvid\.txt:7: score 5\.6 outside the range \[0\.0, 5\.0\]"
    ):
        data.load_sts_year("STS12", data_dir=corrupt_copy)


def test_non_numeric_score_names_file_and_line(corrupt_copy):
    _rewrite_line(corrupt_copy / "senteval/STS/STSBenchmark/sts-dev.csv", 3, "a\tb\tc\td\tfive\tx\ty")
    with pytest.raises(data_records.DataError, match=r"sts-dev\.csv:3: expected a score in \[0\.0, 5\.0\], got 'five'"):
        data.load_stsb("dev", data_dir=corrupt_copy)


def test_malformed_line_names_file_line_and_expectation(corrupt_copy):
    _rewrite_line(corrupt_copy / "senteval/STS/STS14-en-test/STS.input.images.txt", 12, "only one sentence")
    with pytest.raises(data_records.DataError, match=r"STS\.input\.images\.txt:12: expected 2 tab-separated sentences"):
        data.load_sts_year("STS14", data_dir=corrupt_copy)
    path = corrupt_copy / "senteval/SICK/SICK_trial.txt"
    _rewrite_line(path, 5, "5\tA\tB\t3.2\tMAYBE")
    with pytest.raises(data_records.DataError, match=r"SICK_trial\.txt:5: expected an entailment label"):
        data.load_sick("trial", data_dir=corrupt_copy)


def test_mismatched_line_counts_are_reported(corrupt_copy):
    gold = corrupt_copy / "senteval/STS/STS16-en-test/STS.gs.headlines.txt"
    gold.write_text("\n".join(gold.read_text().split("\n")[:-5]) + "\n")
    with pytest.raises(
        data_records.DataError, match=r"STS\.input\.headlines\.txt has \d+ lines but .*STS\.gs\.headlines"
    ):
        data.load_sts_year("STS16", data_dir=corrupt_copy)
    labels = corrupt_copy / "senteval/SNLI/labels.test"
    labels.write_text("\n".join(labels.read_text().split("\n")[:100]) + "\n")
    with pytest.raises(data_records.DataError, match=r"labels\.test 100: expected the same number of lines"):
        data.load_snli("test", data_dir=corrupt_copy)


def test_bad_nli_label_and_bad_csts_row(corrupt_copy):
    _rewrite_line(corrupt_copy / "senteval/SNLI/labels.dev", 4, "maybe")
    with pytest.raises(data_records.DataError, match=r"labels\.dev:4: expected one of"):
        data.load_snli("dev", data_dir=corrupt_copy)
    path = corrupt_copy / "csts_reannotated/csts_validation_reannotated.csv"
    _rewrite_line(path, 3, "a,b,c,7")
    with pytest.raises(data_records.DataError, match=r"csts_validation_reannotated\.csv:3: score 7\.0 outside"):
        data.load_csts("validation", corrupt_copy)


def test_invalid_utf8_names_the_line(corrupt_copy):
    path = corrupt_copy / "senteval/STS/STS13-en-test/STS.input.FNWN.txt"
    raw = path.read_bytes().split(b"\n")
    raw[2] = b"\xff\xfe broken\tpair"
    path.write_bytes(b"\n".join(raw))
    with pytest.raises(data_records.DataError, match=r"STS\.input\.FNWN\.txt:3: not valid UTF-8"):
        data.load_sts_year("STS13", data_dir=corrupt_copy)


def test_bad_arguments_are_refused(data_dir):
    with pytest.raises(ValueError, match="year must be one of"):
        data.load_sts_year("STS17", data_dir=data_dir)
    with pytest.raises(ValueError, match="text must be"):
        data.load_stsb("test", "lower", data_dir)


# ---------------------------------------------------------------------------------------------------------
# the Hub path maps onto the same records (the Hub is unreachable here: datasets.load_dataset is replaced)


def _as_hub_rows(records, layout: str) -> list[dict]:
    """Real records in the column layout of a Hub dataset (from its dataset card), scaled as the Hub stores them:
    mteb/sts1X-sts (sentence1, sentence2, score 0-5), sentence-transformers/stsb (score / 5), RobZamp/sick
    (sentence_A, sentence_B, relatedness_score, label 0 entailment / 1 neutral / 2 contradiction)."""
    if layout == "mteb":
        return [{"sentence1": r.sent1, "sentence2": r.sent2, "score": r.score} for r in records]
    if layout == "stsb":
        return [{"sentence1": r.sent1, "sentence2": r.sent2, "score": r.score / 5.0} for r in records]
    names = {"ENTAILMENT": 0, "NEUTRAL": 1, "CONTRADICTION": 2}
    return [
        {"sentence_A": r.sent1, "sentence_B": r.sent2, "relatedness_score": r.score, "label": names[r.entailment]}
        for r in records
    ]


def test_hub_path_gives_the_same_records_as_the_raw_folder(monkeypatch, data_dir):
    """STSNB_DATA_DIR=hub reads the Hub copies (replaced here by the real raw files in the Hub's column layouts):
    the records must equal the data folder's raw-text records, scores on the same scale."""
    folder = {
        ("mteb/sts13-sts", "test"): (data.load_sts_year("STS13", "raw", data_dir), "mteb"),
        ("sentence-transformers/stsb", "validation"): (data.load_stsb("dev", "raw", data_dir), "stsb"),
        ("RobZamp/sick", "test"): (data.load_sick("test", "raw", data_dir), "sick"),
    }
    requested = []

    def fake_load_dataset(dataset_id, *args, split=None, **kwargs):
        requested.append((dataset_id, split))
        records, layout = folder[(dataset_id, split)]
        return _as_hub_rows(records, layout)

    monkeypatch.setattr(hub_copies, "_load_dataset", fake_load_dataset)
    monkeypatch.setenv(data.DATA_DIR_ENV, data_records.HUB)
    assert data.describe_source().startswith("the Hugging Face Hub")

    def key(r):
        return (r.sent1, r.sent2, round(r.score, 6), r.entailment)

    for (dataset_id, _split), (records, _) in folder.items():
        loaded = {
            "mteb/sts13-sts": lambda: data.load_sts_year("STS13", "raw"),
            "sentence-transformers/stsb": lambda: data.load_stsb("dev", "raw"),
            "RobZamp/sick": lambda: data.load_sick("test", "raw"),
        }[dataset_id]()
        assert [key(r) for r in loaded] == [key(r) for r in records], dataset_id
        assert len(loaded) == len(records) > 100
    assert {r.subset for r in data.load_sts_year("STS13", "raw")} == {"hub-all"}  # no subset names on the Hub
    assert len(requested) == 4
    with pytest.raises(data_records.DataError, match="raw"):
        data.load_stsb("test")  # the default SentEval text is not what the Hub holds


def test_hub_rows_out_of_range_are_refused(monkeypatch):
    monkeypatch.setattr(
        hub_copies, "_load_dataset", lambda *a, **k: [{"sentence1": "a", "sentence2": "b", "score": 3.0}]
    )
    monkeypatch.setenv(data.DATA_DIR_ENV, data_records.HUB)
    with pytest.raises(data_records.DataError, match=r"stsb row 0: score 3.0 outside the range \[0.0, 1.0\]"):
        data.load_stsb("test", "raw")  # sentence-transformers/stsb scores are 0-1: 3.0 is not one of them


def test_no_data_folder_is_a_quick_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv(data.DATA_DIR_ENV, raising=False)
    monkeypatch.setattr(data, "DEFAULT_DATA_DIR", tmp_path / "data")
    with pytest.raises(data_records.DataError) as caught:
        data.load_stsb("test")
    message = str(caught.value)
    assert str(tmp_path / "data") in message and "`stsnb data fetch`" in message and "docs/data.md" in message


def _real_snli_rows(data_dir, n: int = 6) -> list:
    return list(data.load_snli("dev", data_dir))[:n]


def test_nli_012_csv_reads_its_own_format_from_real_snli_rows(tmp_path, data_dir):
    pairs = _real_snli_rows(data_dir)
    path = tmp_path / "nli_012.csv"
    lines = ["gold_label,sentence1,sentence2"]
    lines += [f'{p.label_id},"{p.premise}","{p.hypothesis}"' for p in pairs]
    path.write_text("\n".join(lines) + "\n")
    loaded = data.load_nli(str(path))
    assert [(p.premise, p.hypothesis, p.label) for p in loaded] == [(p.premise, p.hypothesis, p.label) for p in pairs]
    assert loaded[0].source == "nli_012.csv:2"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ('3,"a premise","a hypothesis"', r"nli_012.csv:3: gold_label '3' is not 0/1/2"),
        ('1,"a premise",', r"nli_012.csv:3: empty or missing sentence2"),
        ("1", r"nli_012.csv:3: empty or missing sentence1, sentence2"),
    ],
)
def test_bad_nli_012_rows_name_file_and_line_not_a_key_error(tmp_path, row, message):
    path = tmp_path / "nli_012.csv"
    path.write_text(f'gold_label,sentence1,sentence2\n2,"fine","also fine"\n{row}\n')
    with pytest.raises(data_records.DataError, match=message):
        data.load_nli(str(path))


def test_simcse_triplets_read_nli_for_simcse_csv_and_name_bad_lines(tmp_path, data_dir):
    triplets = list(data.nli_triplets(list(data.load_snli("dev", data_dir))[:300]))[:5]
    path = tmp_path / "nli_for_simcse.csv"
    rows = [f'"{t.anchor}","{t.positive}","{t.negative}"' for t in triplets]
    path.write_text("sent0,sent1,hard_neg\n" + "\n".join(rows) + "\n")
    assert list(data.load_simcse_triplets(path)) == triplets
    path.write_text("sent0,sent1,hard_neg\n" + rows[0] + '\n"only","two"\n')
    with pytest.raises(data_records.DataError, match=r"nli_for_simcse.csv:3: empty or missing hard_neg"):
        data.load_simcse_triplets(path)
    path.write_text("premise,hypothesis\n")
    with pytest.raises(
        data_records.DataError, match=r"nli_for_simcse.csv:1: missing columns \['hard_neg', 'sent0', 'sent1'\]"
    ):
        data.load_simcse_triplets(path)


def test_wiki_corpus_source_is_chosen_apart_from_the_evaluation_data(tmp_path, data_dir):
    sample = data.load_wiki_corpus("sample", limit=5, data_dir=data_dir)
    assert sample == data.load_wiki(5, data_dir)
    path = tmp_path / "wiki1m_for_simcse.txt"
    path.write_text("\n".join(sample) + "\n")
    assert data.load_wiki_corpus(str(path)) == sample
    with pytest.raises(
        data_records.DataError, match=r"wiki2m: no such file; the training corpus source must be one of"
    ):
        data.load_wiki_corpus("wiki2m")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(data_records.DataError, match=r"empty.txt: no sentences"):
        data.load_wiki_corpus(str(empty))


def test_the_paper_source_reads_the_corpora_data_fetch_paper_builds(tmp_path, data_dir):
    """``nli_source: paper`` and ``corpus_source: paper`` (the paper plan's): the data folder's paper/ corpora;
    missing, an error naming the file and the command that builds it."""
    with pytest.raises(data_records.DataError, match=r"paper/snli_train.csv: not found.*`stsnb data fetch --paper`"):
        data.load_nli("paper", tmp_path)
    with pytest.raises(data_records.DataError, match=r"paper/wiki1m_for_simcse.txt: not found"):
        data.load_wiki_corpus("paper", data_dir=tmp_path)
    (tmp_path / "paper").mkdir()
    for name, label in (("snli_train.csv", "entailment"), ("multinli_train.csv", "2")):  # names or official ids
        (tmp_path / "paper" / name).write_text(f"gold_label,sentence1,sentence2\n{label},A man sleeps.,He rests.\n")
    pairs = data.load_nli("paper", tmp_path)
    assert [(p.label, p.source) for p in pairs] == [
        ("entailment", "snli_train.csv:2"),
        ("entailment", "multinli_train.csv:2"),
    ]
    sample = data.load_wiki(5, data_dir)
    (tmp_path / "paper" / data.WIKI_FILE).write_text("\n".join(sample) + "\n")
    assert data.load_wiki_corpus("paper", limit=3, data_dir=tmp_path) == sample[:3]


def test_wiki_corpus_from_the_hub_reads_wiki1m_through_datasets_text_rows(tmp_path, data_dir, monkeypatch):
    """The Hub is unreachable here: the Hub dataset is served from a local copy of the real sample's lines, read by
    the same ``datasets`` text builder that reads ``wiki1m_for_simcse.txt`` on the Hub."""
    import datasets

    sample = data.load_wiki(6, data_dir)
    local = tmp_path / data.WIKI_FILE
    local.write_text("\n".join(sample[:3]) + "\n\n" + "\n".join(sample[3:]) + "\n")  # the Hub path drops blank rows
    real_load = datasets.load_dataset
    calls = []

    def hub_from_local(dataset_id, *args, data_files=None, split=None, **kwargs):
        calls.append((dataset_id, data_files, split))
        return real_load("text", data_files=str(tmp_path / data_files), split=split, cache_dir=str(tmp_path / "c"))

    monkeypatch.setattr(datasets, "load_dataset", hub_from_local)
    assert data.load_wiki_corpus("hub") == sample
    assert data.load_wiki_corpus("hub", limit=2) == sample[:2]
    assert calls[0] == ("princeton-nlp/datasets-for-simcse", "wiki1m_for_simcse.txt", "train")
    local.write_text("\n")
    with pytest.raises(
        data_records.DataError, match=r"princeton-nlp/datasets-for-simcse/wiki1m_for_simcse.txt: no sentences"
    ):
        data.load_wiki_corpus("hub")
