/* OSU point-to-point timed loops: latency, bw, bibw (OMB 7.4's procedures, written
 * from the calls the binaries make; commbench/suites/osu/pt2pt.py declares them and
 * runs the same calls in mpi4py). One function per benchmark, named
 * cbosu_pt2pt_<name>, taking the cbosu_args of osu.h. 0 on success, -1 when the
 * requests of a window cannot be allocated. */
#include <stdlib.h>
#include "osu.h"

#define TAG_LAT 1
#define TAG_DATA CBOSU_TAG_DATA
#define TAG_BACK 10
#define TAG_ACK CBOSU_TAG_ACK

CBOSU_EXPORTS(cbosu_pt2pt_)

/* latency: rank 0 sends and receives back, rank 1 receives and sends; rank 0 times
 * each round trip. */
int cbosu_pt2pt_latency(cbosu_args *a)
{
    MPI_Comm comm = CBOSU_COMM(a);
    MPI_Datatype t = CBOSU_TYPE(a);
    int n = a->n, c = a->count, p = a->peer;
    if (a->timer) {
        for (int i = 0; i < n; i++) {
            double t0 = a->times ? MPI_Wtime() : 0.0;
            MPI_Send(a->sbuf, c, t, p, TAG_LAT, comm);
            MPI_Recv(a->rbuf, c, t, p, TAG_LAT, comm, MPI_STATUS_IGNORE);
            if (a->times) a->times[i] = MPI_Wtime() - t0;
        }
    } else {
        for (int i = 0; i < n; i++) {
            MPI_Recv(a->rbuf, c, t, p, TAG_LAT, comm, MPI_STATUS_IGNORE);
            MPI_Send(a->sbuf, c, t, p, TAG_LAT, comm);
        }
    }
    return 0;
}

/* bw: rank 0 posts a window of Isends and waits for them and for a 1-byte ack;
 * rank 1 posts the window of Irecvs, waits, and acks. Rank 0 times each window. */
int cbosu_pt2pt_bw(cbosu_args *a)
{
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)a->window);
    if (!req) return -1;
    for (int i = 0; i < a->n; i++) {
        double t0 = CBOSU_TIMED(a) ? MPI_Wtime() : 0.0;
        cbosu_bw_window(a, req);
        if (CBOSU_TIMED(a)) a->times[i] = MPI_Wtime() - t0;
    }
    free(req);
    return 0;
}

/* bibw: both ranks post a window of Irecvs and a window of Isends, then wait for
 * both; rank 0 times each window. */
int cbosu_pt2pt_bibw(cbosu_args *a)
{
    MPI_Comm comm = CBOSU_COMM(a);
    MPI_Datatype t = CBOSU_TYPE(a);
    int n = a->n, c = a->count, p = a->peer, w = a->window;
    int rtag = a->timer ? TAG_BACK : TAG_DATA, stag = a->timer ? TAG_DATA : TAG_BACK;
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)w);
    if (!req) return -1;
    for (int i = 0; i < n; i++) {
        double t0 = CBOSU_TIMED(a) ? MPI_Wtime() : 0.0;
        for (int j = 0; j < w; j++) MPI_Irecv(a->rbuf, c, t, p, rtag, comm, &req[w + j]);
        for (int j = 0; j < w; j++) MPI_Isend(a->sbuf, c, t, p, stag, comm, &req[j]);
        MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
        MPI_Waitall(w, req + w, MPI_STATUSES_IGNORE);
        if (CBOSU_TIMED(a)) a->times[i] = MPI_Wtime() - t0;
    }
    free(req);
    return 0;
}
