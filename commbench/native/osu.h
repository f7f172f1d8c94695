/* The one argument block of every OSU timed loop (commbench/native/osu_<group>.c),
 * mirrored field for field by commbench.native.osu.LoopArgs, and the two functions
 * each OSU library exports for commbench.native.extension (ABI number, probe).
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

#define CBOSU_ABI_VERSION 2

typedef struct {
    int n;          /* iterations */
    int count;      /* elements of `dtype` per message */
    int window;     /* messages per window (-W) */
    int peer;       /* the partner rank (point-to-point) */
    int timer;      /* 1 on a rank that times the iterations */
    int root;       /* group-specific: a root, a flag */
    void *comm;     /* the address of an MPI_Comm handle (mpi4py's) */
    void *dtype;    /* the address of an MPI_Datatype handle */
    void *sbuf, *rbuf, *abuf; /* send, receive and auxiliary (ack) buffers */
    double *times;  /* out: n per-iteration seconds, or NULL (warm-up) */
    long long aux[4]; /* group-specific integers */
} cbosu_args;

#define CBOSU_EXPORTS(prefix)                                                            \
    int prefix##abi_version(void) { return CBOSU_ABI_VERSION; }                          \
    int prefix##sequence(cbosu_loop loop, cbosu_args *a, int barrier, int warm)          \
    {                                                                                    \
        return cbosu_sequence(loop, a, barrier, warm);                                   \
    }                                                                                    \
    long long prefix##rounds(cbosu_loop loop, cbosu_args *a, const cbosu_rounds *k)      \
    {                                                                                    \
        return cbosu_run_rounds(loop, a, k);                                             \
    }                                                                                    \
    int prefix##probe(const void *comm, int *initialized, int *provided, int *rank,      \
                      int *size)                                                         \
    {                                                                                    \
        MPI_Initialized(initialized);                                                    \
        if (!*initialized) return 0;                                                     \
        MPI_Query_thread(provided);                                                      \
        MPI_Comm_rank(*(const MPI_Comm *)comm, rank);                                    \
        MPI_Comm_size(*(const MPI_Comm *)comm, size);                                    \
        return 0;                                                                        \
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
typedef struct {
    long long first, total, warm; /* rounds first .. total-1; those below warm are untimed */
    long long slen, rlen;         /* the bytes restored (and compared) of each buffer */
    const void *spre, *rpre, *rpost;
    double *out;                  /* out[r - warm]: the timed repetition of round r */
    const double *keep_src;       /* and keep_n doubles the loop left there (the nonblocking */
    double *keep_dst;             /* collectives' Compute, Coll. Init, MPI_Test, MPI_Wait) */
    int reps, barrier, always, keep_n; /* repetitions; the barrier here (else the loop's own);
                                        * times even in untimed rounds (the loop's mode) */
    int verdict; /* a tag: after each round the receiver sends the sender (timer) a 4-byte verdict
                  * with it, untimed, as osu_latency (tag 2), osu_bw (102) and their persistent forms
                  * do; 0: none */
} cbosu_rounds;

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
