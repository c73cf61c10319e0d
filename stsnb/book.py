"""``stsnb book``: a static HTML site of the executed runs of a profile, readable offline and shareable with a class.

``build("cpu")`` turns every executed notebook of ``papermill_runs/cpu/`` into HTML with nbconvert (JupyterLab's look,
figures embedded in the page) and writes ``index.html``: the profile's plan description, one row per notebook (status,
duration, link), every result row (ours | paper | delta, and the verdict where the run recorded one) and the claims
each notebook checked with their verdicts. Math renders with a local copy of MathJax (the ``jupyter-server-mathjax``
package of the ``lab`` extra); nothing is loaded from the network.
"""

from __future__ import annotations

import html
import shutil
from pathlib import Path

from . import runner

TEMPLATES = Path(__file__).parent / "templates"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"


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
    """``<profile_dir>/<name>/<name>.ipynb`` of every notebook the runner promoted (failed attempts are not)."""
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


def _claims(folder: Path) -> dict[str, str]:
    """Claim -> "verdict (difference [low, high])" from metrics.json (``runner.claim_rows``: a list or mapping)."""
    out = {}
    for row in runner.claim_rows(folder):
        interval = ""
        if all(isinstance(row.get(k), int | float) for k in ("difference", "low", "high")):
            interval = f" ({row['difference']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}])"
        out[str(row["claim"])] = f"{row['verdict']}{interval}"
    return out


def _cell(value: object) -> str:
    return f"<td>{html.escape(str(value))}</td>"


def _number(value: str | None) -> str:
    try:
        return f'<td class="num">{float(value):.2f}</td>'  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return _cell(value or "")


def index_html(profile: str, plan_description: str, entries: list[dict]) -> str:
    """The index page: notebooks with links, the results beside the papers' numbers, the claims and verdicts."""
    rows, results, claims = [], [], []
    for entry in entries:
        name, anchor = entry["name"], f"nb-{entry['name']}"
        link = f'<a href="{name}.html">{html.escape(name)}</a>' if entry["html"] else html.escape(name)
        seconds = "" if entry["seconds"] is None else f"{entry['seconds']:.0f}"
        rows.append(f'<tr id="{anchor}"><td>{link}</td>{_cell(entry["status"])}<td class="num">{seconds}</td></tr>')
        for r in entry["results"]:
            results.append(
                f'<tr><td><a href="#{anchor}">{html.escape(name)}</a></td>{_cell(r.get("paper", ""))}'
                f"{_cell(r.get('table', ''))}{_cell(r.get('setting', ''))}{_cell(r.get('task', ''))}"
                f"{_number(r.get('ours'))}{_number(r.get('paper_value'))}{_number(r.get('delta'))}"
                f"{_cell(r.get('verdict', ''))}{_cell(r.get('note', ''))}</tr>"
            )
        for claim, verdict in entry["claims"].items():
            claims.append(
                f'<tr><td><a href="#{anchor}">{html.escape(name)}</a></td>{_cell(claim)}{_cell(verdict)}</tr>'
            )
    style = (
        "body{font-family:sans-serif;margin:24px;max-width:1400px} table{border-collapse:collapse;margin-bottom:24px}"
        " td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px;vertical-align:top} td.num{text-align:right}"
        " th{background:#f3f3f3}"
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>stsnb book: {html.escape(profile)} profile</title>
<style>{style}</style></head>
<body>
<h1>stsnb book: the <code>{html.escape(profile)}</code> runs</h1>
<p>{html.escape(plan_description)}</p>
<p>Scores are Spearman x100 unless a row says otherwise; delta = ours - paper. Paper numbers are the papers' own,
as reported; ours come from the executed notebooks linked below.</p>
<h2 id="notebooks">Notebooks</h2>
<table><tr><th>notebook</th><th>status</th><th>seconds</th></tr>
{"".join(rows)}
</table>
<h2 id="results">Ours beside the papers</h2>
<table><tr><th>notebook</th><th>paper</th><th>table</th><th>setting</th><th>task</th><th>ours</th><th>paper</th>
<th>delta</th><th>verdict</th><th>note</th></tr>
{"".join(results)}
</table>
<h2 id="claims">Claims and verdicts</h2>
<table><tr><th>notebook</th><th>claim</th><th>verdict</th></tr>
{"".join(claims) or '<tr><td colspan="3">no notebook recorded claims</td></tr>'}
</table>
</body></html>
"""


def build(profile: str = "cpu", out: Path | None = None, runs_root: Path = runner.DEFAULT_OUT) -> Path:
    """Write the site for ``profile`` into ``out`` (default ``<runs_root>/<profile>/book``); return index.html."""
    profile_dir = Path(runs_root) / profile
    if not profile_dir.is_dir():
        raise BookError(f"no executed runs at {profile_dir}: run `stsnb run --profile {profile}` first")
    notebooks = executed_notebooks(profile_dir)
    if not notebooks:
        raise BookError(f"{profile_dir} holds no executed notebook (<name>/<name>.ipynb)")
    out = Path(out) if out is not None else profile_dir / "book"
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
    entries = []
    for notebook in notebooks:
        folder = notebook.parent
        page = notebook_html(notebook, mathjax_url)
        (out / f"{folder.name}.html").write_text(page, encoding="utf-8")
        outcome = runner.recorded_outcome(folder.name, profile_dir)
        entries.append(
            {
                "name": folder.name,
                "html": True,
                "status": outcome.status,
                "seconds": outcome.seconds,
                "results": runner.comparison_rows(folder),
                "claims": _claims(folder),
            }
        )
    try:
        description = runner.load_plan(runner.plan_path(profile)).description
    except (runner.PlanError, OSError):
        description = ""
    index = out / "index.html"
    index.write_text(index_html(profile, description, entries), encoding="utf-8")
    return index
