"""Shared tiny fixtures: a tokenizer, config, model and checkpoint built in seconds on the CPU.

No test reads ../shared/data, needs the network, a GPU, or a particular working directory.
"""

from __future__ import annotations

import shutil
import socket
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "checkpoints" / "de-en-small"
START_TIMEOUT_S = 180  # importing torch and gradio on a busy 2-core machine is slow
BROWSER_TESTS = Path(__file__).resolve().parent / "browser"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from model import Checkpoint, SubwordTokenizer, Transformer, TransformerConfig, TranslationTrace  # noqa: E402
from model import load_checkpoint, save_checkpoint  # noqa: E402
from model.decoding.greedy import translate  # noqa: E402

# One thread: on a small shared CPU (CI has 2 cores) two OpenMP threads contend and run many times
# slower, and one thread makes float results independent of the machine's core count.
torch.set_num_threads(1)

# A small hand-written parallel corpus (German, English) in the style of the training data.
PAIRS = [
    ("Ein Mann fährt Fahrrad.", "A man rides a bike."),
    ("Eine Frau liest ein Buch.", "A woman reads a book."),
    ("Zwei Hunde spielen im Schnee.", "Two dogs play in the snow."),
    ("Ein Kind isst einen Apfel.", "A child eats an apple."),
    ("Die Straße ist nass.", "The street is wet."),
    ("Wie spät ist es?", "What time is it?"),
    ("Ich habe Hunger.", "I am hungry."),
    ("Grüße aus Köln!", "Greetings from Cologne!"),
    ("Ein Mädchen springt über eine Pfütze.", "A girl jumps over a puddle."),
    ("Männer arbeiten auf einer Baustelle.", "Men are working on a construction site."),
    ("Ein Hund läuft am Strand.", "A dog runs on the beach."),
    ("Wir gehen morgen ins Kino.", "We are going to the cinema tomorrow."),
]


def tiny_texts() -> list[str]:
    return [text for pair in PAIRS for text in pair]


@pytest.fixture(scope="session")
def pairs() -> list[tuple[str, str]]:
    return list(PAIRS)


@pytest.fixture(scope="session")
def tiny_tokenizer() -> SubwordTokenizer:
    return SubwordTokenizer.train(tiny_texts() * 3, vocab_size=400, min_frequency=1)


@pytest.fixture(scope="session")
def tiny_config(tiny_tokenizer) -> TransformerConfig:
    return TransformerConfig(
        vocab_size=tiny_tokenizer.vocab_size,
        d_model=32,
        n_heads=4,
        n_encoder_layers=2,
        n_decoder_layers=2,
        d_ff=64,
        dropout=0.0,
        attention_dropout=0.0,
        max_positions=256,
    )


@pytest.fixture
def tiny_model(tiny_config) -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config).eval()


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory, tiny_tokenizer, tiny_config) -> Path:
    """A saved checkpoint directory of an untrained tiny model (random weights, seed 0)."""
    torch.manual_seed(0)
    model = Transformer(tiny_config).eval()
    directory = tmp_path_factory.mktemp("checkpoint") / "tiny"
    save_checkpoint(directory, model, tiny_tokenizer, {"note": "untrained test fixture"})
    return directory


@pytest.fixture(scope="session")
def checkpoint(tiny_checkpoint) -> Checkpoint:
    """tiny_checkpoint loaded (eval mode; shared read-only: no test changes its weights)."""
    return load_checkpoint(tiny_checkpoint)


SENTENCE = "Ein Mann fährt Fahrrad."  # the sentence of the shared `trace`


@pytest.fixture(scope="session")
def trace(checkpoint) -> TranslationTrace:
    """The tiny checkpoint's greedy trace of SENTENCE, German -> English (a test module may define its own)."""
    return translate(checkpoint.model, checkpoint.tokenizer, SENTENCE, "de-en")


@pytest.fixture(scope="session")
def film_run(tmp_path_factory, pairs) -> Path:
    """A 20-step tiny training run with the film on, evaluating at steps 10 and 20 (read-only: shared)."""
    from model.training.train import main as train_main

    root = tmp_path_factory.mktemp("film")
    (root / "train.de").write_text("\n".join(de for de, _ in pairs) + "\n", encoding="utf-8")
    (root / "train.en").write_text("\n".join(en for _, en in pairs) + "\n", encoding="utf-8")
    out = root / "run"
    assert (
        train_main(
            [
                "--data",
                str(root / "train"),
                "--val",
                str(root / "train"),
                "--out",
                str(out),
                "--d-model",
                "32",
                "--heads",
                "4",
                "--encoder-layers",
                "2",
                "--decoder-layers",
                "1",
                "--d-ff",
                "64",
                "--vocab-size",
                "400",
                "--max-tokens",
                "400",
                "--warmup",
                "10",
                "--bleu-sentences",
                "4",
                "--threads",
                "1",
                "--precision",
                "fp32",
                "--eval-every",
                "10",
                "--max-steps",
                "20",
            ]
        )
        == 0
    )
    return out


# --------------------------------------------------------------------------- served apps (one per run)
def served(checkpoint, tmp_path_factory, name: str, env: dict | None = None):
    """Yield the app's URL (`python3 app.py` on `checkpoint`, its log in a fresh temporary folder `name`, `env` added
    to its environment); the server stops after the fixture that yields from this; a server that does not start
    fails the test."""
    from scripts.app_process import started_app

    log_path = tmp_path_factory.mktemp(name) / "app.log"
    try:
        with started_app(checkpoint, log_path, START_TIMEOUT_S, env) as (url, _process):
            yield url
    except RuntimeError as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def server(tiny_checkpoint, tmp_path_factory):
    """The app's URL on the tiny checkpoint."""
    yield from served(tiny_checkpoint, tmp_path_factory, "server")


@pytest.fixture(scope="session")
def corpus_checkpoint(tiny_checkpoint, pairs, tmp_path_factory):
    """A copy of the tiny checkpoint with corpus_heads.npz beside it, made by the script from the shared pairs."""
    from scripts.corpus_heads import main

    root = tmp_path_factory.mktemp("browser-corpus")
    directory = root / "tiny"
    shutil.copytree(tiny_checkpoint, directory)
    (root / "val.de").write_text("\n".join(de for de, _ in pairs) + "\n", encoding="utf-8")
    (root / "val.en").write_text("\n".join(en for _, en in pairs) + "\n", encoding="utf-8")
    assert (
        main(
            [
                "--checkpoint",
                str(directory),
                "--data",
                str(root / "val"),
                "--sentences",
                "6",
                "--importance-sentences",
                "3",
                "--prune-sentences",
                "2",
                "--map-sentences",
                "3",
                "--prune-points",
                "3",
                "--threads",
                "1",
            ]
        )
        == 0
    )
    assert (directory / "corpus_heads.npz").exists()
    return directory


@pytest.fixture(scope="session")
def corpus_server(corpus_checkpoint, tmp_path_factory):
    """The app's URL on the tiny checkpoint with a corpus file (the corpus panels have data)."""
    yield from served(corpus_checkpoint, tmp_path_factory, "corpus-server")


@pytest.fixture(scope="session")
def copy_server(copy_checkpoint_dir, tmp_path_factory):
    """The app's URL on the tiny copy model (tests/conftest.py), whose translations end with [EOS]."""
    yield from served(copy_checkpoint_dir, tmp_path_factory, "copy-server")


@pytest.fixture(scope="session")
def a11y_server(tiny_checkpoint, tmp_path_factory):
    """The app's URL on the tiny checkpoint with OPUS-MT asked for but absent: the model menu is on the page
    (scripts/axe_report.py: every screen a visitor reaches)."""
    from scripts.axe_report import ABSENT_OPUS_MT

    yield from served(tiny_checkpoint, tmp_path_factory, "a11y-server", ABSENT_OPUS_MT)


@pytest.fixture(scope="session")
def shipped_server(tmp_path_factory):
    """The app's URL on the shipped checkpoint (checkpoints/de-en-small, part of the repository)."""
    if not (SHIPPED / "config.json").exists():
        pytest.skip("no shipped checkpoint")
    yield from served(SHIPPED, tmp_path_factory, "shipped-server")


# --------------------------------------------------------------------------- the lanes (docs/testing.md)
SERVER_FIXTURES = {
    "server",
    "corpus_server",
    "copy_server",
    "shipped_server",
    "opus_mt_server",
    "a11y_server",
    "app",
}  # app: test_serving_load_test


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium for the whole run (each test opens and closes its own pages). While Playwright's sync API
    is open the main thread has a running event loop: code that calls asyncio.run or starts its own Playwright
    runs in a thread of its own (helpers.in_own_thread)."""
    from browser_helpers import CHROMIUM
    from playwright.sync_api import expect, sync_playwright

    from scripts.chromium import launch

    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed")
    expect.set_options(timeout=PAGE_TIMEOUT_MS)
    with sync_playwright() as playwright:
        browser = launch(playwright)
        yield PatientBrowser(browser)
        browser.close()


PAGE_TIMEOUT_MS = 60_000  # two test workers share two busy CPU cores with their servers and Chromium


class PatientBrowser:
    """The run's Chromium, whose pages wait up to PAGE_TIMEOUT_MS for the page's state (Playwright's default is
    30 s); everything else is the Playwright Browser's own."""

    def __init__(self, browser):
        self._browser = browser

    def new_page(self, **options):
        page = self._browser.new_page(**options)
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        return page

    def __getattr__(self, name):
        return getattr(self._browser, name)


def pytest_collection_modifyitems(items):
    """Every test in tests/browser/ is a browser test; a test of a served app (one of SERVER_FIXTURES) is slow.
    pytest.ini's default lane leaves both out; scripts/test.sh (CI) runs everything."""
    for item in items:
        if BROWSER_TESTS in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def socket_attempts(monkeypatch) -> list:
    """Every socket use is recorded and refused: the list proves that nothing touched the network."""
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network use in a test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return attempts


# --------------------------------------------------------------------------- the copy model (view provenance)
COPY_SENTENCE = "Ein Mann fährt Fahrrad."  # the sentence of `copy_trace`


@pytest.fixture(scope="session")
def copy_model(tiny_tokenizer, pairs) -> Transformer:
    """A tiny model trained to copy, so its translation ends with [EOS] (tests/ui/test_view_provenance_*.py, tests/browser/test_browser_provenance.py)."""
    import provenance_fixtures as ref

    return ref.train_copy_model(tiny_tokenizer, pairs)


@pytest.fixture(scope="session")
def copy_checkpoint_dir(tmp_path_factory, copy_model, tiny_tokenizer) -> Path:
    directory = tmp_path_factory.mktemp("copy-checkpoint") / "copy"
    save_checkpoint(directory, copy_model, tiny_tokenizer, {"note": "tiny copy model for view provenance"})
    return directory


@pytest.fixture(scope="session")
def copy_runner(copy_checkpoint_dir):
    """The page's runner (single-process mode) on the copy checkpoint, loaded as the app loads it."""
    from serving import Runner
    from ui import session

    return Runner(session.load_model(str(copy_checkpoint_dir)))


@pytest.fixture(scope="session")
def copy_trace(copy_runner) -> TranslationTrace:
    """COPY_SENTENCE translated through the app's own Translate path."""
    from helpers import translated_trace

    trace = translated_trace(copy_runner, COPY_SENTENCE, "de-en")
    assert trace.stopped_by == "eos" and trace.output_tokens[-1] == "[EOS]"
    assert trace.num_steps >= 5  # a middle step exists
    return trace


@pytest.fixture(scope="session")
def copy_reference(copy_model, copy_trace):
    """The independent float64 forward pass (tests/support/provenance_fixtures.py) over the trace's tokens."""
    import provenance_fixtures as ref

    return ref.forward(copy_model, copy_trace.source_ids, [copy_model.config.bos_id, *copy_trace.output_ids[:-1]])


@pytest.fixture(scope="session")
def copy_step(copy_trace) -> int:
    """A 0-based step in the middle of the sentence (neither the first nor the last)."""
    return copy_trace.num_steps // 2


# --------------------------------------------------------------------------- OPUS-MT stand-ins
# Hub-style Helsinki-NLP/opus-mt-* folders built in the test (tests/support/marian_hub_folder.py): SentencePiece
# models trained here, the published config's fields at small sizes, a MarianMTModel briefly trained by
# `transformers` (a test dependency only). Each takes a few seconds, so it is built the first time a test asks.
@pytest.fixture(scope="session")
def marian_de_en_folder(tmp_path_factory) -> Path:
    import marian_hub_folder

    return marian_hub_folder.build_folder(tmp_path_factory.mktemp("opus-mt") / "opus-mt-de-en", "de-en")


@pytest.fixture(scope="session")
def marian_en_de_folder(tmp_path_factory) -> Path:
    import marian_hub_folder

    return marian_hub_folder.build_folder(tmp_path_factory.mktemp("opus-mt") / "opus-mt-en-de", "en-de")


@pytest.fixture(scope="session")
def opus_mt_folder(tmp_path_factory, marian_de_en_folder, marian_en_de_folder) -> Path:
    """What $ATTENTION_EXPLORER_OPUS_MT names: opus-mt-de-en/ and opus-mt-en-de/ (links to the two folders' files)
    and each a model card with a Benchmarks table (marian_hub_folder.write_card)."""
    import marian_hub_folder

    root = tmp_path_factory.mktemp("opus-mt-pair")
    for direction, folder in (("de-en", marian_de_en_folder), ("en-de", marian_en_de_folder)):
        copy = root / folder.name
        copy.mkdir()
        for path in folder.iterdir():
            (copy / path.name).symlink_to(path)
        marian_hub_folder.write_card(copy, direction)
    return root


@pytest.fixture(scope="session")
def opus_mt_server(tiny_checkpoint, opus_mt_folder, tmp_path_factory):
    """The app's URL on the tiny checkpoint, with OPUS-MT (the small folders) as its second page, /opus-mt."""
    from model.checkpoints.catalogue import OPUS_MT_ENV

    yield from served(tiny_checkpoint, tmp_path_factory, "opus-mt-server", {OPUS_MT_ENV: str(opus_mt_folder)})
