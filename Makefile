# The workbench's two commands: `make demo` and `make test`. Both build .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export DEBUG ?= 1

.PHONY: demo test test-postgres lint bench simulate-pooling clean-venv serve migrate

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

venv: $(VENV)/.installed

migrate: $(VENV)/.installed
	$(PY) manage.py migrate --noinput

demo: $(VENV)/.installed migrate
	$(PY) manage.py build_demo
	@echo "Serving on http://127.0.0.1:$(PORT)/  (users: organizer / assessor / assessor2, password: demo)"
	$(PY) manage.py runserver 127.0.0.1:$(PORT)

test: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m pytest -n 2 -q

test-postgres: $(VENV)/.installed
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} $(PY) -m pytest -n 2 -q -m "not browser"

lint: $(VENV)/.installed
	$(PY) -m ruff check .

bench: $(VENV)/.installed
	$(PY) tests/benchmarks/run_all.py

simulate-pooling: $(VENV)/.installed
	$(PY) tests/benchmarks/simulate_pooling.py

clean-venv:
	rm -rf $(VENV)
