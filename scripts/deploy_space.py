"""Put the app on a Hugging Face Space with one command, its weights in their own model repo:

    python3 scripts/deploy_space.py OWNER/SPACE_NAME [--model-repo OWNER/NAME] [--checkpoint DIR] [--without-opus-mt]
                                    [--hardware zerogpu|cpu-basic] [--private] [--token TOKEN] [--dry-run]
    python3 scripts/deploy_space.py OWNER/SPACE_NAME --weights-only [--model-repo OWNER/NAME] [--checkpoint DIR]

A deploy (1) creates the Space (Gradio SDK) on ZeroGPU hardware by default (free personal accounts in good standing
may host up to 2 ZeroGPU Spaces; Gradio Spaces on CPU hardware need a paid plan since 2026-07-21, so
`--hardware cpu-basic` is for paid accounts); (2) publishes the checkpoint as a model repo (default
OWNER/SPACE_NAME-model) with `PretrainedTransformer.push_to_hub`: config, safetensors shards, tokenizer, metrics,
training log, film, corpus heads and a model card written for that repo, and sets the Space variable
ATTENTION_EXPLORER_HUB to it, which the app loads at start-up; (3) uploads the code in one upload_folder commit:
requirements.txt, the README (its front matter configures the Space; `models:` lists the model repo and, unless
`--without-opus-mt`, OPUS-MT's, which the Space downloads at start-up and opens on once loaded: docs/deploy.md), and
on CPU Basic a pre-requirements.txt that installs the CPU build of torch. Tests, benchmarks, scripts, checkpoints,
everything .gitignore names and hidden folders stay home; files in the Space that are not uploaded are deleted.
`--weights-only` republishes the model repo and restarts the Space, which then downloads the new weights; the
Space's files stay as they are. `--dry-run` lists what would be uploaded and contacts nothing.

Everything is checked before the first request: the ids, the checkpoint (it must load), that ZeroGPU documents the
torch that requirements.txt pins, the token, and that every uploaded file is under the Hub's 10 MB limit for plain
git pushes. When the Hub refuses (no plan for the hardware, a token without write access, a rate limit), the error
says in plain words what the account needs. What the Space gets is in scripts/space_upload.py.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from huggingface_hub import HfApi, get_token  # noqa: E402
from huggingface_hub.errors import HfHubHTTPError  # noqa: E402

from model import PretrainedTransformer  # noqa: E402
from model.checkpoints.checkpoint import CheckpointError, load_local_checkpoint  # noqa: E402
from model.checkpoints.hub import validate_repo_id  # noqa: E402
from model.checkpoints.model_card import write_model_card  # noqa: E402
from model.checkpoints.paths import DEFAULT_CHECKPOINT  # noqa: E402
from scripts.space_upload import DeployError, app_files, check_files, space_models, space_readme  # noqa: E402
from scripts import static_space  # noqa: E402

HUB_VARIABLE = "ATTENTION_EXPLORER_HUB"  # read by app.py: the model repo the Space loads
OPUS_MT_VARIABLE = "ATTENTION_EXPLORER_PRELOAD_OPUS_MT"  # ui/models.py; 0, not deleted, turns an earlier 1 off


@dataclass(frozen=True)
class Hardware:
    """One --hardware choice: the Hub's hardware id and what an account needs to use it."""

    hub_id: str  # huggingface_hub.SpaceHardware value
    needs: str  # what the account needs to host a Space on it, in plain words


HARDWARE = {
    # ZeroGPU: the GPU exists only inside the server process's @spaces.GPU calls
    "zerogpu": Hardware(
        "zero-a10g",
        (
            "Hosting a ZeroGPU Space needs a PRO account (up to 10 ZeroGPU Spaces) or a free personal account in "
            "good standing, with a verified email and older than 30 days, which may host up to 2 "
            "(https://huggingface.co/docs/hub/spaces-zerogpu); an organization needs a Team or Enterprise plan. "
            "Check the account's email and age, or free a slot by deleting a ZeroGPU Space you no longer use"
        ),
    ),
    # CPU Basic: 2 vCPUs
    "cpu-basic": Hardware(
        "cpu-basic",
        (
            "Since 2026-07-21 creating a Gradio Space on CPU hardware needs a paid plan (PRO for a personal account, "
            "Team or Enterprise for an organization: https://huggingface.co/settings/billing/subscription). "
            "A free account can deploy with --hardware zerogpu (the default)"
        ),
    ),
}
DEFAULT_HARDWARE = "zerogpu"
PYTORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def space_url(space_id: str) -> str:
    return f"https://huggingface.co/spaces/{space_id}"


def torch_pin(requirements: Path) -> str:
    """The version requirements.txt pins torch to ("2.13.0")."""
    for line in requirements.read_text(encoding="utf-8").splitlines():
        spec = line.split("#")[0].replace(" ", "")
        if spec.startswith("torch=="):
            return spec.removeprefix("torch==")
    raise DeployError(f"{requirements} does not pin torch (torch==X.Y.Z)")


# The PyTorch versions Hugging Face's ZeroGPU page lists (huggingface.co/docs/hub/spaces-zerogpu, "Supported
# Versions"; read 2026-08 in the source of that page in the hub-docs repository): "almost all versions from 2.8.0 to
# latest are supported", with this full list.
ZEROGPU_OLDEST = (2, 8)
ZEROGPU_LISTED = ("2.8.0", "2.9.1", "2.10.0", "2.11.0")


def zerogpu_torch_problem(version: str) -> str | None:
    """Why ZeroGPU cannot run this torch version (None if its documentation says it can).

    A version older than 2.8.0 is not supported; one in ZEROGPU_LISTED is; one newer than the list is within
    "2.8.0 to latest" but untested by Hugging Face: accepted, and `zerogpu_torch_note` says so (docs/deploy.md says
    how that risk is handled). ZeroGPU needs the CUDA build that PyPI serves, so no local build (+cpu).
    """
    parts = version.split("+")[0].split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return f"torch=={version} is not a version number ZeroGPU can check"
    if "+" in version:
        return f"torch=={version} is a local build; ZeroGPU installs the CUDA build from PyPI (torch=={parts[0]}.{parts[1]}...)"
    if (major, minor) < ZEROGPU_OLDEST:
        return f"torch=={version} is older than 2.8.0, the oldest version ZeroGPU documents"
    return None


def zerogpu_torch_note(version: str) -> str | None:
    """A note when the version is newer than every version ZeroGPU's page lists (None when it is listed)."""
    if version in ZEROGPU_LISTED:
        return None
    return (
        f"note: torch=={version} is newer than the versions ZeroGPU's documentation lists "
        f"({', '.join(ZEROGPU_LISTED)}; 'almost all versions from 2.8.0 to latest'): see docs/deploy.md"
    )


def check_torch_for(root: Path, hardware: str) -> None:
    """DeployError when requirements.txt pins a torch the hardware cannot run (ZeroGPU: zerogpu_torch_problem)."""
    if hardware != "zerogpu":
        return
    problem = zerogpu_torch_problem(torch_pin(root / "requirements.txt"))
    if problem:
        raise DeployError(
            f"{problem}. Pin a supported torch in requirements.txt (see "
            "https://huggingface.co/docs/hub/spaces-zerogpu), or deploy with --hardware cpu-basic"
        )


def space_files(root: Path, hardware: str) -> dict[str, bytes]:
    """Files the Space gets that the folder does not hold, per hardware: path in the Space -> content.

    CPU Basic: pre-requirements.txt, which Spaces installs before requirements.txt, puts the CPU build of
    the pinned torch from PyTorch's CPU index (X+cpu satisfies requirements.txt's ==X), so pip never pulls
    the CUDA build and its nvidia-* packages. ZeroGPU needs the CUDA build (PyPI's default): nothing extra.
    """
    if hardware != "cpu-basic":
        return {}
    version = torch_pin(root / "requirements.txt")
    text = (
        "# Written by scripts/deploy_space.py for CPU hardware: the CPU build of requirements.txt's torch.\n"
        f"--extra-index-url {PYTORCH_CPU_INDEX}\ntorch=={version}+cpu\n"
    )
    return {"pre-requirements.txt": text.encode()}


def hub_refusal(error: HfHubHTTPError, doing: str, space_id: str, hardware: str) -> DeployError:
    """The Hub's refusal as what to do about it, in plain words (the Hub's own message kept at the end)."""
    status = error.response.status_code if error.response is not None else None
    said = " ".join((error.server_message or "").split()) or str(error).splitlines()[0]
    owner = space_id.split("/")[0]
    plan_words = (
        "plan",
        "pro ",
        "subscri",
        "billing",
        "payment",
        "upgrade",
        "zerogpu",
        "zero-a10g",
        "hardware",
        "quota",
        "limit",
        "good standing",
        "verified",
        "paid",
    )
    if status == 401:
        what = (
            "The Hub did not accept the token (mistyped, expired or revoked): make one with write access at "
            "https://huggingface.co/settings/tokens and pass it with --token or `hf auth login`"
        )
    elif status == 429:
        what = "The Hub is limiting this account's requests: wait a few minutes and run the same command again"
    elif status == 402 or (status in (400, 403) and any(word in said.lower() for word in plan_words)):
        what = HARDWARE[hardware].needs
    elif status == 403:
        what = (
            f"The token may not create or write repositories under {owner!r}: it needs the write role (a "
            f"fine-grained token needs write access to {owner}'s repositories), and {owner!r} must be your "
            "account or an organization where you may create Spaces"
        )
    elif status == 409:
        what = f"{space_id} exists and cannot be used as this Space (is it a model or dataset of that name?)"
    else:
        what = f"The Hub refused ({status or 'no answer'})"
    return DeployError(f"{doing} failed. {what}. (The Hub said: {said})")


def default_model_repo(space_id: str) -> str:
    """The model repo a Space's weights go to unless --model-repo says otherwise: OWNER/SPACE_NAME-model."""
    return f"{space_id}-model"


def publish_weights(checkpoint: Path, model_repo: str, private: bool = False, token: str | None = None) -> str:
    """The checkpoint as the model repo, with PretrainedTransformer.push_to_hub (one commit; the card written for the
    repo); returns the commit URL."""
    write_model_card(checkpoint)  # the local card matches metrics.json (unchanged if it already did)
    model = PretrainedTransformer.from_pretrained(checkpoint)
    return str(model.push_to_hub(model_repo, private=private, token=token, commit_message="Publish the weights"))


def check_ids(space_id: str, model_repo: str) -> None:
    try:
        validate_repo_id(space_id)
    except CheckpointError as error:
        raise DeployError(str(error).replace("repo id", "Space id")) from None
    try:
        validate_repo_id(model_repo)
    except CheckpointError as error:
        raise DeployError(str(error).replace("repo id", "model repo id")) from None


def check_checkpoint(checkpoint: Path) -> None:
    try:
        load_local_checkpoint(checkpoint)
    except CheckpointError as error:
        raise DeployError(str(error)) from None


def deploy(
    space_id: str,
    checkpoint: Path,
    private: bool = False,
    api=None,
    root: Path = ROOT,
    dry_run: bool = False,
    hardware: str = DEFAULT_HARDWARE,
    model_repo: str | None = None,
    token: str | None = None,
    opus_mt: bool = True,
) -> str:
    """Publish the weights as a model repo, create the Space pointed at it, upload the app; returns the Space's URL.

    Args:
        space_id: "owner/name" of the Space.
        checkpoint: the checkpoint directory to publish (it must load).
        private: create the Space and the model repo private (existing ones keep their visibility).
        api: an huggingface_hub.HfApi with a token for the Space (tests pass a stand-in); unused with dry_run.
        root: the project folder to upload.
        dry_run: print the files and stop before any request.
        hardware: a HARDWARE key: "zerogpu" (free accounts may host two) or "cpu-basic" (paid plans).
        model_repo: "owner/name" of the model repo (default_model_repo(space_id) if None).
        token: the token push_to_hub uses for the model repo (None: huggingface_hub's own lookup).
        opus_mt: the Space downloads OPUS-MT at start-up and opens on it once loaded.
    """
    if hardware not in HARDWARE:
        raise DeployError(f"unknown hardware {hardware!r}: use one of {', '.join(HARDWARE)}")
    model_repo = model_repo or default_model_repo(space_id)
    check_ids(space_id, model_repo)
    check_checkpoint(checkpoint)
    check_torch_for(root, hardware)
    if hardware == "zerogpu" and (note := zerogpu_torch_note(torch_pin(root / "requirements.txt"))):
        print(note)
    files = app_files(root)
    check_files(files)
    readme = space_readme((root / "README.md").read_text(encoding="utf-8"), *space_models(model_repo, opus_mt))
    written = {"README.md": readme.encode()}
    written.update(space_files(root, hardware))
    total = sum(path.stat().st_size for name, path in files.items() if name not in written)
    total += sum(map(len, written.values()))
    print(f"{len(set(files) | set(written))} files, {total / 1e6:.1f} MB; weights {checkpoint} -> {model_repo}")
    if opus_mt:
        print(f"OPUS-MT: {', '.join(space_models(model_repo)[:-1])}, downloaded by the Space at start-up")
    if dry_run:
        print("\n".join(sorted(set(files) | set(written))))
        return space_url(space_id)
    spec = HARDWARE[hardware]
    step = "Creating the Space"  # first: the hardware is what an account most often lacks
    try:
        api.create_repo(
            space_id, repo_type="space", space_sdk="gradio", space_hardware=spec.hub_id, private=private, exist_ok=True
        )
        step = f"Moving the Space to {hardware} hardware"
        api.request_space_hardware(space_id, spec.hub_id)  # an existing Space keeps its hardware otherwise
        step = "Publishing the weights"
        publish_weights(checkpoint, model_repo, private, token)
        step = "Setting the Space variables"
        api.add_space_variable(space_id, HUB_VARIABLE, model_repo, description="model repo the app loads")
        api.add_space_variable(space_id, OPUS_MT_VARIABLE, str(int(opus_mt)), description="1: load OPUS-MT at start-up")
        step = "Uploading the app"
        with tempfile.TemporaryDirectory(prefix="space-") as folder:
            staged = stage(Path(folder), files, written)
            api.upload_folder(
                repo_id=space_id,
                repo_type="space",
                folder_path=str(staged),
                delete_patterns=["*"],  # the Space mirrors the app (the Hub always keeps .gitattributes)
                commit_message="Deploy Attention Explorer",
            )
    except HfHubHTTPError as error:
        raise hub_refusal(error, step, space_id, hardware) from None
    return space_url(space_id)


def stage(folder: Path, files: dict[str, Path], written: dict[str, bytes]) -> Path:
    """The Space's files in one folder (one upload_folder commit): copies of `files`, then `written` over them."""
    for name, path in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, folder / name)
    for name, content in written.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
    return folder


def update_weights(
    space_id: str, checkpoint: Path, api, model_repo: str | None = None, token: str | None = None
) -> str:
    """Republish the model repo from `checkpoint` and restart the Space (it loads the model repo at start-up);
    the Space's files are not touched. Returns the model repo's id."""
    model_repo = model_repo or default_model_repo(space_id)
    check_ids(space_id, model_repo)
    check_checkpoint(checkpoint)
    step = "Publishing the weights"
    try:
        publish_weights(checkpoint, model_repo, token=token)
        step = "Restarting the Space"
        api.restart_space(space_id)
    except HfHubHTTPError as error:
        raise hub_refusal(error, step, space_id, DEFAULT_HARDWARE) from None
    return model_repo


def main(argv: list[str] | None = None, api=None) -> int:
    parser = argparse.ArgumentParser(description="Deploy the app to a Hugging Face Space, its weights as a model repo.")
    parser.add_argument("space_id", nargs="?", metavar="SPACE_ID", help="owner/name of the Space (created if missing)")
    parser.add_argument("--model-repo", help="owner/name of the weights' model repo (default: SPACE_ID-model)")
    parser.add_argument(
        "--hardware",
        choices=sorted(HARDWARE),
        default=DEFAULT_HARDWARE,
        help="zerogpu (default; free accounts in good standing may host two ZeroGPU Spaces) or "
        "cpu-basic (needs a paid plan)",
    )
    parser.add_argument("--checkpoint", type=Path, default=DEFAULT_CHECKPOINT, help="checkpoint folder to publish")
    parser.add_argument("--weights-only", action="store_true", help="republish the weights, restart the Space")
    parser.add_argument("--without-opus-mt", action="store_true", help="leave OPUS-MT out (default: with it)")
    parser.add_argument("--private", action="store_true", help="create the Space and model repo private")
    parser.add_argument("--token", help="Hugging Face token with write access (default: $HF_TOKEN or `hf auth login`)")
    parser.add_argument("--dry-run", action="store_true", help="list the files to upload; contact nothing")
    static_space.add_arguments(parser)  # --static SPACE_ID --lesson DIR: a lesson on a static Space
    args = parser.parse_args(argv)
    args.space_id = args.static or args.space_id
    if args.space_id is None:
        parser.error("SPACE_ID is required")
    try:
        if api is None and not args.dry_run:
            check_ids(args.space_id, args.model_repo or default_model_repo(args.space_id))  # before a missing token
            token = args.token or get_token()
            if not token:
                raise DeployError(
                    "no Hugging Face token: pass --token, set HF_TOKEN, or run `hf auth login` "
                    "(a token with write access: https://huggingface.co/settings/tokens)"
                )
            api = HfApi(token=token)
        if args.static:  # a lesson folder, no app, no weights (scripts/static_space.py)
            print(("would deploy to " if args.dry_run else "deployed: ") + static_space.deploy_lesson(args, api))
            return 0
        if args.weights_only:
            repo = update_weights(args.space_id, args.checkpoint, api, args.model_repo, args.token)
            print(f"published the weights to https://huggingface.co/{repo}; restarted {space_url(args.space_id)}")
            return 0
        url = deploy(
            args.space_id,
            args.checkpoint,
            args.private,
            api,
            dry_run=args.dry_run,
            hardware=args.hardware,
            model_repo=args.model_repo,
            token=args.token,
            opus_mt=not args.without_opus_mt,
        )
    except (DeployError, CheckpointError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(("would deploy to " if args.dry_run else "deployed: ") + url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
