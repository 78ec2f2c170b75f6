/* test_number.c: the shortest text of a double that reads back as the same double:
 * hand-checked cases, and for many random doubles that the text reads back exactly and
 * that one digit fewer would not. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "support/suites.h"
#include "text/number.h"

START_TEST(settings_read_as_they_are_written)
{
    char out[32];
    ck_assert_str_eq(number_shortest(out, sizeof out, 0.9), "0.9");
    ck_assert_str_eq(number_shortest(out, sizeof out, 0.1), "0.1");
    ck_assert_str_eq(number_shortest(out, sizeof out, 0.999), "0.999");
    ck_assert_str_eq(number_shortest(out, sizeof out, 1e-8), "1e-08");
    ck_assert_str_eq(number_shortest(out, sizeof out, 3), "3");
    ck_assert_str_eq(number_shortest(out, sizeof out, 0), "0");
    ck_assert_str_eq(number_shortest(out, sizeof out, -2.5), "-2.5");
    ck_assert_str_eq(number_shortest(out, sizeof out, 1e300), "1e+300");
    /* these need every digit */
    ck_assert_str_eq(number_shortest(out, sizeof out, 1.0 / 3), "0.3333333333333333");
    ck_assert_str_eq(number_shortest(out, sizeof out, 0.1 + 0.2), "0.30000000000000004");
    ck_assert_str_eq(number_shortest(out, sizeof out, 5e-324), "5e-324");
    ck_assert_str_eq(number_shortest(out, sizeof out, INFINITY), "inf");
}
END_TEST

START_TEST(random_doubles_round_trip_with_the_fewest_digits)
{
    Pcg32 rng;
    pcg32_seed(&rng, 7, 1);
    char out[32], fewer[32];
    for (int k = 0; k < 20000; k++) {
        /* any bit pattern but NaN and infinity: every exponent, subnormals included */
        uint64_t bits = (uint64_t)pcg32_next(&rng) << 32 | pcg32_next(&rng);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v))
            continue;
        number_shortest(out, sizeof out, v);
        ck_assert_msg(strtod(out, NULL) == v, "%s does not read back as %.17g", out, v);
        /* no shorter %.*g text reads back as v */
        for (int d = 1; d < 17; d++) {
            snprintf(fewer, sizeof fewer, "%.*g", d, v);
            if (!strcmp(fewer, out))
                break;
            ck_assert_msg(strtod(fewer, NULL) != v, "%.17g: %s has more digits than %s", v, out,
                          fewer);
        }
    }
}
END_TEST

Suite *number_suite(void)
{
    Suite *s = suite_create("number");
    TCase *tc = tcase_create("shortest");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, settings_read_as_they_are_written);
    tcase_add_test(tc, random_doubles_round_trip_with_the_fewest_digits);
    suite_add_tcase(s, tc);
    return s;
}
