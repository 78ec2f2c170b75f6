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
    /* the exponent as YAML, JSON and people write it (issue 25: the config said 1e-08) */
    ck_assert_str_eq(number_shortest(out, sizeof out, 1e-8), "1e-8");
    ck_assert_str_eq(number_shortest(out, sizeof out, 1e6), "1e6");
    ck_assert_str_eq(number_shortest(out, sizeof out, 1e5), "1e5");
    ck_assert_str_eq(number_shortest(out, sizeof out, 100), "100");
    ck_assert_str_eq(number_shortest(out, sizeof out, 1000), "1000");
    ck_assert_str_eq(number_shortest(out, sizeof out, 123456), "123456");
    ck_assert_str_eq(number_shortest(out, sizeof out, 0.0003), "0.0003");
    ck_assert_str_eq(number_shortest(out, sizeof out, 3e-5), "3e-5");
    ck_assert_str_eq(number_shortest(out, sizeof out, -1.5e-5), "-1.5e-5");
    ck_assert_str_eq(number_shortest(out, sizeof out, 1e-100), "1e-100");
    ck_assert_str_eq(number_digits(out, sizeof out, 2.5e-4, 4), "0.00025");
    ck_assert_str_eq(number_digits(out, sizeof out, 1.23456e-6, 4), "1.235e-6");
    ck_assert_str_eq(number_digits(out, sizeof out, 1e10, 4), "1e10");
    ck_assert_str_eq(number_digits(out, sizeof out, NAN, 4), "nan");
    ck_assert_str_eq(number_shortest(out, sizeof out, 3), "3");
    ck_assert_str_eq(number_shortest(out, sizeof out, 0), "0");
    ck_assert_str_eq(number_shortest(out, sizeof out, -2.5), "-2.5");
    ck_assert_str_eq(number_shortest(out, sizeof out, 1e300), "1e300");
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
        /* the fewest significant digits that read back as v */
        int fewest = 1;
        while (fewest < 17 && strtod(number_digits(fewer, sizeof fewer, v, fewest), NULL) != v)
            fewest++;
        /* those digits with an exponent (written out here: mantissa, 'e', the exponent as
         * %d writes it) and without one */
        char sci[48], mantissa[40], plain[400];
        snprintf(mantissa, sizeof mantissa, "%.*e", fewest - 1, v);
        char *e = strchr(mantissa, 'e');
        const int exponent = atoi(e + 1);
        *e = '\0';
        snprintf(sci, sizeof sci, "%se%d", mantissa, exponent);
        const int decimals = fewest - 1 - exponent > 0 ? fewest - 1 - exponent : 0;
        snprintf(plain, sizeof plain, "%.*f", decimals, v);
        /* the plain one from 1e-4 up, unless it is two or more characters longer */
        const char *expected = exponent >= -4 && (exponent < 0 || strlen(plain) <= strlen(sci) + 1)
                                   ? plain : sci;
        ck_assert_msg(!strcmp(out, expected), "%.17g: %s, expected %s", v, out, expected);
    }
}
END_TEST

/* A float is written with the fewest digits that strtof reads back as it: 0.1f as 0.1,
 * not as the double it converts to (0.10000000149011612), for every float bit pattern
 * of a random sample. */
START_TEST(random_floats_round_trip_with_the_fewest_digits)
{
    char out[32];
    ck_assert_str_eq(number_shortest_float(out, sizeof out, 0.1f), "0.1");
    ck_assert_str_eq(number_shortest_float(out, sizeof out, 16777217.0f), "16777216");
    ck_assert_str_eq(number_shortest_float(out, sizeof out, 1.4e-45f), "1e-45");
    Pcg32 rng;
    pcg32_seed(&rng, 7, 2);
    for (int k = 0; k < 20000; k++) {
        uint32_t bits = pcg32_next(&rng);
        float v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v))
            continue;
        number_shortest_float(out, sizeof out, v);
        ck_assert_msg(strtof(out, NULL) == v, "%s does not read back as %.9g", out, (double)v);
        /* the fewest significant digits that read back as v, with an exponent or without
         * one, by number_shortest's rule (see the doubles' test above) */
        int fewest = 1;
        char mantissa[48], sci[64], plain[400];
        for (; fewest < 9; fewest++) {
            snprintf(mantissa, sizeof mantissa, "%.*e", fewest - 1, (double)v);
            if (strtof(mantissa, NULL) == v)
                break;
        }
        snprintf(mantissa, sizeof mantissa, "%.*e", fewest - 1, (double)v);
        char *e = strchr(mantissa, 'e');
        const int exponent = atoi(e + 1);
        *e = '\0';
        snprintf(sci, sizeof sci, "%se%d", mantissa, exponent);
        const int decimals = fewest - 1 - exponent > 0 ? fewest - 1 - exponent : 0;
        snprintf(plain, sizeof plain, "%.*f", decimals, (double)v);
        const char *expected = exponent >= -4 && (exponent < 0 || strlen(plain) <= strlen(sci) + 1) &&
                                       strtof(plain, NULL) == v
                                   ? plain : sci;
        ck_assert_msg(!strcmp(out, expected), "%.9g: %s, expected %s", (double)v, out, expected);
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
    tcase_add_test(tc, random_floats_round_trip_with_the_fewest_digits);
    suite_add_tcase(s, tc);
    return s;
}
