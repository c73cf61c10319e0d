"""``profile = "class"`` in a parameters cell applies the class plan's values (stsnb.runs.profiles)."""

from __future__ import annotations

import pytest

from stsnb.runs import profiles
from stsnb.runs.plans import NOTEBOOKS_DIR, PlanError, load_plan, plan_path


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
    from stsnb.runs import context as runs

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


NOTEBOOKS_WITH_PROFILE = [
    name for name in sorted(CLASS_PLAN.notebooks) if "profile" in _parameters_cell(name)
]  # 10, 20, 30 and 40; 00 and 01 have nothing to cut, so no profile parameter


def test_the_training_notebooks_declare_their_profile():
    assert NOTEBOOKS_WITH_PROFILE == ["10_pcc_tuning", "20_sts_regression", "30_hicl", "40_ccl_csts"]


@pytest.mark.parametrize("notebook", NOTEBOOKS_WITH_PROFILE)
def test_a_notebook_opened_as_it_is_runs_the_class_profile_and_the_cpu_plan_runs_the_cell(notebook):
    """JupyterLab's Run All: the cell's default ``profile = "class"`` applies the class plan; ``stsnb run --profile
    cpu`` injects ``profile: cpu``, which keeps the cell's values (and ``profile = "cpu"`` typed in does the same)."""
    cell = _parameters_cell(notebook)
    assert cell["profile"] == profiles.NOTEBOOK_DEFAULT == "class"
    opened = dict(cell)
    changed = profiles.apply(opened, notebook)
    assert changed and all(opened[key] == value for key, value in CLASS_PLAN.notebooks[notebook].items())
    cpu_values = load_plan(plan_path("cpu")).notebooks[notebook]
    assert cpu_values == {"profile": profiles.CELL_PROFILE}, "the cpu plan names only the profile"
    batch = {**cell, **cpu_values}
    assert profiles.apply(batch, notebook) == {} and batch == {**cell, "profile": "cpu"}
    assert profiles.describe("cpu", {}) == "profile 'cpu': the parameters cell's values"


def test_a_plan_that_sets_no_profile_for_a_notebook_declaring_one_is_refused(tmp_path):
    from stsnb.runs.plans import check_plan

    path = tmp_path / "mine.yaml"
    path.write_text("description: d\nnotebooks: {30_hicl: {seeds: [0]}, 01_loss_functions: {}}\n")
    with pytest.raises(PlanError, match="notebook 30_hicl: sets no 'profile'.*add profile: mine") as refused:
        check_plan(load_plan(path), NOTEBOOKS_DIR)
    assert "01_loss_functions" not in str(refused.value)  # no profile parameter: nothing to set
    path.write_text("description: d\nnotebooks: {30_hicl: {profile: cpu, seeds: [0]}}\n")
    assert check_plan(load_plan(path), NOTEBOOKS_DIR) == ["30_hicl"]
