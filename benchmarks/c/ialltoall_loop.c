/* IMB-NBC's Ialltoall_pure loop (IMB 2021.11's IMB_ialltoall_pure, as its PMPI log reads: two
 * barriers, then per repetition MPI_Ialltoall, MPI_Wait, MPI_Barrier, the call and its wait
 * timed with MPI_Wtime), one send and one receive buffer throughout. Rank 0's mean time per
 * call in microseconds. Built as a program (-DMAIN: MPI_Init by main) and as a shared library
 * that a Python process loads with ctypes (benchmarks/init_cost.py): loop() after mpi4py has
 * initialised MPI, or init_and_loop() where the C code initialises it. free_chunks() says how
 * many free chunks glibc's main arena held when the loop began (mallinfo2: ordinary and fast
 * bins): the holes that Open MPI's per-call allocations meet (docs/engines.md). */
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static size_t holes;

size_t free_chunks(void)
{
    return holes;
}

double loop(int reps, int bytes)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char *s = calloc((size_t)bytes * n + 1, 1), *r = calloc((size_t)bytes * n + 1, 1);
    struct mallinfo2 m = mallinfo2();
    holes = m.ordblks + m.smblks;
    MPI_Request q;
    double t = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < reps; i++) {
        double t0 = MPI_Wtime();
        MPI_Ialltoall(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        t += MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(s);
    free(r);
    return t / reps * 1e6;
}

/* level < 0: MPI_Init; else MPI_Init_thread(level) */
double init_and_loop(int reps, int bytes, int level)
{
    int provided;
    if (level < 0)
        MPI_Init(NULL, NULL);
    else
        MPI_Init_thread(NULL, NULL, level, &provided);
    return loop(reps, bytes);
}

int first_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r == 0;
}

void finish(void)
{
    MPI_Finalize();
}

#ifdef MAIN
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double t = loop(atoi(argv[1]), atoi(argv[2]));
    if (first_rank())
        printf("%.4f %zu\n", t, free_chunks());
    finish();
    return 0;
}
#endif
