/* OSU blocking and persistent collectives' timed loops (OMB 7.4's procedure, written
 * from the calls the binaries make; commbench/suites/osu/collectives.py declares them
 * and runs the same calls in mpi4py). cbosu_coll_<name>(cbosu_args *) per collective,
 * plus cbosu_coll_persistent (MPI_Start + MPI_Wait of a request made in Python) and
 * cbosu_coll_barrier_persistent.
 *
 * Every round: MPI_Wtime, the collective, MPI_Wtime, MPI_Barrier (the barriers: no
 * MPI_Barrier between rounds); every rank times (timer set), the warm-up too, as OSU.
 * Root 0, MPI_SUM. abuf is collectives.control()'s block, a cbosu_coll_ctl (osu.h): the
 * counts and displacements (v) and the persistent MPI_Request (req). 0 on success, -1
 * when the type array cannot be allocated. */
#include <stdlib.h>
#include "osu.h"

CBOSU_EXPORTS(cbosu_coll_)

#define COLL_SETUP                                                          \
    MPI_Comm comm = CBOSU_COMM(a);                                          \
    MPI_Datatype t = CBOSU_TYPE(a);                                         \
    int c = a->count, p, me;                                                \
    MPI_Comm_size(comm, &p);                                                \
    MPI_Comm_rank(comm, &me);                                               \
    const cbosu_coll_ctl *ctl = a->abuf;                                    \
    const int *cnt = ctl->v;                                                \
    const int *dsp = cnt + p, *bdsp = cnt + 2 * p;                          \
    char *s = (char *)a->sbuf, *r = (char *)a->rbuf;                        \
    (void)c; (void)me; (void)cnt; (void)dsp; (void)bdsp; (void)s; (void)r;  \
    (void)t;

/* n rounds of CALL, each timed alone; BETWEEN after each (MPI_Barrier or nothing). */
#define ROUNDS(CALL, BETWEEN)                                               \
    for (int i = 0; i < a->n; i++) {                                        \
        double t0 = MPI_Wtime();                                            \
        CALL;                                                               \
        double t1 = MPI_Wtime();                                            \
        if (CBOSU_TIMED(a)) a->times[i] = t1 - t0;                          \
        BETWEEN;                                                            \
    }

#define COLL_LOOP(name, CALL)                                               \
    int cbosu_coll_##name(cbosu_args *a)                                    \
    {                                                                       \
        COLL_SETUP                                                          \
        ROUNDS(CALL, MPI_Barrier(comm))                                     \
        return 0;                                                           \
    }

COLL_LOOP(allreduce, MPI_Allreduce(s, r, c, t, MPI_SUM, comm))
COLL_LOOP(reduce, MPI_Reduce(s, r, c, t, MPI_SUM, 0, comm))
COLL_LOOP(reduce_scatter, MPI_Reduce_scatter(s, r, cnt, t, MPI_SUM, comm))
COLL_LOOP(reduce_scatter_block, MPI_Reduce_scatter_block(s, r, c / p, t, MPI_SUM, comm))
COLL_LOOP(bcast, MPI_Bcast(me == 0 ? s : r, c, t, 0, comm))
COLL_LOOP(allgather, MPI_Allgather(s, c, t, r, c, t, comm))
COLL_LOOP(allgatherv, MPI_Allgatherv(s, c, t, r, cnt, dsp, t, comm))
COLL_LOOP(gather, MPI_Gather(s, c, t, r, c, t, 0, comm))
COLL_LOOP(gatherv, MPI_Gatherv(s, c, t, r, cnt, dsp, t, 0, comm))
COLL_LOOP(scatter, MPI_Scatter(s, c, t, r, c, t, 0, comm))
COLL_LOOP(scatterv, MPI_Scatterv(s, cnt, dsp, t, r, c, t, 0, comm))
COLL_LOOP(alltoall, MPI_Alltoall(s, c, t, r, c, t, comm))
COLL_LOOP(alltoallv, MPI_Alltoallv(s, cnt, dsp, t, r, cnt, dsp, t, comm))

int cbosu_coll_alltoallw(cbosu_args *a)
{
    COLL_SETUP
    MPI_Datatype *ts = malloc(sizeof(MPI_Datatype) * (size_t)p);
    if (!ts) return -1;
    for (int k = 0; k < p; k++) ts[k] = t;
    ROUNDS(MPI_Alltoallw(s, cnt, bdsp, ts, r, cnt, bdsp, ts, comm), MPI_Barrier(comm))
    free(ts);
    return 0;
}

int cbosu_coll_barrier(cbosu_args *a)
{
    MPI_Comm comm = CBOSU_COMM(a);
    ROUNDS(MPI_Barrier(comm), (void)0)
    return 0;
}

/* The persistent forms: the request (MPI_<Coll>_init, made by collectives.prepare) is
 * started and completed each round. */
int cbosu_coll_persistent(cbosu_args *a)
{
    MPI_Comm comm = CBOSU_COMM(a);
    MPI_Request *req = ((const cbosu_coll_ctl *)a->abuf)->req;
    ROUNDS((MPI_Start(req), MPI_Wait(req, MPI_STATUS_IGNORE)), MPI_Barrier(comm))
    return 0;
}

int cbosu_coll_barrier_persistent(cbosu_args *a)
{
    MPI_Request *req = ((const cbosu_coll_ctl *)a->abuf)->req;
    ROUNDS((MPI_Start(req), MPI_Wait(req, MPI_STATUS_IGNORE)), (void)0)
    return 0;
}
