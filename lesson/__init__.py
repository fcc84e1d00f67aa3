"""A lesson: the views of chosen sentences as one static folder whose index.html plays offline (file://).

One job per file: ``sentence`` (a trace and what its views need, as the page's data), ``figures`` (the app's
figure functions of visualizer/, as JSON specs whose attention refers to the exported arrays), ``arrays``
(numbers packed as base64), ``sections`` (the views and the paper's section beside each: "Attention Is All You
Need", sections 3.2-3.5), ``start`` (where the page opens), ``page`` (index.html), ``writer`` (the folder and its zip); the page's own script is
``player.js``, its look ``page.css``, Plotly's partial bundle is in ``vendor/``. No Gradio here: traces come
from a runner (serving/) given by the caller (scripts/export_lesson.py, ui/lesson.py).
"""

from .sentence import LessonSentence
from .start import Start
from .writer import write_lesson, zipped

__all__ = ["LessonSentence", "Start", "write_lesson", "zipped"]
