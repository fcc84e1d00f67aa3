"""Checkpoints as Hugging Face Hub models: `PretrainedTransformer.from_pretrained` / `save_pretrained` / `push_to_hub`.

`PretrainedTransformer` is the Transformer of section 3 (model/core/transformer.py, which knows nothing of
files) with TransformerHubMixin: huggingface_hub's PyTorchModelHubMixin with the
weights written and read by the library's safetensors helpers (model/checkpoints/weights.py: shards and
an index) instead of its single `model.safetensors`, and with every file the app's views read travelling
with the weights both ways:

    model = PretrainedTransformer.from_pretrained("owner/name")    # or a local checkpoint directory
    model.save_pretrained("some/folder")                  # config.json, weights, README.md, the companions
    model.push_to_hub("owner/name")                       # the same files, in one commit

A model remembers the folder it was loaded from (`checkpoint_dir`); its tokenizer, metrics, training log,
film and corpus heads (files.COMPANION_FILES) are copied from there by save_pretrained and push_to_hub, and
`from_pretrained` downloads all of them (files.CHECKPOINT_FILES, nothing else) into the Hub cache.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from huggingface_hub import PyTorchModelHubMixin, snapshot_download
from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id as hub_validate_repo_id

from model.checkpoints.files import (
    CARD_FILE,
    CHECKPOINT_FILES,
    COMPANION_FILES,
    CONFIG_FILE,
    FILM_FILE,
    METRICS_FILE,
    CheckpointError,
    find_film,
)
from model.checkpoints.reading import read_json_object, read_optional_file
from model.checkpoints.model_card import LIBRARY_NAME, PAPER_URL, PROJECT_URL, TAGS, build_model_card
from model.checkpoints.weights import load_weights, save_weights
from model.core.config import ConfigError, TransformerConfig
from model.core.transformer import Transformer


def validate_repo_id(repo_id: str) -> str:
    """Check a Hub repo id ("owner/name") with huggingface_hub's own rules before any request is made."""
    try:
        hub_validate_repo_id(repo_id)
        valid = isinstance(repo_id, str) and repo_id.count("/") == 1  # an owner: pushing needs a namespace
    except HFValidationError:
        valid = False
    if not valid:
        raise CheckpointError(f"{repo_id!r} is not a valid Hugging Face repo id (expected 'owner/name')")
    return repo_id


def download_checkpoint(repo_id: str, **options) -> Path:
    """A Hub repo's checkpoint files (CHECKPOINT_FILES: no code, no pickles) in the local Hub cache.

    options: snapshot_download's revision, cache_dir, force_download, token, local_files_only.
    """
    validate_repo_id(repo_id)
    try:
        path = snapshot_download(repo_id, repo_type="model", allow_patterns=CHECKPOINT_FILES, **options)
    except Exception as error:  # network errors, 404s, offline mode: all become one clear message
        raise CheckpointError(
            f"could not download {repo_id!r} from the Hugging Face Hub ({type(error).__name__}: {error}). "
            "Check the repo id and the network, or load a local checkpoint directory."
        ) from None
    return Path(path)


def _read_metrics(directory: Path | None) -> dict:
    """metrics.json of the folder, or {} when there is none or it is broken (the card leaves its scores out)."""
    return read_optional_file(directory / METRICS_FILE, read_json_object, {})[0] if directory else {}


class TransformerHubMixin(
    PyTorchModelHubMixin,
    library_name=LIBRARY_NAME,
    tags=list(TAGS),
    repo_url=PROJECT_URL,
    paper_url=PAPER_URL,
    pipeline_tag="translation",
    language=["de", "en"],
):
    """from_pretrained / save_pretrained / push_to_hub for the Transformer, with the checkpoint's other files."""

    checkpoint_dir: Path | None = None  # the folder the weights were loaded from (set by from_pretrained)

    @classmethod
    def from_pretrained(
        cls,
        pretrained_model_name_or_path: str | Path,
        *,
        revision: str | None = None,
        cache_dir: str | Path | None = None,
        force_download: bool = False,
        token: str | bool | None = None,
        local_files_only: bool = False,
        **model_kwargs,
    ):
        """The model of a checkpoint directory or Hub repo id ("owner/name"), in eval mode.

        A repo id is downloaded first, every checkpoint file at once (download_checkpoint), then loaded
        like a directory. model_kwargs: `map_location` (default "cpu"). Raises CheckpointError.
        """
        source = str(pretrained_model_name_or_path)
        if not os.path.isdir(source):
            if isinstance(pretrained_model_name_or_path, Path) or source.startswith((".", "/", "~")):
                raise CheckpointError(f"checkpoint directory {source} does not exist")
            try:
                validate_repo_id(source)
            except CheckpointError:
                raise CheckpointError(
                    f"{source!r} is neither a checkpoint directory nor a valid Hugging Face repo id "
                    "(expected 'owner/name')"
                ) from None
            source = str(
                download_checkpoint(
                    source,
                    revision=revision,
                    cache_dir=cache_dir,
                    token=token,
                    force_download=force_download,
                    local_files_only=local_files_only,
                )
            )
        read_json_object(Path(source) / CONFIG_FILE)  # a missing or broken config.json is named in plain words
        return super().from_pretrained(source, **model_kwargs)

    @classmethod
    def _from_pretrained(cls, *, model_id: str, config: dict | None = None, map_location: str = "cpu", **hub_options):
        """Build the model from config.json and load its weights (model_id: a local directory here)."""
        directory = Path(model_id)
        if config is None:
            raise CheckpointError(f"{CONFIG_FILE} is missing")
        try:
            config = TransformerConfig.from_dict(config)
        except ConfigError as error:
            raise CheckpointError(f"bad {CONFIG_FILE}: {error}") from None
        model = cls(config)
        load_weights(model, directory)
        model.checkpoint_dir = directory
        return model.to(map_location).eval()

    def _save_pretrained(self, save_directory: Path) -> None:
        """config.json, the weights, and the companion files of checkpoint_dir; the mixin then writes README.md."""
        source = self.checkpoint_dir
        if source is not None and source.resolve() != save_directory.resolve():
            found = {name: source / name for name in COMPANION_FILES if (source / name).is_file()}
            film = find_film(source)  # beside the weights, or in the run directory that holds them
            found.update({FILM_FILE: film} if film else {})
            for name, path in found.items():
                shutil.copyfile(path, save_directory / name)
        self.config.save(save_directory / CONFIG_FILE)
        save_weights(self.state_dict(), save_directory)
        (save_directory / CARD_FILE).unlink(missing_ok=True)  # a fresh card (generate_model_card), never a stale one

    def generate_model_card(self, repo_id: str | None = None, **kwargs):
        """The project's card (model_card.py) from checkpoint_dir's metrics.json, for repo_id when pushed."""
        name = repo_id or (self.checkpoint_dir.resolve().name if self.checkpoint_dir else "attention-explorer")
        return build_model_card(
            _read_metrics(self.checkpoint_dir), self.config.to_dict(), name=name, repo_id=repo_id, source=repo_id or "."
        )

    def push_to_hub(self, repo_id: str, **kwargs) -> str:
        """Upload config.json, the weights, README.md (written for repo_id) and the companion files in one commit.

        kwargs: huggingface_hub's push_to_hub options (private, token, commit_message, branch, ...).
        Returns the commit URL.
        """
        validate_repo_id(repo_id)
        kwargs["model_card_kwargs"] = {"repo_id": repo_id, **(kwargs.get("model_card_kwargs") or {})}
        return super().push_to_hub(repo_id, **kwargs)


class PretrainedTransformer(Transformer, TransformerHubMixin):
    """The Transformer of section 3 as a Hub model: from_pretrained, save_pretrained, push_to_hub."""
