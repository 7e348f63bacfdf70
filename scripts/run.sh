#!/usr/bin/env bash
# Run the console on the embedded default: a DuckDB file (var/hri.duckdb, or $HRI_DB), seeded with
# the demo set on first start, served on 127.0.0.1 (port $HRI_PORT, default 8501). The HRI_* settings
# and their defaults are declared once, in register/settings.py; a bad value stops here, named.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/env.sh requirements.txt
values="$(.venv/bin/python -m register settings db port demo_synthetic)"
{ read -r db; read -r port; read -r synthetic; } <<< "$values"
if [ ! -f "$db" ]; then
  echo "==> first start: creating $db and loading the demo data"
  .venv/bin/python -m register --db "$db" demo --synthetic "$synthetic"
fi
# first start: no account yet -> an admin with a one-time password, printed once here (no default password)
bootstrap="$(.venv/bin/python -m register --db "$db" users bootstrap)"
case "$bootstrap" in "accounts exist"*) ;; *) echo "==> $bootstrap" ;; esac
echo "==> HRI console: open http://127.0.0.1:${port} (Ctrl+C to stop)"
exec .venv/bin/python -m register --db "$db" serve --port "$port"
