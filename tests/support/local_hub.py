"""The Hugging Face Hub as a local folder, for tests (no network).

Uploads (HfApi.create_repo / upload_folder, as push_to_hub and the deploy call them) land in
huggingface_hub's own cache layout (models--owner--name/refs/main -> snapshots/<commit>/...; a Space's in
spaces--owner--name), applying
the library's pattern filter (filter_repo_objects, plus upload_folder's DEFAULT_IGNORE_PATTERNS) and
delete_patterns as the Hub does. A Space's variables, hardware and restarts are recorded. Downloads are then huggingface_hub's real code in offline mode
(snapshot_download, hf_hub_download) reading that cache: what was pushed is what comes back.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from huggingface_hub.hf_api import DEFAULT_IGNORE_PATTERNS, CommitInfo, RepoUrl
from huggingface_hub.utils import filter_repo_objects, validate_repo_id

ENDPOINT = "https://huggingface.co"


class LocalHub:
    """A stand-in for HfApi: repo_id -> a folder in the cache; calls are recorded in `calls`."""

    def __init__(self, cache: Path):
        self.cache = Path(cache)
        self.calls: list[tuple[str, str, dict]] = []
        self.variables: dict[str, dict[str, str]] = {}  # Space id -> its variables
        self.restarts: list[str] = []  # Space ids, in the order they were restarted

    def __call__(self, *args, **kwargs) -> "LocalHub":  # HfApi(token=...) -> this hub
        return self

    def repo_folder(self, repo_id: str, repo_type: str | None = None) -> Path:
        kind = "spaces" if repo_type == "space" else "models"
        return self.cache / f"{kind}--{repo_id.replace('/', '--')}"

    def snapshot(self, repo_id: str, repo_type: str | None = None) -> Path | None:
        """The folder of the repo's latest commit (None before the first)."""
        ref = self.repo_folder(repo_id, repo_type) / "refs" / "main"
        return self.repo_folder(repo_id, repo_type) / "snapshots" / ref.read_text() if ref.is_file() else None

    def files(self, repo_id: str, repo_type: str | None = None) -> dict[str, bytes]:
        """Path in the repo -> content, at the latest commit."""
        folder = self.snapshot(repo_id, repo_type)
        return (
            {}
            if folder is None
            else {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
        )

    def create_repo(self, repo_id: str, *, repo_type: str | None = None, exist_ok: bool = False, **kwargs) -> RepoUrl:
        validate_repo_id(repo_id)
        self.calls.append(("create_repo", repo_id, {"repo_type": repo_type, "exist_ok": exist_ok, **kwargs}))
        assert repo_type in (None, "model", "space"), "the stand-in holds model repos and Spaces"
        if self.repo_folder(repo_id, repo_type).exists() and not exist_ok:
            raise FileExistsError(repo_id)
        (self.repo_folder(repo_id, repo_type) / "refs").mkdir(parents=True, exist_ok=True)
        return RepoUrl(f"{ENDPOINT}/{'spaces/' if repo_type == 'space' else ''}{repo_id}", endpoint=ENDPOINT)

    def request_space_hardware(self, repo_id: str, hardware: str, **kwargs) -> None:
        self.calls.append(("request_space_hardware", repo_id, {"hardware": hardware, **kwargs}))

    def add_space_variable(self, repo_id: str, key: str, value: str, **kwargs) -> None:
        self.calls.append(("add_space_variable", repo_id, {"key": key, "value": value}))
        self.variables.setdefault(repo_id, {})[key] = value

    def restart_space(self, repo_id: str, **kwargs) -> None:
        self.calls.append(("restart_space", repo_id, kwargs))
        self.restarts.append(repo_id)

    def upload_folder(
        self,
        *,
        repo_id: str,
        folder_path,
        repo_type: str | None = None,
        path_in_repo: str | None = None,
        allow_patterns=None,
        ignore_patterns=None,
        delete_patterns=None,
        **kwargs,
    ) -> CommitInfo:
        """One commit: the folder's selected files over the previous commit's (minus delete_patterns matches)."""
        self.calls.append(
            (
                "upload_folder",
                repo_id,
                {
                    "folder_path": folder_path,
                    "allow_patterns": allow_patterns,
                    "ignore_patterns": ignore_patterns,
                    **kwargs,
                },
            )
        )
        repo = self.repo_folder(repo_id, repo_type)
        assert (repo / "refs").is_dir(), f"{repo_id} was not created"
        folder = Path(folder_path)
        ignore = list([ignore_patterns] if isinstance(ignore_patterns, str) else ignore_patterns or [])
        listing = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        uploads = {
            f"{path_in_repo.strip('/')}/{name}" if path_in_repo else name: (folder / name).read_bytes()
            for name in filter_repo_objects(
                listing, allow_patterns=allow_patterns, ignore_patterns=ignore + DEFAULT_IGNORE_PATTERNS
            )
        }
        kept = self.files(repo_id, repo_type)
        if delete_patterns:
            doomed = set(filter_repo_objects(list(kept), allow_patterns=delete_patterns))
            kept = {name: data for name, data in kept.items() if name not in doomed}
        tree = {**kept, **uploads}
        commit = hashlib.sha1(
            b"".join(name.encode() + hashlib.sha1(data).digest() for name, data in sorted(tree.items()))
        ).hexdigest()
        snapshot = repo / "snapshots" / commit
        shutil.rmtree(snapshot, ignore_errors=True)
        for name, data in tree.items():
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            (snapshot / name).write_bytes(data)
        (repo / "refs" / "main").write_text(commit)
        return CommitInfo(
            commit_url=f"{ENDPOINT}/{repo_id}/commit/{commit}",
            oid=commit,
            commit_message=kwargs.get("commit_message"),
            commit_description="",
        )


def install(monkeypatch, cache: Path) -> LocalHub:
    """Hub offline, its cache at `cache`, and HfApi (as push_to_hub calls it) replaced by a LocalHub there."""
    import huggingface_hub.constants as hub_constants
    import huggingface_hub.hub_mixin as hub_mixin

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    # huggingface_hub reads its environment once, at import: set the module constants as well
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(cache))
    hub = LocalHub(cache)
    monkeypatch.setattr(hub_mixin, "HfApi", hub)
    return hub
