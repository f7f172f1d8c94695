# The two commands of the README's quick start: `make run` and `make test`.
PY ?= python3
PIP_FLAGS ?= -q --disable-pip-version-check --root-user-action=ignore

.PHONY: install run test lint

install:
	$(PY) -m pip install $(PIP_FLAGS) -e '.[mpich,test]'

# A short default IMB-MPI1 run on 2 processes: the IMB tables on stdout,
# every record in results/imb-mpi1.json and results/imb-mpi1.csv.
run: install
	$(PY) -m commbench run -n 2 -o results/imb-mpi1.json --csv results/imb-mpi1.csv

test: install
	$(PY) -m pytest -q

lint:
	lint-imports
	$(PY) -m ruff check commbench tests benchmarks
	$(PY) -m ruff format --check commbench tests benchmarks
