/* test_average.c: training.average_last. The ring keeps the last k snapshots and their
 * mean is summed in double, oldest first; a run validates the mean, keeps it in best.ckpt
 * and trains on from the weights of the moment, exactly as a run without averaging
 * would. (Resuming an averaging run exactly is test_resume.c's: its runs average.) */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"
#include "train/weight_average.h"

enum { N = 5000 }; /* more than one block of the mean's sums */

static void fill(float *w, Pcg32 *rng)
{
    for (int j = 0; j < N; j++)
        w[j] = pcg32_uniform(rng, -1, 1) * (j % 7 ? 1.0f : 1e4f);
}

/* Pushes 1 to 6 snapshots into a ring of 3: after each, the ring holds the last
 * min(3, pushed), oldest first, and the mean is theirs to the last bit. */
START_TEST(the_mean_is_of_the_last_k_snapshots_oldest_first)
{
    Pcg32 rng;
    pcg32_seed(&rng, 5, 1);
    float *w[6], *mean = malloc(N * sizeof(float));
    WeightAverage a;
    weight_average_init(&a, 3, N);
    for (int p = 0; p < 6; p++) {
        w[p] = malloc(N * sizeof(float));
        fill(w[p], &rng);
        weight_average_push(&a, w[p]);
        const int held = p + 1 < 3 ? p + 1 : 3, first = p + 1 - held;
        ck_assert_int_eq(a.count, held);
        for (int i = 0; i < held; i++)
            ck_assert_msg(!memcmp(weight_average_snapshot(&a, i), w[first + i], N * sizeof(float)),
                          "after %d pushes, snapshot %d is not push %d", p + 1, i, first + i + 1);
        weight_average_mean(&a, mean);
        for (int j = 0; j < N; j++) {
            double sum = 0;
            for (int i = first; i <= p; i++)
                sum += w[i][j];
            const float want = (float)(sum * (1.0 / held));
            ck_assert_msg(mean[j] == want, "after %d pushes, element %d: %.9g, the mean is %.9g",
                          p + 1, j, mean[j], want);
        }
    }
    for (int p = 0; p < 6; p++)
        free(w[p]);
    free(mean);
    weight_average_free(&a);
}
END_TEST

/* dir/RUN/checkpoints/NAME with its training state. */
static void load_weights(const char *dir, const char *run, const char *name, Checkpoint *ck)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, run);
    load_checkpoint(ck, path, name);
}

/* The validation loss dir/RUN/metrics.jsonl records at step (its text, to the digits
 * written), copied into out. */
static void valid_loss_at(const char *dir, const char *run, int step, char *out, size_t cap)
{
    char path[700], key[64];
    snprintf(path, sizeof path, "%s/%s/metrics.jsonl", dir, run);
    snprintf(key, sizeof key, "{\"step\":%d,", step);
    char *text = read_file(path);
    for (const char *at = text; (at = strstr(at, key)); at++) {
        const char *loss = strstr(at, "\"valid_loss\":");
        if (loss && loss < strchr(at, '\n')) {
            snprintf(out, cap, "%.*s", (int)strcspn(loss, ","), loss);
            free(text);
            return;
        }
    }
    ck_abort_msg("%s has no validation at step %d", path, step);
}

/* The tiny run validated at steps 5 and 10 (the loss improves at both) with the mean of
 * the last 2 validations: best.ckpt holds (w_5 + w_10) / 2 of the weights at those steps,
 * last.ckpt the weights of step 10, which are those of a run that does not average; and
 * what validation scored is the mean (at step 5, the mean of one: the plain run's loss;
 * at step 10 another). */
START_TEST(best_ckpt_holds_the_mean_and_training_goes_on_from_the_weights)
{
    char dir[512], run_dir[700];
    scratch_dir(dir, sizeof dir, "average");
    write_tiny_setup(dir);
    const char *runs[] = {"plain5", "plain10", "averaged"};
    const char *steps[] = {"training.max_steps=5", "training.max_steps=10", "training.max_steps=10"};
    for (int r = 0; r < 3; r++) {
        snprintf(run_dir, sizeof run_dir, "run_dir=%s/%s", dir, runs[r]);
        const char *sets[] = {run_dir, steps[r], "training.valid_every=5",
                              "training.early_stopping_metric=loss",
                              r == 2 ? "training.average_last=2" : "training.average_last=1", NULL};
        ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    }
    Checkpoint w5, w10, last, best;
    load_weights(dir, "plain5", "last.ckpt", &w5);
    load_weights(dir, "plain10", "last.ckpt", &w10);
    load_weights(dir, "averaged", "last.ckpt", &last);
    load_weights(dir, "averaged", "best.ckpt", &best);
    const size_t n = w5.model.params.n;
    ck_assert_msg(!memcmp(last.model.params.mem, w10.model.params.mem, n * sizeof(float)),
                  "averaging changed the weights training goes on from");
    ck_assert_int_eq(best.progress.best_step, 10);
    ck_assert_int_eq(last.average.count, 2);
    ck_assert(!memcmp(weight_average_snapshot(&last.average, 0), w5.model.params.mem,
                      n * sizeof(float)));
    ck_assert(!memcmp(weight_average_snapshot(&last.average, 1), w10.model.params.mem,
                      n * sizeof(float)));
    for (size_t j = 0; j < n; j++) {
        const float want = (float)(((double)w5.model.params.mem[j] + w10.model.params.mem[j]) * 0.5);
        ck_assert_msg(best.model.params.mem[j] == want,
                      "best.ckpt weight %zu: %.9g, the mean is %.9g",
                      j, best.model.params.mem[j], want);
    }
    ck_assert_msg(memcmp(best.model.params.mem, w10.model.params.mem, n * sizeof(float)) != 0,
                  "best.ckpt holds the weights of step 10, not the mean");
    char plain[2][64], mean[2][64];
    for (int v = 0; v < 2; v++) {
        valid_loss_at(dir, "plain10", 5 * (v + 1), plain[v], sizeof plain[v]);
        valid_loss_at(dir, "averaged", 5 * (v + 1), mean[v], sizeof mean[v]);
    }
    ck_assert_str_eq(mean[0], plain[0]);
    ck_assert_msg(strcmp(mean[1], plain[1]) != 0, "validation at step 10 scored the weights of "
                  "the moment (%s), not their mean", plain[1]);
    checkpoint_free(&w5);
    checkpoint_free(&w10);
    checkpoint_free(&last);
    checkpoint_free(&best);
}
END_TEST

Suite *average_suite(void)
{
    Suite *s = suite_create("average");
    TCase *tc = tcase_create("average");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, the_mean_is_of_the_last_k_snapshots_oldest_first);
    tcase_add_test(tc, best_ckpt_holds_the_mean_and_training_goes_on_from_the_weights);
    suite_add_tcase(s, tc);
    return s;
}
