"""The page's script and style files compressed once, not for every visitor.

Gradio compresses each response with Brotli as it goes out, on every request: about 80 ms of the server's CPU
for Plotly's 4.6 MB bundle alone (a 2-core AMD EPYC), spent again for each visitor and, where the server and the
browser share a small machine, taken from the page being built. Gradio's front-end files under `/assets/` are
named by their content's hash, so they do not change while the server runs: `CompressedAssets` compresses each
one once, on its first request, and answers every later request for it from memory with the same bytes. Gradio's
compression passes a response that is already encoded through untouched, so each asset is compressed once.

Everything else goes through as it came: other paths, HEAD, a client that does not accept Brotli, conditional
and range requests (the server's 304s and partial answers stay its own) and any answer other than 200.
"""

from __future__ import annotations

import asyncio
import re

import brotli
from starlette.types import ASGIApp, Message, Receive, Scope, Send

ASSET_PATH = re.compile(r"/assets/[^/]+\.(?:js|css)$")  # Gradio's front end: hashed names, never changed
QUALITY = 5  # Brotli quality: Plotly's bundle 4.6 MB -> 1.13 MB in ~90 ms, once (Gradio sends quality 4: 1.23 MB)
PASSED_ON = {"range", "if-none-match", "if-modified-since", "if-range"}  # answered by the server itself
DROPPED = {b"content-length", b"content-encoding", b"accept-ranges", b"vary"}  # of the answer, set anew


def wants_compressed(scope: Scope) -> bool:
    """A plain GET of a front-end asset from a client that accepts Brotli."""
    if scope.get("type") != "http" or scope.get("method") != "GET" or not ASSET_PATH.search(scope.get("path", "")):
        return False
    headers = {name.decode("latin-1").lower(): value for name, value in scope.get("headers", [])}
    accepted = [coding.split(b";")[0].strip() for coding in headers.get("accept-encoding", b"").split(b",")]
    return b"br" in accepted and not PASSED_ON & headers.keys()


class CompressedAssets:
    """ASGI middleware: each front-end asset compressed once and kept ({path: (headers, compressed body)})."""

    def __init__(self, app: ASGIApp, quality: int = QUALITY) -> None:
        self.app = app
        self.quality = quality
        self.kept: dict[str, tuple[list[tuple[bytes, bytes]], bytes]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not wants_compressed(scope):
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path not in self.kept:
            start, body = await self.answer(scope, receive)
            if start["status"] != 200:  # the server's own answer, as it gave it
                await send(start)
                await send({"type": "http.response.body", "body": body})
                return
            compressed = await asyncio.to_thread(self.compress, body)
            headers = [(name, value) for name, value in start.get("headers", []) if name.lower() not in DROPPED]
            headers += [(b"content-encoding", b"br"), (b"vary", b"Accept-Encoding")]
            self.kept[path] = (headers, compressed)
        headers, compressed = self.kept[path]
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [*headers, (b"content-length", str(len(compressed)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": compressed})

    async def answer(self, scope: Scope, receive: Receive) -> tuple[Message, bytes]:
        """The wrapped app's whole answer: (its response start, its body)."""
        start: Message = {}
        parts: list[bytes] = []

        async def keep(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                parts.append(message.get("body", b""))

        await self.app(scope, receive, keep)
        return start, b"".join(parts)

    def compress(self, body: bytes) -> bytes:
        return brotli.compress(body, quality=self.quality, lgwin=22)
