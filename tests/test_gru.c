/* test_gru.c: finite-difference checks of the GRU step and of masked sequences in
 * both directions, in double; padding stays out of the recurrence. */
#include <check.h>
#include <string.h>

#include "gradcheck.h"
#include "gru.h"
#include "suites.h"

enum { B = 3, S = 4, H = 4, G = 3 * H, LDH = 2 * H };

typedef struct {
    real xg[B * G], h_prev[B * H], W_h[G * H], b_h[G], h[B * H], cache[B * 4 * H], R[B * H];
} StepCase;

static double step_loss(void *ctx)
{
    StepCase *c = ctx;
    gru_step_forward(c->h, c->cache, c->xg, G, c->h_prev, H, c->W_h, c->b_h, NULL, 0, B, H);
    return weighted_sum(c->h, c->R, B * H);
}

START_TEST(gru_step_backward_matches_finite_differences)
{
    StepCase c;
    Pcg32 rng;
    pcg32_seed(&rng, 21, 1);
    fill_uniform(c.xg, B * G, &rng, -1, 1);
    fill_uniform(c.h_prev, B * H, &rng, -1, 1);
    fill_uniform(c.W_h, G * H, &rng, -1, 1);
    fill_uniform(c.b_h, G, &rng, -1, 1);
    fill_uniform(c.R, B * H, &rng, -1, 1);
    real dxg[B * G], dhg[B * G], dh_prev[B * H] = {0}, dW_h[G * H] = {0}, db_h[G] = {0};
    step_loss(&c);
    gru_step_backward(dh_prev, dxg, G, dhg, dW_h, db_h, c.R, H, c.cache, c.h_prev, H, c.W_h,
                      NULL, 0, B, H);
    printf("gru step:\n");
    ck_assert_double_le(gradcheck_tensor("xg", c.xg, dxg, B * G, step_loss, &c), GRADCHECK_TOLERANCE);
    ck_assert_double_le(gradcheck_tensor("h_prev", c.h_prev, dh_prev, B * H, step_loss, &c), GRADCHECK_TOLERANCE);
    ck_assert_double_le(gradcheck_tensor("W_h", c.W_h, dW_h, G * H, step_loss, &c), GRADCHECK_TOLERANCE);
    ck_assert_double_le(gradcheck_tensor("b_h", c.b_h, db_h, G, step_loss, &c), GRADCHECK_TOLERANCE);
}
END_TEST

typedef struct {
    real xg[S * B * G], W_h[G * H], b_h[G];
    real hs[S * B * LDH], cache[S * B * 4 * H], R[S * B * LDH];
    int len[B];
    int reverse;
} SeqCase;

/* The sequence writes into every other H-wide half of hs (row stride 2H), as the
 * encoder's two directions do. */
static double seq_loss(void *ctx)
{
    SeqCase *c = ctx;
    gru_sequence_forward(c->hs, LDH, c->cache, c->xg, c->W_h, c->b_h, c->len, S, B, H, c->reverse);
    double sum = 0;
    for (int r = 0; r < S * B; r++)
        sum += weighted_sum(c->hs + r * LDH, c->R + r * LDH, H);
    return sum;
}

static void check_sequence(int reverse)
{
    SeqCase c = {.len = {4, 2, 1}, .reverse = reverse};
    Pcg32 rng;
    pcg32_seed(&rng, 22 + (uint64_t)reverse, 1);
    fill_uniform(c.xg, S * B * G, &rng, -1, 1);
    fill_uniform(c.W_h, G * H, &rng, -1, 1);
    fill_uniform(c.b_h, G, &rng, -1, 1);
    fill_uniform(c.R, S * B * LDH, &rng, -1, 1);
    real dxg[S * B * G], dW_h[G * H] = {0}, db_h[G] = {0}, dcarry[2 * B * H], dhg[S * B * G];
    seq_loss(&c);
    /* padding never enters the recurrence: h is exactly 0 at padded positions */
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++)
            if (j >= c.len[b])
                for (int k = 0; k < H; k++)
                    ck_assert(c.hs[(j * B + b) * LDH + k] == 0);
    gru_sequence_backward(dxg, dW_h, db_h, dcarry, dhg, c.R, c.hs, LDH, c.cache, c.W_h, c.len,
                          S, B, H, reverse);
    printf("gru sequence (%s):\n", reverse ? "reverse" : "forward");
    ck_assert_double_le(gradcheck_tensor("xg", c.xg, dxg, S * B * G, seq_loss, &c), GRADCHECK_TOLERANCE);
    ck_assert_double_le(gradcheck_tensor("W_h", c.W_h, dW_h, G * H, seq_loss, &c), GRADCHECK_TOLERANCE);
    ck_assert_double_le(gradcheck_tensor("b_h", c.b_h, db_h, G, seq_loss, &c), GRADCHECK_TOLERANCE);
}

START_TEST(gru_forward_sequence_backward_matches_finite_differences)
{
    check_sequence(0);
}
END_TEST

START_TEST(gru_reverse_sequence_backward_matches_finite_differences)
{
    check_sequence(1);
}
END_TEST

START_TEST(gru_reverse_sequence_starts_at_each_sentence_end)
{
    /* A sentence of length 2 padded to 4 must give the same states as the same
     * sentence alone in a batch of length 2. */
    SeqCase padded = {.len = {4, 2, 1}, .reverse = 1};
    Pcg32 rng;
    pcg32_seed(&rng, 24, 1);
    fill_uniform(padded.xg, S * B * G, &rng, -1, 1);
    fill_uniform(padded.W_h, G * H, &rng, -1, 1);
    fill_uniform(padded.b_h, G, &rng, -1, 1);
    gru_sequence_forward(padded.hs, LDH, padded.cache, padded.xg, padded.W_h, padded.b_h,
                         padded.len, S, B, H, 1);
    real xg1[2 * G], hs1[2 * H], cache1[2 * 4 * H];
    const int len1[1] = {2};
    for (int j = 0; j < 2; j++)
        memcpy(xg1 + j * G, padded.xg + (j * B + 1) * G, sizeof(real) * G);
    gru_sequence_forward(hs1, H, cache1, xg1, padded.W_h, padded.b_h, len1, 2, 1, H, 1);
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < H; k++)
            ck_assert_double_eq_tol(hs1[j * H + k], padded.hs[(j * B + 1) * LDH + k], 1e-14);
}
END_TEST

Suite *gru_suite(void)
{
    Suite *s = suite_create("gru");
    TCase *tc = tcase_create("gradients");
    tcase_add_test(tc, gru_step_backward_matches_finite_differences);
    tcase_add_test(tc, gru_forward_sequence_backward_matches_finite_differences);
    tcase_add_test(tc, gru_reverse_sequence_backward_matches_finite_differences);
    tcase_add_test(tc, gru_reverse_sequence_starts_at_each_sentence_end);
    suite_add_tcase(s, tc);
    return s;
}
