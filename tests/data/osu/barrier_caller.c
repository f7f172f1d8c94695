/* commbench's shim (not OSU's code), preloaded into commbench's ranks by tests/test_osu_limits.py:
 * every MPI_Barrier appends the file name of the shared object that called it ("Barrier
 * libcommbench_osu_pt2pt….so" or mpi4py's "MPI.cpython….so") and every MPI_Send its byte
 * count to $COMMBENCH_TRACE_DIR/out.<rank>. A barrier that OSU runs just before a timed iteration must be called
 * from the C loop's library, in the same C call as that iteration: a barrier called from
 * Python leaves the partner in the interpreter while rank 0 times (issue 31, item 4). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static FILE *f;
static void open_f(void)
{
    if (f) return;
    int r;
    char n[512];
    const char *dir = getenv("COMMBENCH_TRACE_DIR");
    PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    snprintf(n, sizeof n, "%s/out.%d", dir ? dir : "/tmp", r);
    f = fopen(n, "w");
}
static const char *caller(void *at)
{
    Dl_info info;
    if (!dladdr(at, &info) || !info.dli_fname) return "?";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}
int MPI_Init_thread(int *a, char ***b, int q, int *p) { int r = PMPI_Init_thread(a, b, q, p); open_f(); return r; }
int MPI_Init(int *a, char ***b) { int r = PMPI_Init(a, b); open_f(); return r; }
int MPI_Barrier(MPI_Comm c)
{
    open_f();
    if (f) fprintf(f, "Barrier %s\n", caller(__builtin_return_address(0)));
    return PMPI_Barrier(c);
}
int MPI_Send(const void *buf, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm)
{
    int s;
    open_f();
    PMPI_Type_size(t, &s);
    if (f) fprintf(f, "Send %d\n", c * s);
    return PMPI_Send(buf, c, t, d, tag, comm);
}
int MPI_Finalize(void) { if (f) fclose(f); f = 0; return PMPI_Finalize(); }
