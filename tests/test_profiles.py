"""A parameters cell holds the class profile's values; ``profile = "cpu"`` (or any other) applies that plan's
values (stsnb.runs.profiles)."""

from __future__ import annotations

import pytest

from stsnb.runs import profiles
from stsnb.runs.plans import NOTEBOOKS_DIR, PlanError, load_plan, plan_path


@pytest.fixture
def plans(tmp_path):
    (tmp_path / "cpu.yaml").write_text("description: d\nnotebooks: {nb: {train_pairs: 40, seeds: [0]}}\n")
    (tmp_path / "class.yaml").write_text("description: d\nnotebooks: {nb: {profile: class}}\n")
    (tmp_path / "typo.yaml").write_text("description: d\nnotebooks: {nb: {trian_pairs: 40}}\n")
    return tmp_path


def test_the_plan_values_replace_the_cells_and_applying_twice_changes_nothing(plans):
    namespace = {"profile": "cpu", "train_pairs": 560, "seeds": [0, 1, 2], "lr": 1e-4}
    changed = profiles.apply(namespace, "nb", plans)
    assert changed == {"train_pairs": 40, "seeds": [0]}
    assert namespace == {"profile": "cpu", "train_pairs": 40, "seeds": [0], "lr": 1e-4}
    assert profiles.apply(namespace, "nb", plans) == {}
    assert "2 values from its plan: train_pairs=40, seeds=[0]" in profiles.describe("cpu", changed)


def test_class_is_the_cell_itself_and_bad_profiles_are_refused_by_name(plans):
    namespace = {"profile": "class", "train_pairs": 560}
    assert profiles.apply(namespace, "nb", plans) == {} and namespace["train_pairs"] == 560
    assert profiles.describe("class", {}) == "profile 'class': the parameters cell's values"
    with pytest.raises(PlanError, match="no plan for profile 'clas'.*profiles: class, cpu, typo"):
        profiles.apply({"profile": "clas"}, "nb", plans)
    with pytest.raises(PlanError, match=r"sets \['trian_pairs'\], not parameters of nb"):
        profiles.apply({"profile": "typo", "train_pairs": 1}, "nb", plans)
    with pytest.raises(PlanError, match="has no entry for other"):
        profiles.apply({"profile": "class"}, "other", plans)


def test_use_applies_prints_one_line_and_leaves_no_variable(plans, capsys):
    from stsnb.runs import context as runs

    namespace = {"profile": "cpu", "train_pairs": 560, "seeds": [0, 1, 2]}
    profiles.use(namespace, "nb", plans)
    assert capsys.readouterr().out.strip() == "profile 'cpu': 2 values from its plan: train_pairs=40, seeds=[0]"
    assert runs.collect_params(namespace) == {"profile": "cpu", "train_pairs": 40, "seeds": [0]}


def _parameters_cell(notebook: str) -> dict:
    """The values of a notebook's parameters cell (plain literals), as a kernel would hold them."""
    import nbformat

    cells = nbformat.read(NOTEBOOKS_DIR / f"{notebook}.ipynb", as_version=4).cells
    source = next(c.source for c in cells if "parameters" in c.metadata.get("tags", []))
    namespace: dict = {}
    exec(source, {}, namespace)  # noqa: S102 - the committed parameters cell: literal assignments only
    return namespace


CLASS_PLAN = load_plan(plan_path("class"))
CPU_PLAN = load_plan(plan_path("cpu"))


@pytest.mark.parametrize("notebook", sorted(CLASS_PLAN.notebooks))
def test_the_parameters_cell_holds_the_class_values_and_the_cpu_plan_names_what_differs(notebook):
    """What a reader sees in the parameters cell is what the default profile runs: the class plan names no value but
    the profile; ``profile = "cpu"`` changes the values the cpu plan names, with their types."""
    cell = _parameters_cell(notebook)
    values = CLASS_PLAN.notebooks[notebook]
    if "profile" not in cell:
        assert "profile" not in values  # 00 and 01: nothing to select in the notebook
        return
    assert cell["profile"] == "class" and values == {"profile": "class"}, f"class.yaml names values for {notebook}"
    namespace = {**cell, "profile": "cpu"}
    changed = profiles.apply(namespace, notebook)
    assert set(changed) - {"profile"}, f"the cpu plan changes nothing in {notebook}"
    for name, value in CPU_PLAN.notebooks[notebook].items():
        default = cell[name]
        assert namespace[name] == value
        if default is not None and value is not None:
            assert isinstance(value, type(default)) or (isinstance(default, float) and isinstance(value, int)), name
