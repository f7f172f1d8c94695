/* The C/Python boundary of commbench's native libraries (kernels.c, osu_*.c, p2p.c,
 * mt.c), declared once, here in C; commbench/native/abi.py reads the same text.
 *
 * A struct that Python fills is a list of rows, one a field,
 *     #define <NAME>_FIELDS(X) X(type, name, "what it holds") X(...) ...
 * (name may carry an array dimension: out[3]), expanded into the struct with
 *     typedef struct { <NAME>_FIELDS(CB_FIELD) } <name>;
 * Python builds the ctypes mirror from the same rows (abi.fields): a pointer is an
 * address (c_void_p), int, long long and double are themselves. The ABI number is a
 * #define Python reads too (abi.define).
 *
 * Every library exports, through the macros below, what commbench.native.extension
 * checks when it loads one: <prefix>abi_version(), <prefix>sizeof(name) (each mirrored
 * struct's sizeof as this compiler lays it out; -1 for a name it does not know) and
 * <prefix>probe(...) (the MPI this library sees). */
#ifndef COMMBENCH_ABI_H
#define COMMBENCH_ABI_H
#include <mpi.h>
#include <string.h>

#define CB_FIELD(type, name, doc) type name;

/* A table of codes, one row a constant with the names Python knows it by,
 *     #define <NAME>(C) C(PINGPONG, "PingPong") C(STENCIL, "Stencil2D Stencil3D") ...
 * expanded into the enum with  enum { <NAME>(CB_CODE) };  Python reads the same rows
 * (abi.codes: each name -> its row's index, the enum's value). */
#define CB_CODE(constant, names) constant,

#define CB_SIZEOF_CASE(s) if (!strcmp(name, #s)) return (long long)sizeof(s);

/* abi_version, sizeof over the structs of STRUCTS(S) (S(name) a struct), and probe. */
#define CB_EXPORTS(prefix, version, STRUCTS)                                             \
    int prefix##abi_version(void) { return version; }                                    \
    long long prefix##sizeof(const char *name)                                           \
    {                                                                                    \
        STRUCTS(CB_SIZEOF_CASE)                                                          \
        return -1;                                                                       \
    }                                                                                    \
    int prefix##probe(const void *comm, int *initialized, int *provided, int *rank,      \
                      int *size)                                                         \
    {                                                                                    \
        MPI_Initialized(initialized);                                                    \
        if (!*initialized) return 0;                                                     \
        MPI_Query_thread(provided);                                                      \
        MPI_Comm_rank(*(const MPI_Comm *)comm, rank);                                    \
        MPI_Comm_size(*(const MPI_Comm *)comm, size);                                    \
        return 0;                                                                        \
    }

#endif
