"""A lesson folder (scripts/export_lesson.py) on a static Hugging Face Space: free for everyone, no GPU quota.

    python3 scripts/deploy_space.py --static OWNER/NAME --lesson DIR [--app-space OWNER/NAME] [--model-repo OWNER/NAME]
                                    [--private] [--token TOKEN] [--dry-run]

The Space (`sdk: static`, `app_file: index.html`) gets the folder as it is, plus a README.md whose front matter
lists the lesson's model repos under `models:` (the Hub links the pages: the own model's repo, --model-repo or
APP_SPACE-model as scripts/deploy_space.py publishes it, and Helsinki-NLP's OPUS-MT repo of each direction the
lesson uses) and whose text links the app's Space (the Hub's front matter has no field for another Space). One
upload_folder commit; files in the Space that are not in the folder are deleted. Checked before any request: the
ids, that the folder is a lesson (index.html, data/lesson.js), and that no file reaches the Hub's 10 MB limit.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from huggingface_hub.errors import HfHubHTTPError

from model.checkpoints.catalogue import OPUS_MT_REPOS
from model.checkpoints.hub import validate_repo_id
from model.checkpoints.checkpoint import HUB_MAX_FILE_BYTES
from scripts.space_upload import DeployError

LESSON_DATA = "data/lesson.js"  # lesson/writer.py: the lesson's title and its sentences' models and directions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The static Space's options on scripts/deploy_space.py's command line."""
    parser.add_argument("--static", metavar="SPACE_ID", help="upload the lesson folder --lesson as a static Space")
    parser.add_argument("--lesson", type=Path, help="with --static: the folder scripts/export_lesson.py wrote")
    parser.add_argument("--app-space", help="with --static: owner/name of the app's Space, linked from the lesson's")


def lesson_files(folder: Path) -> tuple[dict[str, Path], dict]:
    """(the folder's files by path in the Space, its data/lesson.js as data); DeployError if it is not a lesson."""
    if not (folder / "index.html").is_file() or not (folder / LESSON_DATA).is_file():
        raise DeployError(f"{folder} is no lesson folder (index.html and {LESSON_DATA} are missing)")
    files = {path.relative_to(folder).as_posix(): path for path in sorted(folder.rglob("*")) if path.is_file()}
    too_big = [name for name, path in files.items() if path.stat().st_size >= HUB_MAX_FILE_BYTES]
    if too_big:
        raise DeployError(f"files of {HUB_MAX_FILE_BYTES / 1e6:.0f} MB or more cannot be pushed: {', '.join(too_big)}")
    text = (folder / LESSON_DATA).read_text(encoding="utf-8")
    return files, json.loads(text[text.index("=") + 1 :].strip().rstrip(";"))


def model_repos(lesson: dict, own_repo: str | None) -> list[str]:
    """The model repos the lesson's sentences come from, in order, each once."""
    repos = []
    for sentence in lesson["sentences"]:
        repo = OPUS_MT_REPOS[sentence["direction"]][0] if sentence.get("model") == "opus-mt" else own_repo
        if repo and repo not in repos:
            repos.append(repo)
    return repos


def static_readme(title: str, app_space: str | None, models: list[str]) -> str:
    """The static Space's README.md: its front matter and a few lines linking the app and the models."""
    listed = "".join(f"\n  - {repo}" for repo in models) or " []"
    short = "A lesson of Attention Is All You Need that plays offline"
    lines = [
        "---",
        f"title: {json.dumps(title[:60])}",
        "emoji: 🔍",
        "colorFrom: indigo",
        "colorTo: blue",
        "sdk: static",
        "app_file: index.html",
        "pinned: false",
        "license: mit",
        f"short_description: {short}",
        f"models:{listed}",
        "tags:\n  - transformer\n  - attention-visualization\n  - education",
        "---",
        "",
        f"# {title}",
        "",
        'The views of a few sentences through the Transformer of "Attention Is All You Need", exported by Attention',
        "Explorer: open index.html, step with the player (←/→, Home/End, Space). It needs no server.",
    ]
    if app_space:
        lines += ["", f"Type your own sentence in the app: https://huggingface.co/spaces/{app_space}"]
    lines += [f"\nModel: https://huggingface.co/{repo}" for repo in models]
    return "\n".join(lines) + "\n"


def deploy_lesson(args: argparse.Namespace, api) -> str:
    """Upload args.lesson to the static Space args.static (create it if missing) -> the Space's URL."""
    for repo in (args.static, args.app_space, args.model_repo):
        if repo:
            validate_repo_id(repo)
    if args.lesson is None:
        raise DeployError("--static needs --lesson DIR (the folder scripts/export_lesson.py wrote)")
    files, lesson = lesson_files(args.lesson)
    own_repo = args.model_repo or (f"{args.app_space}-model" if args.app_space else None)
    readme = static_readme(lesson["title"], args.app_space, model_repos(lesson, own_repo))
    url = f"https://huggingface.co/spaces/{args.static}"
    print(f"{len(files) + 1} files, {sum(p.stat().st_size for p in files.values()) / 1e6:.1f} MB -> {url}")
    if args.dry_run:
        print("\n".join(sorted([*files, "README.md"])))
        return url
    try:
        upload(api, args.static, files, readme, args.private)
    except HfHubHTTPError as error:
        raise DeployError(f"the Hub refused the static Space {args.static}: {error}") from None
    return url


def upload(api, space_id: str, files: dict[str, Path], readme: str, private: bool) -> None:
    """Create the static Space if missing and put the lesson's files and README.md there in one commit."""
    api.create_repo(space_id, repo_type="space", space_sdk="static", private=private, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lesson-space-") as folder:
        staged = Path(folder)
        for name, path in files.items():
            (staged / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, staged / name)
        (staged / "README.md").write_text(readme, encoding="utf-8")
        api.upload_folder(
            repo_id=space_id,
            repo_type="space",
            folder_path=str(staged),
            delete_patterns=["*"],  # the Space mirrors the folder
            commit_message="Deploy a lesson",
        )
