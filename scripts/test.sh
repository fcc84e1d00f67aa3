#!/usr/bin/env bash
# The full lane: install everything the tests need, lint, then run every test, browser ones included.
# README's test command; .ci/run runs this. `python3 -m pytest` alone is the fast lane (docs/testing.md, "Lanes").
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian packages the tests need: Chromium drives the end-to-end browser tests (Playwright uses it,
# downloads none); Node.js runs the step buttons' JavaScript (ui/stepping.py) in tests/ui/test_app.py, and npm
# installs ESLint, the page scripts' linter.
PACKAGES=""
command -v chromium >/dev/null 2>&1 || PACKAGES="$PACKAGES chromium"
command -v node >/dev/null 2>&1 || PACKAGES="$PACKAGES nodejs"
command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES npm"
if [ -n "$PACKAGES" ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  # shellcheck disable=SC2086  # one word per package
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PACKAGES >/dev/null
fi
# A Python whose packages the system manages (PEP 668: Debian's, Ubuntu's) installs only into a virtual environment:
# make .venv as the README's first command does (reusing what the system has) and use it; any other Python as it is.
if python3 -c 'import os, sys, sysconfig
sys.exit(sys.prefix != sys.base_prefix or not os.path.isfile(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'; then
  [ -x .venv/bin/python3 ] || python3 -m venv --system-site-packages --without-pip .venv
  # shellcheck disable=SC1091  # made just above
  . .venv/bin/activate
fi
python3 -m pip install -q -r requirements-test.txt
python3 -m ruff check .
python3 -m ruff format --check .
# the page's JavaScript (ui/js/): ESLint at the versions package-lock.json pins, from the npm registry
npm ci --no-audit --no-fund --loglevel=error
npm run --silent lint
# -m "": every test (pytest.ini's default leaves out the browser and slow ones); -n 2: two workers (pytest-xdist),
# each module on one of them (its module-scoped pages stay one page), each worker with its own served apps
# the layout check's screenshots of every screen are the run's artifacts: test-artifacts/screens/ (and its tally)
rm -rf test-artifacts/screens
status=0
python3 -m pytest -q -m "" -n 2 --dist loadfile "$@" || status=$?
[ ! -f test-artifacts/screens/screens.jsonl ] || python3 -m scripts.layout_tally
exit "$status"
