/* Shared helpers of the C floor programs: buffer allocation and argument parsing.
 *
 * Buffers are allocated the way commbench allocates them (--alloc / --hugepages),
 * so a comparison measures the same memory: "mmap" is an anonymous private
 * mapping, "malloc" is what numpy's np.empty does (numpy additionally advises
 * huge pages for arrays >= 4 MiB, which "malloc" mirrors). Contents are written
 * before timing so that no page is first touched inside the timed loop.
 */
#ifndef COMMBENCH_FLOOR_H
#define COMMBENCH_FLOOR_H

#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define N_BARR 2     /* barriers before every timed loop, as commbench (IMB) */
#define N_WARMUP 2   /* untimed repetitions at 4 bytes before the first size */

static const char *floor_alloc = "mmap";    /* mmap | malloc */
static const char *floor_huge = "default";  /* on | off | default */

static void *floor_buffer(size_t nbytes, int fill)
{
    size_t len = nbytes ? nbytes : 1;
    void *p;
    if (strcmp(floor_alloc, "malloc") == 0) {
        p = malloc(len);
        if (p == NULL) return NULL;
    } else {
        /* 2 MiB-aligned from 2 MiB on, as commbench.buffers does: the kernel
         * backs only aligned 2 MiB extents with huge pages. */
        size_t page = 4096, huge2 = 2u << 20, extra = len >= huge2 ? huge2 : 0;
        len = (len + page - 1) / page * page;
        char *raw = mmap(NULL, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) return NULL;
        p = extra ? (void *)(((size_t)raw + huge2 - 1) / huge2 * huge2) : (void *)raw;
    }
    /* The same whole-page advice commbench.buffers applies (only >= 2 MiB). */
    size_t huge = 2u << 20;
    int advice = -1;
    if (strcmp(floor_huge, "on") == 0) advice = MADV_HUGEPAGE;
    else if (strcmp(floor_huge, "off") == 0) advice = MADV_NOHUGEPAGE;
    else if (strcmp(floor_alloc, "malloc") == 0 && len >= (4u << 20)) advice = MADV_HUGEPAGE;
    if (advice >= 0 && len >= huge) {
        size_t page = 4096;
        char *start = (char *)(((size_t)p + page - 1) / page * page);
        char *end = (char *)(((size_t)p + len) / page * page);
        if (end > start) madvise(start, (size_t)(end - start), advice);
    }
    memset(p, fill, len);
    return p;
}

/* Options common to the floor programs; returns the index of the first other argument. */
static int floor_options(int argc, char **argv)
{
    int i = 1;
    while (i + 1 < argc && argv[i][0] == '-') {
        if (strcmp(argv[i], "--alloc") == 0) floor_alloc = argv[i + 1];
        else if (strcmp(argv[i], "--hugepages") == 0) floor_huge = argv[i + 1];
        else break;
        i += 2;
    }
    return i;
}

/* "SIZE:REPS" -> size, reps; 0 on a malformed item. */
static int floor_item(const char *s, long *size, long *reps)
{
    char *end;
    *size = strtol(s, &end, 10);
    if (*end != ':' || *size < 0) return 0;
    *reps = strtol(end + 1, &end, 10);
    return *end == '\0' && *reps > 0;
}

#endif
