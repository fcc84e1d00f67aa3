"""The training film: how attention (3.2) forms while the model trains (section 5).

At every evaluation `model.training.train` translates two fixed probe sentences, one per direction, with
`model.decoding.greedy.translate` and appends a frame to one file in the run directory (`film.npz`).
A frame is the step, the validation BLEU of both directions, and per probe what the views need:
the three kinds of attention weights of every layer and head, the candidates and the translation.

File format (read it with `load_film`; no pickle anywhere):
    a NumPy .npz archive (zip, deflate-compressed), loadable with np.load(path, allow_pickle=False):
    - "meta": uint8 array of UTF-8 JSON
        {"format": FORMAT, "probes": {direction: text},
         "frames": [{"step": int, "val_bleu": {"de-en": float, "en-de": float},
                     "probes": {direction: {<every field of TEXT_FIELDS>}}}]}
    - "f{i}.{direction}.{field}": float16 arrays, for frame i and every field of ARRAY_FIELDS
        encoder_attention (L_enc, h, S, S), decoder_self_attention (L_dec, h, T, T),
        cross_attention (L_dec, h, T, S), candidate_probs (T, k), chosen_probs (T,), entropy (T,) bits
    Tokens follow model/decoding/trace.py: S source tokens, T decoding steps; decoder rows are queries
    target_tokens (= [BOS] + output_tokens[:-1]). Scores before the softmax are not kept.

`load_film` returns plain data: a list of frames {"step", "val_bleu", "probes": {direction:
{field: value}}} with the arrays as float32. float16 keeps ~3 significant digits of a weight.
Probe translations stop after FILM_MAX_NEW_TOKENS tokens, which bounds an untrained model's
frames: 30 evaluations of the 6 + 6 layer, 8-head recipe stay under 5 MB (a test).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from model.checkpoints.files import FILM_FILE, film_candidates, find_film  # noqa: F401  (the film's place)
from model.decoding.greedy import translate
from model.text.tokenizer import SubwordTokenizer
from model.core.transformer import Transformer

FORMAT = "attention-explorer-film/1"
PROBES = {
    "de-en": "Zwei Hunde spielen im Schnee.",
    "en-de": "A little girl is climbing into a wooden playhouse.",
}
FILM_MAX_NEW_TOKENS = 24  # the probes' translations need ~10-15; an untrained model never stops
ARRAY_FIELDS = (
    "encoder_attention",
    "decoder_self_attention",
    "cross_attention",
    "candidate_probs",
    "chosen_probs",
    "entropy",
)
TEXT_FIELDS = (
    "direction",
    "source_text",
    "translation",
    "source_tokens",
    "target_tokens",
    "output_tokens",
    "candidate_tokens",
)


def record_frame(model: Transformer, tokenizer: SubwordTokenizer, step: int, val_bleu: dict[str, float]) -> dict:
    """One frame: the traces of the PROBES at this step. Leaves the model in eval mode."""
    probes = {}
    for direction, text in PROBES.items():
        trace = translate(model, tokenizer, text, direction, max_new_tokens=FILM_MAX_NEW_TOKENS)
        probes[direction] = {
            **{name: getattr(trace, name) for name in TEXT_FIELDS},
            **{name: np.asarray(getattr(trace, name), dtype=np.float32) for name in ARRAY_FIELDS},
        }
    return {"step": int(step), "val_bleu": {k: round(float(v), 4) for k, v in val_bleu.items()}, "probes": probes}


def save(path: str | Path, frames: list[dict]) -> None:
    """Write frames (as `record_frame` / `load_film` give them) to one .npz film, atomically."""
    path = Path(path)
    arrays, meta_frames = {}, []
    for index, frame in enumerate(frames):
        meta_probes = {}
        for direction, probe in frame["probes"].items():
            meta_probes[direction] = {name: probe[name] for name in TEXT_FIELDS}
            for name in ARRAY_FIELDS:
                arrays[f"f{index}.{direction}.{name}"] = np.asarray(probe[name], dtype=np.float16)
        meta_frames.append({"step": frame["step"], "val_bleu": frame["val_bleu"], "probes": meta_probes})
    meta = {"format": FORMAT, "probes": PROBES, "frames": meta_frames}
    arrays["meta"] = np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)
    partial = path.with_name(path.name + ".partial.npz")  # a crash mid-write never leaves half a film
    np.savez_compressed(partial, **arrays)
    os.replace(partial, path)


def append(path: str | Path, frame: dict) -> None:
    """Add one frame at the end of the film at `path` (created if missing)."""
    path = Path(path)
    save(path, (load_film(path) if path.exists() else []) + [frame])


def load_film(path: str | Path) -> list[dict]:
    """The frames of a film file, oldest first, as plain data (arrays float32); ValueError if it is not one."""
    with np.load(Path(path), allow_pickle=False) as archive:
        if "meta" not in archive.files:
            raise ValueError(f"{path} is not a training film (no 'meta' entry)")
        meta = json.loads(archive["meta"].tobytes().decode("utf-8"))
        if meta.get("format") != FORMAT:
            raise ValueError(f"{path} has film format {meta.get('format')!r}; expected {FORMAT!r}")
        frames = []
        for index, frame in enumerate(meta["frames"]):
            probes = {
                direction: {
                    **fields,
                    **{name: archive[f"f{index}.{direction}.{name}"].astype(np.float32) for name in ARRAY_FIELDS},
                }
                for direction, fields in frame["probes"].items()
            }
            frames.append({"step": frame["step"], "val_bleu": frame["val_bleu"], "probes": probes})
    return frames
