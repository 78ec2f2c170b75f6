/* test_attention.c: the attention kernel in double: finite-difference checks of the
 * additive and dot-product scores, masked softmax and context; and the two classic
 * worked examples of tests/fixtures/README.md through the same kernel. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "model/attention.h"
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

/* ---- several heads ------------------------------------------------------------------------ */

enum { P_W = 8, DH = 8, AW = 8, HS = 4, HB = 3 }; /* p, d_h, a; S and B of the step */

/* u[k] of model/MODEL.md: row r of a matrix with `cols` columns, restricted to block k of
 * its columns (H blocks), dotted with block k of v. */
static double block_dot(const real *u, const real *v, int width, int k, int H)
{
    const int w = width / H;
    double sum = 0;
    for (int c = k * w; c < (k + 1) * w; c++)
        sum += (double)u[c] * v[c];
    return sum;
}

/* Row r of M (rows, cols) times x (cols). */
static double row_times(const real *M, int cols, int r, const real *x)
{
    double sum = 0;
    for (int c = 0; c < cols; c++)
        sum += (double)M[r * cols + c] * x[c];
    return sum;
}

/* Multi-head attention is H single-head attentions on blocks (model/MODEL.md, "Several
 * heads"), written out here from the table, score by score, with plain loops: each
 * head's weights and its block of the context, against attn_step_forward with H heads.
 * (A wrong block or scale passed this suite before issue 25: only the model's finite
 * differences and the PyTorch cross-check could see it.) */
START_TEST(each_head_attends_with_its_own_blocks)
{
    static const ScoreKind scores[] = {SCORE_ADDITIVE, SCORE_DOT, SCORE_GENERAL, SCORE_SCALED_DOT};
    const int len[HB] = {4, 2, 1};
    real s_prev[HB * P_W], Hm[HS * HB * DH], W_a[AW * P_W], U_a[AW * DH], b_a[AW], v_a[AW],
        W_g[P_W * DH], W_q[AW * P_W], W_k[AW * DH];
    Pcg32 rng;
    pcg32_seed(&rng, 25, 4);
    fill_uniform(s_prev, HB * P_W, &rng, -1, 1);
    fill_uniform(Hm, HS * HB * DH, &rng, -1, 1);
    real *all[] = {W_a, U_a, b_a, v_a, W_g, W_q, W_k};
    const int sizes[] = {AW * P_W, AW * DH, AW, AW, P_W * DH, AW * P_W, AW * DH};
    for (int t = 0; t < 7; t++)
        fill_uniform(all[t], (size_t)sizes[t], &rng, -1, 1);
    const AttnParams P = {.W_a = W_a, .U_a = U_a, .b_a = b_a, .v_a = v_a, .W_g = W_g,
                          .W_q = W_q, .W_k = W_k};
    double worst = 0;
    for (size_t sc = 0; sc < sizeof scores / sizeof *scores; sc++)
        for (int H = 2; H <= 4; H += 2) {
            const AttnDims d = {scores[sc], P_W, DH, AW, H};
            ck_assert_int_eq(attn_size_problems(&d), 0);
            real keys[HS * HB * AW * 2], c[HB * DH], alpha[4 * HS * HB], mean[HS * HB],
                e[HS * HB], query[HB * P_W * 2], pre[HS * HB * AW * 2];
            attn_keys_forward(keys, &P, &d, Hm, HS * HB);
            const AttnInput in = {.s_prev = s_prev, .H = Hm, .keys = keys, .len = len, .S = HS,
                                  .B = HB, .rows = HB};
            AttnStep out = {.c = c, .ld_c = DH, .alpha = alpha, .mean = mean, .scores = e,
                            .query = query, .pre = pre};
            attn_step_forward(&out, &P, &d, &in);
            for (int b = 0; b < HB; b++)
                for (int k = 0; k < H; k++) {
                    double score[HS], most = -INFINITY;
                    const real *s = s_prev + b * P_W;
                    for (int j = 0; j < len[b]; j++) {
                        const real *h = Hm + (j * HB + b) * DH;
                        double v = 0;
                        if (d.score == SCORE_ADDITIVE) { /* v_a[k] . tanh(W_a[k] s + U_a[k] h + b_a[k]) */
                            for (int r = k * (AW / H); r < (k + 1) * (AW / H); r++)
                                v += v_a[r] * tanh(row_times(W_a, P_W, r, s) + row_times(U_a, DH, r, h) + b_a[r]);
                        } else if (d.score == SCORE_DOT) { /* s[k] . h[k] */
                            v = block_dot(s, h, DH, k, H);
                        } else if (d.score == SCORE_GENERAL) { /* s[k] . (W_g h)[k] */
                            for (int r = k * (P_W / H); r < (k + 1) * (P_W / H); r++)
                                v += s[r] * row_times(W_g, DH, r, h);
                        } else { /* (W_q s)[k] . (W_k h)[k] / sqrt(a / H) */
                            for (int r = k * (AW / H); r < (k + 1) * (AW / H); r++)
                                v += row_times(W_q, P_W, r, s) * row_times(W_k, DH, r, h);
                            v /= sqrt((double)AW / H);
                        }
                        score[j] = v;
                        most = fmax(most, v);
                    }
                    double total = 0, weight[HS];
                    for (int j = 0; j < len[b]; j++)
                        total += weight[j] = exp(score[j] - most);
                    for (int j = 0; j < HS; j++) {
                        const double want = j < len[b] ? weight[j] / total : 0;
                        worst = fmax(worst, fabs(alpha[k * HS * HB + j * HB + b] - want));
                    }
                    for (int u = k * (DH / H); u < (k + 1) * (DH / H); u++) {
                        double want = 0;
                        for (int j = 0; j < len[b]; j++)
                            want += weight[j] / total * Hm[(j * HB + b) * DH + u];
                        worst = fmax(worst, fabs(c[b * DH + u] - want));
                    }
                }
        }
    printf("several heads against their blocks written out: largest difference %.2e\n", worst);
    ck_assert_double_le(worst, 1e-14);
}
END_TEST

Suite *attention_suite(void)
{
    Suite *s = suite_create("attention");
    TCase *tc = tcase_create("kernel");
    /* the arithmetic of each OpenBLAS core type: scripts/checks/run-checks.py runs it under each family */
    tcase_set_tags(tc, "cores");
    tcase_add_test(tc, additive_attention_backward_matches_finite_differences);
    tcase_add_test(tc, dot_attention_backward_matches_finite_differences);
    tcase_add_test(tc, dot_score_example_matches_seed_vectors);
    tcase_add_test(tc, qkv_example_matches_seed_vectors);
    tcase_add_test(tc, each_head_attends_with_its_own_blocks);
    suite_add_tcase(s, tc);
    return s;
}
