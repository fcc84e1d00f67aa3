"""Where the shipped checkpoint lives, relative to this repository (not the working directory)."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]  # model/checkpoints/paths.py -> the repository
DEFAULT_CHECKPOINT = REPO_ROOT / "checkpoints" / "de-en-small"
