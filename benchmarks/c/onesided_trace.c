/* A PMPI log of the one-sided calls of a run (benchmarks/onesided_calls.py): every
 * MPI_Win_fence with its assertion, MPI_Put/Get/Accumulate with their count and target,
 * MPI_Barrier, to /tmp-like files named by $ONESIDED_TRACE_DIR, one a rank.
 * Built with the MPI's mpicc and loaded with LD_PRELOAD into IMB-EXT and commbench alike
 * (the large-count forms too, which mpi4py 4 calls). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static FILE *out;

static void say(const char *what, long a, long b)
{
    if (!out) {
        char path[512];
        int rank;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        snprintf(path, sizeof path, "%s/calls.%d.%d", getenv("ONESIDED_TRACE_DIR"), rank,
                 (int)getpid());
        out = fopen(path, "w");
    }
    if (out) fprintf(out, "%s %ld %ld\n", what, a, b);
}

int MPI_Win_fence(int assert, MPI_Win win)
{
    say("Win_fence", assert, 0);
    return PMPI_Win_fence(assert, win);
}

int MPI_Barrier(MPI_Comm comm)
{
    say("Barrier", 0, 0);
    return PMPI_Barrier(comm);
}

int MPI_Put(const void *o, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc,
            MPI_Datatype tt, MPI_Win w)
{
    say("Put", oc, tr);
    return PMPI_Put(o, oc, ot, tr, td, tc, tt, w);
}

int MPI_Get(void *o, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt,
            MPI_Win w)
{
    say("Get", oc, tr);
    return PMPI_Get(o, oc, ot, tr, td, tc, tt, w);
}

int MPI_Accumulate(const void *o, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc,
                   MPI_Datatype tt, MPI_Op op, MPI_Win w)
{
    say("Accumulate", oc, tr);
    return PMPI_Accumulate(o, oc, ot, tr, td, tc, tt, op, w);
}

#if MPI_VERSION >= 4
/* mpi4py 4 calls the large-count forms where the library has them */
int MPI_Accumulate_c(const void *o, MPI_Count oc, MPI_Datatype ot, int tr, MPI_Aint td,
                     MPI_Count tc, MPI_Datatype tt, MPI_Op op, MPI_Win w)
{
    say("Accumulate", (long)oc, tr);
    return PMPI_Accumulate_c(o, oc, ot, tr, td, tc, tt, op, w);
}

int MPI_Put_c(const void *o, MPI_Count oc, MPI_Datatype ot, int tr, MPI_Aint td, MPI_Count tc,
              MPI_Datatype tt, MPI_Win w)
{
    say("Put", (long)oc, tr);
    return PMPI_Put_c(o, oc, ot, tr, td, tc, tt, w);
}

int MPI_Get_c(void *o, MPI_Count oc, MPI_Datatype ot, int tr, MPI_Aint td, MPI_Count tc,
              MPI_Datatype tt, MPI_Win w)
{
    say("Get", (long)oc, tr);
    return PMPI_Get_c(o, oc, ot, tr, td, tc, tt, w);
}
#endif
