/* Every MPI collective operation that commbench's C loops time, its call written once:
 * one row an operation, giving its blocking function, its nonblocking one (MPI_I...)
 * and the blocking call's arguments; the nonblocking call takes the same arguments
 * and then the request. IMB's loops (kernels.c: the IMB-MPI1 and IMB-NBC rows), OSU's
 * (osu_coll.c, osu_nonblocking.c, osu_neighbor.c) and IMB-MT's (mt.c) expand these rows.
 *
 *     CB_BLOCKING(allgatherv)     MPI_Allgatherv(s, c, dt, r, rcnt, rdsp, dt, comm)
 *     CB_NONBLOCKING(allgatherv)  MPI_Iallgatherv(s, c, dt, r, rcnt, rdsp, dt, comm, rq)
 *
 * The arguments are fixed local names, which every user defines before the expansion,
 * bound to what its own loop passes (IMB's root rotates and its v forms use one array of
 * counts and one of displacements for both sides; OSU's root is 0 and its
 * reduce_scatter_block receives count / P; ...):
 *   s, r        the send and receive buffers
 *   c           the count of one block: both counts of the uniform forms, the send count
 *               of (all)gatherv, the receive count of scatterv
 *   bcnt        reduce_scatter_block's receive count
 *   scnt, sdsp  per-rank send counts and displacements (elements)
 *   rcnt, rdsp  per-rank receive counts and displacements (reduce_scatter: rcnt only)
 *   sbd, rbd    alltoallw's per-rank send and receive displacements in bytes (int)
 *   sba, rba    neighbor_alltoallw's, as MPI_Aint
 *   sts, rts    alltoallw's per-rank send and receive datatypes
 *   dt          the datatype
 *   op          the reduction
 *   root, me    the root and this rank (bcast: the root sends from s, the others
 *               receive into r)
 *   comm        the communicator (a distributed graph for the neighbourhood forms)
 *   rq          the MPI_Request * a nonblocking call fills
 * A row names only what its call uses, so a file binds only what its rows need. */
#ifndef COMMBENCH_COLLECTIVES_H
#define COMMBENCH_COLLECTIVES_H

/* ---- one row an operation: CB_COLL_<op>(F) is F(blocking, nonblocking, arguments...) */
#define CB_COLL_allreduce(F)  F(MPI_Allreduce, MPI_Iallreduce, s, r, c, dt, op, comm)
#define CB_COLL_reduce(F)     F(MPI_Reduce, MPI_Ireduce, s, r, c, dt, op, root, comm)
#define CB_COLL_reduce_scatter(F) \
    F(MPI_Reduce_scatter, MPI_Ireduce_scatter, s, r, rcnt, dt, op, comm)
#define CB_COLL_reduce_scatter_block(F) \
    F(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, s, r, bcnt, dt, op, comm)
#define CB_COLL_bcast(F)      F(MPI_Bcast, MPI_Ibcast, root == me ? s : r, c, dt, root, comm)
#define CB_COLL_allgather(F)  F(MPI_Allgather, MPI_Iallgather, s, c, dt, r, c, dt, comm)
#define CB_COLL_allgatherv(F) \
    F(MPI_Allgatherv, MPI_Iallgatherv, s, c, dt, r, rcnt, rdsp, dt, comm)
#define CB_COLL_gather(F)     F(MPI_Gather, MPI_Igather, s, c, dt, r, c, dt, root, comm)
#define CB_COLL_gatherv(F) \
    F(MPI_Gatherv, MPI_Igatherv, s, c, dt, r, rcnt, rdsp, dt, root, comm)
#define CB_COLL_scatter(F)    F(MPI_Scatter, MPI_Iscatter, s, c, dt, r, c, dt, root, comm)
#define CB_COLL_scatterv(F) \
    F(MPI_Scatterv, MPI_Iscatterv, s, scnt, sdsp, dt, r, c, dt, root, comm)
#define CB_COLL_alltoall(F)   F(MPI_Alltoall, MPI_Ialltoall, s, c, dt, r, c, dt, comm)
#define CB_COLL_alltoallv(F) \
    F(MPI_Alltoallv, MPI_Ialltoallv, s, scnt, sdsp, dt, r, rcnt, rdsp, dt, comm)
#define CB_COLL_alltoallw(F) \
    F(MPI_Alltoallw, MPI_Ialltoallw, s, scnt, sbd, sts, r, rcnt, rbd, rts, comm)
#define CB_COLL_barrier(F)    F(MPI_Barrier, MPI_Ibarrier, comm)
#define CB_COLL_scan(F)       F(MPI_Scan, MPI_Iscan, s, r, c, dt, op, comm)
#define CB_COLL_exscan(F)     F(MPI_Exscan, MPI_Iexscan, s, r, c, dt, op, comm)
/* the neighbourhood collectives: comm is the graph, the counts per destination / source */
#define CB_COLL_neighbor_allgather(F) \
    F(MPI_Neighbor_allgather, MPI_Ineighbor_allgather, s, c, dt, r, c, dt, comm)
#define CB_COLL_neighbor_allgatherv(F) \
    F(MPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv, s, c, dt, r, rcnt, rdsp, dt, comm)
#define CB_COLL_neighbor_alltoall(F) \
    F(MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall, s, c, dt, r, c, dt, comm)
#define CB_COLL_neighbor_alltoallv(F) \
    F(MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv, s, scnt, sdsp, dt, r, rcnt, rdsp, dt, \
      comm)
#define CB_COLL_neighbor_alltoallw(F) \
    F(MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw, s, scnt, sba, sts, r, rcnt, rba, rts, \
      comm)

/* ---- the rows, for a file that expands them all: X(op) each; the counted ones move
 * data of counts and displacements, alltoallw also needs its arrays of datatypes, and
 * barrier moves nothing */
#define CB_COUNTED_COLLECTIVES(X) \
    X(allreduce) X(reduce) X(reduce_scatter) X(reduce_scatter_block) X(bcast) \
    X(allgather) X(allgatherv) X(gather) X(gatherv) X(scatter) X(scatterv) \
    X(alltoall) X(alltoallv) X(scan) X(exscan)
#define CB_COLLECTIVES(X) CB_COUNTED_COLLECTIVES(X) X(alltoallw) X(barrier)
#define CB_NEIGHBOR_COLLECTIVES(X) \
    X(neighbor_allgather) X(neighbor_allgatherv) X(neighbor_alltoall) \
    X(neighbor_alltoallv) X(neighbor_alltoallw)

/* ---- the calls of operation `op`, an expression each (MPI's return code) */
#define CB_BLOCKING(op)    CB_COLL_##op(CB_BLOCKING_CALL_)
#define CB_NONBLOCKING(op) CB_COLL_##op(CB_NONBLOCKING_CALL_)
#define CB_BLOCKING_CALL_(blocking, nonblocking, ...)    blocking(__VA_ARGS__)
#define CB_NONBLOCKING_CALL_(blocking, nonblocking, ...) nonblocking(__VA_ARGS__, rq)

#endif
