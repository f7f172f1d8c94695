/* OSU blocking and persistent collectives' timed loops (commbench/suites/osu/blocking.py
 * declares them and runs the same calls in mpi4py). One function per program,
 * cbosu_blocking_<name>, all through run(): every rank times each iteration alone;
 * the persistent forms make the request (MPI_<Coll>_init) before the loop, untimed,
 * and time MPI_Start + MPI_Wait. sbuf and rbuf hold p blocks of count elements;
 * roots are rank 0, reductions MPI_SUM. 0 on success, -1 when memory is short. */
#include <stdlib.h>
#include "osu.h"

CBOSU_EXPORTS(cbosu_blocking_)

enum { ALLREDUCE, REDUCE, RSCAT, RSCATB, BCAST, ALLGATHER, ALLGATHERV, GATHER, GATHERV, SCATTER, SCATTERV,
       ALLTOALL, ALLTOALLV, ALLTOALLW, BARRIER };

typedef struct { int *cnts, *displs, *bdispls; MPI_Datatype *types; } vecs;

static int call(int k, cbosu_args *a, vecs *v, MPI_Request *req)
{
    MPI_Comm cm = CBOSU_COMM(a);
    MPI_Datatype t = CBOSU_TYPE(a);
    MPI_Info i = MPI_INFO_NULL;
    void *s = a->sbuf, *r = a->rbuf;
    int c = a->count, me;
    MPI_Comm_rank(cm, &me);
    if (k == BCAST && me != 0) s = r;
#define P(call_, init_) return req ? init_ : call_
    switch (k) {
    case ALLREDUCE: P(MPI_Allreduce(s, r, c, t, MPI_SUM, cm), MPI_Allreduce_init(s, r, c, t, MPI_SUM, cm, i, req));
    case REDUCE: P(MPI_Reduce(s, r, c, t, MPI_SUM, 0, cm), MPI_Reduce_init(s, r, c, t, MPI_SUM, 0, cm, i, req));
    case RSCAT: P(MPI_Reduce_scatter(s, r, v->cnts, t, MPI_SUM, cm),
                  MPI_Reduce_scatter_init(s, r, v->cnts, t, MPI_SUM, cm, i, req));
    case RSCATB: P(MPI_Reduce_scatter_block(s, r, c, t, MPI_SUM, cm),
                   MPI_Reduce_scatter_block_init(s, r, c, t, MPI_SUM, cm, i, req));
    case BCAST: P(MPI_Bcast(s, c, t, 0, cm), MPI_Bcast_init(s, c, t, 0, cm, i, req));
    case ALLGATHER: P(MPI_Allgather(s, c, t, r, c, t, cm), MPI_Allgather_init(s, c, t, r, c, t, cm, i, req));
    case ALLGATHERV: P(MPI_Allgatherv(s, c, t, r, v->cnts, v->displs, t, cm),
                       MPI_Allgatherv_init(s, c, t, r, v->cnts, v->displs, t, cm, i, req));
    case GATHER: P(MPI_Gather(s, c, t, r, c, t, 0, cm), MPI_Gather_init(s, c, t, r, c, t, 0, cm, i, req));
    case GATHERV: P(MPI_Gatherv(s, c, t, r, v->cnts, v->displs, t, 0, cm),
                    MPI_Gatherv_init(s, c, t, r, v->cnts, v->displs, t, 0, cm, i, req));
    case SCATTER: P(MPI_Scatter(s, c, t, r, c, t, 0, cm), MPI_Scatter_init(s, c, t, r, c, t, 0, cm, i, req));
    case SCATTERV: P(MPI_Scatterv(s, v->cnts, v->displs, t, r, c, t, 0, cm),
                     MPI_Scatterv_init(s, v->cnts, v->displs, t, r, c, t, 0, cm, i, req));
    case ALLTOALL: P(MPI_Alltoall(s, c, t, r, c, t, cm), MPI_Alltoall_init(s, c, t, r, c, t, cm, i, req));
    case ALLTOALLV: P(MPI_Alltoallv(s, v->cnts, v->displs, t, r, v->cnts, v->displs, t, cm),
                      MPI_Alltoallv_init(s, v->cnts, v->displs, t, r, v->cnts, v->displs, t, cm, i, req));
    case ALLTOALLW: P(MPI_Alltoallw(s, v->cnts, v->bdispls, v->types, r, v->cnts, v->bdispls, v->types, cm),
                      MPI_Alltoallw_init(s, v->cnts, v->bdispls, v->types, r, v->cnts, v->bdispls, v->types, cm,
                                         i, req));
    default: P(MPI_Barrier(cm), MPI_Barrier_init(cm, i, req));
    }
#undef P
}

static int run(cbosu_args *a, int k, int persistent)
{
    MPI_Comm cm = CBOSU_COMM(a);
    int p, tsize, rc = 0;
    MPI_Comm_size(cm, &p);
    MPI_Type_size(CBOSU_TYPE(a), &tsize);
    vecs v = {malloc(sizeof(int) * p), malloc(sizeof(int) * p), malloc(sizeof(int) * p),
              malloc(sizeof(MPI_Datatype) * p)};
    if (!v.cnts || !v.displs || !v.bdispls || !v.types) { rc = -1; goto out; }
    for (int j = 0; j < p; j++) {
        v.cnts[j] = a->count;
        v.displs[j] = j * a->count;
        v.bdispls[j] = j * a->count * tsize;
        v.types[j] = CBOSU_TYPE(a);
    }
    MPI_Request req = MPI_REQUEST_NULL;
    if (persistent) call(k, a, &v, &req);
    for (int j = 0; j < a->n; j++) {
        double t0 = MPI_Wtime();
        if (persistent) {
            MPI_Start(&req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            call(k, a, &v, NULL);
        }
        if (CBOSU_TIMED(a)) a->times[j] = MPI_Wtime() - t0;
    }
    if (persistent) MPI_Request_free(&req);
out:
    free(v.cnts); free(v.displs); free(v.bdispls); free(v.types);
    return rc;
}

#define LOOP(name, k)                                                                  \
    int cbosu_blocking_##name(cbosu_args *a) { return run(a, k, 0); }                 \
    int cbosu_blocking_##name##_persistent(cbosu_args *a) { return run(a, k, 1); }
LOOP(allreduce, ALLREDUCE)
LOOP(reduce, REDUCE)
LOOP(reduce_scatter, RSCAT)
LOOP(reduce_scatter_block, RSCATB)
LOOP(bcast, BCAST)
LOOP(allgather, ALLGATHER)
LOOP(allgatherv, ALLGATHERV)
LOOP(gather, GATHER)
LOOP(gatherv, GATHERV)
LOOP(scatter, SCATTER)
LOOP(scatterv, SCATTERV)
LOOP(alltoall, ALLTOALL)
LOOP(alltoallv, ALLTOALLV)
LOOP(alltoallw, ALLTOALLW)
LOOP(barrier, BARRIER)
