"""The lesson folder: index.html, its scripts, Plotly, and one data file per sentence; as a folder or a zip.

    index.html                 the page (lesson/page.py)
    lesson.css, player.js      the page's look and its player (lesson/page.css, lesson/player.js)
    figures.js                 the app's own theme and fitting of figures (ui/js/figures.js, unchanged)
    plotly-cartesian.min.js    Plotly's partial bundle, PLOTLY-LICENSE.txt its licence (lesson/vendor/)
    data/lesson.js             the lesson: title, views, kinds, where it opens, the figures' light template and dark theme
    data/sentence-N.js         sentence N: its data (lesson/sentence.py) as JSON, gzip-compressed and base64

Every file is loaded by a <script> or <link> of the page (a file:// page may not fetch its own files); the
sentences' JSON is compressed (the per-step figures repeat their layouts: 5-10x smaller) and unpacked in the
page by the browser's own DecompressionStream.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import shutil
import zipfile
from collections.abc import Sequence
from pathlib import Path

from visualizer.theme import dark_theme

from . import figures, page, sections
from .sentence import LessonSentence, sentence_data
from .start import Start

HERE = Path(__file__).resolve().parent
VENDOR = HERE / "vendor"
FIGURES_JS = HERE.parent / "ui" / "js" / "figures.js"
COPIED = {  # file in the folder <- where it comes from
    "plotly-cartesian.min.js": VENDOR / "plotly-cartesian.min.js",
    "PLOTLY-LICENSE.txt": VENDOR / "PLOTLY-LICENSE.txt",
    "figures.js": FIGURES_JS,
    "player.js": HERE / "player.js",
    "lesson.css": HERE / "page.css",
}


def script_of(variable: str, key: str | None, value) -> str:
    """A script that sets window[variable] (or window[variable][key]) to JSON ``value``."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if key is None:
        return f"window.{variable} = {text};\n"
    return f"(window.{variable} = window.{variable} || {{}})[{json.dumps(key)}] = {text};\n"


def compressed(value) -> str:
    """JSON of ``value``, gzip-compressed (no timestamp: the same lesson gives the same bytes), base64."""
    raw = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def lesson_data(title: str, sentences: Sequence[LessonSentence], start: Start = Start()) -> dict:
    """What data/lesson.js holds."""
    if start.sentence > len(sentences):
        raise ValueError(f"the lesson opens on sentence {start.sentence} of {len(sentences)}")
    return {
        "title": title,
        "paper": sections.PAPER,
        "views": sections.views(),
        "kinds": sections.kinds(),
        "start": start.record(),
        "sentences": [{"title": s.title, "direction": s.trace.direction, "model": s.trace.model} for s in sentences],
        "template": figures.template(),
        "dark": dark_theme(),
    }


def write_lesson(
    sentences: Sequence[LessonSentence], out: str | Path, title: str = "A lesson", start: Start = Start()
) -> Path:
    """Write the lesson folder ``out`` (made if missing; its lesson files replaced), opening at ``start``, and return
    its index.html."""
    if not sentences:
        raise ValueError("a lesson needs at least one sentence")
    out = Path(out)
    (out / "data").mkdir(parents=True, exist_ok=True)
    for name, source in COPIED.items():
        shutil.copyfile(source, out / name)
    (out / "data" / "lesson.js").write_text(script_of("LESSON", None, lesson_data(title, sentences, start)), "utf-8")
    for index, sentence in enumerate(sentences):
        text = script_of("LESSON_SENTENCES", str(index), compressed(sentence_data(sentence)))
        (out / "data" / f"sentence-{index + 1}.js").write_text(text, "utf-8")
    index_html = out / "index.html"
    index_html.write_text(page.index_html(title, len(sentences)), "utf-8")
    return index_html


def read_lesson(folder: str | Path) -> dict:
    """data/lesson.js of a lesson folder as the page reads it (tests, and a look from Python)."""
    text = (Path(folder) / "data" / "lesson.js").read_text("utf-8")
    return json.loads(text[text.index(" = ") + 3 : text.rindex(";")])


def read_sentence(folder: str | Path, index: int) -> dict:
    """Sentence ``index`` (0-based) of a lesson folder as the page unpacks it (tests, and a look from Python)."""
    text = (Path(folder) / "data" / f"sentence-{index + 1}.js").read_text("utf-8")
    encoded = json.loads(text[text.index("] = ") + 4 : text.rindex(";")])
    return json.loads(gzip.decompress(base64.b64decode(encoded)))


def zipped(folder: str | Path) -> bytes:
    """The folder as a zip archive (its files under one top folder named like it)."""
    folder = Path(folder)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, Path(folder.name) / path.relative_to(folder))
    return buffer.getvalue()
