"""Put the app on a Hugging Face Space with one command:

    python3 scripts/deploy_space.py OWNER/SPACE_NAME [--checkpoint DIR] [--private] [--token TOKEN]

Creates the Space (Gradio SDK) if it does not exist and uploads this folder with huggingface_hub
(one upload_folder call; a second for a checkpoint from outside checkpoints/): the code, the
requirements (pre-requirements.txt installs the CPU build of torch), the README whose front matter
configures the Space, and one checkpoint. Training runs, data, caches, hidden folders and other
checkpoints stay home; files in the Space that are not in this folder are deleted, so the Space
mirrors it. The app finds its checkpoint through the Space variable ATTENTION_EXPLORER_CHECKPOINT,
which this command sets. `--dry-run` lists what would be uploaded and contacts nothing.

Everything is checked before the first request: the Space id, the checkpoint (it must load), the
token, and that every uploaded file is under the Hub's 10 MB limit for plain git pushes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from huggingface_hub import HfApi, get_token  # noqa: E402
from huggingface_hub.hf_api import DEFAULT_IGNORE_PATTERNS  # noqa: E402
from huggingface_hub.utils import filter_repo_objects  # noqa: E402

from model.checkpoints.checkpoint import HUB_MAX_FILE_BYTES, CheckpointError, load_local_checkpoint, validate_repo_id  # noqa: E402
from model.checkpoints.model_card import write_model_card  # noqa: E402
from model.checkpoints.paths import DEFAULT_CHECKPOINT  # noqa: E402

CHECKPOINT_VARIABLE = "ATTENTION_EXPLORER_CHECKPOINT"  # read by app.py
CHECKPOINTS_DIR = "checkpoints"
CHECKPOINT_PATTERNS = ["*.json", "*.safetensors", "*.md"]  # a checkpoint is data: never code or pickles
# huggingface_hub's patterns are fnmatch globs on paths relative to the folder; "*" also matches "/",
# and "name/" means everything under name/.
IGNORE_PATTERNS = [
    ".*", "*/.*",  # hidden files and folders: .git, .venv, .pytest_cache, .gradio, .cache, .ci, ...
    "runs/", "data/", "shared/", "flagged/",  # training runs, data sets, a device share, Gradio flags
    "*__pycache__*", "*.pyc", "*.egg-info*",
    "test-results/", "playwright-report/", "htmlcov/", "*.log", "benchmarks/results/*.tmp",
    "*.tsv", "*.de", "*.en",  # parallel text never ships: its licences are not the code's
    "*.pt", "*.pth", "*.bin", "*.ckpt", "*.pkl", "*.pickle",  # weights are safetensors only
]


class DeployError(Exception):
    """Something to fix before deploying; the message says what."""


def space_url(space_id: str) -> str:
    return f"https://huggingface.co/spaces/{space_id}"


def ignore_patterns(root: Path, checkpoint: Path) -> list[str]:
    """IGNORE_PATTERNS plus every folder of checkpoints/ except the one deployed."""
    folders = sorted(p for p in (root / CHECKPOINTS_DIR).glob("*") if p.is_dir())
    return IGNORE_PATTERNS + [f"{CHECKPOINTS_DIR}/{p.name}/" for p in folders if p.resolve() != checkpoint.resolve()]


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
            raise DeployError(f"{CHECKPOINTS_DIR}/{checkpoint.name} already exists here; rename {checkpoint} "
                              "or copy it into checkpoints/ under a new name")
        calls.append({"folder_path": str(checkpoint), "path_in_repo": f"{CHECKPOINTS_DIR}/{checkpoint.name}",
                      "allow_patterns": CHECKPOINT_PATTERNS})
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
    too_big = [f"{name} ({path.stat().st_size / 1e6:.1f} MB)" for name, path in files.items()
               if path.stat().st_size >= HUB_MAX_FILE_BYTES]
    if too_big:
        raise DeployError(f"files of {HUB_MAX_FILE_BYTES / 1e6:.0f} MB or more would break a plain git push to "
                          f"the Space: {', '.join(too_big)} (a checkpoint: re-save it with "
                          "model.checkpoints.checkpoint.save_checkpoint, which shards the weights)")
    for required in ("README.md", "app.py", "requirements.txt", "pre-requirements.txt",
                     f"{checkpoint_in_space}/config.json"):
        if required not in files:
            raise DeployError(f"{required} would not be uploaded")


def deploy(space_id: str, checkpoint: Path, private: bool = False, api=None, root: Path = ROOT,
           dry_run: bool = False) -> str:
    """Create the Space and upload the app and checkpoint; returns the Space's URL.

    Args:
        space_id: "owner/name" of the Space.
        checkpoint: the checkpoint directory to ship (it must load).
        private: create the Space private (an existing Space keeps its visibility).
        api: an huggingface_hub.HfApi with a token (tests pass a fake); unused with dry_run.
        root: the project folder to upload.
        dry_run: print the files and stop before any request.
    """
    try:
        validate_repo_id(space_id)
        load_local_checkpoint(checkpoint)
    except CheckpointError as error:
        raise DeployError(str(error).replace("repo id", "Space id")) from None
    write_model_card(checkpoint)  # the card matches metrics.json (unchanged if it already did)
    calls = plan(root, checkpoint)
    checkpoint_in_space = f"{CHECKPOINTS_DIR}/{checkpoint.resolve().name}"
    files = uploaded_files(calls)
    check_files(files, checkpoint_in_space)
    total = sum(path.stat().st_size for path in files.values())
    print(f"{len(files)} files, {total / 1e6:.1f} MB, checkpoint {checkpoint_in_space}")
    if dry_run:
        print("\n".join(files))
        return space_url(space_id)
    api.create_repo(space_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
    api.add_space_variable(space_id, CHECKPOINT_VARIABLE, checkpoint_in_space,
                           description="checkpoint folder the app loads")
    for call in calls:
        api.upload_folder(repo_id=space_id, repo_type="space", commit_message="Deploy Attention Explorer", **call)
    return space_url(space_id)


def main(argv: list[str] | None = None, api=None) -> int:
    parser = argparse.ArgumentParser(description="Deploy the app to a Hugging Face Space (Gradio SDK).")
    parser.add_argument("space_id", metavar="SPACE_ID", help="owner/name of the Space (created if missing)")
    parser.add_argument("--checkpoint", type=Path, default=DEFAULT_CHECKPOINT, help="checkpoint folder to ship")
    parser.add_argument("--private", action="store_true", help="create the Space private")
    parser.add_argument("--token", help="Hugging Face token with write access (default: $HF_TOKEN or `hf auth login`)")
    parser.add_argument("--dry-run", action="store_true", help="list the files to upload; contact nothing")
    args = parser.parse_args(argv)
    try:
        if api is None and not args.dry_run:
            validate_repo_id(args.space_id)  # a bad id is reported before a missing token
            token = args.token or get_token()
            if not token:
                raise DeployError("no Hugging Face token: pass --token, set HF_TOKEN, or run `hf auth login` "
                                  "(a token with write access: https://huggingface.co/settings/tokens)")
            api = HfApi(token=token)
        url = deploy(args.space_id, args.checkpoint, args.private, api, dry_run=args.dry_run)
    except (DeployError, CheckpointError) as error:
        print(f"error: {str(error).replace('repo id', 'Space id')}", file=sys.stderr)
        return 2
    print(("would deploy to " if args.dry_run else "deployed: ") + url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
