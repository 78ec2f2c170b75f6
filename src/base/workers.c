/* workers.c: the pool of workers.h on POSIX threads. */
#include "base/workers.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "base/mem.h"

struct Workers {
    int threads;
    pthread_t *ids;          /* (threads - 1) */
    pthread_mutex_t lock;
    pthread_cond_t wake;     /* a job was posted, or the pool is stopping */
    pthread_cond_t finished; /* a thread finished its share of the job */
    long job;                /* posted jobs so far: a thread runs each number once */
    int busy;                /* threads still working on the current job */
    int stopping;
    WorkerTask task;
    void *ctx;
    int tasks;
};

typedef struct {
    Workers *pool;
    int index;
} Seat;

static void run_share(Workers *w, int index)
{
    for (int t = index; t < w->tasks; t += w->threads)
        w->task(w->ctx, t);
}

static void *worker_main(void *arg)
{
    Seat *seat = arg;
    Workers *w = seat->pool;
    long seen = 0;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (w->job == seen && !w->stopping)
            pthread_cond_wait(&w->wake, &w->lock);
        if (w->stopping)
            break;
        seen = w->job;
        pthread_mutex_unlock(&w->lock);
        run_share(w, seat->index);
        pthread_mutex_lock(&w->lock);
        if (--w->busy == 0)
            pthread_cond_signal(&w->finished);
    }
    pthread_mutex_unlock(&w->lock);
    free(seat);
    return NULL;
}

Workers *workers_start(int threads)
{
    Workers *w = xcalloc(1, sizeof *w);
    const int wanted = threads < 1 ? 1 : threads;
    w->threads = wanted;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->finished, NULL);
    w->ids = xcalloc((size_t)wanted, sizeof(pthread_t));
    /* the threads start with every signal blocked: signals stay the main thread's, whose
     * handlers and interrupted reads training relies on (base/interrupt.h) */
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    for (int k = 1; k < wanted; k++) {
        Seat *seat = xmalloc_array(1, sizeof *seat);
        *seat = (Seat){w, k};
        if (pthread_create(&w->ids[k - 1], NULL, worker_main, seat) != 0) {
            free(seat); /* fewer threads do the same work, only slower */
            w->threads = k;
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    return w;
}

int workers_threads(const Workers *w)
{
    return w->threads;
}

void workers_run(Workers *w, WorkerTask task, void *ctx, int tasks)
{
    if (w->threads == 1 || tasks <= 1) {
        for (int t = 0; t < tasks; t++)
            task(ctx, t);
        return;
    }
    pthread_mutex_lock(&w->lock);
    w->task = task;
    w->ctx = ctx;
    w->tasks = tasks;
    w->busy = w->threads - 1;
    w->job++;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    run_share(w, 0);
    pthread_mutex_lock(&w->lock);
    while (w->busy > 0)
        pthread_cond_wait(&w->finished, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

void workers_stop(Workers *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = 1;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    for (int k = 1; k < w->threads; k++)
        pthread_join(w->ids[k - 1], NULL);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    pthread_cond_destroy(&w->finished);
    free(w->ids);
    free(w);
}

struct Latch {
    pthread_mutex_t lock;
    pthread_cond_t zero;
    int count;
};

Latch *latch_new(void)
{
    Latch *l = xcalloc(1, sizeof *l);
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->zero, NULL);
    return l;
}

void latch_free(Latch *l)
{
    if (!l)
        return;
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->zero);
    free(l);
}

void latch_set(Latch *l, int count)
{
    pthread_mutex_lock(&l->lock);
    l->count = count;
    pthread_mutex_unlock(&l->lock);
}

void latch_count_down(Latch *l)
{
    pthread_mutex_lock(&l->lock);
    if (--l->count == 0)
        pthread_cond_broadcast(&l->zero);
    pthread_mutex_unlock(&l->lock);
}

void latch_wait(Latch *l)
{
    pthread_mutex_lock(&l->lock);
    while (l->count > 0)
        pthread_cond_wait(&l->zero, &l->lock);
    pthread_mutex_unlock(&l->lock);
}
