# The two commands of the README's quick start: `make run` and `make test`.
#
# Both install commbench into the project's own virtual environment, .venv beside this
# file, made with the system's python3: Debian 12 and Ubuntu 24.04 refuse `pip install`
# outside one (PEP 668, "externally-managed-environment"). PYTHON picks another Python
# to make it with; afterwards `. .venv/bin/activate` puts `commbench` on PATH.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP_FLAGS ?= -q --disable-pip-version-check --root-user-action=ignore
# The recipes run with the environment's bin first: its mpiexec, mpicc, lint-imports.
export PATH := $(abspath $(VENV))/bin:$(PATH)
export VIRTUAL_ENV := $(abspath $(VENV))

.PHONY: install run test test-unit lint

# Debian and Ubuntu split venv's ensurepip into a package of its own (python3-venv); as
# root the environment's maker installs it when it is missing, otherwise it says how.
$(PY):
	@$(PYTHON) -m venv $(VENV) >/dev/null 2>&1 || { \
	  rm -rf $(VENV); \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing python3-venv (the system Python cannot make a virtual environment without it)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null && \
	    $(PYTHON) -m venv $(VENV); \
	  else \
	    echo "$(PYTHON) -m venv failed: install your distribution's python3-venv (Debian, Ubuntu: apt-get install python3-venv), or run make PYTHON=<a python3 with venv>" >&2; \
	    exit 1; \
	  fi; }

# An editable install leaves the project's own modules without .pyc; where
# PYTHONDONTWRITEBYTECODE is set, every process of every run (the launcher and each rank)
# would compile those it imports again: ~0.09 s of a 2-process run's 0.33 s here.
install: $(PY)
	$(PY) -m pip install $(PIP_FLAGS) -e '.[mpich,test]'
	$(PY) -m compileall -q commbench >/dev/null

# A short default IMB-MPI1 run on 2 processes: the IMB tables on stdout,
# every record in results/imb-mpi1.json and results/imb-mpi1.csv.
run: install
	$(PY) -m commbench run -n 2 -o results/imb-mpi1.json --csv results/imb-mpi1.csv

test: install
	$(PY) -m pytest -q

# The tests that start no process (tests/unit): a developer's fast loop, under 2 minutes.
test-unit: install
	$(PY) -m pytest -q tests/unit

lint:
	lint-imports
	$(PY) -m ruff check commbench tests benchmarks
	$(PY) -m ruff format --check commbench tests benchmarks
