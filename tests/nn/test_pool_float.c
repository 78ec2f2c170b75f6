/* test_pool_float.c: the float build's 2 x 2 max-pooling (nn/conv.c), whose channel loop
 * is written branch-free for speed, keeps the rule the double build's checks prove: each
 * window's largest input, the first of equals, the first NaN. Checked against that rule
 * written plainly, on inputs full of ties and with NaNs. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "base/rng.h"
#include "nn/conv.h"
#include "support/suites.h"

START_TEST(float_pooling_takes_the_first_largest_and_the_first_nan)
{
    enum { B = 2, N = 6, C = 11, M = N / 2 };
    static float x[B * N * N * C], y[B * M * M * C];
    static int arg[B * M * M * C];
    Pcg32 rng;
    pcg32_seed(&rng, 9, RNG_STREAM_INIT);
    for (int trial = 0; trial < 20; trial++) {
        for (int k = 0; k < B * N * N * C; k++) { /* three values: ties everywhere */
            const uint32_t r = pcg32_below(&rng, 40);
            x[k] = r == 0 ? NAN : (float)(r % 3) - 1;
        }
        maxpool2x2_forward(y, arg, x, B, N, C);
        for (int b = 0; b < B; b++)
            for (int oy = 0; oy < M; oy++)
                for (int ox = 0; ox < M; ox++)
                    for (int c = 0; c < C; c++) {
                        int best = -1;
                        for (int k = 0; k < 4; k++) {
                            const int at = ((b * N + 2 * oy + k / 2) * N + 2 * ox + k % 2) * C + c;
                            if (best < 0 || x[at] > x[best] || (isnan(x[at]) && !isnan(x[best])))
                                best = at;
                        }
                        const int out = ((b * M + oy) * M + ox) * C + c;
                        ck_assert_int_eq(arg[out], best);
                        ck_assert(isnan(x[best]) ? isnan(y[out]) : y[out] == x[best]);
                    }
    }
}
END_TEST

Suite *pool_float_suite(void)
{
    Suite *s = suite_create("pool_float");
    TCase *tc = tcase_create("pool_float");
    tcase_add_test(tc, float_pooling_takes_the_first_largest_and_the_first_nan);
    suite_add_tcase(s, tc);
    return s;
}
