"""``stsnb book``: a static HTML site of the executed runs of a profile, readable offline and shareable with a class.

``build("cpu")`` turns every executed notebook of ``papermill_runs/cpu/`` into HTML with nbconvert (JupyterLab's look,
figures embedded in the page) and writes ``index.html``: first the overview summary.md opens with (one row per
notebook of the plan from ``summary.overview_rows``: status, runtime, the run's commit, claims by verdict, takeaway,
comparability, a link), then the claims with their seeds, verdicts and preconditions, then every result row
(ours | paper | delta), then the guides: README.md and every ``docs/*.md`` page of the checkout, rendered to HTML
with nbconvert's Markdown filter (mistune), their links to each other and to the executed notebooks pointing at the
book's own pages. Math renders with a local copy of MathJax (the ``jupyter-server-mathjax`` package of the ``lab``
extra); nothing is loaded from the network.

Two editions: the students' (the default) leaves out the answer sheet (``ANSWER_SHEETS``: no page of it, and every
link to ``exercises_answers.md`` in docs/ becomes plain text that names the instructor's edition).
``build(..., instructor=True)`` (``stsnb book --instructor``) adds it, in a folder of its own by default, written at
build time from the notebooks' exercises and the committed exercise runs (``stsnb.teaching.answers``, ``answer_sheet``):
no copy of it is committed, so a student's clone holds no page of answers.
"""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..evaluation import verdict_rules
from ..runs import plans, summary

TEMPLATES = Path(__file__).parent / "templates"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
REPOSITORY = Path(__file__).resolve().parents[2]  # the checkout holding README.md and docs/ (if there is one)
GUIDE_IMAGES = "_static/guides"
ANSWER_SHEETS = ("exercises_answers.md",)  # the answer sheet's name among docs/ (built, not a file): instructor only
SHEET_TITLE = "Exercises: the instructor's answer sheet"
INSTRUCTOR_OUT = "book-instructor"  # the instructor's edition's default folder, apart from the students' ``book``


class BookError(RuntimeError):
    """The book cannot be built (no executed runs for the profile, a notebook nbconvert cannot read)."""


def mathjax_folder() -> Path | None:
    """MathJax 2 of the ``jupyter-server-mathjax`` package, if installed."""
    try:
        import jupyter_server_mathjax
    except ImportError:
        return None
    folder = Path(jupyter_server_mathjax.__file__).parent / "static"
    return folder if (folder / "MathJax.js").is_file() else None


def executed_notebooks(profile_dir: Path) -> list[Path]:
    """``<profile_dir>/<name>/<name>.ipynb`` of every notebook ``stsnb run`` promoted (failed attempts are not)."""
    return sorted(
        folder / f"{folder.name}.ipynb"
        for folder in profile_dir.iterdir()
        if folder.is_dir() and not folder.name.startswith(".") and (folder / f"{folder.name}.ipynb").is_file()
    )


def notebook_html(notebook: Path, mathjax_url: str) -> str:
    """One executed notebook as a self-contained HTML page (images inline), JupyterLab's style."""
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="book", extra_template_basedirs=[str(TEMPLATES)])
    exporter.mathjax_url = mathjax_url
    try:
        node = nbformat.read(notebook, as_version=4)
    except Exception as err:
        raise BookError(f"{notebook}: nbconvert cannot read it ({type(err).__name__}: {err})") from err
    node.metadata.pop("widgets", None)  # widget state would need the widget manager from a CDN
    body, _ = exporter.from_notebook_node(node, resources={"metadata": {"name": notebook.stem}})
    return body


@dataclass(frozen=True)
class Guide:
    """One Markdown page of the checkout (README.md or docs/<name>.md) and its page in the book."""

    source: Path
    page: str  # file name in the book: README.html, students.html, ...
    title: str
    instructor_only: bool = False  # an answer sheet (``ANSWER_SHEETS``): in the instructor's edition only
    text: str | None = None  # its Markdown when no file holds it (the answer sheet, written at build time)

    def markdown(self) -> str:
        return self.text if self.text is not None else self.source.read_text(encoding="utf-8")


def is_answer_sheet(source: Path, repository: Path = REPOSITORY) -> bool:
    """Whether ``source`` is one of the answer sheets of ``repository``'s docs/ (``ANSWER_SHEETS``)."""
    return source.resolve().parent == (repository / "docs").resolve() and source.name in ANSWER_SHEETS


def answer_sheet(repository: Path = REPOSITORY, runs_root: Path = plans.DEFAULT_OUT, written: bool = True) -> Guide:
    """The answer sheet as a guide at ``exercises_answers.md`` in docs/ (where links point): its Markdown written now
    from the notebooks and the exercise runs under ``runs_root`` (``answers.sheet``); without ``written`` only its
    place, for the links the students' edition turns into text."""
    from .answers import sheet

    text = sheet(out=runs_root) if written else None
    page = Path(ANSWER_SHEETS[0]).with_suffix(".html").name
    return Guide(repository / "docs" / ANSWER_SHEETS[0], page, SHEET_TITLE, instructor_only=True, text=text)


def guides(repository: Path = REPOSITORY, instructor: bool = False) -> list[Guide]:
    """README.md, then every ``docs/*.md`` page by name (``all_guides``), those marked ``instructor_only`` only with
    ``instructor``; none when stsnb runs without its checkout."""
    return [g for g in all_guides(repository) if instructor or not g.instructor_only]


def all_guides(repository: Path = REPOSITORY) -> list[Guide]:
    """README.md, then every ``docs/*.md`` page by name; never a file named as the answer sheet (it is built)."""
    sources = [repository / "README.md"] if (repository / "README.md").is_file() else []
    sources += sorted((repository / "docs").glob("*.md")) if (repository / "docs").is_dir() else []
    found = []
    for source in sources:
        if is_answer_sheet(source, repository):
            continue  # a copy left from before the sheet was built: ``answer_sheet`` writes it now
        text = source.read_text(encoding="utf-8")
        heading = re.search(r"^# (.+)$", text, flags=re.M)
        title = heading.group(1).strip().replace("`", "") if heading else source.stem
        if source.name == "README.md":
            title = f"Front page (README): {title}"
        found.append(Guide(source, f"{source.stem}.html", title, is_answer_sheet(source, repository)))
    return found


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _heading_ids(body: str) -> str:
    """Give every heading GitHub's anchor, so ``page.md#some-heading`` links keep working in the book."""
    seen: dict[str, int] = {}

    def anchor(match: re.Match) -> str:
        level, inner = match.group(1), match.group(3)
        inner = re.sub(r'<a class="anchor-link"[^>]*>.*?</a>', "", inner, flags=re.S)
        slug = github_slug(html.unescape(re.sub(r"<[^>]+>", "", inner)))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        slug = f"{slug}-{count}" if count else slug
        return f'<h{level} id="{slug}">{inner}<a class="anchor-link" href="#{slug}">&#182;</a></h{level}>'

    return re.sub(r'<h([1-6]) id="([^"]*)">(.*?)</h\1>', anchor, body, flags=re.S)


INSTRUCTOR_ONLY = "in the instructor's edition of the book only (stsnb book --instructor)"


class GuideLinks:
    """Where a relative link of a guide points in the book: another guide's page, an executed notebook's page, the
    index (the profile's summary.md), or an image copied into the book. Anything else in the repository has no page
    in the book: the link becomes plain text naming the file; a link to an answer sheet left out of this edition
    (``withheld``) becomes plain text naming the instructor's edition."""

    def __init__(
        self,
        out: Path,
        repository: Path,
        profile: str,
        pages: set[str],
        guides: list[Guide],
        withheld: Sequence[Guide] = (),
    ):
        self.out, self.repository, self.profile, self.pages = out, repository.resolve(), profile, pages
        self.guides = {guide.source.resolve(): guide.page for guide in guides}
        self.withheld = {guide.source.resolve() for guide in withheld}

    def _target(self, source: Path, link: str) -> tuple[Path | None, str]:
        path, _, fragment = link.partition("#")
        if not path:
            return None, fragment
        return (source.parent / path).resolve(), fragment

    def href(self, source: Path, link: str) -> str | None:
        """The link's address in the book (None: nothing in the book to point at)."""
        if re.match(r"^[a-z][a-z0-9+.-]*:|^#", link, flags=re.I):
            return link  # another site, mailto:, or an anchor of this page
        target, fragment = self._target(source, link)
        suffix = f"#{fragment}" if fragment else ""
        if target in self.guides:
            return self.guides[target] + suffix
        if target is not None and target.suffix == ".ipynb" and target.stem in self.pages:
            return f"{target.stem}.html"
        if target == self.repository / "papermill_runs" / self.profile / "summary.md":
            return "index.html#overview"
        return None

    def src(self, source: Path, link: str) -> str:
        """An image of the repository, copied into the book."""
        if re.match(r"^[a-z][a-z0-9+.-]*:", link, flags=re.I):
            return link
        target, _ = self._target(source, link)
        if target is None or not target.is_file():
            return link
        copy = self.out / GUIDE_IMAGES / target.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, copy)
        return f"{GUIDE_IMAGES}/{target.name}"

    def rewrite(self, source: Path, body: str) -> str:
        def anchor(match: re.Match) -> str:
            link, rest, text = html.unescape(match.group(1)), match.group(2), match.group(3)
            address = self.href(source, link)
            if address is None and self._target(source, link)[0] in self.withheld:
                return f'<span class="instructor-only" title="{INSTRUCTOR_ONLY}">{text}</span>'
            if address is None:
                shown = self._target(source, link)[0]
                try:
                    where = shown.relative_to(self.repository).as_posix() if shown else link
                except ValueError:
                    where = link
                return f'<span class="repo-file" title="in the repository: {html.escape(where)}">{text}</span>'
            return f'<a href="{html.escape(address)}"{rest}>{text}</a>'

        def image(match: re.Match) -> str:
            return f'<img src="{html.escape(self.src(source, html.unescape(match.group(1))))}"'

        body = re.sub(r'<a href="([^"]*)"([^>]*)>(.*?)</a>', anchor, body, flags=re.S)
        return re.sub(r'<img src="([^"]*)"', image, body)


def guide_html(guide: Guide, links: GuideLinks, mathjax_url: str) -> str:
    """One guide as a page of the book: its Markdown through nbconvert's filter, links pointing into the book."""
    from nbconvert.filters import markdown2html
    from pygments.formatters import HtmlFormatter

    body = _heading_ids(markdown2html(guide.markdown()))
    body = links.rewrite(guide.source, body)
    math = ""
    if mathjax_url:
        math = (
            '<script type="text/x-mathjax-config">MathJax.Hub.Config({tex2jax: {inlineMath: [["$", "$"], '
            '["\\\\(", "\\\\)"]], processEscapes: true}, messageStyle: "none"});</script>\n'
            f'<script src="{html.escape(mathjax_url)}"></script>'
        )
    style = (
        "body{font-family:sans-serif;margin:24px auto;max-width:980px;padding:0 16px;line-height:1.5}"
        " table{border-collapse:collapse;margin-bottom:16px} td,th{border:1px solid #ccc;padding:4px 8px;"
        "font-size:13px;vertical-align:top} th{background:#f3f3f3} pre{background:#f6f8fa;padding:8px;overflow:auto}"
        " code{background:#f6f8fa} .anchor-link{visibility:hidden;margin-left:4px;text-decoration:none}"
        " h1:hover .anchor-link,h2:hover .anchor-link,h3:hover .anchor-link{visibility:visible}"
        " img{max-width:100%} .repo-file,.instructor-only{border-bottom:1px dotted #888}"
    )
    style += " " + HtmlFormatter().get_style_defs(".highlight")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(guide.title)} (stsnb book)</title>
<style>{style}</style>
{math}</head>
<body>
<nav class="stsnb-book-nav"><a href="index.html">&larr; stsnb book: all notebooks</a></nav>
<main>
{body}
</main>
</body></html>
"""


def _guides_section(found: list[Guide]) -> str:
    """The index's list of guides (nothing without them)."""
    if not found:
        return ""
    items = "\n".join(
        f'<li><a href="{html.escape(g.page)}">{html.escape(g.title)}</a>'
        + (" (instructor's edition only)" if g.instructor_only else "")
        + "</li>"
        for g in found
    )
    worksheets = (
        '<p>For a lab: <a href="lab_plan.html#worksheets">a worksheet per training notebook</a>, for the minutes its'
        " long cells run: what to read meanwhile, three numbers to record, a question on a figure, and how to compare"
        " with the committed class and cpu runs.</p>"
        if any(g.page == "lab_plan.html" for g in found)
        else ""
    )
    return f"""<h2 id="guides">Guides</h2>
<p>How to install, read, teach with and run these notebooks, and how their verdicts are reached.</p>
<ul>
{items}
</ul>
{worksheets}"""


def _cell(value: object, css: str = "") -> str:
    attribute = f' class="{css}"' if css else ""
    return f"<td{attribute}>{html.escape(str(value))}</td>"


def _number(value: str | None) -> str:
    try:
        return f'<td class="num">{float(value):.2f}</td>'  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return _cell(value or "")


def _head(columns) -> str:
    return "<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in columns) + "</tr>"


def overview_html(rows: list[summary.OverviewRow], pages: set[str]) -> str:
    """The overview table (``summary.overview_rows``, the same rows as summary.md's first table): one row per
    notebook, linked to its page where it has one."""
    right = {"runtime (s)", *verdict_rules.VERDICTS}
    lines = [_head(summary.OVERVIEW_COLUMNS)]
    for row in rows:
        name = html.escape(row.notebook)
        link = f'<a href="{name}.html">{name}</a>' if row.notebook in pages else name
        cells = "".join(
            _cell(text, "num" if column in right else "")
            for column, text in zip(summary.OVERVIEW_COLUMNS[1:], row.cells(), strict=True)
        )
        lines.append(f'<tr id="nb-{name}"><td>{link}</td>{cells}</tr>')
    return "<table>" + "\n".join(lines) + "</table>"


def _notebook_cell(name: str) -> str:
    return f'<td><a href="#nb-{html.escape(name)}">{html.escape(name)}</a></td>'


def claims_html(rows: list[summary.OverviewRow]) -> str:
    """Every claim of the notebooks shown: difference [interval], seeds, the paper's difference, verdict and
    precondition (``summary.claim_cells``, as in summary.md)."""
    lines = [_head(summary.CLAIM_COLUMNS)]
    for row in rows:
        for claim in summary.claim_rows(row.folder) if row.folder else []:
            lines.append(f"<tr>{_notebook_cell(row.notebook)}{''.join(map(_cell, summary.claim_cells(claim)))}</tr>")
    if len(lines) == 1:
        lines.append(f'<tr><td colspan="{len(summary.CLAIM_COLUMNS)}">no notebook recorded claims</td></tr>')
    return "<table>" + "\n".join(lines) + "</table>"


def results_html(rows: list[summary.OverviewRow]) -> str:
    """Every results.csv row (per task and averages) beside the paper's number, with the notebook's comparability."""
    columns = ("notebook", "paper", "table", "setting", "task", "ours", "paper", "delta", "comparable", "note")
    lines = [_head(columns)]
    for row in rows:
        for r in summary.comparison_rows(row.folder) if row.folder else []:
            lines.append(
                f"<tr>{_notebook_cell(row.notebook)}{_cell(r.get('paper', ''))}{_cell(r.get('table', ''))}"
                f"{_cell(r.get('setting', ''))}{_cell(r.get('task', ''))}{_number(r.get('ours'))}"
                f"{_number(r.get('paper_value'))}{_number(r.get('delta'))}{_cell(row.comparable or summary.MISSING)}"
                f"{_cell(r.get('note', ''))}</tr>"
            )
    return "<table>" + "\n".join(lines) + "</table>"


def index_html(
    profile: str,
    plan_description: str,
    rows: list[summary.OverviewRow],
    pages: set[str],
    guide_pages: list[Guide] | None = None,
    instructor: bool = False,
) -> str:
    """The index page: the overview first (as in summary.md), then the claims, then every result row; the guides
    (README and docs/) are listed under the plan's description. ``instructor``: the instructor's edition (its title
    says so; the answer sheets are among its guides)."""
    total, counted = summary.total_seconds(rows)
    edition = (
        "<p><strong>The instructor's edition</strong>: it holds the answer sheet; give the students the book "
        "<code>stsnb book</code> builds without <code>--instructor</code>.</p>"
        if instructor
        else ""
    )
    suffix = " (instructor's edition)" if instructor else ""
    style = (
        "body{font-family:sans-serif;margin:24px;max-width:1400px} table{border-collapse:collapse;margin-bottom:24px}"
        " td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px;vertical-align:top} td.num{text-align:right}"
        " th{background:#f3f3f3}"
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>stsnb book: {html.escape(profile)} profile{suffix}</title>
<style>{style}</style></head>
<body>
<h1>stsnb book: the <code>{html.escape(profile)}</code> runs{suffix}</h1>
{edition}
<p>{html.escape(plan_description)}</p>
{_guides_section(guide_pages or [])}
<h2 id="overview">Overview</h2>
<p>One row per notebook, every value from its run: the commit it ran at, its runtime (together {total:.0f} s over
{counted} of {len(rows)} notebooks), its claims by verdict, its own one-line takeaway and whether our levels are
comparable with the paper's (yes / direction only / no).</p>
{overview_html(rows, pages)}
<h2 id="claims">Claims and verdicts</h2>
<p>Each claim as a paired difference on the same test pairs (95% bootstrap interval, the envelope over training
seeds), the paper's difference, the verdict and what it needed: a claim whose precondition does not hold is not
tested.</p>
{claims_html(rows)}
<h2 id="results">Ours beside the papers</h2>
<p>Scores are Spearman x100 unless a row says otherwise; delta = ours - paper. Paper numbers are the papers' own,
as reported; ours come from the executed notebooks linked above.</p>
{results_html(rows)}
</body></html>
"""


def build(
    profile: str = "cpu",
    out: Path | None = None,
    runs_root: Path = plans.DEFAULT_OUT,
    repository: Path = REPOSITORY,
    instructor: bool = False,
) -> Path:
    """Write the site for ``profile`` into ``out`` (default ``<runs_root>/<profile>/book``, or ``.../book-instructor``
    for the instructor's edition); return index.html. ``repository``: the checkout whose README.md and docs/*.md
    become the book's guides. Without ``instructor`` the answer sheets are left out (no page, no link; a page of them
    an earlier instructor's build left in ``out`` is removed)."""
    profile_dir = Path(runs_root) / profile
    if not profile_dir.is_dir():
        raise BookError(f"no executed runs at {profile_dir}: run `stsnb run --profile {profile}` first")
    notebooks = executed_notebooks(profile_dir)
    if not notebooks:
        raise BookError(f"{profile_dir} holds no executed notebook (<name>/<name>.ipynb)")
    out = Path(out) if out is not None else profile_dir / (INSTRUCTOR_OUT if instructor else "book")
    out.mkdir(parents=True, exist_ok=True)
    mathjax = mathjax_folder()
    if mathjax is not None:
        target = out / "_static" / "mathjax"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(mathjax, target, ignore=shutil.ignore_patterns("localization"))
        mathjax_url = f"_static/mathjax/MathJax.js?config={MATHJAX_CONFIG}"
    else:  # without the lab extra math shows as TeX source; nothing is fetched from the network either way
        mathjax_url = ""
    pages = set()
    for notebook in notebooks:
        (out / f"{notebook.stem}.html").write_text(notebook_html(notebook, mathjax_url), encoding="utf-8")
        pages.add(notebook.stem)
    try:
        plan = plans.load_plan(plans.plan_path(profile))
        names, description = list(plan.notebooks), plan.description
    except (plans.PlanError, OSError):
        names, description = [], ""
    names += sorted(pages - set(names))  # executed notebooks the plan no longer lists
    rows = summary.overview_rows([summary.recorded_outcome(name, profile_dir) for name in names], profile_dir)
    found = guides(repository, instructor)
    withheld = [g for g in all_guides(repository) if g not in found]
    if instructor:
        found.append(answer_sheet(repository, runs_root))
    else:
        withheld.append(answer_sheet(repository, runs_root, written=False))
    links = GuideLinks(out, repository, profile, pages, found, withheld)
    for guide in withheld:
        (out / guide.page).unlink(missing_ok=True)
    for guide in found:
        (out / guide.page).write_text(guide_html(guide, links, mathjax_url), encoding="utf-8")
    index = out / "index.html"
    index.write_text(index_html(profile, description, rows, pages, found, instructor), encoding="utf-8")
    return index
