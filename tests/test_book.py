"""``stsnb book``: the static site of the executed runs, built from the committed cpu runs and opened in a browser."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import lab_browser as browser
import markdown_tables as md
import pytest

from stsnb.evaluation import claims
from stsnb.runs import plans
from stsnb.runs.summary import OVERVIEW_COLUMNS, comparison_rows, overview_rows, recorded_outcome
from stsnb.teaching import book


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return book.build("cpu", tmp_path_factory.mktemp("book")).parent


def test_index_lists_every_executed_notebook_with_its_results(site):
    index = (site / "index.html").read_text()
    executed = book.executed_notebooks(plans.DEFAULT_OUT / "cpu")
    assert executed, "the committed cpu runs are missing"
    for notebook in executed:
        assert f'href="{notebook.stem}.html"' in index
        assert (site / f"{notebook.stem}.html").is_file()
    rows = sum(len(comparison_rows(n.parent)) for n in executed)
    assert index.count('<td class="num">') >= 3 * rows  # ours, paper and delta of every results row


def table_rows(page: str, table: int) -> list[list[str]]:
    """The cell texts of each row of the ``table``-th table of a page (tags stripped, entities unescaped)."""
    body = page.split("<table>")[table + 1].split("</table>")[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, flags=re.S)
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r)] for r in rows
    ]


def test_index_opens_with_the_overview_of_summary_md(site):
    index = (site / "index.html").read_text()
    assert index.index('<h2 id="overview">') < index.index("<table>") < index.index('<h2 id="claims">')
    header, *rows = table_rows(index, 0)
    assert header == list(OVERVIEW_COLUMNS)
    profile_dir = plans.DEFAULT_OUT / "cpu"
    plan = plans.load_plan(plans.plan_path("cpu"))
    expected = overview_rows([recorded_outcome(n, profile_dir) for n in plan.notebooks], profile_dir)
    assert rows == [[row.notebook, *row.cells()] for row in expected]  # the same row builder as summary.md
    summary = md.sections((profile_dir / "summary.md").read_text())
    printed = [[md.link(r[c])[0] if c == "notebook" else r[c] for c in r] for r in md.table(summary["Overview"])]
    aside = [row[1:2] + row[3:] for row in printed]  # status aside (the book reads earlier runs)
    assert aside == [row[1:2] + row[3:] for row in rows]


def test_index_shows_a_not_tested_claim_with_its_failed_precondition(tmp_path):
    folder = tmp_path / "nb"
    folder.mkdir()
    moved = claims.precondition("the baseline moved the encoder", False, "baseline minus untrained: +0.07")
    row = claims.claim(
        "a beats b", (-1.1, -1.7, -0.6), preconditions=[moved], paper_difference=3.0, paper_quote='Table 1: "a beats b"'
    )
    (folder / "metrics.json").write_text(json.dumps({"claims": [row], "takeaway": "t.", "comparable": "no"}))
    (folder / "STATUS").write_text("ok\n")
    rows = overview_rows([recorded_outcome("nb", tmp_path)], tmp_path)
    page = book.index_html("fake", "", rows, pages=set())
    overview = table_rows(page, 0)[1]
    assert overview[:2] == ["nb", "—"], "a notebook no paper's main claim is registered for"
    assert overview[5:12] == ["0", "0", "0", "0", "0", "0", "1"] and overview[12:] == ["none", "none", "t.", "no"]
    claim = table_rows(page, 1)[1]
    assert claim == [
        "nb",
        "a beats b",
        "-1.10 [-1.70, -0.60]",
        "1",
        "—",
        "+3.00",
        "—",
        "not tested",
        "does not hold: the baseline moved the encoder (baseline minus untrained: +0.07)",
    ]


def test_pages_load_nothing_from_the_network(site):
    for page in site.glob("*.html"):
        text = page.read_text()
        remote = re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="(https?://[^"]+)"', text)
        assert remote == [], f"{page.name} loads {remote[:3]}"


def test_the_book_holds_every_guide_and_the_index_links_each(site):
    """README.md and every docs/*.md page but the answer sheets become a page of the book, listed under Guides on the
    index; their links to each other (and to a heading of each other) point at the book's pages, never at a .md
    file."""
    index = (site / "index.html").read_text()
    sources = [book.REPOSITORY / "README.md", *sorted((book.REPOSITORY / "docs").glob("*.md"))]
    sources = [source for source in sources if not book.is_answer_sheet(source)]
    assert len(sources) >= 7, "README.md and the docs/ pages are missing"
    guides = index.split('<h2 id="guides">')[1].split("<h2")[0]
    for source in sources:
        page = site / f"{source.stem}.html"
        assert page.is_file(), f"{source.name} is not in the book"
        assert f'<a href="{source.stem}.html">' in guides, f"the index does not list {source.name}"
        text = page.read_text()
        assert text.count('<a href="index.html">') == 1, f"{page.name} has no single link back to the index"
        for href in re.findall(r'(?:href|src)="([^"#?]*)[^"#]*(?:#([^"]*))?"', text):
            target, fragment = href
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            assert not target.endswith(".md"), f"{page.name} links {target}, not its page in the book"
            assert (site / target).is_file(), f"{page.name}: broken link {target}"
            if fragment and target.endswith(".html") and target != "index.html":
                assert f'id="{fragment}"' in (site / target).read_text(), f"{page.name}: no #{fragment} in {target}"
    students = (site / "students.html").read_text()
    assert '<a href="gpu-server.html">' in students and 'src="_static/guides/jupyterlab.png"' in students


def test_the_index_points_at_the_lab_worksheets(site):
    index = (site / "index.html").read_text()
    assert '<a href="lab_plan.html#worksheets">' in index
    lab = (site / "lab_plan.html").read_text()
    assert 'id="worksheets"' in lab and 'id="worksheet-10_pcc_tuning"' in lab


ANSWERS = re.compile(r"answers?\.(?:html|md)|exercises_answers", re.I)


def test_the_students_book_has_no_answer_sheet_and_no_link_to_one(site):
    """The default edition is the students': no page of an answer sheet, no link (or address of any kind) to one; no
    copy of the sheet is committed (the instructor's edition writes it from the exercise runs)."""
    assert book.ANSWER_SHEETS and not any((book.REPOSITORY / "docs" / name).exists() for name in book.ANSWER_SHEETS)
    assert not [page.name for page in site.rglob("*.html") if ANSWERS.search(page.name)]
    for page in site.glob("*.html"):
        addresses = re.findall(r'(?:href|src)="([^"]*)"', page.read_text())
        assert not [a for a in addresses if ANSWERS.search(a)], f"{page.name} links an answer sheet"
    index = (site / "index.html").read_text()
    assert "instructor's edition" not in index.split('<h2 id="guides">')[1].split("<h2")[0]


def tiny_runs(root: Path) -> Path:
    """A runs root with one executed notebook of a profile no plan names (``fake``)."""
    import nbformat

    folder = root / "fake" / "nb"
    folder.mkdir(parents=True)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# nb\n\nA page.")])
    nbformat.write(notebook, folder / "nb.ipynb")
    (folder / "STATUS").write_text("ok\n")
    return root


def test_the_instructors_book_adds_the_answer_sheet_and_the_students_build_removes_it(tmp_path):
    """The instructor's edition writes the sheet from the notebooks and the exercise runs under the runs root (here
    none: every measured value reads *not measured*), lists it and links it where a guide names
    exercises_answers.md in docs/."""
    from stsnb.teaching import answers

    runs = tiny_runs(tmp_path / "runs")
    index = book.build("fake", runs_root=runs, instructor=True)
    assert index.parent == runs / "fake" / book.INSTRUCTOR_OUT, "the instructor's edition has a folder of its own"
    site = index.parent
    text = index.read_text()
    assert "(instructor's edition)" in text.split("</h1>")[0]
    page = site / "exercises_answers.html"
    assert page.is_file() and '<a href="exercises_answers.html">' in text
    sheet = page.read_text()
    assert "Exercises: the instructor" in sheet and answers.NOT_MEASURED.strip("*") in sheet
    for main in answers.main_claims_of("10_pcc_tuning"):
        assert main.statement in sheet
    students = book.build("fake", out=site, runs_root=runs)  # the same folder: the sheet a build left there goes
    assert "instructor" not in students.read_text().split("</h1>")[0]
    assert not [page.name for page in site.glob("*.html") if ANSWERS.search(page.name)]
    assert book.build("fake", runs_root=runs).parent == runs / "fake" / "book"


def test_stsnb_book_takes_instructor(tmp_path, capsys):
    from stsnb import cli

    assert cli.build_parser().parse_args(["book", "--instructor"]).instructor
    assert not cli.build_parser().parse_args(["book"]).instructor
    runs = tiny_runs(tmp_path / "runs")
    assert cli.main(["book", "--profile", "fake", "--runs", str(runs), "--instructor"]) == 0
    assert str(runs / "fake" / book.INSTRUCTOR_OUT / "index.html") in capsys.readouterr().out


def test_a_guide_link_to_a_file_outside_the_book_becomes_text(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "# Page A\n\n## Two words\n\nSee [b](b.md#two-words), [the code](../stsnb/x.py), [run](../notebooks/nb.ipynb),"
        " [summary](../papermill_runs/cpu/summary.md) and [site](https://example.org).\n"
    )
    (tmp_path / "docs" / "b.md").write_text("# B\n\n## Two words\n")
    found = book.guides(tmp_path)
    assert [g.page for g in found] == ["a.html", "b.html"] and found[0].title == "Page A"
    links = book.GuideLinks(tmp_path / "out", tmp_path, "cpu", {"nb"}, found)
    page = book.guide_html(found[0], links, mathjax_url="")
    assert '<h2 id="two-words">' in page
    assert '<a href="b.html#two-words">b</a>' in page
    assert '<a href="nb.html">run</a>' in page and '<a href="index.html#overview">summary</a>' in page
    assert '<span class="repo-file" title="in the repository: stsnb/x.py">the code</span>' in page
    assert '<a href="https://example.org">site</a>' in page


def test_missing_runs_give_a_clear_error(tmp_path):
    with pytest.raises(book.BookError, match="stsnb run --profile nothing"):
        book.build("nothing", tmp_path / "out", runs_root=tmp_path)


@pytest.mark.long  # a browser (10 s): off the default tier
@pytest.mark.browser
@pytest.mark.slow
def test_the_book_opens_offline_with_working_links_images_and_math(site):
    missing = browser.missing_requirements()
    if missing:
        pytest.skip(f"{missing}; {browser.ENABLE_HINT}")
    with browser.chromium_page() as page:
        page.goto((site / "index.html").as_uri())
        links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
        pages = sorted({h for h in links if h.endswith(".html")})
        anchors = sorted({h[1:] for h in links if h.startswith("#")})
        assert pages and anchors
        for anchor in anchors:
            assert page.locator(f"[id='{anchor}']").count() == 1, f"broken anchor #{anchor}"
        guides = {guide.page for guide in book.guides()}
        for target in pages:
            assert (site / target).is_file(), f"broken link {target}"
            page.goto((site / target).as_uri())
            page.wait_for_load_state("load")
            images = page.eval_on_selector_all("img", "els => els.map(i => i.complete && i.naturalWidth > 0)")
            assert all(images), f"{target}: {images.count(False)} of {len(images)} images did not load"
            assert images or target in guides, f"{target}: a notebook page without figures"
            back = page.eval_on_selector_all("a[href='index.html']", "els => els.length")
            assert back == 1, f"{target} has no link back to the index"
        page.goto((site / "00_contrastive_ceiling.html").as_uri())
        page.wait_for_function(
            "() => document.querySelectorAll('.MathJax, .MathJax_Display, mjx-container').length > 0"
        )
        assert page.offsite == [], f"the book asked for off-machine resources: {page.offsite[:5]}"
