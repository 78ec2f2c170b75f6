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

/* Five pairs of varied lengths with a picture (2 x 2) and word cells (3 cells) each,
 * sorted by target length as training sorts them. */
static void five_pairs(Batch *bt)
{
    static const int w[] = {4, 5, 6, 7, 8, 9, 10, 11};
    const int src_n[] = {2, 7, 0, 4, 1}, tgt_n[] = {3, 1, 5, 0, 2};
    const int *src[] = {w, w + 1, w, w + 2, w + 3}, *tgt[] = {w + 4, w, w + 2, w, w + 1};
    batch_init(bt, 5, 8, 6);
    batch_init_pictures(bt, 2);
    batch_init_ground(bt, 3);
    batch_fill(bt, 5, src, src_n, tgt, tgt_n);
    for (int b = 0; b < 5; b++) {
        bt->pair[b] = 100 + b;
        for (int x = 0; x < 12; x++)
            bt->pixels[b * 12 + x] = (float)(b * 12 + x);
        for (int i = 0; i < bt->tgt_steps; i++)
            for (int j = 0; j < 3; j++)
                bt->ground[(i * 5 + b) * 3 + j] = (unsigned char)((b + i + j) % 2);
    }
    batch_sort_by_target(bt);
}

START_TEST(a_shard_holds_every_nth_pair_padded_to_its_own_length)
{
    Batch whole;
    five_pairs(&whole);
    const int B = whole.batch_size;
    for (int n = 1; n <= 7; n++) {
        int pairs = 0, src_tokens = 0, tgt_tokens = 0;
        for (int k = 0; k < n; k++) {
            Batch sh;
            batch_init(&sh, (B + n - 1) / n, 8, 6);
            batch_init_pictures(&sh, 2);
            batch_init_ground(&sh, 3);
            const int cols = batch_take_shard(&sh, &whole, k, n);
            ck_assert_int_eq(cols, sh.batch_size);
            ck_assert_int_eq(cols, k < B ? (B - 1 - k) / n + 1 : 0);
            int S = 0, T = 0;
            for (int c = 0; c < cols; c++) {
                const int b = k + c * n; /* the whole batch's column */
                ck_assert_int_eq(sh.pair[c], whole.pair[b]);
                ck_assert_int_eq(sh.src_len[c], whole.src_len[b]);
                ck_assert_int_eq(sh.tgt_len[c], whole.tgt_len[b]);
                S = whole.src_len[b] > S ? whole.src_len[b] : S;
                T = whole.tgt_len[b] > T ? whole.tgt_len[b] : T;
            }
            ck_assert_int_eq(sh.src_steps, S);
            ck_assert_int_eq(sh.tgt_steps, T);
            for (int c = 0; c < cols; c++) {
                const int b = k + c * n;
                for (int j = 0; j < S; j++)
                    ck_assert_int_eq(sh.src[j * cols + c], whole.src[j * B + b]);
                for (int i = 0; i < T; i++) {
                    ck_assert_int_eq(sh.tgt_in[i * cols + c], whole.tgt_in[i * B + b]);
                    ck_assert_int_eq(sh.tgt_out[i * cols + c], whole.tgt_out[i * B + b]);
                    for (int j = 0; j < 3; j++)
                        ck_assert_int_eq(sh.ground[(i * cols + c) * 3 + j],
                                         whole.ground[(i * B + b) * 3 + j]);
                }
                for (int x = 0; x < 12; x++)
                    ck_assert_float_eq(sh.pixels[c * 12 + x], whole.pixels[b * 12 + x]);
            }
            ck_assert(cols == 0 || batch_is_sorted_by_target(&sh));
            pairs += cols;
            src_tokens += sh.n_src_tokens;
            tgt_tokens += sh.n_tgt_tokens;
            batch_free(&sh);
        }
        ck_assert_int_eq(pairs, B);
        ck_assert_int_eq(src_tokens, whole.n_src_tokens);
        ck_assert_int_eq(tgt_tokens, whole.n_tgt_tokens);
    }
    batch_free(&whole);
}
END_TEST

Suite *batch_suite(void)
{
    Suite *s = suite_create("batch");
    TCase *tc = tcase_create("fill");
    tcase_add_test(tc, batch_pads_and_marks_sentence_ends);
    tcase_add_test(tc, batch_of_empty_sentences_holds_only_eos);
    tcase_add_test(tc, a_shard_holds_every_nth_pair_padded_to_its_own_length);
    suite_add_tcase(s, tc);
    return s;
}
