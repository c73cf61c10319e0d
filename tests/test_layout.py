"""The package layout: generic layers import nothing from ``stsnb.papers``, no paper imports another paper, no two
modules import each other (directly or round a longer circle), and every module under ``papers/`` lives in a paper's
own subpackage."""

from __future__ import annotations

import ast
from pathlib import Path

import stsnb

PACKAGE = Path(stsnb.__file__).parent


def _imports(path: Path, package: Path = PACKAGE) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every import statement in a file, at any depth (inside functions too): ``import a.b``
    gives ``("a.b", [])``, ``from x import a, b`` gives ``(x, ["a", "b"])`` with a relative ``x`` made absolute."""
    here = [package.name, *path.relative_to(package).with_suffix("").parts][:-1]  # the file's package
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            found.append((".".join(base + ([node.module] if node.module else [])), [a.name for a in node.names]))
    return found


def _imported_modules(path: Path) -> set[str]:
    """Absolute names of the stsnb modules a file imports (relative imports resolved)."""
    names = set()
    for module, imported in _imports(path):
        names.add(module)
        names.update(f"{module}.{name}" for name in imported)
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


def _module_name(path: Path, package: Path) -> str:
    """``stsnb/papers/hicl/results.py`` -> ``stsnb.papers.hicl.results``; a package's ``__init__.py`` is the package."""
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports, from the AST of every ``.py`` file under it.

    Every import counts, wherever it stands (inside a function or under ``TYPE_CHECKING`` too): ``import a.b``,
    ``from a import b`` and relative imports. ``from x import name`` is an edge to ``x.name`` when that is a module
    (``from . import models``), else to ``x`` (``from .models import resolve``)."""
    files = {_module_name(path, package): path for path in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        targets = set()
        for module, imported in _imports(path, package):
            if not imported:  # import a.b
                targets.add(module)
            for n in imported:  # from module import n: the submodule module.n if there is one, else module itself
                targets.add(f"{module}.{n}" if f"{module}.{n}" in files else module)
        graph[name] = {t for t in targets if t in files and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as ``[a, b, ..., a]`` (depth-first search), or None when the graph has none."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(module: str) -> list[str] | None:
        path.append(module)
        on_path.add(module)
        for target in sorted(graph.get(module, ())):
            if target in on_path:
                return path[path.index(target) :] + [target]
            if target not in done and (cycle := visit(target)):
                return cycle
        on_path.discard(path.pop())
        done.add(module)
        return None

    for module in sorted(graph):
        if module not in done and (cycle := visit(module)):
            return cycle
    return None


def test_no_import_circles():
    """The import graph of stsnb runs one way: a lower module never imports one that imports it, however far round."""
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_circle_check_sees_a_circle_inside_a_function(tmp_path):
    """The checker itself, on a package of its own: a function-level and a relative import close a circle, and a
    ``from . import name`` of a submodule is an edge to that submodule, not to the package."""
    package = tmp_path / "stsnb"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from . import low\n")
    (package / "sub" / "low.py").write_text("def late():\n    from ..high import thing\n")
    (package / "high.py").write_text("from .sub import low\n")
    graph = import_graph(package)
    assert graph["stsnb.sub.low"] == {"stsnb.high"} and graph["stsnb.high"] == {"stsnb.sub.low"}
    assert find_cycle(graph) == ["stsnb.high", "stsnb.sub.low", "stsnb.high"]
    (package / "sub" / "low.py").write_text("def late():\n    return 1\n")
    assert find_cycle(import_graph(package)) is None


def test_every_module_under_papers_lives_in_a_paper():
    """``stsnb/papers/`` holds the papers' subpackages and its ``__init__.py``, no module of its own."""
    loose = sorted(p.name for p in (PACKAGE / "papers").glob("*.py") if p.name != "__init__.py")
    assert loose == []
