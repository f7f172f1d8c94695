/* commbench's native engine for the mt family (IMB-MT): T POSIX threads per rank,
 * each on its own duplicated communicator, under MPI_THREAD_MULTIPLE.
 *
 * One call, cbmt_run, measures one benchmark at one count: the calling thread is
 * thread 0 and T-1 more are started; every thread allocates (or is given) its
 * buffers, runs the pattern on its communicator and reports its time, whether it
 * took part, and its check failures. No Python runs meanwhile (ctypes releases the
 * GIL around the call). Built by commbench.native.mt with the mpicc of mpi4py's MPI.
 *
 * Timing follows IMB-MT 2021.11 (written from its documented behaviour, not its code):
 *  - point to point: a warm-up call of the whole pattern, the barrier (-barrier),
 *    then the timed call of `repeat` repetitions, one pair of timestamps around it;
 *  - collectives: repeat + warmup calls, each timed alone, the first `warmup` left
 *    out, five barriers after every call (none with -barrier off);
 *  - barrier: a thread barrier and MPI_Barrier on the thread's communicator, timed.
 * The barrier (-barrier on|special) is a thread barrier, then thread 0 alone does
 * MPI_Barrier (on) or a dissemination of empty Sendrecvs (special) on the world,
 * then a thread barrier again.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "abi.h"
#include "collectives.h"

#define CBMT_ABI_VERSION 2

/* The benchmarks by IMB-MT's names, -barrier's and -malloc_algo's values: code tables
 * (abi.h), which commbench.native.mt reads (abi.codes). */
#define CBMT_BENCHMARKS(C) \
    C(PINGPONG, "PingPongMT") \
    C(PINGPING, "PingPingMT") \
    C(SENDRECV, "SendRecvMT") \
    C(EXCHANGE, "ExchangeMT") \
    C(UNIBAND, "UniBandMT") \
    C(BIBAND, "BiBandMT") \
    C(BARRIER, "BarrierMT") \
    C(BCAST, "BcastMT") \
    C(REDUCE, "ReduceMT") \
    C(ALLREDUCE, "AllReduceMT")
#define CBMT_BARRIERS(C) C(BARRIER_OFF, "off") C(BARRIER_ON, "on") C(BARRIER_SPECIAL, "special")
#define CBMT_ALLOCS(C) \
    C(ALLOC_SERIAL, "serial") C(ALLOC_CONTINUOUS, "continuous") C(ALLOC_PARALLEL, "parallel")
enum { CBMT_BENCHMARKS(CB_CODE) };
enum { CBMT_BARRIERS(CB_CODE) };
enum { CBMT_ALLOCS(CB_CODE) };

/* The argument block, one row a field (abi.h), which commbench.native.mt reads for its
 * ctypes mirror, RunArgs. */
#define CBMT_ARGS_FIELDS(X) \
    X(int,         bench,       "the benchmark (the enum above)") \
    X(int,         threads,     "threads on this rank") \
    X(int,         count,       "elements a message") \
    X(int,         alloc_count, "elements a buffer holds") \
    X(int,         type_char,   "1: MPI_CHAR elements, else MPI_INT") \
    X(int,         repeat,      "timed repetitions") \
    X(int,         warmup,      "untimed repetitions") \
    X(int,         stride,      "-stride") \
    X(int,         window,      "-window_size") \
    X(int,         barrier,     "BARRIER_*") \
    X(int,         check,       "1: fill and verify the buffers") \
    X(int,         align,       "-malloc_align") \
    X(int,         algo,        "ALLOC_*") \
    X(int,         corrupt,     "COMMBENCH_FAULT_CORRUPT: send wrong data") \
    X(void **,     comms,       "per thread: the address of an MPI_Comm handle (mpi4py's)") \
    X(void *,      world,       "the address of the world communicator's handle") \
    X(double *,    times,       "out, per thread: seconds of the timed repetitions (0 if idle)") \
    X(int *,       results,     "out, per thread: 1 if it took part") \
    X(long long *, failures,    "out, per thread: check failures (elements that differ)")

typedef struct { CBMT_ARGS_FIELDS(CB_FIELD) } cbmt_args;

typedef struct {
    const cbmt_args *a;
    pthread_barrier_t bar;
    MPI_Comm world;
    char *blocks[2];       /* -malloc_algo continuous: one block each for all threads */
    size_t size_a, size_b;
} shared_t;

typedef struct {
    shared_t *s;
    int tid;
    MPI_Comm comm;
    int rank, size;
    void *in, *out, *raw_in, *raw_out;
    MPI_Request *reqs;
    MPI_Datatype type;
    long long failures;
} thr_t;

#define CBMT_STRUCTS(S) S(cbmt_args)
CB_EXPORTS(cbmt_, CBMT_ABI_VERSION, CBMT_STRUCTS)

/* ------------------------------------------------------------------ buffers */

static void *aligned(size_t bytes, int align, void **raw)
{
    size_t al = align > 0 ? (size_t)align : 1;
    char *p = calloc(1, bytes + al);
    *raw = p;
    if (!p) return NULL;
    return p + (al - (uintptr_t)p % al) % al;
}

static int take_buffers(thr_t *t)
{
    shared_t *s = t->s;
    if (s->a->algo == ALLOC_CONTINUOUS) {
        t->in = s->blocks[0] + (size_t)t->tid * s->size_a;
        t->out = s->blocks[1] + (size_t)t->tid * s->size_b;
        return 1;
    }
    t->in = aligned(s->size_a, s->a->align, &t->raw_in);
    t->out = aligned(s->size_b, s->a->align, &t->raw_out);
    return t->raw_in && t->raw_out;
}

/* ------------------------------------------------------------------ check mode */

static void fill(const thr_t *t, void *buf, int rank_plus, int value, int doit)
{
    if (!t->s->a->check || !doit) return;
    int *v = buf;
    for (int i = 0; i < t->s->a->count; i++) v[i] = rank_plus ? (t->rank + 1) * i : value;
}

/* Elements of buf[0..count) that are not factor * i. */
static void verify(thr_t *t, const void *buf, int factor, int doit)
{
    if (!t->s->a->check || !doit) return;
    const int *v = buf;
    for (int i = 0; i < t->s->a->count; i++) t->failures += v[i] != factor * i;
}

static void spoil(const thr_t *t)  /* COMMBENCH_FAULT_CORRUPT: send wrong data */
{
    if (t->s->a->corrupt && t->s->a->count > 0) ((int *)t->in)[t->s->a->count - 1] ^= 0x5a5a;
}

/* ------------------------------------------------------------------ barriers */

static void dissemination(MPI_Comm world)
{
    int rank, size, dummy = 0;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    for (int d = 1; d < size; d *= 2)
        MPI_Sendrecv(&dummy, 0, MPI_BYTE, (rank + d) % size, 1010, &dummy, 0, MPI_BYTE,
                     (rank - d + size) % size, 1010, world, MPI_STATUS_IGNORE);
}

static void sync_all(thr_t *t)
{
    shared_t *s = t->s;
    if (s->a->barrier == BARRIER_OFF) return;
    pthread_barrier_wait(&s->bar);
    if (t->tid == 0) {
        if (s->a->barrier == BARRIER_ON) MPI_Barrier(s->world);
        else dissemination(s->world);
    }
    pthread_barrier_wait(&s->bar);
}

/* ------------------------------------------------------------------ patterns */

/* The pair of a point-to-point rank: (partner, sender first?), or -1 when idle. */
static int pair_of(const thr_t *t, int *first)
{
    int stride = t->s->a->stride ? t->s->a->stride : t->size / 2;
    if (stride <= 0 || stride > t->size / 2) return -1;
    int group = t->rank / stride;
    if (group / 2 == t->size / (2 * stride) && t->size % (2 * stride) != 0) return -1;
    *first = group % 2 == 0;
    return *first ? t->rank + stride : t->rank - stride;
}

static int ring_stride(const thr_t *t)
{
    return t->s->a->stride ? t->s->a->stride : t->size / 2;
}

/* One call of a point-to-point pattern: fill, `reps` repetitions, verify; 0 if idle. */
static int p2p(thr_t *t, int reps)
{
    const cbmt_args *a = t->s->a;
    int c = a->count, first = 0, w = a->window, peer = -1;
    MPI_Comm comm = t->comm;
    MPI_Datatype ty = t->type;
    char ack = 0;
    size_t bytes = (size_t)c * (a->type_char ? 1 : sizeof(int));
    if (a->bench != SENDRECV && a->bench != EXCHANGE && (peer = pair_of(t, &first)) < 0) return 0;
    int right = (t->rank + ring_stride(t)) % t->size, left = (t->rank - ring_stride(t) % t->size + t->size) % t->size;
    fill(t, t->in, 1, 0, 1);
    fill(t, t->out, 0, -1, 1);
    if (a->bench == EXCHANGE) fill(t, (char *)t->out + bytes, 0, -1, 1);
    spoil(t);
    for (int i = 0; i < reps; i++) {
        switch (a->bench) {
        case PINGPONG:
            if (first) {
                MPI_Send(t->in, c, ty, peer, 0, comm);
                MPI_Recv(t->out, c, ty, peer, 0, comm, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(t->out, c, ty, peer, 0, comm, MPI_STATUS_IGNORE);
                MPI_Send(t->in, c, ty, peer, 0, comm);
            }
            break;
        case PINGPING:
            MPI_Isend(t->in, c, ty, peer, 0, comm, &t->reqs[0]);
            MPI_Recv(t->out, c, ty, peer, 0, comm, MPI_STATUS_IGNORE);
            MPI_Wait(&t->reqs[0], MPI_STATUS_IGNORE);
            break;
        case SENDRECV:
            MPI_Sendrecv(t->in, c, ty, right, 0, t->out, c, ty, left, 0, comm, MPI_STATUS_IGNORE);
            break;
        case EXCHANGE:
            MPI_Isend(t->in, c, ty, left, 0, comm, &t->reqs[0]);
            MPI_Isend(t->in, c, ty, right, 0, comm, &t->reqs[1]);
            MPI_Recv(t->out, c, ty, left, 0, comm, MPI_STATUS_IGNORE);
            MPI_Recv((char *)t->out + bytes, c, ty, right, 0, comm, MPI_STATUS_IGNORE);
            MPI_Waitall(2, t->reqs, MPI_STATUSES_IGNORE);
            break;
        case UNIBAND:
            for (int k = 0; k < w; k++) {
                if (first) MPI_Isend(t->in, c, ty, peer, 0, comm, &t->reqs[k]);
                else MPI_Irecv(t->out, c, ty, peer, 0, comm, &t->reqs[k]);
            }
            MPI_Waitall(w, t->reqs, MPI_STATUSES_IGNORE);
            if (first) MPI_Recv(&ack, 1, MPI_CHAR, peer, 0, comm, MPI_STATUS_IGNORE);
            else MPI_Send(&ack, 1, MPI_CHAR, peer, 0, comm);
            break;
        case BIBAND:
            for (int k = 0; k < w; k++) MPI_Irecv(t->out, c, ty, peer, 0, comm, &t->reqs[k]);
            for (int k = 0; k < w; k++) MPI_Isend(t->in, c, ty, peer, 0, comm, &t->reqs[w + k]);
            MPI_Waitall(2 * w, t->reqs, MPI_STATUSES_IGNORE);
            if (first) MPI_Recv(&ack, 1, MPI_CHAR, peer, 0, comm, MPI_STATUS_IGNORE);
            else MPI_Send(&ack, 1, MPI_CHAR, peer, 0, comm);
            break;
        }
    }
    if (reps > 0) {  /* what the partner(s) sent: (sender rank + 1) * i */
        int from = (a->bench == SENDRECV || a->bench == EXCHANGE) ? left : peer;
        verify(t, t->in, t->rank + 1, 1);  /* the send buffer unchanged */
        verify(t, t->out, from + 1, a->bench != UNIBAND || !first);
        if (a->bench == EXCHANGE) verify(t, (char *)t->out + bytes, right + 1, 1);
    }
    return 1;
}

/* The collectives: every call timed alone; the seconds of the calls after the warm-up. */
static double collective(thr_t *t)
{
    const cbmt_args *a = t->s->a;
    int c = a->count, root = 0, me = t->rank, me_root = me == root, n = t->size;
    void *s = t->in, *r = t->out;  /* the names of collectives.h's calls */
    MPI_Datatype dt = t->type;
    MPI_Op op = MPI_SUM;
    MPI_Comm comm = t->comm;
    double sum = 0.0;
    fill(t, t->in, a->bench != BCAST, 0, a->bench != BCAST || me_root);
    if (a->bench == BCAST && a->check && me_root)
        for (int i = 0; i < c; i++) ((int *)t->in)[i] = i;
    fill(t, t->out, 0, -1, 1);
    if (a->bench != BCAST || me_root) spoil(t);
    for (int i = 0; i < a->repeat + a->warmup; i++) {
        double t0 = MPI_Wtime();
        switch (a->bench) {
        case BARRIER:
            pthread_barrier_wait(&t->s->bar);
            CB_BLOCKING(barrier);
            break;
        case BCAST: CB_BLOCKING(bcast); break;
        case REDUCE: CB_BLOCKING(reduce); break;
        case ALLREDUCE: CB_BLOCKING(allreduce); break;
        }
        double took = MPI_Wtime() - t0;
        if (i >= a->warmup) sum += took;
        if (a->bench != BARRIER)
            for (int k = 0; k < 5; k++) sync_all(t);
    }
    if (a->bench == BCAST) verify(t, t->out, 1, !me_root);
    if (a->bench == REDUCE) verify(t, t->out, n * (n + 1) / 2, me_root);
    if (a->bench == ALLREDUCE) verify(t, t->out, n * (n + 1) / 2, 1);
    return sum;
}

static void *worker(void *arg)
{
    thr_t *t = arg;
    const cbmt_args *a = t->s->a;
    int id = t->tid;
    t->comm = *(MPI_Comm *)a->comms[id];
    MPI_Comm_rank(t->comm, &t->rank);
    MPI_Comm_size(t->comm, &t->size);
    t->type = a->type_char ? MPI_CHAR : MPI_INT;
    t->reqs = malloc(sizeof(MPI_Request) * (size_t)(2 * a->window + 2));
    a->times[id] = 0.0;
    a->results[id] = 0;
    if (a->algo == ALLOC_PARALLEL) take_buffers(t);
    if (!t->in || !t->out || !t->reqs) {
        a->failures[id] = -1;  /* out of memory: Python refuses the row */
        return NULL;
    }
    if (a->bench >= BARRIER) {
        a->times[id] = collective(t);
        a->results[id] = 1;
    } else {
        p2p(t, a->warmup);
        sync_all(t);
        double t0 = MPI_Wtime();
        a->results[id] = p2p(t, a->repeat);
        a->times[id] = a->results[id] ? MPI_Wtime() - t0 : 0.0;
    }
    a->failures[id] = t->failures;
    return NULL;
}

/* One benchmark at one count on a->threads threads; 0, or -1 when threads or memory fail. */
int cbmt_run(const cbmt_args *a)
{
    shared_t s;
    memset(&s, 0, sizeof s);
    s.a = a;
    s.world = *(MPI_Comm *)a->world;
    size_t unit = a->type_char ? 1 : sizeof(int);
    s.size_a = unit * (size_t)a->alloc_count;
    s.size_b = s.size_a * (a->bench == EXCHANGE ? 2 : 1);
    void *raw[2] = {NULL, NULL};
    if (a->algo == ALLOC_CONTINUOUS) {
        s.blocks[0] = aligned(s.size_a * (size_t)a->threads, a->align, &raw[0]);
        s.blocks[1] = aligned(s.size_b * (size_t)a->threads, a->align, &raw[1]);
    }
    thr_t *ts = calloc((size_t)a->threads, sizeof(thr_t));
    pthread_t *ids = calloc((size_t)a->threads, sizeof(pthread_t));
    int rc = ts && ids && pthread_barrier_init(&s.bar, NULL, (unsigned)a->threads) == 0 ? 0 : -1;
    if (rc == 0) {
        for (int i = 0; i < a->threads; i++) {
            ts[i].s = &s;
            ts[i].tid = i;
        }
        /* serial and continuous: every buffer from the calling thread first; parallel:
         * each thread its own, in the thread */
        if (a->algo != ALLOC_PARALLEL && (a->algo == ALLOC_SERIAL || (s.blocks[0] && s.blocks[1])))
            for (int i = 0; i < a->threads; i++) take_buffers(&ts[i]);
        int started = 1;
        for (int i = 1; i < a->threads && rc == 0; i++, started++)
            if (pthread_create(&ids[i], NULL, worker, &ts[i]) != 0) rc = -1;
        if (rc == 0) worker(&ts[0]);
        for (int i = 1; i < started; i++) pthread_join(ids[i], NULL);
        pthread_barrier_destroy(&s.bar);
        for (int i = 0; i < a->threads; i++) {
            free(ts[i].raw_in);
            free(ts[i].raw_out);
            free(ts[i].reqs);
        }
    }
    free(raw[0]);
    free(raw[1]);
    free(ts);
    free(ids);
    return rc;
}
