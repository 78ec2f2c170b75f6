/* ranks.c: the processes of a run under mpirun (see ranks.h). */
#include "base/ranks.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"

static int started;    /* MPI_Init was called */
static int my_rank, n_ranks = 1;
static double waited;  /* seconds inside the exchanges */
static double sent;    /* bytes this process has sent to another */

_Static_assert(sizeof(MPI_Request) <= sizeof(((RanksSend *)0)->request),
               "RanksSend must hold an MPI_Request");

int ranks_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL;
}

int ranks_start(char *msg, size_t cap)
{
    if (!ranks_launched() || started)
        return 0;
    /* A rank waiting for a message yields its core instead of spinning on it (unless
     * the user says otherwise): the rank's exchange waits beside its own shards'
     * passes (train/shards.c), which need the cores (measured at size M: 5% more tokens
     * a second on 2 processes of this 2-core machine). */
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    int provided = 0;
    /* only the main thread calls MPI: the shards' worker threads never do */
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        snprintf(msg, cap, "MPI_Init failed (started by mpirun: OMPI_COMM_WORLD_SIZE is set)");
        return -1;
    }
    started = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    return 0;
}

void ranks_stop(void)
{
    if (started)
        MPI_Finalize();
    started = 0;
}

void ranks_abort(int code, const char *what)
{
    fprintf(stderr, "s2s: error: rank %d of %d: %s\n", my_rank, n_ranks, what);
    fflush(stderr);
    if (started)
        MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

int ranks_rank(void)
{
    return my_rank;
}

int ranks_size(void)
{
    return n_ranks;
}

void ranks_max(long *v, int n)
{
    if (n_ranks == 1)
        return;
    double t0 = now_seconds();
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    waited += now_seconds() - t0;
}

void ranks_broadcast(void *buf, size_t bytes, int root)
{
    if (n_ranks == 1)
        return;
    double t0 = now_seconds();
    for (size_t done = 0; done < bytes; done += RANKS_MAX_MESSAGE) {
        size_t part = bytes - done < RANKS_MAX_MESSAGE ? bytes - done : RANKS_MAX_MESSAGE;
        MPI_Bcast((char *)buf + done, (int)part, MPI_BYTE, root, MPI_COMM_WORLD);
    }
    waited += now_seconds() - t0;
}

void ranks_gather_all(const void *mine, void *all, size_t bytes)
{
    if (n_ranks == 1) {
        memcpy(all, mine, bytes);
        return;
    }
    double t0 = now_seconds();
    MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    waited += now_seconds() - t0;
}

void ranks_post_send(RanksSend *s, const void *buf, size_t bytes, int to, int tag)
{
    MPI_Request r;
    double t0 = now_seconds();
    MPI_Isend(buf, (int)bytes, MPI_BYTE, to, tag, MPI_COMM_WORLD, &r);
    sent += (double)bytes;
    waited += now_seconds() - t0;
    memcpy(s->request, &r, sizeof r);
    s->pending = 1;
}

void ranks_wait(RanksSend *s)
{
    if (!s->pending)
        return;
    MPI_Request r;
    memcpy(&r, s->request, sizeof r);
    double t0 = now_seconds();
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    waited += now_seconds() - t0;
    s->pending = 0;
}

size_t ranks_receive(void *buf, size_t cap, int from, int tag)
{
    MPI_Status st;
    int count = 0;
    double t0 = now_seconds();
    MPI_Recv(buf, (int)cap, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st);
    waited += now_seconds() - t0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    return (size_t)count;
}

double ranks_seconds(void)
{
    return waited;
}

double ranks_bytes_sent(void)
{
    return sent;
}
