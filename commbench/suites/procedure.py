"""What a family with a procedure of its own gives the harness: units of rows, and what one
measurement of one row is. The harness (commbench.harness.rows) drives it.

The IMB-style families give the harness kernels (one repetition of a pattern) and let it
choose the repetitions; the families that follow another benchmark's procedure (OSU's
warm-up and timed iterations, IMB-P2P's pauses and barriers) give it instead, per row,
one whole measurement: `Unit.measure(row, engine)`, which runs the procedure on every rank
of the run and returns what this rank has of it, and `Unit.record(row, engine, data)`,
which builds the row's record on world rank 0 from rank 0's data of one measurement (a row
whose record has defects beyond the tolerance under -check is a check failure). Everything around a
measurement belongs to the harness: the order of the rows (--shuffle), the engines, invalid rows,
the samples of a row (--samples K, cut at -time; --precision), the progress line and the
watchdog's steps, what a signal keeps of a row, and the extras every record carries
(engine, samples, precision, position).

A Procedure yields Units (rows that share a set-up, e.g. one OSU benchmark and -T type's
buffers of its largest size). A Unit with `invalid` set has no rows: the harness records
one invalid row with that message (OSU's words, IMB-P2P's "NOT AVAILABLE" line).
`engines` is the one choice of a family's engines (its C loops' runner, or the mpi4py
loops) for the run's --engine; no MPI is called here but through its resolve().
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

# The general options the harness's row loop gives every procedure family (commbench.harness.
# rows): how a row's samples are taken and how many, their order, and -time bounding them. A
# family's Family.honours is these with its own.
ROW_OPTIONS = frozenset(
    {"samples", "consecutive_samples", "precision", "precision_budget", "shuffle", "time"}
)


@dataclass(frozen=True)
class Row:
    """One row of a unit: what the progress line and the watchdog name, and the key the
    family measures it by (a size; a size and a type …)."""

    benchmark: str
    np: int
    bytes: int | None = None
    mode: str = ""

    def where(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "np": self.np, "mode": self.mode, "bytes": self.bytes}


@dataclass
class Unit:
    """Rows that share a set-up, measured on each of `engines` in turn (--engine both: the
    later engines' rows form tables of their own). A unit with `invalid` has no rows: the
    harness records one row of status invalid with that message (kind and extra as given)."""

    benchmark: str
    np: int
    rows: list[Row] = field(default_factory=list)
    engines: list[str] = field(default_factory=lambda: ["mpi4py"])
    kind: str = ""
    invalid: str | None = None
    extra: dict = field(default_factory=dict)  # of the invalid record

    def open(self) -> None:
        """Allocate what the rows share (buffers of the largest size); every rank."""

    def close(self) -> None:
        """Free it; every rank, also after a failure."""

    def measure(self, row: Row, engine: str) -> Any:  # pragma: no cover - the families'
        """One measurement of row on every rank: what world rank 0 builds the record from."""
        raise NotImplementedError

    def record(self, row: Row, engine: str, data: Any) -> Any:  # pragma: no cover
        """The row's records.Measurement from one measurement (world rank 0)."""
        raise NotImplementedError


class Procedure:
    """A family's run as units: `units()` yields them in the run's order (every rank the same);
    open() and close() hold what the whole run shares (IMB-MT's thread communicators)."""

    def units(self) -> Iterator[Unit]:  # pragma: no cover - the families'
        raise NotImplementedError

    def open(self) -> None:
        """Every rank, before the first unit."""

    def close(self) -> None:
        """Every rank, after the last unit, also after a failure."""


def engines(session: Any, resolve: Callable[[], tuple[Any, str | None]]) -> dict[str, Any]:
    """{engine: its runner (None: the mpi4py loops)} for the run's --engine, agreed by every
    rank: the C loops where resolve() (collective: (runner, None) or (None, why)) loads them
    on every rank, else the mpi4py loops, rank 0 saying why; --engine both: C, then mpi4py."""
    if session.cfg.engine == "mpi4py":
        return {"mpi4py": None}
    runner, note = resolve()
    if runner is None:
        if session.rank == 0:
            print(f"commbench: {note}", file=sys.stderr, flush=True)
        return {"mpi4py": None}
    return {"native": runner} | ({"mpi4py": None} if session.cfg.engine == "both" else {})
