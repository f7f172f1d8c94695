/* OSU one-sided timed loops (OMB 7.4's procedures, written from the calls the
 * binaries make; commbench/suites/osu/onesided.py declares the nine programs, sets
 * up the windows and runs the same calls in mpi4py). Three loops: latency (put,
 * get, acc, get_acc, fop and cas latency), bw (put_bw, get_bw) and bibw (put_bibw).
 *
 * Besides cbosu_args (osu.h), a loop reads its control block from `abuf`: a
 * cbosu_rma_ctl (osu.h), which onesided_loops.control_block fills. On the timing rank with
 * `times` set it also stores the seconds from before the first timed iteration to
 * after the last in `total` (OSU's t_end - t_start, which its main column divides). */
#include "osu.h"

enum { S_LOCK, S_FLUSH, S_FLUSH_LOCAL, S_LOCK_ALL, S_PSCW, S_FENCE };
enum { O_PUT, O_GET, O_ACC, O_GET_ACC, O_FOP, O_CAS };

typedef cbosu_rma_ctl rma_ctl;

CBOSU_EXPORTS(cbosu_rma_)

#define CTL(a) ((rma_ctl *)(a)->abuf)
#define WIN(c) (*(const MPI_Win *)(c)->win)
#define GROUP(c) (*(const MPI_Group *)(c)->group)
#define PTR(x) ((char *)(x))

/* One operation of the benchmark to `peer` at displacement `off` bytes past the first. */
static inline void rma_op(const rma_ctl *c, const cbosu_args *a, MPI_Win w, MPI_Aint off)
{
    MPI_Datatype t = CBOSU_TYPE(a);
    int n = a->count, p = a->peer;
    MPI_Aint d = (MPI_Aint)c->disp + off;
    switch (c->op) {
    case O_PUT: MPI_Put(PTR(c->origin) + off, n, t, p, d, n, t, w); break;
    case O_GET: MPI_Get(PTR(c->result) + off, n, t, p, d, n, t, w); break;
    case O_ACC: MPI_Accumulate(PTR(c->origin), n, t, p, d, n, t, MPI_SUM, w); break;
    case O_GET_ACC:
        MPI_Get_accumulate(PTR(c->origin), n, t, PTR(c->result), n, t, p, d, n, t, MPI_SUM, w);
        break;
    case O_FOP: MPI_Fetch_and_op(PTR(c->origin), PTR(c->result), t, p, d, MPI_SUM, w); break;
    default: MPI_Compare_and_swap(PTR(c->origin), PTR(c->compare), PTR(c->result), t, p, d, w); break;
    }
}

static inline void window_ops(const rma_ctl *c, const cbosu_args *a, MPI_Win w)
{
    for (int j = 0; j < a->window; j++) rma_op(c, a, w, (MPI_Aint)j * c->stride);
}

/* The origin's timed loop of the latency and bandwidth programs: n iterations of one
 * epoch (body), each timed, and the whole loop (OSU's main column). Static inline with a
 * constant body: the compiler inlines the call, so no indirect call enters the loop. */
static inline int timed_origin(rma_ctl *c, const cbosu_args *a, MPI_Win w, int pscw,
                               void (*body)(const rma_ctl *, const cbosu_args *, MPI_Win))
{
    double t_start = 0.0;
    for (int i = 0; i < a->n; i++) {
        if (pscw) MPI_Win_start(GROUP(c), 0, w);
        if (i == 0 && a->times) t_start = MPI_Wtime();
        double t0 = a->times ? MPI_Wtime() : 0.0;
        body(c, a, w);
        if (a->times) a->times[i] = MPI_Wtime() - t0;
    }
    if (a->times) c->total = MPI_Wtime() - t_start;
    return 0;
}

/* latency, origin rank 0: per sync, what one iteration calls (pscw: after MPI_Win_start,
 * which OSU leaves outside the iteration's time); the peer's side in pscw and fence. */
static inline void latency_origin(const rma_ctl *c, const cbosu_args *a, MPI_Win w)
{
    int p = a->peer, kind = c->exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
    switch (c->sync) {
    case S_LOCK: MPI_Win_lock(kind, p, 0, w); rma_op(c, a, w, 0); MPI_Win_unlock(p, w); break;
    case S_FLUSH: rma_op(c, a, w, 0); MPI_Win_flush(p, w); break;
    case S_FLUSH_LOCAL: rma_op(c, a, w, 0); MPI_Win_flush_local(p, w); break;
    case S_LOCK_ALL: MPI_Win_lock_all(0, w); rma_op(c, a, w, 0); MPI_Win_unlock_all(w); break;
    case S_PSCW:
        rma_op(c, a, w, 0);
        MPI_Win_complete(w);
        MPI_Win_post(GROUP(c), 0, w);
        MPI_Win_wait(w);
        break;
    default: MPI_Win_fence(0, w); rma_op(c, a, w, 0); MPI_Win_fence(0, w); MPI_Win_fence(0, w); break;
    }
}

int cbosu_rma_latency(cbosu_args *a)
{
    rma_ctl *c = CTL(a);
    MPI_Win w = WIN(c);
    int pscw = c->sync == S_PSCW;
    if (!a->timer) { /* rank 1: only pscw and fence have a side here */
        for (int i = 0; i < a->n && pscw; i++) {
            MPI_Win_post(GROUP(c), 0, w);
            MPI_Win_wait(w);
            MPI_Win_start(GROUP(c), 0, w);
            rma_op(c, a, w, 0);
            MPI_Win_complete(w);
        }
        for (int i = 0; i < a->n && c->sync == S_FENCE; i++) {
            MPI_Win_fence(0, w);
            MPI_Win_fence(0, w);
            rma_op(c, a, w, 0);
            MPI_Win_fence(0, w);
        }
        return 0;
    }
    return timed_origin(c, a, w, pscw, latency_origin);
}

static inline void bw_origin(const rma_ctl *c, const cbosu_args *a, MPI_Win w)
{
    int p = a->peer;
    switch (c->sync) {
    case S_LOCK: MPI_Win_lock(MPI_LOCK_SHARED, p, 0, w); window_ops(c, a, w); MPI_Win_unlock(p, w); break;
    case S_FLUSH: window_ops(c, a, w); MPI_Win_flush(p, w); break;
    case S_FLUSH_LOCAL: window_ops(c, a, w); MPI_Win_flush_local(p, w); break;
    case S_LOCK_ALL: MPI_Win_lock_all(0, w); window_ops(c, a, w); MPI_Win_unlock_all(w); break;
    case S_PSCW: window_ops(c, a, w); MPI_Win_complete(w); break;
    default: MPI_Win_fence(0, w); window_ops(c, a, w); MPI_Win_fence(0, w); break;
    }
}

/* put_bw, get_bw: rank 0 issues -W operations per iteration, rank 1 is only the target
 * (pscw: it posts and waits; fence: it fences twice). */
int cbosu_rma_bw(cbosu_args *a)
{
    rma_ctl *c = CTL(a);
    MPI_Win w = WIN(c);
    int pscw = c->sync == S_PSCW;
    if (!a->timer) {
        for (int i = 0; i < a->n && pscw; i++) {
            MPI_Win_post(GROUP(c), 0, w);
            MPI_Win_wait(w);
        }
        for (int i = 0; i < a->n && c->sync == S_FENCE; i++) {
            MPI_Win_fence(0, w);
            MPI_Win_fence(0, w);
        }
        return 0;
    }
    return timed_origin(c, a, w, pscw, bw_origin);
}

/* put_bibw: both ranks put -W messages into each other per iteration (pscw: post, start,
 * the puts, complete, wait; fence: fence, the puts, fence); rank 0 times. */
int cbosu_rma_bibw(cbosu_args *a)
{
    rma_ctl *c = CTL(a);
    MPI_Win w = WIN(c);
    int timed = CBOSU_TIMED(a);
    double t_start = timed ? MPI_Wtime() : 0.0;
    for (int i = 0; i < a->n; i++) {
        double t0 = timed ? MPI_Wtime() : 0.0;
        if (c->sync == S_PSCW) {
            MPI_Win_post(GROUP(c), 0, w);
            MPI_Win_start(GROUP(c), 0, w);
            window_ops(c, a, w);
            MPI_Win_complete(w);
            MPI_Win_wait(w);
        } else {
            MPI_Win_fence(0, w);
            window_ops(c, a, w);
            MPI_Win_fence(0, w);
        }
        if (timed) a->times[i] = MPI_Wtime() - t0;
    }
    if (timed) c->total = MPI_Wtime() - t_start;
    return 0;
}
