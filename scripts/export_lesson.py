"""Export the views of chosen sentences as a lesson: one folder whose index.html plays offline (docs/lesson.md).

python3 -m scripts.export_lesson --out lesson-1 "Ein Mann fährt Fahrrad." "Zwei Hunde spielen im Schnee."
python3 -m scripts.export_lesson --out lesson-2 --model opus-mt --direction en-de --title "Week 3" "A dog runs."
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gradio as gr

from lesson import LessonSentence, write_lesson
from model.checkpoints.catalogue import MODELS, OPUS_MT_ENV, load_opus_mt
from model.checkpoints.checkpoint import CheckpointError, load_checkpoint
from model.checkpoints.paths import DEFAULT_CHECKPOINT
from model.text import limits
from model.text.tokenizer import DIRECTIONS
from serving import jobs
from serving.runner import Runner


def runner_for(model: str, direction: str, checkpoint: str, opus_mt: str | None) -> Runner:
    """A runner (serving/) over the chosen model: the own checkpoint, or OPUS-MT of the direction."""
    if model == "opus-mt":
        loaded = load_opus_mt(direction, folder=opus_mt)
        return Runner.start(loaded, by_direction={direction: loaded})
    return Runner.start(load_checkpoint(checkpoint))


def check_sentences(sentences: list[str]) -> None:
    """Every sentence checked before any model is loaded, by the page's rules (ValueError naming the sentence)."""
    for number, text in enumerate(sentences, start=1):
        if not text.strip():
            raise ValueError(f"sentence {number} is empty")
        if len(text) > limits.MAX_INPUT_CHARS:
            raise ValueError(
                f"sentence {number} is {len(text):,} characters long; the limit is {limits.MAX_INPUT_CHARS:,}"
            )


def export(args: argparse.Namespace) -> Path:
    check_sentences(args.sentences)
    runner = runner_for(args.model, args.direction, args.checkpoint, args.opus_mt)
    sentences = []
    for i, text in enumerate(args.sentences):
        trace = jobs.translate(runner, text, args.direction)
        title = args.heading[i] if i < len(args.heading) else ""
        note = args.note[i] if i < len(args.note) else ""
        sentences.append(LessonSentence.of(runner, trace, title, note))
    return write_lesson(sentences, args.out, args.title)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m scripts.export_lesson", description=__doc__.splitlines()[0])
    parser.add_argument("sentences", nargs="+", metavar="SENTENCE", help="the sentences, in the lesson's order")
    parser.add_argument("--out", required=True, help="the folder to write (made if missing)")
    parser.add_argument("--model", choices=list(MODELS), default="own")
    parser.add_argument("--direction", choices=DIRECTIONS, default="de-en")
    parser.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT), help="the own model's checkpoint folder")
    parser.add_argument(
        "--opus-mt", default=None, help=f"a folder holding opus-mt-de-en/ and opus-mt-en-de/ (else ${OPUS_MT_ENV})"
    )
    parser.add_argument("--title", default="Attention Is All You Need: a lesson", help="the lesson's title")
    parser.add_argument("--heading", action="append", default=[], help="a sentence's title, in order (repeat)")
    parser.add_argument("--note", action="append", default=[], help="a note under a sentence, in order (repeat)")
    args = parser.parse_args(argv)
    try:
        index = export(args)
    except (CheckpointError, ValueError, gr.Error) as error:  # a refused sentence: gr.Error, as on the page
        print(f"error: {error}", file=sys.stderr)
        return 2
    size = sum(path.stat().st_size for path in index.parent.rglob("*") if path.is_file())
    print(f"{index} ({len(args.sentences)} sentences, {size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
