/* test_rng.c: PCG32 against the published output of the reference pcg32 demo
 * (tests/fixtures/README.md), and the helpers built on it. */
#include <check.h>
#include <stdlib.h>

#include "base/rng.h"
#include "support/suites.h"

START_TEST(pcg32_matches_published_outputs)
{
    /* pcg32-demo seeded with initstate 42, initseq 54: O'Neill's published values. */
    const uint32_t expected[6] = {0xa15c02b7, 0x7b47f409, 0xba1d3330,
                                  0x83d2f293, 0xbfa4784b, 0xcbed606e};
    Pcg32 rng;
    pcg32_seed(&rng, 42, 54);
    for (int k = 0; k < 6; k++)
        ck_assert_uint_eq(pcg32_next(&rng), expected[k]);
}
END_TEST

START_TEST(pcg32_streams_differ_and_repeat)
{
    Pcg32 a, b, c;
    pcg32_seed(&a, 7, RNG_STREAM_INIT);
    pcg32_seed(&b, 7, RNG_STREAM_SHUFFLE);
    pcg32_seed(&c, 7, RNG_STREAM_INIT);
    int same = 0;
    for (int k = 0; k < 100; k++) {
        uint32_t x = pcg32_next(&a);
        same += x == pcg32_next(&b);
        ck_assert_uint_eq(x, pcg32_next(&c));
    }
    ck_assert_int_lt(same, 3);
}
END_TEST

START_TEST(pcg32_below_is_in_range_and_covers_it)
{
    Pcg32 rng;
    pcg32_seed(&rng, 1, 1);
    int seen[7] = {0};
    for (int k = 0; k < 7000; k++) {
        uint32_t x = pcg32_below(&rng, 7);
        ck_assert_uint_lt(x, 7);
        seen[x]++;
    }
    /* each residue expected 1000 times; 6 standard deviations is about 170 */
    for (int v = 0; v < 7; v++)
        ck_assert_int_lt(abs(seen[v] - 1000), 170);
}
END_TEST

START_TEST(pcg32_uniform_stays_in_interval)
{
    Pcg32 rng;
    pcg32_seed(&rng, 3, 1);
    float lo = 1, hi = 0;
    for (int k = 0; k < 100000; k++) {
        float x = pcg32_uniform(&rng, -0.1f, 0.1f);
        ck_assert(x >= -0.1f && x < 0.1f);
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    ck_assert(lo < -0.099f && hi > 0.099f);
}
END_TEST

/* Jumping ahead lands where stepping does, for strides made of every bit pattern up to
 * 2^12 and for a few with high bits (checked by stepping in the other direction: 2^64 -
 * delta steps forward are delta steps back). */
START_TEST(pcg32_advance_equals_stepping)
{
    for (uint64_t delta = 0; delta <= 4096; delta += delta < 64 ? 1 : 61) {
        Pcg32 stepped, jumped;
        pcg32_seed(&stepped, 42, 54);
        jumped = stepped;
        for (uint64_t k = 0; k < delta; k++)
            pcg32_next(&stepped);
        pcg32_advance(&jumped, delta);
        ck_assert_uint_eq(jumped.state, stepped.state);
        ck_assert_uint_eq(pcg32_next(&jumped), pcg32_next(&stepped));
    }
    const uint64_t far[] = {1ull << 40, (1ull << 63) + 12345, 0x9e3779b97f4a7c15ull};
    for (size_t k = 0; k < sizeof far / sizeof *far; k++) {
        Pcg32 start, there;
        pcg32_seed(&start, 7, 3);
        there = start;
        pcg32_advance(&there, far[k]);
        ck_assert_uint_ne(there.state, start.state);
        pcg32_advance(&there, 0 - far[k]); /* the period is 2^64 */
        ck_assert_uint_eq(there.state, start.state);
    }
}
END_TEST

START_TEST(pcg32_shuffle_is_a_permutation)
{
    Pcg32 rng;
    pcg32_seed(&rng, 5, 2);
    int items[50], count[50] = {0}, moved = 0;
    for (int k = 0; k < 50; k++)
        items[k] = k;
    pcg32_shuffle(&rng, items, 50);
    for (int k = 0; k < 50; k++) {
        count[items[k]]++;
        moved += items[k] != k;
    }
    for (int k = 0; k < 50; k++)
        ck_assert_int_eq(count[k], 1);
    ck_assert_int_gt(moved, 40);
}
END_TEST

Suite *rng_suite(void)
{
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("pcg32");
    tcase_add_test(tc, pcg32_matches_published_outputs);
    tcase_add_test(tc, pcg32_streams_differ_and_repeat);
    tcase_add_test(tc, pcg32_below_is_in_range_and_covers_it);
    tcase_add_test(tc, pcg32_uniform_stays_in_interval);
    tcase_add_test(tc, pcg32_advance_equals_stepping);
    tcase_add_test(tc, pcg32_shuffle_is_a_permutation);
    suite_add_tcase(s, tc);
    return s;
}
