"""Where the shipped checkpoint lives, relative to this repository (not the working directory)."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CHECKPOINT = REPO_ROOT / "checkpoints" / "de-en-small"
