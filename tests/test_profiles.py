"""``profile = "class"`` in a parameters cell applies the class plan's values (stsnb.profiles)."""

from __future__ import annotations

import pytest

from stsnb import profiles
from stsnb.plans import NOTEBOOKS_DIR, PlanError, load_plan, plan_path


@pytest.fixture
def plans(tmp_path):
    (tmp_path / "class.yaml").write_text("description: d\nnotebooks: {nb: {train_pairs: 40, seeds: [0]}}\n")
    (tmp_path / "typo.yaml").write_text("description: d\nnotebooks: {nb: {trian_pairs: 40}}\n")
    return tmp_path


def test_the_plan_values_replace_the_cells_and_applying_twice_changes_nothing(plans):
    namespace = {"profile": "class", "train_pairs": 560, "seeds": [0, 1, 2], "lr": 1e-4}
    changed = profiles.apply(namespace, "nb", plans)
    assert changed == {"train_pairs": 40, "seeds": [0]}
    assert namespace == {"profile": "class", "train_pairs": 40, "seeds": [0], "lr": 1e-4}
    assert profiles.apply(namespace, "nb", plans) == {}
    assert "2 values from its plan: train_pairs=40, seeds=[0]" in profiles.describe("class", changed)


def test_cpu_is_the_cell_itself_and_bad_profiles_are_refused_by_name(plans):
    namespace = {"profile": "cpu", "train_pairs": 560}
    assert profiles.apply(namespace, "nb", plans) == {} and namespace["train_pairs"] == 560
    with pytest.raises(PlanError, match="no plan for profile 'clas'.*profiles: class, typo"):
        profiles.apply({"profile": "clas"}, "nb", plans)
    with pytest.raises(PlanError, match=r"sets \['trian_pairs'\], not parameters of nb"):
        profiles.apply({"profile": "typo", "train_pairs": 1}, "nb", plans)
    with pytest.raises(PlanError, match="has no entry for other"):
        profiles.apply({"profile": "class"}, "other", plans)


def test_use_applies_prints_one_line_and_leaves_no_variable(plans, capsys):
    from stsnb import runs

    namespace = {"profile": "class", "train_pairs": 560, "seeds": [0, 1, 2]}
    profiles.use(namespace, "nb", plans)
    assert capsys.readouterr().out.strip() == "profile 'class': 2 values from its plan: train_pairs=40, seeds=[0]"
    assert runs.collect_params(namespace) == {"profile": "class", "train_pairs": 40, "seeds": [0]}


def _parameters_cell(notebook: str) -> dict:
    """The values of a notebook's parameters cell (plain literals), as a kernel would hold them."""
    import nbformat

    cells = nbformat.read(NOTEBOOKS_DIR / f"{notebook}.ipynb", as_version=4).cells
    source = next(c.source for c in cells if "parameters" in c.metadata.get("tags", []))
    namespace: dict = {}
    exec(source, {}, namespace)  # noqa: S102 - the committed parameters cell: literal assignments only
    return namespace


CLASS_PLAN = load_plan(plan_path("class"))


@pytest.mark.parametrize("notebook", sorted(CLASS_PLAN.notebooks))
def test_the_committed_class_plan_applies_to_every_notebook_as_in_jupyterlab(notebook):
    """``profile = "class"`` in the parameters cell gives the class plan's values, with their types; a notebook
    with a ``profile`` parameter is cut (its plan entry changes more than the label)."""
    cell = _parameters_cell(notebook)
    values = CLASS_PLAN.notebooks[notebook]
    if "profile" not in cell:
        assert "profile" not in values  # 00 and 01: nothing to select in the notebook
        return
    assert values.get("profile") == "class", "each class entry sets profile: class (the label its results carry)"
    namespace = {**cell, "profile": "class"}
    changed = profiles.apply(namespace, notebook)
    assert set(changed) - {"profile"}, f"the class plan cuts nothing in {notebook}"
    for name, value in values.items():
        default = cell[name]
        assert namespace[name] == value
        if default is not None and value is not None:
            assert isinstance(value, type(default)) or (isinstance(default, float) and isinstance(value, int)), name
