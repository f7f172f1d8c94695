/* commbench's native engine for the gpcnet family: network_test's timed iterations in C,
 * so that a small-message latency is MPI's and not the Python interpreter's (the mpi4py
 * loops cost several microseconds an iteration: RR Two-sided Lat read 1.3 x GPCNeT 1.3's).
 *
 * One call, cbg_loop, runs `warm` untimed and `iters` timed iterations of one test's
 * operation on this rank, as GPCNeT 1.3's random_ring.c and collectives.c do: each timed
 * iteration between two CLOCK_MONOTONIC readings (samples[i], seconds), the timed ones
 * together between two MPI_Wtime calls (span). The barriers around a ring, the window's
 * locks and which neighbours a ring has stay in Python
 * (commbench/suites/gpcnet/kernels.py), so both engines make the same calls.
 *
 * Per iteration:
 *   P2P    `flight` times MPI_Irecv of `count` doubles from left (tag 81) and from right
 *          (82), then `flight` times MPI_Isend to left (82) and right (81), MPI_Waitall;
 *          with `sync` then MPI_Barrier(comm) (RR Two-sided BW+Sync)
 *   GET    MPI_Get of 1 double from left (displacement 2) and from right (3), then
 *          MPI_Win_flush of left and of right (RR Get Lat)
 *   PUT    `flight` times MPI_Put of `count` doubles to left and to right (displacements
 *          2 count and 3 count), then the two flushes (RR Put BW)
 *   ALLREDUCE  MPI_Allreduce of 1 double, MPI_SUM (Multiple Allreduce)
 *   ALLTOALL   MPI_Alltoall of `count` doubles to every rank (Multiple Alltoall)
 * Built by commbench.native.gpcnet with the mpicc of mpi4py's MPI. */
#include <mpi.h>
#include <time.h>
#include "abi.h"

#define CBG_ABI_VERSION 1
#define CBG_MAX_FLIGHT 64

/* The operations, by commbench.suites.gpcnet's test kinds (abi.codes reads this table). */
#define CBG_KINDS(C) \
    C(CBG_P2P, "p2p_lat p2p_bw nat_bw p2p_sync") \
    C(CBG_GET, "get_lat") \
    C(CBG_PUT, "put_bw") \
    C(CBG_ALLREDUCE, "allreduce") \
    C(CBG_ALLTOALL, "alltoall")
enum { CBG_KINDS(CB_CODE) };

/* The argument block, one row a field (abi.h), mirrored by commbench.native.gpcnet. */
#define CBG_ARGS_FIELDS(X) \
    X(int,      kind,    "the operation (the enum above)") \
    X(int,      warm,    "untimed iterations first") \
    X(int,      iters,   "timed iterations") \
    X(int,      count,   "doubles a message (P2P, PUT), to each rank (ALLTOALL)") \
    X(int,      flight,  "messages to each neighbour an iteration (P2P, PUT)") \
    X(int,      sync,    "P2P: 1 for a barrier of comm in each iteration") \
    X(int,      left,    "the ring's left neighbour (rank in comm)") \
    X(int,      right,   "the ring's right neighbour") \
    X(int,      stride,  "doubles between the left and the right halves of a buffer") \
    X(void *,   comm,    "the address of an MPI_Comm handle (mpi4py's): the slice") \
    X(void *,   win,     "the address of an MPI_Win handle (GET, PUT)") \
    X(double *, send,    "the send buffer (ALLTOALL: count x size doubles)") \
    X(double *, recv,    "the receive buffer") \
    X(double *, origin,  "GET, PUT: the window's own memory, the origin buffers") \
    X(double *, samples, "out: seconds of each timed iteration, iters of them") \
    X(double,   span,    "out: MPI_Wtime seconds of the timed iterations together")

typedef struct { CBG_ARGS_FIELDS(CB_FIELD) } cbg_args;

#define CBG_STRUCTS(S) S(cbg_args)
CB_EXPORTS(cbg_, CBG_ABI_VERSION, CBG_STRUCTS)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One iteration of a's operation; 0, or -1 for a kind or flight it does not run. */
static int once(const cbg_args *a, MPI_Comm comm, MPI_Request *rq)
{
    const int c = a->count, f = a->flight, st = a->stride;
    switch (a->kind) {
    case CBG_P2P:
        for (int j = 0; j < f; j++) {
            MPI_Irecv(a->recv, c, MPI_DOUBLE, a->left, 81, comm, &rq[j]);
            MPI_Irecv(a->recv + st, c, MPI_DOUBLE, a->right, 82, comm, &rq[f + j]);
        }
        for (int j = 0; j < f; j++) {
            MPI_Isend(a->send, c, MPI_DOUBLE, a->left, 82, comm, &rq[2 * f + j]);
            MPI_Isend(a->send + st, c, MPI_DOUBLE, a->right, 81, comm, &rq[3 * f + j]);
        }
        MPI_Waitall(4 * f, rq, MPI_STATUSES_IGNORE);
        if (a->sync) MPI_Barrier(comm);
        return 0;
    case CBG_GET: {
        MPI_Win w = *(const MPI_Win *)a->win;
        MPI_Get(a->origin, 1, MPI_DOUBLE, a->left, 2, 1, MPI_DOUBLE, w);
        MPI_Get(a->origin + 1, 1, MPI_DOUBLE, a->right, 3, 1, MPI_DOUBLE, w);
        MPI_Win_flush(a->left, w);
        MPI_Win_flush(a->right, w);
        return 0;
    }
    case CBG_PUT: {
        MPI_Win w = *(const MPI_Win *)a->win;
        for (int j = 0; j < f; j++) {
            MPI_Put(a->origin, c, MPI_DOUBLE, a->left, 2 * (MPI_Aint)c, c, MPI_DOUBLE, w);
            MPI_Put(a->origin + st, c, MPI_DOUBLE, a->right, 3 * (MPI_Aint)c, c, MPI_DOUBLE, w);
        }
        MPI_Win_flush(a->left, w);
        MPI_Win_flush(a->right, w);
        return 0;
    }
    case CBG_ALLREDUCE:
        MPI_Allreduce(a->send, a->recv, 1, MPI_DOUBLE, MPI_SUM, comm);
        return 0;
    case CBG_ALLTOALL:
        MPI_Alltoall(a->send, c, MPI_DOUBLE, a->recv, c, MPI_DOUBLE, comm);
        return 0;
    }
    return -1;
}

int cbg_loop(cbg_args *a)
{
    MPI_Comm comm = *(const MPI_Comm *)a->comm;
    MPI_Request rq[4 * CBG_MAX_FLIGHT];
    if (a->flight < 0 || a->flight > CBG_MAX_FLIGHT) return -1;
    for (int i = 0; i < a->warm; i++)
        if (once(a, comm, rq)) return -1;
    double t0 = MPI_Wtime();
    for (int i = 0; i < a->iters; i++) {
        double c0 = now();
        if (once(a, comm, rq)) return -1;
        a->samples[i] = now() - c0;
    }
    a->span = MPI_Wtime() - t0;
    return 0;
}
