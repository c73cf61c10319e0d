"""The pipeline figure each training notebook opens with: data -> model -> loss -> evaluation -> verdict, each box
naming this notebook's part as its default (``class``) profile runs it, so a student sees the whole run before its
details, in a notebook that has not run yet.

Each paper builds its :class:`Pipeline` from the notebook's parameters (``stsnb.papers.<paper>.figures.pipeline``,
all of them through ``stsnb.papers.pipelines``); ``stsnb figures`` draws each one (:func:`png`), writes it to
``notebooks/figures/<notebook>_pipeline.png`` and into the notebook's opening markdown as the attachment
``pipeline.png`` (:func:`embed`), so that every copy of the notebook (an executed run, the book, GitHub) shows it.
The PNG carries its parts as text (:func:`parts_of`): a test compares them with what the notebook's parameters give
now, and the attachment with the committed file.

Legible at a notebook's width: about 1,000 pixels wide at 100 dpi, shown at its own size, 12-14 pt text (as large
as JupyterLab's body text), boxes from edge to edge with short arrows between them.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .plots import use_style

STAGES = ("data", "model", "loss", "evaluation", "verdict")
ATTACHMENT = "pipeline.png"  # the opening markdown cell's attachment
IMAGE = f"![pipeline](attachment:{ATTACHMENT})"  # one word of the opening's 150
DPI = 100
WIDTH = 10.0  # inches: 1,000 pixels
PARTS_KEY = "stsnb-pipeline"  # the PNG text chunk holding the title and parts


@dataclass(frozen=True)
class Pipeline:
    """One notebook's figure: a title line and one short text per stage of ``STAGES`` ("\\n" between lines, each
    line at most about 20 characters so that it fits its box)."""

    notebook: str
    title: str
    parts: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.parts) != len(STAGES):
            raise ValueError(f"a pipeline needs {len(STAGES)} parts ({', '.join(STAGES)}), got {len(self.parts)}")

    def record(self) -> str:
        """The title and parts as JSON: what the PNG carries."""
        return json.dumps({"notebook": self.notebook, "title": self.title, "parts": list(self.parts)})


def count(n: int | None, noun: str, every: str = "all") -> str:
    """``1,440 pairs``; ``all pairs`` for None."""
    return f"{every} {noun}" if n is None else f"{n:,} {noun}"


def pipeline_figure(parts: Sequence[str], *, title: str | None = None, width: float = WIDTH):
    """Five boxes left to right, one per stage of ``STAGES``, each headed by its stage name with this paper's part
    under it (``parts``: five short texts, "\\n" for another line), joined by arrows. Returns the figure."""
    parts = [str(p) for p in parts]
    if len(parts) != len(STAGES):
        raise ValueError(f"pipeline_figure needs {len(STAGES)} parts ({', '.join(STAGES)}), got {len(parts)}")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    use_style()
    lines = max(part.count("\n") + 1 for part in parts)
    head, line, pad, top = 0.36, 0.235, 0.1, (0.36 if title else 0.04)  # inches
    box = head + lines * line + 2 * pad
    height = box + top + 0.04
    fig = plt.figure(figsize=(width, height), dpi=DPI)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    gap = 0.22  # inches between boxes, for the arrows
    column = (width - 0.04 - gap * (len(STAGES) - 1)) / len(STAGES)
    for i, (stage, part) in enumerate(zip(STAGES, parts, strict=True)):
        left = 0.02 + i * (column + gap)
        ax.add_patch(
            FancyBboxPatch(
                (left + 0.04, 0.06),
                column - 0.08,
                box - 0.08,
                boxstyle="round,pad=0.02,rounding_size=0.08",
                facecolor="#eef3fa",
                edgecolor="#4a6fa5",
                linewidth=1.2,
            )
        )
        middle = left + column / 2
        ax.text(middle, 0.02 + box - pad - head / 2, stage, ha="center", va="center", fontsize=14, weight="bold")
        ax.text(middle, 0.02 + (box - head) / 2, part, ha="center", va="center", fontsize=12, linespacing=1.25)
        if i:
            ax.annotate(
                "",
                xy=(left + 0.06, 0.02 + box / 2),
                xytext=(left - gap + 0.0, 0.02 + box / 2),
                arrowprops={"arrowstyle": "-|>", "color": "#4a6fa5", "lw": 1.5},
            )
    if title:
        ax.text(width / 2, height - 0.2, title, ha="center", va="center", fontsize=13)
    return fig


def png(pipeline: Pipeline, colours: int = 48) -> bytes:
    """The figure of ``pipeline`` as PNG bytes in a palette of ``colours`` (a third of the full-colour file, which
    every copy of the notebook carries), its parts in the text chunk ``PARTS_KEY``; no date, so the same parts give
    the same file on one matplotlib."""
    import matplotlib.pyplot as plt
    from PIL import Image, PngImagePlugin

    fig = pipeline_figure(pipeline.parts, title=pipeline.title)
    drawn = io.BytesIO()
    fig.savefig(drawn, format="png", dpi=DPI, bbox_inches=fig.bbox_inches)  # the laid-out size, no padding
    plt.close(fig)
    image = (
        Image.open(drawn).convert("RGB").quantize(colours, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    )
    info = PngImagePlugin.PngInfo()
    info.add_text(PARTS_KEY, pipeline.record())
    buffer = io.BytesIO()
    image.save(buffer, format="png", pnginfo=info, optimize=True)
    return buffer.getvalue()


def parts_of(data: bytes) -> dict:
    """The title and parts a PNG from :func:`png` carries ({} for any other image)."""
    from PIL import Image

    text = Image.open(io.BytesIO(data)).text.get(PARTS_KEY)  # type: ignore[attr-defined]
    return json.loads(text) if text else {}


def path(notebook: str, folder: Path) -> Path:
    return Path(folder) / f"{notebook}_pipeline.png"


def _read(notebook: Path) -> dict:
    return json.loads(Path(notebook).read_text(encoding="utf-8"))


def attachment(notebook: Path) -> bytes | None:
    """The opening markdown cell's ``pipeline.png`` attachment, None when it has none."""
    data = _read(notebook)["cells"][0].get("attachments", {}).get(ATTACHMENT, {}).get("image/png")
    return base64.b64decode(data) if data else None


def embed(notebook: Path, data: bytes) -> bool:
    """Put ``data`` into ``notebook``'s opening markdown cell as the ``pipeline.png`` attachment, with the image line
    at the end of the cell when it has none; returns whether the file changed. The JSON is read and written as it is
    (key order, indentation), so that nothing else of the notebook changes."""
    node = _read(notebook)
    cell = node["cells"][0]
    if cell["cell_type"] != "markdown":
        raise ValueError(f"{Path(notebook).name}: its first cell is no markdown cell to hold the pipeline figure")
    encoded = base64.b64encode(data).decode("ascii")
    source = "".join(cell["source"])
    attached = cell.get("attachments", {}).get(ATTACHMENT, {}).get("image/png")
    if attached == encoded and f"(attachment:{ATTACHMENT})" in source:
        return False
    if f"(attachment:{ATTACHMENT})" not in source:
        source = source.rstrip() + "\n\n" + IMAGE
    attachments = {**cell.get("attachments", {}), ATTACHMENT: {"image/png": encoded}}
    rest = {key: value for key, value in cell.items() if key != "attachments"}
    node["cells"][0] = {"attachments": attachments, **rest, "source": source.splitlines(keepends=True)}
    Path(notebook).write_text(json.dumps(node, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return True


def write(pipeline: Pipeline, notebook: Path, folder: Path, check: bool = False) -> bool:
    """Draw ``pipeline`` into ``folder`` and into ``notebook``'s opening cell; with ``check`` write nothing. Returns
    whether the committed PNG's parts or the notebook's attachment differ(ed) from it. A committed PNG with the same
    parts is kept as it is (another matplotlib may draw other pixels from them)."""
    target = path(pipeline.notebook, folder)
    committed = target.read_bytes() if target.is_file() else b""
    fresh = bool(committed) and parts_of(committed) == json.loads(pipeline.record())
    if check:
        return not fresh or attachment(notebook) != committed
    data = committed if fresh else png(pipeline)
    if not fresh:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return embed(notebook, data) or not fresh


def write_all(builders: Mapping[str, Callable], notebooks_dir: Path | None = None, check: bool = False) -> list[str]:
    """``write`` each notebook's pipeline, built by ``builders[notebook]`` from the values of its parameters cell (the
    class profile's, ``stsnb.runs.plans.parameter_values``); returns the notebooks whose figure was (``check``: is)
    out of date."""
    from ..runs.plans import NOTEBOOKS_DIR, parameter_values

    folder = Path(notebooks_dir) if notebooks_dir is not None else NOTEBOOKS_DIR
    stale = []
    for notebook, build in builders.items():
        path_ = folder / f"{notebook}.ipynb"
        if write(build(parameter_values(path_)), path_, folder / "figures", check):
            stale.append(notebook)
    return stale
