"""A runner over a model with one checkpoint per direction (OPUS-MT): each call runs on its direction's checkpoint,
in this process and through the ZeroGPU dispatcher, and a direction the model lacks is bad input."""

from __future__ import annotations

import dataclasses

import gradio as gr
import pytest

from model.checkpoints.marian import load_marian_checkpoint
from serving import Runner, jobs
from serving.zerogpu import gpu_dispatcher


@pytest.fixture(scope="module")
def by_direction(marian_de_en_folder, marian_en_de_folder):
    return {"de-en": load_marian_checkpoint(marian_de_en_folder), "en-de": load_marian_checkpoint(marian_en_de_folder)}


def test_each_call_runs_on_its_directions_checkpoint(by_direction):
    runner = Runner(by_direction["de-en"], None, by_direction)
    assert runner.model == "opus-mt" and runner.directions == ("de-en", "en-de")
    for direction, text in (("de-en", "Ein Hund läuft am Strand entlang."), ("en-de", "A dog runs along the beach.")):
        trace = jobs.translate(runner, text, direction)
        expected = jobs.translate.function(by_direction[direction], text, direction)
        assert trace.output_ids == expected.output_ids and trace.model == "opus-mt"
        # a job given the trace runs on the trace's direction
        recording = jobs.record_cache(runner, trace)
        assert recording.target_ids[0] == by_direction[direction].config.bos_id
        assert runner.padding_example(trace).tokens  # the Masks view's batch, with the direction's tokenizer
    with pytest.raises(gr.Error, match="this model translates de-en only; en-de is not one of them"):
        Runner(by_direction["de-en"], None, {"de-en": by_direction["de-en"]}).call(jobs.translate, "A dog.", "en-de")


def test_the_zerogpu_dispatcher_runs_the_directions_checkpoint(by_direction):
    """The one GPU entry point gets the direction with the job, and runs it on that direction's copy."""
    asked = []

    def gpu(duration):
        def decorate(function):
            def call(*args):
                asked.append((duration(*args), args[3]))  # what the GPU request would ask for, and the direction
                return function(*args)

            return call

        return decorate

    copies = {direction: dataclasses.replace(c) for direction, c in by_direction.items()}
    runner = Runner(by_direction["de-en"], gpu_dispatcher(copies, gpu=gpu), by_direction)
    trace = jobs.translate(runner, "A dog runs along the beach.", "en-de")
    assert trace.direction == "en-de" and trace.target_tokens[0] == "<pad>"
    assert trace.output_ids == jobs.translate.function(by_direction["en-de"], trace.source_text, "en-de").output_ids
    assert [direction for _, direction in asked] == ["en-de"] and asked[0][0] >= 1
