"""The package layout: the layer folders and their order, no import that goes up or sideways across it, no paper
importing another, no import circle, no module over 600 lines, and a top level that holds only the command line and
the package face."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import stsnb

PACKAGE = Path(stsnb.__file__).parent

# The layers, lowest first; the layers of one rank stand side by side and import nothing of each other. A module may
# import its own layer and any layer of a lower rank; ``cli`` (the command line) sits on top of everything, and the
# root ``stsnb/__init__.py`` (the version and one logger setting, importing nothing of stsnb) may be read by all.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("data", "models"),
    ("training", "evaluation"),
    ("runs",),
    ("gpu", "teaching"),
    ("papers",),
    ("cli",),
)
RANK = {layer: rank for rank, layers in enumerate(LAYERS) for layer in layers}
MAX_LINES = 600
MAX_TOP_LEVEL_MODULES = 8


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


def layer_of(module: str) -> str | None:
    """``stsnb.gpu.plan_check`` -> ``gpu``, ``stsnb.papers.ccl.claims`` -> ``papers``, ``stsnb.cli`` -> ``cli``; the
    root package -> None (readable by every layer)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that goes up (to a higher rank) or sideways (to another layer of the same rank), or that starts in
    or reaches a module outside the declared layers."""
    found = []
    for module, targets in sorted(graph.items()):
        source = layer_of(module)
        for target in sorted(targets):
            goal = layer_of(target)
            if source is None and goal is not None:
                found.append(f"{module} -> {target}: the root package imports nothing of stsnb")
            elif goal is None or goal == source:
                continue
            elif source not in RANK or goal not in RANK:
                found.append(f"{module} -> {target}: {source if source not in RANK else goal!r} is no declared layer")
            elif RANK[goal] >= RANK[source]:
                how = "sideways" if RANK[goal] == RANK[source] else "up"
                found.append(f"{module} -> {target}: {how} from {source} to {goal}")
    return found


def test_every_import_goes_down_the_layers():
    assert layer_violations(import_graph()) == []


def test_the_layer_check_sees_a_planted_upward_import():
    """The checker itself, on the real package: a data module importing the runner is found, as is a sideways import
    between the two layers of the bottom rank."""
    probe = PACKAGE / "data" / "_layout_probe.py"
    probe.write_text("from ..runs import context\nfrom ..models import folders\n")
    try:
        found = layer_violations(import_graph())
    finally:
        probe.unlink()
    assert found == [
        "stsnb.data._layout_probe -> stsnb.models.folders: sideways from data to models",
        "stsnb.data._layout_probe -> stsnb.runs.context: up from data to runs",
    ]


def test_the_layers_are_the_folders_and_each_says_what_it_may_import():
    """Each layer folder is a subpackage whose ``__init__`` docstring says what it holds and, on a line of its own,
    ``May import: ...`` naming exactly the layers below it (``no other layer.`` at the bottom)."""
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    declared = {layer for layer in RANK if layer != "cli"}
    assert folders == declared
    for layer in sorted(declared):
        doc = ast.get_docstring(ast.parse((PACKAGE / layer / "__init__.py").read_text())) or ""
        line = re.search(r"^May import: (.*)$", doc, re.M)
        assert line, f"stsnb/{layer}/__init__.py: no 'May import:' line in its docstring"
        said = (
            set()
            if line.group(1).startswith("no other layer")
            else set(re.findall(r"[a-z]+", line.group(1).split(";")[0]))
        )
        below = {other for other in declared if RANK[other] < RANK[layer]}
        assert said == below, f"stsnb/{layer}/__init__.py says it may import {sorted(said)}; the order: {sorted(below)}"


def test_the_top_level_holds_the_command_line_and_the_face():
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, modules
    assert set(modules) <= {"__init__.py", "cli.py"}, "a generic module belongs in its layer's folder"
    generic = [layer for layer in RANK if layer not in ("papers", "cli")]
    assert len(generic) >= 5


def test_no_module_is_over_600_lines():
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


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
