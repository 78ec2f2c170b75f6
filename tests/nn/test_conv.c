/* test_conv.c: the image encoder's kernels (nn/conv.h), in double. The convolution
 * against its definition computed here directly, border pixels included; its gradients,
 * max-pooling's and a whole conv -> relu -> maxpool block's against finite differences
 * (loss L = sum(out * R), R random); max-pooling's choice of the first of equal values,
 * forward and backward. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn/conv.h"
#include "nn/fdcheck.h"
#include "nn/ops.h"
#include "support/suites.h"

/* A batch of two pictures of N x N pixels (N = 6 or 4, the loop index picks), 3 channels
 * in and 5 out. */
enum { B = 2, N_MAX = 6, C_IN = 3, C_OUT = 5 };
enum {
    X_MAX = B * N_MAX * N_MAX * C_IN,
    Y_MAX = B * N_MAX * N_MAX * C_OUT,
    W_SIZE = C_OUT * 9 * C_IN,
    COLS_MAX = B * N_MAX * N_MAX * 9 * C_IN,
    POOLED_MAX = Y_MAX / 4,
};
static const int sides[2] = {6, 4};

typedef struct {
    int N;
    real x[X_MAX], W[W_SIZE], b[C_OUT], y[Y_MAX], cols[COLS_MAX];
    real relu[Y_MAX], pooled[POOLED_MAX], R[Y_MAX];
    int argmax[POOLED_MAX];
} ConvCase;

static size_t x_count(const ConvCase *c) { return (size_t)B * c->N * c->N * C_IN; }
static size_t y_count(const ConvCase *c) { return (size_t)B * c->N * c->N * C_OUT; }

/* x, W, b and R uniform in [-1, 1) from seed: no input is zero, so a padding bug that
 * reads a wrong pixel or a zero where a pixel belongs changes the output. */
static void conv_case_fill(ConvCase *c, int N, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->N = N;
    Pcg32 rng;
    pcg32_seed(&rng, seed, 1);
    fill_uniform(c->x, x_count(c), &rng, -1, 1);
    fill_uniform(c->W, W_SIZE, &rng, -1, 1);
    fill_uniform(c->b, C_OUT, &rng, -1, 1);
    fill_uniform(c->R, y_count(c), &rng, -1, 1);
}

/* The output at (b, oy, ox, o) from the definition: b_o plus W[o, ci, ky, kx] x[b, oy +
 * ky - 1, ox + kx - 1, ci] over every ci, ky, kx whose pixel lies inside the picture
 * (outside it the zero padding adds nothing). W as torch's (C_out, C_in, 3, 3). */
static double direct_conv(const ConvCase *c, int b, int oy, int ox, int o)
{
    const int N = c->N;
    double sum = c->b[o];
    for (int ci = 0; ci < C_IN; ci++)
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
                const int sy = oy + ky - 1, sx = ox + kx - 1;
                if (sy < 0 || sy >= N || sx < 0 || sx >= N)
                    continue;
                sum += c->W[((o * C_IN + ci) * 3 + ky) * 3 + kx] *
                       c->x[((b * N + sy) * N + sx) * C_IN + ci];
            }
    return sum;
}

/* Every output pixel of both pictures, the 4 (N - 1) border ones of each among them. */
START_TEST(conv_forward_matches_the_direct_convolution)
{
    ConvCase c;
    conv_case_fill(&c, sides[_i], 31);
    conv3x3_forward(c.y, c.cols, c.x, c.W, c.b, B, c.N, C_IN, C_OUT);
    const int N = c.N;
    double worst = 0, worst_border = 0;
    int border = 0;
    for (int b = 0; b < B; b++)
        for (int oy = 0; oy < N; oy++)
            for (int ox = 0; ox < N; ox++) {
                const int on_border = oy == 0 || ox == 0 || oy == N - 1 || ox == N - 1;
                border += on_border;
                for (int o = 0; o < C_OUT; o++) {
                    const double want = direct_conv(&c, b, oy, ox, o);
                    const double got = c.y[((b * N + oy) * N + ox) * C_OUT + o];
                    ck_assert_msg(fabs(got - want) <= 1e-12,
                                  "N %d: y[%d, %d, %d, %d] = %.17g, the definition gives %.17g",
                                  N, b, oy, ox, o, got, want);
                    worst = fmax(worst, fabs(got - want));
                    if (on_border)
                        worst_border = fmax(worst_border, fabs(got - want));
                }
            }
    ck_assert_int_eq(border, B * 4 * (N - 1));
    printf("conv N %d: %d outputs, %d of them on the border: worst error %.3e (border %.3e)\n",
           N, B * N * N * C_OUT, border * C_OUT, worst, worst_border);
}
END_TEST

static double conv_loss(void *ctx)
{
    ConvCase *c = ctx;
    conv3x3_forward(c->y, c->cols, c->x, c->W, c->b, B, c->N, C_IN, C_OUT);
    return weighted_sum(c->y, c->R, y_count(c));
}

START_TEST(conv_backward_matches_finite_differences)
{
    ConvCase c;
    conv_case_fill(&c, sides[_i], 32);
    real dx[X_MAX], dcols[COLS_MAX];
    real dW[W_SIZE] = {0}, db[C_OUT] = {0};
    conv_loss(&c);
    conv3x3_backward(dx, dW, db, dcols, c.R, c.cols, c.W, B, c.N, C_IN, C_OUT);
    printf("conv 3x3, N %d:\n", c.N);
    ck_assert_double_le(fdcheck_tensor("x", c.x, dx, x_count(&c), conv_loss, &c),
                        GRADCHECK_TOLERANCE);
    ck_assert_double_le(fdcheck_tensor("W", c.W, dW, W_SIZE, conv_loss, &c), GRADCHECK_TOLERANCE);
    ck_assert_double_le(fdcheck_tensor("b", c.b, db, C_OUT, conv_loss, &c), GRADCHECK_TOLERANCE);
}
END_TEST

/* The contract of conv.h: dW and db are added to, dx is overwritten (whatever it held),
 * and dx NULL leaves dcols alone. */
START_TEST(conv_backward_accumulates_dW_and_db_and_overwrites_dx)
{
    ConvCase c;
    conv_case_fill(&c, 6, 33);
    conv_loss(&c);
    real dx1[X_MAX], dx2[X_MAX], dcols[COLS_MAX];
    real dW[W_SIZE] = {0}, db[C_OUT] = {0}, dW1[W_SIZE], db1[C_OUT];
    for (size_t k = 0; k < X_MAX; k++)
        dx1[k] = dx2[k] = 7;
    conv3x3_backward(dx1, dW, db, dcols, c.R, c.cols, c.W, B, c.N, C_IN, C_OUT);
    memcpy(dW1, dW, sizeof dW);
    memcpy(db1, db, sizeof db);
    conv3x3_backward(dx2, dW, db, dcols, c.R, c.cols, c.W, B, c.N, C_IN, C_OUT);
    ck_assert(memcmp(dx1, dx2, sizeof dx1) == 0);
    for (int k = 0; k < W_SIZE; k++)
        ck_assert_double_eq_tol(dW[k], 2 * dW1[k], 1e-14 * fmax(1, fabs(dW1[k])));
    for (int o = 0; o < C_OUT; o++)
        ck_assert_double_eq_tol(db[o], 2 * db1[o], 1e-14 * fmax(1, fabs(db1[o])));
    for (size_t k = 0; k < COLS_MAX; k++)
        dcols[k] = -3;
    conv3x3_backward(NULL, dW, db, dcols, c.R, c.cols, c.W, B, c.N, C_IN, C_OUT);
    for (size_t k = 0; k < COLS_MAX; k++)
        ck_assert(dcols[k] == -3);
}
END_TEST

/* conv -> relu -> maxpool, the image encoder's block (MODEL.md); each finite difference
 * keeps the point's relu pattern (fdcheck.h). The max has kinks too: a step that carries
 * one input of a window past another measures one, and fdcheck measures that element
 * again at smaller steps (a few do at N = 6). */
static double block_loss(void *ctx)
{
    ConvCase *c = ctx;
    conv3x3_forward(c->y, c->cols, c->x, c->W, c->b, B, c->N, C_IN, C_OUT);
    relu_forward(c->relu, c->y, y_count(c));
    maxpool2x2_forward(c->pooled, c->argmax, c->relu, B, c->N, C_OUT);
    return weighted_sum(c->pooled, c->R, y_count(c) / 4);
}

START_TEST(conv_relu_maxpool_block_matches_finite_differences)
{
    ConvCase c;
    conv_case_fill(&c, sides[_i], 34);
    real dpooled_in[Y_MAX], dy[Y_MAX], dx[X_MAX], dcols[COLS_MAX];
    real dW[W_SIZE] = {0}, db[C_OUT] = {0};
    block_loss(&c);
    maxpool2x2_backward(dpooled_in, c.R, c.argmax, B, c.N, C_OUT);
    relu_backward(dy, dpooled_in, c.relu, y_count(&c));
    conv3x3_backward(dx, dW, db, dcols, dy, c.cols, c.W, B, c.N, C_IN, C_OUT);
    /* the case has both sides of the relu, and windows whose largest value is 0 */
    int off = 0, zero_windows = 0;
    for (size_t k = 0; k < y_count(&c); k++)
        off += c.relu[k] == 0;
    for (size_t k = 0; k < y_count(&c) / 4; k++)
        zero_windows += c.pooled[k] == 0;
    printf("conv -> relu -> maxpool, N %d: %d of %zu relu inputs off, %d of %zu windows all off\n",
           c.N, off, y_count(&c), zero_windows, y_count(&c) / 4);
    ck_assert(off > 0 && off < (int)y_count(&c) && zero_windows > 0);
    ck_assert_double_le(fdcheck_tensor("x", c.x, dx, x_count(&c), block_loss, &c),
                        GRADCHECK_TOLERANCE);
    ck_assert_double_le(fdcheck_tensor("W", c.W, dW, W_SIZE, block_loss, &c), GRADCHECK_TOLERANCE);
    ck_assert_double_le(fdcheck_tensor("b", c.b, db, C_OUT, block_loss, &c), GRADCHECK_TOLERANCE);
}
END_TEST

/* Windows of a 2 x 2 pool in row-major order (top left, top right, bottom left, bottom
 * right), and which of the four it must choose: the largest, the first of equals. */
typedef struct {
    real v[4];
    int first;
} Window;

static const Window windows[] = {
    {{1, 2, 3, 4}, 3},     {{4, 3, 2, 1}, 0},     {{1, 4, 2, 3}, 1},     {{1, 2, 4, 3}, 2},
    {{7, 7, 7, 7}, 0},     {{0, 0, 0, 0}, 0},     {{-1, -1, -1, -1}, 0}, {{2, 5, 5, 1}, 1},
    {{5, 1, 1, 5}, 0},     {{0, 3, 1, 3}, 1},     {{1, 2, 6, 6}, 2},     {{-3, -2, -2, -2}, 1},
    {{9, 9, 9, 1}, 0},     {{2, 8, 8, 8}, 1},     {{3, 1, 3, 3}, 0},     {{1, 1, 2, 2}, 2},
};
enum { POOL_B = 2, POOL_N = 4, POOL_C = 2, POOL_OUT = POOL_B * 2 * 2 * POOL_C };

/* The index into x (POOL_B, POOL_N, POOL_N, POOL_C) of input k of output window w, whose
 * values are windows[w]. */
static int window_input(int w, int k)
{
    const int c = w % POOL_C, ox = w / POOL_C % 2, oy = w / POOL_C / 2 % 2, b = w / POOL_C / 4;
    const int y = 2 * oy + k / 2, x = 2 * ox + k % 2;
    return ((b * POOL_N + y) * POOL_N + x) * POOL_C + c;
}

START_TEST(maxpool_takes_the_first_of_equal_largest_values)
{
    ck_assert_int_eq(sizeof windows / sizeof *windows, POOL_OUT);
    real x[POOL_B * POOL_N * POOL_N * POOL_C], y[POOL_OUT], dy[POOL_OUT], dx[sizeof x / sizeof *x];
    int argmax[POOL_OUT];
    for (int w = 0; w < POOL_OUT; w++)
        for (int k = 0; k < 4; k++)
            x[window_input(w, k)] = windows[w].v[k];
    maxpool2x2_forward(y, argmax, x, POOL_B, POOL_N, POOL_C);
    for (int w = 0; w < POOL_OUT; w++) {
        const int want = window_input(w, windows[w].first);
        ck_assert_msg(argmax[w] == want && y[w] == x[want],
                      "window %d (%g %g %g %g): chose input %d (%g), the first largest is %d", w,
                      windows[w].v[0], windows[w].v[1], windows[w].v[2], windows[w].v[3],
                      argmax[w], y[w], want);
        dy[w] = (real)(w + 1) / 8;
    }
    /* backward: the whole of each dy to that one input, 0 to every other (over what dx held) */
    for (size_t k = 0; k < sizeof dx / sizeof *dx; k++)
        dx[k] = 99;
    maxpool2x2_backward(dx, dy, argmax, POOL_B, POOL_N, POOL_C);
    int nonzero = 0;
    for (int w = 0; w < POOL_OUT; w++)
        for (int k = 0; k < 4; k++) {
            const real want = k == windows[w].first ? dy[w] : 0;
            ck_assert_msg(dx[window_input(w, k)] == want, "window %d, input %d: dx %g, want %g",
                          w, k, dx[window_input(w, k)], want);
            nonzero += dx[window_input(w, k)] != 0;
        }
    ck_assert_int_eq(nonzero, POOL_OUT);
}
END_TEST

/* A NaN is not lost in the pooling: its window gives NaN. */
START_TEST(maxpool_keeps_a_nan)
{
    const real x[4 * 4] = {1, NAN, 5, 6, 3, NAN, 7, 8, NAN, 2, 1, 1, 0, 9, 1, NAN};
    real y[4];
    int argmax[4];
    maxpool2x2_forward(y, argmax, x, 1, 4, 1);
    ck_assert(isnan(y[0]) && argmax[0] == 1);
    ck_assert(y[1] == 8 && argmax[1] == 7);
    ck_assert(isnan(y[2]) && argmax[2] == 8);
    ck_assert(isnan(y[3]) && argmax[3] == 15);
}
END_TEST

enum { MP_N = 6, MP_C = 3, MP_X = B * MP_N * MP_N * MP_C, MP_Y = MP_X / 4 };

typedef struct {
    real x[MP_X], y[MP_Y], R[MP_Y];
    int argmax[MP_Y];
} PoolCase;

static double pool_loss(void *ctx)
{
    PoolCase *c = ctx;
    maxpool2x2_forward(c->y, c->argmax, c->x, B, MP_N, MP_C);
    return weighted_sum(c->y, c->R, MP_Y);
}

/* x (MP_X) = a shuffle of -10.75, -10.65, ..., 10.75, 0.1 apart: no ties, and no step
 * of the differences (at most 3e-2) carries one input past another. */
static void shuffled_inputs(real *x, Pcg32 *rng)
{
    int order[MP_X];
    for (int k = 0; k < MP_X; k++)
        order[k] = k;
    pcg32_shuffle(rng, order, MP_X);
    for (int k = 0; k < MP_X; k++)
        x[k] = (real)(order[k] - MP_X / 2) / 10 + (real)0.05;
}

START_TEST(maxpool_backward_matches_finite_differences)
{
    PoolCase c;
    Pcg32 rng;
    pcg32_seed(&rng, 35, 1);
    shuffled_inputs(c.x, &rng);
    fill_uniform(c.R, MP_Y, &rng, -1, 1);
    real dx[MP_X];
    pool_loss(&c);
    maxpool2x2_backward(dx, c.R, c.argmax, B, MP_N, MP_C);
    printf("maxpool 2x2:\n");
    ck_assert_double_le(fdcheck_tensor("x", c.x, dx, MP_X, pool_loss, &c), GRADCHECK_TOLERANCE);
}
END_TEST

/* A near tie: two inputs of a window 1e-9 apart, closer than the checker's smallest step.
 * Each difference quotient would straddle the kink of the max (the other input taking
 * over), so the check holds every window's choice at the point as it holds relu's
 * pattern (ops.h): the gradient is then exactly the analytic one, the whole dy to the
 * chosen input and nothing to its rival. */
START_TEST(maxpool_is_checked_at_a_near_tie_with_its_choices_held)
{
    PoolCase c;
    Pcg32 rng;
    pcg32_seed(&rng, 36, 1);
    shuffled_inputs(c.x, &rng);
    /* window 0 of channel 0: its largest input and a rival just below it */
    const size_t w[4] = {0, MP_C, (size_t)MP_N * MP_C, (size_t)MP_N * MP_C + MP_C};
    size_t top = w[0];
    for (int k = 1; k < 4; k++)
        top = c.x[w[k]] > c.x[top] ? w[k] : top;
    const size_t rival = top == w[0] ? w[1] : w[0];
    c.x[rival] = c.x[top] - (real)1e-9;
    fill_uniform(c.R, MP_Y, &rng, -1, 1);
    real dx[MP_X];
    pool_loss(&c);
    maxpool2x2_backward(dx, c.R, c.argmax, B, MP_N, MP_C);
    ck_assert(dx[top] == c.R[0] && dx[rival] == 0);
    printf("maxpool 2x2 at a near tie:\n");
    ck_assert_double_le(fdcheck_tensor("x", c.x, dx, MP_X, pool_loss, &c), GRADCHECK_TOLERANCE);
}
END_TEST

Suite *conv_suite(void)
{
    Suite *s = suite_create("conv");
    TCase *tc = tcase_create("conv");
    /* the arithmetic of each OpenBLAS core type: scripts/checks/run-checks.py runs it under each family */
    tcase_set_tags(tc, "cores");
    tcase_add_loop_test(tc, conv_forward_matches_the_direct_convolution, 0, 2);
    tcase_add_loop_test(tc, conv_backward_matches_finite_differences, 0, 2);
    tcase_add_test(tc, conv_backward_accumulates_dW_and_db_and_overwrites_dx);
    tcase_add_loop_test(tc, conv_relu_maxpool_block_matches_finite_differences, 0, 2);
    suite_add_tcase(s, tc);
    TCase *pool = tcase_create("maxpool"); /* no BLAS: the same bits on every core type */
    tcase_add_test(pool, maxpool_takes_the_first_of_equal_largest_values);
    tcase_add_test(pool, maxpool_keeps_a_nan);
    tcase_add_test(pool, maxpool_backward_matches_finite_differences);
    tcase_add_test(pool, maxpool_is_checked_at_a_near_tie_with_its_choices_held);
    suite_add_tcase(s, pool);
    return s;
}
