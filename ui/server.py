"""Server settings of Attention Explorer: where it listens, the queue, concurrency and limits.

Many users at once. Gradio gives every event listener its own pool of workers (concurrency_id defaults
to the function), so stepping and drawing never wait behind another user's translation. The model events share
one group (ui/runner.py's model_event) and CONCURRENCY_LIMIT model slots: that many model computations run at once in
threads (PyTorch releases the GIL); an event waits for its page's turn first and for a slot after it, holding no
thread meanwhile, so one page's queued events never hold the slots other visitors need. Measured on
2 busy cores with 6 translations at the limits (100 source / 120 output tokens) already running, a short sentence
took 22 s with 1 slot, 11.5 s with 4 and 1.4 s with 8: with 8 slots one long request does not stall everyone,
and 8 traces at the limits (~7 MB each) keep peak memory small.
At most QUEUE_MAX_SIZE events wait (each holds only its <= 5,000-character input; then "queue is full").
The server keeps the gr.State of at most STATE_SESSIONS sessions, oldest dropped first: <= 1.5 GB even if
every trace is at the limits (~0.4 MB for a typical sentence). api_open=False: API calls go through the same queue
and limits. What a request may bring (ui/request_limits.py): no upload (Gradio's upload routes answer 404; MAX_UPLOAD
caps them all the same) and no body over MAX_BODY_BYTES (413). Which files it may fetch (ui/own_files.py): only
those the app made, from its own temporary folder.
"""

from __future__ import annotations

import os

import gradio as gr
import torch
from starlette.middleware import Middleware

from .compressed_assets import CompressedAssets
from .own_files import OwnFilesOnly
from .page_script import page_css
from .request_limits import RequestLimits

CONCURRENCY_LIMIT = 8
QUEUE_MAX_SIZE = 256
STATE_SESSIONS = 200
MAX_UPLOAD = "1mb"
HOST_ENV = "ATTENTION_EXPLORER_HOST"
THREADS_ENV = "ATTENTION_EXPLORER_THREADS"


def server_host(cli_host: str | None = None) -> str:
    """--host, else $ATTENTION_EXPLORER_HOST, else $GRADIO_SERVER_NAME (set by Spaces), else 127.0.0.1 only."""
    return cli_host or os.environ.get(HOST_ENV) or os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1"


def default_threads() -> int:
    """$ATTENTION_EXPLORER_THREADS, else 1: on a small CPU one PyTorch thread per request is fastest."""
    return int(os.environ.get(THREADS_ENV, "1"))


def launch(
    demo: gr.Blocks, host: str | None = None, port: int | None = None, threads: int = 1, **launch_kwargs
) -> None:
    """Serve `demo` with the queue, session and request limits above and the page's style sheet, only its own files
    served (ui/own_files.py), its front-end files compressed once (ui/compressed_assets.py), and as an MCP server
    (/gradio_api/mcp/: the API endpoints become tools an LLM agent can call; needs gradio[mcp])."""
    torch.set_num_threads(max(1, threads))
    demo.queue(default_concurrency_limit=CONCURRENCY_LIMIT, max_size=QUEUE_MAX_SIZE, api_open=False)
    demo.launching = True  # a page built after start-up waits for the server (ui/later_model.py mount_page)
    demo.launch(
        server_name=server_host(host),
        server_port=port,
        css=page_css(),
        head=getattr(demo, "page_head", None),  # ui/page_script.py: Plotly fetched from the start
        ssr_mode=False,
        state_session_capacity=STATE_SESSIONS,
        max_file_size=MAX_UPLOAD,
        mcp_server=True,
        app_kwargs={
            "middleware": [
                Middleware(RequestLimits),
                Middleware(OwnFilesOnly, blocks=demo),
                Middleware(CompressedAssets),
            ]
        },
        **launch_kwargs,
    )
