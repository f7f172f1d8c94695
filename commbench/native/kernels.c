/* commbench's native engine: the timed loops of the point-to-point and
 * collective kernels in C, so that nothing but MPI runs between the two
 * timestamps.
 *
 * Every pattern is one row of CB_PATTERNS below, which expands to a kernel
 *     double cb_<pattern>(const cb_args *a, long long n)
 * that mirrors one mpi4py kernel of commbench/suites (same calls, same arguments,
 * same order, same off-cache slot cycling, same root rotation) and returns
 * the seconds per repetition of its timed region. The Python side
 * (commbench/native/__init__.py) reads the same rows from this file for the
 * pattern names and the builders of their cb_args, which it fills from the
 * harness's Context: the communicator as the address of an MPI_Comm (mpi4py's
 * MPI._addressof), the buffers as numpy addresses. Compiled with the mpicc of the
 * MPI that mpi4py loaded, so MPI_Comm and the constants have that library's ABI.
 * The loop kinds of the one-sided and nonblocking patterns (IMB-EXT, IMB-RMA,
 * IMB-NBC, IMB-MPI4) are in loops.h beside this file, which it includes: windows
 * (MPI_Win) and persistent requests reach them the same way, by their handles'
 * addresses.
 */
#include <mpi.h>
#include <stddef.h>
#include "abi.h"  /* the argument block's declaration that Python reads too */
#include "collectives.h"  /* each collective's MPI call */

/* ================================================================ the patterns
 *
 * One row a pattern:   P(name, args, loop, calls...)
 *
 *   name   the pattern a benchmark names (its descriptor's `native`); the C
 *          function is cb_<name>.
 *   args   the Python builder of its cb_args: ARGS[args] in native/__init__.py.
 *   loop   how one repetition is repeated between the timestamps:
 *            EACH    calls; next off-cache slot
 *            ROOTED  calls; root = (root + root_shift) % NP; next slot  (root starts at 0)
 *            PAIR    two call lists, `calls0, calls1`: rank 0 repeats calls0,
 *                    rank 1 calls1; next slot
 *            BARE    calls only (no buffers, no slots)
 *            SAME    `other`: the loop of pattern `other` (it differs in its args)
 *            OWN     written out by hand after the table (the windowed loops, EXT's
 *                    Window, RMA's Truly_passive_put)
 *          the one-sided loops (the window a->win, which Python created; only the
 *          ranks with a->active make the RMA calls; slot k's target displacement
 *          `disp`; afterwards, in check mode, the uses of each slot are counted):
 *            FENCE   IMB-EXT: AGGREGATE n x {calls} then MPI_Win_fence; NON-AGGREGATE
 *                    n x {calls; fence}; ranks without a role n fences
 *            LOCKED  `calls, done`: IMB-RMA between a shared lock of the peer and its
 *                    unlock, AGGREGATE n x {calls} then done, NON-AGGREGATE n x
 *                    {calls; done}; then MPI_Barrier, which the targets wait in
 *            TO_ALL  `calls, done`: under MPI_Win_lock_all, n x {calls for each
 *                    target (me + j) % np, j = 1..np-1}, then done once; MPI_Barrier
 *            XCHG    under shared locks of left and right, n x {calls; flush left;
 *                    flush right (one flush when left == right)}; MPI_Barrier
 *          the nonblocking loops:
 *            START   calls start one operation into *rq: n x {calls; MPI_Wait(rq)} (pure);
 *                    with a->ncomp == 3 then the overlap of IMB-NBC / IMB-MPI4: the CPU
 *                    kernel sized to t_pure, barriers, n x {calls; compute; MPI_Wait}
 *   calls  the MPI calls of one repetition, separated by ';'. In scope:
 *            comm; s, r: this slot's send and receive buffers; c: a->count;
 *            dt: the datatype (-data_type, or -red_data_type for a reduction);
 *            src: the receive source (MPI_ANY_SOURCE or a->source); peer;
 *            right, left: the ring neighbours; root; me, np: rank and size;
 *            off2: a->soff2; req, reqs[2]; a: the cb_args; win: the window;
 *            disp: the slot's target displacement; target: TO_ALL's target;
 *            rq: the request a START call fills (&req unless the call sets it).
 *          A collective's call is collectives.h's, CB_BLOCKING(op) or CB_NONBLOCKING(op)
 *          (START), over the names above and, bound in CB_LOCALS, op (MPI_SUM), bcnt
 *          (c), scnt, rcnt (a->counts) and sdsp, rdsp (a->displs).
 *
 * A new pattern is one row (plus a builder in ARGS where its argument shape is
 * new). Rows are read by Python up to the `args` field; keep each row starting
 * with `P(name, args, loop,`.
 */
#define CB_PATTERNS(P) \
/* ---- point to point */ \
/* mpi1 PingPong: Send, Recv(ANY_SOURCE) / Recv, Send */ \
P(pingpong,          p2p,            PAIR,   MPI_Send(s, c, dt, 1, 1, comm); \
                                             MPI_Recv(r, c, dt, src, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE), \
                                             MPI_Recv(r, c, dt, src, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE); \
                                             MPI_Send(s, c, dt, 0, 1, comm)) \
P(pingpong_specific, p2p_specific,   SAME,   pingpong) \
/* PingPong's own name: the methodology's source (ANY_SOURCE for IMB 4.0, the partner for 2021) */ \
P(pingpong_select,   p2p_select,     SAME,   pingpong) \
/* PingPing: Isend, Recv(ANY_SOURCE), Wait */ \
P(pingping,          p2p,            EACH,   MPI_Isend(s, c, dt, peer, 1, comm, &req); \
                                             MPI_Recv(r, c, dt, src, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE); \
                                             MPI_Wait(&req, MPI_STATUS_IGNORE)) \
P(pingping_specific, p2p_specific,   SAME,   pingping) \
P(pingping_select,   p2p_select,     SAME,   pingping) \
/* COMMS1 (suites/comms.py): Send/Recv from rank 1, which returns the message */ \
/* it received, from its receive buffer. Explicit source, tag 1. */ \
P(comms1,            p2p_specific,   PAIR,   MPI_Send(s, c, dt, 1, 1, comm); \
                                             MPI_Recv(r, c, dt, 1, 1, comm, MPI_STATUS_IGNORE), \
                                             MPI_Recv(r, c, dt, 0, 1, comm, MPI_STATUS_IGNORE); \
                                             MPI_Send(r, c, dt, 0, 1, comm)) \
/* COMMS2: both exchange (Isend, Recv, Wait, tag 1), then both return what */ \
/* they received (Isend of the receive buffer, Recv into the send buffer, tag 2). */ \
P(comms2,            p2p_specific,   EACH,   MPI_Isend(s, c, dt, peer, 1, comm, &req); \
                                             MPI_Recv(r, c, dt, peer, 1, comm, MPI_STATUS_IGNORE); \
                                             MPI_Wait(&req, MPI_STATUS_IGNORE); \
                                             MPI_Isend(r, c, dt, peer, 2, comm, &req); \
                                             MPI_Recv(s, c, dt, peer, 2, comm, MPI_STATUS_IGNORE); \
                                             MPI_Wait(&req, MPI_STATUS_IGNORE)) \
/* periodic chain of Sendrecv */ \
P(sendrecv,          bytes,          EACH,   MPI_Sendrecv(s, c, dt, right, 1, r, c, dt, left, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE)) \
/* Isend right, Isend left (second block), Recv left, Recv right, Waitall */ \
P(exchange,          exchange,       EACH,   MPI_Isend(s, c, dt, right, 1, comm, &reqs[0]); \
                                             MPI_Isend(s + off2, c, dt, left, 1, comm, &reqs[1]); \
                                             MPI_Recv(r, c, dt, left, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE); \
                                             MPI_Recv(r, c, dt, right, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE); \
                                             MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)) \
/* ---- collectives (their calls: collectives.h): reductions on X/4 floats, SUM */ \
P(allreduce,         floats,         EACH,   CB_BLOCKING(allreduce)) \
P(reduce,            floats,         ROOTED, CB_BLOCKING(reduce)) \
P(reduce_scatter,    reduce_scatter, EACH,   CB_BLOCKING(reduce_scatter)) \
/* ---- collectives on X bytes per rank */ \
P(allgather,         bytes,          EACH,   CB_BLOCKING(allgather)) \
P(allgatherv,        vbytes,         EACH,   CB_BLOCKING(allgatherv)) \
P(gather,            bytes,          ROOTED, CB_BLOCKING(gather)) \
P(gatherv,           vbytes,         ROOTED, CB_BLOCKING(gatherv)) \
P(scatter,           bytes,          ROOTED, CB_BLOCKING(scatter)) \
P(scatterv,          vbytes,         ROOTED, CB_BLOCKING(scatterv)) \
P(alltoall,          bytes,          EACH,   CB_BLOCKING(alltoall)) \
P(alltoallv,         vbytes,         EACH,   CB_BLOCKING(alltoallv)) \
/* the root sends from sbuf, the others receive into rbuf */ \
P(bcast,             bytes,          ROOTED, CB_BLOCKING(bcast)) \
P(barrier,           bytes,          BARE,   CB_BLOCKING(barrier)) \
/* ---- commbench's own collectives (commbench.suites.collops: OURS), blocking and IMB-NBC's */ \
P(scan,              floats,         EACH,   CB_BLOCKING(scan)) \
P(exscan,            floats,         EACH,   CB_BLOCKING(exscan)) \
P(iscan,             floats,         START,  CB_NONBLOCKING(scan)) \
P(iexscan,           floats,         START,  CB_NONBLOCKING(exscan)) \
/* ---- IMB 2021's additions to IMB-MPI1 (suites/mpi1/imb2021.py) */ \
P(reduce_local,      floats,         EACH,   MPI_Reduce_local(s, r, c, dt, MPI_SUM)) \
P(reduce_scatter_block, floats,     EACH,   CB_BLOCKING(reduce_scatter_block)) \
/* windows of a->window messages to/from peer, then a 1-byte ack: written out below */ \
P(uniband,           window,         OWN,    0) \
P(biband,            window,         OWN,    1) \
/* ---- IMB-EXT (suites/ext.py): active target, `disp` = this slot's target displacement */ \
P(ext_put,           win_r0,         FENCE,  MPI_Put(s, c, MPI_BYTE, peer, disp, c, MPI_BYTE, win)) \
P(ext_put_bidir,     win_all,        SAME,   ext_put) \
P(ext_get,           win_r1,         FENCE,  MPI_Get(r, c, MPI_BYTE, peer, disp, c, MPI_BYTE, win)) \
P(ext_get_bidir,     win_all,        SAME,   ext_get) \
P(ext_accumulate,    winf_all,       FENCE,  MPI_Accumulate(s, c, MPI_FLOAT, 0, disp, c, MPI_FLOAT, MPI_SUM, win)) \
P(ext_window,        bytes,          OWN,    0) \
/* ---- IMB-RMA (suites/rma/__init__.py): passive target; the transfer, then the completion */ \
P(rma_put,           win_r0,         LOCKED, MPI_Put(s, c, MPI_BYTE, peer, disp, c, MPI_BYTE, win), \
                                             MPI_Win_flush(peer, win)) \
P(rma_put_bidir,     win_all,        SAME,   rma_put) \
P(rma_get,           win_r0,         LOCKED, MPI_Get(r, c, MPI_BYTE, peer, disp, c, MPI_BYTE, win), \
                                             MPI_Win_flush(peer, win)) \
P(rma_get_bidir,     win_all,        SAME,   rma_get) \
P(rma_put_local,     win_r0,         LOCKED, MPI_Put(s, c, MPI_BYTE, peer, disp, c, MPI_BYTE, win), \
                                             MPI_Win_flush_local(peer, win)) \
P(rma_get_local,     win_r0,         LOCKED, MPI_Get(r, c, MPI_BYTE, peer, disp, c, MPI_BYTE, win), \
                                             MPI_Win_flush_local(peer, win)) \
P(rma_accumulate,    winf_r0,        LOCKED, MPI_Accumulate(s, c, MPI_FLOAT, peer, disp, c, MPI_FLOAT, MPI_SUM, win), \
                                             MPI_Win_flush(peer, win)) \
P(rma_get_accumulate, winf_r0,       LOCKED, MPI_Get_accumulate(s, c, MPI_FLOAT, r, c, MPI_FLOAT, peer, disp, c, \
                                                                MPI_FLOAT, MPI_SUM, win), \
                                             MPI_Win_flush(peer, win)) \
P(rma_fetch_and_op,  win_r0,         LOCKED, MPI_Fetch_and_op(s, r, MPI_FLOAT, peer, disp, MPI_SUM, win), \
                                             MPI_Win_flush(peer, win)) \
/* origin, compare and result values in the origin's receive slot: @8, @4, @0 */ \
P(rma_compare_and_swap, win_r0,      LOCKED, MPI_Compare_and_swap(r + 8, r + 4, r, MPI_INT, peer, disp, win), \
                                             MPI_Win_flush(peer, win)) \
P(rma_put_all,       win_r0,         TO_ALL, MPI_Put(s, c, MPI_BYTE, target, disp, c, MPI_BYTE, win), \
                                             MPI_Win_flush_all(win)) \
P(rma_get_all,       win_r0,         TO_ALL, MPI_Get(r, c, MPI_BYTE, target, disp, c, MPI_BYTE, win), \
                                             MPI_Win_flush_all(win)) \
P(rma_put_all_local, win_r0,         TO_ALL, MPI_Put(s, c, MPI_BYTE, target, disp, c, MPI_BYTE, win), \
                                             MPI_Win_flush_local_all(win)) \
P(rma_get_all_local, win_r0,         TO_ALL, MPI_Get(r, c, MPI_BYTE, target, disp, c, MPI_BYTE, win), \
                                             MPI_Win_flush_local_all(win)) \
P(rma_all_put_all,   win_all,        SAME,   rma_put_all) \
P(rma_all_get_all,   win_all,        SAME,   rma_get_all) \
/* send[0:X] to left at disp, send[X:2X] to right at disp + X (off2 = X) */ \
P(rma_exchange_put,  win_all,        XCHG,   MPI_Put(s, c, MPI_BYTE, left, disp, c, MPI_BYTE, win); \
                                             MPI_Put(s + off2, c, MPI_BYTE, right, disp + off2, c, MPI_BYTE, win)) \
/* right's send[0:X] into recv[0:X], left's send[X:2X] into recv[X:2X] */ \
P(rma_exchange_get,  win_all,        XCHG,   MPI_Get(r, c, MPI_BYTE, right, disp, c, MPI_BYTE, win); \
                                             MPI_Get(r + off2, c, MPI_BYTE, left, disp + off2, c, MPI_BYTE, win)) \
P(rma_truly_passive_put, win_r0,     OWN,    0) \
/* ---- IMB-NBC (suites/nbc.py): the start of one operation into *rq, the arguments of */ \
/* its blocking IMB-MPI1 counterpart; pure, or overlapped with computation (a->ncomp 3) */ \
P(ibcast,            bytes,          START,  CB_NONBLOCKING(bcast)) \
P(iallgather,        bytes,          START,  CB_NONBLOCKING(allgather)) \
P(iallgatherv,       vbytes,         START,  CB_NONBLOCKING(allgatherv)) \
P(igather,           bytes,          START,  CB_NONBLOCKING(gather)) \
P(igatherv,          vbytes,         START,  CB_NONBLOCKING(gatherv)) \
P(iscatter,          bytes,          START,  CB_NONBLOCKING(scatter)) \
P(iscatterv,         vbytes,         START,  CB_NONBLOCKING(scatterv)) \
P(ialltoall,         bytes,          START,  CB_NONBLOCKING(alltoall)) \
P(ialltoallv,        vbytes,         START,  CB_NONBLOCKING(alltoallv)) \
P(ireduce,           floats,         START,  CB_NONBLOCKING(reduce)) \
P(ireduce_scatter,   reduce_scatter, START,  CB_NONBLOCKING(reduce_scatter)) \
P(iallreduce,        floats,         START,  CB_NONBLOCKING(allreduce)) \
P(ibarrier,          bytes,          START,  CB_NONBLOCKING(barrier)) \
/* ---- IMB-MPI4 (suites/mpi4.py): MPI_Start of the persistent request Python bound */ \
/* to this call's root and slot; every operation the same row */ \
P(persist,           persist,        START,  rq = (MPI_Request *)a->preqs[root * a->slots + k]; MPI_Start(rq))

/* ================================================================ the arguments */

#define CB_ABI_VERSION 10

/* cb_args, the one argument block of every kernel: one row a field (abi.h), which
 * commbench/native/args.py reads for its ctypes mirror, Args. */
#define CB_ARGS_FIELDS(X) \
    X(const void *, comm,     "address of an MPI_Comm") \
    X(char *,       sbuf,     "send buffer, slot 0") \
    X(char *,       rbuf,     "receive buffer, slot 0") \
    X(long long,    sstride,  "bytes between send slots") \
    X(long long,    rstride,  "bytes between receive slots") \
    X(long long,    soff2,    "byte offset of the second send block (Exchange)") \
    X(int,          slots,    "off-cache slots cycled through (1: one buffer)") \
    X(int,          count,    "elements per message (bytes, or floats for reductions)") \
    X(int,          peer,     "partner rank of the two-process patterns") \
    X(int,          source,   "receive source; -1 for MPI_ANY_SOURCE") \
    X(int,          rank,     "this rank") \
    X(int,          size,     "the communicator's size") \
    X(const int *,  counts,   "per-rank counts (Reduce_scatter, v-variants)") \
    X(const int *,  displs,   "per-rank displacements (v-variants)") \
    X(int,          sync,     ">0: each call timed alone, then `sync` barriers (IMB 2021 -sync)") \
    X(int,          root_shift, "ROOTED: root += root_shift after each call (IMB 2021 -root_shift)") \
    X(int,          window,   "Uniband/Biband: messages per window (-window_size)") \
    X(int,          dtype,    "the datatype: 0 byte, 1 char, 2 int, 3 float, 4 double (cb_datatype)") \
    X(int,          imb_barrier, "-sync's barriers: 1 IMB's own (cb_barrier), 0 MPI_Barrier") \
    /* ---- one-sided (IMB-EXT, IMB-RMA) */ \
    X(const void *, win,      "address of an MPI_Win (mpi4py's, created by the setup)") \
    X(long long,    tstride,  "target displacement between slots, in displacement units") \
    X(int,          active,   "this rank makes the RMA calls (else only the synchronisation)") \
    X(int,          agg,      "AGGREGATE: one completion after the n transfers") \
    X(int,          fenced,   "EXT Accumulate, imb2021: fence(NOPRECEDE) before, fence(NOSUCCEED) after") \
    X(long long *,  uses,     "check mode: repetitions per slot, counted after the loop; or NULL") \
    /* ---- nonblocking and persistent collectives (IMB-NBC, IMB-MPI4) */ \
    X(void *const *, preqs,   "MPI-4: addresses of persistent MPI_Requests, [root * slots + slot]") \
    X(int,          ncomp,    "components wanted: 1 (t), 3 (out[]: overlap, Truly_passive_put)") \
    X(int,          n_barr,   "overlap: barriers between the pure and the overlapped loop") \
    X(double,       cpu_factor, "overlap: computation per repetition = cpu_factor x t_pure, at most cpu_cap") \
    X(double,       cpu_cap,  "overlap: that cap in seconds (check mode); 0: no cap") \
    X(double,       out[3],   "the components of a 3-component kernel") \
    X(long long,    first,    "the index of the first call (Context.first): its slot, root, target")

typedef struct { CB_ARGS_FIELDS(CB_FIELD) } cb_args;

/* What Python checks at load: the ABI number, sizeof(cb_args), the MPI it sees (abi.h). */
#define CB_STRUCTS(S) S(cb_args)
CB_EXPORTS(cb_, CB_ABI_VERSION, CB_STRUCTS)

/* IMB 2021's -imb_barrier: 0-byte Sendrecv rounds with partners rank +/- 2^k (tag 1000,
 * IMB_BARRIER_TAG), the same as commbench.harness.context.dissemination_barrier. */
static void cb_sync_barrier(MPI_Comm comm, int own)
{
    if (!own) { MPI_Barrier(comm); return; }
    int size, rank, tmp = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    for (int mask = 1; mask < size; mask <<= 1)
        MPI_Sendrecv(&tmp, 0, MPI_BYTE, (rank + mask) % size, 1000, &tmp, 0, MPI_BYTE,
                     (rank - mask + size) % size, 1000, comm, MPI_STATUS_IGNORE);
}

/* IMB 2021's -data_type / -red_data_type names, by the code commbench/native passes. */
static MPI_Datatype cb_datatype(int code)
{
    switch (code) {
    case 1: return MPI_CHAR;
    case 2: return MPI_INT;
    case 3: return MPI_FLOAT;
    case 4: return MPI_DOUBLE;
    default: return MPI_BYTE;
    }
}

double cb_wtime(void) { return MPI_Wtime(); }

/* An empty timed region: what timing one repetition costs in C (--per-iteration's overhead). */
double cb_empty(void) { double t0 = MPI_Wtime(); return MPI_Wtime() - t0; }

/* The table as the library was built from it, "name:args name:args ...": Python
 * checks it against the rows it read from this file. */
#define CB_ROW_STRING(name, args, ...) #name ":" #args " "
const char *cb_patterns(void) { return CB_PATTERNS(CB_ROW_STRING); }

/* ================================================================ the loops */

#define CB_KERNEL(name) double cb_##name(cb_args *a, long long n)

/* Everything a row's calls may use, set before the first timestamp; what a
 * pattern does not use the compiler drops. Call a->first (0 for a whole loop; i when
 * --per-iteration times call i alone) starts at its own slot and root, as
 * Context.each and Context.roots do for the mpi4py kernels. */
#define CB_LOCALS \
    MPI_Comm comm = *(const MPI_Comm *)a->comm; \
    int c = a->count, me = a->rank, np = a->size, peer = a->peer; \
    int k = a->slots > 1 ? (int)(a->first % a->slots) : 0, root = (int)(a->first * a->root_shift % np); \
    int src = a->source < 0 ? MPI_ANY_SOURCE : a->source; \
    int right = (me + 1) % np, left = (me - 1 + np) % np; \
    char *s = a->sbuf ? a->sbuf + k * a->sstride : NULL, *r = a->rbuf ? a->rbuf + k * a->rstride : NULL; \
    long long off2 = a->soff2; \
    MPI_Request req, reqs[2], *rq = &req; \
    int sy = a->sync, shift = a->root_shift; \
    MPI_Datatype dt = cb_datatype(a->dtype); \
    /* collectives.h's other names: IMB's v forms give both sides the same arrays */ \
    MPI_Op op = MPI_SUM; \
    int bcnt = c; \
    const int *scnt = a->counts, *sdsp = a->displs, *rcnt = a->counts, *rdsp = a->displs; \
    MPI_Win win = a->win ? *(const MPI_Win *)a->win : MPI_WIN_NULL; \
    MPI_Aint disp = (MPI_Aint)k * (MPI_Aint)a->tstride; \
    double acc = 0.0, t1 = 0.0; \
    (void)shift; (void)t1; (void)dt; (void)c; (void)k; (void)root; (void)peer; (void)src; (void)right; (void)left; \
    (void)s; (void)r; (void)off2; (void)req; (void)reqs; (void)rq; (void)win; (void)disp; \
    (void)sy; (void)acc; (void)comm; (void)op; (void)bcnt; (void)scnt; (void)sdsp; (void)rcnt; \
    (void)rdsp;

/* The slot cursor: k cycles 0..slots-1 as mpi4py's itertools.cycle does. */
#define NEXT_SLOT() do { if (++k == a->slots) { k = 0; s = a->sbuf; r = a->rbuf; } \
                         else { s += a->sstride; r += a->rstride; } } while (0)
#define NEXT_ROOT() do { root += shift; if (root >= np) root -= np; } while (0)

/* One kernel: the locals, then the timed region `timed`, nothing else in it. */
#define CB_TIMED(name, timed) \
    CB_KERNEL(name) \
    { \
        CB_LOCALS \
        double t0 = MPI_Wtime(); \
        timed \
        return (sy ? acc : MPI_Wtime() - t0) / (double)n; \
    }
/* With a->sync (IMB 2021's -sync on, collectives only) each call is timed alone and
 * followed by `sync` barriers outside its time; the reported time is the sum over n. */
#define CB_REPEAT(calls, then) for (long long i = 0; i < n; i++) { \
        if (sy) t1 = MPI_Wtime(); \
        calls; \
        if (sy) { acc += MPI_Wtime() - t1; for (int b = 0; b < sy; b++) cb_sync_barrier(comm, a->imb_barrier); } \
        then }

#define CB_LOOP_EACH(name, calls)   CB_TIMED(name, CB_REPEAT(calls, NEXT_SLOT();))
#define CB_LOOP_ROOTED(name, calls) CB_TIMED(name, CB_REPEAT(calls, NEXT_ROOT(); NEXT_SLOT();))
#define CB_LOOP_BARE(name, calls)   CB_TIMED(name, CB_REPEAT(calls, ))
#define CB_LOOP_PAIR(name, calls0, calls1) \
    CB_TIMED(name, if (a->rank == 0) { CB_REPEAT(calls0, NEXT_SLOT();) } \
                   else { CB_REPEAT(calls1, NEXT_SLOT();) })
#define CB_LOOP_SAME(name, other)   CB_KERNEL(name) { return cb_##other(a, n); }
#define CB_LOOP_OWN(name, ...)
#include "loops.h"  /* the one-sided and nonblocking loops */

#define CB_DECLARE(name, args, ...) CB_KERNEL(name);
#define CB_DEFINE(name, args, loop, ...) CB_LOOP_##loop(name, __VA_ARGS__)

CB_PATTERNS(CB_DECLARE)
CB_PATTERNS(CB_DEFINE)

/* ================================================================ the windowed loops
 *
 * Uniband (both = 0): the rank with the lower number Isends a->window messages to
 * its peer, Waitall, and receives a 1-byte ack; the peer Irecvs them, Waitall, and
 * sends the ack. Biband (both = 1): both Irecv the window, then Isend it, Waitall,
 * then the same ack. Message k of a window uses off-cache slot k % slots. A rank
 * without a peer (peer < 0: the last of an odd NP) returns -1, no time. */
#include <stdlib.h>

static double cb_windowed(const cb_args *a, long long n, int both)
{
    MPI_Comm comm = *(const MPI_Comm *)a->comm;
    int w = a->window, peer = a->peer, c = a->count, sender = a->rank < a->peer;
    MPI_Datatype dt = cb_datatype(a->dtype);
    char ack = 0;
    if (peer < 0) return -1.0;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)w);
    char **sp = malloc(sizeof(char *) * (size_t)w), **rp = malloc(sizeof(char *) * (size_t)w);
    if (!reqs || !sp || !rp) MPI_Abort(comm, 3);  /* a few kB: never silently drop a rank */
    for (int k = 0; k < w; k++) {
        sp[k] = a->sbuf + (long long)(k % a->slots) * a->sstride;
        rp[k] = a->rbuf + (long long)(k % a->slots) * a->rstride;
    }
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        int m = 0;
        if (both || !sender)
            for (int k = 0; k < w; k++) MPI_Irecv(rp[k], c, dt, peer, 1, comm, &reqs[m++]);
        if (both || sender)
            for (int k = 0; k < w; k++) MPI_Isend(sp[k], c, dt, peer, 1, comm, &reqs[m++]);
        MPI_Waitall(m, reqs, MPI_STATUSES_IGNORE);
        if (sender) MPI_Recv(&ack, 1, MPI_CHAR, peer, 1, comm, MPI_STATUS_IGNORE);
        else MPI_Send(&ack, 1, MPI_CHAR, peer, 1, comm);
    }
    double t = (MPI_Wtime() - t0) / (double)n;
    free(reqs); free(sp); free(rp);
    return t;
}

CB_KERNEL(uniband) { return cb_windowed(a, n, 0); }
CB_KERNEL(biband) { return cb_windowed(a, n, 1); }
