"""What scripts/deploy_space.py uploads to a Space: the project folder less what the running app never reads
(IGNORE_PATTERNS, .gitignore, and every checkpoint: the weights live in their own model repo, which the Space
loads), the Space's README (the project's, its front matter listing that model repo), and the checks the Hub and
the app would otherwise make after the upload (file size, required files).
"""

from __future__ import annotations

import re
from pathlib import Path

from huggingface_hub.hf_api import DEFAULT_IGNORE_PATTERNS
from huggingface_hub.utils import filter_repo_objects

from model.checkpoints.checkpoint import HUB_MAX_FILE_BYTES

# huggingface_hub's patterns are fnmatch globs on paths relative to the folder; "*" also matches "/",
# and "name/" means everything under name/.
IGNORE_PATTERNS = [
    # hidden files and folders: .git, .venv, .pytest_cache, .gradio, .cache, .ci, ...
    ".*",
    "*/.*",
    # training runs, data sets, a device share, Gradio flags
    "runs/",
    "data/",
    "shared/",
    "flagged/",
    # build and test leftovers
    "*__pycache__*",
    "*.pyc",
    "*.egg-info*",
    "test-results/",
    "playwright-report/",
    "htmlcov/",
    "*.log",
    "benchmarks/results/*.tmp",
    # parallel text never ships: its licences are not the code's
    "*.tsv",
    "*.de",
    "*.en",
    # weights are safetensors only
    "*.pt",
    "*.pth",
    "*.bin",
    "*.ckpt",
    "*.pkl",
    "*.pickle",
    # what the running app never reads: tests, measurements, maintenance scripts and their requirements
    "tests/",
    "benchmarks/",
    "scripts/",
    "pytest.ini",
    "requirements-test.txt",
    "pre-requirements.txt",  # written per hardware by this command (space_files), never taken from the folder
    # the weights are the model repo's (ATTENTION_EXPLORER_HUB), not the Space's
    "checkpoints/",
]


class DeployError(Exception):
    """Something to fix before deploying; the message says what."""


def gitignore_patterns(text: str) -> list[str]:
    """A .gitignore's lines as upload_folder's patterns (fnmatch on paths relative to the root, where "*"
    also matches "/" and "name/" means everything under name/).

    "/x" or "a/x" is anchored at the root; "x" matches at any depth; "x/" only folders. Negations ("!x")
    have no upload_folder equivalent and are refused rather than ignored.
    """
    patterns = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("!"):
            raise DeployError(f".gitignore line {line!r}: negations are not supported by the upload filter")
        anchored = "/" in line.rstrip("/")  # a slash before the end anchors the pattern (git's rule)
        body = line.lstrip("/")
        forms = [body] if body.endswith("/") else [body, f"{body}/"]  # a file pattern may name a folder
        patterns += forms + ([] if anchored else [f"*/{form}" for form in forms])
    return patterns


def ignore_patterns(root: Path) -> list[str]:
    """IGNORE_PATTERNS and what root/.gitignore names."""
    gitignore = root / ".gitignore"
    return IGNORE_PATTERNS + (gitignore_patterns(gitignore.read_text(encoding="utf-8")) if gitignore.is_file() else [])


def selected_files(folder: Path, allow: list[str] | None, ignore: list[str] | None) -> list[str]:
    """The files upload_folder uploads from folder: huggingface_hub's own filter over the same listing."""
    paths = sorted(p.relative_to(folder).as_posix() for p in folder.glob("**/*") if p.is_file())
    ignore = None if ignore is None else list(ignore) + DEFAULT_IGNORE_PATTERNS
    return list(filter_repo_objects(paths, allow_patterns=allow, ignore_patterns=ignore))


def app_files(root: Path) -> dict[str, Path]:
    """Path in the Space -> file on disk: the project folder less ignore_patterns(root)."""
    return {relative: root / relative for relative in selected_files(root, None, ignore_patterns(root))}


def space_models(model_repo: str, opus_mt: bool = True) -> list[str]:
    """The Space's `models:` (front matter): OPUS-MT's two repos (model/checkpoints/catalogue.py), then the own."""
    from model.checkpoints.catalogue import OPUS_MT_REPOS

    return [*(repo for repo, _ in OPUS_MT_REPOS.values() if opus_mt), model_repo]


def space_readme(text: str, *model_repos: str) -> str:
    """The project's README with the Space front matter's `models:` listing model_repos (the Hub links each model's
    page and the Space)."""
    listed = "".join(f"\n  - {repo}" for repo in model_repos)
    front, count = re.subn(r"(?m)^models:.*$", lambda _: f"models:{listed}", text, count=1)
    if not count or not text.startswith("---\n"):
        raise DeployError("README.md's front matter has no `models:` line to list the model repo in")
    return front


def check_files(files: dict[str, Path]) -> None:
    """Refuse what the Hub (or the app) would refuse: big files, a missing app, README or requirements."""
    too_big = [
        f"{name} ({path.stat().st_size / 1e6:.1f} MB)"
        for name, path in files.items()
        if path.stat().st_size >= HUB_MAX_FILE_BYTES
    ]
    if too_big:
        raise DeployError(
            f"files of {HUB_MAX_FILE_BYTES / 1e6:.0f} MB or more would break a plain git push to "
            f"the Space: {', '.join(too_big)}"
        )
    for required in ("README.md", "app.py", "requirements.txt"):
        if required not in files:
            raise DeployError(f"{required} would not be uploaded")
