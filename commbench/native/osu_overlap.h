/* OSU 7.4's overlap procedure for the nonblocking collectives (osu_nonblocking.c) and
 * the nonblocking neighborhood collectives (osu_neighbor.c), the C form of
 * commbench/suites/osu/nonblocking.py's loop (its docstring says what the binaries do).
 *
 * A file includes this header, defines `static int post(cbosu_args *a, const nbc_ctl *k,
 * int call, MPI_Request *req)` for its calls, and exports one loop per call with
 * OVERLAP_LOOP(prefix, name, CALL). The control block (abuf: a cbosu_overlap_ctl of
 * osu.h, written by collective_calls.control) gives the calls their arguments (counts,
 * displacements, the communicator) and takes the means back (out). Of cbosu_args:
 * `warmup` the overlap rounds' warm-up, `tests` the MPI_Test calls (-t), `between` 1 for
 * an MPI_Barrier after each pure-communication round (osu_ibarrier has none), `phases`
 * the timed loop's phases: 0 both; for -c's checked rounds (nonblocking_loops.check_rounds) 1
 * the pure rounds only, 2 the overlap rounds only, computing for out[0] seconds, each
 * after `warmup` untimed calls (-u: MPI_Barrier, the call, MPI_Wait) and an MPI_Barrier. */
#ifndef COMMBENCH_OSU_OVERLAP_H
#define COMMBENCH_OSU_OVERLAP_H
#include <stdlib.h>
#include "osu.h"

typedef struct {
    MPI_Comm comm;                /* the call's communicator */
    const int *scnt, *sdsp, *sbd; /* per destination */
    const int *rcnt, *rdsp, *rbd; /* per source */
    int kout, kin, rs_count;
    MPI_Datatype *sts, *rts;      /* alltoallw: the type repeated */
    MPI_Aint *sba, *rba;          /* neighbor_alltoallw: the byte displacements as MPI_Aint */
    double *out;
} nbc_ctl;

static void ctl_free(nbc_ctl *k)
{
    free(k->sts);
    free(k->rts);
    free(k->sba);
    free(k->rba);
}

static int ctl_of(cbosu_args *a, nbc_ctl *k)
{
    const cbosu_overlap_ctl *c = a->abuf;
    const int *v = c->v;
    k->rs_count = (int)c->rs_count;
    k->comm = *(const MPI_Comm *)c->comm;
    k->kout = (int)c->kout;
    k->kin = (int)c->kin;
    k->scnt = v, k->sdsp = v + k->kout, k->sbd = v + 2 * k->kout;
    k->rcnt = v + 3 * k->kout, k->rdsp = k->rcnt + k->kin, k->rbd = k->rcnt + 2 * k->kin;
    k->out = c->out;
    k->sts = malloc(sizeof(MPI_Datatype) * (size_t)(k->kout + 1));
    k->rts = malloc(sizeof(MPI_Datatype) * (size_t)(k->kin + 1));
    k->sba = malloc(sizeof(MPI_Aint) * (size_t)(k->kout + 1));
    k->rba = malloc(sizeof(MPI_Aint) * (size_t)(k->kin + 1));
    if (!k->sts || !k->rts || !k->sba || !k->rba) {
        ctl_free(k);
        return -1;
    }
    for (int i = 0; i < k->kout; i++) k->sts[i] = CBOSU_TYPE(a), k->sba[i] = k->sbd[i];
    for (int i = 0; i < k->kin; i++) k->rts[i] = CBOSU_TYPE(a), k->rba[i] = k->rbd[i];
    return 0;
}

/* The dummy computation as OMB 7.4 makes it: blocks of 25 x 25 single-precision
 * multiply-adds (x = 1, y = 1, a = 2), each timed alone, until the blocks' own time
 * reaches `sec`; so it lasts `sec` plus the last block's overshoot and the time between
 * blocks. The arrays have external linkage so that the compiler keeps the work. */
#define CBOSU_DIM 25
float cbosu_dummy_a[CBOSU_DIM][CBOSU_DIM], cbosu_dummy_x[CBOSU_DIM], cbosu_dummy_y[CBOSU_DIM];

static void dummy_block(void)
{
    for (int i = 0; i < CBOSU_DIM; i++)
        for (int j = 0; j < CBOSU_DIM; j++)
            cbosu_dummy_x[i] += cbosu_dummy_a[i][j] * cbosu_dummy_a[j][i] + cbosu_dummy_y[j];
}

static void compute(double sec)
{
    if (cbosu_dummy_a[0][0] != 2.0f)
        for (int i = 0; i < CBOSU_DIM; i++) {
            cbosu_dummy_x[i] = cbosu_dummy_y[i] = 1.0f;
            for (int j = 0; j < CBOSU_DIM; j++) cbosu_dummy_a[i][j] = 2.0f;
        }
    double spent = 0.0;
    while (spent < sec) {
        double t1 = MPI_Wtime();
        dummy_block();
        spent += MPI_Wtime() - t1;
    }
}

/* -t tests: the computation in `tests` pieces, an MPI_Test after each; their seconds. */
static double computation(MPI_Request *req, double sec, int tests)
{
    if (!tests) {
        compute(sec);
        return 0.0;
    }
    double spent = 0.0;
    int flag;
    for (int j = 0; j < tests; j++) {
        compute(sec / tests);
        double t1 = MPI_Wtime();
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        spent += MPI_Wtime() - t1;
    }
    return spent;
}

static int post(cbosu_args *a, const nbc_ctl *k, int call, MPI_Request *req);

/* Untimed (times NULL): n rounds of the call, MPI_Wait, MPI_Barrier. Timed: n such rounds
 * timed (Pure Comm.), two barriers, then a->warmup + n overlap rounds. */
static int overlap(cbosu_args *a, int call)
{
    nbc_ctl k;
    if (ctl_of(a, &k) != 0) return -1;
    MPI_Comm world = CBOSU_COMM(a);
    MPI_Request req;
    int between = a->between;
    if (!a->times) {
        for (int i = 0; i < a->n; i++) {
            post(a, &k, call, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (between) MPI_Barrier(world);
        }
        ctl_free(&k);
        return 0;
    }
    double pure = 0.0, sum[4] = {0.0, 0.0, 0.0, 0.0};
    int phases = a->phases;
    if (phases) { /* -c: the -u untimed calls, a barrier, then the checked round(s) */
        for (int j = 0; j < a->warmup; j++) {
            MPI_Barrier(world);
            post(a, &k, call, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        MPI_Barrier(world);
    }
    if (phases == 2) {
        pure = k.out[0];
    } else {
        for (int i = 0; i < a->n; i++) {
            double t0 = MPI_Wtime();
            post(a, &k, call, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            a->times[i] = MPI_Wtime() - t0;
            pure += a->times[i];
            if (between) MPI_Barrier(world);
        }
        k.out[0] = pure = a->n ? pure / a->n : 0.0;
        if (phases == 1) {
            ctl_free(&k);
            return 0;
        }
        MPI_Barrier(world);
        MPI_Barrier(world);
    }
    int warm = phases ? 0 : a->warmup, tests = a->tests;
    for (int i = -warm; i < a->n; i++) {
        double t_start = MPI_Wtime(), t0 = MPI_Wtime();
        post(a, &k, call, &req);
        double init = MPI_Wtime() - t0;
        t0 = MPI_Wtime();
        double test = computation(&req, pure, tests);
        double cpu = MPI_Wtime() - t0;
        t0 = MPI_Wtime();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        double wait = MPI_Wtime() - t0, t_stop = MPI_Wtime();
        if (i >= 0) {
            a->times[i] = t_stop - t_start;
            sum[0] += cpu, sum[1] += init, sum[2] += test, sum[3] += wait;
        }
        MPI_Barrier(world);
    }
    for (int j = 0; j < 4; j++) k.out[j + 1] = a->n ? sum[j] / a->n : 0.0;
    ctl_free(&k);
    return 0;
}

#define OVERLAP_LOOP(prefix, name, CALL)                                              \
    int prefix##name(cbosu_args *a) { return overlap(a, CALL); }

#endif
