# The two commands: `make run` starts the console, `make test` runs the whole test suite.
.PHONY: run test check bench demo clean

run:
	scripts/run.sh

test:
	scripts/test.sh

# Static gates (also run by .ci/run): lint, strict typing of the pure core, the import contracts.
check:
	scripts/env.sh requirements-dev.txt
	.venv/bin/ruff check .
	.venv/bin/mypy
	.venv/bin/lint-imports

bench:
	scripts/env.sh requirements-dev.txt && .venv/bin/python benchmarks/bench_scoring.py

clean:
	rm -rf var .pytest_cache .hypothesis
