/* OSU's neighborhood collectives' timed loops (OMB 7.4's osu_neighbor_* and
 * osu_ineighbor_*; commbench/suites/osu/neighbor.py declares them). The calls run on
 * the distributed-graph communicator of the control block (osu_overlap.h), sending
 * `count` elements per destination and receiving as many per source.
 *
 * Blocking: per round MPI_Barrier (the run's communicator), MPI_Wtime, the call,
 * MPI_Wtime, on every rank. Nonblocking: the overlap procedure of osu_overlap.h. One
 * loop of each form, cbosu_neighbor_<op> and cbosu_neighbor_i<op>, for every operation of
 * collectives.h's neighbourhood table, whose calls they make. */
#include "osu.h"
#include "osu_overlap.h"
#include "collectives.h"

CBOSU_EXPORTS(cbosu_neighbor_)

#define OP_ENUM(name) OP_##name,
enum { CB_NEIGHBOR_COLLECTIVES(OP_ENUM) };

/* The names collectives.h's calls use, bound in each case (what a call does not use the
 * compiler drops there). */
#define POST_NAMES                                                                    \
    const int *scnt = k->scnt, *sdsp = k->sdsp, *rcnt = k->rcnt, *rdsp = k->rdsp;     \
    const MPI_Aint *sba = k->sba, *rba = k->rba;                                      \
    MPI_Datatype *sts = k->sts, *rts = k->rts;                                        \
    (void)scnt, (void)sdsp, (void)rcnt, (void)rdsp, (void)sba, (void)rba, (void)sts;  \
    (void)rts;
#define BLOCKING_CASE(name) case OP_##name: { POST_NAMES return CB_BLOCKING(name); }
#define NONBLOCKING_CASE(name) case 10 + OP_##name: { POST_NAMES return CB_NONBLOCKING(name); }

/* The nonblocking call (rq) or, with rq NULL, the blocking one. */
static int post(cbosu_args *a, const nbc_ctl *k, int call, MPI_Request *rq)
{
    MPI_Comm comm = k->comm;
    MPI_Datatype dt = CBOSU_TYPE(a);
    int c = a->count;
    char *s = (char *)a->sbuf, *r = (char *)a->rbuf;
    switch (call + (rq ? 10 : 0)) {
        CB_NEIGHBOR_COLLECTIVES(BLOCKING_CASE)
        CB_NEIGHBOR_COLLECTIVES(NONBLOCKING_CASE)
    }
    return MPI_ERR_OTHER;
}

static int blocking(cbosu_args *a, int call)
{
    nbc_ctl k;
    if (ctl_of(a, &k) != 0) return -1;
    MPI_Comm world = CBOSU_COMM(a);
    for (int i = 0; i < a->n; i++) {
        MPI_Barrier(world);
        double t0 = MPI_Wtime();
        post(a, &k, call, NULL);
        double t1 = MPI_Wtime();
        if (CBOSU_TIMED(a)) a->times[i] = t1 - t0;
    }
    ctl_free(&k);
    return 0;
}

#define LOOPS(name)                                                              \
    int cbosu_neighbor_##name(cbosu_args *a) { return blocking(a, OP_##name); }  \
    OVERLAP_LOOP(cbosu_neighbor_, i##name, OP_##name)
CB_NEIGHBOR_COLLECTIVES(LOOPS)
