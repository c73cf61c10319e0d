"""The instructor's answer sheet, written from the notebooks and the committed exercise runs into the instructor's
edition of the book (``stsnb book --instructor``, ``stsnb.teaching.book``); no copy of it is committed, so a
student's clone holds no page of answers (the prose templates and the exercise runs stay in the repository).

Three sources, none of them typed into the sheet:

- **the exercises**, as each notebook's last "Exercises" list numbers them (``exercises``), quoted in full;
- **the answers' prose**, ``stsnb/teaching/templates/answers/<notebook>.md``: the mechanism and the papers' numbers,
  written by hand (``AnswerSource``: an introduction, then ``## <n>`` per exercise, whose first line ``overrides:
  {...}`` names the parameters the exercise changes, or ``overrides: none`` for an exercise answered without a run; an
  exercise that asks for a second run to compare with names it on the next line, ``second run: {...}``). Every
  number from our runs is a Jinja expression over the committed runs (``RunView``): ``cls`` the class run
  (``papermill_runs/class/<notebook>/``), ``cpu`` the cpu run, ``run(profile, notebook)`` any other,
  ``main_claim()`` the paper's main claim(s) with the class run's verdict and the cpu run's beside it, and in an
  exercise's answer ``ex``, that exercise's own run, and ``ex_b``, its second run;
- **the exercises' runs**: the notebook in the class profile with the exercise's overrides
  (``papermill_runs/exercises/<notebook>/<n>/<notebook>/``, and ``<n>b/`` for a second run, made by
  ``run_exercise``: ``stsnb answers --run``). Its duration is the exercise's measured runtime, and ``ex`` reads its
  results.

A value no run recorded renders as "*not measured*" with what would measure it, never as a guess; ``missing``
lists them (``not_measured``, ``stsnb answers``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from ..evaluation.main_claims import MainClaim, main_claim_text, main_claims_of
from ..runs import committed, profiles, runtimes, summary
from ..runs.plans import DEFAULT_OUT, NOTEBOOKS_DIR, PLANS_DIR, PlanError, assigned_parameters, load_plan, plan_path
from ..runs.profiles import CELL_PROFILE

TEMPLATES = Path(__file__).resolve().parent / "templates" / "answers"
EXERCISES = "exercises"  # papermill_runs/exercises/<notebook>/<n>/: each exercise's run
BASE_PROFILE = "class"  # an exercise changes the class profile's values (its overrides may name another profile)
NOT_MEASURED = "*not measured*"
_EXERCISES_LINE = re.compile(r"^Exercises\b", re.M)
_ITEM = re.compile(r"^(\d+)\. ")
_ANSWER = re.compile(r"^## (\d+)\s*$", re.M)
_RUN = re.compile(r"^(\d+)(b?)$")  # an exercise's run ("2") or its second run ("2b")
SECOND = "second run:"  # the line under ``overrides:`` naming a second run's overrides
_ABSENT = object()  # what ``RunView._at`` returns for a path the run did not record
PREDATES = "no main-claim row in this run (run predates main claims)"  # a run whose rows carry no ``main_claim``


# ---- the exercises, as the notebooks print them ---------------------------------------------------------------


def exercises(notebook: Path) -> list[str]:
    """The numbered exercises of the notebook's last markdown cell with a line opening with "Exercises": each item
    with its continuation lines (indented) joined by spaces, from the first numbered line after it to the end of the
    list."""
    import nbformat

    cells = [c for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "markdown"]
    source = next((c.source for c in reversed(cells) if _EXERCISES_LINE.search(c.source)), "")
    if not source:
        return []
    lines = source[_EXERCISES_LINE.search(source).start() :].splitlines()[1:]
    items: list[str] = []
    for line in lines:
        if _ITEM.match(line):
            items.append(line)
        elif line.startswith("   ") and items:
            items[-1] += " " + line.strip()
        elif line.strip() and items:
            break  # the list ended (lines before its first item are the heading's)
    return items


def title(notebook: Path) -> str:
    """The notebook's first heading without its ``#`` ("10 · Pcc-tuning: ...")."""
    import nbformat

    first = nbformat.read(notebook, as_version=4).cells[0].source.splitlines()[0]
    return first.lstrip("#").strip()


# ---- the answers' prose ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """One exercise's answer: the parameters its run changes (None: answered without a run), its prose, and the
    parameters of the second run it asks to compare with, if any."""

    number: int
    overrides: dict[str, Any] | None
    text: str
    second: dict[str, Any] | None = None

    def run_overrides(self, second: bool = False) -> dict[str, Any] | None:
        """The overrides of the exercise's run, or of its second run."""
        return self.second if second else self.overrides


@dataclass(frozen=True)
class AnswerSource:
    """A notebook's answers file: the introduction and one ``Answer`` per exercise, by number."""

    intro: str
    answers: dict[int, Answer]


def _mapping(value: str, where: str) -> dict[str, Any]:
    overrides = yaml.safe_load(value)
    if not isinstance(overrides, dict) or not overrides:
        raise ValueError(f"{where}: expected a mapping of parameter -> value, got {value!r}")
    return overrides


def parse_source(text: str, where: str = "answers") -> AnswerSource:
    """Split an answers file at its ``## <n>`` lines; each answer's first line must be ``overrides: <YAML mapping>``
    or ``overrides: none``, optionally followed by ``second run: <YAML mapping>``."""
    parts = _ANSWER.split(text)
    intro, answers = parts[0].strip(), {}
    for number, body in zip(parts[1::2], parts[2::2], strict=True):
        first, _, rest = body.strip().partition("\n")
        if not first.startswith("overrides:"):
            raise ValueError(f"{where}, answer {number}: its first line must be 'overrides: {{...}}' or '... none'")
        value = first.removeprefix("overrides:").strip()
        overrides = None if value == "none" else _mapping(value, f"{where}, answer {number}, overrides")
        second = None
        if rest.startswith(SECOND):
            line, _, rest = rest.partition("\n")
            if overrides is None:
                raise ValueError(f"{where}, answer {number}: a second run needs a first ('overrides: none')")
            second = _mapping(line.removeprefix(SECOND).strip(), f"{where}, answer {number}, second run")
        if int(number) in answers:
            raise ValueError(f"{where}: answer {number} appears twice")
        answers[int(number)] = Answer(int(number), overrides, rest.strip(), second)
    return AnswerSource(intro, answers)


def load_source(notebook: str, templates: Path = TEMPLATES) -> AnswerSource:
    path = Path(templates) / f"{notebook}.md"
    return parse_source(path.read_text(), path.name)


# ---- the runs the prose reads -------------------------------------------------------------------------------------


def _same_value(value: Any, wanted: str) -> bool:
    """Whether ``value`` reads as ``wanted``: ``str(value)``, or for a number also ``format(value, "g")`` (so that
    "3" matches 3.0)."""
    if str(value) == wanted:
        return True
    return isinstance(value, int | float) and not isinstance(value, bool) and format(value, "g") == wanted


def select(rows: Sequence[Any], selector: str) -> Mapping[str, Any] | None:
    """The first mapping of ``rows`` with every ``field=value`` of ``selector`` (conditions joined by ``&``, each split
    at its first ``=``: ``"ablation=alpha=0.0"``, ``"reading=multiplier&temperature=3"``; ``_same_value``), None when
    none has them or ``selector`` has no ``=``."""
    conditions = [part.partition("=") for part in selector.split("&")]
    if not all(sep for _, sep, _ in conditions):
        return None
    matches = (
        row
        for row in rows
        if isinstance(row, Mapping) and all(key in row and _same_value(row[key], want) for key, _, want in conditions)
    )
    return next(matches, None)


@dataclass
class RunView:
    """What one committed run recorded, for the templates: ``metric``, ``param``, ``claim``, ``width``, ``moved``,
    ``main_claim``, ``seconds``, ``commit``. Anything it did not record renders as ``NOT_MEASURED`` with ``how`` (what
    would measure it), and is listed in ``missing``."""

    label: str  # "the class run", "exercise 2's run"
    folder: Path
    notebook: str
    how: str  # what makes this run, e.g. "`stsnb run --profile class`"
    missing: list[str] = field(default_factory=list)

    @cached_property
    def metrics(self) -> dict[str, Any]:
        return summary.read_metrics(self.folder) if self.folder.is_dir() else {}

    @cached_property
    def params(self) -> dict[str, Any]:
        path = self.folder / "params.yaml"
        return (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}

    @property
    def exists(self) -> bool:
        return bool(self.metrics)

    def _missing(self, what: str) -> str:
        self.missing.append(f"{self.notebook}: {self.label} has no {what} ({self.how})")
        return f"{NOT_MEASURED} ({self.label} has no {what}: {self.how})"

    def _at(self, path: Sequence[str]) -> Any:
        """The value at ``path`` in metrics.json, ``_ABSENT`` when the run did not record it: each element a key of a
        mapping, or in a list the row a ``"field=value"`` selector picks (``select``)."""
        value: Any = self.metrics
        for key in path:
            if isinstance(value, Mapping) and key in value:
                value = value[key]
            elif isinstance(value, list) and (row := select(value, key)) is not None:
                value = row
            else:
                return _ABSENT
        return value

    def metric(self, *path: str, fmt: str = "") -> str:
        """The value at ``path`` in metrics.json (``metric("sth/untrained", "avg", fmt=".2f")``; a row of a list by
        its fields, ``metric("bcl_probe", "mean", "reading=divisor&temperature=3", "bcl_ratio", fmt=".2f")``). A row
        itself takes ``fmt`` as a ``str.format`` template of its fields (``fmt="{difference:+.2f} [{low:+.2f},
        {high:+.2f}]"``)."""
        value = self._at(path)
        if value is _ABSENT:
            return self._missing(f"`{' > '.join(path)}`")
        if isinstance(value, Mapping) and fmt:
            try:
                return fmt.format_map(value)
            except KeyError as err:
                return self._missing(f"`{' > '.join((*path, str(err.args[0])))}`")
        return format(value, fmt) if fmt else str(value)

    def param(self, name: str) -> str:
        """A parameter of the run as its params.yaml records it."""
        return str(self.params[name]) if name in self.params else self._missing(f"parameter `{name}`")

    def claim(self, text: str) -> str:
        """ "+4.98 [+1.88, +8.41], supported (3 seeds)" of the claim row ``text`` (``committed.find_claim``)."""
        row = committed.find_claim(self.folder, text)
        return committed.result_text(row) if row is not None else self._missing(f"claim '{text}'")

    def width(self, text: str) -> str:
        """ "2.44": the width of claim row ``text``'s interval (high minus low), for comparing two runs' intervals."""
        row = committed.find_claim(self.folder, text)
        return f"{row['high'] - row['low']:.2f}" if row is not None else self._missing(f"claim '{text}'")

    def moved(self, text: str) -> str:
        """ "+0.29 [-0.10, +0.69], unresolved (1 seed)": how far the baseline of claim row ``text`` moved the encoder,
        its ``baseline_minus_untrained`` row (the baseline minus the untrained backbone, a claim row's fields)."""
        row = committed.find_claim(self.folder, text)
        moved = row.get("baseline_minus_untrained") if row is not None else None
        if not isinstance(moved, Mapping):
            return self._missing(f"`baseline_minus_untrained` in claim '{text}'")
        return committed.result_text(moved)

    def main_claims(self, fragment: str = "") -> tuple[MainClaim, ...]:
        """The main claims registered for the notebook's paper (``main_claims.main_claims_of``) whose statement holds
        ``fragment``; an error when there is none (a template asks for a main claim the paper does not make)."""
        mains = tuple(m for m in main_claims_of(self.notebook) if fragment in m.statement)
        if not mains:
            raise ValueError(f"{self.notebook}: no main claim is registered with {fragment!r} in its statement")
        return mains

    def main_claim_result(self, main: MainClaim) -> str:
        """This run's verdict on ``main`` with its interval ("supported (3 seeds), +4.98 [+1.86, +8.43]",
        ``main_claims.main_claim_text`` without the statement); ``PREDATES`` where the run's claim rows carry no
        ``main_claim`` mark (a run older than the main claims), *not measured* where there is no run."""
        if not self.exists:
            return self._missing(f"result for the main claim '{main.statement}'")
        recorded = "claims" in self.metrics
        rows = summary.claim_rows(self.folder)
        if rows and not any("main_claim" in row for row in rows):
            self.missing.append(f"{self.notebook}: {self.label} predates main claims ({self.how})")
            return PREDATES
        return main_claim_text(main, rows if recorded else None).removeprefix(f"{main.statement}: ")

    def main_claim(self, fragment: str = "") -> str:
        """Each main claim of the paper (those whose statement holds ``fragment``) with this run's result:
        "Table 4: stage 2 ... beats stage 1 ...: supported (3 seeds), +4.98 [+1.86, +8.43]"."""
        return "; ".join(f"{m.statement}: {self.main_claim_result(m)}" for m in self.main_claims(fragment))

    def seconds(self) -> str:
        """The run's duration ("412 s (about 7 min)"), as summary.md reads it."""
        value = summary.run_seconds(self.folder, self.notebook) if self.folder.is_dir() else None
        return runtimes.duration(value) if value is not None else self._missing("recorded duration")

    def commit(self) -> str:
        value = summary.run_commit(self.folder) if self.folder.is_dir() else None
        return value or self._missing("recorded commit")


def exercise_dir(notebook: str, run: int | str, out: Path = DEFAULT_OUT) -> Path:
    """The folder ``run_exercise`` runs exercise ``run`` of ``notebook`` in ("2", or "2b" for its second run; the
    run itself is its ``notebook`` subfolder, as ``stsnb run`` lays out a profile)."""
    return Path(out) / EXERCISES / notebook / str(run)


def parse_run(run: int | str) -> tuple[int, bool]:
    """``"2"`` -> (2, False): exercise 2's run; ``"2b"`` -> (2, True): its second run."""
    match = _RUN.match(str(run))
    if match is None:
        raise PlanError(f"expected an exercise's number, or its number and b for its second run (2, 2b), got {run!r}")
    return int(match.group(1)), bool(match.group(2))


def exercise_parameters(
    notebook: str, answer: Answer, plans_dir: Path = PLANS_DIR, second: bool = False
) -> dict[str, Any]:
    """The parameters an exercise's run (or its ``second`` run) gets: its profile's plan values for ``notebook``
    (``BASE_PROFILE`` unless the overrides name one) with the overrides over them."""
    overrides = answer.run_overrides(second)
    name = f"exercise {answer.number}" + ("'s second run" if second else "")
    if overrides is None:
        why = "its answer names none ('second run: {...}')" if second else "answered without a run (overrides: none)"
        raise PlanError(f"{notebook}, {name}: {why}")
    profile = str(overrides.get("profile", BASE_PROFILE))
    base = load_plan(plan_path(profile, plans_dir)).notebooks[notebook]
    labelled = {"profile": profile} if "profile" in base or "profile" in overrides else {}  # 00, 01: none
    parameters = {**base, **labelled, **overrides}
    as_the_cell_sets_them = dict(parameters)
    profiles.apply(as_the_cell_sets_them, notebook, plans_dir)  # what the notebook's setup cell will do
    put_back = sorted(key for key in overrides if as_the_cell_sets_them[key] != parameters[key])
    if put_back:
        raise PlanError(
            f"{notebook}, {name}: the {profile} plan sets {put_back}, so the notebook's setup cell"
            f" (stsnb.runs.profiles.apply) would put the plan's values back over the exercise's; in "
            f"{notebook}.md give `profile: {CELL_PROFILE}` with the {profile} plan's other values instead"
        )
    return parameters


def how_to_run(notebook: str, run: int | str) -> str:
    return f"`stsnb answers --run {notebook}:{run}`"


def views(notebook: str, out: Path, missing: list[str]) -> dict[str, Any]:
    """The names a template sees: ``cls``, ``cpu`` and ``run(profile, notebook)``."""

    def run(profile: str, name: str = notebook) -> RunView:
        how = f"`stsnb run --profile {profile} --only {name}`"
        return RunView(f"the committed {profile} run of {name}", Path(out) / profile / name, name, how, missing)

    cls, cpu = run("class"), run("cpu")

    def main_claim(fragment: str = "") -> str:
        """One sentence per main claim of the paper (fixed from its abstract, ``stsnb.main_claims``): the class run's
        verdict with the cpu run's beside it, each "no main-claim row ..." where that run predates main claims."""
        sentences = [
            f"The paper's main claim, {m.statement}. Class run: {cls.main_claim_result(m)}; cpu run: "
            f"{cpu.main_claim_result(m)}."
            for m in cls.main_claims(fragment)
        ]
        return "\n\n".join(sentences)

    return {"cls": cls, "cpu": cpu, "run": run, "main_claim": main_claim}


# ---- the sheet ---------------------------------------------------------------------------------------------------


HEADER = """# Exercises: the instructor's answer sheet

Written by `stsnb book --instructor` (`stsnb.teaching.answers`) from the notebooks and the committed runs. The
answers' prose is in `stsnb/teaching/templates/answers/<notebook>.md`; every number from our runs in it is read from a
committed run when the sheet is written. Each exercise is quoted as its notebook prints it, then:

- **Measured:** the exercise's own run, the notebook in the `class` profile with the exercise's change
  (`papermill_runs/exercises/<notebook>/<n>/`, made by `stsnb answers --run <notebook>:<n>`), on the cores it names;
  where the exercise asks for a second run to compare with, that run too (`<n>b/`, `--run <notebook>:<n>b`);
- *not measured* marks a number no committed run records yet, with the command that would measure it; an answer
  that says "expected" is what the paper and the mechanism predict, for the students' runs to decide;
- "computed here" marks a number computed for this sheet in a few lines (no training), with how.

Section, table and equation numbers are the papers' own."""


def _render(template: str, names: Mapping[str, Any], where: str) -> str:
    import jinja2

    environment = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)
    try:
        return environment.from_string(template).render(**names).strip()
    except jinja2.TemplateError as err:
        raise ValueError(f"{where}: {err}") from err


def _measured_line(notebook: str, what: str, overrides: Mapping[str, Any], view: RunView) -> str:
    """``what`` (e.g. "*Measured:*"), then the run's duration and cores, the parameters it changed and its commit."""
    changes = ", ".join(f"`{key} = {value!r}`" for key, value in overrides.items())
    if not view.exists:
        view.missing.append(f"{notebook}: {view.label} is not there ({view.how})")
        return f"{what} {NOT_MEASURED} yet ({view.how} runs the notebook with {changes})."
    cores = summary.read_env(view.folder).get("cpu_count")
    on = f" on {cores} CPU cores" if isinstance(cores, int) else ""
    return f"{what} {view.seconds()}{on}, the whole notebook with {changes} (run at commit {view.commit()})."


def exercise_header(notebook: str, answer: Answer, ex: RunView, ex_b: RunView) -> str:
    """The lines under an exercise: the measured runtime of its run (and of its second run) and what each changed,
    or that it needs no run."""
    if answer.overrides is None:
        return "*No run:* answered without training (its runtime is the notebook's own line)."
    lines = [_measured_line(notebook, "*Measured:*", answer.overrides, ex)]
    if answer.second is not None:
        lines.append(_measured_line(notebook, "*Second run, measured:*", answer.second, ex_b))
    return "\n\n".join(lines)


def notebook_section(
    notebook: str,
    out: Path = DEFAULT_OUT,
    notebooks_dir: Path = NOTEBOOKS_DIR,
    templates: Path = TEMPLATES,
    missing: list[str] | None = None,
) -> str:
    """One notebook's part of the sheet: its title, the introduction, then each exercise quoted with its measured
    runtime and its answer. The answers must match the notebook's exercises one to one."""
    path = Path(notebooks_dir) / f"{notebook}.ipynb"
    missing = [] if missing is None else missing
    source = load_source(notebook, templates)
    items = exercises(path)
    numbers = [int(_ITEM.match(item).group(1)) for item in items]
    if numbers != sorted(source.answers):
        raise ValueError(
            f"{notebook}: the notebook numbers its exercises {numbers}, {notebook}.md answers {sorted(source.answers)}"
        )
    names = views(notebook, out, missing)
    intro = _render(source.intro, names, f"{notebook}.md, introduction")
    lines = [f"## {title(path)}", *(["", intro] if intro else [])]
    for item, number in zip(items, numbers, strict=True):
        answer = source.answers[number]
        ex, ex_b = (
            RunView(label, exercise_dir(notebook, run, out) / notebook, notebook, how_to_run(notebook, run), missing)
            for label, run in ((f"exercise {number}'s run", number), (f"exercise {number}'s second run", f"{number}b"))
        )
        text = _render(answer.text, {**names, "ex": ex, "ex_b": ex_b}, f"{notebook}.md, answer {number}")
        quoted = item.split(" ", 1)[1]
        header = exercise_header(notebook, answer, ex, ex_b)
        lines += ["", f"### Exercise {number}", "", f"> {quoted}", "", header, ""]
        lines.append(text)
    return "\n".join(lines)


def sheet(
    notebooks: Sequence[str] | None = None,
    out: Path = DEFAULT_OUT,
    notebooks_dir: Path = NOTEBOOKS_DIR,
    templates: Path = TEMPLATES,
    missing: list[str] | None = None,
) -> str:
    """The whole answer sheet: ``HEADER``, then ``notebook_section`` of every notebook that has an answers file (all
    of ``notebooks_dir``'s notebooks must have one), in the notebooks' order."""
    if notebooks is None:
        notebooks = sorted(p.stem for p in Path(notebooks_dir).glob("*.ipynb"))
        without = [name for name in notebooks if not (Path(templates) / f"{name}.md").is_file()]
        if without:
            raise ValueError(f"no answers file in {templates} for {without}")
    sections = [notebook_section(name, out, notebooks_dir, templates, missing) for name in notebooks]
    return "\n\n".join([HEADER, *sections]) + "\n"


def not_measured(**kwargs: Any) -> list[str]:
    """What the sheet shows as *not measured*: each value no committed run records yet (``RunView.missing``)."""
    missing: list[str] = []
    sheet(missing=missing, **kwargs)
    return list(dict.fromkeys(missing))


# ---- the exercises' runtimes, as each notebook prints them under its exercise list ------------------------------


def settings_changed(
    notebook: str, answer: Answer, second: bool, folder: Path, notebooks_dir: Path = NOTEBOOKS_DIR, plans_dir=PLANS_DIR
) -> list[str]:
    """The parameters whose value in the exercise run at ``folder`` (its params.yaml) differs from what the exercise
    runs today: the parameters cell's values with ``exercise_parameters`` over them."""
    from ..runs.plans import parameter_values

    path = folder / "params.yaml"
    recorded = (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}
    today = parameter_values(Path(notebooks_dir) / f"{notebook}.ipynb")
    today |= exercise_parameters(notebook, answer, plans_dir, second)
    return [name for name, value in today.items() if recorded.get(name, _ABSENT) != value]


def runtimes_text(
    notebook: str,
    out: Path = DEFAULT_OUT,
    notebooks_dir: Path = NOTEBOOKS_DIR,
    templates: Path = TEMPLATES,
    plans_dir: Path = PLANS_DIR,
) -> str:
    """What a notebook prints under its exercise list: each exercise's measured runtime, from its committed run
    (``papermill_runs/exercises/<notebook>/<n>/``: the notebook in the class profile with the exercise's change), with
    the cores, the commit and, where the run's settings differ from today's, which ones; "not measured yet" where no
    run is committed; "no run" for an exercise answered without one. Nothing is typed into the notebook."""
    source = load_source(notebook, templates)
    lines = [
        "Each exercise's runtime as measured: the notebook in the class profile with the exercise's change "
        f"(papermill_runs/exercises/{notebook}/; `stsnb answers --run {notebook}:N` measures one again)"
    ]
    for item in exercises(Path(notebooks_dir) / f"{notebook}.ipynb"):
        number = int(_ITEM.match(item).group(1))
        answer = source.answers.get(number)
        if answer is None or answer.overrides is None:
            lines.append(f"  exercise {number}: no run (answered without training)")
            continue
        for second in (False, True) if answer.second is not None else (False,):
            name = f"exercise {number}" + (", its second run" if second else "")
            folder = exercise_dir(notebook, f"{number}{'b' if second else ''}", out) / notebook
            seconds = summary.run_seconds(folder, notebook) if folder.is_dir() else None
            if seconds is None:
                lines.append(f"  {name}: not measured yet")
                continue
            cores = summary.read_env(folder).get("cpu_count")
            line = f"  {name}: {runtimes.duration(seconds)}" + (f" on {cores} CPU cores" if cores else "")
            line += f", at commit {summary.run_commit(folder) or 'not recorded'}"
            changed = settings_changed(notebook, answer, second, folder, notebooks_dir, plans_dir)
            more = f" and {len(changed) - 3} more" if len(changed) > 4 else ""
            shown = ", ".join(changed[:3] if more else changed)
            lines.append(line + (f"; with earlier settings of {shown}{more}" if changed else ""))
    return "\n".join(lines)


# ---- the exercises' runs ----------------------------------------------------------------------------------------


def run_exercise(
    notebook: str,
    run: int | str,
    out: Path = DEFAULT_OUT,
    notebooks_dir: Path = NOTEBOOKS_DIR,
    plans_dir: Path = PLANS_DIR,
    templates: Path = TEMPLATES,
    timeout: float | None = None,
) -> Any:
    """Run exercise ``run`` of ``notebook`` (``parse_run``: 2, or "2b" for its second run): the notebook with
    ``exercise_parameters`` into ``exercise_dir``, as ``stsnb run`` runs one notebook (kept only when it ends ``ok``;
    ``execution.run_notebook``). ``timeout``: the base profile's plan timeout when None. Refuses an override the
    parameters cell does not assign."""
    from ..runs import execution

    number, second = parse_run(run)
    answer = load_source(notebook, templates).answers.get(number)
    if answer is None:
        raise PlanError(f"{notebook}: no answer {number} in {notebook}.md")
    parameters = exercise_parameters(notebook, answer, plans_dir, second)
    undeclared = sorted(set(parameters) - set(assigned_parameters(Path(notebooks_dir) / f"{notebook}.ipynb")))
    if undeclared:
        raise PlanError(f"{notebook}, exercise {run}: {undeclared} are not parameters of the notebook")
    if timeout is None:
        plan = load_plan(plan_path(str(parameters.get("profile", BASE_PROFILE)), plans_dir))
        timeout = plan.timeouts.get(notebook)
    execution.check_kernel()
    folder = exercise_dir(notebook, run, out)
    folder.mkdir(parents=True, exist_ok=True)
    record = {"notebook": notebook, "number": number, "second_run": second, "overrides": answer.run_overrides(second)}
    (folder / "exercise.json").write_text(json.dumps(record, indent=1) + "\n")
    return execution.run_notebook(notebook, parameters, Path(notebooks_dir), folder, timeout)
