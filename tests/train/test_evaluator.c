/* test_evaluator.c: the evaluator (train/evaluator.h) driven alone, with no trainer: a
 * trained tiny model's checkpoint and a corpus are all it needs. Its loss is the
 * token-weighted mean of each pair's own teacher-forced loss, whatever the batch size;
 * its perplexity is exp of that loss; its exact match is the share of its translations
 * equal to their references; and a stop request between batches ends it. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/saved_model.h"
#include "support/suites.h"
#include "support/tinyrun.h"
#include "train/evaluator.h"

/* Translations joined as words, as the models here were trained. */
static const Splitter WORDS = {LEVEL_WORD, 0, NULL, 0};

typedef struct {
    char dir[512];
    SavedModel model;
    Corpus valid;
} Setup;

/* The tiny reversal model, trained, and its validation pairs read in its vocabularies
 * as validation reads them (references kept). */
static void setup(Setup *s, const char *name)
{
    tiny_model_run(s->dir, sizeof s->dir, name, NULL);
    char ckpt[700], src[700], tgt[700];
    snprintf(ckpt, sizeof ckpt, "%s/run/checkpoints/last.ckpt", s->dir);
    snprintf(src, sizeof src, "%s/valid.src", s->dir);
    snprintf(tgt, sizeof tgt, "%s/valid.tgt", s->dir);
    Error err;
    ck_assert_msg(saved_model_load(&s->model, ckpt, &err) == 0, "%s", err.msg);
    const CorpusSpec spec = {.src_path = src, .tgt_path = tgt, .level = LEVEL_WORD,
                             .max_line_bytes = 1 << 20, .keep_refs = 1};
    ck_assert_msg(corpus_read(&s->valid, &spec, &s->model.src_vocab, &s->model.tgt_vocab, 0,
                              "validation", &err) == 0, "%s", err.msg);
    ck_assert_int_gt(s->valid.n, 5);
}

static void teardown(Setup *s)
{
    corpus_free(&s->valid);
    saved_model_free(&s->model);
}

static EvalScores scores_at(Setup *s, int batch_size, Evaluator *e)
{
    evaluator_init(e, &s->model.dims, &s->valid, batch_size, 2.0, 10);
    EvalScores out;
    ck_assert_int_eq(evaluate(e, &s->model.params, &s->model.tgt_vocab, &WORDS, 0, 2.0,
                              10, &out, NULL), 0);
    return out;
}

/* Each pair alone, teacher-forced: its loss (token mean) and its target tokens. */
static double pair_loss(Setup *s, int pair, long *tokens)
{
    Workspace ws;
    Batch bt;
    const int S = s->valid.max_src_len + 1, T = s->valid.max_tgt_len + 1;
    model_workspace_init(&ws, &s->model.dims, 1, S, T, 0);
    batch_init(&bt, 1, S, T);
    corpus_batch(&s->valid, &pair, 0, 1, 1, &bt, NULL);
    const double loss = model_forward(&ws, &s->model.params, &bt);
    *tokens = bt.n_tgt_tokens;
    batch_free(&bt);
    model_workspace_free(&ws);
    return loss;
}

START_TEST(the_loss_is_the_token_weighted_mean_of_each_pairs_loss)
{
    Setup s;
    setup(&s, "evaluator-loss");
    double sum = 0;
    long tokens = 0;
    for (int pair = 0; pair < s.valid.n; pair++) {
        long n;
        sum += pair_loss(&s, pair, &n) * (double)n;
        tokens += n;
    }
    const double expected = sum / (double)tokens;
    /* batches of 1, of 3 (the last one short) and of every pair at once */
    const int sizes[] = {1, 3, 64};
    for (int k = 0; k < 3; k++) {
        Evaluator e;
        EvalScores got = scores_at(&s, sizes[k], &e);
        ck_assert_int_eq(got.tokens, tokens);
        ck_assert_msg(fabs(got.loss - expected) <= 1e-5 * expected,
                      "batch %d: loss %.9g, the pairs' token-weighted mean %.9g", sizes[k],
                      got.loss, expected);
        ck_assert_msg(got.ppl == exp(got.loss), "ppl %.9g is not exp(loss %.9g)", got.ppl,
                      got.loss);
        evaluator_free(&e);
    }
    teardown(&s);
}
END_TEST

START_TEST(exact_match_is_the_share_of_translations_equal_to_their_references)
{
    Setup s;
    setup(&s, "evaluator-exact");
    Evaluator e;
    scores_at(&s, 4, &e);
    /* every other reference made the model's own translation: some pairs then match
     * whatever the tiny model learned, and the others as they happen to */
    for (int pair = 0; pair < s.valid.n; pair += 2) {
        free(s.valid.refs[pair]);
        s.valid.refs[pair] = strdup(e.hyps[pair]);
    }
    evaluator_free(&e);
    EvalScores got = scores_at(&s, 4, &e);
    int same = 0;
    for (int pair = 0; pair < s.valid.n; pair++) {
        ck_assert_ptr_nonnull(e.hyps[pair]);
        same += !strcmp(e.hyps[pair], s.valid.refs[pair]);
    }
    ck_assert_int_ge(same, (s.valid.n + 1) / 2);
    ck_assert_msg(fabs(got.exact - 100.0 * same / s.valid.n) < 1e-9, "exact %.6f, %d of %d "
                  "translations equal their references", got.exact, same, s.valid.n);
    evaluator_free(&e);
    teardown(&s);
}
END_TEST

static int stop_at_once(void)
{
    return 1;
}

START_TEST(a_stop_request_between_batches_ends_the_evaluation)
{
    Setup s;
    setup(&s, "evaluator-stop");
    Evaluator e;
    evaluator_init(&e, &s.model.dims, &s.valid, 3, 2.0, 10);
    EvalScores out = {0};
    ck_assert_int_eq(evaluate(&e, &s.model.params, &s.model.tgt_vocab, &WORDS, 0, 2.0, 10,
                              &out, stop_at_once), -1);
    for (int pair = 0; pair < s.valid.n; pair++)
        ck_assert_ptr_null(e.hyps[pair]); /* nothing was translated */
    evaluator_free(&e);
    teardown(&s);
}
END_TEST

Suite *evaluator_suite(void)
{
    Suite *s = suite_create("evaluator");
    TCase *tc = tcase_create("evaluator");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, the_loss_is_the_token_weighted_mean_of_each_pairs_loss);
    tcase_add_test(tc, exact_match_is_the_share_of_translations_equal_to_their_references);
    tcase_add_test(tc, a_stop_request_between_batches_ends_the_evaluation);
    suite_add_tcase(s, tc);
    return s;
}
