# The two commands: `make run` starts the console, `make test` runs the whole test suite.
.PHONY: run test bench demo clean

run:
	scripts/run.sh

test:
	scripts/test.sh

bench:
	scripts/env.sh requirements-dev.txt && .venv/bin/python benchmarks/bench_scoring.py

clean:
	rm -rf var .pytest_cache .hypothesis
