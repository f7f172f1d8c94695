/* Does MPI_File_set_view accept a filetype made by the MPI-4 large-count constructors?
 *
 * MPI-4 (sections 5.1.4, 14.3): MPI_Type_create_struct_c and
 * MPI_Type_create_resized_c make ordinary datatypes, and any committed
 * datatype whose type map has non-negative, monotonically nondecreasing
 * displacements may be a filetype.  This is the view of commbench's
 * P_Write_Indv at 2 processes and 8 bytes, made as mpi4py 4 makes it (it
 * calls the _c constructors wherever the library has them, and sets
 * MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF): rank r's 4 bytes at
 * offset 4 r of every 8-byte tile.  The same view made by the MPI-3
 * constructors (MPI_Type_create_struct, MPI_Type_create_resized) is the
 * control: -DMPI3 builds it that way (and so does an MPI-3 library).
 *
 * A library with the defect aborts inside MPI_File_set_view (ROMIO of MPICH
 * 4.0: "Out of memory in file adio/common/flatten.c"; with fatal errors,
 * "use MPI_Type_get_envelope_c to query large count datatype"), so the job
 * ends with mpiexec's status 1 after the line "calling MPI_File_set_view";
 * otherwise it prints PASSED and exits 0.  The line is also written to the file
 * romio_large_count_view.stage in the directory: a launcher that tears the job down
 * as a rank aborts may drop what the ranks printed last (hydra did, in 1 run of 10).
 * Build: <that MPI's mpicc> -O2 -o romio_large_count_view romio_large_count_view.c
 * Run:   <that MPI's mpiexec> -n 2 ./romio_large_count_view [directory for the file]
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank;
    char path[4096], version[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Datatype base, tile, byte = MPI_BYTE;
    MPI_File fh;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    snprintf(path, sizeof path, "%s/romio_large_count_view.tmp", argc > 1 ? argv[1] : "/tmp");
#if defined(MPI3) || MPI_VERSION < 4 /* an MPI-3 library has no _c constructors */
    int len = 4;
    MPI_Aint pos = 4 * rank;
    MPI_Type_create_struct(1, &len, &pos, &byte, &base);
    MPI_Type_create_resized(base, 0, 8, &tile);
#else
    MPI_Count len = 4, pos = 4 * rank;
    MPI_Type_create_struct_c(1, &len, &pos, &byte, &base);
    MPI_Type_create_resized_c(base, 0, 8, &tile);
#endif
    MPI_Type_commit(&tile);
    MPI_Type_free(&base);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &fh);
    if (rank == 0) {
        const char *stage = "romio_large_count_view: calling MPI_File_set_view (an abort now is the defect)\n";
        char at[4200];
        snprintf(at, sizeof at, "%s/romio_large_count_view.stage", argc > 1 ? argv[1] : "/tmp");
        FILE *f = fopen(at, "w");
        if (f) {
            fputs(stage, f);
            fclose(f);
        }
        fputs(stage, stdout);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = MPI_File_set_view(fh, 0, MPI_BYTE, tile, "native", MPI_INFO_NULL) != MPI_SUCCESS;
    int all_bad = 0;
    MPI_File_close(&fh);
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Type_free(&tile);
    if (rank == 0) {
        int n;
        MPI_Get_library_version(version, &n);
        for (int i = 0; i < n; i++)
            if (version[i] == '\n') {
                version[i] = 0;
                break;
            }
        printf("romio_large_count_view: %s on %s\n", all_bad ? "LIBRARY DEFECT" : "PASSED", version);
    }
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
