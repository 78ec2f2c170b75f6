/* test_attention.c: the attention kernel in double: finite-difference checks of the
 * additive and dot-product scores, masked softmax and context; and the two classic
 * worked examples of tests/fixtures/README.md through the same kernel. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "nn/attn_kernels.h"
#include "nn/fdcheck.h"
#include "support/qkv_example.h"
#include "support/suites.h"

enum { B = 3, S = 4, A = 5, D = 6 };

typedef struct {
    real q[B * D], keys[S * B * D], v_a[A], values[S * B * D];
    real e[S * B], pre[S * B * A], alpha[S * B], c[B * D], R[B * D];
    int len[B];
    int additive; /* else scaled dot product over D */
} AttnCase;

static double attn_loss(void *ctx)
{
    AttnCase *c = ctx;
    if (c->additive)
        attn_additive_scores_forward(c->e, c->pre, c->q, c->keys, A, c->v_a, c->len, S, B, A);
    else
        attn_dot_scores_forward(c->e, c->q, D, c->keys, D, 1 / sqrt(D), c->len, S, B, D);
    attn_softmax_forward(c->alpha, c->e, c->len, S, B);
    attn_context_forward(c->c, D, c->alpha, c->values, D, c->len, S, B, D);
    return weighted_sum(c->c, c->R, B * D);
}

static void check_attention(int additive)
{
    AttnCase c = {.len = {4, 2, 1}, .additive = additive};
    Pcg32 rng;
    pcg32_seed(&rng, 31 + (uint64_t)additive, 1);
    fill_uniform(c.q, B * D, &rng, -1, 1);
    fill_uniform(c.keys, S * B * D, &rng, -1, 1);
    fill_uniform(c.v_a, A, &rng, -2, 2);
    fill_uniform(c.values, S * B * D, &rng, -1, 1);
    fill_uniform(c.R, B * D, &rng, -1, 1);
    attn_loss(&c);
    real dalpha[S * B], de[S * B];
    real dq[B * D] = {0}, dkeys[S * B * D] = {0}, dv_a[A] = {0}, dvalues[S * B * D] = {0};
    attn_context_backward(dalpha, dvalues, c.R, D, c.alpha, c.values, D, c.len, S, B, D);
    attn_softmax_backward(de, dalpha, c.alpha, c.len, S, B);
    if (additive)
        attn_additive_scores_backward(dq, dkeys, dv_a, de, c.pre, A, c.v_a, c.len, S, B, A);
    else
        attn_dot_scores_backward(dq, dkeys, de, c.q, D, c.keys, D, 1 / sqrt(D), c.len, S, B, D);
    const int key_width = additive ? A : D;
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++)
            if (j >= c.len[b]) {
                ck_assert(c.alpha[j * B + b] == 0);
                for (int u = 0; u < D; u++)
                    ck_assert(dvalues[(j * B + b) * D + u] == 0);
                for (int u = 0; u < key_width; u++)
                    ck_assert(dkeys[(j * B + b) * key_width + u] == 0);
            }
    printf("attention (%s):\n", additive ? "additive" : "scaled dot");
    /* the additive score reads A-wide rows of q and keys, the dot score D-wide ones */
    ck_assert_double_le(fdcheck_tensor("q", c.q, dq, B * key_width, attn_loss, &c), GRADCHECK_TOLERANCE);
    ck_assert_double_le(fdcheck_tensor("keys", c.keys, dkeys, S * B * key_width, attn_loss, &c),
                        GRADCHECK_TOLERANCE);
    ck_assert_double_le(fdcheck_tensor("values", c.values, dvalues, S * B * D, attn_loss, &c), GRADCHECK_TOLERANCE);
    if (additive)
        ck_assert_double_le(fdcheck_tensor("v_a", c.v_a, dv_a, A, attn_loss, &c), GRADCHECK_TOLERANCE);
}

START_TEST(additive_attention_backward_matches_finite_differences)
{
    check_attention(1);
}
END_TEST

START_TEST(dot_attention_backward_matches_finite_differences)
{
    check_attention(0);
}
END_TEST

START_TEST(dot_score_example_matches_seed_vectors)
{
    /* tests/fixtures/README.md, example 2: s = [5, 1, 20] against four annotations. */
    const real s[3] = {5, 1, 20};
    const real h[4 * 3] = {3, 12, 45, 59, 2, 5, 1, 43, 5, 4, 3, 45.3};
    real e[4], alpha[4], c[3];
    attn_dot_scores_forward(e, s, 3, h, 3, 1, NULL, 4, 1, 3);
    ck_assert(e[0] == 927 && e[1] == 397 && e[2] == 148 && e[3] == 929);
    attn_softmax_forward(alpha, e, NULL, 4, 1);
    ck_assert_double_eq_tol(alpha[0], 0.11920292202211755, 1e-15);
    ck_assert_double_eq_tol(alpha[1] / 7.947151507960154e-232, 1, 1e-13);
    ck_assert(alpha[2] == 0.0); /* e^-781 underflows below the smallest subnormal */
    ck_assert_double_eq_tol(alpha[3], 0.8807970779778823, 1e-15);
    attn_context_forward(c, 3, alpha, h, 3, NULL, 4, 1, 3);
    const double c_expected[3] = {3.8807970779778824440597291, 4.0728262981990580034624377,
                                  45.264239123393364733217919};
    for (int u = 0; u < 3; u++)
        ck_assert_double_eq_tol(c[u] / c_expected[u], 1, 1e-14);
}
END_TEST

START_TEST(qkv_example_matches_seed_vectors)
{
    /* tests/fixtures/README.md, example 1: four words, W_Q/W_K/W_V given there; scaled dot
     * product over d = 3. Each query row is one decoder step with B = 1. */
    const real Q[4 * 3] = {2, 0, 2, 2, 0, 0, 4, 0, 2, 2, 1, 2};
    const real K[4 * 3] = {2, 2, 2, 0, 2, 1, 2, 4, 3, 0, 1, 1};
    const real V[4 * 3] = {1, 1, 0, 0, 1, 1, 1, 2, 1, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        real e[4], alpha[4], out[3];
        attn_dot_scores_forward(e, Q + i * 3, 3, K, 3, 1 / sqrt(3.0), NULL, 4, 1, 3);
        attn_softmax_forward(alpha, e, NULL, 4, 1);
        attn_context_forward(out, 3, alpha, V, 3, NULL, 4, 1, 3);
        for (int j = 0; j < 4; j++)
            ck_assert_double_eq_tol(alpha[j] / QKV_WEIGHTS[i][j], 1, 1e-14);
        for (int u = 0; u < 3; u++)
            ck_assert_double_eq_tol(out[u] / QKV_ATTENTION[i][u], 1, 1e-14);
    }
}
END_TEST

Suite *attention_suite(void)
{
    Suite *s = suite_create("attention");
    TCase *tc = tcase_create("kernel");
    tcase_add_test(tc, additive_attention_backward_matches_finite_differences);
    tcase_add_test(tc, dot_attention_backward_matches_finite_differences);
    tcase_add_test(tc, dot_score_example_matches_seed_vectors);
    tcase_add_test(tc, qkv_example_matches_seed_vectors);
    suite_add_tcase(s, tc);
    return s;
}
