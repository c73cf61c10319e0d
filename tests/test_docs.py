"""README.md is a short front page that links the guides in docs/, and no link of README.md or docs/*.md is broken
(every relative link names a file of the repository, and a #fragment names a heading of the page it points at)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stsnb.teaching import book

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]
GUIDES = ("students", "gpu-server", "verdicts", "benchmarks", "data", "architecture")
MAX_LINES = 150
WIDTH = 120

_FENCE = re.compile(r"^```.*?^```", flags=re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose(text: str) -> str:
    """The text without code blocks and code spans (a ``[x](y)`` inside code is not a link)."""
    return _CODE.sub("", _FENCE.sub("", text))


def links(page: Path) -> list[str]:
    return _LINK.findall(prose(page.read_text(encoding="utf-8")))


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a Markdown page's headings (what ``page.md#anchor`` can name)."""
    headings = re.findall(r"^#{1,6} (.+)$", _FENCE.sub("", page.read_text(encoding="utf-8")), flags=re.M)
    return {book.github_slug(heading) for heading in headings}


def test_readme_is_a_short_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; the depth belongs in docs/"
    wide = [i + 1 for i, line in enumerate(lines) if len(line) > WIDTH and not line.startswith("|")]
    assert not wide, f"README.md lines over {WIDTH} columns (tables aside): {wide}"


def test_readme_links_every_guide():
    targets = {target.split("#")[0] for target in links(README)}
    missing = [name for name in GUIDES if f"docs/{name}.md" not in targets]
    assert not missing, f"README.md does not link docs/{missing}"


def test_readme_keeps_the_two_commands_and_says_nothing_ran_on_a_gpu():
    text = README.read_text(encoding="utf-8")
    second = "bash scripts/setup.sh && .venv/bin/python -m pytest"
    assert "bash scripts/setup.sh && .venv/bin/stsnb data fetch && .venv/bin/stsnb run --profile cpu" in text
    assert second in text
    assert second in (REPO / ".ci" / "run").read_text(), "CI runs README's second command verbatim"
    assert "Not yet verified on a real GPU: nothing in this project has run on one" in text


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(REPO).as_posix())
def test_every_relative_link_points_at_a_file_and_heading_that_exist(page):
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, flags=re.I):
            continue  # another site
        path, _, fragment = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists() or REPO not in resolved.parents:
            broken.append(f"{target}: no such file in the repository")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, broken


def test_every_docs_page_the_code_names_exists():
    """Error messages, docstrings and notebooks point readers at docs/<page>.md (and sometimes a section of it)."""
    sources = [*(REPO / "stsnb").rglob("*.py"), *(REPO / "notebooks").glob("*.ipynb"), *(REPO / "tests").glob("*.py")]
    missing = []
    for source in sources:
        text = source.read_text(encoding="utf-8")
        for name, section in re.findall(r"docs/([\w-]+\.md)(?:, section '([^']+)')?", text):
            page = REPO / "docs" / name
            if not page.is_file():
                missing.append(f"{source.relative_to(REPO)}: docs/{name}")
            elif section and book.github_slug(section) not in anchors(page):
                missing.append(f"{source.relative_to(REPO)}: docs/{name}, section '{section}'")
    assert not missing, missing
