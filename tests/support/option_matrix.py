"""The options the option matrix covers: the parser's own table (run_options.all_options,
every family's, each once) less the run-level ones (-n, -o, …). tests/unit/test_option_matrix.py
refuses each where a run would not use it; tests/mpi/test_option_matrix.py finds the accepted
ones in the records of real runs."""

from __future__ import annotations

from commbench import run_options


def _options() -> list:
    out, seen = [], set()
    for o in run_options.all_options():
        if id(o) not in seen and o.dest not in run_options.RUN_LEVEL:
            seen.add(id(o))
            out.append(o)
    return out


OPTIONS = _options()
