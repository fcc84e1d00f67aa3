"""Attention Explorer: look inside the 2017 Transformer ("Attention Is All You Need") as it translates.

The launcher: the page itself is built by `ui.build_demo(checkpoint)` (the ui/ package); this file
reads the settings (command line, then environment) and serves it with ui/server.py's limits.
`demo` at module level is what Hugging Face Spaces and `gradio app.py` look for.

    python3 app.py                                  # checkpoints/de-en-small on 127.0.0.1:7860
    python3 app.py --checkpoint /tmp/dev-checkpoint --port 7861
    python3 app.py --hub owner/name --host 0.0.0.0  # a checkpoint from the Hugging Face Hub
    python3 app.py --device cpu                     # the CPU even where there is a GPU (default auto: cuda if any)

Environment: ATTENTION_EXPLORER_HUB (a Hub repo id: Spaces has no command line),
ATTENTION_EXPLORER_CHECKPOINT (a local checkpoint directory), ATTENTION_EXPLORER_HOST (0.0.0.0 listens
on all interfaces, as on Spaces), ATTENTION_EXPLORER_THREADS, ATTENTION_EXPLORER_DEVICE (auto, cpu or cuda),
GRADIO_SERVER_PORT. On a ZeroGPU Space (SPACES_ZERO_GPU, set by the Hub) the model goes to cuda at start-up and
every model computation runs through @spaces.GPU (serving/zerogpu.py).
"""

from __future__ import annotations

import argparse
import os

from model.checkpoints.paths import DEFAULT_CHECKPOINT
from serving.device import DEVICE_ENV, DEVICES
from ui import build_demo, server

CHECKPOINT_ENV = "ATTENTION_EXPLORER_CHECKPOINT"
HUB_ENV = "ATTENTION_EXPLORER_HUB"
RELOAD_ENV = "GRADIO_WATCH_DIRS"  # set by `gradio app.py` (hot reload), which re-runs this file on every change


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
    where.add_argument("--checkpoint", help=f"local checkpoint directory (default: ${CHECKPOINT_ENV} or "
                                            f"{DEFAULT_CHECKPOINT})")
    where.add_argument("--hub", metavar="REPO_ID", help=f"load the checkpoint from this Hugging Face Hub repo "
                                                        f"(default: ${HUB_ENV}, if set)")
    parser.add_argument("--host", help=f"interface to listen on (default: ${server.HOST_ENV}, $GRADIO_SERVER_NAME "
                                       "or 127.0.0.1; 0.0.0.0 = all interfaces)")
    parser.add_argument("--port", type=int, help="port (default: $GRADIO_SERVER_PORT or the first free from 7860)")
    parser.add_argument("--threads", type=int, default=server.default_threads(),
                        help=f"PyTorch CPU threads per request (default: ${server.THREADS_ENV} or 1: several "
                             "requests run at once, and on a small CPU one thread each is fastest)")
    parser.add_argument("--device", choices=DEVICES, default=None,
                        help=f"where the model runs (default: ${DEVICE_ENV} or auto: cuda if PyTorch sees a GPU, "
                             "else cpu); on a ZeroGPU Space always cuda, through @spaces.GPU")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    app = build_demo(*checkpoint_source(args.checkpoint, args.hub), device=args.device)
    server.launch(app, host=args.host, port=args.port, threads=args.threads)


if __name__ == "__main__":
    main()
else:  # imported (tests, `gradio app.py`)
    demo = build_demo(*checkpoint_source(), device=None)  # None: $ATTENTION_EXPLORER_DEVICE or auto
