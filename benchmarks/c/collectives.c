/* The C floor of Allreduce and Barrier: the same patterns and timed regions as
 * commbench's (IMB-MPI1 spec section 8), nothing else.
 *
 *   mpiexec -n P collectives [--alloc mmap|malloc] [--hugepages on|off|default] ITEM ...
 *
 * ITEM is allreduce:SIZE:REPS (REPS x MPI_Allreduce of SIZE/4 MPI_FLOATs, MPI_SUM,
 * into a separate receive buffer) or barrier:REPS (REPS x MPI_Barrier). Before the
 * first item of each kind N_WARMUP untimed repetitions; N_BARR barriers before each
 * timed loop; t = dt / REPS per rank; rank 0 prints
 *   NAME SIZE REPS T_MIN T_MAX T_AVG   (usec; SIZE 0 for barrier)
 */
#include "floor.h"

static void report(const char *name, long size, long reps, double t, int nprocs)
{
    double tmin, tmax, tsum;
    MPI_Reduce(&t, &tmin, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t, &tsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("%s %ld %ld %.4f %.4f %.4f\n", name, size, reps, tmin * 1e6, tmax * 1e6, tsum / nprocs * 1e6);
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

static void bad_item(int rank, const char *item)
{
    if (rank == 0) fprintf(stderr, "collectives: bad item %s (accepted: allreduce:SIZE:REPS, barrier:REPS)\n", item);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int first = floor_options(argc, argv);
    if (first >= argc) {
        if (rank == 0)
            fprintf(stderr, "usage: %s [--alloc K] [--hugepages H] allreduce:SIZE:REPS | barrier:REPS ...\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    int warm_allreduce = 1, warm_barrier = 1;
    for (int a = first; a < argc; a++) {
        long size = 0, reps = 0;
        if (strncmp(argv[a], "barrier:", 8) == 0) {
            char *end;
            reps = strtol(argv[a] + 8, &end, 10);
            if (*end != '\0' || reps <= 0) bad_item(rank, argv[a]);
            if (warm_barrier) {
                barrier(N_WARMUP);
                warm_barrier = 0;
            }
            report("barrier", 0, reps, barrier(reps), nprocs);
        } else if (strncmp(argv[a], "allreduce:", 10) == 0) {
            if (!floor_item(argv[a] + 10, &size, &reps)) bad_item(rank, argv[a]);
            size_t len = size > 4 ? (size_t)size : 4;
            float *sbuf = floor_buffer(len, 0), *rbuf = floor_buffer(len, 0);
            if (sbuf == NULL || rbuf == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
            if (warm_allreduce) {  /* commbench's warm-up: 4 bytes */
                allreduce(sbuf, rbuf, 1, N_WARMUP);
                warm_allreduce = 0;
            }
            report("allreduce", size, reps, allreduce(sbuf, rbuf, (int)(size / 4), reps), nprocs);
            floor_free(sbuf);
            floor_free(rbuf);
        } else {
            bad_item(rank, argv[a]);
        }
    }
    MPI_Finalize();
    return 0;
}
