/* A CPU-time stealer of known duty cycle (benchmarks/gate_study.py): pinned to one CPU, at a
 * real-time priority above the MPI ranks (SCHED_FIFO), it spins DUTY of every PERIOD_US and
 * sleeps the rest until the next period's start (absolute deadlines: no drift). A rank bound
 * to that CPU makes no progress while it spins, so a timed loop spanning many periods takes
 * about 1 / (1 - DUTY) as long.
 *
 *     cc -O2 -o steal steal.c && ./steal CPU DUTY PERIOD_US      (runs until killed)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: steal CPU DUTY PERIOD_US\n");
        return 2;
    }
    int cpu = atoi(argv[1]);
    double duty = atof(argv[2]);
    long long period = atoll(argv[3]) * 1000LL, busy = (long long)(duty * period);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) perror("sched_setaffinity");
    struct sched_param p = {.sched_priority = 10};
    if (sched_setscheduler(0, SCHED_FIFO, &p)) perror("sched_setscheduler (needs root)");
    long long next = now_ns();
    for (;;) {
        long long start = now_ns();
        while (now_ns() - start < busy) {
        }
        next += period;
        struct timespec t = {next / 1000000000LL, next % 1000000000LL};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
    }
}
