/* commbench's native engine, part two, included by kernels.c after its own loop
 * kinds: the loop kinds of the one-sided patterns (IMB-EXT, IMB-RMA) and of the
 * nonblocking and persistent collectives (IMB-NBC, IMB-MPI4), the CPU kernel
 * their overlap measurements compute with, and the two patterns among them that
 * are written out by hand (EXT's Window, RMA's Truly_passive_put).
 *
 * Every loop mirrors one mpi4py kernel (named beside it): the same MPI calls in
 * the same order, the same synchronisation outside the timed region, the same
 * slot cycling (slot i % slots, from slot 0), the same components returned.
 * The window, the persistent requests and the buffers are Python's (the setup
 * of the benchmark created them); the check-mode verifiers read them afterwards
 * as they do after the mpi4py kernels.
 */
#include <float.h>

/* ================================================================ the CPU kernel
 *
 * IMB's CPU exploit (spec 7.6) as commbench.cpu.CpuExploit has it: y += A.x on a
 * 100 x 100 float matrix per repetition (10 x 10 under --methodology imb2021, as
 * IMB 2021.11's IMB_cpu_exploit.c), then y *= 0.5; calibrated once per
 * process (about 5e7 flops in 25 chunks, the fastest chunk gives the rate: the
 * undisturbed one), then sized to a target time: cb_cpu_init(T) chooses
 * max(1, T x rate) repetitions (none for T <= 0) and runs them once, untimed;
 * cb_cpu_run runs them again. Python calibrates it in the benchmark's setup
 * (commbench.native.calibrate_cpu), outside any timing. */
#define CB_MATRIX 100        /* the largest order: the spec's (7.6) */
static float cb_a[CB_MATRIX * CB_MATRIX], cb_x[CB_MATRIX];
float cb_cpu_y[CB_MATRIX];  /* visible outside this file: the work is never optimised away */
static double cb_cpu_rps;   /* repetitions per second; 0 until calibrated */
static int cb_cpu_n = CB_MATRIX;  /* the order in use: the methodology's (imb2021: IMB 2021's 10) */

static void cb_cpu_run(long long reps)
{
    const int m = cb_cpu_n;
    if (reps <= 0) return;
    for (long long q = 0; q < reps; q++) {
        for (int i = 0; i < m; i++) {
            const float *row = cb_a + i * m;
            float sum = 0.0f;
            for (int j = 0; j < m; j++) sum += row[j] * cb_x[j];
            cb_cpu_y[i] += sum;
        }
        __asm__ __volatile__("" ::: "memory");  /* every repetition computes anew */
    }
    for (int i = 0; i < m; i++) cb_cpu_y[i] *= 0.5f;  /* y stays bounded */
}

/* The calibrated rate of an order-m kernel (1..CB_MATRIX), repetitions per second
 * (calibrating at the first call for that order). */
double cb_cpu_calibrate(int m)
{
    if (m < 1 || m > CB_MATRIX) m = CB_MATRIX;
    if (cb_cpu_rps > 0 && m == cb_cpu_n) return cb_cpu_rps;
    cb_cpu_n = m;
    unsigned int seed = 1;
    for (int i = 0; i < m * m + m; i++) {
        seed = seed * 1103515245u + 12345u;
        float u = (float)(seed >> 8) / 16777216.0f;  /* [0, 1) */
        if (i < m * m) cb_a[i] = (u - 0.5f) / m;
        else cb_x[i - m * m] = u;
    }
    long long reps = (long long)(5e7 / (2.0 * m * m)), per = reps / 25;
    if (per < 1) per = 1;
    cb_cpu_run(10);
    double best = DBL_MAX;
    for (long long chunk = 0; chunk < reps / per; chunk++) {
        double t0 = MPI_Wtime();
        cb_cpu_run(per);
        double dt = MPI_Wtime() - t0;
        if (dt < best) best = dt;
    }
    cb_cpu_rps = (double)per / (best > 1e-9 ? best : 1e-9);
    return cb_cpu_rps;
}

/* CpuExploit.exploit(target, init=True): the repetitions for `target` seconds, run once. */
static long long cb_cpu_init(double target)
{
    if (target <= 0) return 0;
    if (cb_cpu_rps <= 0) cb_cpu_calibrate(cb_cpu_n);
    long long reps = (long long)(target * cb_cpu_rps);
    if (reps < 1) reps = 1;
    cb_cpu_run(reps);
    return reps;
}

/* nbc.cpu_target: the computation per repetition, a->cpu_factor x t_pure, capped in check mode. */
static double cb_cpu_target(const cb_args *a, double t_pure)
{
    double t = a->cpu_factor * t_pure;
    return a->cpu_cap > 0 && t > a->cpu_cap ? a->cpu_cap : t;
}

/* ================================================================ the one-sided loops */

/* Check mode (onesided.count_uses): how often each slot was the target of a repetition. */
static void cb_count_uses(const cb_args *a, long long n)
{
    if (!a->uses) return;
    long long full = n / a->slots, rest = n % a->slots, k0 = a->first % a->slots;
    for (int k = 0; k < a->slots; k++) a->uses[k] += full + ((k - k0 + a->slots) % a->slots < rest);
}

/* The end of every IMB-RMA kernel (rma.kernels._done): everyone meets in MPI_Barrier, in
 * which the targets waited while the origins worked. */
static double cb_rma_done(const cb_args *a, long long n, MPI_Comm comm, double t)
{
    MPI_Barrier(comm);
    cb_count_uses(a, n);
    return t;
}

/* The next slot, and its target displacement. */
#define NEXT_WSLOT() do { NEXT_SLOT(); disp = k ? disp + a->tstride : 0; } while (0)
/* n repetitions of `body`, slot i % slots each. */
#define CB_EACH_REP(body) for (long long i = 0; i < n; i++) { body; NEXT_WSLOT(); }

/* IMB-EXT (ext._epochs): one fence(0) ends an epoch and opens the next, or, `fenced`
 * (Accumulate under imb2021, as IMB-EXT 2021.11), each epoch fenced open and closed apart. */
#define CB_FENCE_OPEN() do { if (a->fenced) MPI_Win_fence(MPI_MODE_NOPRECEDE, win); } while (0)
#define CB_FENCE_CLOSE() MPI_Win_fence(a->fenced ? MPI_MODE_NOSUCCEED : 0, win)
#define CB_LOOP_FENCE(name, calls) \
    CB_KERNEL(name) \
    { \
        CB_LOCALS \
        double t0 = MPI_Wtime(); \
        if (a->agg) { \
            CB_FENCE_OPEN(); \
            if (a->active) CB_EACH_REP(calls) \
            CB_FENCE_CLOSE(); \
        } else if (a->active) CB_EACH_REP(CB_FENCE_OPEN(); calls; CB_FENCE_CLOSE()) \
        else for (long long i = 0; i < n; i++) { CB_FENCE_OPEN(); CB_FENCE_CLOSE(); } \
        double t = (MPI_Wtime() - t0) / (double)n; \
        cb_count_uses(a, n); \
        return t; \
    }

/* IMB-RMA's single transfers (rma.kernels.pair); a rank without a role returns -1, no time. */
#define CB_LOOP_LOCKED(name, calls, done) \
    CB_KERNEL(name) \
    { \
        CB_LOCALS \
        double t = -1.0; \
        if (a->active) { \
            MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win); \
            double t0 = MPI_Wtime(); \
            if (a->agg) { CB_EACH_REP(calls) done; } \
            else CB_EACH_REP(calls; done) \
            t = (MPI_Wtime() - t0) / (double)n; \
            MPI_Win_unlock(peer, win); \
        } \
        return cb_rma_done(a, n, comm, t); \
    }

/* IMB-RMA's one/all to all (rma.kernels.to_all): targets staggered, (me + j) % np. */
#define CB_LOOP_TO_ALL(name, calls, done) \
    CB_KERNEL(name) \
    { \
        CB_LOCALS \
        double t = -1.0; \
        if (a->active) { \
            MPI_Win_lock_all(0, win); \
            double t0 = MPI_Wtime(); \
            CB_EACH_REP(for (int j = 1; j < np; j++) { int target = (me + j) % np; calls; }) \
            done; \
            t = (MPI_Wtime() - t0) / (double)n; \
            MPI_Win_unlock_all(win); \
        } \
        return cb_rma_done(a, n, comm, t); \
    }

/* IMB-RMA's Exchange_put/get (rma.kernels.exchange). */
#define CB_LOOP_XCHG(name, calls) \
    CB_KERNEL(name) \
    { \
        CB_LOCALS \
        int two = left != right; \
        MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win); \
        if (two) MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win); \
        double t0 = MPI_Wtime(); \
        if (two) CB_EACH_REP(calls; MPI_Win_flush(left, win); MPI_Win_flush(right, win)) \
        else CB_EACH_REP(calls; MPI_Win_flush(left, win)) \
        double t = (MPI_Wtime() - t0) / (double)n; \
        MPI_Win_unlock(left, win); \
        if (two) MPI_Win_unlock(right, win); \
        return cb_rma_done(a, n, comm, t); \
    }

/* ================================================================ the nonblocking loops
 *
 * IMB-NBC and IMB-MPI4 (nbc._pure_loop, nbc.overlap_kernel, mpi4._pure_loop,
 * _overlapped_loop): the pure loop n x {start; MPI_Wait} gives t_pure (with -sync
 * each call timed alone, then a->sync barriers: CB_REPEAT). With a->ncomp == 3 the
 * overlap follows: the CPU kernel sized to this rank's t_pure, a->n_barr barriers,
 * then n x {start; compute; MPI_Wait} from call 0 again gives t_ovrl and the
 * computation's own time t_cpu; out = (t_ovrl, t_pure, t_cpu). */
#define CB_LOOP_START(name, calls) \
    CB_KERNEL(name) \
    { \
        CB_LOCALS \
        double t0 = MPI_Wtime(); \
        CB_REPEAT(calls; MPI_Wait(rq, MPI_STATUS_IGNORE), NEXT_ROOT(); NEXT_SLOT();) \
        double t_pure = (sy ? acc : MPI_Wtime() - t0) / (double)n; \
        if (a->ncomp != 3) return t_pure; \
        long long reps = cb_cpu_init(cb_cpu_target(a, t_pure)); \
        for (int b = 0; b < a->n_barr; b++) cb_sync_barrier(comm, a->imb_barrier); \
        double t_cpu = 0.0, c0; \
        k = 0; root = 0; s = a->sbuf; r = a->rbuf; acc = 0.0; \
        t0 = MPI_Wtime(); \
        CB_REPEAT(calls; c0 = MPI_Wtime(); cb_cpu_run(reps); t_cpu += MPI_Wtime() - c0; \
                  MPI_Wait(rq, MPI_STATUS_IGNORE), NEXT_ROOT(); NEXT_SLOT();) \
        a->out[0] = (sy ? acc : MPI_Wtime() - t0) / (double)n; \
        a->out[1] = t_pure; \
        a->out[2] = t_cpu / (double)n; \
        return a->out[0]; \
    }

/* ================================================================ written out by hand */

/* EXT Window (ext.window): per repetition MPI_Win_create over X bytes of the receive
 * buffer, fence, a 1-byte put to itself (X > 0), fence, MPI_Win_free. */
CB_KERNEL(ext_window)
{
    MPI_Comm comm = *(const MPI_Comm *)a->comm;
    MPI_Win w;
    int x = a->count;
    double t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        MPI_Win_create(a->rbuf, x, 1, MPI_INFO_NULL, comm, &w);
        MPI_Win_fence(0, w);
        if (x > 0) MPI_Put(a->sbuf, 1, MPI_BYTE, a->rank, 0, 1, MPI_BYTE, w);
        MPI_Win_fence(0, w);
        MPI_Win_free(&w);
    }
    return (MPI_Wtime() - t0) / (double)n;
}

/* RMA Truly_passive_put (rma.kernels.truly_passive_put): rank 0 puts and flushes, then meets
 * rank 1 in MPI_Barrier, n times while rank 1 waits in the barriers (t_pure), then
 * n times while rank 1 computes for t_pure before each barrier (t_ovrl); rank 1
 * sends back what it computed per repetition (t_cpu). out = (t_pure, t_ovrl, t_cpu)
 * on rank 0, -1 (no time) on rank 1. */
#define CB_PASSIVE_PUT MPI_Put(s, c, MPI_BYTE, peer, disp, c, MPI_BYTE, win); \
                       MPI_Win_flush(peer, win); MPI_Barrier(comm)
CB_KERNEL(rma_truly_passive_put)
{
    CB_LOCALS
    double box = 0.0, t0;
    a->out[0] = a->out[1] = a->out[2] = -1.0;
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
        t0 = MPI_Wtime();
        CB_EACH_REP(CB_PASSIVE_PUT)
        a->out[0] = box = (MPI_Wtime() - t0) / (double)n;
        MPI_Send(&box, 1, MPI_DOUBLE, peer, 2, comm);
        MPI_Barrier(comm);
        k = 0; s = a->sbuf; r = a->rbuf; disp = 0;
        t0 = MPI_Wtime();
        CB_EACH_REP(CB_PASSIVE_PUT)
        a->out[1] = (MPI_Wtime() - t0) / (double)n;
        MPI_Win_unlock(peer, win);
        MPI_Recv(&box, 1, MPI_DOUBLE, peer, 3, comm, MPI_STATUS_IGNORE);
        a->out[2] = box;
    } else {
        for (long long i = 0; i < n; i++) MPI_Barrier(comm);
        MPI_Recv(&box, 1, MPI_DOUBLE, 0, 2, comm, MPI_STATUS_IGNORE);
        long long reps = cb_cpu_init(box);  /* sized to one pure put */
        MPI_Barrier(comm);
        double spent = 0.0;
        for (long long i = 0; i < n; i++) {
            if (reps > 0) {
                t0 = MPI_Wtime();
                cb_cpu_run(reps);
                spent += MPI_Wtime() - t0;
            }
            MPI_Barrier(comm);
        }
        box = spent / (double)n;
        MPI_Send(&box, 1, MPI_DOUBLE, 0, 3, comm);
    }
    return cb_rma_done(a, n, comm, a->out[0]);
}
