/* test_data.c: vocabularies (order, limits, lookups) and the batcher (every pair once
 * per epoch, length buckets, determinism from the seed, exact restore). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/corpus.h"
#include "data/epochs.h"
#include "data/vocab.h"
#include "model/batch.h"
#include "support/suites.h"

START_TEST(vocabulary_orders_by_frequency_then_first_occurrence)
{
    Vocab counts, v;
    vocab_init(&counts);
    const char *words[] = {"b", "a", "c", "a", "d", "c", "a", "<unk>", "e"};
    for (size_t k = 0; k < sizeof words / sizeof *words; k++)
        vocab_count(&counts, words[k]);
    vocab_build(&v, &counts, 0, 1);
    const char *expected[] = {"<pad>", "<unk>", "<s>", "</s>", "a", "c", "b", "d", "e"};
    ck_assert_int_eq(v.size, 9);
    for (int k = 0; k < 9; k++)
        ck_assert_str_eq(vocab_word(&v, k), expected[k]);
    ck_assert_int_eq(vocab_id(&v, "c"), 5);
    ck_assert_int_eq(vocab_id(&v, "zzz"), TOK_UNK);
    ck_assert_int_eq(vocab_id(&v, "<unk>"), TOK_UNK);
    vocab_free(&v);

    vocab_build(&v, &counts, 6, 1); /* the specials count towards max_size */
    ck_assert_int_eq(v.size, 6);
    ck_assert_str_eq(vocab_word(&v, 5), "c");
    vocab_free(&v);
    vocab_build(&v, &counts, 0, 2);
    ck_assert_int_eq(v.size, 6); /* a (3) and c (2) */
    vocab_free(&v);
    vocab_free(&counts);
}
END_TEST

/* Shared embeddings: one vocabulary of both sides' counts added together (a word of both
 * counts on both), ties by first occurrence with the source's words first; without
 * `joint`, each side's own. */
START_TEST(vocabulary_of_both_sides_adds_their_counts)
{
    Vocab src_counts, tgt_counts, src, tgt;
    vocab_init(&src_counts);
    vocab_init(&tgt_counts);
    const char *src_words[] = {"x", "y", "y", "z"}, *tgt_words[] = {"w", "x", "x", "w", "v"};
    for (size_t k = 0; k < 4; k++)
        vocab_count(&src_counts, src_words[k]);
    for (size_t k = 0; k < 5; k++)
        vocab_count(&tgt_counts, tgt_words[k]);
    const VocabLimits all = {0, 1}, twice = {0, 2};
    vocab_build_sides(&src, &tgt, &src_counts, &tgt_counts, &all, &all, 1);
    /* x 3, y 2, w 2, z 1, v 1 */
    const char *expected[] = {"<pad>", "<unk>", "<s>", "</s>", "x", "y", "w", "z", "v"};
    ck_assert_int_eq(src.size, 9);
    ck_assert_int_eq(tgt.size, 9);
    for (int k = 0; k < 9; k++) {
        ck_assert_str_eq(vocab_word(&src, k), expected[k]);
        ck_assert_str_eq(vocab_word(&tgt, k), expected[k]);
    }
    vocab_free(&src);
    vocab_free(&tgt);
    vocab_build_sides(&src, &tgt, &src_counts, &tgt_counts, &twice, &twice, 1);
    ck_assert_int_eq(src.size, 7); /* x (1 + 2), y, w */
    ck_assert_str_eq(vocab_word(&src, 6), "w");
    vocab_free(&src);
    vocab_free(&tgt);
    vocab_build_sides(&src, &tgt, &src_counts, &tgt_counts, &twice, &twice, 0);
    ck_assert_int_eq(src.size, 5); /* y alone: x once */
    ck_assert_str_eq(vocab_word(&src, 4), "y");
    ck_assert_int_eq(tgt.size, 6); /* x and w */
    ck_assert_str_eq(vocab_word(&tgt, 4), "w");
    vocab_free(&src);
    vocab_free(&tgt);
    vocab_free(&src_counts);
    vocab_free(&tgt_counts);
}
END_TEST

START_TEST(vocabulary_from_a_list_checks_it)
{
    Vocab v;
    const char *good[] = {"<pad>", "<unk>", "<s>", "</s>", "x"};
    ck_assert_int_eq(vocab_from_list(&v, good, 5), 0);
    ck_assert_int_eq(vocab_id(&v, "x"), 4);
    vocab_free(&v);
    const char *repeated[] = {"<pad>", "<unk>", "<s>", "</s>", "x", "x"};
    ck_assert_int_eq(vocab_from_list(&v, repeated, 6), -1);
    vocab_free(&v);
    const char *misplaced[] = {"<unk>", "<pad>", "<s>", "</s>"};
    ck_assert_int_eq(vocab_from_list(&v, misplaced, 4), -1);
    vocab_free(&v);
}
END_TEST

START_TEST(vocabulary_survives_growth)
{
    Vocab v;
    vocab_init(&v);
    char word[32];
    for (int k = 0; k < 5000; k++) {
        snprintf(word, sizeof word, "w%d", k);
        ck_assert_int_eq(vocab_count(&v, word), k);
    }
    for (int k = 0; k < 5000; k += 7) {
        snprintf(word, sizeof word, "w%d", k);
        ck_assert_int_eq(vocab_find(&v, word), k);
    }
    vocab_free(&v);
}
END_TEST

/* A corpus of n pairs whose lengths are (k % 9 + 1, k % 5 + 1), built in memory. */
static void make_corpus(Corpus *c, int n)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->src_start = malloc(sizeof(int) * (size_t)n);
    c->src_len = malloc(sizeof(int) * (size_t)n);
    c->tgt_start = malloc(sizeof(int) * (size_t)n);
    c->tgt_len = malloc(sizeof(int) * (size_t)n);
    c->ids = malloc(sizeof(int) * (size_t)n * 20);
    for (int k = 0; k < n; k++) {
        c->src_start[k] = (int)c->n_ids;
        c->src_len[k] = k % 9 + 1;
        for (int j = 0; j < c->src_len[k]; j++)
            c->ids[c->n_ids++] = 4 + k % 50; /* the pair's own mark */
        c->tgt_start[k] = (int)c->n_ids;
        c->tgt_len[k] = k % 5 + 1;
        for (int i = 0; i < c->tgt_len[k]; i++)
            c->ids[c->n_ids++] = 4;
        if (c->src_len[k] > c->max_src_len)
            c->max_src_len = c->src_len[k];
        if (c->tgt_len[k] > c->max_tgt_len)
            c->max_tgt_len = c->tgt_len[k];
    }
}

/* Sequence of (batch size, first source id, source length) over `batches` batches. */
static void record(Epochs *b, Batch *bt, int batches, int *out)
{
    for (int k = 0; k < batches; k++) {
        ck_assert_int_eq(epochs_next(b, bt, NULL), 0);
        out[3 * k] = bt->batch_size;
        out[3 * k + 1] = bt->src[0];
        out[3 * k + 2] = bt->src_steps;
    }
}

/* Source padding positions of one epoch; checks that every pair came once. */
static int epoch_padding(const Corpus *c, int pool_batches)
{
    Epochs b;
    Batch bt;
    epochs_init(&b, c, 32, 0, pool_batches, 1, 5);
    batch_init(&bt, 32, c->max_src_len + 1, c->max_tgt_len + 1);
    int *seen = calloc((size_t)c->n, sizeof(int)), padding = 0;
    for (int k = 0; k < b.n_batches; k++) {
        ck_assert_int_eq(epochs_next(&b, &bt, NULL), 0);
        padding += bt.src_steps * bt.batch_size - bt.n_src_tokens;
        for (int u = 0; u < bt.batch_size; u++)
            seen[bt.src[u] - 4]++; /* the pair's mark, see make_corpus */
    }
    for (int k = 0; k < 50 && k < c->n; k++) /* marks repeat every 50 pairs */
        ck_assert_int_eq(seen[k], (c->n - k + 49) / 50);
    ck_assert_int_eq(b.epoch, 0);
    ck_assert_int_eq(epochs_next(&b, &bt, NULL), 0);
    ck_assert_int_eq(b.epoch, 1);
    free(seen);
    batch_free(&bt);
    epochs_free(&b);
    return padding;
}

START_TEST(batcher_covers_each_pair_once_per_epoch_in_length_buckets)
{
    Corpus c;
    make_corpus(&c, 1000);
    int unsorted = epoch_padding(&c, 1), bucketed = epoch_padding(&c, 4);
    printf("source padding in one epoch: %d positions without buckets, %d with pools of 4 batches\n",
           unsorted, bucketed);
    ck_assert_int_lt(2 * bucketed, unsorted);
    corpus_free(&c);
}
END_TEST

/* The same seed gives the same batches, another seed others, and a batcher restored
 * from a position continues exactly; with pairs counted, or tokens (budget > 0). */
static void check_deterministic_and_restores(long budget)
{
    Corpus c;
    make_corpus(&c, 200);
    Batch bt;
    batch_init(&bt, 16, c.max_src_len + 1, c.max_tgt_len + 1);
    enum { N = 40 }; /* 13 batches an epoch (~25 with a budget of 60): epoch boundaries */
    int a[3 * N], b[3 * N], d[3 * N];
    Epochs x, y;
    epochs_init(&x, &c, 16, budget, 3, 1, 77);
    record(&x, &bt, N, a);
    ck_assert_int_ge(x.epoch, 1);
    epochs_free(&x);
    epochs_init(&x, &c, 16, budget, 3, 1, 77);
    record(&x, &bt, N, b);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    /* another seed, another order */
    epochs_init(&y, &c, 16, budget, 3, 1, 78);
    record(&y, &bt, N, d);
    ck_assert(memcmp(a, d, sizeof a) != 0);
    epochs_free(&y);
    /* stop after 17 batches, restore a fresh batcher from the position, continue */
    epochs_free(&x);
    epochs_init(&x, &c, 16, budget, 3, 1, 77);
    record(&x, &bt, 17, b);
    epochs_init(&y, &c, 16, budget, 3, 1, 12345);
    epochs_restore(&y, x.epoch, x.next, x.epoch_start.state, x.epoch_start.inc);
    record(&y, &bt, N - 17, b + 3 * 17);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    epochs_free(&x);
    epochs_free(&y);
    batch_free(&bt);
    corpus_free(&c);
}

START_TEST(batcher_is_deterministic_and_restores_exactly)
{
    check_deterministic_and_restores(0);
}
END_TEST

START_TEST(batcher_with_a_token_budget_is_deterministic_and_restores_exactly)
{
    check_deterministic_and_restores(60);
}
END_TEST

/* One epoch under a token budget: returns its batches' padding; checks that every pair
 * came once, that no batch holds more than `cap` pairs or more positions (pairs times
 * the longest side, with the end mark) than the budget unless it is one pair alone,
 * and, when the whole corpus is one pool (`one_pool`), that each batch but the last in
 * the pool's order is full: the pair after it would have broken a limit. */
static long token_epoch(const Corpus *c, int cap, long budget, int pool_batches, int one_pool)
{
    Epochs e;
    Batch bt;
    epochs_init(&e, c, cap, budget, pool_batches, 1, 9);
    batch_init(&bt, cap, c->max_src_len + 1, c->max_tgt_len + 1);
    int *seen = calloc((size_t)c->n, sizeof(int));
    long padding = 0;
    for (int k = 0; k < e.n_batches; k++) {
        ck_assert_int_eq(epochs_next(&e, &bt, NULL), 0);
        int longest = 0;
        long used = 0;
        for (int u = 0; u < bt.batch_size; u++) {
            const int positions = epochs_pair_positions(c, bt.pair[u]);
            longest = positions > longest ? positions : longest;
            used += positions;
            seen[bt.pair[u]]++;
        }
        ck_assert_int_ge(bt.batch_size, 1);
        ck_assert_int_le(bt.batch_size, cap);
        if (bt.batch_size > 1)
            ck_assert_int_le((long)bt.batch_size * longest, budget);
        padding += (long)bt.batch_size * longest - used;
    }
    for (int p = 0; p < c->n; p++)
        ck_assert_int_eq(seen[p], 1);
    if (one_pool) /* batch_first runs through the sorted pool in its order */
        for (int b = 0; b + 1 < e.n_batches; b++) {
            int pairs = 0, longest = 0;
            for (int k = e.batch_first[b]; k <= e.batch_first[b + 1]; k++) {
                const int positions = epochs_pair_positions(c, e.order[k]);
                longest = positions > longest ? positions : longest;
                pairs++;
            }
            /* pairs is the batch's and the next pair */
            ck_assert((long)pairs * longest > budget || pairs > cap);
        }
    free(seen);
    batch_free(&bt);
    epochs_free(&e);
    return padding;
}

START_TEST(batcher_with_a_token_budget_fills_batches_to_it_and_no_further)
{
    Corpus c;
    make_corpus(&c, 1000); /* positions 2 to 10 a pair */
    token_epoch(&c, 16, 40, 1000, 1);  /* short pairs meet the budget, ... */
    token_epoch(&c, 6, 40, 1000, 1);   /* ... or the cap of pairs */
    /* a cap of pairs that never binds: pools count budgets, not batch_size pairs */
    long bucketed = token_epoch(&c, 1000, 40, 16, 0);
    long unsorted = token_epoch(&c, 1000, 40, 1, 0);
    printf("padding under a budget of 40 tokens: %ld positions in pools of one "
           "budget, %ld in pools of 16\n", unsorted, bucketed);
    ck_assert_int_lt(2 * bucketed, unsorted);
    token_epoch(&c, 16, 5, 1000, 1); /* pairs longer than the budget come alone, not lost */
    corpus_free(&c);
}
END_TEST

/* What the before-epoch hook saw: the epochs it was called with, and the corpus it
 * changes (as subword sampling does: each call gives the pairs other lengths). */
typedef struct {
    Corpus *corpus;
    long calls[8];
    int n_calls;
} HookLog;

static void lengthen_sources(void *ctx, long epoch)
{
    HookLog *log = ctx;
    ck_assert_int_lt(log->n_calls, 8);
    log->calls[log->n_calls++] = epoch;
    Corpus *c = log->corpus;
    for (int k = 0; k < c->n; k++) /* shorter or the same: within the pair's ids */
        c->src_len[k] = 1 + (k + (int)epoch) % c->src_len[k];
}

/* epochs_set_hook plans the current epoch again with the hook called first, so the first
 * epoch's batches already follow the hook's lengths (those of a batcher set up on the
 * corpus as the hook left it), and each later epoch calls it with its number. */
START_TEST(batcher_hook_runs_before_every_epoch_the_first_included)
{
    Corpus c;
    make_corpus(&c, 200);
    Batch bt;
    batch_init(&bt, 16, c.max_src_len + 1, c.max_tgt_len + 1);
    enum { N = 13 }; /* one epoch of 200 pairs in batches of 16 */
    int unhooked[3 * N], hooked[3 * N], fresh[3 * N];
    HookLog log = {.corpus = &c};
    Epochs x, y;
    epochs_init(&x, &c, 16, 0, 3, 1, 77);
    record(&x, &bt, N, unhooked);
    epochs_free(&x);
    epochs_init(&x, &c, 16, 0, 3, 1, 77);
    epochs_set_hook(&x, lengthen_sources, &log);
    ck_assert_int_eq(log.n_calls, 1);
    ck_assert_int_eq(log.calls[0], 0);
    record(&x, &bt, N, hooked);
    epochs_init(&y, &c, 16, 0, 3, 1, 77); /* the corpus as the hook left it */
    record(&y, &bt, N, fresh);
    ck_assert(memcmp(hooked, fresh, sizeof hooked) == 0);
    ck_assert(memcmp(hooked, unhooked, sizeof hooked) != 0); /* the hook's lengths counted */
    ck_assert_int_eq(log.n_calls, 1);
    record(&x, &bt, 1, hooked); /* into epoch 1 */
    ck_assert_int_eq(log.n_calls, 2);
    ck_assert_int_eq(log.calls[1], 1);
    epochs_free(&x);
    epochs_free(&y);
    batch_free(&bt);
    corpus_free(&c);
}
END_TEST

Suite *data_suite(void)
{
    Suite *s = suite_create("data");
    TCase *tc = tcase_create("data");
    tcase_add_test(tc, vocabulary_orders_by_frequency_then_first_occurrence);
    tcase_add_test(tc, vocabulary_of_both_sides_adds_their_counts);
    tcase_add_test(tc, vocabulary_from_a_list_checks_it);
    tcase_add_test(tc, vocabulary_survives_growth);
    tcase_add_test(tc, batcher_covers_each_pair_once_per_epoch_in_length_buckets);
    tcase_add_test(tc, batcher_is_deterministic_and_restores_exactly);
    tcase_add_test(tc, batcher_with_a_token_budget_is_deterministic_and_restores_exactly);
    tcase_add_test(tc, batcher_with_a_token_budget_fills_batches_to_it_and_no_further);
    tcase_add_test(tc, batcher_hook_runs_before_every_epoch_the_first_included);
    suite_add_tcase(s, tc);
    return s;
}
