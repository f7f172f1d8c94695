/* The rest of OSU's point-to-point timed loops (OMB 7.4's procedures, written from
 * the calls the binaries make, tests/data/osu/README.md; commbench/suites/osu/
 * pt2pt_variants.py and latency_mt.py declare them and run the same calls in mpi4py):
 * the persistent latency, bw, bibw; mbw_mr, multi_lat, latency_mp; bw_fan_in and
 * bw_fan_out; latency_mt (POSIX threads). One function per loop, named
 * cbosu_pt2pt_variants_<name>, taking the cbosu_args of osu.h. 0 on success, -1 when
 * requests or threads cannot be had.
 *
 * Roles come from Python: `peer` is the partner, `timer` says that this rank times
 * (the sender side of a pair), `root` is 1 on a rank that takes part (mbw_mr's
 * idle ranks only meet the barriers). bw_fan_*: rank 0 against ranks 1 .. P-1.
 * latency_mt: `senders` sender threads, `receivers` receiver threads. */
#include <pthread.h>
#include <stdlib.h>
#include "osu.h"

#define TAG_LAT 1
#define TAG_DATA CBOSU_TAG_DATA
#define TAG_ACK CBOSU_TAG_ACK
#define TAG_MT_BACK 2
#define TAG_MT_MAX 32000

CBOSU_EXPORTS(cbosu_pt2pt_variants_)

#define T0(a) (CBOSU_TIMED(a) ? MPI_Wtime() : 0.0)
#define T1(a, i, t0) do { if (CBOSU_TIMED(a)) (a)->times[i] = MPI_Wtime() - (t0); } while (0)

/* latency_persistent: one MPI_Send_init and one MPI_Recv_init (rank 0 send first,
 * rank 1 receive first); per iteration MPI_Start and MPI_Wait of each in turn. */
int cbosu_pt2pt_variants_latency_persistent(cbosu_args *a)
{
    MPI_Comm comm = CBOSU_COMM(a);
    MPI_Datatype t = CBOSU_TYPE(a);
    MPI_Request r[2]; /* r[0] runs first */
    if (a->timer) {
        MPI_Send_init(a->sbuf, a->count, t, a->peer, TAG_LAT, comm, &r[0]);
        MPI_Recv_init(a->rbuf, a->count, t, a->peer, TAG_LAT, comm, &r[1]);
    } else {
        MPI_Recv_init(a->rbuf, a->count, t, a->peer, TAG_LAT, comm, &r[0]);
        MPI_Send_init(a->sbuf, a->count, t, a->peer, TAG_LAT, comm, &r[1]);
    }
    for (int i = 0; i < a->n; i++) {
        double t0 = T0(a);
        MPI_Start(&r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        MPI_Start(&r[1]);
        MPI_Wait(&r[1], MPI_STATUS_IGNORE);
        T1(a, i, t0);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    return 0;
}

/* bw_persistent: rank 0 W MPI_Send_init, per window MPI_Startall, MPI_Waitall and the
 * 1-byte ack; rank 1 W MPI_Recv_init, MPI_Startall, MPI_Waitall, the ack. */
int cbosu_pt2pt_variants_bw_persistent(cbosu_args *a)
{
    MPI_Comm comm = CBOSU_COMM(a);
    MPI_Datatype t = CBOSU_TYPE(a);
    int w = a->window, c = a->count, p = a->peer;
    MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)w);
    if (!r) return -1;
    for (int j = 0; j < w; j++) {
        if (a->timer) MPI_Send_init(a->sbuf, c, t, p, TAG_DATA, comm, &r[j]);
        else MPI_Recv_init(a->rbuf, c, t, p, TAG_DATA, comm, &r[j]);
    }
    for (int i = 0; i < a->n; i++) {
        double t0 = T0(a);
        MPI_Startall(w, r);
        MPI_Waitall(w, r, MPI_STATUSES_IGNORE);
        if (a->timer) MPI_Recv(a->abuf, 1, MPI_CHAR, p, TAG_ACK, comm, MPI_STATUS_IGNORE);
        else MPI_Send(a->abuf, 1, MPI_CHAR, p, TAG_ACK, comm);
        T1(a, i, t0);
    }
    for (int j = 0; j < w; j++) MPI_Request_free(&r[j]);
    free(r);
    return 0;
}

/* bibw_persistent: both ranks W MPI_Send_init and W MPI_Recv_init (rank 0 sends tag
 * 100 and receives 101, rank 1 the other way); per window MPI_Startall of the
 * receives, of the sends, MPI_Waitall of the sends, of the receives. */
int cbosu_pt2pt_variants_bibw_persistent(cbosu_args *a)
{
    MPI_Comm comm = CBOSU_COMM(a);
    MPI_Datatype t = CBOSU_TYPE(a);
    int w = a->window, c = a->count, p = a->peer;
    int stag = a->timer ? TAG_DATA : TAG_ACK, rtag = a->timer ? TAG_ACK : TAG_DATA;
    MPI_Request *s = malloc(sizeof(MPI_Request) * 2 * (size_t)w), *r;
    if (!s) return -1;
    r = s + w;
    for (int j = 0; j < w; j++) {
        MPI_Send_init(a->sbuf, c, t, p, stag, comm, &s[j]);
        MPI_Recv_init(a->rbuf, c, t, p, rtag, comm, &r[j]);
    }
    for (int i = 0; i < a->n; i++) {
        double t0 = T0(a);
        MPI_Startall(w, r);
        MPI_Startall(w, s);
        MPI_Waitall(w, s, MPI_STATUSES_IGNORE);
        MPI_Waitall(w, r, MPI_STATUSES_IGNORE);
        T1(a, i, t0);
    }
    for (int j = 0; j < 2 * w; j++) MPI_Request_free(&s[j]);
    free(s);
    return 0;
}

/* mbw_mr: per window two MPI_Barrier of the world; a sender (timer) W MPI_Isend,
 * MPI_Waitall, the ack; its receiver W MPI_Irecv, MPI_Waitall, the ack; a rank
 * outside the pairs (root 0) only the barriers. */
int cbosu_pt2pt_variants_mbw_mr(cbosu_args *a)
{
    MPI_Comm comm = CBOSU_COMM(a);
    MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)a->window);
    if (!r) return -1;
    for (int i = 0; i < a->n; i++) {
        MPI_Barrier(comm);
        MPI_Barrier(comm);
        if (!a->root) continue;
        double t0 = T0(a);
        cbosu_bw_window(a, r);
        T1(a, i, t0);
    }
    free(r);
    return 0;
}

/* multi_lat and latency_mp: per iteration an MPI_Barrier of the world, then the
 * ping-pong of latency (the sender, timer, times the round trip). */
int cbosu_pt2pt_variants_barrier_latency(cbosu_args *a)
{
    MPI_Comm comm = CBOSU_COMM(a);
    MPI_Datatype t = CBOSU_TYPE(a);
    int c = a->count, p = a->peer;
    for (int i = 0; i < a->n; i++) {
        MPI_Barrier(comm);
        if (a->timer) {
            double t0 = T0(a);
            MPI_Send(a->sbuf, c, t, p, TAG_LAT, comm);
            MPI_Recv(a->rbuf, c, t, p, TAG_LAT, comm, MPI_STATUS_IGNORE);
            T1(a, i, t0);
        } else {
            MPI_Recv(a->rbuf, c, t, p, TAG_LAT, comm, MPI_STATUS_IGNORE);
            MPI_Send(a->sbuf, c, t, p, TAG_LAT, comm);
        }
    }
    return 0;
}

/* bw_fan_in: ranks 1 .. P-1 (timer) send a window of W to rank 0 and wait for its
 * ack; rank 0 posts W receives from each (message j of every sender in turn),
 * MPI_Waitall, and acks each. bw_fan_out (root 1): rank 0 (timer) sends W to each,
 * MPI_Waitall, and receives every ack; the others receive W and ack. */
static int fan(cbosu_args *a, int out)
{
    MPI_Comm comm = CBOSU_COMM(a);
    MPI_Datatype t = CBOSU_TYPE(a);
    int np, me, w = a->window, c = a->count;
    MPI_Comm_size(comm, &np);
    MPI_Comm_rank(comm, &me);
    int many = me == 0 ? w * (np - 1) : w;
    MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)(many > 0 ? many : 1));
    if (!r) return -1;
    for (int i = 0; i < a->n; i++) {
        double t0 = T0(a);
        if (me == 0) {
            for (int j = 0, k = 0; j < w; j++)
                for (int q = 1; q < np; q++, k++) {
                    if (out) MPI_Isend(a->sbuf, c, t, q, TAG_DATA, comm, &r[k]);
                    else MPI_Irecv(a->rbuf, c, t, q, TAG_DATA, comm, &r[k]);
                }
            MPI_Waitall(many, r, MPI_STATUSES_IGNORE);
            for (int q = 1; q < np; q++) {
                if (out) MPI_Recv(a->abuf, 1, MPI_CHAR, q, TAG_ACK, comm, MPI_STATUS_IGNORE);
                else MPI_Send(a->abuf, 1, MPI_CHAR, q, TAG_ACK, comm);
            }
        } else {
            for (int j = 0; j < w; j++) {
                if (out) MPI_Irecv(a->rbuf, c, t, 0, TAG_DATA, comm, &r[j]);
                else MPI_Isend(a->sbuf, c, t, 0, TAG_DATA, comm, &r[j]);
            }
            MPI_Waitall(w, r, MPI_STATUSES_IGNORE);
            if (out) MPI_Send(a->abuf, 1, MPI_CHAR, 0, TAG_ACK, comm);
            else MPI_Recv(a->abuf, 1, MPI_CHAR, 0, TAG_ACK, comm, MPI_STATUS_IGNORE);
        }
        T1(a, i, t0);
    }
    free(r);
    return 0;
}

int cbosu_pt2pt_variants_bw_fan_in(cbosu_args *a) { return fan(a, 0); }
int cbosu_pt2pt_variants_bw_fan_out(cbosu_args *a) { return fan(a, 1); }

/* latency_mt: rank 0 runs a->senders threads, rank 1 a->receivers threads, all
 * calling MPI at once (MPI_THREAD_MULTIPLE). Iteration i belongs to sender thread
 * i mod S and receiver thread i mod R. One sender: tags 1 there and 2 back, any
 * receiver thread may match a message (OSU's way); several: the tag is i (mod 32000),
 * so each message meets its own thread. The sender thread times its iterations. */
typedef struct {
    cbosu_args *a;
    int id, threads, senders;
} mt_job;

static void *mt_thread(void *arg)
{
    mt_job *j = arg;
    cbosu_args *a = j->a;
    MPI_Comm comm = CBOSU_COMM(a);
    MPI_Datatype t = CBOSU_TYPE(a);
    for (int i = j->id; i < a->n; i += j->threads) {
        int there = j->senders > 1 ? i % TAG_MT_MAX : TAG_LAT;
        int back = j->senders > 1 ? there : TAG_MT_BACK;
        if (a->timer) {
            double t0 = T0(a);
            MPI_Send(a->sbuf, a->count, t, a->peer, there, comm);
            MPI_Recv(a->rbuf, a->count, t, a->peer, back, comm, MPI_STATUS_IGNORE);
            T1(a, i, t0);
        } else {
            MPI_Recv(a->rbuf, a->count, t, a->peer, there, comm, MPI_STATUS_IGNORE);
            MPI_Send(a->sbuf, a->count, t, a->peer, back, comm);
        }
    }
    return NULL;
}

int cbosu_pt2pt_variants_latency_mt(cbosu_args *a)
{
    int senders = a->senders, threads = a->timer ? senders : a->receivers, rc = 0, started = 0;
    pthread_t *th = malloc(sizeof(pthread_t) * (size_t)threads);
    mt_job *jobs = malloc(sizeof(mt_job) * (size_t)threads);
    if (!th || !jobs) rc = -1;
    for (int k = 0; !rc && k < threads; k++, started++) {
        jobs[k] = (mt_job){a, k, threads, senders};
        if (pthread_create(&th[k], NULL, mt_thread, &jobs[k]) != 0) rc = -1;
    }
    if (rc) started--;
    for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
    free(th);
    free(jobs);
    return rc;
}
