/* test_small_gemm.c: libxsmm's kernels (nn/small_gemm.h) compute the row-major product
 * s2s asks for: every transpose, beta 0 and 1, leading dimensions wider than the rows,
 * and the shapes of a training step; checked element by element against the product in
 * double, to the bound of float rounding. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "nn/ops.h"
#include "nn/small_gemm.h"
#include "support/suites.h"

/* Row-major op(X) (rows, cols) of a buffer stored with leading dimension ld. */
static double at(const float *X, int trans, int ld, int r, int c)
{
    return trans ? X[(size_t)c * ld + r] : X[(size_t)r * ld + c];
}

START_TEST(small_products_equal_the_product_in_double)
{
    static const int sizes[][3] = {{2, 3, 4}, {7, 5, 3}, {16, 384, 64}, {32, 128, 192},
                                   {33, 17, 9}, {16, 64, 16}, {64, 64, 64}, {21, 96, 32}};
    small_gemm_enable(1);
    Pcg32 rng;
    pcg32_seed(&rng, 3, RNG_STREAM_INIT);
    int kernels = 0, checked = 0;
    double worst = 0;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int beta = 0; beta < 2; beta++) {
                    const int M = sizes[z][0], N = sizes[z][1], K = sizes[z][2];
                    /* stored widths plus 3: leading dimensions wider than the rows */
                    const int lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 3, ldc = N + 3;
                    const size_t na = (size_t)(ta ? K : M) * lda, nb = (size_t)(tb ? N : K) * ldb,
                                 nc = (size_t)M * ldc;
                    float *A = malloc(sizeof(float) * na), *B = malloc(sizeof(float) * nb),
                          *C = malloc(sizeof(float) * nc), *C0 = malloc(sizeof(float) * nc);
                    for (size_t x = 0; x < na; x++)
                        A[x] = pcg32_uniform(&rng, -0.5f, 0.5f);
                    for (size_t x = 0; x < nb; x++)
                        B[x] = pcg32_uniform(&rng, -0.5f, 0.5f);
                    for (size_t x = 0; x < nc; x++)
                        C0[x] = C[x] = pcg32_uniform(&rng, -0.5f, 0.5f);
                    if (!small_gemm(ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                                    M, N, K, A, lda, B, ldb, (float)beta, C, ldc)) {
                        free(A), free(B), free(C), free(C0);
                        continue;
                    }
                    kernels++;
                    for (int r = 0; r < M; r++)
                        for (int c = 0; c < ldc; c++) {
                            if (c >= N) { /* past the row: untouched */
                                ck_assert(C[(size_t)r * ldc + c] == C0[(size_t)r * ldc + c]);
                                continue;
                            }
                            double want = beta ? C0[(size_t)r * ldc + c] : 0, scale = fabs(want);
                            for (int k = 0; k < K; k++) {
                                const double p = at(A, ta, lda, r, k) * at(B, tb, ldb, k, c);
                                want += p;
                                scale += fabs(p);
                            }
                            /* float rounding of K products and sums: under K * 2^-24 of
                             * the sum of magnitudes; measured well inside */
                            const double err = fabs(C[(size_t)r * ldc + c] - want) / scale;
                            worst = fmax(worst, err);
                            ck_assert_msg(err <= (K + 1) * 0x1p-24,
                                          "%dx%dx%d ta %d tb %d beta %d: C[%d][%d] = %.9g, in "
                                          "double %.9g", M, N, K, ta, tb, beta, r, c,
                                          C[(size_t)r * ldc + c], want);
                            checked++;
                        }
                    free(A), free(B), free(C), free(C0);
                }
    printf("small_gemm: %d of %zu products by a kernel, %d elements, worst error %.2e of the "
           "sum of magnitudes\n", kernels, sizeof sizes / sizeof *sizes * 8, checked, worst);
#ifdef S2S_XSMM
    /* built with libxsmm: the step's shapes must get kernels, or the check checks nothing.
     * libxsmm 1.17 makes one for every product here whose B is not transposed (its
     * column-major first operand), 32 of the 64 */
    ck_assert_int_ge(kernels, 32);
    /* and turned off, none: the product is BLAS's, on all its threads */
    small_gemm_enable(0);
    float one[4] = {1, 1, 1, 1}, out[4] = {0};
    ck_assert_int_eq(small_gemm(CblasNoTrans, CblasNoTrans, 2, 2, 2, one, 2, one, 2, 0, out, 2), 0);
#else
    ck_assert_int_eq(kernels, 0);
#endif
}
END_TEST

/* Decoding's products by packed weights (nn/ops.h): the panels hold W's columns where
 * pack_panels says, linear_forward_packed computes x W^T + b to float rounding, and a
 * row's outputs are the same bits whatever rows are multiplied beside it (decoding lets
 * the rows of ended sentences leave on that promise): every row alone, and every run of
 * the first n rows. Widths with a narrower last panel: 22, and 16 and 3 (libxsmm's
 * kernels for those run across the rows: issue 46). */
static void check_packed(int out)
{
    enum { IN = 37, ROWS = 40, MAX_OUT = 3 * PANEL_COLUMNS };
    Pcg32 rng;
    pcg32_seed(&rng, 4, RNG_STREAM_INIT);
    static real W[MAX_OUT * IN], Wp[MAX_OUT * IN], x[ROWS * IN], b[MAX_OUT], y[ROWS * MAX_OUT];
    static real some[ROWS * MAX_OUT];
    for (int k = 0; k < out * IN; k++)
        W[k] = pcg32_uniform(&rng, -0.5f, 0.5f);
    for (int k = 0; k < ROWS * IN; k++)
        x[k] = pcg32_uniform(&rng, -0.5f, 0.5f);
    for (int k = 0; k < out; k++)
        b[k] = pcg32_uniform(&rng, -0.5f, 0.5f);
    pack_panels(Wp, W, out, IN);
    for (int c0 = 0; c0 < out; c0 += PANEL_COLUMNS) {
        const int w = out - c0 < PANEL_COLUMNS ? out - c0 : PANEL_COLUMNS;
        for (int k = 0; k < IN; k++)
            for (int j = 0; j < w; j++)
                ck_assert(Wp[(size_t)c0 * IN + (size_t)k * w + j] == W[(size_t)(c0 + j) * IN + k]);
    }
    linear_forward_packed(y, x, Wp, b, ROWS, IN, out);
    double worst = 0;
    for (int r = 0; r < ROWS; r++)
        for (int o = 0; o < out; o++) {
            double want = b[o], scale = fabs(b[o]);
            for (int k = 0; k < IN; k++) {
                want += (double)x[r * IN + k] * W[o * IN + k];
                scale += fabs((double)x[r * IN + k] * W[o * IN + k]);
            }
            const double err = fabs(y[r * out + o] - want) / scale;
            worst = fmax(worst, err);
            ck_assert_msg(err <= (IN + 2) * 0x1p-24, "row %d, output %d: %.9g, in double %.9g", r,
                          o, (double)y[r * out + o], want);
        }
    for (int n = 1; n <= ROWS; n++) {
        linear_forward_packed(some, x, Wp, b, n, IN, out);
        ck_assert_msg(memcmp(some, y, sizeof(real) * (size_t)n * out) == 0,
                      "%d outputs: the first %d rows differ from the same rows among %d", out, n,
                      ROWS);
        linear_forward_packed(some, x + (size_t)(n - 1) * IN, Wp, b, 1, IN, out);
        ck_assert_msg(memcmp(some, y + (size_t)(n - 1) * out, sizeof(real) * out) == 0,
                      "%d outputs: row %d alone differs", out, n - 1);
    }
    printf("packed panels: %d x %d by %d rows, worst error %.2e of the sum of magnitudes; a "
           "row's outputs the same alone and among any rows\n", out, IN, ROWS, worst);
}

START_TEST(packed_panels_multiply_as_the_weights_do)
{
    check_packed(2 * PANEL_COLUMNS + 22);
    check_packed(2 * PANEL_COLUMNS + 16);
    check_packed(PANEL_COLUMNS + 3);
}
END_TEST

Suite *small_gemm_suite(void)
{
    Suite *s = suite_create("small_gemm");
    TCase *tc = tcase_create("small_gemm");
    tcase_add_test(tc, small_products_equal_the_product_in_double);
    tcase_add_test(tc, packed_panels_multiply_as_the_weights_do);
    suite_add_tcase(s, tc);
    return s;
}
