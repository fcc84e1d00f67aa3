"""What scripts/deploy_space.py uploads to a Space: the project folder less what the running app never reads
(IGNORE_PATTERNS, .gitignore, the other checkpoints), the checkpoint from outside checkpoints/ if that is where
it is, and the checks the Hub and the app would otherwise make after the upload (file size, required files).
"""

from __future__ import annotations

from pathlib import Path

from huggingface_hub.hf_api import DEFAULT_IGNORE_PATTERNS
from huggingface_hub.utils import filter_repo_objects

from model.checkpoints.checkpoint import HUB_MAX_FILE_BYTES
from model.checkpoints.files import CHECKPOINT_FILES

CHECKPOINTS_DIR = "checkpoints"
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


def ignore_patterns(root: Path, checkpoint: Path) -> list[str]:
    """IGNORE_PATTERNS, what root/.gitignore names, and every folder of checkpoints/ but the one deployed."""
    gitignore = root / ".gitignore"
    ignored = gitignore_patterns(gitignore.read_text(encoding="utf-8")) if gitignore.is_file() else []
    folders = sorted(p for p in (root / CHECKPOINTS_DIR).glob("*") if p.is_dir())
    return (
        IGNORE_PATTERNS
        + ignored
        + [f"{CHECKPOINTS_DIR}/{p.name}/" for p in folders if p.resolve() != checkpoint.resolve()]
    )


def selected_files(folder: Path, allow: list[str] | None, ignore: list[str] | None) -> list[str]:
    """The files upload_folder uploads from folder: huggingface_hub's own filter over the same listing."""
    paths = sorted(p.relative_to(folder).as_posix() for p in folder.glob("**/*") if p.is_file())
    ignore = None if ignore is None else list(ignore) + DEFAULT_IGNORE_PATTERNS
    return list(filter_repo_objects(paths, allow_patterns=allow, ignore_patterns=ignore))


def plan(root: Path, checkpoint: Path) -> list[dict]:
    """The upload_folder calls of a deploy, as keyword arguments (without repo_id, token).

    One call when the checkpoint is inside root/checkpoints/ (the usual case: one commit); a
    checkpoint from elsewhere (runs/base/best) is uploaded to checkpoints/<its folder name>/.
    """
    checkpoint = checkpoint.resolve()
    inside = checkpoint.parent == (root / CHECKPOINTS_DIR).resolve()
    # delete_patterns "*": the Space mirrors the folder (stale files go; the Hub always keeps .gitattributes)
    calls = [{"folder_path": str(root), "ignore_patterns": ignore_patterns(root, checkpoint), "delete_patterns": ["*"]}]
    if not inside:
        if (root / CHECKPOINTS_DIR / checkpoint.name).exists():
            raise DeployError(
                f"{CHECKPOINTS_DIR}/{checkpoint.name} already exists here; rename {checkpoint} "
                "or copy it into checkpoints/ under a new name"
            )
        # every file of the checkpoint, its npz files included; never code, pickles or a run's optimizer state
        calls.append(
            {
                "folder_path": str(checkpoint),
                "path_in_repo": f"{CHECKPOINTS_DIR}/{checkpoint.name}",
                "allow_patterns": CHECKPOINT_FILES,
            }
        )
    return calls


def uploaded_files(calls: list[dict]) -> dict[str, Path]:
    """Path in the Space -> file on disk, for every file the calls upload."""
    files = {}
    for call in calls:
        folder, prefix = Path(call["folder_path"]), call.get("path_in_repo", "")
        for relative in selected_files(folder, call.get("allow_patterns"), call.get("ignore_patterns")):
            files[f"{prefix}/{relative}" if prefix else relative] = folder / relative
    return files


def check_files(files: dict[str, Path], checkpoint_in_space: str) -> None:
    """Refuse what the Hub (or the app) would refuse: big files, a missing app, README or checkpoint."""
    too_big = [
        f"{name} ({path.stat().st_size / 1e6:.1f} MB)"
        for name, path in files.items()
        if path.stat().st_size >= HUB_MAX_FILE_BYTES
    ]
    if too_big:
        raise DeployError(
            f"files of {HUB_MAX_FILE_BYTES / 1e6:.0f} MB or more would break a plain git push to "
            f"the Space: {', '.join(too_big)} (a checkpoint: re-save it with "
            "model.checkpoints.checkpoint.save_checkpoint, which shards the weights)"
        )
    for required in ("README.md", "app.py", "requirements.txt", f"{checkpoint_in_space}/config.json"):
        if required not in files:
            raise DeployError(f"{required} would not be uploaded")
