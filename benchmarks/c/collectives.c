/* The C floor of Allreduce and Barrier: the same patterns and timed regions as
 * commbench's (IMB-MPI1 spec section 8), nothing else.
 *
 *   mpiexec -n P collectives [--alloc mmap|malloc] [--hugepages on|off|default] allreduce SIZE:REPS ...
 *   mpiexec -n P collectives barrier REPS
 *
 * Allreduce: REPS x MPI_Allreduce of SIZE/4 MPI_FLOATs, MPI_SUM, into a separate
 * receive buffer; Barrier: REPS x MPI_Barrier. N_BARR barriers before each timed
 * loop; t = dt / REPS per rank; rank 0 prints  SIZE REPS T_MIN T_MAX T_AVG  (usec;
 * SIZE 0 for barrier).
 */
#include "floor.h"

static void report(long size, long reps, double t, int nprocs)
{
    double tmin, tmax, tsum;
    MPI_Reduce(&t, &tmin, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t, &tsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("%ld %ld %.4f %.4f %.4f\n", size, reps, tmin * 1e6, tmax * 1e6, tsum / nprocs * 1e6);
    fflush(stdout);
}

static double allreduce(float *sbuf, float *rbuf, int count, long reps)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    for (int b = 0; b < N_BARR; b++) MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (long i = 0; i < reps; i++) MPI_Allreduce(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM, comm);
    return (MPI_Wtime() - t0) / reps;
}

static double barrier(long reps)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    for (int b = 0; b < N_BARR; b++) MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (long i = 0; i < reps; i++) MPI_Barrier(comm);
    return (MPI_Wtime() - t0) / reps;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int a = floor_options(argc, argv);
    if (a + 1 >= argc || (strcmp(argv[a], "allreduce") != 0 && strcmp(argv[a], "barrier") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: %s [--alloc K] [--hugepages H] allreduce SIZE:REPS ... | barrier REPS\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    if (strcmp(argv[a], "barrier") == 0) {
        long reps = strtol(argv[a + 1], NULL, 10);
        if (reps <= 0) MPI_Abort(MPI_COMM_WORLD, 2);
        barrier(N_WARMUP);
        report(0, reps, barrier(reps), nprocs);
        MPI_Finalize();
        return 0;
    }
    int warm = 1;
    for (a = a + 1; a < argc; a++) {
        long size, reps;
        if (!floor_item(argv[a], &size, &reps)) {
            if (rank == 0) fprintf(stderr, "collectives: bad item %s (accepted: SIZE:REPS)\n", argv[a]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        size_t len = size > 4 ? (size_t)size : 4;
        float *sbuf = floor_buffer(len, 0), *rbuf = floor_buffer(len, 0);
        if (sbuf == NULL || rbuf == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
        if (warm) {
            allreduce(sbuf, rbuf, 1, N_WARMUP);
            warm = 0;
        }
        report(size, reps, allreduce(sbuf, rbuf, (int)(size / 4), reps), nprocs);
        if (strcmp(floor_alloc, "malloc") == 0) {
            free(sbuf);
            free(rbuf);
        } else {
            munmap(sbuf, (len + 4095) / 4096 * 4096);
            munmap(rbuf, (len + 4095) / 4096 * 4096);
        }
    }
    MPI_Finalize();
    return 0;
}
