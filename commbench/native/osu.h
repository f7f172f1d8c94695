/* The C/Python boundary of every OSU timed loop (commbench/native/osu_<group>.c), declared
 * once: the argument block, -c's rounds and the groups' control blocks, one row a field
 * (abi.h), from which commbench.native.osu builds their ctypes mirrors; and the functions
 * each OSU library exports for commbench.native.extension (ABI number, sizes, probe).
 *
 * A loop runs `n` iterations of one OSU benchmark at one size on this rank. On the
 * rank(s) with `timer` set and `times` not NULL it stores each iteration's seconds
 * (MPI_Wtime before and after it) in times[0..n-1], as OSU 7.4 does; `times` NULL
 * is the warm-up (OSU's skipped iterations: the same calls, untimed). Buffers,
 * partners and counts are worked out by Python (commbench/suites/osu/). Python calls
 * a loop through <prefix>sequence (cbosu_sequence below): the barrier, warm-up and
 * timed iterations that OSU runs back to back, in one call. */
#ifndef COMMBENCH_OSU_H
#define COMMBENCH_OSU_H
#include <mpi.h>
#include <string.h>
#include "abi.h"

#define CBOSU_ABI_VERSION 3

/* The one argument block of every loop. */
#define CBOSU_ARGS_FIELDS(X) \
    X(int,      n,         "iterations") \
    X(int,      count,     "elements of `dtype` per message") \
    X(int,      window,    "messages per window (-W)") \
    X(int,      peer,      "the partner rank (point-to-point)") \
    X(int,      timer,     "1 on a rank that times the iterations") \
    X(int,      root,      "group-specific: a root, a flag") \
    X(int,      senders,   "latency_mt: rank 0's sender threads") \
    X(int,      receivers, "latency_mt: rank 1's receiver threads") \
    X(int,      warmup,    "the overlap loops (osu_overlap.h): the overlap rounds' warm-up") \
    X(int,      tests,     "the overlap loops: MPI_Test calls (-t)") \
    X(int,      between,   "the overlap loops: 1 for an MPI_Barrier after each pure-communication round") \
    X(int,      phases,    "the overlap loops' timed phases: 0 both; -c's checked rounds 1 pure, 2 overlap") \
    X(void *,   comm,      "the address of an MPI_Comm handle (mpi4py's)") \
    X(void *,   dtype,     "the address of an MPI_Datatype handle") \
    X(void *,   sbuf,      "send buffer") \
    X(void *,   rbuf,      "receive buffer") \
    X(void *,   abuf,      "auxiliary (ack) buffer, or the group's control block (below)") \
    X(double *, times,     "out: n per-iteration seconds, or NULL (warm-up)")

typedef struct { CBOSU_ARGS_FIELDS(CB_FIELD) } cbosu_args;

/* -c's rounds, run in C (cbosu_run_rounds below). */
#define CBOSU_ROUNDS_FIELDS(X) \
    X(long long,      first,    "rounds first .. total-1; those below warm are untimed") \
    X(long long,      total,    "the end of the rounds") \
    X(long long,      warm,     "the first timed round") \
    X(long long,      slen,     "the bytes restored (and compared) of the send buffer") \
    X(long long,      rlen,     "the bytes restored (and compared) of the receive buffer") \
    X(const void *,   spre,     "the send buffer as Python filled it") \
    X(const void *,   rpre,     "the receive buffer as Python filled it") \
    X(const void *,   rpost,    "the received data of a round Python checked, or NULL") \
    X(double *,       out,      "out[r - warm]: the timed repetition of round r") \
    X(const double *, keep_src, "and keep_n doubles the loop left there (the nonblocking") \
    X(double *,       keep_dst, "  collectives' Compute, Coll. Init, MPI_Test, MPI_Wait)") \
    X(int,            reps,     "repetitions a round") \
    X(int,            barrier,  "1: the barrier here (else the loop's own)") \
    X(int,            always,   "1: times even in untimed rounds (the loop's mode)") \
    X(int,            keep_n,   "doubles kept after each timed round") \
    X(int,            verdict,  "a tag: after each round the receiver sends the sender (timer) a 4-byte " \
                                "verdict with it, untimed, as osu_latency (tag 2), osu_bw (102) and " \
                                "their persistent forms do; 0: none")

typedef struct { CBOSU_ROUNDS_FIELDS(CB_FIELD) } cbosu_rounds;

/* The control blocks: what a group's loops read from `abuf`, written by Python
 * (commbench/suites/osu/). osu_coll.c's (collectives_loops.control): */
#define CBOSU_COLL_CTL_FIELDS(X) \
    X(long long,   rs_count, "this rank's receive count of reduce_scatter") \
    X(const int *, v,        "3 x P int32: counts, displacements in elements, displacements in bytes") \
    X(void *,      req,      "the address of the persistent MPI_Request (or NULL)")

typedef struct { CBOSU_COLL_CTL_FIELDS(CB_FIELD) } cbosu_coll_ctl;

/* The overlap loops' (osu_overlap.h, for osu_nonblocking.c and osu_neighbor.c;
 * collective_calls.control): */
#define CBOSU_OVERLAP_CTL_FIELDS(X) \
    X(long long,    rs_count, "this rank's receive count of reduce_scatter") \
    X(const int *,  v,        "six int32 arrays: the send counts, displacements and byte displacements " \
                              "(`kout` each), then the receive ones (`kin` each)") \
    X(const void *, comm,     "the address of the communicator the call runs on (the graph of a " \
                              "neighborhood; else the run's)") \
    X(long long,    kout,     "the destinations") \
    X(long long,    kin,      "the sources") \
    X(double *,     out,      "five doubles written by the timed loop: Pure Comm., Compute, Coll. Init, " \
                              "MPI_Test, MPI_Wait (s)")

typedef struct { CBOSU_OVERLAP_CTL_FIELDS(CB_FIELD) } cbosu_overlap_ctl;

/* osu_rma.c's (onesided_loops.control_block; its S_* and O_* are sync and op): */
#define CBOSU_RMA_CTL_FIELDS(X) \
    X(const void *, win,       "the address of the MPI_Win handle (mpi4py's)") \
    X(long long,    sync,      "S_*") \
    X(long long,    op,        "O_*") \
    X(long long,    disp,      "the target displacement of the first message (dynamic: the peer's address)") \
    X(void *,       origin,    "the origin buffer") \
    X(void *,       result,    "where Get, Get_accumulate, Fetch_and_op and Compare_and_swap return data") \
    X(void *,       compare,   "Compare_and_swap's compare buffer") \
    X(const void *, group,     "the address of the MPI_Group handle of the peer (pscw)") \
    X(long long,    exclusive, "1: MPI_Win_lock takes an exclusive lock (-s lock and flush modes)") \
    X(long long,    stride,    "bytes between the messages of a window (bw, bibw)") \
    X(double,       total,     "out: seconds of the timed loop")

typedef struct { CBOSU_RMA_CTL_FIELDS(CB_FIELD) } cbosu_rma_ctl;

/* The structs above, whose sizes every OSU library exports (<prefix>sizeof). */
#define CBOSU_STRUCTS(S) S(cbosu_args) S(cbosu_rounds) S(cbosu_coll_ctl) S(cbosu_overlap_ctl) S(cbosu_rma_ctl)

#define CBOSU_EXPORTS(prefix)                                                            \
    CB_EXPORTS(prefix, CBOSU_ABI_VERSION, CBOSU_STRUCTS)                                 \
    int prefix##sequence(cbosu_loop loop, cbosu_args *a, int barrier, int warm)          \
    {                                                                                    \
        return cbosu_sequence(loop, a, barrier, warm);                                   \
    }                                                                                    \
    long long prefix##rounds(cbosu_loop loop, cbosu_args *a, const cbosu_rounds *k)      \
    {                                                                                    \
        return cbosu_run_rounds(loop, a, k);                                             \
    }

#define CBOSU_COMM(a) (*(MPI_Comm *)(a)->comm)
#define CBOSU_TYPE(a) (*(MPI_Datatype *)(a)->dtype)
#define CBOSU_TIMED(a) ((a)->timer && (a)->times)

typedef int (*cbosu_loop)(cbosu_args *);

/* What OSU runs with no pause between (osu_latency: MPI_Barrier, then the warm-up and the
 * timed iterations in one loop; under -c each round's barrier, -u repetitions and the timed
 * one): an MPI_Barrier of the loop's communicator when `barrier`, then `warm` untimed
 * iterations when warm >= 0 (times NULL; 0 still calls the loop, as Python did), then the
 * a->n iterations of `loop`, all in one call from Python, so no rank is still in the
 * interpreter when its partner's first timed message arrives. */
static inline int cbosu_sequence(cbosu_loop loop, cbosu_args *a, int barrier, int warm)
{
    if (barrier) MPI_Barrier(CBOSU_COMM(a));
    if (warm >= 0) {
        cbosu_args w = *a;
        w.n = warm;
        w.times = NULL;
        int rc = loop(&w);
        if (rc) return rc;
    }
    return loop(a);
}

/* -c's rounds (OSU's validation, driver.validated_rounds): round r restores the send and receive
 * buffers to their filled contents (spre, rpre: what Python's fill wrote), runs an MPI_Barrier
 * and `reps` repetitions (-u + 1) of the loop in one call, and keeps the last one's seconds in
 * out[r - warm] on a timing rank once r >= warm. All in C, as OSU's rounds are: Python work
 * between rounds lengthened each round, and under load a timed repetition right after the
 * barrier (-u 0) then took the partner's descheduling far more often than osu_latency's.
 * After each round the receive buffer is compared with rpost, a round's data Python checked:
 * the rounds run until one differs (or rpost is NULL: none checked yet), and its index comes
 * back for Python to check; `total` when every round matched. -1: a loop failed. */
#define CBOSU_MAX_REPS 16 /* -u is at most 10 */

static inline long long cbosu_run_rounds(cbosu_loop loop, cbosu_args *a, const cbosu_rounds *k)
{
    double each[CBOSU_MAX_REPS];
    if (k->reps < 1 || k->reps > CBOSU_MAX_REPS) return -1;
    for (long long r = k->first; r < k->total; r++) {
        cbosu_args w = *a;
        memcpy(a->sbuf, k->spre, (size_t)k->slen);
        memcpy(a->rbuf, k->rpre, (size_t)k->rlen);
        w.n = k->reps;
        w.times = r >= k->warm || k->always ? each : NULL;
        if (cbosu_sequence(loop, &w, k->barrier, -1)) return -1;
        if (r >= k->warm && a->timer) {
            k->out[r - k->warm] = each[k->reps - 1];
            for (int j = 0; j < k->keep_n; j++) k->keep_dst[(r - k->warm) * k->keep_n + j] = k->keep_src[j];
        }
        int differs = !k->rpost || memcmp(a->rbuf, k->rpost, (size_t)k->rlen);
        if (k->verdict) {
            int v = differs;
            if (a->timer) MPI_Recv(&v, 1, MPI_INT, a->peer, k->verdict, CBOSU_COMM(a), MPI_STATUS_IGNORE);
            else MPI_Send(&v, 1, MPI_INT, a->peer, k->verdict, CBOSU_COMM(a));
        }
        if (differs) return r;
    }
    return k->total;
}

#define CBOSU_TAG_DATA 100 /* OSU's bandwidth tags: the window's messages, and the ack */
#define CBOSU_TAG_ACK 101

/* One window of osu_bw (and of each osu_mbw_mr pair): the sender (timer) posts -W
 * MPI_Isend of one buffer, MPI_Waitall, then receives the 1-byte ack; its partner
 * posts -W MPI_Irecv, MPI_Waitall, and sends the ack. req holds -W requests. */
static inline void cbosu_bw_window(cbosu_args *a, MPI_Request *req)
{
    MPI_Comm comm = CBOSU_COMM(a);
    MPI_Datatype t = CBOSU_TYPE(a);
    int w = a->window, c = a->count, p = a->peer;
    if (a->timer) {
        for (int j = 0; j < w; j++) MPI_Isend(a->sbuf, c, t, p, CBOSU_TAG_DATA, comm, &req[j]);
        MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
        MPI_Recv(a->abuf, 1, MPI_CHAR, p, CBOSU_TAG_ACK, comm, MPI_STATUS_IGNORE);
    } else {
        for (int j = 0; j < w; j++) MPI_Irecv(a->rbuf, c, t, p, CBOSU_TAG_DATA, comm, &req[j]);
        MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
        MPI_Send(a->abuf, 1, MPI_CHAR, p, CBOSU_TAG_ACK, comm);
    }
}

#endif
