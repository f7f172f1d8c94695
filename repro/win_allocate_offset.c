/* Do MPI_Put and MPI_Get reach the target's own bytes of an MPI_Win_allocate window?
 *
 * MPI-4 (sections 12.2.2, 12.2.6): MPI_Win_allocate returns the window's base
 * address, the MPI_WIN_BASE attribute is that address, and the target buffer
 * of an RMA operation starts there plus target_disp * disp_unit.  Every rank
 * allocates SIZE bytes, fills them with 100 * rank + i, and rank 0 reads
 * 8 bytes at displacement 0 of rank 1's window (MPI_Get), then writes 8 bytes
 * there (MPI_Put + MPI_Win_flush), which rank 1 checks; rank 1 also compares
 * MPI_WIN_BASE with the returned base.  Sizes that are not a multiple of 16
 * bytes are those of commbench's pgas segments at 1-8 B and of an 8-byte flag
 * window; 64 is a control.
 *
 * Prints one line per size and exits 0 when every transfer reached rank 1's
 * window, 1 otherwise.
 * Build: <that MPI's mpicc> -O2 -o win_allocate_offset win_allocate_offset.c
 * Run:   <that MPI's mpiexec> -n 2 ./win_allocate_offset
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, bad = 0, all_bad = 0, sizes[] = {8, 20, 64};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int k = 0; k < 3; k++) {
        int s = sizes[k], wrong = 0;
        unsigned char *mem, got[8], put[8];
        MPI_Win win;
        MPI_Win_allocate(s, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
        for (int i = 0; i < s; i++)
            mem[i] = 100 * rank + i;
        MPI_Win_lock_all(0, win);
        MPI_Win_sync(win);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            memset(got, 255, 8);
            MPI_Get(got, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
            MPI_Win_flush(1, win);
            for (int i = 0; i < 8; i++) {
                wrong |= got[i] != 100 + i;
                put[i] = 200 + i;
            }
            printf("size %2d: MPI_Get of rank 1's bytes 0-7 returned %d %d ... %d (expected 100 "
                   "101 ... 107)\n", s, got[0], got[1], got[7]);
            MPI_Put(put, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
            MPI_Win_flush(1, win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_sync(win);
        if (rank == 1) {
            void *attr;
            int flag;
            MPI_Win_get_attr(win, MPI_WIN_BASE, &attr, &flag);
            for (int i = 0; i < 8; i++)
                wrong |= mem[i] != 200 + i;
            wrong |= attr != (void *)mem;
            printf("size %2d: after rank 0's MPI_Put rank 1 holds %d %d ... %d (expected 200 201 "
                   "... 207); base %p, MPI_WIN_BASE %p\n", s, mem[0], mem[1], mem[7], (void *)mem,
                   attr);
        }
        bad += wrong;
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
    }
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(version, &len);
        for (int i = 0; i < len; i++)
            if (version[i] == '\n') {
                version[i] = 0;
                break;
            }
        printf("win_allocate_offset: %s on %s\n", all_bad ? "LIBRARY DEFECT" : "PASSED", version);
    }
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
