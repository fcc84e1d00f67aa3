"""The model card of a checkpoint: `README.md` beside its weights, generated from metrics.json.

The Hugging Face Hub reads a model repo's README.md: YAML metadata (languages, licence, datasets and
a `model-index` with the evaluation results) and a Markdown body. The card is built with
huggingface_hub's card utilities (`ModelCardData`, `EvalResult`, `ModelCard`), never by hand, so it
parses the way the Hub parses it. Every number in it comes from the checkpoint's own metrics.json
(written by `model.training.train`, scores by `scripts/score_checkpoint.py`); nothing is typed in.

The architecture is the paper's (Vaswani et al., 2017, section 3); scores are sacreBLEU and chrF on
detokenized output, greedy and beam search (section 6.1). The card's fixed prose is the template in
model/checkpoints/card_template.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from model.checkpoints.card_template import TEMPLATE
from model.checkpoints.reading import read_json_object, read_optional_file

CARD_FILE = "README.md"
LANGUAGE_NAMES = {"de": "German", "en": "English"}
DECODING_NAMES = {"greedy": "greedy", "beam4": "beam 4"}
METRIC_NAMES = {"bleu": "BLEU", "chrf": "chrF"}
# Multi30k task 1 on the Hub, with the splits the project's files correspond to (same 29,000 /
# 1,014 / 1,000 sentences; test_2016_flickr is the Hub copy's "test").
MULTI30K_HUB_ID = "bentrevett/multi30k"
HUB_SPLITS = {"train": "train", "val": "validation", "test_2016_flickr": "test"}
# The Hub's "pytorch" library: the Transformer is a torch.nn.Module with huggingface_hub's PyTorchModelHubMixin
# (model/checkpoints/hub.py), whose tags (model_hub_mixin, pytorch_model_hub_mixin) are in TAGS.
LIBRARY_NAME = "pytorch"
PROJECT_URL = None  # the project's public home, once it has one; the card then links it
PAPER_URL = "https://arxiv.org/abs/1706.03762"
# A data set used for training (its name in metrics.json's training_data or command) -> its Hub id, terms, link.
DATA_SETS = {
    "multi30k": {
        "hub_id": MULTI30K_HUB_ID,
        "terms": (
            "**Multi30k** task 1 ([github.com/multi30k/dataset](https://github.com/multi30k/dataset)): "
            "English descriptions of Flickr30k images with German translations, 29,000 training pairs. "
            "Released for research use (the images' Flickr terms apply); cite Elliott et al. (2016), "
            '"Multi30K: Multilingual English-German Image Descriptions", Proceedings of the 5th Workshop on '
            "Vision and Language."
        ),
    },
    "tatoeba": {
        "hub_id": "Helsinki-NLP/tatoeba",
        "terms": (
            "**Tatoeba** English-German sentence pairs, from the export at "
            "[manythings.org/anki](https://www.manythings.org/anki/): licensed "
            "[CC BY 2.0 FR](https://creativecommons.org/licenses/by/2.0/fr/), attribution "
            '"Tatoeba, [tatoeba.org](https://tatoeba.org)".'
        ),
    },
}
# Weights derived from Multi30k are for research use, as Multi30k is; the code is MIT. The link is the terms'
# own page (Multi30k publishes no licence file of its own).
WEIGHTS_LICENSE = {
    "license": "other",
    "license_name": "research-use-only",
    "license_link": "https://github.com/multi30k/dataset",
}
TAGS = [
    "translation",
    "transformer",
    "attention-is-all-you-need",
    "encoder-decoder",
    "pytorch",
    "safetensors",
    "from-scratch",
    "attention-visualization",
    "model_hub_mixin",
    "pytorch_model_hub_mixin",
]


# --------------------------------------------------------------------------- model-index
def scored_dataset(split: str) -> tuple[str, str, str]:
    """(Hub dataset id, name, split) of a metrics.json split: "tatoeba/<slice>" splits are slices held out of the
    Tatoeba export (Helsinki-NLP/tatoeba; filed under the slice's name, as the Hub copy has one split only), the
    others Multi30k task 1's splits."""
    family, _, part = split.partition("/")
    if family == "tatoeba":
        return DATA_SETS["tatoeba"]["hub_id"], f"Tatoeba, held out ({split})", part or split
    return MULTI30K_HUB_ID, f"Multi30k task 1 ({split})", HUB_SPLITS.get(split, split)


def _direction_name(direction: str) -> str:
    source, _, target = direction.partition("-")
    return f"{LANGUAGE_NAMES.get(source, source)} → {LANGUAGE_NAMES.get(target, target)}"


def _scores(metrics: dict) -> dict:
    """metrics["scores"] as {split: {direction: {decoding: {metric: value}}}}, skipping anything malformed."""
    scores = metrics.get("scores")
    if not isinstance(scores, dict):
        return {}
    return {
        split: {
            direction: {decoding: values for decoding, values in by_decoding.items() if isinstance(values, dict)}
            for direction, by_decoding in directions.items()
            if isinstance(by_decoding, dict)
        }
        for split, directions in scores.items()
        if isinstance(directions, dict)
    }


def eval_results(metrics: dict) -> list[EvalResult]:
    """One EvalResult per (split, direction, decoding, metric) in metrics["scores"].

    The Hub groups results by task, dataset, config and split; the direction is the dataset config
    ("de-en"), so each split and direction becomes one model-index entry with four metrics, filed under the
    data set it was scored on (scored_dataset).
    """
    results = []
    for split, directions in _scores(metrics).items():
        for direction, by_decoding in directions.items():
            for decoding, scores in by_decoding.items():
                dataset_id, dataset_name, hub_split = scored_dataset(split)
                for metric, metric_name in METRIC_NAMES.items():
                    if metric not in scores:
                        continue
                    results.append(
                        EvalResult(
                            task_type="translation",
                            task_name=f"Translation {_direction_name(direction)}",
                            dataset_type=dataset_id,
                            dataset_name=dataset_name,
                            dataset_config=direction,
                            dataset_split=hub_split,
                            metric_type=metric,
                            metric_name=f"{metric_name} ({DECODING_NAMES.get(decoding, decoding)})",
                            metric_value=scores[metric],
                            metric_config="sacrebleu, cased, detokenized" if metric == "bleu" else None,
                        )
                    )
    return results


# --------------------------------------------------------------------------- Markdown body
def results_table(metrics: dict) -> str:
    """The README's table: one row per split and direction, greedy and beam-4 BLEU and chrF."""
    scores = _scores(metrics)
    if not scores:
        return (
            "Not scored yet: `python3 scripts/score_checkpoint.py --checkpoint DIR --data MULTI30K_DIR` "
            "writes the scores into metrics.json and this card."
        )
    lines = [
        "| split | direction | greedy BLEU | beam-4 BLEU | greedy chrF | beam-4 chrF |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for split, directions in scores.items():
        for direction, by_decoding in directions.items():
            greedy, beam = by_decoding.get("greedy", {}), by_decoding.get("beam4", {})
            cells = [greedy.get("bleu", "–"), beam.get("bleu", "–"), greedy.get("chrf", "–"), beam.get("chrf", "–")]
            lines.append(f"| {split} | {_direction_name(direction)} | " + " | ".join(map(str, cells)) + " |")
    how = (metrics.get("scored_by") or {}).get("bleu", "sacreBLEU")
    return "\n".join(lines) + f"\n\n{how}; beam search with 4 beams and length penalty 0.6 (section 6.1)."


def _architecture(config: dict, metrics: dict) -> str:
    if not config:
        return ""
    parameters = metrics.get("parameters")
    count = f"{parameters / 1e6:.2f}M parameters: " if isinstance(parameters, (int, float)) else ""
    return (
        f"{count}d_model {config.get('d_model')}, {config.get('n_heads')} heads, "
        f"{config.get('n_encoder_layers')} encoder + {config.get('n_decoder_layers')} decoder layers, "
        f"d_ff {config.get('d_ff')}, dropout {config.get('dropout')}, shared vocabulary of "
        f"{config.get('vocab_size')} tokens (embeddings tied, section 3.4)."
    )


_PATH = re.compile(r"(?:\.{0,2}/)?(?:[\w.-]+/)+([\w.-]+/)?([\w.-]+)")


def public_paths(text: str) -> str:
    """Local file paths in text cut to their last two parts ("../shared/data/multi30k/train" -> "multi30k/train"):
    what the data was, without the machine it was read from."""

    def shorten(match: re.Match) -> str:
        parts = match.group(0).strip("/").split("/")
        return "/".join(part for part in parts[-2:] if part not in ("..", "."))

    return _PATH.sub(shorten, text)


def _hardware(metrics: dict) -> str:
    """Where it was trained, in plain words, from metrics.json's device, time, steps and speed."""
    device = str(metrics.get("device") or "")
    seconds, steps, speed = metrics.get("training_seconds"), metrics.get("step"), metrics.get("tokens_per_second")
    where = (
        "on a CPU"
        if device == "cpu"
        else "on a GPU"
        if device.startswith("cuda")
        else f"on `{device}`"
        if device
        else ""
    )
    if isinstance(metrics.get("device_name"), str):
        where += f" ({metrics['device_name']})"
    details = [
        f"{seconds / 60:.0f} minutes" if isinstance(seconds, (int, float)) else "",
        f"{steps:,} optimizer steps" if isinstance(steps, int) else "",
        f"about {speed:,.0f} tokens per second" if isinstance(speed, (int, float)) else "",
    ]
    details = [d for d in details if d]
    if not where and not details:
        return ""
    text = "Trained " + where + (f" for {details[0]}" if details and "minutes" in details[0] else "")
    rest = details[1:] if details and "minutes" in details[0] else details
    text += f" ({', '.join(rest)})" if rest else ""
    if metrics.get("selected"):
        text += f"; weights: {metrics['selected']}"
    return text + "."


def _provenance(metrics: dict) -> str:
    """How the weights were made: hardware in plain words and the training command (paths shortened)."""
    lines = [line for line in (_hardware(metrics),) if line]
    if metrics.get("command"):
        commit = f" at commit `{metrics['commit']}`" if metrics.get("commit") else ""
        lines.append(f"Training command{commit}:\n\n```bash\n{public_paths(str(metrics['command']))}\n```")
    return "\n\n".join(lines)


def _data_used(metrics: dict) -> list[str]:
    """The known data sets (DATA_SETS keys) that metrics.json says the model was trained on."""
    text = f"{metrics.get('training_data', '')} {metrics.get('command', '')}".lower()
    return [name for name in DATA_SETS if name in text]


def _training_data(metrics: dict, data_used: list[str]) -> str:
    recorded = metrics.get("training_data")
    lines = [f"Data: {public_paths(str(recorded))}." if recorded else ""]
    lines += [f"- {DATA_SETS[name]['terms']}" for name in data_used]
    return (
        "\n\n".join(line for line in lines[:1] if line)
        + ("\n\n" if lines[0] and data_used else "")
        + "\n".join(lines[1:])
    )


def _licences(data_used: list[str]) -> str:
    """What applies to what: the code's licence, and the training data's terms for everything learnt from it."""
    home = f" ({PROJECT_URL})" if PROJECT_URL else ""
    code = f"- **Code**: the project{home} that defines, trains and runs the model is MIT-licensed (its `LICENSE`)."
    learnt = (
        "- **Weights** (`model*.safetensors`) and the files learnt from or computed on the training data "
        "(`tokenizer.json`, `film.npz`, `corpus_heads.npz`) are not MIT: they carry the data's terms"
    )
    if not data_used:
        return f"{code}\n{learnt}. The training data is not recorded in metrics.json: check its terms before sharing."
    terms = []
    if "multi30k" in data_used:
        terms.append(
            "Multi30k was released for research use, so these are for **research and teaching use only**, "
            "not for commercial use (the card's `license: other`, `license_name: research-use-only`)"
        )
    if "tatoeba" in data_used:
        terms.append('the Tatoeba sentences are CC BY 2.0 FR, so any use credits "Tatoeba, tatoeba.org"')
    return f"{code}\n{learnt}. " + "; ".join(terms) + "."


# --------------------------------------------------------------------------- the card
def usage_python(source: str, hub: bool) -> str:
    """Python that loads the checkpoint at source (a Hub repo id, or a folder) and translates one sentence."""
    where = f"{json.dumps(source)}, hub=True" if hub else json.dumps(source)
    return (
        "from model import PretrainedTransformer, load_checkpoint\n"
        "from model.decoding.greedy import translate\n\n"
        f"model = PretrainedTransformer.from_pretrained({json.dumps(source)})  # the model alone: config.json + safetensors\n"
        f"checkpoint = load_checkpoint({where})  # the model, its tokenizer and metrics\n"
        'trace = translate(checkpoint.model, checkpoint.tokenizer, "Ein Mann fährt Fahrrad.", "de-en")\n'
        "print(trace.translation)"
    )


def build_model_card(
    metrics: dict, config: dict, name: str, repo_id: str | None = None, source: str = "."
) -> ModelCard:
    """A ModelCard from a checkpoint's metrics.json and config.json contents.

    Args:
        metrics: the parsed metrics.json ("scores" become the model-index).
        config: the parsed config.json (the architecture line).
        name: the model's name in the model-index (the repo id when pushed, else the folder name).
        repo_id: the Hub repo the card is for, if any: the examples load it from the Hub.
        source: without repo_id, the folder the examples load (the checkpoint's path in the project).
    Returns:
        A huggingface_hub.ModelCard; `str(card)` is the README.md text.
    """
    results = eval_results(metrics)
    data_used = _data_used(metrics)
    datasets = [DATA_SETS[name]["hub_id"] for name in data_used]
    for dataset_id in dict.fromkeys(result.dataset_type for result in results):  # scored on it
        if dataset_id not in datasets:
            datasets.append(dataset_id)
    data = ModelCardData(
        language=["de", "en"],
        pipeline_tag="translation",
        library_name=LIBRARY_NAME,
        tags=TAGS,
        datasets=datasets or None,
        metrics=sorted({result.metric_type for result in results}) or None,
        model_name=name if results else None,
        eval_results=results or None,
        **(WEIGHTS_LICENSE if "multi30k" in data_used else {}),
    )
    project = f"[Attention Explorer]({PROJECT_URL})" if PROJECT_URL else "the Attention Explorer project"
    if repo_id:  # a card for the Hub: load by repo id
        usage = (
            f"python3 -m model.decoding.cli --hub --checkpoint {repo_id} --direction de-en "
            '"Ein Mann fährt Fahrrad."\n'
            f"python3 app.py --hub {repo_id}   # the app on this checkpoint"
        )
    else:
        usage = (
            f'python3 -m model.decoding.cli --checkpoint {source} --direction de-en "Ein Mann fährt Fahrrad."\n'
            f"python3 app.py --checkpoint {source}   # the app on this checkpoint"
        )
    return ModelCard.from_template(
        data,
        template_str=TEMPLATE,
        title=f"Attention Explorer: {name}",
        architecture=_architecture(config, metrics),
        provenance=_provenance(metrics),
        results=results_table(metrics),
        training_data=_training_data(metrics, data_used),
        licences=_licences(data_used),
        usage=usage,
        project=project,
        usage_python=usage_python(repo_id or source, hub=bool(repo_id)),
    )


def _read(path: Path) -> dict:
    """A JSON object file of the checkpoint, or {} when it is missing or broken (the card leaves its facts out)."""
    return read_optional_file(path, read_json_object, {})[0]


def local_source(directory: Path) -> str:
    """How the card's examples name a checkpoint folder: its path in the project (checkpoints/de-en-small), or "."."""
    from model.checkpoints.paths import REPO_ROOT

    resolved = directory.resolve()
    return resolved.relative_to(REPO_ROOT).as_posix() if resolved.is_relative_to(REPO_ROOT) else "."


def write_model_card(directory: str | Path, repo_id: str | None = None) -> Path:
    """Write README.md into a checkpoint directory from its metrics.json and config.json; returns its path."""
    directory = Path(directory)
    card = build_model_card(
        _read(directory / "metrics.json"),
        _read(directory / "config.json"),
        name=repo_id or directory.resolve().name,
        repo_id=repo_id,
        source=local_source(directory),
    )
    path = directory / CARD_FILE
    if not path.exists() or path.read_text(encoding="utf-8") != str(card):  # unchanged: leave the file alone
        card.save(path)
    return path
