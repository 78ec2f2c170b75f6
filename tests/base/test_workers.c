/* test_workers.c: the pool of base/workers.h runs every task once, on the thread its
 * number assigns, job after job. */
#include <check.h>
#include <pthread.h>

#include "base/workers.h"
#include "support/suites.h"

enum { TASKS = 11 };

typedef struct {
    int runs[TASKS];
    pthread_t thread[TASKS];
} Record;

static void record_task(void *ctx, int task)
{
    Record *r = ctx;
    r->runs[task]++; /* each task's own slot: no two threads write one */
    r->thread[task] = pthread_self();
}

START_TEST(every_task_runs_once_on_the_thread_its_number_gives)
{
    for (int threads = 1; threads <= 4; threads++) {
        Workers *w = workers_start(threads);
        ck_assert_int_eq(workers_threads(w), threads);
        for (int job = 0; job < 50; job++) {
            Record r = {.runs = {0}};
            const int tasks = 1 + job % TASKS;
            workers_run(w, record_task, &r, tasks);
            for (int t = 0; t < tasks; t++) {
                ck_assert_int_eq(r.runs[t], 1);
                /* task t on thread t % threads, the caller being thread 0 */
                if (t % threads == 0 || tasks == 1)
                    ck_assert(pthread_equal(r.thread[t], pthread_self()));
                else
                    ck_assert(!pthread_equal(r.thread[t], pthread_self()));
                if (t >= threads && tasks > 1)
                    ck_assert(pthread_equal(r.thread[t], r.thread[t - threads]));
                if (t > 0 && t < threads && tasks > 1)
                    ck_assert(!pthread_equal(r.thread[t], r.thread[t - 1]));
            }
            for (int t = tasks; t < TASKS; t++)
                ck_assert_int_eq(r.runs[t], 0);
        }
        workers_stop(w);
    }
    workers_stop(NULL);
}
END_TEST

Suite *workers_suite(void)
{
    Suite *s = suite_create("workers");
    TCase *tc = tcase_create("workers");
    tcase_add_test(tc, every_task_runs_once_on_the_thread_its_number_gives);
    suite_add_tcase(s, tc);
    return s;
}
