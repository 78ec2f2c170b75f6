/* test_metrics.c: BLEU against the scores sacreBLEU 2.6.0 printed for the cases in
 * tests/fixtures/sacrebleu/ (default 13a tokenization and exp smoothing, and -lc), and the
 * 13a tokenizer on hand-checked lines. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/metrics.h"
#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"

/* Reads the lines of a file (without their '\n') into *lines; returns their number. */
static int read_lines(const char *path, char ***lines)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    int n = 0, cap = 0;
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    *lines = NULL;
    while ((len = getline(&line, &line_cap, f)) >= 0) {
        if (len > 0 && line[len - 1] == '\n')
            line[len - 1] = '\0';
        if (n == cap) {
            cap = cap * 2 + 16;
            *lines = realloc(*lines, sizeof(char *) * (size_t)cap);
        }
        (*lines)[n++] = strdup(line);
    }
    free(line);
    fclose(f);
    return n;
}

static void free_lines(char **lines, int n)
{
    for (int k = 0; k < n; k++)
        free(lines[k]);
    free(lines);
}

/* The sacreBLEU cases (tests/fixtures/README.md); tests run from the top folder. */
#define SACREBLEU "tests/fixtures/sacrebleu"

/* Compares BLEU on one case with the line sacreBLEU printed for it. */
static void check_case(const char *name, int lowercase)
{
    char path[512], want_tag[64];
    snprintf(path, sizeof path, SACREBLEU "/%s/hyp.txt", name);
    char **hyp, **ref;
    int n_hyp = read_lines(path, &hyp);
    snprintf(path, sizeof path, SACREBLEU "/%s/ref.txt", name);
    int n_ref = read_lines(path, &ref);
    ck_assert_int_eq(n_hyp, n_ref);

    snprintf(path, sizeof path, SACREBLEU "/%s/expected.txt", name);
    char **expected;
    int n_expected = read_lines(path, &expected);
    snprintf(want_tag, sizeof want_tag, "BLEU|nrefs:1|case:%s|", lowercase ? "lc" : "mixed");
    const char *line = NULL;
    for (int k = 0; k < n_expected; k++)
        if (strstr(expected[k], want_tag))
            line = strstr(expected[k], " = ") + 3;
    ck_assert_ptr_nonnull(line);
    double score, p[4], bp, ratio;
    long hyp_len, ref_len;
    ck_assert_int_eq(sscanf(line, "%lf %lf/%lf/%lf/%lf (BP = %lf ratio = %lf hyp_len = %ld ref_len = %ld)",
                            &score, &p[0], &p[1], &p[2], &p[3], &bp, &ratio, &hyp_len, &ref_len), 9);

    Bleu b;
    bleu_corpus(&b, (const char *const *)hyp, (const char *const *)ref, n_hyp, lowercase);
    printf("BLEU %-16s %-5s s2s %.4f sacreBLEU %.4f\n", name, lowercase ? "-lc" : "", b.score, score);
    ck_assert_double_eq_tol(b.score, score, 0.00005 + 1e-9);
    for (int k = 0; k < 4; k++) {
        char mine[16], theirs[16];
        snprintf(mine, sizeof mine, "%.1f", b.precision[k]);
        snprintf(theirs, sizeof theirs, "%.1f", p[k]);
        ck_assert_str_eq(mine, theirs);
    }
    ck_assert_double_eq_tol(b.bp, bp, 0.0005);
    ck_assert_int_eq(b.hyp_len, hyp_len);
    ck_assert_int_eq(b.ref_len, ref_len);
    if (!lowercase) { /* chrF2, default settings */
        double want = -1;
        for (int k = 0; k < n_expected; k++)
            if (strstr(expected[k], "chrF2|"))
                want = atof(strstr(expected[k], " = ") + 3);
        double got = chrf_corpus((const char *const *)hyp, (const char *const *)ref, n_hyp, 0);
        printf("chrF2 %-15s       s2s %.4f sacreBLEU %.4f\n", name, got, want);
        ck_assert_double_eq_tol(got, want, 0.00005 + 1e-9);
    }
    free_lines(hyp, n_hyp);
    free_lines(ref, n_ref);
    free_lines(expected, n_expected);
}

static const char *const CASES[] = {"identical", "empty-hyp-lines", "perturbed-en", "perturbed-fr",
                                    "short-no-4gram", "shuffled"};

START_TEST(bleu_matches_sacrebleu)
{
    check_case(CASES[_i / 2], _i % 2);
}
END_TEST

START_TEST(tokenizer_13a_splits_like_mteval)
{
    const struct {
        const char *in, *out;
    } cases[] = {
        {"Hello, world.", "Hello , world ."},
        {"It costs $3.50, or 1,000.", "It costs $ 3.50 , or 1,000 ."},
        {"(a) b-c 1990-2000 don't", "( a ) b-c 1990 - 2000 don't"},
        {"&quot;x&quot; &amp;lt;", "\" x \" <"}, /* &amp; is undone before &lt; */
        {"tab\tand\xc2\xa0nbsp", "tab and nbsp"},
        {"", ""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char *t = tokenize_13a(cases[k].in);
        ck_assert_str_eq(t, cases[k].out);
        free(t);
    }
}
END_TEST

START_TEST(exact_match_counts_identical_lines)
{
    const char *hyp[] = {"a b", "c", "d e"}, *ref[] = {"a b", "c ", "d e"};
    ck_assert_double_eq_tol(exact_match(hyp, ref, 3, 0), 200.0 / 3, 1e-12);
    /* --lowercase: the same once lowercased, beyond ASCII too */
    const char *cased[] = {"I'm cold.", "Élan", "a b"}, *lower[] = {"i'm cold.", "élan", "a  b"};
    ck_assert_double_eq(exact_match(cased, lower, 3, 0), 0);
    ck_assert_double_eq_tol(exact_match(cased, lower, 3, 1), 200.0 / 3, 1e-12);
}
END_TEST

START_TEST(eval_command_prints_sacrebleu_lines_and_refuses_bad_input)
{
    char dir[512], hyp[700], ref[700], out[600], err[600], line[1024], expected[2048];
    scratch_dir(dir, sizeof dir, "eval");
    snprintf(hyp, sizeof hyp, SACREBLEU "/perturbed-en/hyp.txt");
    snprintf(ref, sizeof ref, SACREBLEU "/perturbed-en/ref.txt");
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    const char *argv[] = {S2S, "eval", "--hyp", hyp, "--ref", ref, "--metric", "bleu",
                          "--metric", "chrf", "--metric", "exact", NULL};
    ck_assert_int_eq(run_command(argv, out, err, NULL), 0);
    char *text = read_file(out);
    ck_assert_ptr_nonnull(strstr(text, "BLEU = 56.52 86.4/71.7/57.8/45.4 (BP = 0.890 ratio = 0.896 "
                                       "hyp_len = 1042 ref_len = 1163)\nchrF2 = 69.26\nexact = "));
    free(text);

    char empty[600], short_file[600];
    snprintf(empty, sizeof empty, "%s/empty.txt", dir);
    snprintf(short_file, sizeof short_file, "%s/short.txt", dir);
    write_file(empty, "");
    write_file(short_file, "one line\n");
    const char *no_ref[] = {S2S, "eval", "--hyp", empty, "--ref", empty, NULL};
    ck_assert_int_eq(run_command(no_ref, out, err, NULL), 2);
    first_line(err, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: reference file `%s` is empty", empty);
    ck_assert_str_eq(line, expected);
    const char *mismatch[] = {S2S, "eval", "--hyp", short_file, "--ref", ref, NULL};
    ck_assert_int_eq(run_command(mismatch, out, err, NULL), 2);
    first_line(err, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: `%s` has 1 line but `%s` has 300; each "
             "translation needs its reference on the same line", short_file, ref);
    ck_assert_str_eq(line, expected);
    /* one sentence is one sentence (issue 25: "(1 sentences)") */
    const char *one[] = {S2S, "eval", "--hyp", short_file, "--ref", short_file, "--metric",
                         "exact", NULL};
    ck_assert_int_eq(run_command(one, out, err, NULL), 0);
    text = read_file(out);
    ck_assert_str_eq(text, "exact = 100.00 (1 sentence)\n");
    free(text);
    const char *missing[] = {S2S, "eval", "--hyp", "/nonexistent", "--ref", ref, NULL};
    ck_assert_int_eq(run_command(missing, out, err, NULL), 2);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "s2s: error: cannot open `/nonexistent`: No such file or directory");
}
END_TEST

/* Each group of --by-length scores exactly as s2s eval scores that group's lines alone
 * (the sacreBLEU-exact scorer, on the 300 pairs of tests/fixtures/sacrebleu/perturbed-en; sources of 1 to 9 words). */
START_TEST(eval_by_length_scores_each_group_as_its_lines_alone)
{
    char dir[512], hyp[700], ref[700], src[700], out[600], err[600];
    scratch_dir(dir, sizeof dir, "bylength");
    snprintf(hyp, sizeof hyp, SACREBLEU "/perturbed-en/hyp.txt");
    snprintf(ref, sizeof ref, SACREBLEU "/perturbed-en/ref.txt");
    snprintf(src, sizeof src, "%s/src.txt", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    FILE *f = fopen(src, "w");
    for (int k = 0; k < 300; k++) { /* line k: (k * 7 % 9) + 1 words, spaces doubled here and there */
        for (int w = 0; w <= k * 7 % 9; w++)
            fprintf(f, "%sw%d", w == 0 ? "" : w % 3 ? " " : "  ", w);
        fputc('\n', f);
    }
    fclose(f);
    const char *argv[] = {S2S, "eval", "--hyp", hyp, "--ref", ref, "--src", src, "--by-length", "4",
                          "--metric", "bleu", "--metric", "chrf", NULL};
    ck_assert_int_eq(run_command(argv, out, err, NULL), 0);
    char *text = read_file(out);
    char *hyp_all = read_file(hyp), *ref_all = read_file(ref);
    /* lines of each group into files of their own, scored alone */
    const int lo[] = {1, 5, 9}, hi[] = {4, 8, 12};
    for (int g = 0; g < 3; g++) {
        char gh[700], gr[700], gout[700], expected[1024];
        snprintf(gh, sizeof gh, "%s/h%d.txt", dir, g);
        snprintf(gr, sizeof gr, "%s/r%d.txt", dir, g);
        snprintf(gout, sizeof gout, "%s/o%d.txt", dir, g);
        FILE *fh = fopen(gh, "w"), *fr = fopen(gr, "w");
        int n = 0;
        char *hs = hyp_all, *rs = ref_all;
        for (int k = 0; k < 300; k++) {
            char *he = strchr(hs, '\n'), *re = strchr(rs, '\n');
            int words = k * 7 % 9 + 1;
            if (words >= lo[g] && words <= hi[g]) {
                fprintf(fh, "%.*s\n", (int)(he - hs), hs);
                fprintf(fr, "%.*s\n", (int)(re - rs), rs);
                n++;
            }
            hs = he + 1;
            rs = re + 1;
        }
        fclose(fh);
        fclose(fr);
        const char *alone[] = {S2S, "eval", "--hyp", gh, "--ref", gr, "--metric", "bleu", "--metric",
                               "chrf", NULL};
        ck_assert_int_eq(run_command(alone, gout, err, NULL), 0);
        char *single = read_file(gout);
        char *bleu = single, *chrf = strchr(single, '\n') + 1;
        chrf[-1] = '\0';
        snprintf(expected, sizeof expected, "length %d-%d (%d sentences): %s\nlength %d-%d (%d "
                 "sentences): %s", lo[g], hi[g], n, bleu, lo[g], hi[g], n, chrf);
        ck_assert_msg(strstr(text, expected) != NULL, "no `%s` in\n%s", expected, text);
        free(single);
    }
    ck_assert_ptr_null(strstr(text, "length 13-"));
    free(text);
    free(hyp_all);
    free(ref_all);
    /* the two options go together */
    const char *half[] = {S2S, "eval", "--hyp", hyp, "--ref", ref, "--by-length", "4", NULL};
    ck_assert_int_eq(run_command(half, out, err, NULL), 2);
    char line[512];
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "s2s: error: --src and --by-length go together (see s2s eval --help)");
}
END_TEST

/* BLEU without tokenization (sacreBLEU -tok none, multi-bleu.perl): the text's own tokens,
 * cut at whitespace of any kind and nowhere else, counted by hand here; 13a would cut
 * "a,b" and "&apos;s" further. And `s2s eval --tokenize none` prints it. */
START_TEST(bleu_without_tokenization_counts_the_texts_own_tokens)
{
    const char *hyps[] = {"a,b  c\xc2\xa0" "d ", "x &apos;s y", "p q r s t"};
    const char *refs[] = {"a,b c d", "\tx &apos;s z", "p q r s t"};
    Bleu b;
    bleu_corpus_tokenized(&b, hyps, refs, 3, 0, BLEU_TOKENIZE_NONE);
    const long correct[4] = {10, 7, 4, 2}, total[4] = {11, 8, 5, 2};
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(b.correct[k], correct[k]);
        ck_assert_int_eq(b.total[k], total[k]);
    }
    ck_assert_int_eq(b.hyp_len, 11);
    ck_assert_int_eq(b.ref_len, 11);
    const double want = 100 * pow(10.0 / 11 * 7.0 / 8 * 4.0 / 5 * 2.0 / 2, 0.25);
    ck_assert_double_eq_tol(b.score, want, 1e-12);
    Bleu t13a;
    bleu_corpus_tokenized(&t13a, hyps, refs, 3, 0, BLEU_TOKENIZE_13A);
    ck_assert_int_gt(t13a.hyp_len, b.hyp_len);

    char dir[512], hyp[600], ref[600], out[600], err[600], line[1024], expected[256];
    scratch_dir(dir, sizeof dir, "evalnone");
    snprintf(hyp, sizeof hyp, "%s/hyp.txt", dir);
    snprintf(ref, sizeof ref, "%s/ref.txt", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    write_file(hyp, "a,b  c\xc2\xa0" "d \nx &apos;s y\np q r s t\n");
    write_file(ref, "a,b c d\n\tx &apos;s z\np q r s t\n");
    const char *argv[] = {S2S, "eval", "--hyp", hyp, "--ref", ref, "--tokenize", "none", NULL};
    ck_assert_int_eq(run_command(argv, out, err, NULL), 0);
    first_line(out, line, sizeof line);
    char formatted[256];
    bleu_format(&b, formatted, sizeof formatted);
    ck_assert_str_eq(line, formatted);
    const char *bad[] = {S2S, "eval", "--hyp", hyp, "--ref", ref, "--tokenize", "moses", NULL};
    ck_assert_int_eq(run_command(bad, out, err, NULL), 2);
    first_line(err, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: --tokenize: expected 13a or none, got `moses`");
    ck_assert_str_eq(line, expected);
}
END_TEST

Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("bleu");
    tcase_add_loop_test(tc, bleu_matches_sacrebleu, 0, 2 * (int)(sizeof CASES / sizeof *CASES));
    tcase_add_test(tc, tokenizer_13a_splits_like_mteval);
    tcase_add_test(tc, bleu_without_tokenization_counts_the_texts_own_tokens);
    tcase_add_test(tc, exact_match_counts_identical_lines);
    tcase_add_test(tc, eval_command_prints_sacrebleu_lines_and_refuses_bad_input);
    tcase_add_test(tc, eval_by_length_scores_each_group_as_its_lines_alone);
    suite_add_tcase(s, tc);
    return s;
}
