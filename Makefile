# The two commands: `make run` starts the console, `make test` runs the whole test suite.
# `make test-fast` is the inner loop: every test but the real-browser ones.
.PHONY: run test test-fast check bench demo clean

run:
	scripts/run.sh

test:
	scripts/test.sh

test-fast:
	scripts/test.sh -m "not browser"

# Static gates (also run by .ci/run): lint, typing (the pure core strict, register/ at mypy's defaults), the import
# contracts.
check:
	scripts/env.sh requirements-dev.txt
	.venv/bin/ruff check .
	.venv/bin/mypy
	.venv/bin/lint-imports

bench:
	scripts/env.sh requirements-dev.txt && .venv/bin/python benchmarks/bench_scoring.py

clean:
	rm -rf var .pytest_cache .hypothesis
