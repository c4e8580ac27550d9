# The two commands: `make run` (check the shipped Kafka model) and `make test` (the whole suite).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
OUT    ?= out

.PHONY: run test test-heavy gate venv venv-test java-check browser-check bench clean cluster-start cluster-stop

$(BIN)/activate:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "txncheck needs Python 3.11 or newer; set PYTHON=/path/to/python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/activate pyproject.toml
	$(PY) -m pip install -q -e .
	@touch $@

$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install -q -e '.[test,spark,bench]'
	@touch $@

venv: $(VENV)/.installed
venv-test: $(VENV)/.installed-test

run: venv
	$(BIN)/txncheck check kafka --config tiny --html --out $(OUT)/kafka-tiny

# the project's own CI gate over the shipped specs (txncheck.toml); make test runs it too
gate: venv
	$(BIN)/txncheck gate --junit $(OUT)/gate/junit.xml --summary $(OUT)/gate/summary.md

java-check:
	@command -v java >/dev/null 2>&1 && java -version 2>&1 | head -1 || { \
	  echo "note: no Java runtime found; the Spark engine's tests will be skipped."; \
	  echo "      install one with: apt-get install -y openjdk-17-jre-headless"; }

browser-check:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "note: no chromium found; the viewer's browser tests will be skipped (CI=true makes them fail)."; \
	  echo "      install it with: apt-get install -y chromium"; }

# one worker per core, at most 4 (each may hold a Spark JVM or a large model); a test file stays on
# one worker (the Spark cluster tests share one cluster)
test: venv-test java-check browser-check
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist loadfile

# the heavy tests are few and long, most in one file: spread them test by test
test-heavy: venv-test
	$(BIN)/python -m pytest -q -m heavy -n auto --maxprocesses 4 --dist load

bench: venv-test
	$(PY) benchmarks/run.py

cluster-start: venv-test
	$(PY) -m txncheck.checker.spark.cluster start --dir .spark-cluster --workers 2 --port 7077

cluster-stop:
	$(PY) -m txncheck.checker.spark.cluster stop --dir .spark-cluster

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache .hypothesis
