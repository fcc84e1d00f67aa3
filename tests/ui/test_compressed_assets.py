"""The page's front-end files compressed once (ui/compressed_assets.py), behind Gradio's own Brotli middleware.

A small Starlette app stands in for Gradio's file routes and counts how often each is asked for; it is wrapped as
the served app is (Gradio's BrotliMiddleware outside, `CompressedAssets` inside). The last test asks the app as
`ui.server.launch` serves it for Plotly's bundle, the largest file of every first visit.
"""

from __future__ import annotations

import re
from collections import Counter

import brotli
import httpx
import pytest
from gradio.brotli_middleware import BrotliMiddleware
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from ui import build_demo, server
from ui.compressed_assets import QUALITY, CompressedAssets

SCRIPT = ("function draw(figure) { return figure.data.map((trace) => trace.z); }\n" * 400).encode()
BR = {"Accept-Encoding": "gzip, deflate, br"}


@pytest.fixture
def asked() -> Counter:
    return Counter()


@pytest.fixture
def client(asked: Counter) -> TestClient:
    def asset(request):
        asked[request.url.path] += 1
        return Response(SCRIPT, media_type="text/javascript", headers={"etag": '"v1"', "accept-ranges": "bytes"})

    def missing(request):
        asked[request.url.path] += 1
        return PlainTextResponse("no such file", status_code=404)

    routes = [
        Route("/assets/index-abc123.js", asset, methods=["GET", "HEAD"]),
        Route("/assets/gone-abc123.js", missing),
        Route("/gradio_api/file=notes.js", asset),
    ]
    app = BrotliMiddleware(CompressedAssets(Starlette(routes=routes)), quality=4)  # as Gradio stacks them
    return TestClient(app)


def raw_get(client: TestClient, path: str, headers: dict) -> tuple[httpx.Response, bytes]:
    """The answer and its body as sent (still encoded)."""
    with client.stream("GET", path, headers=headers) as response:
        return response, b"".join(response.iter_raw())


def test_an_asset_is_compressed_once_and_sent_from_memory_after(client, asked):
    first, first_body = raw_get(client, "/assets/index-abc123.js", BR)
    again, again_body = raw_get(client, "/assets/index-abc123.js", BR)
    assert asked["/assets/index-abc123.js"] == 1  # the second answer did not reach the file route
    assert first_body == again_body == brotli.compress(SCRIPT, quality=QUALITY, lgwin=22)
    assert brotli.decompress(again_body) == SCRIPT  # compressed once only: Gradio's middleware let it through
    for response in (first, again):
        assert response.status_code == 200
        assert response.headers["content-encoding"] == "br"
        assert response.headers["content-length"] == str(len(first_body))
        assert response.headers["content-type"].startswith("text/javascript")
        assert response.headers["etag"] == '"v1"' and response.headers["vary"] == "Accept-Encoding"
        assert "accept-ranges" not in response.headers  # a range of the compressed bytes is not the file's range


@pytest.mark.parametrize(
    "method, path, headers",
    [
        ("GET", "/assets/index-abc123.js", {"Accept-Encoding": "gzip"}),  # no Brotli: Gradio gzips it
        ("GET", "/assets/index-abc123.js", {**BR, "If-None-Match": '"v1"'}),  # the server's own 304 logic
        ("GET", "/assets/index-abc123.js", {**BR, "Range": "bytes=0-99"}),
        ("HEAD", "/assets/index-abc123.js", BR),
        ("GET", "/gradio_api/file=notes.js", BR),  # not a front-end asset: may change while the server runs
    ],
)
def test_other_requests_reach_the_server_every_time(client, asked, method, path, headers):
    for _ in range(2):
        response = client.request(method, path, headers=headers)
        assert response.status_code == 200
    assert asked[path] == 2
    if method == "GET":
        assert response.content == SCRIPT  # decoded by the client whatever the encoding


def test_a_failed_answer_is_passed_on_and_not_kept(client, asked):
    for _ in range(2):
        response = client.get("/assets/gone-abc123.js", headers=BR)
        assert response.status_code == 404 and response.text == "no such file"
    assert asked["/assets/gone-abc123.js"] == 2


@pytest.fixture(scope="module")
def launched(tiny_checkpoint):
    demo = build_demo(tiny_checkpoint)
    server.launch(demo, host="127.0.0.1", prevent_thread_lock=True)
    yield demo
    loopback = getattr(demo.mcp_server_obj, "_client_instance", None)
    if loopback is not None:
        loopback.close()
    demo.close()


def test_the_launched_app_sends_plotly_compressed_once(launched):
    page = httpx.get(launched.local_url, timeout=30).text
    plotly = re.search(r"assets/PlotlyPlot-[^\"\\]+\.js", page)  # the page's head (in its config) preloads it
    assert plotly, "the page no longer preloads Plotly's bundle"
    url = launched.local_url + plotly.group(0)
    plain = httpx.get(url, headers={"Accept-Encoding": "identity"}, timeout=30)
    bodies = []
    for _ in range(2):
        with httpx.stream("GET", url, headers=BR, timeout=30) as response:
            assert response.headers["content-encoding"] == "br"
            bodies.append(b"".join(response.iter_raw()))
    assert plain.status_code == 200 and len(plain.content) > 1_000_000
    assert bodies[0] == bodies[1] == brotli.compress(plain.content, quality=QUALITY, lgwin=22)
