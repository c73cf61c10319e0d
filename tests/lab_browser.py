"""Helpers of the browser tests: a JupyterLab server on loopback and a headless Debian Chromium driven by Playwright.

No browser is downloaded: Playwright drives the system's ``chromium`` (Debian package) through ``executable_path``.
What a machine lacks is said in the skip message, with the command that installs it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from stsnb.runs import plans

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
# flags for a root user on a machine with no network beyond loopback (no background traffic, no sandbox as root)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
ENABLE_HINT = (
    "to enable: `bash scripts/setup.sh` (installs Debian's chromium with apt where it runs as root, and playwright "
    "through the dev extra), or by hand `apt-get install chromium` and `pip install playwright`"
)


def missing_requirements() -> str | None:
    """What the browser tests lack on this machine, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed"
    if chromium_path() is None:
        return f"no Chromium found at {', '.join(CHROMIUM_CANDIDATES)}"
    return None


def require_browser() -> None:
    """Skip the calling test (fixture) where the browser tests cannot run, saying how to enable them; in CI
    (``CI=true``) fail instead: CI must run them."""
    missing = missing_requirements()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests must run in CI, but {missing}; {ENABLE_HINT}")
        pytest.skip(f"{missing}; {ENABLE_HINT}")


def chromium_path() -> str | None:
    override = os.environ.get("STSNB_CHROMIUM")
    for candidate in ([override] if override else []) + list(CHROMIUM_CANDIDATES):
        if candidate and Path(candidate).is_file():
            return candidate
    return shutil.which("chromium")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LabServer:
    url: str  # http://127.0.0.1:PORT
    token: str
    root: Path
    log: Path

    def lab_url(self, path: str = "") -> str:
        """``path`` opened in a workspace of its own, reset: no panels restored from an earlier page."""
        workspace = "".join(c if c.isalnum() else "-" for c in path) or "default"
        return f"{self.url}/lab/workspaces/{workspace}/tree/{path}?reset&token={self.token}"


@contextlib.contextmanager
def jupyter_lab(root: Path, log: Path, env: dict[str, str] | None = None, timeout: float = 90.0) -> Iterator[LabServer]:
    """``jupyter lab`` of this Python environment on 127.0.0.1, a random free port and a fresh token."""
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.disable_check_xsrf=False",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    handle = log.open("w")
    server_env = {k: v for k, v in os.environ.items() if k != "TQDM_DISABLE"}  # readers see progress bars
    process = subprocess.Popen(
        command, cwd=root, stdout=handle, stderr=subprocess.STDOUT, env={**server_env, **(env or {})}
    )
    server = LabServer(f"http://127.0.0.1:{port}", token, root, log)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {process.returncode}: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{server.url}/api/status?token={token}", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"jupyter lab did not answer within {timeout:.0f} s: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        handle.close()


@contextlib.contextmanager
def lab_with_copies(root: Path, notebooks: list[Path], log: Path) -> Iterator[LabServer]:
    """JupyterLab serving ``root`` with copies of ``notebooks``; every run records under ``root/runs``, none under the
    repository's ``runs/``. Skips (fails in CI) where the browser tests cannot run."""
    require_browser()
    for path in notebooks:
        shutil.copy(path, root)
    log.parent.mkdir(parents=True, exist_ok=True)
    with jupyter_lab(root, log, env={"STSNB_RUN_DIR": str(root / "runs")}) as server:
        yield server


@contextlib.contextmanager
def chromium_page(width: int = 1400, height: int = 1000):
    """A fresh headless Chromium page; requests to anything but loopback are aborted and listed in ``page.offsite``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            page = context.new_page()
            offsite: list[str] = []

            def route(request_route):
                url = request_route.request.url
                if url.startswith(("http://127.0.0.1", "http://localhost", "file://", "data:", "blob:")):
                    request_route.continue_()
                else:
                    offsite.append(url)
                    request_route.abort()

            context.route("**/*", route)
            page.offsite = offsite  # type: ignore[attr-defined]
            yield page
        finally:
            browser.close()


def open_notebook(page, server: LabServer, name: str, timeout: float = 120.0) -> None:
    """Open a notebook in JupyterLab and wait until its kernel has started and is idle."""
    page.goto(server.lab_url(name))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout * 1000)
    page.wait_for_function(
        """() => {
            const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
            const name = panel && panel.querySelector('.jp-KernelName');
            const state = panel && panel.querySelector('.jp-Notebook-ExecutionIndicator');
            return name && !/No Kernel/.test(name.textContent) && state && state.dataset.status === 'idle';
        }""",
        timeout=timeout * 1000,
    )


_STATE_JS = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const indicator = panel.querySelector('.jp-Notebook-ExecutionIndicator');
    const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent);
    const errors = [...panel.querySelectorAll('.jp-OutputArea-output')].filter(
        o => o.dataset.mimeType === 'application/vnd.jupyter.stderr' && /Traceback|Error/.test(o.textContent)).length;
    return {
        idle: !!indicator && indicator.dataset.status === 'idle',
        pending: prompts.filter(p => p.includes('*')).length,
        unrun: prompts.filter(p => !/\\[\\d+\\]/.test(p)).length,
        cells: prompts.length,
        errors,
    };
}"""


def run_all_cells(page, timeout: float) -> float:
    """Run > Run All Cells from the menu bar; wait until the kernel is idle with every code cell run (or stopped
    at an error, as JupyterLab stops "run all" there). Returns the seconds it took; TimeoutError says where it is.
    """
    started = time.monotonic()
    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator(".lm-Menu-item:visible", has_text="Run All Cells").first.click()
    settled = 0
    state: dict = {}
    while time.monotonic() - started < timeout:
        page.wait_for_timeout(1000)  # keeps Playwright's event loop (and the request routing) running
        state = page.evaluate(_STATE_JS)
        done = state["idle"] and state["pending"] == 0 and (state["unrun"] == 0 or state["errors"] > 0)
        settled = settled + 1 if done else 0
        if settled >= 3:  # idle for three polls in a row: not just between two cells
            return time.monotonic() - started
    raise TimeoutError(f"cells still running after {timeout:.0f} s: {state}")


def notebook_report(page) -> dict:
    """What the open notebook shows: error outputs, images and whether they loaded, math, widgets, raw tqdm text."""
    return page.evaluate(
        """() => {
            const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
            const outputs = [...panel.querySelectorAll('.jp-OutputArea-output')];
            const errors = outputs.filter(o => o.dataset.mimeType === 'application/vnd.jupyter.stderr'
                && /Traceback|Error/.test(o.textContent)).map(o => o.textContent.slice(0, 400));
            const images = [...panel.querySelectorAll('.jp-OutputArea-output img')];
            return {
                code_cells: panel.querySelectorAll('.jp-CodeCell').length,
                errors,
                images: images.length,
                images_not_loaded: images.filter(i => !(i.complete && i.naturalWidth > 0)).length,
                math_outputs: panel.querySelectorAll(
                    '.jp-OutputArea-output.jp-RenderedLatex, .jp-OutputArea-output mjx-container').length,
                progress_widgets: panel.querySelectorAll(
                    '.jp-OutputArea-output .widget-hprogress, .jp-OutputArea-output .widget-progress').length,
                raw_progress_text: outputs.filter(o => /\\d+%\\|[^|]*\\|\\s*\\d+\\/\\d+/.test(o.textContent)
                    && !o.querySelector('.widget-hprogress, .widget-progress')).length,
            };
        }"""
    )


def insert_cell_below(page, code_cell_index: int, text: str) -> None:
    """Select a code cell, insert a new code cell below it (``B`` in command mode) and type ``text`` into it."""
    cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").nth(code_cell_index)
    cell.locator(".jp-InputArea-prompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    page.keyboard.insert_text(text)
    page.keyboard.press("Escape")


def screenshot_at_first_figure(page, path: Path) -> None:
    """A screenshot with the notebook scrolled to its first figure (or where it is), news prompt dismissed. JupyterLab
    draws only the cells in view and draws them after a scroll, so the picture waits for that figure to be drawn
    (without the wait, notebook 10's picture once showed an empty notebook pane)."""
    dismiss = page.locator(".Toastify__toast button", has_text="No")  # "get notified about Jupyter news?" -> No
    for i in range(dismiss.count()):
        with contextlib.suppress(Exception):
            dismiss.nth(i).click(timeout=1000)
    with contextlib.suppress(Exception):  # a toast that would not close stays out of the picture
        page.add_style_tag(content=".Toastify { display: none !important; }")
    figure = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output img")
    if figure.count():
        with contextlib.suppress(Exception):
            figure.first.scroll_into_view_if_needed(timeout=5000)
            figure.first.wait_for(state="visible", timeout=5000)
            page.wait_for_timeout(500)  # the rest of the view, drawn after the figure
    page.screenshot(path=str(path), full_page=False)


def parameters_code_cell_index(name: str) -> int:
    """Index among the code cells of ``notebooks/<name>.ipynb`` of its cell tagged ``parameters``."""
    notebook = nbformat.read(plans.NOTEBOOKS_DIR / f"{name}.ipynb", as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    return next(i for i, c in enumerate(code) if "parameters" in c.metadata.get("tags", []))


def run_through_the_ui(
    page, server: LabServer, name: str, timeout: float, screenshot: Path, before_run: Callable[[], None] | None = None
) -> dict:
    """Open ``<name>.ipynb``, call ``before_run`` (typing into cells, say), Run All Cells, screenshot it and return
    ``notebook_report``; asserts the page asked for nothing beyond this machine."""
    started = time.monotonic()
    open_notebook(page, server, f"{name}.ipynb")
    if before_run is not None:
        before_run()
    try:
        seconds = run_all_cells(page, timeout)
    finally:
        screenshot_at_first_figure(page, screenshot)
    report = notebook_report(page)
    report.update(seconds=round(seconds, 1), seconds_with_opening=round(time.monotonic() - started, 1))
    print(f"{name}: ran all cells in {seconds:.1f} s ({report['seconds_with_opening']:.1f} s with opening): {report}")
    assert page.offsite == [], f"the page asked for off-machine resources: {page.offsite[:5]}"
    return report
