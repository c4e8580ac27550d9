# The two commands: `make run` (check the shipped Kafka model) and `make test` (the whole suite).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
OUT    ?= out

.PHONY: run test test-long test-heavy test-spark35 spark35-java gate venv venv-test java-check browser-check bench clean cluster-start cluster-stop

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
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist loadfile --durations=25

# the long tests (checks of seconds to two minutes each: every Kafka variant caught, the README's Kafka
# commands, the Spark cluster and capped drivers, the memory-capped runs) are part of CI (.ci/run) but
# not of make test, which stays within 15 minutes: spread test by test. A heavy parameter of a test marked
# long in its file carries both marks: heavy wins
test-long: venv-test
	$(BIN)/python -m pytest -q -m 'long and not heavy' -n auto --maxprocesses 4 --dist load --durations=40

# the heavy tests (not CI: Kafka-scale z3 proofs and BMC, the scalar engine's Kafka variants, the
# per-variant checks; marked in their files) are long, hours in all (README): spread them test by test
test-heavy: venv-test
	$(BIN)/python -m pytest -q -m heavy -n auto --maxprocesses 4 --dist load

# The Spark tests again on pyspark 3.5 (a client's pyspark must match its cluster's Spark, and many
# clusters run 3.5): a second venv from the same Python with the latest 3.5 patch, then the Spark
# test modules (local[2], the standalone cluster, the capped driver); there a missing Java or
# pyspark fails instead of skipping. CI runs it after make test (.ci/run); docs/spark.md.
VENV35 := .venv-spark35
PY35   := $(VENV35)/bin/python
SPARK35 := pyspark>=3.5,<3.6
SPARK_TESTS := tests/test_spark_available.py tests/test_spark_engine.py tests/test_spark_cluster.py tests/test_spark_memory.py \
               tests/test_spark_failures.py

$(VENV35)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "txncheck needs Python 3.11 or newer; set PYTHON=/path/to/python3.11")'
	@echo "test-spark35: creating $(VENV35) with $(PYTHON): txncheck[test,spark] and '$(SPARK35)'"
	@echo "test-spark35: (a first run downloads and builds pyspark 3.5: about a minute here; pip caches the build)"
	@test -x $(PY35) || $(PYTHON) -m venv $(VENV35)
	@{ $(PY35) -m pip install -q --upgrade pip && $(PY35) -m pip install -q -e '.[test,spark]' '$(SPARK35)'; } || { \
	  echo "test-spark35: error: could not install txncheck with '$(SPARK35)' into $(VENV35) (pip's message is above)."; \
	  echo "  pip needs to reach PyPI: check the network (or pip's index settings), then run make test-spark35 again."; \
	  exit 1; }
	@touch $@

test-spark35: spark35-java $(VENV35)/.installed
	@$(PY35) -c 'import sys, pyspark; v = pyspark.__version__; sys.exit(0 if v.startswith("3.5.") else f"test-spark35: error: $(VENV35) has pyspark {v}, not 3.5.x; run make clean (or rm -rf $(VENV35)) and try again")'
	@echo "test-spark35: pyspark $$($(PY35) -c 'import pyspark; print(pyspark.__version__)'), $$($(PY35) -V), $$($${JAVA_HOME:+$$JAVA_HOME/bin/}java -version 2>&1 | head -1)"
	TXNCHECK_REQUIRE_SPARK=1 $(PY35) -m pytest -q -p no:cacheprovider -m 'not heavy and (not long or spark35)' $(SPARK_TESTS)

# checked before the install: no point building pyspark where it cannot run
spark35-java:
	@command -v java >/dev/null 2>&1 || { test -n "$$JAVA_HOME" && test -x "$$JAVA_HOME/bin/java"; } || { \
	  echo "test-spark35: error: no Java runtime (no java on PATH, no JAVA_HOME); pyspark 3.5 needs Java 8 or newer (tested: OpenJDK 17)."; \
	  echo "  install one with: apt-get install -y openjdk-17-jre-headless"; \
	  exit 1; }

bench: venv-test
	$(PY) benchmarks/run.py

cluster-start: venv-test
	$(PY) -m txncheck.checker.spark.cluster start --dir .spark-cluster --workers 2 --port 7077

cluster-stop:
	$(PY) -m txncheck.checker.spark.cluster stop --dir .spark-cluster

clean:
	rm -rf $(VENV) $(VENV35) $(OUT) .pytest_cache .hypothesis
