/* ranks.h: the processes of one training run started by Open MPI's mpirun, and the few
 * messages they exchange.
 *
 * s2s is one binary. Started by mpirun (which sets OMPI_COMM_WORLD_SIZE in every
 * process's environment), `s2s train` calls ranks_start and so MPI_Init; started any
 * other way, nothing here calls MPI: there is one rank, number 0, and every exchange
 * below is a no-op or a copy. So a plain run, `make asan` and `make valgrind` never start
 * Open MPI (its library is linked into the binary, and loaded, but left alone).
 *
 * Every exchange moves bytes, never adds numbers: where the ranks' gradients are summed
 * (train/shards.c), they are summed by s2s in a fixed order, so the result does not
 * depend on how the MPI library reduces. The one reduction here is the maximum of
 * integers, which no order changes.
 *
 * Errors: MPI's default handler is kept, so a failed exchange (a rank died, a link went
 * down) aborts this process, and mpirun then ends the others and names the rank. */
#ifndef S2S_RANKS_H
#define S2S_RANKS_H

#include <stddef.h>

/* Whether mpirun started this process (its environment says so). */
int ranks_launched(void);
/* MPI_Init when mpirun started this process; otherwise nothing. Returns 0, or -1 with a
 * message in msg (cap bytes) if MPI could not start. */
int ranks_start(char *msg, size_t cap);
/* MPI_Finalize, if ranks_start began MPI. */
void ranks_stop(void);

/* Ends every process of the job at once (MPI_Abort, status code) after printing "s2s:
 * error: rank R of N: what" on stderr: for a failure on one rank that the others cannot
 * learn of at an exchange (they would wait in it for good). Without mpirun, the message
 * and exit(code). */
_Noreturn void ranks_abort(int code, const char *what);

/* This process's number (0 when there is one) and the number of processes. Rank 0 is
 * the lead: the one that writes the run directory. */
int ranks_rank(void);
int ranks_size(void);

/* Each of v[0 .. n-1] becomes the largest of every rank's: a collective, every rank must
 * call it. */
void ranks_max(long *v, int n);
/* root's bytes into every rank's buf. */
void ranks_broadcast(void *buf, size_t bytes, int root);
/* Every rank's `bytes` bytes, rank by rank, into all (size * bytes). */
void ranks_gather_all(const void *mine, void *all, size_t bytes);

/* Point to point, in messages of at most RANKS_MAX_MESSAGE bytes. A tag keeps apart
 * the streams between the same two ranks. ranks_post_send starts a send and returns
 * a handle that ranks_wait completes; the buffer must not change until then. */
enum { RANKS_MAX_MESSAGE = 1 << 30 };
typedef struct {
    long long request[2]; /* the MPI_Request, opaque here (mpi.h stays in ranks.c) */
    int pending;
} RanksSend;
void ranks_post_send(RanksSend *s, const void *buf, size_t bytes, int to, int tag);
void ranks_wait(RanksSend *s);
/* Receives up to cap bytes from rank `from`; returns how many came. */
size_t ranks_receive(void *buf, size_t cap, int from, int tag);

/* Seconds this process has spent waiting inside the exchanges above since it started:
 * what data parallelism costs, measured (s2s bench reports it per step). */
double ranks_seconds(void);
/* Bytes this process has sent point to point (ranks_post_send) since it started. */
double ranks_bytes_sent(void);

#endif
