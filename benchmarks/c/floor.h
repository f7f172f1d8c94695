/* Shared helpers of the C floor programs: buffer allocation and argument parsing.
 *
 * Buffers are allocated the way commbench allocates them (--alloc / --hugepages),
 * so a comparison measures the same memory: "mmap" is an anonymous private
 * mapping, "malloc" is what numpy's np.empty does (numpy additionally advises
 * huge pages for arrays >= 4 MiB, which "malloc" mirrors). Contents are written
 * before timing so that no page is first touched inside the timed loop.
 * floor_free() returns a buffer the way it was allocated (its raw start and length
 * are kept in a small table: a buffer may start past its allocation's start).
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

#define FLOOR_MAX_BUFS 64
static struct { char *p, *raw; size_t len; } floor_bufs[FLOOR_MAX_BUFS];

static void floor_keep(char *p, char *raw, size_t len)
{
    for (int i = 0; i < FLOOR_MAX_BUFS; i++)
        if (floor_bufs[i].p == NULL) {
            floor_bufs[i].p = p, floor_bufs[i].raw = raw, floor_bufs[i].len = len;
            return;
        }
}

static void floor_free(void *p)
{
    for (int i = 0; i < FLOOR_MAX_BUFS; i++)
        if (floor_bufs[i].p == p) {
            if (strcmp(floor_alloc, "malloc") == 0) free(floor_bufs[i].raw);
            else munmap(floor_bufs[i].raw, floor_bufs[i].len);
            floor_bufs[i].p = NULL;
            return;
        }
}

static void *floor_buffer(size_t nbytes, int fill)
{
    size_t len = nbytes ? nbytes : 1, page = 4096, huge = 2u << 20;
    int on = strcmp(floor_huge, "on") == 0;
    /* --hugepages on, as commbench.buffers: a 2 MiB-aligned start and whole 2 MiB
     * extents advised MADV_HUGEPAGE, whatever the size (a 1 MiB buffer gets one
     * huge page). Otherwise mmap is 2 MiB-aligned from 2 MiB on, malloc as is. */
    size_t span = on ? (len + huge - 1) / huge * huge : len;
    int is_malloc = strcmp(floor_alloc, "malloc") == 0;
    size_t pad = (on || (!is_malloc && len >= huge)) ? huge : 0;
    char *raw;
    size_t mapped = (span + pad + page - 1) / page * page;
    if (is_malloc) {
        raw = malloc(span + pad);
        if (raw == NULL) return NULL;
    } else {
        raw = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) return NULL;
    }
    char *p = pad ? (char *)(((size_t)raw + huge - 1) / huge * huge) : raw;
    floor_keep(p, raw, mapped);
    /* The advice commbench.buffers applies: on: the whole extents; off: the buffer's
     * pages from 2 MiB on; default: none, except numpy's own for arrays >= 4 MiB. */
    int advice = -1;
    if (on) advice = MADV_HUGEPAGE;
    else if (strcmp(floor_huge, "off") == 0 && span >= huge) advice = MADV_NOHUGEPAGE;
    else if (is_malloc && strcmp(floor_huge, "default") == 0 && len >= (4u << 20)) advice = MADV_HUGEPAGE;
    if (advice >= 0) {
        char *start = (char *)(((size_t)p + page - 1) / page * page);
        char *end = (char *)(((size_t)p + span) / page * page);
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
