/* test_hard.c: hard attention's estimator proven exactly (model/MODEL.md, "Hard attention").
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
#include "model/model.h"
#include "support/model_fixture.h"
#include "support/suites.h"

/* A batch of one or two sentences, each of 2 source words and </s> (S = 3): the proofs
 * take one of 1 target word (T = 2); the comparison of rewards adds one of 3 words, whose
 * choices have later words to affect and whose reward is 2 tokens longer. */
static const int SRC[] = {4, 5};
static const int TGT[2][3] = {{6, 7, 4}, {7, 4, 5}};
enum { S = 3, MAX_B = 2 };

typedef struct {
    Dims d;
    Params P, G;
    Workspace ws;
    Batch bt;
    int B, T;             /* sentences, and the longest target's words and </s> */
    int steps[MAX_B];     /* each sentence's target words and </s> */
    int heads, n_paths;   /* S^(H sum_b steps[b]) paths */
    double baseline, entropy_weight;
    double *p0;           /* (n_paths) each path's probability at the checked point, for
                           * the entropy term's fixed weights */
    int with_entropy;     /* the objective adds lambda_e sum_paths p0(path) H(path) */
} Enum;

/* Writes path k's positions into the workspace: the digits of k in base S, sentence by
 * sentence, step by step, head by head; -1 at a shorter sentence's steps past its end. */
static void set_path(Enum *e, int k)
{
    const int B = e->B, H = e->heads;
    for (int b = 0; b < B; b++) {
        for (int i = 0; i < e->T; i++)
            for (int h = 0; h < H; h++) {
                int pick = -1;
                if (i < e->steps[b]) {
                    pick = k % S;
                    k /= S;
                }
                e->ws.hard_pass.chosen[((size_t)i * B + b) * H + h] = pick;
            }
        e->ws.hard_pass.rows[b] = 1;
    }
}

/* The forward pass along path k: returns log p(y | path) (summed over the sentences), and
 * p(path | x) into *prob and the path's entropy into *entropy. */
static double path_forward(Enum *e, int k, double *prob, double *entropy)
{
    set_path(e, k);
    model_forward(&e->ws, &e->P, &e->bt);
    const int B = e->B, H = e->heads;
    const size_t SB = (size_t)S * B;
    double logp = 0;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < e->steps[b]; i++)
            for (int h = 0; h < H; h++) {
                const real *alpha = e->ws.dec.alpha_heads + ((size_t)i * H + h) * SB;
                const int j = e->ws.hard_pass.chosen[((size_t)i * B + b) * H + h];
                logp += log(alpha[(size_t)j * B + b]);
            }
    *prob = exp(logp);
    *entropy = e->ws.hard_pass.stats.entropy_sum;
    return e->ws.hard_pass.stats.reward_sum; /* sum_s R_s, R_s = log p(y_s | path) */
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

/* One sentence of tgt_words[0] target words, or two (the first the longer: a batch is
 * sorted by target length) when tgt_words[1] > 0. */
static void enum_init(Enum *e, int heads, const int tgt_words[MAX_B], double baseline,
                      double entropy_weight, uint64_t seed)
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
    e->B = tgt_words[1] > 0 ? 2 : 1;
    e->n_paths = 1;
    const int *src[MAX_B], *tgt[MAX_B];
    int src_n[MAX_B], tgt_n[MAX_B];
    for (int b = 0; b < e->B; b++) {
        ck_assert_int_le(tgt_words[b], 3);
        e->steps[b] = tgt_words[b] + 1;
        for (int i = 0; i < e->steps[b] * heads; i++)
            e->n_paths *= S;
        src[b] = SRC;
        src_n[b] = 2;
        tgt[b] = TGT[b];
        tgt_n[b] = tgt_words[b];
    }
    ck_assert_int_ge(e->steps[0], e->steps[1]);
    e->T = e->steps[0];
    e->baseline = baseline;
    e->entropy_weight = entropy_weight;
    params_alloc(&e->P, &e->d);
    params_alloc(&e->G, &e->d);
    Pcg32 rng;
    pcg32_seed(&rng, seed, 1);
    fill_uniform(e->P.mem, e->P.n, &rng, -0.5, 0.5);
    batch_init(&e->bt, e->B, S, e->T);
    batch_fill(&e->bt, e->B, src, src_n, tgt, tgt_n);
    model_workspace_init(&e->ws, &e->d, e->B, S, e->T, 1);
    /* every sentence samples (no expected contexts), lambda_r = 1 */
    HardAttention h = {.mode = CONTEXT_SAMPLE, .expected_prob = 0, .reinforce_weight = 1,
                       .entropy_weight = entropy_weight, .baseline = baseline};
    pcg32_seed(&h.rng, seed, RNG_STREAM_HARD);
    model_set_hard(&e->ws, &h);
    model_forward(&e->ws, &e->P, &e->bt); /* lays out the buffers the paths are written to */
    ck_assert_int_eq(e->ws.S, S);
    ck_assert_int_eq(e->ws.T, e->T);
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
    enum_init(&e, heads, (int[MAX_B]){1, 0}, baseline, entropy_weight, 77);
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
    enum_init(&e, 1, (int[MAX_B]){1, 0}, 0, 0, 77);
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
    printf("hard attention without its REINFORCE term, 1 head: E[-dJ] must miss the exact "
           "gradient of v_a:\n");
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

/* The three estimators of one batch, measured exactly over its paths: the variance of
 * -dJ with b = 0, with b = E[mean_s R_s] (the value the running mean tends to) and with
 * the token reward (b_tok = E[sum_s R_s] / N, likewise); how far that b moves the mean
 * (max abs, relative to the largest element: it must not), and the token reward's bias
 * |E g - dL| / |dL|. */
typedef struct {
    double expected_reward, var0, var_b, var_tok, baseline_shift, token_bias;
} Estimators;

static Estimators compare_estimators(int heads, const int tgt_words[MAX_B])
{
    Enum e;
    enum_init(&e, heads, tgt_words, 0, 0, 77);
    Estimators out = {0};
    double *exact = malloc(sizeof(double) * e.P.n), *mean = malloc(sizeof(double) * e.P.n);
    out.var0 = estimate_variance(&e, exact); /* b = 0: unbiased, so its mean is dL / N */
    double prob, entropy, total = 0;
    for (int k = 0; k < e.n_paths; k++) {
        out.expected_reward += e.p0[k] * path_forward(&e, k, &prob, &entropy);
        total += e.p0[k];
    }
    ck_assert_double_eq_tol(total, 1, 1e-14); /* the paths are every outcome */
    e.ws.hard.baseline = out.expected_reward / e.B;
    out.var_b = estimate_variance(&e, mean);
    double largest = 0, bias = 0, norm = 0;
    for (size_t x = 0; x < e.P.n; x++) {
        largest = fmax(largest, fabs(exact[x]));
        out.baseline_shift = fmax(out.baseline_shift, fabs(mean[x] - exact[x]));
    }
    out.baseline_shift /= largest;
    e.ws.hard.token_reward = 1;
    e.ws.hard.token_baseline = out.expected_reward / e.bt.n_tgt_tokens;
    out.var_tok = estimate_variance(&e, mean);
    for (size_t x = 0; x < e.P.n; x++) {
        bias += (mean[x] - exact[x]) * (mean[x] - exact[x]);
        norm += exact[x] * exact[x];
    }
    out.token_bias = sqrt(bias / norm);
    char words[32] = "";
    for (int b = 0; b < e.B; b++)
        snprintf(words + strlen(words), sizeof words - strlen(words), "%s%d", b ? " and " : "",
                 tgt_words[b]);
    printf("variance of the gradient estimate over the paths (%d head%s, sentences of %s target "
           "word%s, %d paths, E[sum_s R_s] = %.4f): b = 0: %.4e; b = E[mean_s R_s]: %.4e (%.1fx "
           "less, mean moved %.1e); token reward: %.4e (%.2fx the sentence reward's), its bias "
           "|E g - dL| = %.2e |dL|\n", heads, heads > 1 ? "s" : "", words,
           e.B > 1 || tgt_words[0] > 1 ? "s" : "", e.n_paths,
           out.expected_reward, out.var0, out.var_b, out.var0 / out.var_b, out.baseline_shift,
           out.var_tok, out.var_tok / out.var_b, out.token_bias);
    free(exact);
    free(mean);
    enum_free(&e);
    return out;
}

/* What the baseline is for: the same expectation (above), far less variance -- on the
 * 81 paths of the two-head model of one target word, 30 times less (scripts/README.md). */
START_TEST(the_baseline_lowers_the_variance_of_the_estimate)
{
    Estimators est = compare_estimators(2, (int[MAX_B]){1, 0});
    ck_assert_double_le(est.baseline_shift, 1e-12); /* the same expectation */
    ck_assert_double_ge(est.var0 / est.var_b, 30);
}
END_TEST

/* What the token reward trades (model/MODEL.md). A batch of sentences of 3 and 1 target
 * words (one head, 729 paths): one baseline b cannot fit rewards R_s that grow with the
 * sentence's length, a per-token baseline can, so the token reward's estimate varies 6
 * times less than the sentence reward's with its best constant b -- but its mean is not
 * the gradient. With the long sentence alone, where length cannot differ, the gain is gone:
 * what the token reward buys on real batches is mostly this. */
START_TEST(the_token_reward_trades_bias_for_variance)
{
    Estimators mixed = compare_estimators(1, (int[MAX_B]){3, 1});
    ck_assert_double_le(mixed.baseline_shift, 1e-12);
    ck_assert_double_le(mixed.var_tok, mixed.var_b / 5);
    ck_assert_double_gt(mixed.token_bias, 1e-5);
    Estimators alone = compare_estimators(1, (int[MAX_B]){3, 0});
    ck_assert_double_gt(alone.var_tok, alone.var_b / 2);
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
    /* weights whose rounded sum falls short of a draw: the last position of weight > 0 */
    const real short_sum[3] = {0.25, 0.25, 0};
    const double late = 0.75;
    ck_assert_int_eq(attn_choose(short_sum, 0, 1, 3, &late), 1);
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
    /* the arithmetic of each OpenBLAS core type: scripts/checks/run-checks.py runs it under each family */
    tcase_set_tags(tc, "cores");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, sampler_draws_each_position_for_its_weight);
    tcase_add_test(tc, expected_surrogate_gradient_is_the_exact_gradient_one_head);
    suite_add_tcase(s, tc);
    /* tens of thousands of passes (81 and 729 paths, finite differences of every
     * element over all of them): a second in the normal build, ten minutes under
     * valgrind, which skips them (tag `slow`) -- the one-head enumeration above and the
     * whole-model checks of hard variants run the same code there */
    TCase *all_paths = tcase_create("estimator-exhaustive");
    tcase_set_tags(all_paths, "slow");
    tcase_set_timeout(all_paths, 300);
    tcase_add_test(all_paths, expected_surrogate_gradient_is_the_exact_gradient_two_heads);
    tcase_add_test(all_paths, a_baseline_adds_no_bias);
    tcase_add_test(all_paths, the_entropy_term_adds_its_path_weighted_gradient);
    tcase_add_test(all_paths, without_reinforce_the_expectation_misses);
    tcase_add_test(all_paths, the_baseline_lowers_the_variance_of_the_estimate);
    tcase_add_test(all_paths, the_token_reward_trades_bias_for_variance);
    suite_add_tcase(s, all_paths);
    return s;
}
