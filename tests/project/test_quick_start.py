"""The README's two commands on a stock Debian or Ubuntu Python, whose `pip install` outside an environment stops
with "externally-managed-environment" (PEP 668): the first command's environment is one where that Python's own pip
may install, and scripts/test.sh (what CI runs) makes the same one only for such a Python."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STOCK_PYTHON = Path("/usr/bin/python3")  # Debian's and Ubuntu's
CHECK = (
    "import sys; from pip._internal.utils.misc import check_externally_managed; "
    "check_externally_managed(); print(sys.prefix)"
)


def bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, re.S)


def start_command() -> str:
    """The README's first command, its continuation lines joined."""
    run_it = (ROOT / "README.md").read_text(encoding="utf-8").split("## Run it", 1)[1].split("\n## ", 1)[0]
    first, second = bash_blocks(run_it)[:2]
    assert second.strip() == "bash scripts/test.sh"  # CI runs exactly this (.ci/run)
    return first.replace("\\\n", " ").strip()


def externally_managed(python: Path) -> bool:
    code = "import os, sys, sysconfig; print(os.path.isfile(os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')))"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True).stdout.strip() == "True"


def test_ci_runs_exactly_the_second_command():
    assert "exec bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text()
    assert start_command().endswith("python3 app.py")


@pytest.mark.parametrize("python", [Path(sys.executable), STOCK_PYTHON], ids=["this", "stock"])
def test_the_first_command_makes_an_environment_its_pip_may_install_into(python, tmp_path):
    """The command's environment part, run in a fresh folder with `python3` being this Python or the system's: the
    environment is made, its pip is the system's, and PEP 668's check (pip's own) lets it install there."""
    if not python.is_file():
        pytest.skip(f"no {python}")
    if python == STOCK_PYTHON and not externally_managed(python):
        pytest.skip(f"{python} is not externally managed here")
    steps = [step.strip() for step in start_command().split("&&")]
    assert steps[0].startswith("python3 -m venv") and steps[1] == ". .venv/bin/activate"
    assert all(step.startswith("python3 ") for step in steps[2:])  # every install runs the environment's python3
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "python3").symlink_to(python)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("VIRTUAL_ENV", None)
    script = f"{steps[0]} && {steps[1]} && python3 -c {shlex_quote(CHECK)}"
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).resolve() == (tmp_path / ".venv").resolve()


def test_the_test_script_makes_the_environment_only_for_an_externally_managed_python():
    script = (ROOT / "scripts" / "test.sh").read_text()
    venv_line = next(line.strip() for line in script.splitlines() if "-m venv" in line)
    assert venv_line.endswith(start_command().split("&&")[0].strip())  # the README's own environment
    assert script.index("EXTERNALLY-MANAGED") < script.index("-m venv") < script.index("pip install")


def shlex_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)
