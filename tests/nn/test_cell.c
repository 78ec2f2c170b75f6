/* test_cell.c: finite-difference checks, in double, of each recurrent cell (GRU, LSTM,
 * tanh RNN): one step, including the LSTM's cell state in and out, and masked sequences
 * in both directions; padding stays out of the recurrence. Each test loops over the
 * three cells. */
#include <check.h>
#include <string.h>

#include "nn/cell.h"
#include "nn/fdcheck.h"
#include "support/suites.h"

enum { B = 3, S = 4, H = 4, GMAX = 4 * H, CMAX = 6 * H, LDH = 2 * H };

static const CellKind KINDS[] = {CELL_GRU, CELL_LSTM, CELL_RNN};

typedef struct {
    CellKind kind;
    int G, C; /* gate and cache widths of this cell */
    real xg[B * GMAX], h_prev[B * H], cache_prev[B * CMAX], W_h[GMAX * H], b_h[GMAX];
    real h[B * H], cache[B * CMAX], R[B * H], R_cell[B * H];
} StepCase;

/* The LSTM's loss also weighs the new cell state, so that a gradient arrives there from
 * outside the step, as it does from the next step in a sequence. */
static double step_loss(void *ctx)
{
    StepCase *c = ctx;
    cell_step_forward(c->kind, c->h, c->cache, c->xg, c->G, c->h_prev, H, c->cache_prev, c->W_h,
                      c->b_h, NULL, 0, B, H);
    double loss = weighted_sum(c->h, c->R, B * H);
    if (c->kind == CELL_LSTM)
        for (int b = 0; b < B; b++)
            loss += weighted_sum(c->cache + b * c->C + 4 * H, c->R_cell + b * H, H);
    return loss;
}

START_TEST(cell_step_backward_matches_finite_differences)
{
    static StepCase c;
    memset(&c, 0, sizeof c);
    c.kind = KINDS[_i];
    c.G = cell_gates(c.kind) * H;
    c.C = cell_cache_width(c.kind) * H;
    Pcg32 rng;
    pcg32_seed(&rng, 21 + (uint64_t)_i, 1);
    fill_uniform(c.xg, B * c.G, &rng, -1, 1);
    fill_uniform(c.h_prev, B * H, &rng, -1, 1);
    fill_uniform(c.cache_prev, B * c.C, &rng, -1, 1);
    fill_uniform(c.W_h, c.G * H, &rng, -1, 1);
    fill_uniform(c.b_h, c.G, &rng, -1, 1);
    fill_uniform(c.R, B * H, &rng, -1, 1);
    fill_uniform(c.R_cell, B * H, &rng, -1, 1);
    real dxg[B * GMAX], dhg[B * GMAX], dh_prev[B * H] = {0}, dW_h[GMAX * H] = {0};
    real db_h[GMAX] = {0}, dcell[B * H], dcache_prev[B * CMAX] = {0};
    memcpy(dcell, c.R_cell, sizeof dcell);
    step_loss(&c);
    cell_step_backward(c.kind, dh_prev, c.kind == CELL_LSTM ? dcell : NULL, dxg, c.G, dhg, dW_h,
                       db_h, c.R, H, c.cache, c.h_prev, H, c.cache_prev, c.W_h, NULL, 0, B, H);
    printf("%s step:\n", cell_name(c.kind));
    ck_assert_double_le(fdcheck_tensor("xg", c.xg, dxg, B * c.G, step_loss, &c), GRADCHECK_TOLERANCE);
    ck_assert_double_le(fdcheck_tensor("h_prev", c.h_prev, dh_prev, B * H, step_loss, &c), GRADCHECK_TOLERANCE);
    ck_assert_double_le(fdcheck_tensor("W_h", c.W_h, dW_h, c.G * H, step_loss, &c), GRADCHECK_TOLERANCE);
    ck_assert_double_le(fdcheck_tensor("b_h", c.b_h, db_h, c.G, step_loss, &c), GRADCHECK_TOLERANCE);
    /* dhg is the gradient of W_h h + b_h: db_h is its column sum */
    for (int k = 0; k < c.G; k++) {
        double sum = 0;
        for (int b = 0; b < B; b++)
            sum += dhg[b * c.G + k];
        ck_assert_double_eq_tol(sum, db_h[k], 1e-12);
    }
    if (c.kind == CELL_LSTM) { /* only the cell state of the previous cache is read */
        for (int b = 0; b < B; b++)
            memcpy(dcache_prev + b * c.C + 4 * H, dcell + b * H, sizeof(real) * H);
        ck_assert_double_le(fdcheck_tensor("cache_prev", c.cache_prev, dcache_prev, B * c.C,
                                             step_loss, &c), GRADCHECK_TOLERANCE);
    }
}
END_TEST

typedef struct {
    CellKind kind;
    int G, C;
    real xg[S * B * GMAX], W_h[GMAX * H], b_h[GMAX];
    real hs[S * B * LDH], cache[S * B * CMAX], R[S * B * LDH];
    int len[B];
    int reverse;
} SeqCase;

/* The sequence writes into every other H-wide half of hs (row stride 2H), as the
 * encoder's two directions do. */
static double seq_loss(void *ctx)
{
    SeqCase *c = ctx;
    cell_sequence_forward(c->kind, c->hs, LDH, c->cache, c->xg, c->W_h, c->b_h, c->len, S, B, H,
                          c->reverse);
    double sum = 0;
    for (int r = 0; r < S * B; r++)
        sum += weighted_sum(c->hs + r * LDH, c->R + r * LDH, H);
    return sum;
}

static void check_sequence(CellKind kind, int reverse)
{
    static SeqCase c;
    memset(&c, 0, sizeof c);
    c = (SeqCase){.kind = kind, .len = {4, 2, 1}, .reverse = reverse};
    c.G = cell_gates(kind) * H;
    c.C = cell_cache_width(kind) * H;
    Pcg32 rng;
    pcg32_seed(&rng, 22 + (uint64_t)reverse + 2 * (uint64_t)kind, 1);
    fill_uniform(c.xg, S * B * c.G, &rng, -1, 1);
    fill_uniform(c.W_h, c.G * H, &rng, -1, 1);
    fill_uniform(c.b_h, c.G, &rng, -1, 1);
    fill_uniform(c.R, S * B * LDH, &rng, -1, 1);
    static real dxg[S * B * GMAX], dW_h[GMAX * H], db_h[GMAX], dhg[S * B * GMAX];
    memset(dW_h, 0, sizeof dW_h);
    memset(db_h, 0, sizeof db_h);
    real dcarry[3 * B * H];
    ck_assert_uint_le(cell_sequence_scratch(kind, B, H), sizeof dcarry / sizeof *dcarry);
    seq_loss(&c);
    /* padding never enters the recurrence: h is exactly 0 at padded positions */
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++)
            if (j >= c.len[b])
                for (int k = 0; k < H; k++)
                    ck_assert(c.hs[(j * B + b) * LDH + k] == 0);
    cell_sequence_backward(kind, dxg, dW_h, db_h, dcarry, dhg, c.R, c.hs, LDH, c.cache, c.W_h,
                           c.len, S, B, H, reverse);
    printf("%s sequence (%s):\n", cell_name(kind), reverse ? "reverse" : "forward");
    ck_assert_double_le(fdcheck_tensor("xg", c.xg, dxg, S * B * c.G, seq_loss, &c), GRADCHECK_TOLERANCE);
    ck_assert_double_le(fdcheck_tensor("W_h", c.W_h, dW_h, c.G * H, seq_loss, &c), GRADCHECK_TOLERANCE);
    ck_assert_double_le(fdcheck_tensor("b_h", c.b_h, db_h, c.G, seq_loss, &c), GRADCHECK_TOLERANCE);
}

START_TEST(cell_forward_sequence_backward_matches_finite_differences)
{
    check_sequence(KINDS[_i], 0);
}
END_TEST

START_TEST(cell_reverse_sequence_backward_matches_finite_differences)
{
    check_sequence(KINDS[_i], 1);
}
END_TEST

START_TEST(cell_reverse_sequence_starts_at_each_sentence_end)
{
    /* A sentence of length 2 padded to 4 must give the same states as the same
     * sentence alone in a batch of length 2. */
    static SeqCase padded;
    memset(&padded, 0, sizeof padded);
    padded = (SeqCase){.kind = KINDS[_i], .len = {4, 2, 1}, .reverse = 1};
    const int G = cell_gates(padded.kind) * H;
    Pcg32 rng;
    pcg32_seed(&rng, 24, 1);
    fill_uniform(padded.xg, S * B * G, &rng, -1, 1);
    fill_uniform(padded.W_h, G * H, &rng, -1, 1);
    fill_uniform(padded.b_h, G, &rng, -1, 1);
    cell_sequence_forward(padded.kind, padded.hs, LDH, padded.cache, padded.xg, padded.W_h,
                          padded.b_h, padded.len, S, B, H, 1);
    real xg1[2 * GMAX], hs1[2 * H], cache1[2 * CMAX];
    const int len1[1] = {2};
    for (int j = 0; j < 2; j++)
        memcpy(xg1 + j * G, padded.xg + (j * B + 1) * G, sizeof(real) * G);
    cell_sequence_forward(padded.kind, hs1, H, cache1, xg1, padded.W_h, padded.b_h, len1, 2, 1,
                          H, 1);
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < H; k++)
            ck_assert_double_eq_tol(hs1[j * H + k], padded.hs[(j * B + 1) * LDH + k], 1e-14);
}
END_TEST

Suite *cell_suite(void)
{
    Suite *s = suite_create("cell");
    TCase *tc = tcase_create("gradients");
    /* the arithmetic of each OpenBLAS core type: scripts/checks/run-checks.py runs it under each family */
    tcase_set_tags(tc, "cores");
    const int n = (int)(sizeof KINDS / sizeof *KINDS);
    tcase_add_loop_test(tc, cell_step_backward_matches_finite_differences, 0, n);
    tcase_add_loop_test(tc, cell_forward_sequence_backward_matches_finite_differences, 0, n);
    tcase_add_loop_test(tc, cell_reverse_sequence_backward_matches_finite_differences, 0, n);
    tcase_add_loop_test(tc, cell_reverse_sequence_starts_at_each_sentence_end, 0, n);
    suite_add_tcase(s, tc);
    return s;
}
