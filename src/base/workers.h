/* workers.h: a fixed set of threads that run one job's tasks and then sleep.
 *
 * Training splits each batch into shards whose passes run side by side. A pool started
 * once and woken per step costs two condition-variable signals a step, where threads
 * that spin between products (OpenBLAS's) take the core from the one doing work.
 * Task t always runs on thread t % threads (thread 0 being the caller), so which thread
 * did what never depends on timing. */
#ifndef S2S_WORKERS_H
#define S2S_WORKERS_H

typedef struct Workers Workers;

typedef void (*WorkerTask)(void *ctx, int task);

/* The caller and threads - 1 more (threads >= 1; 1 starts none). */
Workers *workers_start(int threads);
int workers_threads(const Workers *w);
/* Runs task(ctx, t) for every t < tasks, spread as above; returns when all are done. */
void workers_run(Workers *w, WorkerTask task, void *ctx, int tasks);
/* Ends the threads and frees w (NULL is safe). */
void workers_stop(Workers *w);

/* A count that threads bring down and one thread waits to see at 0 (one job's tasks
 * telling a task of the same job that they are past some point). */
typedef struct Latch Latch;
Latch *latch_new(void);
void latch_free(Latch *l); /* NULL is safe */
void latch_set(Latch *l, int count);
void latch_count_down(Latch *l);
void latch_wait(Latch *l);

#endif
