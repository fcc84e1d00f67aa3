#!/usr/bin/env bash
# Install everything the tests need, then run them. README's test command; .ci/run runs this.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  # Debian's Chromium drives the end-to-end browser tests (Playwright uses it, downloads none).
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
python3 -m pip install -q -r requirements-test.txt
python3 -m pytest -q "$@"
