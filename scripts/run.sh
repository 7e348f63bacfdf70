#!/usr/bin/env bash
# Run the console on the embedded default: a DuckDB file (var/hri.duckdb, or $HRI_DB), seeded with
# the demo set on first start, served on 127.0.0.1 (port $HRI_PORT, default 8501).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/env.sh requirements.txt
export HRI_DB="${HRI_DB:-var/hri.duckdb}"
port="${HRI_PORT:-8501}"
if [ ! -f "$HRI_DB" ]; then
  echo "==> first start: creating $HRI_DB and loading the demo data"
  .venv/bin/python -m register --db "$HRI_DB" demo --synthetic "${HRI_DEMO_SYNTHETIC:-2000}"
fi
# first start: no account yet -> an admin with a one-time password, printed once here (no default password)
bootstrap="$(.venv/bin/python -m register --db "$HRI_DB" users bootstrap)"
case "$bootstrap" in "accounts exist"*) ;; *) echo "==> $bootstrap" ;; esac
echo "==> HRI console: open http://127.0.0.1:${port} (Ctrl+C to stop)"
exec .venv/bin/python -m streamlit run app.py --server.address 127.0.0.1 --server.port "$port" \
  --server.headless true --browser.gatherUsageStats false
