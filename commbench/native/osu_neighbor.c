/* OSU's neighborhood collectives' timed loops (OMB 7.4's osu_neighbor_* and
 * osu_ineighbor_*; commbench/suites/osu/neighbor.py declares them). The calls run on
 * the distributed-graph communicator of the control block (osu_overlap.h), sending
 * `count` elements per destination and receiving as many per source.
 *
 * Blocking: per round MPI_Barrier (the run's communicator), MPI_Wtime, the call,
 * MPI_Wtime, on every rank. Nonblocking: the overlap procedure of osu_overlap.h. */
#include "osu.h"
#include "osu_overlap.h"

CBOSU_EXPORTS(cbosu_neighbor_)

enum { ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, ALLTOALLW };

/* The nonblocking call (req) or, with req NULL, the blocking one. */
static int post(cbosu_args *a, const nbc_ctl *k, int call, MPI_Request *req)
{
    MPI_Comm g = k->comm;
    MPI_Datatype t = CBOSU_TYPE(a);
    int c = a->count;
    char *s = (char *)a->sbuf, *r = (char *)a->rbuf;
    switch (call + (req ? 10 : 0)) {
    case ALLGATHER: return MPI_Neighbor_allgather(s, c, t, r, c, t, g);
    case ALLGATHERV: return MPI_Neighbor_allgatherv(s, c, t, r, k->rcnt, k->rdsp, t, g);
    case ALLTOALL: return MPI_Neighbor_alltoall(s, c, t, r, c, t, g);
    case ALLTOALLV: return MPI_Neighbor_alltoallv(s, k->scnt, k->sdsp, t, r, k->rcnt, k->rdsp, t, g);
    case ALLTOALLW: return MPI_Neighbor_alltoallw(s, k->scnt, k->sba, k->sts, r, k->rcnt, k->rba, k->rts, g);
    case 10 + ALLGATHER: return MPI_Ineighbor_allgather(s, c, t, r, c, t, g, req);
    case 10 + ALLGATHERV: return MPI_Ineighbor_allgatherv(s, c, t, r, k->rcnt, k->rdsp, t, g, req);
    case 10 + ALLTOALL: return MPI_Ineighbor_alltoall(s, c, t, r, c, t, g, req);
    case 10 + ALLTOALLV:
        return MPI_Ineighbor_alltoallv(s, k->scnt, k->sdsp, t, r, k->rcnt, k->rdsp, t, g, req);
    case 10 + ALLTOALLW:
        return MPI_Ineighbor_alltoallw(s, k->scnt, k->sba, k->sts, r, k->rcnt, k->rba, k->rts, g, req);
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

#define BLOCKING_LOOP(name, CALL) \
    int cbosu_neighbor_##name(cbosu_args *a) { return blocking(a, CALL); }

BLOCKING_LOOP(neighbor_allgather, ALLGATHER)
BLOCKING_LOOP(neighbor_allgatherv, ALLGATHERV)
BLOCKING_LOOP(neighbor_alltoall, ALLTOALL)
BLOCKING_LOOP(neighbor_alltoallv, ALLTOALLV)
BLOCKING_LOOP(neighbor_alltoallw, ALLTOALLW)
OVERLAP_LOOP(cbosu_neighbor_, ineighbor_allgather, ALLGATHER)
OVERLAP_LOOP(cbosu_neighbor_, ineighbor_allgatherv, ALLGATHERV)
OVERLAP_LOOP(cbosu_neighbor_, ineighbor_alltoall, ALLTOALL)
OVERLAP_LOOP(cbosu_neighbor_, ineighbor_alltoallv, ALLTOALLV)
OVERLAP_LOOP(cbosu_neighbor_, ineighbor_alltoallw, ALLTOALLW)
