/* The C floor of PingPong: the same pattern and timed region as commbench's
 * PingPong (IMB-MPI1 PingPong, spec section 8), nothing else.
 *
 *   mpiexec -n 2 pingpong [--alloc mmap|malloc] [--hugepages on|off|default] SIZE:REPS ...
 *
 * For every SIZE:REPS item: N_BARR barriers, then REPS repetitions of
 *   rank 0: MPI_Send(sbuf, SIZE) to 1, MPI_Recv(rbuf, SIZE) from MPI_ANY_SOURCE
 *   rank 1: MPI_Recv(rbuf, SIZE) from MPI_ANY_SOURCE, MPI_Send(sbuf, SIZE) to 0
 * between two MPI_Wtime() calls; t = dt / (2 REPS) per rank, and rank 0 prints
 * the larger of the two ranks' t (commbench's t[usec] is t_max as well):
 *   SIZE REPS T_USEC
 * Buffers are max(SIZE, 4) bytes each, allocated as commbench allocates them.
 * Ranks beyond 2 only take part in the barriers.
 */
#include "floor.h"

static double pingpong(int rank, char *sbuf, char *rbuf, int size, long reps)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    for (int b = 0; b < N_BARR; b++) MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    if (rank == 0) {
        for (long i = 0; i < reps; i++) {
            MPI_Send(sbuf, size, MPI_BYTE, 1, 1, comm);
            MPI_Recv(rbuf, size, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE);
        }
    } else if (rank == 1) {
        for (long i = 0; i < reps; i++) {
            MPI_Recv(rbuf, size, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, size, MPI_BYTE, 0, 1, comm);
        }
    }
    double t1 = MPI_Wtime();
    return rank < 2 ? (t1 - t0) / (2.0 * reps) : 0.0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int first = floor_options(argc, argv);
    if (nprocs < 2 || first >= argc) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 %s [--alloc mmap|malloc] [--hugepages on|off|default] SIZE:REPS ...\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    long size = 0, reps = 0;
    int warm = 1;
    for (int a = first; a < argc; a++) {
        if (!floor_item(argv[a], &size, &reps)) {
            if (rank == 0) fprintf(stderr, "pingpong: bad item %s (accepted: SIZE:REPS)\n", argv[a]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        size_t len = size > 4 ? (size_t)size : 4;
        char *sbuf = floor_buffer(len, 1), *rbuf = floor_buffer(len, 0);
        if (sbuf == NULL || rbuf == NULL) {
            fprintf(stderr, "pingpong: cannot allocate %ld bytes\n", size);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (warm) {  /* commbench's warm-up: N_WARMUP untimed repetitions at 4 bytes */
            pingpong(rank, sbuf, rbuf, 4, N_WARMUP);
            warm = 0;
        }
        double t = pingpong(rank, sbuf, rbuf, (int)size, reps), tmax;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) printf("%ld %ld %.4f\n", size, reps, tmax * 1e6);
        fflush(stdout);
        floor_free(sbuf);
        floor_free(rbuf);
    }
    MPI_Finalize();
    return 0;
}
