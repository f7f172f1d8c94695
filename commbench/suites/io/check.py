"""Check mode of IMB-IO (spec §15): every byte read against the file pattern, every byte written
read back.

Reads are verified transfer by transfer inside the kernels (verify_read keeps
the worst deviation in the row state, IoRow.dev); writes after the timed run, by file rank 0
(`expected`, the descriptors' verifier).
"""

from __future__ import annotations

import sys

import numpy as np
from mpi4py import MPI

from commbench import buffers, policy
from commbench.suites.io.files import RUN, IoRow, Shared, file_pattern
from commbench.suites.io.grammar import PATTERN_BASE, Spec
from commbench.suites.verify import worst


def _find_in_file(got: np.ndarray, limit: int) -> bool:
    """Is got a run of the read file's bytes starting somewhere in [0, limit)? (shared pointer)"""
    ln = got.nbytes
    if ln >= 8:
        for a in range(4):  # the int at got[a:a+4] is file element (p + a) / 4
            e = int(got[a : a + 4].view(np.int32)[0]) - PATTERN_BASE
            if not 0 <= e < PATTERN_BASE:
                continue
            for wrap in range(limit // (4 * PATTERN_BASE) + 1):
                p = 4 * (e + wrap * PATTERN_BASE) - a
                if 0 <= p < limit and np.array_equal(file_pattern(p, ln), got):
                    return True
        return False
    whole = file_pattern(0, limit + ln)
    windows = np.lib.stride_tricks.sliding_window_view(whole, ln)[:limit]
    return bool(np.any(np.all(windows == got, axis=1)))


def verify_read(ctx, k: int, got: np.ndarray) -> None:
    """Transfer k's data against the known file pattern; the worst deviation goes to IoRow.dev."""
    spec: Spec = ctx.layout.own.spec
    s: IoRow = ctx.own
    ln = s.len
    if ln == 0:
        return
    if spec.pointer == "Shared" and not spec.collective:
        dev = 0.0 if _find_in_file(got, ctx.layout.own.file_bytes - ln + 1) else 1.0
    else:
        dev = buffers.deviation(got, file_pattern(s.pos1 + k * s.span, ln), "int32")
    s.dev = dev if s.dev is None else max(s.dev, dev)


def _match_any_order(got: bytes, chunks: list[bytes], n: int) -> bool:
    """Shared-pointer writes: got is n chunks of every rank in some order (depth-first search)."""
    chunks = [c for c in chunks if c]
    failed: set = set()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 100 + n * len(chunks)))

    def dfs(p: int, counts: tuple[int, ...]) -> bool:
        if not any(counts):
            return p == len(got)
        if (p, counts) in failed:
            return False
        for i, c in enumerate(chunks):
            if (
                counts[i]
                and got.startswith(c, p)
                and dfs(p + len(c), counts[:i] + (counts[i] - 1,) + counts[i + 1 :])
            ):
                return True
        failed.add((p, counts))
        return False

    return dfs(0, (n,) * len(chunks))


def _verify_written(ctx, n: int) -> float | None:
    """File rank 0 reads the file back and compares every rank's chunks (spec §15)."""
    st: Shared = ctx.layout.own
    spec: Spec = st.spec
    s: IoRow = ctx.own
    fcomm = st.fcomm
    if fcomm.Get_rank() != 0:
        return None
    region = n * s.span
    if region == 0:
        return 0.0
    got = np.empty(region, np.uint8)
    fh = MPI.File.Open(MPI.COMM_SELF, st.path, MPI.MODE_RDONLY, RUN.info)
    try:
        fh.Read_at(0, [got, MPI.BYTE])
    finally:
        fh.Close()
    dt = ctx.bench.dtype
    if spec.per_process:
        chunks = [buffers.pattern(ctx.world_rank, s.len, dt)]
    else:
        fsize = fcomm.Get_size()
        chunks = [
            buffers.pattern(w, policy.block_split(ctx.x, fsize, r)[1], dt)
            for r, w in enumerate(ctx.members)
        ]
    if spec.pointer == "Shared" and not spec.collective and not spec.per_process:
        return 0.0 if _match_any_order(got.tobytes(), [c.tobytes() for c in chunks], n) else 1.0
    if np.array_equal(got, np.tile(np.concatenate(chunks), n)):
        return 0.0
    devs, p = [], 0
    for _ in range(n):
        for c in chunks:
            devs.append(buffers.deviation(got[p : p + c.nbytes], c, dt))
            p += c.nbytes
    return worst(devs)


def expected(ctx, n: int) -> float | None:
    spec: Spec = ctx.layout.own.spec
    if spec.write:
        return _verify_written(ctx, n)
    return ctx.own.dev if ctx.own.dev is not None else 0.0
