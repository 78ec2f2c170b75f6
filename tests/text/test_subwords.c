/* test_subwords.c: the SentencePiece seam (text/subwords.h): models learned from s2s's own
 * corpora are the same bytes for the same text and seed, split lines into pieces that
 * join back into the (normalised) line, sample other splits that join back the same (a
 * fresh thread's draws starting over from a given seed), and damaged model bytes are an
 * error naming where they came from. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/suites.h"
#include "text/subwords.h"

/* Lines SentencePiece normalises (NFKC, spaces) beside lines it keeps as they are; the
 * training text holds every character of them. */
static const char *const HAND_MADE[][2] = {
    {"« Où est-ce ? » dit-il, à côté du château.", "« Où est-ce ? » dit-il, à côté du château."},
    {"Die Straßenbahnhaltestelle ist geschlossen.", "Die Straßenbahnhaltestelle ist geschlossen."},
    {"  two   spaces  between ", "two spaces between"},
    {"a \xef\xac\x81ne day", "a fine day"}, /* the ligature U+FB01 is NFKC's "fi" */
};
enum { N_HAND = sizeof HAND_MADE / sizeof *HAND_MADE, N_LINES = 400 };

/* The first N_LINES lines of toy-fr's two sides, and the hand-made lines (normalised),
 * into path. */
static void write_training_text(const char *path)
{
    FILE *out = fopen(path, "w");
    ck_assert_ptr_nonnull(out);
    const char *const sides[] = {"corpora/toy-fr/train.src", "corpora/toy-fr/train.tgt"};
    for (int s = 0; s < 2; s++) {
        FILE *in = fopen(sides[s], "r");
        ck_assert_ptr_nonnull(in);
        char line[1024];
        for (int k = 0; k < N_LINES && fgets(line, sizeof line, in); k++)
            fputs(line, out);
        fclose(in);
    }
    for (int k = 0; k < N_HAND; k++)
        for (int r = 0; r < 20; r++) /* often enough for their pieces to be learned */
            fprintf(out, "%s\n", HAND_MADE[k][1]);
    ck_assert_int_eq(fclose(out), 0);
}

/* A model of 300 pieces of the given type and seed learned from the file at path; its
 * bytes, *size of them. */
static char *learn_from(const char *path, SubwordType type, uint32_t seed, size_t *size)
{
    const char *paths[] = {path};
    const SubwordTraining t = {paths, 1, 300, type, seed};
    char *model = NULL;
    Error err;
    ck_assert_msg(subwords_train(&t, &model, size, &err) == 0, "%s", err.msg);
    return model;
}

/* learn_from write_training_text's text, `again` times from one temporary file (removed
 * again; a model records the path it was learned from): models[k], sizes[k]. */
static void learn_again(SubwordType type, uint32_t seed, int again, char **models, size_t *sizes)
{
    char path[] = "/tmp/s2s-test-subwords-XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    write_training_text(path);
    for (int k = 0; k < again; k++)
        models[k] = learn_from(path, type, seed, &sizes[k]);
    unlink(path);
    close(fd);
}

static char *learn(SubwordType type, uint32_t seed, size_t *size)
{
    char *model;
    learn_again(type, seed, 1, &model, size);
    return model;
}

/* Splits line and joins the pieces back: the text, and the pieces' count. */
static int round_trip(const Subwords *sw, Tokens *p, const char *line, double alpha, char *text,
                      size_t cap)
{
    Error err;
    const int n = subwords_encode(sw, p, line, strlen(line), alpha, &err);
    ck_assert_msg(n > 0, "%s: %s", line, err.msg);
    const char *list[256];
    ck_assert_int_le(n, 256);
    for (int k = 0; k < n; k++)
        list[k] = tokens_get(p, k);
    const long len = subwords_decode(sw, text, cap, list, n);
    ck_assert_int_ge(len, 0);
    ck_assert_int_lt(len, (long)cap);
    return n;
}

static void check_type(SubwordType type)
{
    size_t sizes[2];
    char *models[2];
    learn_again(type, 7, 2, models, sizes);
    char *model = models[0], *again = models[1];
    const size_t size = sizes[0], again_size = sizes[1];
    ck_assert_msg(size == again_size && memcmp(model, again, size) == 0,
                  "%s: two models of the same text and seed differ", subword_type_names[type]);
    Error err;
    Subwords *sw = subwords_load(model, size, "the test's model", &err);
    ck_assert_msg(sw != NULL, "%s", err.msg);
    ck_assert_int_eq(subwords_vocab_size(sw), 300);
    ck_assert_str_eq(subwords_piece(sw, 0), "<unk>");
    Tokens p = {0};
    char text[1024];
    FILE *in = fopen("corpora/toy-fr/train.tgt", "r");
    char line[1024];
    int lines = 0, pieces = 0, words = 0;
    for (; lines < N_LINES && fgets(line, sizeof line, in); lines++) {
        line[strcspn(line, "\n")] = '\0';
        pieces += round_trip(sw, &p, line, 0, text, sizeof text);
        ck_assert_str_eq(text, line);
        ck_assert(!strncmp(tokens_get(&p, 0), "\xe2\x96\x81", 3)); /* a word starts with ▁ */
        for (const char *c = line; *c; c++)
            words += *c == ' ';
    }
    fclose(in);
    ck_assert_int_gt(pieces, words + lines); /* pieces, not just words */
    for (int k = 0; k < N_HAND; k++) {
        round_trip(sw, &p, HAND_MADE[k][0], 0, text, sizeof text);
        ck_assert_str_eq(text, HAND_MADE[k][1]);
    }
    { /* sampled splits (bpe: BPE-dropout) join back the same, and vary */
        const char *line0 = HAND_MADE[1][1];
        int first = -1, differ = 0;
        subwords_seed(11);
        for (int r = 0; r < 20; r++) {
            const int n = round_trip(sw, &p, line0, 0.5, text, sizeof text);
            ck_assert_str_eq(text, line0);
            differ |= first >= 0 && n != first;
            first = first < 0 ? n : first;
        }
        ck_assert_msg(differ, "20 sampled splits of one line all had %d pieces", first);
    }
    tokens_free(&p);
    subwords_free(sw);
    free(model);
    free(again);
}

/* What one thread's 20 draws of a split give, its pieces joined by '|'. */
typedef struct {
    const Subwords *sw;
    char text[8192];
} Draws;

static void draw_twenty(void *arg)
{
    Draws *d = arg;
    Tokens p = {0};
    Error err;
    size_t used = 0;
    const char *line = HAND_MADE[1][1];
    for (int r = 0; r < 20; r++) {
        const int n = subwords_encode(d->sw, &p, line, strlen(line), 0.5, &err);
        ck_assert_int_gt(n, 0);
        for (int k = 0; k < n; k++)
            used += (size_t)snprintf(d->text + used, sizeof d->text - used, "%s|",
                                     tokens_get(&p, k));
        ck_assert_int_lt(used, sizeof d->text);
    }
    tokens_free(&p);
}

/* subwords_with_generator: the draws of a fresh thread start from the seed given, the
 * same seed giving the same splits (whatever was drawn before), another seed others. */
START_TEST(draws_start_over_from_a_seed_on_a_fresh_thread)
{
    size_t size;
    char *model = learn(SUBWORD_UNIGRAM, 7, &size);
    Error err;
    Subwords *sw = subwords_load(model, size, "the test's model", &err);
    ck_assert_msg(sw != NULL, "%s", err.msg);
    static Draws a, b, c;
    a.sw = b.sw = c.sw = sw;
    subwords_with_generator(5, draw_twenty, &a);
    subwords_with_generator(6, draw_twenty, &c);
    subwords_with_generator(5, draw_twenty, &b);
    ck_assert_str_eq(a.text, b.text);
    ck_assert_str_ne(a.text, c.text);
    subwords_free(sw);
    free(model);
}
END_TEST

START_TEST(unigram_models_split_and_join_back_the_line)
{
    check_type(SUBWORD_UNIGRAM);
}
END_TEST

START_TEST(bpe_models_split_and_join_back_the_line)
{
    check_type(SUBWORD_BPE);
}
END_TEST

/* Bytes that are not a model, or a model cut short, load as an error naming their
 * source, never as a model. */
START_TEST(damaged_model_bytes_are_an_error_naming_their_source)
{
    size_t size;
    char *model = learn(SUBWORD_UNIGRAM, 3, &size);
    Error err;
    static const char noise[] = "not a model at all, just text";
    ck_assert_ptr_null(subwords_load(noise, sizeof noise, "noise.model", &err));
    ck_assert_msg(strstr(err.msg, "noise.model") != NULL, "%s", err.msg);
    ck_assert_ptr_null(subwords_load(model, size / 2, "half.model", &err));
    ck_assert_msg(strstr(err.msg, "half.model") != NULL, "%s", err.msg);
    ck_assert_ptr_null(subwords_load(model, 0, "empty.model", &err));
    free(model);
}
END_TEST

/* A vocabulary larger than the text can fill is SentencePiece's error, passed on. */
START_TEST(a_vocabulary_the_text_cannot_fill_is_an_error)
{
    char path[] = "/tmp/s2s-test-subwords-XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "a b c\n", 6), 6);
    const char *paths[] = {path};
    const SubwordTraining t = {paths, 1, 5000, SUBWORD_UNIGRAM, 1};
    char *model = NULL;
    size_t size = 0;
    Error err;
    ck_assert_int_eq(subwords_train(&t, &model, &size, &err), -1);
    ck_assert_msg(strstr(err.msg, path) != NULL, "%s", err.msg);
    unlink(path);
    close(fd);
}
END_TEST

Suite *subwords_suite(void)
{
    Suite *s = suite_create("subwords");
    TCase *tc = tcase_create("sentencepiece");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, unigram_models_split_and_join_back_the_line);
    tcase_add_test(tc, bpe_models_split_and_join_back_the_line);
    tcase_add_test(tc, damaged_model_bytes_are_an_error_naming_their_source);
    tcase_add_test(tc, a_vocabulary_the_text_cannot_fill_is_an_error);
    tcase_add_test(tc, draws_start_over_from_a_seed_on_a_fresh_thread);
    suite_add_tcase(s, tc);
    return s;
}
