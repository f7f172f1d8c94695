/* A PMPI log of a run's MPI calls (benchmarks/mpi_calls.py), one file a rank in
 * $CALLS_TRACE_DIR: every MPI_Win_fence with its assertion, the passive-target locks and
 * flushes with their target, a window's creation with its size and memory, MPI_Put/Get with
 * their count, target and origin buffer, MPI_Accumulate with its count and target, MPI_Barrier,
 * MPI_Allgather and MPI_Alltoall with their counts and send buffer, the reductions with their
 * counts and what their send buffer holds, and the point-to-point calls with count and peer.
 * Built with the MPI's mpicc and loaded with LD_PRELOAD into IMB and commbench alike (the
 * large-count forms too, which mpi4py 4 calls).
 *
 * A reduction's line ends with its send buffer's floats counted by class: zero, normal,
 * subnormal and not-finite (z/n/s/x). A subnormal operand costs the CPU tens of cycles an
 * add, so two loops over the same counts time different arithmetic when one buffer holds
 * them. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static FILE *out;

static void open_log(void)
{
    if (!out) {
        char path[512];
        int rank;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        snprintf(path, sizeof path, "%s/calls.%d.%d", getenv("CALLS_TRACE_DIR"), rank,
                 (int)getpid());
        out = fopen(path, "w");
    }
}

static void say(const char *what, long a, long b)
{
    open_log();
    if (out) fprintf(out, "%s %ld %ld\n", what, a, b);
}

/* a point-to-point call: count, peer and where its buffer lies (its address's last 24 bits,
 * so two calls on one buffer, or X apart, show as such) */
static void say_at(const char *what, long count, long peer, const void *buf)
{
    open_log();
    if (out) fprintf(out, "%s %ld %ld @%06lx\n", what, count, peer, (unsigned long)buf & 0xffffff);
}

/* what a reduction's send buffer holds: its floats or doubles by class */
static void contents(const void *buf, long count, MPI_Datatype dt, char *s, size_t len)
{
    long k[4] = {0, 0, 0, 0};
    if (buf == MPI_IN_PLACE || (dt != MPI_FLOAT && dt != MPI_DOUBLE)) {
        snprintf(s, len, "-");
        return;
    }
    for (long i = 0; i < count; i++) {
        int c = dt == MPI_FLOAT ? fpclassify(((const float *)buf)[i])
                                : fpclassify(((const double *)buf)[i]);
        k[c == FP_ZERO ? 0 : c == FP_NORMAL ? 1 : c == FP_SUBNORMAL ? 2 : 3]++;
    }
    snprintf(s, len, "z%ld/n%ld/s%ld/x%ld", k[0], k[1], k[2], k[3]);
}

static void reduction(const char *what, const void *buf, const void *rbuf, long count,
                      MPI_Datatype dt)
{
    char s[128];
    contents(buf, count, dt, s, sizeof s);
    open_log();
    if (out)
        fprintf(out, "%s %ld 0 %s s%%4096=%ld r%%4096=%ld\n", what, count, s,
                (long)((unsigned long)buf % 4096), (long)((unsigned long)rbuf % 4096));
}

int MPI_Win_fence(int assert, MPI_Win win)
{
    say("Win_fence", assert, 0);
    return PMPI_Win_fence(assert, win);
}

/* passive-target synchronization: its target (-1: every rank) and, for a lock, its type */
int MPI_Win_lock(int type, int rank, int assert, MPI_Win win)
{
    say("Win_lock", rank, type);
    return PMPI_Win_lock(type, rank, assert, win);
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
    say("Win_unlock", rank, 0);
    return PMPI_Win_unlock(rank, win);
}

int MPI_Win_lock_all(int assert, MPI_Win win)
{
    say("Win_lock_all", -1, assert);
    return PMPI_Win_lock_all(assert, win);
}

int MPI_Win_unlock_all(MPI_Win win)
{
    say("Win_unlock_all", -1, 0);
    return PMPI_Win_unlock_all(win);
}

int MPI_Win_flush(int rank, MPI_Win win)
{
    say("Win_flush", rank, 0);
    return PMPI_Win_flush(rank, win);
}

int MPI_Win_flush_all(MPI_Win win)
{
    say("Win_flush_all", -1, 0);
    return PMPI_Win_flush_all(win);
}

int MPI_Win_flush_local(int rank, MPI_Win win)
{
    say("Win_flush_local", rank, 0);
    return PMPI_Win_flush_local(rank, win);
}

int MPI_Win_flush_local_all(MPI_Win win)
{
    say("Win_flush_local_all", -1, 0);
    return PMPI_Win_flush_local_all(win);
}

/* a window's creation: its size and where its memory lies (the last 24 bits) */
int MPI_Win_create(void *base, MPI_Aint size, int disp, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    say_at("Win_create", (long)size, disp, base);
    return PMPI_Win_create(base, size, disp, info, comm, win);
}

int MPI_Win_allocate(MPI_Aint size, int disp, MPI_Info info, MPI_Comm comm, void *base,
                     MPI_Win *win)
{
    int rc = PMPI_Win_allocate(size, disp, info, comm, base, win);
    say_at("Win_allocate", (long)size, disp, *(void **)base);
    return rc;
}

/* a nonblocking collective of IMB-NBC and its completion */
int MPI_Ialltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                  MPI_Comm comm, MPI_Request *rq)
{
    say_at("Ialltoall", sc, rc, s);
    return PMPI_Ialltoall(s, sc, st, r, rc, rt, comm, rq);
}

/* the gathering collectives: send and receive counts and where the send buffer lies */
int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                  MPI_Comm comm)
{
    say_at("Allgather", sc, rc, s);
    return PMPI_Allgather(s, sc, st, r, rc, rt, comm);
}

int MPI_Alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                 MPI_Comm comm)
{
    say_at("Alltoall", sc, rc, s);
    return PMPI_Alltoall(s, sc, st, r, rc, rt, comm);
}

int MPI_Wait(MPI_Request *rq, MPI_Status *st)
{
    say("Wait", 0, 0);
    return PMPI_Wait(rq, st);
}

int MPI_Barrier(MPI_Comm comm)
{
    say("Barrier", 0, 0);
    return PMPI_Barrier(comm);
}

int MPI_Put(const void *o, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc,
            MPI_Datatype tt, MPI_Win w)
{
    say_at("Put", oc, tr, o);
    return PMPI_Put(o, oc, ot, tr, td, tc, tt, w);
}

int MPI_Get(void *o, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt,
            MPI_Win w)
{
    say_at("Get", oc, tr, o);
    return PMPI_Get(o, oc, ot, tr, td, tc, tt, w);
}

int MPI_Accumulate(const void *o, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc,
                   MPI_Datatype tt, MPI_Op op, MPI_Win w)
{
    say("Accumulate", oc, tr);
    return PMPI_Accumulate(o, oc, ot, tr, td, tc, tt, op, w);
}

int MPI_Reduce(const void *s, void *r, int c, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm)
{
    reduction("Reduce", s, r, c, dt);
    return PMPI_Reduce(s, r, c, dt, op, root, comm);
}

int MPI_Allreduce(const void *s, void *r, int c, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    reduction("Allreduce", s, r, c, dt);
    return PMPI_Allreduce(s, r, c, dt, op, comm);
}

int MPI_Reduce_scatter(const void *s, void *r, const int rc[], MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm)
{
    int p;
    long total = 0;
    PMPI_Comm_size(comm, &p);
    for (int i = 0; i < p; i++) total += rc[i];
    reduction("Reduce_scatter", s, r, total, dt);
    return PMPI_Reduce_scatter(s, r, rc, dt, op, comm);
}

int MPI_Reduce_scatter_block(const void *s, void *r, int c, MPI_Datatype dt, MPI_Op op,
                             MPI_Comm comm)
{
    int p;
    PMPI_Comm_size(comm, &p);
    reduction("Reduce_scatter_block", s, r, (long)c * p, dt);
    return PMPI_Reduce_scatter_block(s, r, c, dt, op, comm);
}

int MPI_Ireduce_scatter(const void *s, void *r, const int rc[], MPI_Datatype dt, MPI_Op op,
                        MPI_Comm comm, MPI_Request *rq)
{
    int p;
    long total = 0;
    PMPI_Comm_size(comm, &p);
    for (int i = 0; i < p; i++) total += rc[i];
    reduction("Ireduce_scatter", s, r, total, dt);
    return PMPI_Ireduce_scatter(s, r, rc, dt, op, comm, rq);
}

int MPI_Send(const void *b, int c, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    say_at("Send", c, dest, b);
    return PMPI_Send(b, c, dt, dest, tag, comm);
}

int MPI_Recv(void *b, int c, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    say_at("Recv", c, src, b);
    return PMPI_Recv(b, c, dt, src, tag, comm, st);
}

int MPI_Isend(const void *b, int c, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              MPI_Request *rq)
{
    say_at("Isend", c, dest, b);
    return PMPI_Isend(b, c, dt, dest, tag, comm, rq);
}

int MPI_Irecv(void *b, int c, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
              MPI_Request *rq)
{
    say_at("Irecv", c, src, b);
    return PMPI_Irecv(b, c, dt, src, tag, comm, rq);
}

int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype st, int dest, int stag, void *rb, int rc,
                 MPI_Datatype rt, int src, int rtag, MPI_Comm comm, MPI_Status *status)
{
    say_at("Sendrecv", sc, dest, sb);
    return PMPI_Sendrecv(sb, sc, st, dest, stag, rb, rc, rt, src, rtag, comm, status);
}

int MPI_Waitall(int n, MPI_Request rq[], MPI_Status st[])
{
    say("Waitall", n, 0);
    return PMPI_Waitall(n, rq, st);
}

#if MPI_VERSION >= 4
/* mpi4py 4 calls the large-count forms where the library has them */
int MPI_Accumulate_c(const void *o, MPI_Count oc, MPI_Datatype ot, int tr, MPI_Aint td,
                     MPI_Count tc, MPI_Datatype tt, MPI_Op op, MPI_Win w)
{
    say("Accumulate", (long)oc, tr);
    return PMPI_Accumulate_c(o, oc, ot, tr, td, tc, tt, op, w);
}

int MPI_Put_c(const void *o, MPI_Count oc, MPI_Datatype ot, int tr, MPI_Aint td, MPI_Count tc,
              MPI_Datatype tt, MPI_Win w)
{
    say("Put", (long)oc, tr);
    return PMPI_Put_c(o, oc, ot, tr, td, tc, tt, w);
}

int MPI_Get_c(void *o, MPI_Count oc, MPI_Datatype ot, int tr, MPI_Aint td, MPI_Count tc,
              MPI_Datatype tt, MPI_Win w)
{
    say("Get", (long)oc, tr);
    return PMPI_Get_c(o, oc, ot, tr, td, tc, tt, w);
}

int MPI_Reduce_c(const void *s, void *r, MPI_Count c, MPI_Datatype dt, MPI_Op op, int root,
                 MPI_Comm comm)
{
    reduction("Reduce", s, r, (long)c, dt);
    return PMPI_Reduce_c(s, r, c, dt, op, root, comm);
}

int MPI_Allreduce_c(const void *s, void *r, MPI_Count c, MPI_Datatype dt, MPI_Op op,
                    MPI_Comm comm)
{
    reduction("Allreduce", s, r, (long)c, dt);
    return PMPI_Allreduce_c(s, r, c, dt, op, comm);
}

int MPI_Reduce_scatter_init(const void *s, void *r, const int rc[], MPI_Datatype dt,
                            MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *rq)
{
    int p;
    long total = 0;
    PMPI_Comm_size(comm, &p);
    for (int i = 0; i < p; i++) total += rc[i];
    reduction("Reduce_scatter_init", s, r, total, dt);
    return PMPI_Reduce_scatter_init(s, r, rc, dt, op, comm, info, rq);
}

int MPI_Reduce_scatter_c(const void *s, void *r, const MPI_Count rc[], MPI_Datatype dt,
                         MPI_Op op, MPI_Comm comm)
{
    int p;
    long total = 0;
    PMPI_Comm_size(comm, &p);
    for (int i = 0; i < p; i++) total += (long)rc[i];
    reduction("Reduce_scatter", s, r, total, dt);
    return PMPI_Reduce_scatter_c(s, r, rc, dt, op, comm);
}

int MPI_Ireduce_scatter_c(const void *s, void *r, const MPI_Count rc[], MPI_Datatype dt,
                          MPI_Op op, MPI_Comm comm, MPI_Request *rq)
{
    int p;
    long total = 0;
    PMPI_Comm_size(comm, &p);
    for (int i = 0; i < p; i++) total += (long)rc[i];
    reduction("Ireduce_scatter", s, r, total, dt);
    return PMPI_Ireduce_scatter_c(s, r, rc, dt, op, comm, rq);
}

int MPI_Reduce_scatter_init_c(const void *s, void *r, const MPI_Count rc[], MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *rq)
{
    int p;
    long total = 0;
    PMPI_Comm_size(comm, &p);
    for (int i = 0; i < p; i++) total += (long)rc[i];
    reduction("Reduce_scatter_init", s, r, total, dt);
    return PMPI_Reduce_scatter_init_c(s, r, rc, dt, op, comm, info, rq);
}

int MPI_Allgather_c(const void *s, MPI_Count sc, MPI_Datatype st, void *r, MPI_Count rc,
                    MPI_Datatype rt, MPI_Comm comm)
{
    say_at("Allgather", (long)sc, (long)rc, s);
    return PMPI_Allgather_c(s, sc, st, r, rc, rt, comm);
}

int MPI_Alltoall_c(const void *s, MPI_Count sc, MPI_Datatype st, void *r, MPI_Count rc,
                   MPI_Datatype rt, MPI_Comm comm)
{
    say_at("Alltoall", (long)sc, (long)rc, s);
    return PMPI_Alltoall_c(s, sc, st, r, rc, rt, comm);
}
#endif
