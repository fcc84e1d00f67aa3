"""scripts/check_opus_mt.py against a Hub stand-in over HTTP (tests/support/hub_server.py) that serves the small
OPUS-MT folders (tests/conftest.py `opus_mt_folder`, built with `transformers`): both directions are downloaded,
compared with MarianMTModel (equal within the tolerance, every greedy sentence the same) and scored on a Multi30k-
style split beside the card's figure; against one that cannot be reached it says so in one line."""

from __future__ import annotations

import re

import pytest

from model.checkpoints.catalogue import OPUS_MT_ENV, OPUS_MT_REPOS
from model.training.evaluate import score, translate_batch
from scripts import check_opus_mt


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.delenv(OPUS_MT_ENV, raising=False)
    return monkeypatch


def test_it_checks_both_directions_against_transformers_and_scores_them(
    clean_env, tmp_path, opus_mt_folder, pairs, capsys
):
    import hub_server

    from model.checkpoints.catalogue import load_opus_mt

    repos = {repo: opus_mt_folder / repo.split("/")[1] for repo, _ in OPUS_MT_REPOS.values()}
    server = hub_server.serve(clean_env, repos, tmp_path / "cache")
    data = tmp_path / "multi30k"
    data.mkdir()
    (data / "test_2016_flickr.de").write_text("\n".join(de for de, _ in pairs[:4]) + "\n", encoding="utf-8")
    (data / "test_2016_flickr.en").write_text("\n".join(en for _, en in pairs[:4]) + "\n", encoding="utf-8")
    try:
        assert check_opus_mt.main(["--data", str(data)]) == 0
    finally:
        server.close()
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("| Helsinki-NLP/")]
    assert [line.split(" | ")[0] for line in lines] == [
        "| Helsinki-NLP/opus-mt-de-en",
        "| Helsinki-NLP/opus-mt-en-de@refs/pr/4",
    ]
    for line, direction in zip(lines, OPUS_MT_REPOS):
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert float(cells[1]) <= check_opus_mt.TOLERANCE and float(cells[2]) <= check_opus_mt.TOLERANCE
        assert cells[3] == f"{len(check_opus_mt.SENTENCES[direction])}/{len(check_opus_mt.SENTENCES[direction])}"
        checkpoint = load_opus_mt(direction, folder=opus_mt_folder)
        source, target = direction.split("-")
        side = {"de": [de for de, _ in pairs[:4]], "en": [en for _, en in pairs[:4]]}
        expected = score(translate_batch(checkpoint.model, checkpoint.tokenizer, side[source], direction), side[target])
        assert cells[4] == f"{expected['bleu']:.2f}"
        assert re.fullmatch(r"not on the card \(\d+ rows, none for Multi30k\)", cells[5])
    assert any(path.endswith("model.safetensors") for _, path in server.requests)


def test_without_the_hub_it_says_so_in_one_line(clean_env, tmp_path, capsys):
    import hub_server

    hub_server.refuse(clean_env, tmp_path / "cache")
    assert check_opus_mt.main([]) == 2
    assert capsys.readouterr().out == check_opus_mt.NO_HUB + "\n"


def test_a_model_that_differs_is_reported_as_differing(clean_env, tmp_path, opus_mt_folder, capsys):
    """The same check against a MarianMTModel whose weights were changed (an encoder query projection: the attention;
    the output bias: the logits and the greedy choice) reports the differences instead of equality."""
    import hub_server
    import torch

    repos = {repo: opus_mt_folder / repo.split("/")[1] for repo, _ in OPUS_MT_REPOS.values()}
    server = hub_server.serve(clean_env, repos, tmp_path / "cache")
    original = check_opus_mt.peer_of

    def changed_peer(folder):
        model, tokenizer = original(folder)
        generator = torch.Generator().manual_seed(0)
        with torch.no_grad():
            query = model.model.encoder.layers[0].self_attn.q_proj.weight
            query.add_(torch.randn(query.shape, generator=generator))
            model.final_logits_bias.add_(10 * torch.randn(model.final_logits_bias.shape, generator=generator))
        return model, tokenizer

    clean_env.setattr(check_opus_mt, "peer_of", changed_peer)
    try:
        assert check_opus_mt.main(["--data", str(tmp_path / "none")]) == 0
    finally:
        server.close()
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| Helsinki-NLP/")]
    assert len(lines) == 2
    for line, direction in zip(lines, OPUS_MT_REPOS):
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert float(cells[1]) > check_opus_mt.TOLERANCE and float(cells[2]) > check_opus_mt.TOLERANCE
        count = len(check_opus_mt.SENTENCES[direction])
        assert cells[3] != f"{count}/{count}"
        assert cells[4] == f"no test_2016_flickr in {tmp_path / 'none'}"
