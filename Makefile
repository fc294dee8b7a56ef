# Quick start: `make ingest` builds out/ from raw/; `make test` runs the tests.
# The first run creates .venv and installs the pinned dependencies.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: ingest test lint bench lineage-report vocabulary clean

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

ingest: $(STAMP)
	$(PY) -m pipeline ingest --raw raw --out out

test: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check pipeline tests
	$(PY) -m mypy pipeline

bench: $(STAMP)
	$(PY) -m pipeline.bench

# Score the published lineages (out/) against the hand-traced answer key.
lineage-report: $(STAMP)
	$(PY) -m pipeline.lineage_report out

vocabulary: $(STAMP)
	$(PY) -m pipeline vocabulary raw > pipeline/data/vocabulary.txt

clean:
	rm -rf $(VENV) out
