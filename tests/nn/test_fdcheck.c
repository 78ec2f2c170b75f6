/* test_fdcheck.c: the finite-difference checker itself, on losses whose gradients are
 * known exactly: right about right gradients even where its first step is too coarse
 * (issue 25: s2s gradcheck called two correct models broken), and still right about
 * wrong ones, however small the error above the tolerance. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nn/fdcheck.h"
#include "nn/ops.h"
#include "support/suites.h"

enum { N = 16 };

/* L(x) = sum_k sin(a x_k): its seventh derivative, a^7, sets the stencil's truncation
 * error, so a = 30 makes the step 1e-2 too coarse and a = 1 does not. */
typedef struct {
    real x[N];
    double a;
} Wave;

static double wave_loss(void *ctx)
{
    const Wave *w = ctx;
    double sum = 0;
    for (int k = 0; k < N; k++)
        sum += sin(w->a * w->x[k]);
    return sum;
}

static void wave_init(Wave *w, double a, real *grad)
{
    Pcg32 rng;
    pcg32_seed(&rng, 25, 1);
    fill_uniform(w->x, N, &rng, -1, 1);
    w->a = a;
    for (int k = 0; k < N; k++)
        grad[k] = a * cos(a * w->x[k]);
}

/* The sixth-order difference at step 1e-2 alone, written out here: the first estimate. */
static double first_estimate(Wave *w, int k)
{
    const double h = 1e-2, saved = w->x[k];
    double l[6];
    const double offsets[6] = {3, 2, 1, -1, -2, -3};
    for (int s = 0; s < 6; s++) {
        w->x[k] = saved + offsets[s] * h;
        l[s] = wave_loss(w);
    }
    w->x[k] = saved;
    return ((l[0] - l[5]) - 9 * (l[1] - l[4]) + 45 * (l[2] - l[3])) / (60 * h);
}

/* Runs the check with stdout in a file; returns its worst error and what it printed. */
static double checked(const char *name, Wave *w, const real *grad, char **printed)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/s2s-test-fdcheck-%ld.txt", (long)getpid());
    fflush(stdout);
    int saved = dup(1);
    ck_assert(freopen(path, "w", stdout) != NULL);
    double worst = fdcheck_tensor(name, w->x, grad, N, wave_loss, w);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    *printed = calloc(1, 8192);
    size_t n = fread(*printed, 1, 8191, f);
    (*printed)[n] = '\0';
    fclose(f);
    remove(path);
    printf("%s", *printed);
    return worst;
}

START_TEST(a_correct_gradient_passes_where_the_first_step_is_too_coarse)
{
    Wave w;
    real grad[N];
    wave_init(&w, 30, grad);
    int coarse = 0;
    for (int k = 0; k < N; k++) {
        const double fd = first_estimate(&w, k);
        coarse += fabs(fd - grad[k]) / fmax(fabs(fd), fabs(grad[k])) > GRADCHECK_TOLERANCE;
    }
    ck_assert_int_ge(coarse, 4); /* the first step alone would call it broken */
    char *out;
    ck_assert_double_le(checked("wave30", &w, grad, &out), 1e-9);
    /* and it says which elements needed the smaller step */
    ck_assert_ptr_nonnull(strstr(out, "wave30["));
    ck_assert_ptr_nonnull(strstr(out, "at step 0.01; "));
    ck_assert_ptr_nonnull(strstr(out, " at step 0.002\n"));
    ck_assert_ptr_null(strstr(out, "FAIL"));
    free(out);
}
END_TEST

/* One element's gradient off by 2e-6 of itself (twice the tolerance): a wrong gradient
 * fails whether or not the first step was coarse there, and the message says that the
 * estimates agreed with each other. */
START_TEST(a_gradient_off_by_twice_the_tolerance_fails_at_every_step)
{
    for (int c = 0; c < 2; c++) {
        Wave w;
        real grad[N];
        wave_init(&w, c ? 30 : 1, grad);
        const int k = 5;
        grad[k] *= 1 + 2e-6;
        char *out;
        const double worst = checked(c ? "wave30" : "wave1", &w, grad, &out);
        ck_assert_double_gt(worst, 1.5e-6);
        ck_assert_double_lt(worst, 2.5e-6);
        ck_assert_ptr_nonnull(strstr(out, "FAIL at [5]"));
        ck_assert_ptr_nonnull(strstr(out, "(the estimates agree: the gradient is wrong)"));
        free(out);
    }
}
END_TEST

/* L(x) = sum_k w_k relu(x_k), every x_k within even the smallest step of relu's kink
 * (1e-5 from 0; the steps go 1e-2 down to 8e-5, so no smaller step can rescue an
 * estimate): the gradient is w_k where x_k > 0 and 0 where x_k < 0. With the relu
 * pattern of the point frozen (ops.h), each difference measures that, not the kink. */
typedef struct {
    real x[N], w[N], y[N];
} Kinks;

static double kinks_loss(void *ctx)
{
    Kinks *c = ctx;
    relu_forward(c->y, c->x, N);
    return weighted_sum(c->y, c->w, N);
}

START_TEST(a_step_across_a_relu_kink_measures_the_side_of_the_point)
{
    Kinks c;
    Pcg32 rng;
    pcg32_seed(&rng, 25, 5);
    fill_uniform(c.w, N, &rng, -1, 1);
    real grad[N];
    for (int k = 0; k < N; k++) {
        c.x[k] = k % 2 ? 1e-5 : -1e-5;
        grad[k] = c.x[k] > 0 ? c.w[k] : 0;
    }
    printf("relu with every input 1e-5 from its kink:\n");
    ck_assert_double_le(fdcheck_tensor("x", c.x, grad, N, kinks_loss, &c), 1e-12);
    /* and the relu is free again afterwards: a step across the kink is seen */
    c.x[1] = 1e-5;
    const double at = kinks_loss(&c);
    c.x[1] = -1e-5;
    ck_assert_double_eq_tol(kinks_loss(&c), at - c.w[1] * 1e-5, 1e-17);
}
END_TEST

Suite *fdcheck_suite(void)
{
    Suite *s = suite_create("fdcheck");
    TCase *tc = tcase_create("fdcheck");
    /* the arithmetic of each OpenBLAS core type: scripts/checks/run-checks.py runs it under each family */
    tcase_set_tags(tc, "cores");
    tcase_add_test(tc, a_correct_gradient_passes_where_the_first_step_is_too_coarse);
    tcase_add_test(tc, a_gradient_off_by_twice_the_tolerance_fails_at_every_step);
    tcase_add_test(tc, a_step_across_a_relu_kink_measures_the_side_of_the_point);
    suite_add_tcase(s, tc);
    return s;
}
