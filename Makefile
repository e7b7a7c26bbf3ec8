# The workbench's two commands: `make demo` and `make test`. Both build .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export DEBUG ?= 1

.PHONY: demo test docs test-postgres lint bench check-peers load-test load-import simulate-pooling clean-venv migrate

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

venv: $(VENV)/.installed

migrate: $(VENV)/.installed
	$(PY) manage.py migrate --noinput

# The web server and a background worker (jobs: release bundles, ...), stopped together with Ctrl-C.
demo: $(VENV)/.installed migrate
	$(PY) manage.py build_demo
	@echo "Serving on http://127.0.0.1:$(PORT)/  (users: organizer / assessor / assessor2 / participant / researcher, password: demo)"
	$(PY) manage.py db_worker --no-reload & worker=$$!; trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	$(PY) manage.py runserver 127.0.0.1:$(PORT)

# Browser tests need Debian's chromium (.ci/run installs it); without it they are left out, with a notice.
NO_BROWSER := $(shell command -v chromium >/dev/null 2>&1 || echo '-m "not browser"')

test: $(VENV)/.installed
	$(PY) -m ruff check .
	$(MAKE) --no-print-directory docs
	@if [ -n '$(NO_BROWSER)' ]; then echo "chromium not found: skipping the browser tests (sudo apt-get install chromium)"; fi
	$(PY) -m pytest -n 2 -q $(NO_BROWSER)

# The documentation site (MkDocs, Material theme) into var/site, never committed; --strict fails on any warning
# (a broken link, a page missing from the nav, a setting the code reads that docs/hooks/configuration.py
# does not describe). The reference pages are generated from the code by docs/hooks/.
docs: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet -d var/site

# On PostgreSQL: everything but the browser tests, except the end-to-end track (its server and db_worker
# then run on a fresh PostgreSQL database).
PG_MARKS := $(if $(NO_BROWSER),not browser,not browser or track)

test-postgres: $(VENV)/.installed
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} $(PY) -m pytest -n 2 -q -m "$(PG_MARKS)"

lint: $(VENV)/.installed
	$(PY) -m ruff check .

bench: $(VENV)/.installed
	$(PY) tests/benchmarks/run_all.py

simulate-pooling: $(VENV)/.installed
	$(PY) tests/benchmarks/simulate_pooling.py

# Checks against the real TREC data in ../shared/peer-tests (not part of `make test`: a user's clone lacks it)
check-peers: $(VENV)/.installed
	$(PY) tests/benchmarks/check_peer_imports.py
	$(PY) tests/benchmarks/check_trec_eval_suite.py
	$(PY) tests/benchmarks/check_covid_leaderboard.py
	$(PY) tests/benchmarks/check_sample_eval.py

# 20 assessors judging through gunicorn on the local PostgreSQL (127.0.0.1 only, bounded in time)
load-test: $(VENV)/.installed
	$(PY) tests/benchmarks/load_judging.py --seconds 30

# 20 assessors judging through gunicorn on SQLite while 400,000 documents, then a 2,000,000-line run, are imported
load-import: $(VENV)/.installed
	cd tests/benchmarks && ../../$(PY) load_import.py

clean-venv:
	rm -rf $(VENV)
