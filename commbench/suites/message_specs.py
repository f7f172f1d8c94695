"""Message specs for the timed loops, in the form mpi4py takes fastest.

mpi4py takes the memory of its own MPI.buffer objects faster than a numpy
array's (no PEP 3118 export per call): ~30-40 ns per message spec, several % of
a 0-byte PingPong iteration (benchmarks/mpi4py_loop.py). Same memory, same
datatype and count, so the messages are exactly those of the numpy specs.
"""

from __future__ import annotations

from mpi4py import MPI


def lean(specs: list) -> list:
    return [[MPI.buffer(s[0]), *s[1:]] for s in specs]


def lean_send(ctx, **kw) -> list:
    """The send specs of every slot, in the message datatype (ctx.dtype: -data_type) unless
    a dtype is given (reductions pass ctx.red_dtype)."""
    kw.setdefault("dtype", ctx.dtype)
    return lean(ctx.send_specs(**kw))


def lean_recv(ctx, **kw) -> list:
    kw.setdefault("dtype", ctx.dtype)
    return lean(ctx.recv_specs(**kw))
