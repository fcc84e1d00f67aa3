"""A lesson on a static Space: `scripts/deploy_space.py --static SPACE_ID --lesson DIR` (scripts/static_space.py),
against the local Hub stand-in (tests/support/local_hub.py): what the Space holds is the folder and a README whose
front matter is a static Space's, listing the model repos and linking the app's Space. No socket is used."""

from __future__ import annotations

import pytest

import local_hub
from lesson_folder import lesson_folder
from scripts import deploy_space


@pytest.fixture(scope="module")
def folder(checkpoint, tmp_path_factory):
    index, _ = lesson_folder(checkpoint, tmp_path_factory.mktemp("lesson") / "lesson")
    return index.parent


def front_matter(readme: str) -> dict[str, str]:
    head = readme.split("---\n")[1]
    return dict(line.split(": ", 1) for line in head.splitlines() if ": " in line)


def test_the_static_space_holds_the_lesson_and_links_the_app(folder, monkeypatch, tmp_path, capsys, socket_attempts):
    hub = local_hub.install(monkeypatch, tmp_path / "hub")
    argv = ["--static", "someone/lesson", "--lesson", str(folder), "--app-space", "someone/attention-explorer"]
    assert deploy_space.main(argv, api=hub) == 0
    assert "deployed: https://huggingface.co/spaces/someone/lesson" in capsys.readouterr().out
    files = hub.files("someone/lesson", "space")
    expected = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert {name: files[name] for name in expected} == expected and set(files) == {*expected, "README.md"}
    readme = files["README.md"].decode("utf-8")
    meta = front_matter(readme)
    assert (meta["sdk"], meta["app_file"]) == ("static", "index.html")
    assert "models:\n  - someone/attention-explorer-model\n" in readme
    assert "https://huggingface.co/spaces/someone/attention-explorer" in readme
    [create] = [call for call in hub.calls if call[0] == "create_repo"]
    assert create[2]["space_sdk"] == "static" and create[2]["repo_type"] == "space"
    assert socket_attempts == []


def test_an_opus_mt_lesson_lists_helsinki_nlps_repo(folder, tmp_path):
    from scripts.static_space import lesson_files, model_repos

    _, lesson = lesson_files(folder)
    assert model_repos(lesson, "me/own") == ["me/own"]
    opus = {
        **lesson,
        "sentences": [{"direction": "en-de", "model": "opus-mt"}, {"direction": "en-de", "model": "opus-mt"}],
    }
    assert model_repos(opus, "me/own") == ["Helsinki-NLP/opus-mt-en-de"]


def test_a_folder_that_is_no_lesson_is_refused_before_any_call(tmp_path, monkeypatch, capsys):
    hub = local_hub.install(monkeypatch, tmp_path / "hub")
    (tmp_path / "empty").mkdir()
    assert deploy_space.main(["--static", "someone/lesson", "--lesson", str(tmp_path / "empty")], api=hub) == 2
    assert "no lesson folder" in capsys.readouterr().err and hub.calls == []
    assert deploy_space.main(["--static", "not a repo id", "--lesson", str(tmp_path / "empty")], api=hub) == 2


def test_dry_run_lists_the_files_and_calls_nothing(folder, capsys, socket_attempts):
    assert deploy_space.main(["--static", "someone/lesson", "--lesson", str(folder), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would deploy to https://huggingface.co/spaces/someone/lesson" in out
    assert "index.html" in out and "README.md" in out and socket_attempts == []
