/* Does a persistent MPI_Scatter_init request deliver its data on every MPI_Start?
 *
 * MPI-4 (section 6.13): a persistent collective request may be started again
 * once it has completed; each start performs the whole operation.  Rank 0
 * scatters one int per rank, changing the values before every start; every
 * rank checks what it received after each of START starts.
 *
 * Prints one line per rank and exits 0 when every start delivered, 1 otherwise.
 * Build: <that MPI's mpicc> -O2 -o scatter_init_restart scatter_init_restart.c
 * Run:   <that MPI's mpiexec> -n 2 ./scatter_init_restart
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define START 4

int main(int argc, char **argv)
{
    int rank, size, bad = 0, first_bad = -1, all_bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *send = malloc(sizeof(int) * size);
    int recv = -1;
    MPI_Request req;
    MPI_Scatter_init(send, 1, MPI_INT, &recv, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                     &req);
    for (int s = 1; s <= START; s++) {
        for (int r = 0; r < size; r++)
            send[r] = 1000 * s + r; /* what rank r must receive at start s */
        recv = -1;
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (recv != 1000 * s + rank) {
            if (first_bad < 0)
                first_bad = s;
            bad++;
            printf("rank %d start %d: received %d, expected %d\n", rank, s, recv,
                   1000 * s + rank);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Request_free(&req);
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d: %s (%d of %d starts wrong)\n", rank, bad ? "WRONG" : "ok", bad, START);
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(version, &len);
        for (int i = 0; i < len; i++)
            if (version[i] == '\n') {
                version[i] = 0;
                break;
            }
        printf("scatter_init_restart: %s on %s\n", all_bad ? "LIBRARY DEFECT" : "PASSED", version);
    }
    free(send);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
