/* test_hard.c: hard attention's estimator proven exactly (nn/MODEL.md, "Hard attention").
 * For a model small enough to enumerate every path of sampled positions, the
 * probability-weighted sum of the per-path gradients of the surrogate J is the gradient of
 * the exact objective L_s = sum_paths p(path | x) log p(y | path, x), computed here by
 * finite differences of the enumeration itself (double). Also the sampler: position j is
 * drawn for exactly a share alpha_j of the draws in [0, 1). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/attn_kernels.h"
#include "nn/fdcheck.h"
#include "nn/model.h"
#include "support/model_fixture.h"
#include "support/suites.h"

/* One sentence: 2 source words and </s> (S = 3), 1 target word and </s> (T = 2). */
static const int SRC[] = {4, 5}, TGT[] = {6};
enum { S = 3, T = 2 };

typedef struct {
    Dims d;
    Params P, G;
    Workspace ws;
    Batch bt;
    int heads, n_paths;   /* (S^H)^T paths */
    double baseline, entropy_weight;
    double *p0;           /* (n_paths) each path's probability at the checked point, for
                           * the entropy term's fixed weights */
    int with_entropy;     /* the objective adds lambda_e sum_paths p0(path) H(path) */
} Enum;

/* Writes path k's positions into the workspace: step i, head h is digit i * H + h of k
 * in base S. */
static void set_path(Enum *e, int k)
{
    for (int i = 0; i < T; i++)
        for (int h = 0; h < e->heads; h++) {
            e->ws.chosen[(size_t)i * e->heads + h] = k % S;
            k /= S;
        }
    e->ws.hard_rows[0] = 1;
}

/* The forward pass along path k: returns log p(y | path), and p(path | x) into *prob and
 * the path's entropy H_s into *entropy. */
static double path_forward(Enum *e, int k, double *prob, double *entropy)
{
    set_path(e, k);
    model_forward(&e->ws, &e->P, &e->bt);
    const size_t SB = (size_t)S; /* B = 1 */
    double logp = 0;
    for (int i = 0; i < T; i++)
        for (int h = 0; h < e->heads; h++) {
            const real *alpha = e->ws.alpha_heads + ((size_t)i * e->heads + h) * SB;
            logp += log(alpha[e->ws.chosen[(size_t)i * e->heads + h]]);
        }
    *prob = exp(logp);
    *entropy = e->ws.hard_stats.entropy_sum;
    return -e->ws.hard_stats.nll * e->bt.n_tgt_tokens; /* R_s = - the summed cross-entropy */
}

/* (1/N) [L_s + lambda_e sum_paths p0(path) H(path)]: what minus the expected gradient of J
 * must be the gradient of. */
static double exact_objective(void *ctx)
{
    Enum *e = ctx;
    double sum = 0;
    for (int k = 0; k < e->n_paths; k++) {
        double prob, entropy;
        double reward = path_forward(e, k, &prob, &entropy);
        sum += prob * reward;
        if (e->with_entropy)
            sum += e->entropy_weight * e->p0[k] * entropy;
    }
    return sum / e->bt.n_tgt_tokens;
}

static void enum_init(Enum *e, int heads, double baseline, double entropy_weight, uint64_t seed)
{
    memset(e, 0, sizeof *e);
    /* the fixture's sizes; with 2 heads, a = p = d_h = 8 split evenly */
    e->d = fixture_dims();
    e->d.score = SCORE_ADDITIVE;
    e->d.heads = heads;
    e->d.hard = 1;
    if (heads > 1)
        e->d.dec_hidden = e->d.attn = 2 * e->d.enc_hidden;
    e->heads = heads;
    e->n_paths = 1;
    for (int i = 0; i < T * heads; i++)
        e->n_paths *= S;
    e->baseline = baseline;
    e->entropy_weight = entropy_weight;
    params_alloc(&e->P, &e->d);
    params_alloc(&e->G, &e->d);
    Pcg32 rng;
    pcg32_seed(&rng, seed, 1);
    fill_uniform(e->P.mem, e->P.n, &rng, -0.5, 0.5);
    batch_init(&e->bt, 1, S, T);
    const int *src = SRC, *tgt = TGT;
    const int src_n = 2, tgt_n = 1;
    batch_fill(&e->bt, 1, &src, &src_n, &tgt, &tgt_n);
    model_workspace_init(&e->ws, &e->d, 1, S, T, 1);
    /* every sentence samples (no expected contexts), lambda_r = 1 */
    HardAttention h = {.mode = CONTEXT_SAMPLE, .expected_prob = 0, .reinforce_weight = 1,
                       .entropy_weight = entropy_weight, .baseline = baseline};
    pcg32_seed(&h.rng, seed, RNG_STREAM_HARD);
    model_set_hard(&e->ws, &h);
    model_forward(&e->ws, &e->P, &e->bt); /* lays out the buffers the paths are written to */
    ck_assert_int_eq(e->ws.S, S);
    ck_assert_int_eq(e->ws.T, T);
    e->ws.hard.mode = CONTEXT_GIVEN;
    e->p0 = malloc(sizeof(double) * e->n_paths);
}

static void enum_free(Enum *e)
{
    free(e->p0);
    params_free(&e->P);
    params_free(&e->G);
    model_workspace_free(&e->ws);
    batch_free(&e->bt);
}

/* The enumeration's check: minus the probability-weighted sum of the per-path gradients
 * of J (each with its own R_s - b, frozen as MODEL.md says) against finite differences
 * of exact_objective, every element of every tensor. */
static void check_expectation(int heads, double baseline, double entropy_weight)
{
    Enum e;
    enum_init(&e, heads, baseline, entropy_weight, 77);
    double *expected = calloc(e.P.n, sizeof(double));
    double total = 0;
    for (int k = 0; k < e.n_paths; k++) {
        double prob, entropy;
        path_forward(&e, k, &prob, &entropy);
        e.p0[k] = prob;
        total += prob;
        memset(e.G.mem, 0, sizeof(real) * e.G.n);
        model_backward(&e.G, &e.ws, &e.P, &e.bt);
        for (size_t x = 0; x < e.P.n; x++)
            expected[x] -= prob * e.G.mem[x]; /* E[-dJ] */
    }
    ck_assert_double_eq_tol(total, 1, 1e-14); /* the paths are every outcome */
    e.with_entropy = entropy_weight > 0;
    printf("hard attention, %d head%s, %d paths, baseline %g, entropy weight %g: E[-dJ] "
           "against finite differences of the exact objective, every element:\n", heads,
           heads > 1 ? "s" : "", e.n_paths, baseline, entropy_weight);
    double worst = 0;
    for (int t = 0; t < e.P.n_tensors; t++) {
        const Tensor *x = &e.P.tensors[t];
        const size_t at = (size_t)(x->data - e.P.mem);
        worst = fmax(worst, fdcheck_tensor(x->name, x->data, expected + at,
                                           (size_t)x->rows * x->cols, exact_objective, &e));
    }
    printf("  worst relative error: %.3e (tolerance %.0e)\n", worst, GRADCHECK_TOLERANCE);
    ck_assert_double_le(worst, GRADCHECK_TOLERANCE);
    free(expected);
    enum_free(&e);
}

START_TEST(expected_surrogate_gradient_is_the_exact_gradient_one_head)
{
    check_expectation(1, 0, 0);
}
END_TEST

START_TEST(expected_surrogate_gradient_is_the_exact_gradient_two_heads)
{
    check_expectation(2, 0, 0);
}
END_TEST

START_TEST(a_baseline_adds_no_bias)
{
    /* sum_paths p(path) (-b) dlog p(path) = -b d(sum_paths p(path)) = 0 */
    check_expectation(1, -3.7, 0);
    check_expectation(2, 2.25, 0);
}
END_TEST

START_TEST(the_entropy_term_adds_its_path_weighted_gradient)
{
    check_expectation(1, -1.5, 0.35);
    check_expectation(2, 0, 0.2);
}
END_TEST

/* The estimator without its REINFORCE term is biased: the same enumeration with lambda_r
 * = 0 misses the gradient by far more than the tolerance (the check above can fail). */
START_TEST(without_reinforce_the_expectation_misses)
{
    Enum e;
    enum_init(&e, 1, 0, 0, 77);
    e.ws.hard.reinforce_weight = 0;
    double *expected = calloc(e.P.n, sizeof(double));
    for (int k = 0; k < e.n_paths; k++) {
        double prob, entropy;
        path_forward(&e, k, &prob, &entropy);
        memset(e.G.mem, 0, sizeof(real) * e.G.n);
        model_backward(&e.G, &e.ws, &e.P, &e.bt);
        for (size_t x = 0; x < e.P.n; x++)
            expected[x] -= prob * e.G.mem[x];
    }
    /* v_a moves only the weights: without REINFORCE its expected gradient is 0 */
    const Tensor *v_a = NULL;
    for (int t = 0; t < e.P.n_tensors; t++)
        if (!strcmp(e.P.tensors[t].name, "v_a"))
            v_a = &e.P.tensors[t];
    ck_assert_ptr_nonnull(v_a);
    double err = fdcheck_tensor("v_a", v_a->data, expected + (v_a->data - e.P.mem),
                                (size_t)v_a->rows, exact_objective, &e);
    ck_assert_double_gt(err, 0.5);
    free(expected);
    enum_free(&e);
}
END_TEST

/* The estimate's variance over the paths, sum_paths p(path) |g(path) - E g|^2, of -dJ for
 * the baseline b and reward kind of e; its mean into mean (P.n). */
static double estimate_variance(Enum *e, double *mean)
{
    double *g = malloc(sizeof(double) * (size_t)e->n_paths * e->P.n);
    memset(mean, 0, sizeof(double) * e->P.n);
    for (int k = 0; k < e->n_paths; k++) {
        double entropy;
        path_forward(e, k, &e->p0[k], &entropy);
        memset(e->G.mem, 0, sizeof(real) * e->G.n);
        model_backward(&e->G, &e->ws, &e->P, &e->bt);
        for (size_t x = 0; x < e->P.n; x++) {
            g[(size_t)k * e->P.n + x] = -e->G.mem[x];
            mean[x] += e->p0[k] * -e->G.mem[x];
        }
    }
    double var = 0;
    for (int k = 0; k < e->n_paths; k++)
        for (size_t x = 0; x < e->P.n; x++) {
            double d = g[(size_t)k * e->P.n + x] - mean[x];
            var += e->p0[k] * d * d;
        }
    free(g);
    return var;
}

/* What the baseline is for: the same expectation (above), less variance. Measured
 * exactly over the 81 paths of the two-head model: b = 0, b = E[R] (the value a running
 * mean tends to), and the token reward (whose mean differs: it is biased). */
START_TEST(the_baseline_lowers_the_variance_of_the_estimate)
{
    Enum e;
    enum_init(&e, 2, 0, 0, 77);
    double *mean0 = malloc(sizeof(double) * e.P.n), *mean = malloc(sizeof(double) * e.P.n);
    double var0 = estimate_variance(&e, mean0);
    double expected_reward = 0, prob, entropy;
    for (int k = 0; k < e.n_paths; k++)
        expected_reward += e.p0[k] * path_forward(&e, k, &prob, &entropy);
    e.ws.hard.baseline = expected_reward;
    double var_b = estimate_variance(&e, mean);
    double largest = 0, diff = 0, bias = 0, norm = 0;
    for (size_t x = 0; x < e.P.n; x++) {
        largest = fmax(largest, fabs(mean0[x]));
        diff = fmax(diff, fabs(mean[x] - mean0[x]));
    }
    ck_assert_double_le(diff, 1e-12 * largest); /* the same expectation */
    e.ws.hard.token_reward = 1;
    e.ws.hard.token_baseline = expected_reward / e.bt.n_tgt_tokens;
    double var_tok = estimate_variance(&e, mean);
    for (size_t x = 0; x < e.P.n; x++) {
        bias += (mean[x] - mean0[x]) * (mean[x] - mean0[x]);
        norm += mean0[x] * mean0[x];
    }
    printf("variance of the gradient estimate over the paths (2 heads, 81 paths, E[R] = %.4f): "
           "b = 0: %.4e; b = E[R]: %.4e (%.1fx less); token reward: %.4e, its bias |E g - dL| = "
           "%.2e |dL|\n", expected_reward, var0, var_b, var0 / var_b, var_tok, sqrt(bias / norm));
    ck_assert_double_lt(var_b, var0);
    free(mean0);
    free(mean);
    enum_free(&e);
}
END_TEST

START_TEST(sampler_draws_each_position_for_its_weight)
{
    /* inverse CDF: u in [c_{j-1}, c_j) picks j, so the share of [0, 1) that picks j is
     * alpha_j; position 3 is padding-free but of weight 0, never drawn */
    const real alpha[4] = {0.125, 0.5, 0.375, 0};
    const double cases[][2] = {{0, 0}, {0.124999, 0}, {0.125, 1}, {0.624999, 1}, {0.625, 2},
                               {0.999999, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        ck_assert_int_eq(attn_choose(alpha, 0, 1, 4, &cases[k][0]), (int)cases[k][1]);
    /* argmax: the most probable, the first of equal ones */
    ck_assert_int_eq(attn_choose(alpha, 0, 1, 4, NULL), 1);
    const real tie[3] = {0.4, 0.4, 0.2};
    ck_assert_int_eq(attn_choose(tie, 0, 1, 3, NULL), 0);
    /* a row of a batch (B = 2, rows interleaved): row 1's weights only */
    const real two[6] = {0.9, 0.1, 0.05, 0.3, 0.05, 0.6};
    const double u = 0.35;
    ck_assert_int_eq(attn_choose(two, 1, 2, 3, &u), 1);
    ck_assert_int_eq(attn_choose(two, 1, 2, 3, NULL), 2);
}
END_TEST

Suite *hard_suite(void)
{
    Suite *s = suite_create("hard");
    TCase *tc = tcase_create("estimator");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, sampler_draws_each_position_for_its_weight);
    tcase_add_test(tc, expected_surrogate_gradient_is_the_exact_gradient_one_head);
    tcase_add_test(tc, expected_surrogate_gradient_is_the_exact_gradient_two_heads);
    tcase_add_test(tc, a_baseline_adds_no_bias);
    tcase_add_test(tc, the_entropy_term_adds_its_path_weighted_gradient);
    tcase_add_test(tc, without_reinforce_the_expectation_misses);
    tcase_add_test(tc, the_baseline_lowers_the_variance_of_the_estimate);
    suite_add_tcase(s, tc);
    return s;
}
