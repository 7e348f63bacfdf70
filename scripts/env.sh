#!/usr/bin/env bash
# Create .venv and install pinned requirements (re-installs only when a requirements file changed).
# Usage: scripts/env.sh requirements.txt | requirements-dev.txt
set -euo pipefail
cd "$(dirname "$0")/.."
req="${1:-requirements.txt}"
py="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "==> creating virtual environment in .venv"
  "$py" -m venv .venv
fi
stamp=".venv/.installed-$(cat requirements.txt "$req" | sha256sum | cut -c1-16)-$(basename "$req")"
if [ ! -f "$stamp" ]; then
  echo "==> installing $req"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$req"
  touch "$stamp"
fi
