"""The package layout: generic layers import nothing from ``stsnb.papers``, and no paper imports another paper."""

from __future__ import annotations

import ast
from pathlib import Path

import stsnb

PACKAGE = Path(stsnb.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    """Absolute names of the stsnb modules a file imports (relative imports resolved)."""
    package_parts = ["stsnb", *path.relative_to(PACKAGE).with_suffix("").parts][:-1]  # the file's package
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return {n for n in names if n == "stsnb" or n.startswith("stsnb.")}


def test_generic_modules_import_no_paper():
    generic = [p for p in PACKAGE.glob("*.py")]
    offenders = {p.name: sorted(m for m in _imported_modules(p) if m.startswith("stsnb.papers")) for p in generic}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_no_paper_imports_another_paper():
    papers = [p for p in (PACKAGE / "papers").iterdir() if p.is_dir() and (p / "__init__.py").is_file()]
    assert {p.name for p in papers} >= {"pcc_tuning", "sts_regression", "hicl", "ccl"}
    crossings = {}
    for paper in papers:
        for path in paper.rglob("*.py"):
            others = {
                m.split(".")[2]
                for m in _imported_modules(path)
                if m.startswith("stsnb.papers.") and m.split(".")[2] != paper.name
            }
            if others:
                crossings[str(path.relative_to(PACKAGE))] = sorted(others)
    assert crossings == {}


def test_the_layout_check_sees_a_crossing(tmp_path):
    """The checker itself: a relative import from one paper into another is found."""
    fake = PACKAGE / "papers" / "hicl" / "_layout_probe.py"
    fake.write_text("from ..ccl import something\n")
    try:
        assert "stsnb.papers.ccl.something" in _imported_modules(fake)
    finally:
        fake.unlink()
