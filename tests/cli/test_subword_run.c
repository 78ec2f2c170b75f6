/* test_subword_run.c: data.subwords: sentencepiece end to end on the tiny setup: training
 * learns the models from the training files (the same bytes as learning them again with
 * the run's seed), keeps them in its checkpoints, trains on pieces, and translate reads
 * raw text and writes detokenized text with the checkpoint alone; a checkpoint whose model
 * is damaged or missing is an error naming it, exit 2, nothing written; `s2s align --words`
 * merges the pieces' links into links between words; given .model files are used as they
 * are, and a damaged or missing one is refused naming it. */
#define _DEFAULT_SOURCE /* strsep */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"
#include "text/subword_models.h"
#include "text/subwords.h"

#define SPACE_PIECE "\xe2\x96\x81" /* ▁, SentencePiece's word start */

static const char *const SUBWORDS[] = {"data.subwords=sentencepiece",
                                       "data.subword_vocab_size=24", NULL};
/* ... trained long enough to write words (a few seconds) */
static const char *const SUBWORDS_TRAINED[] = {"data.subwords=sentencepiece",
                                               "data.subword_vocab_size=24",
                                               "training.max_steps=3000", "training.epochs=200",
                                               "model.embedding_size=32", NULL};

/* Runs s2s translate --model model on input; out and err files under dir. */
static int translate(const char *dir, const char *model, const char *input, char *out, char *err)
{
    char in[700];
    snprintf(in, sizeof in, "%s/input.txt", dir);
    write_file(in, input);
    sprintf(out, "%s/out.txt", dir);
    sprintf(err, "%s/err.txt", dir);
    const char *argv[] = {S2S, "translate", "--model", model, NULL};
    const RunOptions opt = {.in_path = in, .timeout = 60};
    return run_command_with(argv, out, err, &opt, NULL);
}

START_TEST(training_on_subwords_keeps_its_models_and_translates_raw_text)
{
    char dir[512], run[600], train_src[600], train_tgt[600], out[700], err[700];
    tiny_model_run(dir, sizeof dir, "subwordrun", SUBWORDS_TRAINED);
    snprintf(run, sizeof run, "%s/run", dir);
    Checkpoint ck;
    load_checkpoint(&ck, run, "best.ckpt");
    const SubwordModels *m = &ck.model.subwords;
    ck_assert_ptr_nonnull(m->model[SIDE_SRC]);
    ck_assert_ptr_nonnull(m->model[SIDE_TGT]);
    /* joint (the default): one model for both sides */
    ck_assert(m->size[SIDE_SRC] == m->size[SIDE_TGT] &&
              !memcmp(m->bytes[SIDE_SRC], m->bytes[SIDE_TGT], m->size[SIDE_SRC]));
    ck_assert_int_eq(subwords_vocab_size(m->model[SIDE_TGT]), 24);
    /* the same bytes as SentencePiece learning again from both files and the same seed */
    snprintf(train_src, sizeof train_src, "%s/train.src", dir);
    snprintf(train_tgt, sizeof train_tgt, "%s/train.tgt", dir);
    const char *both[] = {train_src, train_tgt};
    const SubwordTraining again = {both, 2, 24, SUBWORD_UNIGRAM, (uint32_t)ck.model.config.seed};
    char *bytes = NULL;
    size_t size = 0;
    Error e;
    ck_assert_msg(subwords_train(&again, &bytes, &size, &e) == 0, "%s", e.msg);
    ck_assert(size == m->size[SIDE_TGT] && !memcmp(bytes, m->bytes[SIDE_TGT], size));
    free(bytes);
    /* the vocabularies are of pieces */
    int starts = 0;
    for (int k = 0; k < ck.model.tgt_vocab.size; k++)
        starts += !strncmp(vocab_word(&ck.model.tgt_vocab, k), SPACE_PIECE, 3);
    ck_assert_int_gt(starts, 0);
    checkpoint_free(&ck);
    /* raw text in, text out: no piece marks left */
    char model[700];
    snprintf(model, sizeof model, "%s/checkpoints/best.ckpt", run);
    ck_assert_int_eq(translate(dir, model, "w1 w2 w3\nw4 w5\n", out, err), 0);
    char *text = read_file(out);
    int lines = 0;
    for (const char *c = text; *c; c++)
        lines += *c == '\n';
    ck_assert_int_eq(lines, 2);
    ck_assert_msg(strstr(text, SPACE_PIECE) == NULL, "pieces left in the output:\n%s", text);
    ck_assert_msg(text[0] == 'w', "expected the tiny corpus's words, got:\n%s", text);
    free(text);
}
END_TEST

/* The word of each piece of line by the model: a piece starting with "▁" starts one
 * (worked out here from the pieces themselves, not by splitter_words). Returns the count
 * of pieces; words[k] is piece k's word. */
static int piece_words(const Subwords *sw, const char *line, int *words, int cap)
{
    Tokens t = {0};
    Error e;
    int n = subwords_encode(sw, &t, line, strlen(line), 0, &e);
    ck_assert_msg(n > 0 && n <= cap, "%d pieces", n);
    int w = -1;
    for (int k = 0; k < n; k++) {
        if (k == 0 || !strncmp(tokens_get(&t, k), SPACE_PIECE, 3))
            w++;
        words[k] = w;
    }
    tokens_free(&t);
    return n;
}

/* `s2s align --words`: the links of `s2s align` between pieces, merged into links between
 * the space-separated words (a word pair linked when any of their pieces are), sorted by
 * target word, then source word, each once; AER against word-level gold is that of the
 * merged links, worked out here; a gold link beyond the words (though within the pieces)
 * is refused naming the words. */
START_TEST(align_words_merges_piece_links_into_word_links)
{
    char dir[512], run[600], model[700], src[600], tgt[600], gold[600], pieces_out[700],
        words_out[700], err[700], line[1024];
    tiny_model_run(dir, sizeof dir, "subwordalign", SUBWORDS_TRAINED);
    snprintf(run, sizeof run, "%s/run", dir);
    snprintf(model, sizeof model, "%s/checkpoints/best.ckpt", run);
    snprintf(src, sizeof src, "%s/valid.src", dir);
    snprintf(tgt, sizeof tgt, "%s/valid.tgt", dir);
    snprintf(gold, sizeof gold, "%s/valid.align", dir);
    snprintf(pieces_out, sizeof pieces_out, "%s/pieces.txt", dir);
    snprintf(words_out, sizeof words_out, "%s/words.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    const char *by_pieces[] = {S2S, "align", "--model", model, "--src", src, "--tgt", tgt, NULL};
    ck_assert_int_eq(run_command(by_pieces, pieces_out, NULL, NULL), 0);
    const char *by_words[] = {S2S, "align", "--model", model, "--src", src, "--tgt", tgt,
                              "--gold", gold, "--words", NULL};
    ck_assert_int_eq(run_command(by_words, words_out, err, NULL), 0);
    Checkpoint ck;
    load_checkpoint(&ck, run, "best.ckpt");
    const Subwords *sw = ck.model.subwords.model[SIDE_SRC];
    char *srcs = read_file(src), *tgts = read_file(tgt), *golds = read_file(gold);
    char *piece_links = read_file(pieces_out), *word_links = read_file(words_out);
    char *sp = srcs, *tp = tgts, *gp = golds, *pp = piece_links, *wp = word_links;
    long hyp = 0, sure = 0, hit = 0;
    int merged_somewhere = 0;
    for (int pair = 0; pair < 20; pair++) {
        char *s_line = strsep(&sp, "\n"), *t_line = strsep(&tp, "\n");
        char *g_line = strsep(&gp, "\n"), *p_line = strsep(&pp, "\n"), *w_line = strsep(&wp, "\n");
        ck_assert(s_line && t_line && g_line && p_line && w_line);
        int sword[64], tword[64];
        int ns = piece_words(sw, s_line, sword, 64), nt = piece_words(sw, t_line, tword, 64);
        merged_somewhere |= sword[ns - 1] < ns - 1 || tword[nt - 1] < nt - 1;
        /* the word links the piece links make: linked[i][j] for target word i, source j */
        char linked[64][64] = {{0}};
        for (char *tok = strtok(p_line, " "); tok; tok = strtok(NULL, " ")) {
            int j, i;
            ck_assert_int_eq(sscanf(tok, "%d-%d", &j, &i), 2);
            ck_assert(j < ns && i < nt);
            linked[tword[i]][sword[j]] = 1;
        }
        char want[1024] = "";
        size_t used = 0;
        for (int i = 0; i < 64; i++)
            for (int j = 0; j < 64; j++)
                if (linked[i][j]) {
                    used += (size_t)snprintf(want + used, sizeof want - used, "%s%d-%d",
                                             used ? " " : "", j, i);
                    hyp++;
                }
        ck_assert_msg(!strcmp(w_line, want), "pair %d: --words gave `%s`, the pieces' links "
                      "`%s`", pair, w_line, want);
        for (char *tok = strtok(g_line, " "); tok; tok = strtok(NULL, " ")) {
            int j, i;
            ck_assert_int_eq(sscanf(tok, "%d-%d", &j, &i), 2);
            sure++;
            hit += linked[i][j];
        }
    }
    ck_assert_msg(merged_somewhere, "no word of the validation set has several pieces");
    /* every gold link is sure: AER = 1 - 2 |A & S| / (|A| + |S|) */
    char want_aer[64];
    snprintf(want_aer, sizeof want_aer, "AER = %.4f ", 1.0 - 2.0 * (double)hit / (double)(hyp + sure));
    first_line(err, line, sizeof line);
    ck_assert_msg(!strncmp(line, want_aer, strlen(want_aer)), "%s, expected %s", line, want_aer);
    printf("align --words on the tiny subword model: %s\n", line);
    free(srcs);
    free(tgts);
    free(golds);
    free(piece_links);
    free(word_links);
    checkpoint_free(&ck);
    /* a gold link past the words of its pair, within its pieces, is refused */
    char bad[700];
    snprintf(bad, sizeof bad, "%s/bad.align", dir);
    char *lines = read_file(gold), *rest = strchr(lines, '\n');
    char text[8192];
    snprintf(text, sizeof text, "0-0 0-9%s", rest);
    write_file(bad, text);
    free(lines);
    const char *with_bad[] = {S2S, "align", "--model", model, "--src", src, "--tgt", tgt,
                              "--gold", bad, "--words", NULL};
    ck_assert_int_eq(run_command(with_bad, NULL, err, NULL), 2);
    first_line(err, line, sizeof line);
    ck_assert_msg(strstr(line, "bad.align:1: link 0-9 is outside the pair (") &&
                  strstr(line, " target words)"), "%s", line);
}
END_TEST

/* A model-only copy of best.ckpt at path with the given subword models (NULL: none). */
static void save_with(const char *run, const char *path, const SubwordModels *subwords)
{
    Checkpoint ck;
    load_checkpoint(&ck, run, "best.ckpt");
    Error e;
    ck_assert_msg(checkpoint_save(path, ck.model.config_yaml, &ck.model.dims, &ck.model.src_vocab,
                                  &ck.model.tgt_vocab, &ck.model.params, NULL, subwords, NULL,
                                  NULL, NULL, &e) == 0, "%s", e.msg);
    checkpoint_free(&ck);
}

START_TEST(a_damaged_or_missing_subword_model_is_an_error_naming_it)
{
    char dir[512], run[600], path[700], out[700], err[700], line[1024], want[1200];
    tiny_model_run(dir, sizeof dir, "subwordbad", SUBWORDS);
    snprintf(run, sizeof run, "%s/run", dir);
    Checkpoint ck;
    load_checkpoint(&ck, run, "best.ckpt");
    SubwordModels damaged = ck.model.subwords;
    char garbage[64];
    memset(garbage, 0x5a, sizeof garbage);
    damaged.bytes[SIDE_TGT] = garbage;
    damaged.size[SIDE_TGT] = sizeof garbage;
    snprintf(path, sizeof path, "%s/damaged.ckpt", dir);
    save_with(run, path, &damaged);
    checkpoint_free(&ck);
    ck_assert_int_eq(translate(dir, path, "w1 w2\n", out, err), 2);
    first_line(err, line, sizeof line);
    snprintf(want, sizeof want, "s2s: error: checkpoint `%s`, section SPMT: not a SentencePiece "
             "model", path);
    ck_assert_msg(!strncmp(line, want, strlen(want)), "%s", line);
    char *text = read_file(out);
    ck_assert_str_eq(text, "");
    free(text);
    snprintf(path, sizeof path, "%s/missing.ckpt", dir);
    save_with(run, path, NULL);
    ck_assert_int_eq(translate(dir, path, "w1 w2\n", out, err), 2);
    first_line(err, line, sizeof line);
    snprintf(want, sizeof want, "s2s: error: checkpoint `%s` has no SPMS section", path);
    ck_assert_str_eq(line, want);
}
END_TEST

/* The source and target piece counts of the epochs' drawn splits that the run's stderr
 * (path) reports, into pieces[k][0] and [k][1] (at most cap epochs); returns how many
 * epochs it reported. */
static int drawn_pieces(const char *path, long (*pieces)[2], int cap)
{
    char *log = read_file(path);
    int n = 0;
    for (const char *at = log; (at = strstr(at, ": the training pairs drawn anew")); at++) {
        const char *count = strstr(at, "): ");
        ck_assert_ptr_nonnull(count);
        ck_assert_int_lt(n, cap);
        ck_assert_int_eq(sscanf(count, "): %ld source and %ld target pieces", &pieces[n][0],
                                &pieces[n][1]), 2);
        n++;
    }
    free(log);
    return n;
}

/* data.subword_alpha: every epoch draws the training pairs' split anew (the logged piece
 * counts vary from epoch to epoch; without alpha nothing is drawn), and every piece of the
 * model has a place in the vocabulary, since a drawn split may use any. (That a resumed
 * run draws what the straight run drew: test_cmd_train.c's resume variants.) */
START_TEST(subword_alpha_draws_each_epochs_split_anew)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "subwordalpha");
    write_tiny_setup(dir);
    const char *sets[] = {"data.subwords=sentencepiece", "data.subword_vocab_size=24",
                          "data.subword_alpha=0.5", "training.batch_size=64",
                          "training.max_steps=25", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, "alpha.err"), 0);
    long pieces[8][2];
    snprintf(path, sizeof path, "%s/alpha.err", dir);
    ck_assert_int_eq(drawn_pieces(path, pieces, 8), 4); /* epochs 1 to 4 */
    for (int side = 0; side < 2; side++) { /* each side's split is drawn */
        int vary = 0;
        for (int k = 1; k < 4; k++)
            vary |= pieces[k][side] != pieces[0][side];
        ck_assert_msg(vary, "four epochs drew %ld %s pieces each", pieces[0][side],
                      side ? "target" : "source");
    }
    char run[600];
    snprintf(run, sizeof run, "%s/run", dir);
    Checkpoint ck;
    load_checkpoint(&ck, run, "last.ckpt");
    const Subwords *sw = ck.model.subwords.model[SIDE_TGT];
    for (int k = 3; k < subwords_vocab_size(sw); k++) /* past <unk>, <s>, </s> */
        ck_assert_msg(vocab_id(&ck.model.tgt_vocab, subwords_piece(sw, k)) != TOK_UNK,
                      "the piece %s has no place in the vocabulary", subwords_piece(sw, k));
    checkpoint_free(&ck);
    const char *plain[] = {"data.subwords=sentencepiece", "data.subword_vocab_size=24",
                           "training.batch_size=64", "training.max_steps=25", "run_dir=",
                           NULL};
    char run_set[700];
    snprintf(run_set, sizeof run_set, "run_dir=%s/plain", dir);
    plain[4] = run_set;
    ck_assert_int_eq(train(S2S, dir, plain, NULL, "plain.err"), 0);
    snprintf(path, sizeof path, "%s/plain.err", dir);
    ck_assert_int_eq(drawn_pieces(path, pieces, 8), 0);
}
END_TEST

/* Trains the tiny setup in dir on the given .model files (a run directory dir/NAME);
 * returns the exit code, the first line of stderr in line. */
static int train_given(const char *dir, const char *name, const char *src_model,
                       const char *tgt_model, char *line, size_t cap)
{
    char run_set[700], src_set[800], tgt_set[800], err_name[64];
    snprintf(run_set, sizeof run_set, "run_dir=%s/%s", dir, name);
    snprintf(src_set, sizeof src_set, "data.subword_src_model=%s", src_model);
    snprintf(tgt_set, sizeof tgt_set, "data.subword_tgt_model=%s", tgt_model);
    snprintf(err_name, sizeof err_name, "%s.err", name);
    const char *sets[] = {"data.subwords=sentencepiece", "training.max_steps=2", run_set,
                          src_model ? src_set : tgt_set, src_model ? tgt_set : NULL, NULL};
    int rc = train(S2S, dir, sets, NULL, err_name);
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, err_name);
    first_line(path, line, cap);
    return rc;
}

/* data.subword_src_model / subword_tgt_model: the given .model files split the text
 * instead of models learned at the start (here one of 20 pieces, where learning would
 * make 8000), and are what the checkpoint keeps, byte for byte; a damaged or missing file
 * is an error naming it (exit 2, no run directory made), as is one key without the other. */
START_TEST(given_subword_model_files_are_used_and_bad_ones_refused)
{
    char dir[512], train_src[600], train_tgt[600], model[600], line[1024], want[1400], run[700];
    scratch_dir(dir, sizeof dir, "subwordgiven");
    write_tiny_setup(dir);
    snprintf(train_src, sizeof train_src, "%s/train.src", dir);
    snprintf(train_tgt, sizeof train_tgt, "%s/train.tgt", dir);
    const char *both[] = {train_src, train_tgt};
    const SubwordTraining learn = {both, 2, 20, SUBWORD_BPE, 7};
    char *bytes = NULL;
    size_t size = 0;
    Error e;
    ck_assert_msg(subwords_train(&learn, &bytes, &size, &e) == 0, "%s", e.msg);
    snprintf(model, sizeof model, "%s/joint.model", dir);
    FILE *f = fopen(model, "wb");
    ck_assert(f && fwrite(bytes, 1, size, f) == size && fclose(f) == 0);
    ck_assert_int_eq(train_given(dir, "given", model, model, line, sizeof line), 0);
    snprintf(run, sizeof run, "%s/given", dir);
    Checkpoint ck;
    load_checkpoint(&ck, run, "last.ckpt");
    for (int side = 0; side < 2; side++) {
        const SubwordModels *m = &ck.model.subwords;
        ck_assert(m->size[side] == size && !memcmp(m->bytes[side], bytes, size));
        ck_assert_int_eq(subwords_vocab_size(m->model[side]), 20);
    }
    checkpoint_free(&ck);
    free(bytes);
    /* damaged: a file that is not a model */
    char damaged[600];
    snprintf(damaged, sizeof damaged, "%s/damaged.model", dir);
    write_file(damaged, "not a model\n");
    ck_assert_int_eq(train_given(dir, "damaged", model, damaged, line, sizeof line), 2);
    snprintf(want, sizeof want, "s2s: error: `%s`: not a SentencePiece model", damaged);
    ck_assert_msg(!strncmp(line, want, strlen(want)), "%s", line);
    snprintf(run, sizeof run, "%s/damaged", dir);
    ck_assert_msg(!path_exists(run), "the failed run made %s", run);
    /* missing */
    char missing[600];
    snprintf(missing, sizeof missing, "%s/missing.model", dir);
    ck_assert_int_eq(train_given(dir, "missing", missing, model, line, sizeof line), 2);
    snprintf(want, sizeof want, "s2s: error: cannot read the SentencePiece model `%s`: No such "
             "file or directory", missing);
    ck_assert_str_eq(line, want);
    snprintf(run, sizeof run, "%s/missing", dir);
    ck_assert_msg(!path_exists(run), "the failed run made %s", run);
    /* one without the other */
    ck_assert_int_eq(train_given(dir, "half", NULL, model, line, sizeof line), 2);
    ck_assert_str_eq(line, "s2s: error: --set data.subword_tgt_model: data.subword_tgt_model "
                           "needs data.subword_src_model too (the same file twice for a joint "
                           "model)");
}
END_TEST

Suite *subword_run_suite(void)
{
    Suite *s = suite_create("subword_run");
    TCase *tc = tcase_create("sentencepiece");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, training_on_subwords_keeps_its_models_and_translates_raw_text);
    tcase_add_test(tc, a_damaged_or_missing_subword_model_is_an_error_naming_it);
    tcase_add_test(tc, align_words_merges_piece_links_into_word_links);
    tcase_add_test(tc, given_subword_model_files_are_used_and_bad_ones_refused);
    tcase_add_test(tc, subword_alpha_draws_each_epochs_split_anew);
    suite_add_tcase(s, tc);
    return s;
}
