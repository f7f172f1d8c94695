"""The text of a msgrate run: the seed's settings block, then one rate per pattern (seed 003)."""

from __future__ import annotations

import statistics
import sys
from typing import TextIO

from commbench import records
from commbench.suites.msgrate import MsgrateSettings
from commbench.views import TextView
from commbench.views.measuring_text import Notes


class MsgrateText(TextView):
    """The seed's output: a settings block, then one rate per pattern."""

    def __init__(self, out: TextIO = sys.stdout):
        super().__init__(out)
        self.rates: list[str] = []
        self.head: list[str] = []
        self.machine = False
        self.notes = Notes()

    def start(self, header: dict) -> None:
        cfg, meta = header["config"], header["metadata"]
        p = MsgrateSettings.of(cfg["params"])
        self.machine = bool(p.machine)
        size = sum(meta["ranks_per_host"].values())
        self.head = [str(v) for v in (size, p.peers, p.iters, p.msgs, p.size, p.cache, p.ppn)]
        self.p(
            f"# commbench {meta['commbench_version']}, Sandia real-world message rate (seed 003)",
            f"# MPI: {meta['mpi_library_version'].splitlines()[0]}; ranks per host: "
            f"{meta['ranks_per_host']}",
        )
        labels = ("job size", "npeers", "niters", "nmsgs", "nbytes", "cache size", "ppn")
        self.p(*(f"{label + ':':<12}{v}" for label, v in zip(labels, self.head)))
        self.p(
            f"# single direction pairs: {p.pairing}; barrier before each timed iteration: "
            f"{'every pattern' if p.barriers else 'pre-post and all-start only (the seed)'}",
            "# messages per second per process (sends + receives), averaged over processes",
        )
        self.p(*self.notes.start(cfg))  # --precision, --shuffle
        self.out.flush()

    def record(self, rec: records.Measurement) -> None:
        self.notes.record(rec)
        r = rec.extra["messages_per_second"]
        self.rates.append(f"{r:.2f}")
        rr = [v for v in rec.extra["rank_rates"] if v]
        spread = (
            f"   (ranks: min {min(rr):.0f}, median {statistics.median(rr):.0f}, max {max(rr):.0f})"
            if rr
            else ""
        )
        self.p(f"{rec.extra['pattern']:>16}: {r:.2f} msgs/s{spread}")
        self.out.flush()

    def finish(self, summary: dict) -> None:
        self.p(*self.notes.finish())
        if self.machine:
            self.p(" ".join(self.head + self.rates))
        self.out.flush()
