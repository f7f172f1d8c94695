/* commbench's native engine: the timed loops of the point-to-point and
 * collective kernels in C, so that nothing but MPI runs between the two
 * timestamps.
 *
 * Every kernel has the signature  double cb_<pattern>(const cb_args *a, long long n)
 * and mirrors one mpi4py kernel of commbench/suites (same calls, same arguments,
 * same order, same off-cache slot cycling, same root rotation i % NP); it returns
 * the seconds per repetition of its timed region. The Python side
 * (commbench/native/__init__.py) fills cb_args from the harness's Context: the
 * communicator as the address of an MPI_Comm (mpi4py's MPI._addressof), the
 * buffers as numpy addresses. Compiled with the mpicc of the MPI that mpi4py
 * loaded, so MPI_Comm and the constants have that library's ABI.
 */
#include <mpi.h>
#include <stddef.h>

#define CB_ABI_VERSION 1

typedef struct {
    const void *comm;         /* address of an MPI_Comm */
    char *sbuf;               /* send buffer, slot 0 */
    char *rbuf;               /* receive buffer, slot 0 */
    long long sstride;        /* bytes between send slots */
    long long rstride;        /* bytes between receive slots */
    long long soff2;          /* byte offset of the second send block (Exchange) */
    int slots;                /* off-cache slots cycled through (1: one buffer) */
    int count;                /* elements per message (bytes, or floats for reductions) */
    int peer;                 /* partner rank of the two-process patterns */
    int source;               /* receive source; -1 for MPI_ANY_SOURCE */
    int rank;
    int size;
    const int *counts;        /* per-rank counts (Reduce_scatter, v-variants) */
    const int *displs;        /* per-rank displacements (v-variants) */
} cb_args;

#define COMM (*(const MPI_Comm *)a->comm)
#define SRC (a->source < 0 ? MPI_ANY_SOURCE : a->source)

/* The slot cursor: k cycles 0..slots-1 as mpi4py's itertools.cycle does. */
#define NEXT_SLOT() do { if (++k == a->slots) { k = 0; s = a->sbuf; r = a->rbuf; } \
                         else { s += a->sstride; r += a->rstride; } } while (0)

int cb_abi_version(void) { return CB_ABI_VERSION; }

/* What this library's MPI sees: proves it is the MPI that mpi4py initialised. */
int cb_probe(const void *comm, int *initialized, int *rank, int *size, char *version, int *vlen)
{
    MPI_Initialized(initialized);
    if (!*initialized) return 0;
    MPI_Comm_rank(*(const MPI_Comm *)comm, rank);
    MPI_Comm_size(*(const MPI_Comm *)comm, size);
    MPI_Get_library_version(version, vlen);
    return 0;
}

double cb_wtime(void) { return MPI_Wtime(); }

/* ---------------------------------------------------------------- point to point */

double cb_pingpong(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int src = SRC, c = a->count, k = 0;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    if (a->rank == 0) {
        for (long long i = 0; i < n; i++) {
            MPI_Send(s, c, MPI_BYTE, 1, 1, comm);
            MPI_Recv(r, c, MPI_BYTE, src, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE);
            NEXT_SLOT();
        }
    } else {
        for (long long i = 0; i < n; i++) {
            MPI_Recv(r, c, MPI_BYTE, src, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE);
            MPI_Send(s, c, MPI_BYTE, 0, 1, comm);
            NEXT_SLOT();
        }
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_pingping(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int src = SRC, c = a->count, peer = a->peer, k = 0;
    char *s = a->sbuf, *r = a->rbuf;
    MPI_Request req;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Isend(s, c, MPI_BYTE, peer, 1, comm, &req);
        MPI_Recv(r, c, MPI_BYTE, src, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

/* COMMS1 (suites/comms.py): rank 0 Send/Recv from rank 1; rank 1 returns the
 * message it received, from its receive buffer. Explicit source, tag 1. */
double cb_comms1(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, k = 0;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    if (a->rank == 0) {
        for (long long i = 0; i < n; i++) {
            MPI_Send(s, c, MPI_BYTE, 1, 1, comm);
            MPI_Recv(r, c, MPI_BYTE, 1, 1, comm, MPI_STATUS_IGNORE);
            NEXT_SLOT();
        }
    } else {
        for (long long i = 0; i < n; i++) {
            MPI_Recv(r, c, MPI_BYTE, 0, 1, comm, MPI_STATUS_IGNORE);
            MPI_Send(r, c, MPI_BYTE, 0, 1, comm);
            NEXT_SLOT();
        }
    }
    return (MPI_Wtime() - t0) / (double)n;
}

/* COMMS2: both exchange (Isend, Recv, Wait, tag 1), then both return what they
 * received (Isend of the receive buffer, Recv into the send buffer, tag 2). */
double cb_comms2(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, peer = a->peer, k = 0;
    char *s = a->sbuf, *r = a->rbuf;
    MPI_Request req;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Isend(s, c, MPI_BYTE, peer, 1, comm, &req);
        MPI_Recv(r, c, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Isend(r, c, MPI_BYTE, peer, 2, comm, &req);
        MPI_Recv(s, c, MPI_BYTE, peer, 2, comm, MPI_STATUS_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_sendrecv(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, k = 0;
    int right = (a->rank + 1) % a->size, left = (a->rank - 1 + a->size) % a->size;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Sendrecv(s, c, MPI_BYTE, right, 1, r, c, MPI_BYTE, left, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE);
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_exchange(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, k = 0;
    int right = (a->rank + 1) % a->size, left = (a->rank - 1 + a->size) % a->size;
    char *s = a->sbuf, *r = a->rbuf;
    long long off2 = a->soff2;
    MPI_Request reqs[2];
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Isend(s, c, MPI_BYTE, right, 1, comm, &reqs[0]);
        MPI_Isend(s + off2, c, MPI_BYTE, left, 1, comm, &reqs[1]);
        MPI_Recv(r, c, MPI_BYTE, left, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE);
        MPI_Recv(r, c, MPI_BYTE, right, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

/* ---------------------------------------------------------------- collectives */

double cb_allreduce(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, k = 0;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Allreduce(s, r, c, MPI_FLOAT, MPI_SUM, comm);
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_reduce(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, k = 0, root = 0, np = a->size;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Reduce(s, r, c, MPI_FLOAT, MPI_SUM, root, comm);
        if (++root == np) root = 0;
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_reduce_scatter(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int k = 0;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Reduce_scatter(s, r, a->counts, MPI_FLOAT, MPI_SUM, comm);
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_allgather(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, k = 0;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Allgather(s, c, MPI_BYTE, r, c, MPI_BYTE, comm);
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_allgatherv(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, k = 0;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Allgatherv(s, c, MPI_BYTE, r, a->counts, a->displs, MPI_BYTE, comm);
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_gather(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, k = 0, root = 0, np = a->size;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Gather(s, c, MPI_BYTE, r, c, MPI_BYTE, root, comm);
        if (++root == np) root = 0;
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_gatherv(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, k = 0, root = 0, np = a->size;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Gatherv(s, c, MPI_BYTE, r, a->counts, a->displs, MPI_BYTE, root, comm);
        if (++root == np) root = 0;
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_scatter(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, k = 0, root = 0, np = a->size;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Scatter(s, c, MPI_BYTE, r, c, MPI_BYTE, root, comm);
        if (++root == np) root = 0;
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_scatterv(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, k = 0, root = 0, np = a->size;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Scatterv(s, a->counts, a->displs, MPI_BYTE, r, c, MPI_BYTE, root, comm);
        if (++root == np) root = 0;
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_alltoall(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, k = 0;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Alltoall(s, c, MPI_BYTE, r, c, MPI_BYTE, comm);
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_alltoallv(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int k = 0;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Alltoallv(s, a->counts, a->displs, MPI_BYTE, r, a->counts, a->displs, MPI_BYTE, comm);
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_bcast(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    int c = a->count, k = 0, root = 0, np = a->size, me = a->rank;
    char *s = a->sbuf, *r = a->rbuf;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Bcast(root == me ? s : r, c, MPI_BYTE, root, comm);
        if (++root == np) root = 0;
        NEXT_SLOT();
    }
    return (MPI_Wtime() - t0) / (double)n;
}

double cb_barrier(const cb_args *a, long long n)
{
    MPI_Comm comm = COMM;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) MPI_Barrier(comm);
    return (MPI_Wtime() - t0) / (double)n;
}
