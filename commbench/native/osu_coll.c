/* OSU blocking and persistent collectives' timed loops (OMB 7.4's procedure, written
 * from the calls the binaries make; commbench/suites/osu/collectives.py declares them
 * and runs the same calls in mpi4py). cbosu_coll_<name>(cbosu_args *) per collective,
 * its call collectives.h's, plus cbosu_coll_persistent (MPI_Start + MPI_Wait of a
 * request made in Python) and cbosu_coll_barrier_persistent.
 *
 * Every round: MPI_Wtime, the collective, MPI_Wtime, MPI_Barrier (the barriers: no
 * MPI_Barrier between rounds); every rank times (timer set), the warm-up too, as OSU.
 * Root 0, MPI_SUM, reduce_scatter_block count / P. abuf is collectives_loops.control()'s
 * block, a cbosu_coll_ctl (osu.h): the counts and displacements (v), the same for both
 * sides, and the persistent MPI_Request (req). 0 on success, -1 when the type array
 * cannot be allocated. */
#include <stdlib.h>
#include "osu.h"
#include "collectives.h"

CBOSU_EXPORTS(cbosu_coll_)

/* The names collectives.h's calls use. */
#define COLL_SETUP                                                          \
    MPI_Comm comm = CBOSU_COMM(a);                                          \
    MPI_Datatype dt = CBOSU_TYPE(a);                                        \
    MPI_Op op = MPI_SUM;                                                    \
    int c = a->count, p, me, root = 0;                                      \
    MPI_Comm_size(comm, &p);                                                \
    MPI_Comm_rank(comm, &me);                                               \
    int bcnt = c / p;                                                       \
    const cbosu_coll_ctl *ctl = a->abuf;                                    \
    const int *rcnt = ctl->v, *rdsp = rcnt + p, *rbd = rcnt + 2 * p;        \
    const int *scnt = rcnt, *sdsp = rdsp, *sbd = rbd;                       \
    char *s = (char *)a->sbuf, *r = (char *)a->rbuf;                        \
    (void)op; (void)c; (void)me; (void)root; (void)bcnt; (void)s; (void)r;  \
    (void)rcnt; (void)rdsp; (void)rbd; (void)scnt; (void)sdsp; (void)sbd;

/* n rounds of CALL, each timed alone; BETWEEN after each (MPI_Barrier or nothing). */
#define ROUNDS(CALL, BETWEEN)                                               \
    for (int i = 0; i < a->n; i++) {                                        \
        double t0 = MPI_Wtime();                                            \
        CALL;                                                               \
        double t1 = MPI_Wtime();                                            \
        if (CBOSU_TIMED(a)) a->times[i] = t1 - t0;                          \
        BETWEEN;                                                            \
    }

#define COLL_LOOP(name)                                                     \
    int cbosu_coll_##name(cbosu_args *a)                                    \
    {                                                                       \
        COLL_SETUP                                                          \
        ROUNDS(CB_BLOCKING(name), MPI_Barrier(comm))                        \
        return 0;                                                           \
    }

CB_COUNTED_COLLECTIVES(COLL_LOOP)

/* alltoallw: the datatype once a rank, both sides */
int cbosu_coll_alltoallw(cbosu_args *a)
{
    COLL_SETUP
    MPI_Datatype *sts = malloc(sizeof(MPI_Datatype) * (size_t)p), *rts = sts;
    if (!sts) return -1;
    for (int k = 0; k < p; k++) sts[k] = dt;
    ROUNDS(CB_BLOCKING(alltoallw), MPI_Barrier(comm))
    free(sts);
    return 0;
}

int cbosu_coll_barrier(cbosu_args *a)
{
    MPI_Comm comm = CBOSU_COMM(a);
    ROUNDS(CB_BLOCKING(barrier), (void)0)
    return 0;
}

/* The persistent forms: the request (MPI_<Coll>_init, made by collectives_loops.prepare) is
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
