"""What the server takes from a request: no uploads, and no body larger than the largest valid input.

The app takes no file, so Gradio's upload routes (`/gradio_api/upload`, its progress, `/gradio_api/process_recording`)
answer 404 with a short plain body; Gradio would otherwise store any anonymous client's file in its cache and
answer with the file's path on the server.

A body may be at most MAX_BODY_BYTES. The largest valid request is one of the page's events: it sends every input
of the page (ui/common.py's Page), of which TEXT_INPUTS are free text (the sentence and Compare's second sentence),
each at most MAX_INPUT_CHARS characters (model/text/limits.py) and, in JSON, at most JSON_BYTES_PER_CHAR bytes per
character (a control character written as \\u0001); the share link's box (which a tab whose session was dropped is
restored from, ui/renewal.py) holds both sentences again, percent-encoded, at most LINK_BYTES_PER_CHAR bytes per
character (one outside the Basic Multilingual Plane: four UTF-8 bytes, each %XX); everything else (menus, radios,
sliders, the ablation's ticked heads, the page's mark) stays under OTHER_INPUTS_BYTES. A larger body is refused with 413 and one plain line before the
server reads it: at once where it states its Content-Length, after at most MAX_BODY_BYTES where it is sent in
chunks without one (it is held here, then handed on whole).
"""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from model.text.limits import MAX_INPUT_CHARS

TEXT_INPUTS = 2  # free-text boxes among a page event's inputs (tests/ui/test_server_limits.py counts them)
JSON_BYTES_PER_CHAR = 6  # the most JSON spends on one character: "\u0001"
LINK_BYTES_PER_CHAR = 12  # the most the share link spends on one character of a sentence: "%F0%9F%98%80"
OTHER_INPUTS_BYTES = 16_384  # every other input of an event, with room to spare (about 1 KB at their largest)
MAX_BODY_BYTES = TEXT_INPUTS * MAX_INPUT_CHARS * (JSON_BYTES_PER_CHAR + LINK_BYTES_PER_CHAR) + OTHER_INPUTS_BYTES
UPLOAD_PATHS = re.compile(r"/gradio_api/(?:upload|upload_progress|process_recording)/?$")
NO_UPLOADS = "This app takes no uploads."
TOO_LARGE = f"The request is larger than this app accepts (at most {MAX_BODY_BYTES:,} bytes)."
BAD_LENGTH = "The request's Content-Length is not a number."


async def answer(send: Send, status: int, text: str) -> None:
    """A plain-text answer."""
    body = text.encode("utf-8")
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class RequestLimits:
    """ASGI middleware: upload routes refused, request bodies limited to `max_body` bytes."""

    def __init__(self, app: ASGIApp, max_body: int = MAX_BODY_BYTES) -> None:
        self.app, self.max_body = app, max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        if UPLOAD_PATHS.search(scope.get("path", "")):
            await answer(send, 404, NO_UPLOADS)
            return
        headers = dict(scope.get("headers", []))
        length = headers.get(b"content-length")
        if length is not None:
            if not length.strip().isdigit():  # bytes.isdigit: ASCII digits only
                await answer(send, 400, BAD_LENGTH)
            elif int(length) > self.max_body:
                await answer(send, 413, TOO_LARGE)
            else:
                await self.app(scope, receive, send)
            return
        if b"chunked" not in headers.get(b"transfer-encoding", b"").lower():
            await self.app(scope, receive, send)  # no body (a GET)
            return
        body = await self.read_body(receive)
        if body is None:
            await answer(send, 413, TOO_LARGE)
            return
        await self.app(scope, replayed(body, receive), send)

    async def read_body(self, receive: Receive) -> bytes | None:
        """A chunked body, whole -> its bytes, or None as soon as it passes max_body (or the client leaves)."""
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def replayed(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives `body` in one message, then what the client sends next (its disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
