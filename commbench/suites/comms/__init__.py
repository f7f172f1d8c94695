"""COMMS: Hockney's COMMS1 (pingpong) and COMMS2 (message exchange), seed 000.

Both run over the standard size sweep (0, 1, 2, 4, … 4 MiB) between two
processes and are meant to be read with the Hockney model
t = (n + n_1/2) / r_inf (commbench.models.hockney; `commbench run COMMS1
COMMS2 --fit`).

COMMS1: the master sends n bytes, the slave receives them and immediately
returns them; half the round trip is the time t of one message (seed 000).

COMMS2: both processes send n bytes to each other at the same time, wait for
the partner's message, and then both return what they received. Seed 000 says
only "simultaneously send messages to each other and return them"; the
original Genesis COMMS2 (Hockney, release 2.0, 1992) records one QUARTER of the
time of this exchange-and-return as t, "because four messages are sent during
the exchange". We follow Genesis: the reported time is round/4 and the
turnover is 1, so the rate n/t is the aggregate rate of both directions
(4n bytes in one round) and a link that carries both directions at once shows
a higher r_inf than COMMS1, as the seed says it should.

The catalog: the descriptors, importing neither MPI nor numpy; the kernels and verifiers
are commbench.suites.comms.kernels, imported by the ranks that run them (base.Lazy).
"""

from __future__ import annotations

from commbench.suites.base import TWO, Benchmark, Family, Kind, Lazy

F = "comms"
KERNELS = "commbench.suites.comms.kernels"


BENCHMARKS = (
    Benchmark(
        "COMMS1",
        F,
        Kind.SINGLE,
        Lazy(KERNELS, "comms1"),
        "pingpong: half the round trip of an n-byte message (Hockney r_inf, n_1/2)",
        time_factor=0.5,
        procs=TWO,
        expected=Lazy(KERNELS, "check_comms1"),
        comments=("t = half the round-trip time; rate = n / t",),
        native="comms1",
        fit=True,
    ),
    Benchmark(
        "COMMS2",
        F,
        Kind.SINGLE,
        Lazy(KERNELS, "comms2"),
        "exchange: both send at once and return; t = a quarter of the round (4 messages)",
        time_factor=0.25,
        procs=TWO,
        expected=Lazy(KERNELS, "check_comms2"),
        comments=(
            "t = one quarter of exchange-and-return (4 messages, Genesis COMMS2);",
            "rate = n / t = aggregate rate of both directions",
        ),
        native="comms2",
        fit=True,
    ),
)

FAMILY = Family(
    name=F,
    title="COMMS",
    part="COMMS part",
    benchmarks=BENCHMARKS,
    description=(
        "Hockney's COMMS1 pingpong and COMMS2 exchange (seed 000), for r_inf and n_1/2 fits"
    ),
    aliases=("COMMS",),
    fits=True,  # COMMS1/COMMS2 print r_inf, n_1/2, t0 and pi0 after each table (seed 000)
)
