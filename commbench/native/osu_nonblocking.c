/* OSU's nonblocking collectives' timed loops (OMB 7.4's osu_i*; the procedure in
 * osu_overlap.h, the arguments as commbench/suites/osu/collective_calls.py gives them to
 * mpi4py): cbosu_nonblocking_i<op> for every operation of collectives.h's table, its
 * call MPI_I<op> there; root 0, MPI_SUM, `count` elements per block; v forms the counts
 * and displacements of the control block; ireduce_scatter_block count / P per rank. */
#include "osu.h"
#include "osu_overlap.h"
#include "collectives.h"

CBOSU_EXPORTS(cbosu_nonblocking_)

#define OP_ENUM(name) OP_##name,
enum { CB_COLLECTIVES(OP_ENUM) };

/* The names collectives.h's calls use, bound in each case (what a call does not use the
 * compiler drops there, so no case loads what another needs). */
#define POST_NAMES                                                                    \
    MPI_Op op = MPI_SUM;                                                              \
    int root = 0, bcnt = c / p;                                                       \
    const int *scnt = k->scnt, *sdsp = k->sdsp, *sbd = k->sbd;                        \
    const int *rcnt = k->rcnt, *rdsp = k->rdsp, *rbd = k->rbd;                        \
    MPI_Datatype *sts = k->sts, *rts = k->rts;                                        \
    (void)op, (void)root, (void)bcnt, (void)scnt, (void)sdsp, (void)sbd, (void)rcnt;  \
    (void)rdsp, (void)rbd, (void)sts, (void)rts;
#define OP_CASE(name) case OP_##name: { POST_NAMES return CB_NONBLOCKING(name); }

/* Starts operation `call` into *rq. */
static int post(cbosu_args *a, const nbc_ctl *k, int call, MPI_Request *rq)
{
    MPI_Comm comm = k->comm;
    MPI_Datatype dt = CBOSU_TYPE(a);
    int c = a->count, p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    char *s = (char *)a->sbuf, *r = (char *)a->rbuf;
    switch (call) { CB_COLLECTIVES(OP_CASE) }
    return MPI_ERR_OTHER;
}

#define LOOP(name) OVERLAP_LOOP(cbosu_nonblocking_, i##name, OP_##name)
CB_COLLECTIVES(LOOP)
