"""Marian checkpoints (Helsinki-NLP's OPUS-MT models) in this project's own Transformer.

OPUS-MT models are the paper's Transformer-base (6 + 6 post-LN layers, d_model 512, 8 heads, d_ff 2048,
sinusoidal positions, one shared embedding scaled by sqrt(d_model)), trained with the Marian toolkit and
published on the Hugging Face Hub in `transformers`' MarianMTModel layout. This module reads that layout
directly (no `transformers` at run time): `config.json` and `generation_config.json` become a
TransformerConfig, the weights are renamed onto model/core's modules, and the four ways Marian differs from
the paper become config fields: the swish activation, the sinusoids laid out in halves, the logits bias,
and the pad token as the decoder's start token (never generated), with [EOS] forced at the length limit.

What the core cannot represent (pre-LN layers, learnt positions, unshared embeddings, another model_type)
is refused with a MarianError naming the field. Weights come from safetensors where the folder has them;
a pickled `pytorch_model.bin` only through `torch.load(..., weights_only=True)`, which unpickles tensors
and plain containers only, never code.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file

from model.checkpoints.files import CheckpointError
from model.core.config import ConfigError, TransformerConfig
from model.core.positional import sinusoidal_positional_encoding
from model.core.transformer import Transformer

MARIAN_CONFIG_FILE = "config.json"
GENERATION_CONFIG_FILE = "generation_config.json"
SAFETENSORS_FILE = "model.safetensors"
PICKLED_WEIGHTS_FILE = "pytorch_model.bin"  # read only with weights_only=True

# config.json fields whose value the core must see as Marian's own defaults, else it cannot hold the model.
# (field, value the core needs, what a different value means). An absent field means MarianMTModel's default.
REQUIRED_FIELDS = (
    ("model_type", "marian", "another architecture"),
    ("normalize_before", False, "pre-LN layers (the core is post-LN, as the paper)"),
    ("static_position_embeddings", True, "learnt positional embeddings (the core's are the fixed sinusoids of 3.5)"),
    ("scale_embedding", True, "embeddings not scaled by sqrt(d_model) (3.4)"),
    ("normalize_embedding", False, "a LayerNorm on the embeddings"),
    ("add_final_layer_norm", False, "a final LayerNorm after each stack"),
    ("share_encoder_decoder_embeddings", True, "separate source and target embeddings (3.4 shares one)"),
    ("tie_word_embeddings", True, "an output projection not tied to the embedding (3.4)"),
)
ACTIVATION_NAMES = {"swish": "swish", "silu": "swish", "relu": "relu"}  # Marian's names -> the config's


class MarianError(CheckpointError):
    """A Marian checkpoint this core cannot hold; the message names the field or file."""


class MarianDownloadError(MarianError):
    """The Hub did not give the files (no network, offline mode, a refusal): nothing was read."""


def _read_json(path: Path, required: bool = True) -> dict:
    if not path.is_file():
        if required:
            raise MarianError(f"missing {path.name} in {path.parent}")
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise MarianError(f"{path.name} is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise MarianError(f"{path.name} must hold a JSON object")
    return data


def _one(values: dict, names: tuple[str, str]) -> int:
    """One number that Marian keeps per stack (encoder_x, decoder_x): the core has one of each."""
    first, second = (values.get(name) for name in names)
    if first != second:
        raise MarianError(f"{names[0]} = {first} but {names[1]} = {second}: the core has one value for both stacks")
    return first


def marian_config(config: dict, generation: dict, unk_id: int) -> TransformerConfig:
    """The TransformerConfig of a Marian config.json (+ generation_config.json); MarianError if it cannot be one."""
    for field, needed, meaning in REQUIRED_FIELDS:
        value = config.get(field, needed)
        if value != needed:
            raise MarianError(f"config.json: {field} = {value!r} means {meaning}, which this core cannot represent")
    decoder_vocab = config.get("decoder_vocab_size") or config.get("vocab_size")
    if decoder_vocab != config.get("vocab_size"):
        raise MarianError(f"config.json: decoder_vocab_size = {decoder_vocab} differs from vocab_size (one vocabulary)")
    activation = config.get("activation_function", "gelu")
    if activation not in ACTIVATION_NAMES:
        raise MarianError(
            f"config.json: activation_function = {activation!r} (the core has {', '.join(ACTIVATION_NAMES)})"
        )
    rules = {**config, **generation}  # generation_config.json is the newer home of the decoding rules
    start, pad, eos = rules.get("decoder_start_token_id"), config.get("pad_token_id"), rules.get("eos_token_id")
    if start != pad:
        raise MarianError(f"decoder_start_token_id = {start} is not the pad token ({pad}), as Marian's models start")
    forced_eos = rules.get("forced_eos_token_id")
    if forced_eos not in (None, eos):
        raise MarianError(f"forced_eos_token_id = {forced_eos} is not the end token ({eos})")
    try:
        return TransformerConfig(
            vocab_size=config.get("vocab_size"),
            d_model=config.get("d_model"),
            n_heads=_one(config, ("encoder_attention_heads", "decoder_attention_heads")),
            n_encoder_layers=config.get("encoder_layers"),
            n_decoder_layers=config.get("decoder_layers"),
            d_ff=_one(config, ("encoder_ffn_dim", "decoder_ffn_dim")),
            dropout=float(config.get("dropout", 0.1)),
            attention_dropout=float(config.get("attention_dropout", 0.0)),
            max_positions=config.get("max_position_embeddings"),
            pad_id=pad,
            bos_id=start,
            eos_id=eos,
            unk_id=unk_id,
            ffn_activation=ACTIVATION_NAMES[activation],
            positional_layout="halves",
            logits_bias=True,
            force_eos_at_limit=forced_eos == eos,
        )
    except ConfigError as error:
        raise MarianError(f"config.json: {error}") from None


# MarianMTModel's parameter names -> model/core's, per layer ("{i}" is the layer index).
ENCODER_NAMES = {
    "self_attn.{p}_proj": "self_attention.{p}_proj",
    "self_attn_layer_norm": "norm1",
    "fc1": "feed_forward.linear1",
    "fc2": "feed_forward.linear2",
    "final_layer_norm": "norm2",
}
DECODER_NAMES = {
    "self_attn.{p}_proj": "self_attention.{p}_proj",
    "self_attn_layer_norm": "norm1",
    "encoder_attn.{p}_proj": "cross_attention.{p}_proj",
    "encoder_attn_layer_norm": "norm2",
    "fc1": "feed_forward.linear1",
    "fc2": "feed_forward.linear2",
    "final_layer_norm": "norm3",
}
EMBEDDING_NAMES = ("model.shared.weight", "model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight")
POSITION_NAMES = ("model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight")


def _layer_names(stack: str, ours: str, names: dict[str, str], n_layers: int) -> dict[str, str]:
    """{our name: Marian's name} for every weight and bias of one stack's layers."""
    mapping = {}
    for i in range(n_layers):
        for theirs, mine in names.items():
            for p in ("q", "k", "v", "out") if "{p}" in theirs else ("",):
                for part in ("weight", "bias"):
                    mapping[f"{ours}.{i}.{mine.format(p=p)}.{part}"] = (
                        f"model.{stack}.layers.{i}.{theirs.format(p=p)}.{part}"
                    )
    return mapping


def marian_state_dict(tensors: dict[str, torch.Tensor], config: TransformerConfig) -> dict[str, torch.Tensor]:
    """Marian's weights under model/core's names; MarianError for a missing weight or learnt positions."""
    embeddings = [tensors[name] for name in EMBEDDING_NAMES if name in tensors]
    if not embeddings:
        raise MarianError(f"the weights hold no embedding ({EMBEDDING_NAMES[0]})")
    if any(not torch.equal(e, embeddings[0]) for e in embeddings):
        raise MarianError("the encoder and decoder embeddings differ: the core shares one embedding (3.4)")
    table = sinusoidal_positional_encoding(config.max_positions, config.d_model, config.positional_layout)
    for name in POSITION_NAMES:  # stored by older conversions: they must be the fixed sinusoids
        if name in tensors and not torch.allclose(tensors[name].float(), table, atol=1e-6):
            raise MarianError(f"{name} is not the sinusoid table (learnt positions cannot be represented)")
    mapping = {
        **_layer_names("encoder", "encoder_layers", ENCODER_NAMES, config.n_encoder_layers),
        **_layer_names("decoder", "decoder_layers", DECODER_NAMES, config.n_decoder_layers),
    }
    missing = sorted(theirs for theirs in mapping.values() if theirs not in tensors)
    if missing or "final_logits_bias" not in tensors:
        raise MarianError(f"the weights lack {(missing or ['final_logits_bias'])[:3]}")
    state = {mine: tensors[theirs] for mine, theirs in mapping.items()}
    state["embedding.weight"] = embeddings[0]
    state["final_logits_bias"] = tensors["final_logits_bias"].reshape(1, config.vocab_size)
    return state


def read_marian_weights(directory: Path) -> dict[str, torch.Tensor]:
    """The folder's tensors: model.safetensors, else pytorch_model.bin through torch.load(weights_only=True)."""
    safetensors = directory / SAFETENSORS_FILE
    pickled = directory / PICKLED_WEIGHTS_FILE
    try:
        if safetensors.is_file():
            return load_file(str(safetensors))
        if pickled.is_file():
            return torch.load(pickled, map_location="cpu", weights_only=True)  # tensors only, never code
    except Exception as error:  # a truncated download, a pickle holding anything but tensors
        raise MarianError(f"cannot read the weights in {directory.name}: {type(error).__name__}: {error}") from None
    raise MarianError(f"no weights in {directory}: expected {SAFETENSORS_FILE} or {PICKLED_WEIGHTS_FILE}")


def load_marian_model(directory: str | Path, unk_id: int, device: str | torch.device = "cpu") -> Transformer:
    """The Marian checkpoint in `directory` as model/core's Transformer, in eval mode."""
    directory = Path(directory)
    config = marian_config(
        _read_json(directory / MARIAN_CONFIG_FILE), _read_json(directory / GENERATION_CONFIG_FILE, False), unk_id
    )
    model = Transformer(config)
    state = marian_state_dict(read_marian_weights(directory), config)
    result = model.load_state_dict(state, strict=False)
    if result.missing_keys or result.unexpected_keys:
        raise MarianError(
            f"weights do not fit: missing {result.missing_keys[:3]}, unexpected {result.unexpected_keys[:3]}"
        )
    return model.to(device).eval()


# --------------------------------------------------------------------------- a whole checkpoint
TOKENIZER_FILES = ("source.spm", "target.spm", "vocab.json", "tokenizer_config.json")
CARD_FILE = "README.md"  # the repository's card: its benchmark table is the published scores
MARIAN_FILES = [MARIAN_CONFIG_FILE, GENERATION_CONFIG_FILE, *TOKENIZER_FILES, CARD_FILE]


def published_scores(card: str) -> list[dict]:
    """The rows of an OPUS-MT card's "Benchmarks" table ({"testset", "BLEU", "chr-F"}), as published."""
    rows, in_table = [], False
    for line in card.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].lower() == "testset":
            in_table, header = True, cells
            continue
        if in_table and line.strip().startswith("|"):
            if set(cells[0]) <= {"-", ":"}:
                continue
            rows.append(dict(zip(header, cells)))
        elif in_table:
            in_table = False
    return rows


CARD_FACTS = ("dataset", "model", "pre-processing")  # the card's "* name: value" lines kept (OPUS-MT's cards)


def card_facts(card: str) -> dict[str, str]:
    """What an OPUS-MT card says of its training, as written: its "* dataset: opus"-style lines named in CARD_FACTS,
    and the licence of its front matter ("license: cc-by-4.0")."""
    facts, lines = {}, card.splitlines()
    if lines and lines[0].strip() == "---":  # YAML front matter, up to the next ---
        for line in lines[1:]:
            if line.strip() == "---":
                break
            name, _, value = line.partition(":")
            if name.strip() == "license" and value.strip():
                facts["license"] = value.strip()
    for line in lines:
        name, colon, value = line.strip().lstrip("*").partition(":")
        if line.strip().startswith("*") and colon and name.strip() in CARD_FACTS and value.strip():
            facts.setdefault(name.strip(), value.strip())
    return facts


def download_marian(repo_id: str, revision: str | None = None, **options) -> Path:
    """An OPUS-MT repo's files in the local Hub cache: model.safetensors where the revision has it, else
    pytorch_model.bin (read later with weights_only=True); never the other frameworks' copies."""
    from huggingface_hub import hf_hub_download, snapshot_download  # the Hub only when asked for

    from model.checkpoints.hub import validate_repo_id

    validate_repo_id(repo_id)
    try:
        folder = Path(
            snapshot_download(repo_id, revision=revision, allow_patterns=[*MARIAN_FILES, SAFETENSORS_FILE], **options)
        )
        if not (folder / SAFETENSORS_FILE).is_file():
            hf_hub_download(repo_id, PICKLED_WEIGHTS_FILE, revision=revision, **options)
    except Exception as error:  # network errors, 404s, offline mode: one clear message
        raise MarianDownloadError(
            f"could not download {repo_id!r} from the Hugging Face Hub ({type(error).__name__}: {error}). "
            "Check the network, or give a local OPUS-MT folder."
        ) from None
    return folder


def load_marian_checkpoint(
    source: str | Path,
    hub: bool = False,
    device: str | torch.device = "cpu",
    revision: str | None = None,
    **download_options,
):
    """An OPUS-MT checkpoint (a local folder, or with hub=True a repo id) as a Checkpoint: model/core's
    Transformer, the Marian tokenizer, and metrics holding the card's published scores. download_options go to
    huggingface_hub's downloads (e.g. tqdm_class, for progress)."""
    from model.checkpoints.checkpoint import Checkpoint  # checkpoint.py's loader dispatches here
    from model.text.marian_tokenizer import MarianTokenizer

    directory = download_marian(str(source), revision, **download_options) if hub else Path(source)
    if not directory.is_dir():
        raise MarianError(f"OPUS-MT folder {directory} does not exist")
    name = str(source) if hub else directory.name
    try:
        tokenizer = MarianTokenizer.load(directory, _direction_of(name))
    except ValueError as error:
        raise MarianError(str(error)) from None
    model = load_marian_model(directory, tokenizer.unk_id, device)
    if tokenizer.vocab_size != model.config.vocab_size:
        raise MarianError(
            f"vocab.json has {tokenizer.vocab_size} tokens but config.json says vocab_size={model.config.vocab_size}"
        )
    if tokenizer.pad_id != model.config.pad_id or tokenizer.eos_id != model.config.eos_id:
        raise MarianError("vocab.json's <pad> and </s> ids differ from config.json's pad_token_id and eos_token_id")
    card_file = directory / CARD_FILE
    card = card_file.read_text(encoding="utf-8") if card_file.is_file() else ""
    metrics = {"name": name, "published_scores": published_scores(card), "card": card_facts(card)}
    return Checkpoint(model, tokenizer, model.config, metrics, directory, kind="opus-mt")


def _direction_of(name: str) -> str | None:
    """ "de-en" from a name like "opus-mt-de-en" (the fallback when tokenizer_config.json names no languages)."""
    tail = name.rstrip("/").rsplit("/", 1)[-1].removeprefix("opus-mt-")
    return tail if tail.count("-") == 1 else None
