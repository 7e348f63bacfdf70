#!/usr/bin/env bash
# Install everything the tests need (pinned Python packages; Debian's Chromium for the browser
# tests) and run the whole suite, in parallel over the machine's cores (pytest-xdist; a module's
# tests that share one server or one SparkSession stay on one worker: xdist_group). Extra
# arguments go to pytest, e.g. `scripts/test.sh -m "not browser"` (make test-fast) or `-n 0`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/env.sh requirements-dev.txt
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  echo "==> installing Chromium for the browser tests"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if ! command -v pdftoppm >/dev/null 2>&1; then
  echo "==> installing poppler-utils (pdftoppm renders the release report PDF to PNG)"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils >/dev/null
fi
exec .venv/bin/python -m pytest -n "${PYTEST_WORKERS:-auto}" --dist loadgroup "$@"
