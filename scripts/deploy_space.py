"""Put the app on a Hugging Face Space with one command:

    python3 scripts/deploy_space.py OWNER/SPACE_NAME [--hardware zerogpu|cpu-basic] [--checkpoint DIR]
                                    [--private] [--token TOKEN] [--dry-run]

Creates the Space (Gradio SDK) on ZeroGPU hardware by default (free personal accounts in good standing
may host up to 2 ZeroGPU Spaces; Gradio Spaces on CPU hardware need a paid plan since 2026-07-21, so
`--hardware cpu-basic` is for paid accounts) and uploads this folder with huggingface_hub (one
upload_folder call; a second for a checkpoint from outside checkpoints/, and on CPU Basic a
pre-requirements.txt that installs the CPU build of torch). It uploads the code, requirements.txt, the
README whose front matter configures the Space, and one checkpoint; tests, benchmarks, scripts,
everything .gitignore names, hidden folders and other checkpoints stay home, and files in the Space that
are not uploaded are deleted, so the Space mirrors the app. A Space variable tells the app its checkpoint
(ATTENTION_EXPLORER_CHECKPOINT).
`--dry-run` lists what would be uploaded and contacts nothing.

Everything is checked before the first request: the Space id, the checkpoint (it must load), that ZeroGPU
supports the torch that requirements.txt pins, the token, and that every uploaded file is under the Hub's 10 MB limit for plain git pushes. When the Hub
refuses (no plan for the hardware, a token without write access, a rate limit), the error says in
plain words what the account needs. What is uploaded, and the checks on those files, are in scripts/space_upload.py.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from huggingface_hub import HfApi, get_token  # noqa: E402
from huggingface_hub.errors import HfHubHTTPError  # noqa: E402

from model.checkpoints.checkpoint import CheckpointError, load_local_checkpoint  # noqa: E402
from model.checkpoints.hub import validate_repo_id  # noqa: E402
from model.checkpoints.model_card import write_model_card  # noqa: E402
from model.checkpoints.paths import DEFAULT_CHECKPOINT  # noqa: E402
from scripts.space_upload import CHECKPOINTS_DIR, DeployError, check_files, plan, uploaded_files  # noqa: E402

CHECKPOINT_VARIABLE = "ATTENTION_EXPLORER_CHECKPOINT"  # read by app.py


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


def zerogpu_torch_problem(version: str) -> str | None:
    """Why ZeroGPU cannot run this torch version (None if it can).

    The `spaces` package (spaces/zero/torch/) hooks torch internals (TorchFunctionMode, torch._C._cuda_init,
    torch.cuda._exchange_device) and reads torch.version.cuda as 12.x or 13.x; it names no version list of its
    own. Hugging Face's ZeroGPU page lists the versions it supports: 2.1.0 and later, except 2.3.x (a PyTorch
    bug, pytorch/pytorch#122085). ZeroGPU needs the CUDA build that PyPI serves, so no local build (+cpu).
    """
    parts = version.split("+")[0].split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return f"torch=={version} is not a version number ZeroGPU can check"
    if "+" in version:
        return f"torch=={version} is a local build; ZeroGPU installs the CUDA build from PyPI (torch=={parts[0]}.{parts[1]}...)"
    if (major, minor) < (2, 1):
        return f"torch=={version} is older than 2.1.0, the oldest version ZeroGPU supports"
    if (major, minor) == (2, 3):
        return f"torch=={version}: ZeroGPU does not support 2.3.x (PyTorch bug pytorch/pytorch#122085)"
    return None


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


def deploy(
    space_id: str,
    checkpoint: Path,
    private: bool = False,
    api=None,
    root: Path = ROOT,
    dry_run: bool = False,
    hardware: str = DEFAULT_HARDWARE,
) -> str:
    """Create the Space and upload the app and checkpoint; returns the Space's URL.

    Args:
        space_id: "owner/name" of the Space.
        checkpoint: the checkpoint directory to ship (it must load).
        private: create the Space private (an existing Space keeps its visibility).
        api: an huggingface_hub.HfApi with a token (tests pass a fake); unused with dry_run.
        root: the project folder to upload.
        dry_run: print the files and stop before any request.
        hardware: a HARDWARE key: "zerogpu" (free accounts may host two) or "cpu-basic" (paid plans).
    """
    if hardware not in HARDWARE:
        raise DeployError(f"unknown hardware {hardware!r}: use one of {', '.join(HARDWARE)}")
    try:
        validate_repo_id(space_id)
        load_local_checkpoint(checkpoint)
    except CheckpointError as error:
        raise DeployError(str(error).replace("repo id", "Space id")) from None
    check_torch_for(root, hardware)
    write_model_card(checkpoint)  # the card matches metrics.json (unchanged if it already did)
    calls = plan(root, checkpoint)
    checkpoint_in_space = f"{CHECKPOINTS_DIR}/{checkpoint.resolve().name}"
    files = uploaded_files(calls)
    check_files(files, checkpoint_in_space)
    extra = space_files(root, hardware)
    total = sum(path.stat().st_size for path in files.values()) + sum(map(len, extra.values()))
    print(
        f"{len(files) + len(extra)} files, {total / 1e6:.1f} MB, checkpoint {checkpoint_in_space}, hardware {hardware}"
    )
    if dry_run:
        print("\n".join([*files, *extra]))
        return space_url(space_id)
    spec = HARDWARE[hardware]
    variables = {CHECKPOINT_VARIABLE: (checkpoint_in_space, "checkpoint folder the app loads")}
    step = "Creating the Space"
    try:
        api.create_repo(
            space_id, repo_type="space", space_sdk="gradio", space_hardware=spec.hub_id, private=private, exist_ok=True
        )
        step = f"Moving the Space to {hardware} hardware"
        api.request_space_hardware(space_id, spec.hub_id)  # an existing Space keeps its hardware otherwise
        step = "Setting the Space variables"
        for key, (value, description) in variables.items():
            api.add_space_variable(space_id, key, value, description=description)
        step = "Uploading the app"
        for call in calls:
            api.upload_folder(repo_id=space_id, repo_type="space", commit_message="Deploy Attention Explorer", **call)
        for path, content in extra.items():
            api.upload_file(
                path_or_fileobj=content,
                path_in_repo=path,
                repo_id=space_id,
                repo_type="space",
                commit_message=f"Deploy Attention Explorer: {path} for {hardware}",
            )
    except HfHubHTTPError as error:
        raise hub_refusal(error, step, space_id, hardware) from None
    return space_url(space_id)


def main(argv: list[str] | None = None, api=None) -> int:
    parser = argparse.ArgumentParser(description="Deploy the app to a Hugging Face Space (Gradio SDK).")
    parser.add_argument("space_id", metavar="SPACE_ID", help="owner/name of the Space (created if missing)")
    parser.add_argument(
        "--hardware",
        choices=sorted(HARDWARE),
        default=DEFAULT_HARDWARE,
        help="zerogpu (default; free accounts in good standing may host two ZeroGPU Spaces) or "
        "cpu-basic (needs a paid plan)",
    )
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
                raise DeployError(
                    "no Hugging Face token: pass --token, set HF_TOKEN, or run `hf auth login` "
                    "(a token with write access: https://huggingface.co/settings/tokens)"
                )
            api = HfApi(token=token)
        url = deploy(args.space_id, args.checkpoint, args.private, api, dry_run=args.dry_run, hardware=args.hardware)
    except (DeployError, CheckpointError) as error:
        print(f"error: {str(error).replace('repo id', 'Space id')}", file=sys.stderr)
        return 2
    print(("would deploy to " if args.dry_run else "deployed: ") + url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
