/* commbench's probe of the physical limits of one host (docs/limits.md): what a
 * transfer between two ranks on one host cannot beat.
 *
 *   cblim_copy   one memcpy of n bytes between two buffers of the run's kind
 *                (numpy, MPI_Alloc_mem, mmap: Python allocates them), repeated;
 *                the seconds of the fastest of `trials` timed blocks of `reps`
 *                copies, per copy. The one-copy bandwidth at that size: a message
 *                between two processes is at least one copy (CMA, XPMEM), and
 *                through a shared segment two.
 *   cblim_line   the round trip of one cache line between two processes on their
 *                own cores: a flag in a shared segment (MPI_Win_allocate_shared),
 *                role 0 writes 2i+1 and waits for 2i+2, role 1 answers; seconds a
 *                round trip, the fastest of `trials` blocks of `iters`, or -1 when
 *                a block takes longer than `limit` seconds (the two processes do
 *                not each have a core: spinning would only measure the scheduler).
 *
 * Built by commbench.native.extension with the mpicc of mpi4py's MPI, like the
 * other native libraries (its checks need the MPI symbols of abi.h).
 */
#include <mpi.h>
#include <string.h>
#include <time.h>
#include "abi.h"

#define CBLIM_ABI_VERSION 1
#define CBLIM_STRUCTS(S)
CB_EXPORTS(cblim_, CBLIM_ABI_VERSION, CBLIM_STRUCTS)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double cblim_copy(void *dst, const void *src, long long n, long long reps, int trials)
{
    double best = -1.0;
    for (int t = 0; t < trials; t++) {
        double t0 = now();
        for (long long r = 0; r < reps; r++) {
            memcpy(dst, src, (size_t)n);
            __asm__ __volatile__("" : : "r"(dst) : "memory"); /* the copy is not elided */
        }
        double per = (now() - t0) / (double)reps;
        if (best < 0 || per < best) best = per;
    }
    return best;
}

double cblim_line(void *flag_addr, int role, long long iters, int trials, double limit)
{
    long long *flag = flag_addr;
    long long v = 0;
    double best = -1.0;
    for (int t = 0; t < trials; t++) {
        double t0 = now();
        for (long long i = 0; i < iters; i++) {
            long long want = role == 0 ? v + 2 : v + 1;
            if (role == 0) __atomic_store_n(flag, v + 1, __ATOMIC_RELEASE);
            long long spins = 0;
            while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != want) {
                if (++spins % 4096 == 0 && now() - t0 > limit) return -1.0;
            }
            if (role == 1) __atomic_store_n(flag, want + 1, __ATOMIC_RELEASE);
            v += 2;
        }
        double per = (now() - t0) / (double)iters;
        if (best < 0 || per < best) best = per;
    }
    return best;
}
