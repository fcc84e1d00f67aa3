"""A stand-in for the Hugging Face Hub over HTTP, for tests: huggingface_hub's real download code (snapshot_download,
hf_hub_download, with their progress bars) talks to it as to the Hub (no network beyond 127.0.0.1).

It serves folders as model repos: GET /api/models/{repo}/revision/{revision} (the repo's files and commit),
/api/models/{repo}/tree/{revision} (the listing), and
HEAD/GET /{repo}/resolve/{revision}/{file} with the headers the library reads (X-Repo-Commit, ETag,
Content-Length). `serve(monkeypatch, repos)` points huggingface_hub at it; `refuse(monkeypatch)` points it at a
port where nothing listens (a server that cannot reach the Hub).
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit


class HubServer:
    """repos: repo id -> folder (any revision is served from it)."""

    def __init__(self, repos: dict[str, Path]):
        self.repos = {repo: Path(folder) for repo, folder in repos.items()}
        self.requests: list[tuple[str, str]] = []  # (method, path)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                server.answer(self, body=False)

            def do_GET(self) -> None:
                server.answer(self, body=True)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def commit(self, repo: str) -> str:
        folder = self.repos[repo]
        digest = hashlib.sha1(repo.encode())
        for path in sorted(folder.iterdir()):
            digest.update(path.name.encode() + path.read_bytes())
        return digest.hexdigest()

    def answer(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        path = unquote(urlsplit(handler.path).path)
        self.requests.append((handler.command, path))
        if path.startswith("/api/models/"):
            repo = next(
                (r for r in self.repos if path.startswith((f"/api/models/{r}/revision/", f"/api/models/{r}/tree/"))),
                None,
            )
            if repo is None:
                return self.send(handler, 404, b'{"error": "Repository not found"}', {}, body)
            files = [p for p in sorted(self.repos[repo].iterdir()) if p.is_file()]
            if path.startswith(f"/api/models/{repo}/tree/"):  # the file listing (list_repo_tree)
                tree = [
                    {
                        "type": "file",
                        "path": p.name,
                        "size": p.stat().st_size,
                        "oid": hashlib.sha1(p.read_bytes()).hexdigest(),
                    }
                    for p in files
                ]
                return self.send(handler, 200, json.dumps(tree).encode(), {"Content-Type": "application/json"}, body)
            siblings = [{"rfilename": p.name} for p in files]
            info = {"id": repo, "modelId": repo, "sha": self.commit(repo), "siblings": siblings, "private": False}
            return self.send(handler, 200, json.dumps(info).encode(), {"Content-Type": "application/json"}, body)
        repo = next((r for r in self.repos if path.startswith(f"/{r}/resolve/")), None)
        if repo is None:
            return self.send(handler, 404, b"not found", {}, body)
        name = path.split("/")[-1]
        file = self.repos[repo] / name
        if not file.is_file():
            return self.send(handler, 404, b"Entry not found", {"X-Error-Code": "EntryNotFound"}, body)
        data = file.read_bytes()
        headers = {"X-Repo-Commit": self.commit(repo), "ETag": f'"{hashlib.sha256(data).hexdigest()}"'}
        return self.send(handler, 200, data, headers, body)

    @staticmethod
    def send(handler: BaseHTTPRequestHandler, status: int, data: bytes, headers: dict, body: bool) -> None:
        handler.send_response(status)
        for key, value in {"Content-Length": str(len(data)), **headers}.items():
            handler.send_header(key, value)
        handler.end_headers()
        if body:
            handler.wfile.write(data)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def point_at(monkeypatch, endpoint: str, cache: Path) -> None:
    """huggingface_hub online, at `endpoint`, with its cache in `cache` (it reads its settings once, at import)."""
    import huggingface_hub.constants as hub_constants

    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub_constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(
        hub_constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}"
    )
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(cache))


def serve(monkeypatch, repos: dict[str, Path], cache: Path) -> HubServer:
    server = HubServer(repos)
    point_at(monkeypatch, server.url, cache)
    return server


def refuse(monkeypatch, cache: Path) -> str:
    """Point huggingface_hub at a local port where nothing listens -> that address."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}"
    point_at(monkeypatch, endpoint, cache)
    return endpoint
