/* OSU's nonblocking collectives' timed loops (OMB 7.4's osu_i*; the procedure in
 * osu_overlap.h, the arguments as commbench/suites/osu/collective_calls.py gives them to
 * mpi4py): root 0, MPI_SUM, `count` elements per block; v forms the counts and
 * displacements of the control block; ireduce_scatter_block count / P per rank. */
#include "osu.h"
#include "osu_overlap.h"

CBOSU_EXPORTS(cbosu_nonblocking_)

enum { IALLGATHER, IALLGATHERV, IALLREDUCE, IALLTOALL, IALLTOALLV, IALLTOALLW, IBARRIER, IBCAST, IGATHER,
       IGATHERV, IREDUCE, IREDUCE_SCATTER, IREDUCE_SCATTER_BLOCK, ISCATTER, ISCATTERV };

static int post(cbosu_args *a, const nbc_ctl *k, int call, MPI_Request *req)
{
    MPI_Comm comm = k->comm;
    MPI_Datatype t = CBOSU_TYPE(a);
    int c = a->count, p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    char *s = (char *)a->sbuf, *r = (char *)a->rbuf;
    switch (call) {
    case IALLGATHER: return MPI_Iallgather(s, c, t, r, c, t, comm, req);
    case IALLGATHERV: return MPI_Iallgatherv(s, c, t, r, k->rcnt, k->rdsp, t, comm, req);
    case IALLREDUCE: return MPI_Iallreduce(s, r, c, t, MPI_SUM, comm, req);
    case IALLTOALL: return MPI_Ialltoall(s, c, t, r, c, t, comm, req);
    case IALLTOALLV: return MPI_Ialltoallv(s, k->scnt, k->sdsp, t, r, k->rcnt, k->rdsp, t, comm, req);
    case IALLTOALLW: return MPI_Ialltoallw(s, k->scnt, k->sbd, k->sts, r, k->rcnt, k->rbd, k->rts, comm, req);
    case IBARRIER: return MPI_Ibarrier(comm, req);
    case IBCAST: return MPI_Ibcast(me == 0 ? s : r, c, t, 0, comm, req);
    case IGATHER: return MPI_Igather(s, c, t, r, c, t, 0, comm, req);
    case IGATHERV: return MPI_Igatherv(s, c, t, r, k->rcnt, k->rdsp, t, 0, comm, req);
    case IREDUCE: return MPI_Ireduce(s, r, c, t, MPI_SUM, 0, comm, req);
    case IREDUCE_SCATTER: return MPI_Ireduce_scatter(s, r, k->rcnt, t, MPI_SUM, comm, req);
    case IREDUCE_SCATTER_BLOCK: return MPI_Ireduce_scatter_block(s, r, c / p, t, MPI_SUM, comm, req);
    case ISCATTER: return MPI_Iscatter(s, c, t, r, c, t, 0, comm, req);
    case ISCATTERV: return MPI_Iscatterv(s, k->scnt, k->sdsp, t, r, c, t, 0, comm, req);
    }
    return MPI_ERR_OTHER;
}

OVERLAP_LOOP(cbosu_nonblocking_, iallgather, IALLGATHER)
OVERLAP_LOOP(cbosu_nonblocking_, iallgatherv, IALLGATHERV)
OVERLAP_LOOP(cbosu_nonblocking_, iallreduce, IALLREDUCE)
OVERLAP_LOOP(cbosu_nonblocking_, ialltoall, IALLTOALL)
OVERLAP_LOOP(cbosu_nonblocking_, ialltoallv, IALLTOALLV)
OVERLAP_LOOP(cbosu_nonblocking_, ialltoallw, IALLTOALLW)
OVERLAP_LOOP(cbosu_nonblocking_, ibarrier, IBARRIER)
OVERLAP_LOOP(cbosu_nonblocking_, ibcast, IBCAST)
OVERLAP_LOOP(cbosu_nonblocking_, igather, IGATHER)
OVERLAP_LOOP(cbosu_nonblocking_, igatherv, IGATHERV)
OVERLAP_LOOP(cbosu_nonblocking_, ireduce, IREDUCE)
OVERLAP_LOOP(cbosu_nonblocking_, ireduce_scatter, IREDUCE_SCATTER)
OVERLAP_LOOP(cbosu_nonblocking_, ireduce_scatter_block, IREDUCE_SCATTER_BLOCK)
OVERLAP_LOOP(cbosu_nonblocking_, iscatter, ISCATTER)
OVERLAP_LOOP(cbosu_nonblocking_, iscatterv, ISCATTERV)
