/* test_batch.c: padding of sentence pairs into time-major batches. */
#include <check.h>

#include "model/batch.h"
#include "support/suites.h"

START_TEST(batch_pads_and_marks_sentence_ends)
{
    const int s0[] = {7, 8, 9}, s1[] = {5};
    const int t0[] = {11}, t1[] = {12, 13};
    const int *src[] = {s0, s1}, *tgt[] = {t0, t1};
    const int src_n[] = {3, 1}, tgt_n[] = {1, 2};
    Batch bt;
    batch_init(&bt, 4, 10, 10);
    batch_fill(&bt, 2, src, src_n, tgt, tgt_n);
    ck_assert_int_eq(bt.batch_size, 2);
    ck_assert_int_eq(bt.src_steps, 4);
    ck_assert_int_eq(bt.tgt_steps, 3);
    /* (S, B) time-major: column b is sentence b */
    const int src_expected[] = {7, 5, 8, TOK_EOS, 9, TOK_PAD, TOK_EOS, TOK_PAD};
    for (int k = 0; k < 8; k++)
        ck_assert_int_eq(bt.src[k], src_expected[k]);
    const int in_expected[] = {TOK_BOS, TOK_BOS, 11, 12, TOK_PAD, 13};
    const int out_expected[] = {11, 12, TOK_EOS, 13, TOK_PAD, TOK_EOS};
    for (int k = 0; k < 6; k++) {
        ck_assert_int_eq(bt.tgt_in[k], in_expected[k]);
        ck_assert_int_eq(bt.tgt_out[k], out_expected[k]);
    }
    ck_assert_int_eq(bt.src_len[0], 4);
    ck_assert_int_eq(bt.src_len[1], 2);
    ck_assert_int_eq(bt.tgt_len[0], 2);
    ck_assert_int_eq(bt.tgt_len[1], 3);
    ck_assert_int_eq(bt.n_src_tokens, 6);
    ck_assert_int_eq(bt.n_tgt_tokens, 5);
    batch_free(&bt);
}
END_TEST

START_TEST(batch_of_empty_sentences_holds_only_eos)
{
    const int *src[] = {NULL}, *tgt[] = {NULL};
    const int zero[] = {0};
    Batch bt;
    batch_init(&bt, 1, 1, 1);
    batch_fill(&bt, 1, src, zero, tgt, zero);
    ck_assert_int_eq(bt.src[0], TOK_EOS);
    ck_assert_int_eq(bt.tgt_in[0], TOK_BOS);
    ck_assert_int_eq(bt.tgt_out[0], TOK_EOS);
    batch_free(&bt);
}
END_TEST

Suite *batch_suite(void)
{
    Suite *s = suite_create("batch");
    TCase *tc = tcase_create("fill");
    tcase_add_test(tc, batch_pads_and_marks_sentence_ends);
    tcase_add_test(tc, batch_of_empty_sentences_holds_only_eos);
    suite_add_tcase(s, tc);
    return s;
}
