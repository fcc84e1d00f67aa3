"""Parallel data for training (section 5.1): reading, both directions, token-count batches.

Sources, mixed freely:
- `PREFIX` where `PREFIX.de` and `PREFIX.en` are line-aligned files (Multi30k: `.../multi30k/train`);
- `FILE.tsv`: `English<TAB>German` per line (the Tatoeba / manythings.org format; extra columns ignored);
- `hf:DATASET[:CONFIG]`: a Hugging Face Hub dataset with a `translation` column of {"de", "en"}
  (for example `hf:wmt14:de-en`), read with the `datasets` package; needs the network.

Every pair is used in both directions, with the target-language tag as the first source token.
Batches hold about `max_tokens` tokens (source + target, padding included) of similar lengths
("sentence pairs were batched together by approximate sequence length", section 5.1).
"""

from __future__ import annotations

import queue
import random
import threading
from dataclasses import dataclass
from pathlib import Path

import torch

from model.core.config import TransformerConfig
from model.decoding.greedy import pad_batch
from model.text.tokenizer import SubwordTokenizer
from model.training.flops import training_flops


class DataError(ValueError):
    """A data source that cannot be read; the message names it and says why."""


Pair = tuple[str, str]  # (German, English)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise DataError(f"cannot read {path}: {error.strerror}") from None


def read_aligned(prefix: str | Path) -> list[Pair]:
    """PREFIX.de and PREFIX.en, line-aligned."""
    german, english = _read_lines(Path(f"{prefix}.de")), _read_lines(Path(f"{prefix}.en"))
    if len(german) != len(english):
        raise DataError(f"{prefix}.de has {len(german)} lines but {prefix}.en has {len(english)}")
    return list(zip(german, english))


def read_tsv(path: str | Path) -> list[Pair]:
    """English<TAB>German lines -> (German, English) pairs."""
    pairs = []
    for number, line in enumerate(_read_lines(Path(path)), start=1):
        if not line.strip():
            continue
        columns = line.split("\t")
        if len(columns) < 2:
            raise DataError(f"{path}:{number}: expected 'English<TAB>German', got {line[:60]!r}")
        pairs.append((columns[1], columns[0]))
    return pairs


def read_hub(spec: str, split: str = "train") -> list[Pair]:
    """`hf:DATASET[:CONFIG]` through the `datasets` package (online only)."""
    _, _, rest = spec.partition(":")
    name, _, config = rest.partition(":")
    if not name:
        raise DataError(f"{spec!r}: expected hf:DATASET[:CONFIG], e.g. hf:wmt14:de-en")
    try:
        import datasets
    except ImportError:
        raise DataError("reading a Hub dataset needs the `datasets` package: pip install datasets") from None
    try:
        rows = datasets.load_dataset(name, config or None, split=split)
    except Exception as error:  # offline, unknown dataset, bad config: one clear message
        raise DataError(
            f"could not load {name!r} from the Hugging Face Hub ({type(error).__name__}: {error})"
        ) from None
    if "translation" not in rows.column_names:
        raise DataError(f"{name!r} has no 'translation' column (columns: {rows.column_names})")
    return [(row["translation"]["de"], row["translation"]["en"]) for row in rows]


def read_source(spec: str) -> list[Pair]:
    """Read one source given as a path prefix, a .tsv file or hf:DATASET[:CONFIG]."""
    if spec.startswith("hf:"):
        return read_hub(spec)
    if spec.endswith(".tsv"):
        return read_tsv(spec)
    if Path(f"{spec}.de").exists() or Path(f"{spec}.en").exists():
        return read_aligned(spec)
    raise DataError(f"no data at {spec!r}: expected {spec}.de + {spec}.en, a .tsv file, or hf:DATASET")


def read_sources(specs: list[str]) -> list[Pair]:
    pairs = [pair for spec in specs for pair in read_source(spec)]
    pairs = [(de.strip(), en.strip()) for de, en in pairs if de.strip() and en.strip()]
    if not pairs:
        raise DataError(f"no sentence pairs in {specs}")
    return pairs


@dataclass
class Example:
    source: list[int]  # [<2xx>] + subwords + [EOS]
    target: list[int]  # [BOS] + subwords + [EOS]


def make_examples(pairs: list[Pair], tokenizer: SubwordTokenizer, max_tokens: int) -> list[Example]:
    """Each pair in both directions; pairs with a side longer than max_tokens subwords are dropped."""
    examples = []
    for german, english in pairs:
        de_ids, en_ids = tokenizer.encode(german), tokenizer.encode(english)
        if len(de_ids) > max_tokens or len(en_ids) > max_tokens:
            continue
        examples.append(Example(tokenizer.frame_source(de_ids, "en"), tokenizer.frame_target(en_ids)))
        examples.append(Example(tokenizer.frame_source(en_ids, "de"), tokenizer.frame_target(de_ids)))
    return examples


def token_batches(examples: list[Example], max_tokens: int, rng: random.Random) -> list[list[int]]:
    """Indices grouped into batches of similar lengths holding at most ~max_tokens padded tokens.

    Lengths are jittered slightly before sorting so batches differ between epochs; batch order is
    shuffled.
    """
    order = sorted(
        range(len(examples)), key=lambda i: (len(examples[i].source) + rng.random() * 2, len(examples[i].target))
    )
    batches = cut_into_batches(examples, order, max_tokens)
    rng.shuffle(batches)
    return batches


def cut_into_batches(examples: list[Example], order: list[int], max_tokens: int) -> list[list[int]]:
    """`order` cut into consecutive batches whose padded source + target tokens stay within max_tokens."""
    batches, current, longest = [], [], 0
    for index in order:
        length = max(len(examples[index].source), len(examples[index].target))
        if current and max(longest, length) * (len(current) + 1) * 2 > max_tokens:
            batches.append(current)
            current, longest = [], 0
        current.append(index)
        longest = max(longest, length)
    return batches + [current] if current else batches


def collate(
    examples: list[Example], indices: list[int], pad_id: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """-> src (B, S), decoder input (B, T), labels (B, T): labels are the target shifted left."""
    src = pad_batch([examples[i].source for i in indices], pad_id)
    tgt = pad_batch([examples[i].target for i in indices], pad_id)  # (B, T + 1)
    return src, tgt[:, :-1], tgt[:, 1:]


def prefetch(
    examples: list[Example], batches: list[list[int]], config: TransformerConfig, device: torch.device, depth: int = 8
):
    """Yield (src, tgt_in, labels) on the device plus real source / target token counts and training FLOPs.

    A background thread pads the next batches (pinned, for asynchronous copies to a GPU) and counts
    their tokens on the CPU, so the training loop never waits for the GPU to learn a count.
    """
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    pin = device.type == "cuda"
    failure: list[BaseException] = []

    def fill() -> None:
        try:
            for indices in batches:
                src, tgt_in, labels = collate(examples, indices, config.pad_id)
                source_lengths, target_lengths = (src != config.pad_id).sum(1), (labels != config.pad_id).sum(1)
                item = (
                    *(t.pin_memory() if pin else t for t in (src, tgt_in, labels)),
                    int(source_lengths.sum()),
                    int(target_lengths.sum()),
                    training_flops(config, source_lengths, target_lengths),
                )
                while not stop.is_set():
                    try:
                        ready.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
        except BaseException as error:  # noqa: BLE001  handed to the training loop below
            failure.append(error)
        if not stop.is_set():  # the end of the batches (the loop may have stopped reading)
            ready.put(None)

    thread = threading.Thread(target=fill, daemon=True)
    thread.start()
    try:
        while (item := ready.get()) is not None:
            src, tgt_in, labels, *counts = item
            yield (*(t.to(device, non_blocking=True) for t in (src, tgt_in, labels)), *counts)
        if failure:
            raise failure[0]
    finally:
        stop.set()
