"""Attention Explorer: look inside the 2017 Transformer ("Attention Is All You Need") as it translates.

The launcher: the page itself is built by `ui.build_demo(checkpoint)` (the ui/ package); this file
reads the settings (command line, then environment) and serves it with ui/server.py's limits.

`demo` exists at module level however the file runs: Hugging Face Spaces and `gradio app.py` look for it, and
`gradio app.py` (hot reload) re-executes this file as `__main__` after every change and serves the new `demo`
(the launch inside that re-run returns at once: the server is already up).

    python3 app.py                                  # checkpoints/de-en-small on 127.0.0.1:7860
    python3 app.py --checkpoint /tmp/dev-checkpoint --port 7861
    python3 app.py --hub owner/name --host 0.0.0.0  # a checkpoint from the Hugging Face Hub
    python3 app.py --device cpu                     # the CPU even where there is a GPU (default auto: cuda if any)
    python3 app.py --model opus-mt                  # open on Helsinki-NLP's OPUS-MT (downloaded on first start)

Environment: ATTENTION_EXPLORER_HUB (a Hub repo id: Spaces has no command line),
ATTENTION_EXPLORER_CHECKPOINT (a local checkpoint directory), ATTENTION_EXPLORER_HOST (0.0.0.0 listens
on all interfaces, as on Spaces), ATTENTION_EXPLORER_THREADS, ATTENTION_EXPLORER_DEVICE (auto, cpu or cuda),
GRADIO_SERVER_PORT, ATTENTION_EXPLORER_MODEL (own or opus-mt), ATTENTION_EXPLORER_OPUS_MT (a local copy of OPUS-MT),
ATTENTION_EXPLORER_PRELOAD_OPUS_MT (1: download OPUS-MT in the background at start-up and open on it once loaded;
ui/models.py). On a ZeroGPU Space (SPACES_ZERO_GPU, set by the Hub) every model computation runs through
one @spaces.GPU dispatcher (serving/zerogpu.py).
"""

from __future__ import annotations

import argparse
import os
import sys

import gradio as gr

from model.checkpoints.catalogue import MODELS, OPUS_MT_ENV
from model.checkpoints.paths import DEFAULT_CHECKPOINT
from serving.device import DEVICE_ENV, DEVICES
from ui import build_demo, own_files, server
from ui.models import MODEL_ENV

CHECKPOINT_ENV = "ATTENTION_EXPLORER_CHECKPOINT"
HUB_ENV = "ATTENTION_EXPLORER_HUB"


def checkpoint_source(checkpoint: str | None = None, hub: str | None = None) -> tuple[str, bool]:
    """(source, from the Hub?): --checkpoint / --hub, else $ATTENTION_EXPLORER_HUB, else
    $ATTENTION_EXPLORER_CHECKPOINT, else the shipped checkpoint."""
    if hub or checkpoint:
        return (hub, True) if hub else (str(checkpoint), False)
    if os.environ.get(HUB_ENV):
        return os.environ[HUB_ENV], True
    return os.environ.get(CHECKPOINT_ENV) or str(DEFAULT_CHECKPOINT), False


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Attention Explorer: look inside a Transformer translator.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--checkpoint", help=f"local checkpoint directory (default: ${CHECKPOINT_ENV} or {DEFAULT_CHECKPOINT})"
    )
    where.add_argument(
        "--hub",
        metavar="REPO_ID",
        help=f"load the checkpoint from this Hugging Face Hub repo (default: ${HUB_ENV}, if set)",
    )
    parser.add_argument(
        "--host",
        help=f"interface to listen on (default: ${server.HOST_ENV}, $GRADIO_SERVER_NAME "
        "or 127.0.0.1; 0.0.0.0 = all interfaces)",
    )
    parser.add_argument("--port", type=int, help="port (default: $GRADIO_SERVER_PORT or the first free from 7860)")
    parser.add_argument(
        "--threads",
        type=int,
        default=server.default_threads(),
        help=f"PyTorch CPU threads per request (default: ${server.THREADS_ENV} or 1: several "
        "requests run at once, and on a small CPU one thread each is fastest)",
    )
    parser.add_argument(
        "--model",
        choices=list(MODELS),
        default=None,
        help=f"the model the page opens on (default: ${MODEL_ENV} or own); opus-mt loads Helsinki-NLP's OPUS-MT "
        f"(from ${OPUS_MT_ENV}, a local copy, or else the Hugging Face Hub, about 300 MB per direction); the other "
        "model is a page of its own, reached by the model menu",
    )
    parser.add_argument(
        "--device",
        choices=DEVICES,
        default=None,
        help=f"where the model runs (default: ${DEVICE_ENV} or auto: cuda if PyTorch sees a GPU, "
        "else cpu); on a ZeroGPU Space always cuda, through @spaces.GPU",
    )
    return parser.parse_args(argv)


def page(args: argparse.Namespace) -> gr.Blocks:
    """The page for the parsed settings (ui.build_demo)."""
    return build_demo(*checkpoint_source(args.checkpoint, args.hub), device=args.device, model=args.model)


def serve(app: gr.Blocks, args: argparse.Namespace) -> None:
    server.launch(app, host=args.host, port=args.port, threads=args.threads)


def main(argv: list[str] | None = None) -> gr.Blocks:
    """Parse `argv`, build the page and serve it -> the page."""
    args = parse_args(argv)
    app = page(args)
    serve(app, args)
    return app


# Gradio's files go into this run's own folder ($GRADIO_TEMP_DIR, which Gradio reads as each component is made):
# claimed before the page is built, once per process (ui/own_files.py).
own_files.claim_temp_folder()
# Run as a program (`python3 app.py [options]`, Spaces, `gradio app.py [-- options]`), the command line applies;
# imported (tests), the environment alone.
ARGS = parse_args(sys.argv[1:] if __name__ == "__main__" else [])
demo = page(ARGS)

if __name__ == "__main__":
    serve(demo, ARGS)
