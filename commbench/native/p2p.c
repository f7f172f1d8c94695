/* commbench's native engine for the p2p family (IMB-P2P): the timed loop of one
 * pattern at one size, in C, so that the time per message is MPI's and not the
 * Python interpreter's (the mpi4py loops cost 1-2 us a call at small sizes).
 *
 * One call, cbp2p_loop, runs `reps` steps of one pattern on this rank and reports
 * the seconds between two MPI_Wtime calls around the loop and the messages this
 * rank sent plus received (IMB-P2P's count). Who talks to whom is worked out by
 * Python before the call (commbench/suites/p2p/spec.py: the grids; patterns.py:
 * IMB-P2P's random generator) and passed in as arrays, so both engines make the
 * same calls with the same partners. The buffers are Python's (allocated once per
 * benchmark, of the largest size). Warm-up is the same call with fewer steps.
 *
 * The touches follow IMB-P2P 2021.11's documented behaviour: with msgwr one byte
 * of every 64-byte line of a send buffer is written (a running counter) before
 * its send, with msgrd one byte of every line of a receive buffer is read after
 * its receive. Built by commbench.native.p2p with the mpicc of mpi4py's MPI.
 */
#include <mpi.h>
#include <stddef.h>
#include "abi.h"

#define CBP2P_ABI_VERSION 2
#define LINE 64
#define TAG 0
#define MAXLINKS 6

/* The patterns, by IMB-P2P's names (commbench.native.p2p reads this table: abi.codes). */
#define CBP2P_PATTERNS(C) \
    C(PINGPONG, "PingPong") \
    C(PINGPING, "PingPing") \
    C(UNIRANDOM, "Unirandom") \
    C(BIRANDOM, "Birandom") \
    C(CORANDOM, "Corandom") \
    C(STENCIL, "Stencil2D Stencil3D") \
    C(SENDRECV_REPLACE, "SendRecv_Replace")
enum { CBP2P_PATTERNS(CB_CODE) };

/* The argument block, one row a field (abi.h), which commbench.native.p2p reads for
 * its ctypes mirror, LoopArgs. */
#define CBP2P_ARGS_FIELDS(X) \
    X(int,         pattern, "the pattern (the enum above)") \
    X(int,         reps,    "steps of the loop") \
    X(int,         size,    "bytes a message") \
    X(int,         msgwr,   "1: write one byte of each line of a send buffer before its send") \
    X(int,         msgrd,   "1: read one byte of each line of a receive buffer after its receive") \
    X(int,         links,   "buffers of sends and recvs") \
    X(int,         first,   "PingPong: 1 on the rank that sends first") \
    X(void *,      comm,    "the address of an MPI_Comm handle (mpi4py's)") \
    X(void **,     sends,   "`links` send buffers (one for the other patterns)") \
    X(void **,     recvs,   "`links` receive buffers") \
    X(const int *, peers,   "PingPong/PingPing: [partner]; SendRecv_Replace: [to, from]; " \
                            "Unirandom/Birandom: per step, the other rank; Corandom: per " \
                            "step, the rank sent to; Stencil: the `links` neighbours") \
    X(const int *, firsts,  "Unirandom: per step, 1 where this rank sends; Corandom: per " \
                            "step, the rank received from") \
    X(double,      seconds, "out: the timed loop") \
    X(long long,   msgs,    "out: messages sent plus received by this rank")

typedef struct { CBP2P_ARGS_FIELDS(CB_FIELD) } cbp2p_args;

static unsigned char counter;
static volatile unsigned char sink;

#define CBP2P_STRUCTS(S) S(cbp2p_args)
CB_EXPORTS(cbp2p_, CBP2P_ABI_VERSION, CBP2P_STRUCTS)

static inline void wr(void *buf, int size, int on)
{
    unsigned char *b = buf;
    if (!on) return;
    for (int i = 0; i < size; i += LINE) b[i] = counter++;
}

static inline void rd(const void *buf, int size, int on)
{
    const volatile unsigned char *b = buf;
    unsigned char s = 0;
    if (!on) return;
    for (int i = 0; i < size; i += LINE) s += b[i];
    sink += s;
}

static long long pingpong(const cbp2p_args *a, MPI_Comm comm)
{
    void *s = a->sends[0], *r = a->recvs[0];
    int n = a->size, p = a->peers[0];
    for (int i = 0; i < a->reps; i++) {
        if (a->first) {
            wr(s, n, a->msgwr);
            MPI_Send(s, n, MPI_BYTE, p, TAG, comm);
            MPI_Recv(r, n, MPI_BYTE, p, TAG, comm, MPI_STATUS_IGNORE);
            rd(r, n, a->msgrd);
        } else {
            MPI_Recv(r, n, MPI_BYTE, p, TAG, comm, MPI_STATUS_IGNORE);
            rd(r, n, a->msgrd);
            wr(s, n, a->msgwr);
            MPI_Send(s, n, MPI_BYTE, p, TAG, comm);
        }
    }
    return 2LL * a->reps;
}

/* PingPing, Birandom and Corandom: receive from one rank and send to one at once. */
static long long exchange(const cbp2p_args *a, MPI_Comm comm, const int *from, const int *to, int step)
{
    void *s = a->sends[0], *r = a->recvs[0];
    int n = a->size;
    MPI_Request req;
    for (int i = 0; i < a->reps; i++) {
        MPI_Irecv(r, n, MPI_BYTE, from[i * step], TAG, comm, &req);
        wr(s, n, a->msgwr);
        MPI_Send(s, n, MPI_BYTE, to[i * step], TAG, comm);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        rd(r, n, a->msgrd);
    }
    return 2LL * a->reps;
}

static long long unirandom(const cbp2p_args *a, MPI_Comm comm)
{
    void *s = a->sends[0], *r = a->recvs[0];
    int n = a->size;
    for (int i = 0; i < a->reps; i++) {
        if (a->firsts[i]) {
            wr(s, n, a->msgwr);
            MPI_Send(s, n, MPI_BYTE, a->peers[i], TAG, comm);
        } else {
            MPI_Recv(r, n, MPI_BYTE, a->peers[i], TAG, comm, MPI_STATUS_IGNORE);
            rd(r, n, a->msgrd);
        }
    }
    return a->reps;
}

static long long stencil(const cbp2p_args *a, MPI_Comm comm)
{
    MPI_Request reqs[2 * MAXLINKS];
    int n = a->size, k = a->links;
    for (int i = 0; i < a->reps; i++) {
        for (int j = 0; j < k; j++) wr(a->sends[j], n, a->msgwr);
        for (int j = 0; j < k; j++) MPI_Irecv(a->recvs[j], n, MPI_BYTE, a->peers[j], TAG, comm, &reqs[j]);
        for (int j = 0; j < k; j++) MPI_Isend(a->sends[j], n, MPI_BYTE, a->peers[j], TAG, comm, &reqs[k + j]);
        MPI_Waitall(2 * k, reqs, MPI_STATUSES_IGNORE);
        for (int j = 0; j < k; j++) rd(a->recvs[j], n, a->msgrd);
    }
    return 2LL * k * a->reps;
}

static long long sendrecv_replace(const cbp2p_args *a, MPI_Comm comm)
{
    void *b = a->sends[0];
    for (int i = 0; i < a->reps; i++) {
        wr(b, a->size, a->msgwr);
        MPI_Sendrecv_replace(b, a->size, MPI_BYTE, a->peers[0], TAG, a->peers[1], TAG, comm, MPI_STATUS_IGNORE);
    }
    rd(b, a->size, a->msgrd); /* IMB-P2P reads the buffer once, after the loop (timed) */
    return 2LL * a->reps;
}

/* 0 on success, -1 for an unknown pattern or too many links. */
int cbp2p_loop(cbp2p_args *a)
{
    MPI_Comm comm = *(MPI_Comm *)a->comm;
    long long msgs;
    if (a->pattern == STENCIL && (a->links < 1 || a->links > MAXLINKS)) return -1;
    double t0 = MPI_Wtime();
    switch (a->pattern) {
    case PINGPONG: msgs = pingpong(a, comm); break;
    case PINGPING: msgs = exchange(a, comm, a->peers, a->peers, 0); break;
    case UNIRANDOM: msgs = unirandom(a, comm); break;
    case BIRANDOM: msgs = exchange(a, comm, a->peers, a->peers, 1); break;
    case CORANDOM: msgs = exchange(a, comm, a->firsts, a->peers, 1); break;
    case STENCIL: msgs = stencil(a, comm); break;
    case SENDRECV_REPLACE: msgs = sendrecv_replace(a, comm); break;
    default: return -1;
    }
    a->seconds = MPI_Wtime() - t0;
    a->msgs = msgs;
    return 0;
}
