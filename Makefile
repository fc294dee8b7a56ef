# Quick start: `make ingest` builds out/ from raw/; `make test` runs the quick tests,
# `make check` lint and every test (what CI runs).
# The first run creates .venv and installs the pinned dependencies.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: ingest site test check all-tests lint bench bench-large lineage-report lineage-stability vocabulary history clean browser

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

ingest: $(STAMP)
	$(PY) -m pipeline ingest --raw raw --out out

site: $(STAMP)
	$(PY) -m pipeline site --out out --dest site

# The site's tests drive Debian's Chromium (never a browser Playwright downloads):
# installed here when missing, as root (CI runs as root); otherwise those tests skip.
CHROMIUM := /usr/bin/chromium
browser:
	@test -x $(CHROMIUM) || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing chromium for the browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "$(CHROMIUM) missing and not root: the browser tests will skip"; fi; }

# make test: the quick suite, minutes: every test but those marked slow (those that run
# the job on more than a few small files or read the full dataset again: every release
# alone, the million-line file, frictionless on the full dataset, the site and the
# browser, the generated lineages, stability, the wheel), hypothesis's quick profile.
# make check: lint and, beside it, every test with the thorough profile: what CI runs.
# Both run in two pytest-xdist workers (a file's tests in one worker; the costly
# session folders made once for both, see tests/conftest.py), the files handed out
# longest first (tests/conftest.py's LONGEST_FIRST; xdist would order them by their
# number of tests).
XDIST := -n 2 --dist loadfile --no-loadscope-reorder
test: $(STAMP)
	HYPOTHESIS_PROFILE=default $(PY) -m pytest -q $(XDIST) -m "not slow"

# check runs lint beside the tests (make -j2: the two share nothing; lint takes a few
# seconds of one core, and its result comes with the tests' when either fails).
check: browser $(STAMP)
	@$(MAKE) --no-print-directory -j2 lint all-tests

all-tests: $(STAMP)
	HYPOTHESIS_PROFILE=ci $(PY) -m pytest -q $(XDIST) --durations=25

lint: $(STAMP)
	$(PY) -m ruff check pipeline tests
	$(PY) -m mypy pipeline

# The job on distinct releases: the real ones in CORPUS, then with generated
# releases to ~90 MB (SCALE=1) and ~900 MB (SCALE=10, or make bench-large: long,
# and many GB today). Results in bench/results/latest.json; see bench/README.md.
CORPUS ?= raw
SCALE ?= 1
bench: $(STAMP)
	$(PY) -m pipeline bench --corpus $(CORPUS) --scale $(SCALE)

bench-large: $(STAMP)
	$(PY) -m pipeline bench --corpus $(CORPUS) --scale 10

# Score the published lineages (out/) against the hand-traced answer key.
lineage-report: $(STAMP)
	$(PY) -m pipeline lineage-report out

# Follow the rules again with every other release left out (two runs of the job,
# in a temporary folder): the rules whose current number then differs, to read.
lineage-stability: $(STAMP)
	$(PY) -m pipeline lineage-stability raw out

vocabulary: $(STAMP)
	$(PY) -m pipeline vocabulary raw > pipeline/data/vocabulary.txt.tmp \
	  && mv pipeline/data/vocabulary.txt.tmp pipeline/data/vocabulary.txt \
	  || { rm -f pipeline/data/vocabulary.txt.tmp; exit 1; }

# The history the package ships (pipeline/data/history.json.gz: each release's numbering
# and rules, the lineages), what a run on dumps alone maps through: made again from a full
# ingest of raw/ in a temporary folder. tests/test_bundled.py holds the file to it.
history: $(STAMP)
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT \
	  && $(PY) -m pipeline ingest --raw raw --out "$$tmp/out" --full --quiet \
	  && $(PY) -m pipeline.lineage.history "$$tmp/out" pipeline/data/history.json.gz

# Everything generated: out/ (only what the pipeline wrote in it), its lock and
# staging leftovers, .cache/, bench results, tool caches and the virtualenv.
# Without a virtualenv (no click) the tidy module runs on its own: standard library only.
clean:
	if [ -x $(PY) ]; then $(PY) -B -m pipeline tidy out; else $(PYTHON) -B -m pipeline.tools.tidy out; fi
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis rules_pipeline.egg-info
