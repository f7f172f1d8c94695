/* The one argument block of every OSU timed loop (commbench/native/osu_<group>.c),
 * mirrored field for field by commbench.native.osu.LoopArgs, and the two functions
 * each OSU library exports for commbench.native.extension (ABI number, probe).
 *
 * A loop runs `n` iterations of one OSU benchmark at one size on this rank. On the
 * rank(s) with `timer` set and `times` not NULL it stores each iteration's seconds
 * (MPI_Wtime before and after it) in times[0..n-1], as OSU 7.4 does; `times` NULL
 * is the warm-up (OSU's skipped iterations: the same calls, untimed). Buffers,
 * partners and counts are worked out by Python (commbench/suites/osu/). */
#ifndef COMMBENCH_OSU_H
#define COMMBENCH_OSU_H
#include <mpi.h>

#define CBOSU_ABI_VERSION 1

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
