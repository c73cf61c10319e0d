"""Every committed notebook is clean (no outputs, one parameters cell, kernel python3) and every plan matches them."""

from __future__ import annotations

import re

import nbformat
import papermill
import pytest

from stsnb.runs import plans
from stsnb.teaching.answers import exercises

NOTEBOOKS = sorted(plans.NOTEBOOKS_DIR.glob("*.ipynb"))
PROFILES = ("smoke", "class", "cpu", "paper", "rehearsal")


def test_there_are_notebooks_and_plans():
    assert NOTEBOOKS, f"no notebooks in {plans.NOTEBOOKS_DIR}"
    for profile in PROFILES:
        assert plans.plan_path(profile).is_file()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_is_committed_clean(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(not cell.outputs and cell.execution_count is None for cell in code), "commit without outputs"
    tags = [cell.metadata.get("tags", []) for cell in notebook.cells]
    assert sum("parameters" in t for t in tags) == 1, "exactly one cell tagged 'parameters'"
    assert not any("injected-parameters" in t for t in tags), "an executed copy (papermill injected parameters)"
    assert notebook.metadata.get("kernelspec", {}).get("name") == "python3"
    assert "papermill" not in notebook.metadata, "an executed copy (papermill metadata)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_papermill_sees_every_parameter(path):
    """A parameter papermill cannot parse (a second '=' on its line) could never be set by a plan."""
    assigned = plans.assigned_parameters(path)
    assert "seed" in assigned
    missed = sorted(set(assigned) - set(papermill.inspect_notebook(str(path))))
    assert not missed, f"papermill cannot parse {missed}: drop the second '=' from their lines (e.g. the comment)"


@pytest.mark.parametrize("profile", PROFILES)
def test_plan_lists_every_notebook_and_only_declared_parameters(profile):
    plan = plans.load_plan(plans.plan_path(profile))
    assert sorted(plan.notebooks) == sorted(path.stem for path in NOTEBOOKS)
    assert plan.description
    plans.check_plan(plan)  # raises PlanError on an undeclared parameter


def _public_names_assigned(source: str) -> set[str]:
    import ast

    names = set()
    for node in ast.parse(source).body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For):
            targets = [node.target]
        for target in targets:
            names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name) and not n.id.startswith("_")}
    return names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_only_the_parameters_cell_defines_values_before_the_run_starts(path):
    """``runs.collect_params(globals())`` right after the parameters cell must see the parameters only, so the
    cells before it leave no public plain values (params.yaml records the parameters cell, nothing else)."""
    cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    index = next(i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    leaked = set().union(*(_public_names_assigned(c.source) for c in cells[:index]))
    assert not leaked, f"cells before the parameters cell assign {sorted(leaked)}: they would be saved as parameters"


MAX_CELL_LINES = 40


def test_code_cells_stay_short_outside_the_parameters_cell():
    """Narrative, equations, plots and short calls in the notebook; logic in stsnb: no code cell over 40 lines."""
    long_cells = {}
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code" or "parameters" in cell.metadata.get("tags", []):
                continue
            if len(cell.source.splitlines()) > MAX_CELL_LINES:
                long_cells[(path.stem, cell.id)] = len(cell.source.splitlines())
    assert not long_cells, f"code cells over {MAX_CELL_LINES} lines (move the logic into stsnb or split): {long_cells}"


PAPER_LINK = re.compile(r"https://(arxiv\.org/abs/\d{4}\.\d{4,5}|aclanthology\.org/[\w.-]+/?)")
NOT_FOR_A_STUDENT = re.compile(r"shared/|REFERENCE_NOTES|\bissues? #?\d+\b")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_stands_alone_and_links_its_paper(path):
    """A student has the notebook and the papers, not our workplace: no shared/ paths, internal notes or issue
    numbers; the opening cell links each paper it follows (arXiv or the ACL Anthology)."""
    cells = nbformat.read(path, as_version=4).cells
    internal = [cell.id for cell in cells if NOT_FOR_A_STUDENT.search(cell.source)]
    assert not internal, f"cells pointing at our workplace: {internal}"
    assert PAPER_LINK.search(cells[0].source), "the opening cell links no paper"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_profile_parameter_is_applied_before_the_run_starts(path):
    """``profile = "class"`` in the parameters cell does something only through ``profiles.use``: a notebook that
    declares ``profile`` calls it (with its own name) in the cell that starts the run, just before ``runs.start``,
    and its comment lists the profiles a reader can pick."""
    if "profile" not in plans.assigned_parameters(path):
        return
    cells = nbformat.read(path, as_version=4).cells
    parameters = next(c.source for c in cells if "parameters" in c.metadata.get("tags", []))
    line = next(x for x in parameters.splitlines() if x.startswith("profile = "))
    assert "smoke | class | cpu | paper" in line
    setup = next(c.source for c in cells if c.cell_type == "code" and "runs.start(" in c.source)
    statements = [x for x in setup.splitlines() if x and not x.startswith((" ", "#", "import ", "from ", ")"))]
    use = f'profiles.use(globals(), "{path.stem}")'
    assert statements[0].startswith(use), f"the setup's first statement is {statements[0]!r}, not {use}"
    assert statements[1].startswith(f'run = runs.start("{path.stem}"')


RUNTIME = re.compile(r"\*Runtime:\* (printed under this list|no run)")  # measured: the cell under it prints it


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_exercise_has_a_runtime_and_a_hint(path):
    """A student picks exercises by time: each points to its measured runtime, which the cell under the list prints
    (``answers.runtimes_text``: typed into markdown it would go stale), or says it needs no run; and each has a hint."""
    items = exercises(path)
    assert len(items) >= 3, f"found {len(items)} exercises"
    assert [int(item.split(".")[0]) for item in items] == list(range(1, len(items) + 1)), "numbered 1, 2, 3, ..."
    missing = {
        item[:60]: [k for k in ("runtime", "hint") if not (RUNTIME if k == "runtime" else HINT).search(item)]
        for item in items
    }
    assert not {k: v for k, v in missing.items() if v}, missing


HINT = re.compile(r"\*Hint:\* \S")


def test_the_exercise_check_fails_on_an_exercise_without_runtime_or_hint(tmp_path):
    cell = nbformat.v4.new_markdown_cell(
        "Exercises:\n1. Do a thing. *Runtime:* printed under this list. *Hint:* look.\n2. Do another.\n   Still it."
    )
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    first, second = exercises(path)
    assert RUNTIME.search(first) and HINT.search(first)
    assert second == "2. Do another. Still it." and not RUNTIME.search(second) and not HINT.search(second)


TRAINING = [p for p in NOTEBOOKS if p.stem[:2] in {"10", "20", "30", "40"}]


@pytest.mark.parametrize("path", TRAINING, ids=lambda path: path.stem)
def test_a_training_notebook_opens_short_with_its_pipeline_figure_then_states_its_main_claim(path):
    """At most 150 words of markdown before the parameters cell, the opening one showing the pipeline figure (its
    attachment, so a notebook that has not run shows it, and so does every copy: ``stsnb.teaching.pipeline``); the
    first code cell after the setup (``runs.start``) prints the paper's main claim (``main_claim_intro``) and draws
    nothing."""
    from stsnb.teaching import pipeline

    cells = nbformat.read(path, as_version=4).cells
    parameters = next(i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    assert sum(len(c.source.split()) for c in cells[:parameters] if c.cell_type == "markdown") <= 150
    assert pipeline.IMAGE in cells[0].source and pipeline.attachment(path) is not None
    code = [c.source for c in cells if c.cell_type == "code"]
    setup = next(i for i, source in enumerate(code) if "runs.start(" in source)
    assert f'main_claim_intro("{path.stem}")' in code[setup + 1]
    assert not any("pipeline_figure(" in source for source in code), "the figure is drawn by `stsnb figures`"
