/* test_cmd_translate.c: `s2s translate` end to end: n-best lists sorted by score and
 * length-normalised at any alpha, the checkpoint's search settings, bad input lines
 * keep their place (CRLF and a last line without a newline translated as their LF
 * forms), <unk> replacement, the output formats, the drawing of --show-attention (no
 * control character of the input reaches the terminal), the options' rule and
 * messages, a file-size limit, signals, and memory that follows the input (a full
 * stdout is test_badinput.c's, for every command). That beam search's alignments equal
 * the teacher-forced ones of `s2s align` on the same output is test_variants.c's, for
 * every variant; that beam search is the search it describes, tests/decode/test_beam.c's. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "report/alignlog.h"
#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"
#include "text/tokenize.h"
#include "train/checkpoint.h"

static int count_lines(const char *text)
{
    int n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

START_TEST(nbest_lists_are_sorted_by_score)
{
    char dir[512], src[700], out[700], err[700], model[700];
    tiny_model_run(dir, sizeof dir, "nbest", NULL);
    snprintf(src, sizeof src, "%s/valid.src", dir);
    snprintf(out, sizeof out, "%s/nbest.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s translate --model %s --beam 5 --n-best 5 --alpha 0 < %s > %s 2> %s",
             S2S, model, src, out, err);
    ck_assert_int_eq(system(cmd), 0);
    char *text = read_file(out);
    ck_assert_int_eq(count_lines(text), 20 * 5);
    long prev_index = -1;
    double prev_score = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        long index = atol(line);
        char *last = strrchr(line, '|');
        double score = atof(last + 1);
        if (index == prev_index)
            ck_assert_double_le(score, prev_score + 1e-12);
        else
            ck_assert_int_eq(index, prev_index + 1);
        prev_index = index;
        prev_score = score;
    }
    free(text);
}
END_TEST

/* A hypothesis of an n-best list: its sentence, words, and the log-probability its
 * printed score implies at the alpha it was printed at (score times the penalty). */
typedef struct {
    long index;
    char words[512];
    int cut;          /* at the length limit, without </s> */
    double log_p;
} Scored;

/* Translates dir's valid.src with --beam 5 --n-best 5 --alpha alpha. Each line's score
 * must be log p(Y | X) / ((5 + |Y|) / 6)^alpha, |Y| counting </s>, with log p computed
 * here by teacher forcing the printed hypothesis through the model (its token-mean
 * cross-entropy times its tokens), not taken from the beam; each list sorted by it.
 * A hypothesis cut at the length limit has no </s> to force: its log p is what its score
 * implies (|Y| its words), kept in out with the others for the caller to compare across
 * alphas. Returns how many it kept (*forced of them checked by teacher forcing). */
static int nbest_scores_at(const char *dir, const char *alpha_text, Scored *out, int cap,
                           int *forced)
{
    const double alpha = atof(alpha_text);
    char src[700], nbest[700], err[700], model[700], run[600];
    snprintf(src, sizeof src, "%s/valid.src", dir);
    snprintf(nbest, sizeof nbest, "%s/nbest-%s.txt", dir, alpha_text);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(run, sizeof run, "%s/run", dir);
    const char *argv[] = {S2S, "translate", "--model", model, "--beam", "5", "--n-best", "5",
                          "--alpha", alpha_text, NULL};
    ck_assert_int_eq(run_command_with(argv, nbest, err, &(RunOptions){.in_path = src}, NULL), 0);
    Checkpoint ck;
    load_checkpoint(&ck, run, "last.ckpt");
    Workspace ws;
    Batch bt;
    model_workspace_init(&ws, &ck.model.dims, 1, 64, 64, 0);
    batch_init(&bt, 1, 64, 64);
    char *sources = read_file(src), *text = read_file(nbest);
    char *lines[32];
    int n_lines = 0, n = 0;
    for (char *save, *l = strtok_r(sources, "\n", &save); l && n_lines < 32;
         l = strtok_r(NULL, "\n", &save))
        lines[n_lines++] = l;
    *forced = 0;
    double worst = 0, prev_score = 0;
    long prev_index = -1;
    for (char *save, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const long index = atol(line);
        char *words = strstr(line, " ||| ") + 5, *bar = strstr(words, " ||| ");
        const double score = atof(bar + 5);
        *bar = '\0';
        if (index == prev_index) /* ranked by the score it prints */
            ck_assert_double_le(score, prev_score + 1e-12);
        prev_index = index;
        prev_score = score;
        int s_ids[64], t_ids[64], sn = 0, tn = 0;
        char copy[512];
        snprintf(copy, sizeof copy, "%s", lines[index]);
        for (char *sw, *w = strtok_r(copy, " ", &sw); w; w = strtok_r(NULL, " ", &sw))
            s_ids[sn++] = vocab_id(&ck.model.src_vocab, w);
        ck_assert_int_lt(n, cap);
        Scored *h = &out[n++];
        *h = (Scored){.index = index};
        snprintf(h->words, sizeof h->words, "%s", words);
        for (char *sw, *w = strtok_r(words, " ", &sw); w; w = strtok_r(NULL, " ", &sw))
            t_ids[tn++] = vocab_id(&ck.model.tgt_vocab, w);
        const int max_out = (int)(ck.model.config.translate.max_output_ratio * (sn + 1)) +
                            (int)ck.model.config.translate.max_output_extra;
        h->cut = tn == max_out;
        const int length = h->cut ? tn : tn + 1;
        h->log_p = score * pow((5.0 + length) / 6.0, alpha);
        if (h->cut)
            continue; /* no </s> to force: compared across alphas by the caller */
        const int *sp = s_ids, *tp = t_ids;
        batch_fill(&bt, 1, &sp, &sn, &tp, &tn);
        const double log_p = -model_forward(&ws, &ck.model.params, &bt) * (tn + 1);
        const double expected = log_p / pow((5.0 + tn + 1) / 6.0, alpha);
        const double off = fabs(score - expected);
        worst = fmax(worst, off);
        ck_assert_msg(off <= 2e-6 + 1e-5 * fabs(expected), "alpha %s, line %ld `%s`: score %.6f, "
                      "log p %.6f over the length penalty %.6f", alpha_text, index, h->words,
                      score, log_p, expected);
        ++*forced;
    }
    printf("n-best at alpha %s: %d scores against teacher forcing, largest difference %.2e\n",
           alpha_text, *forced, worst);
    free(sources);
    free(text);
    batch_free(&bt);
    model_workspace_free(&ws);
    checkpoint_free(&ck);
    return n;
}

/* The n-best scores are the length-normalised ones, log p(Y | X) / ((5 + |Y|) / 6)^alpha,
 * at alphas other than 0 and 1 (issue 41: at alpha 1 a linear penalty, or one without
 * its exponent, gives the same numbers), every list ranked by them; a hypothesis cut at
 * the length limit is scored by the same penalty of its words alone: the log p its
 * scores imply at the two alphas is one number. */
START_TEST(nbest_scores_are_length_normalised_at_any_alpha)
{
    char dir[512];
    tiny_model_run(dir, sizeof dir, "nbestalpha", NULL);
    /* and a model whose translations stop at one word (translate.max_output_ratio and
     * extra, kept in its checkpoint): most of its five best are cut there */
    char cut_dir[512];
    static const char *const two_words[] = {"translate.max_output_ratio=0.01",
                                            "translate.max_output_extra=1", NULL};
    tiny_model_run(cut_dir, sizeof cut_dir, "nbestcut", two_words);
    enum { CAP = 128 };
    Scored *a = malloc(CAP * sizeof *a), *b = malloc(CAP * sizeof *b);
    int same = 0, cut = 0;
    for (int model = 0; model < 2; model++) {
        int forced_a, forced_b;
        const char *from = model ? cut_dir : dir;
        const int na = nbest_scores_at(from, "0.6", a, CAP, &forced_a);
        const int nb = nbest_scores_at(from, "1.7", b, CAP, &forced_b);
        if (model == 0) {
            ck_assert_int_ge(forced_a, 50);
            ck_assert_int_ge(forced_b, 50);
        }
        for (int i = 0; i < na; i++)
            for (int j = 0; j < nb; j++) {
                if (a[i].index != b[j].index || strcmp(a[i].words, b[j].words))
                    continue;
                ck_assert_msg(fabs(a[i].log_p - b[j].log_p) <= 4e-6 + 2e-5 * fabs(a[i].log_p),
                              "line %ld `%s`%s: log p %.6f at alpha 0.6, %.6f at 1.7", a[i].index,
                              a[i].words, a[i].cut ? " (cut)" : "", a[i].log_p, b[j].log_p);
                same++;
                cut += a[i].cut;
            }
    }
    printf("n-best at alphas 0.6 and 1.7: %d hypotheses in both, %d of them cut\n", same, cut);
    ck_assert_int_ge(same, 40);
    ck_assert_int_ge(cut, 20);
    free(a);
    free(b);
}
END_TEST

/* Without --alpha and --beam, translate searches as the checkpoint's translate.alpha and
 * translate.beam_size say (issue 41: alpha 0 instead passed every test): the same lists
 * as with them given, and other scores than at alpha 0. */
START_TEST(translate_searches_as_the_checkpoint_says_unless_told)
{
    char dir[512], model[700], src[700], err[700], out[3][700];
    static const char *const config[] = {"translate.alpha=1.7", "translate.beam_size=3", NULL};
    tiny_model_run(dir, sizeof dir, "ckpt-defaults", config);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(src, sizeof src, "%s/valid.src", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    const char *runs[3][12] = {
        {S2S, "translate", "--model", model, "--n-best", "3", NULL},
        {S2S, "translate", "--model", model, "--n-best", "3", "--beam", "3", "--alpha", "1.7", NULL},
        {S2S, "translate", "--model", model, "--n-best", "3", "--beam", "3", "--alpha", "0", NULL}};
    char *text[3];
    for (int k = 0; k < 3; k++) {
        snprintf(out[k], sizeof out[k], "%s/out%d.txt", dir, k);
        ck_assert_int_eq(run_command_with(runs[k], out[k], err, &(RunOptions){.in_path = src},
                                          NULL), 0);
        text[k] = read_file(out[k]);
    }
    ck_assert_int_eq(count_lines(text[0]), 20 * 3);
    ck_assert_str_eq(text[0], text[1]);
    ck_assert_msg(strcmp(text[0], text[2]) != 0, "alpha 1.7 and alpha 0 print the same lists");
    for (int k = 0; k < 3; k++)
        free(text[k]);
    /* the beam is the checkpoint's 3, not translate's own default: 4 best are refused */
    const char *four[] = {S2S, "translate", "--model", model, "--n-best", "4", NULL};
    ck_assert_int_eq(run_command_with(four, out[0], err, &(RunOptions){.in_path = src}, NULL), 2);
    char line[1000];
    first_line(err, line, sizeof line);
    ck_assert_msg(strstr(line, "--n-best: at most --beam hypotheses"), "%s", line);
}
END_TEST

/* Writes len bytes of data to path (NUL bytes included). */
static void write_bytes(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert(f != NULL && fwrite(data, 1, len, f) == len && fclose(f) == 0);
}

/* `s2s translate --model MODEL OPTIONS < dir/NAME.in > dir/NAME.out 2> dir/NAME.err`,
 * which must exit 0. */
static void translate_file(const char *dir, const char *model, const char *name,
                           const char *options)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s translate --model %s %s < %s/%s.in > %s/%s.out 2> %s/%s.err",
             S2S, model, options, dir, name, dir, name, dir, name);
    ck_assert_int_eq(system(cmd), 0);
}

static char *output_of(const char *dir, const char *name, const char *ext)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    return read_file(path);
}

/* Line 2 empty, 3 not UTF-8, 4 blank, 5 ending in CRLF, 6 holding a NUL byte, 7 without
 * a final newline; the reference has the same sentences with LF endings, line 7 ended. */
static const char BAD_LINES[] = "w1 w2 w3\n\nbad \xc3\x28 byte\n   \nw4 w5\r\nnul\0byte\nw6";
static const char LF_LINES[] = "w1 w2 w3\n\nbad \xc3\x28 byte\n   \nw4 w5\nnul\0byte\nw6\n";

START_TEST(bad_input_lines_keep_their_place)
{
    char dir[512], path[700], model[700];
    tiny_model_run(dir, sizeof dir, "badlines", NULL);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(path, sizeof path, "%s/bad.in", dir);
    write_bytes(path, BAD_LINES, sizeof BAD_LINES - 1);
    snprintf(path, sizeof path, "%s/lf.in", dir);
    write_bytes(path, LF_LINES, sizeof LF_LINES - 1);
    translate_file(dir, model, "bad", "--beam 3 --alignment soft");
    translate_file(dir, model, "lf", "--beam 3 --alignment soft");
    char *text = output_of(dir, "bad", "out");
    ck_assert_int_eq(count_lines(text), 7);
    char *lines[7], *p = text;
    for (int k = 0; k < 7; k++) {
        lines[k] = p;
        p = strchr(p, '\n');
        *p++ = '\0';
    }
    for (int k = 1; k <= 5; k += k == 3 ? 2 : 1) /* lines 2, 3, 4 and 6 */
        ck_assert_str_eq(lines[k], "");
    /* soft alignments: rows of weights over the source tokens (the words and </s>) */
    const int n_src[7] = {4, 0, 0, 0, 3, 0, 2};
    for (int k = 0; k < 7; k++) {
        if (!n_src[k])
            continue;
        char *rows = strstr(lines[k], " ||| ");
        ck_assert_msg(rows != NULL, "line %d: %s", k + 1, lines[k]);
        int n_rows = 0;
        char *save;
        for (char *row = strtok_r(rows + 5, " ", &save); row; row = strtok_r(NULL, " ", &save)) {
            double sum = 0;
            int n = 0;
            for (char *w = row; w; w = strchr(w, ',') ? strchr(w, ',') + 1 : NULL, n++)
                sum += atof(w);
            ck_assert_int_eq(n, n_src[k]);
            ck_assert_double_eq_tol(sum, 1, 1e-4);
            n_rows++;
        }
        ck_assert_int_ge(n_rows, 1);
    }
    free(text);
    /* the CRLF line and the last line without its newline: translated exactly as the same
     * sentences with LF endings (the same batch, so the same numbers) */
    char *bad = output_of(dir, "bad", "out"), *lf = output_of(dir, "lf", "out");
    ck_assert_str_eq(bad, lf);
    free(bad);
    free(lf);
    char *warnings = output_of(dir, "bad", "err");
    ck_assert_str_eq(warnings, "s2s: warning: stdin:2: empty line; wrote an empty line\n"
                               "s2s: warning: stdin:3:5: invalid UTF-8; wrote an empty line\n"
                               "s2s: warning: stdin:4: empty line; wrote an empty line\n"
                               "s2s: warning: stdin:6:4: NUL byte; wrote an empty line\n");
    free(warnings);
    /* n-best lists: a bad line gets no entries, and the warnings say so */
    translate_file(dir, model, "bad", "--beam 3 --n-best 2");
    text = output_of(dir, "bad", "out");
    ck_assert_int_eq(count_lines(text), 3 * 2);
    int entries[7] = {0};
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        entries[atoi(line)]++;
    const int expected_entries[7] = {2, 0, 0, 0, 2, 0, 2};
    for (int k = 0; k < 7; k++)
        ck_assert_msg(entries[k] == expected_entries[k], "index %d: %d entries", k, entries[k]);
    free(text);
    warnings = output_of(dir, "bad", "err");
    ck_assert_str_eq(warnings, "s2s: warning: stdin:2: empty line; no n-best entries for it\n"
                               "s2s: warning: stdin:3:5: invalid UTF-8; no n-best entries for it\n"
                               "s2s: warning: stdin:4: empty line; no n-best entries for it\n"
                               "s2s: warning: stdin:6:4: NUL byte; no n-best entries for it\n");
    free(warnings);
}
END_TEST

START_TEST(show_attention_keeps_control_characters_off_the_terminal)
{
    char dir[512], path[700], model[700];
    tiny_model_run(dir, sizeof dir, "showattention", NULL);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(path, sizeof path, "%s/hostile.in", dir);
    write_file(path, "w1 \033[2J\a w2\nw3 \xc2\x9b" "5m w4\n");
    translate_file(dir, model, "hostile", "--show-attention");
    char *drawing = output_of(dir, "hostile", "err");
    size_t bad_at, bad_len, n = strlen(drawing);
    ck_assert(utf8_validate(drawing, n, &bad_at, &bad_len) == 0);
    for (size_t k = 0; k < n; k++) {
        unsigned char c = (unsigned char)drawing[k];
        ck_assert_msg(c >= 0x20 || c == '\n', "control byte 0x%02x at %zu:\n%s", c, k, drawing);
        ck_assert_msg(c != 0x7f && !(c == 0xc2 && (unsigned char)drawing[k + 1] <= 0x9f),
                      "DEL or C1 at %zu:\n%s", k, drawing);
    }
    /* the translation's own title: no training epoch to claim */
    const char *title = "stdin line 1 (model of step 80)\n";
    ck_assert_int_eq(strncmp(drawing, title, strlen(title)), 0);
    ck_assert_ptr_nonnull(strstr(drawing, "\nstdin line 2 (model of step 80)\n"));
    ck_assert_ptr_null(strstr(drawing, "epoch"));
    ck_assert_ptr_nonnull(strstr(drawing, " 0:w1  1:\xef\xbf\xbd[2J\xef\xbf\xbd  2:w2  3:</s>\n\n"));
    ck_assert_ptr_nonnull(strstr(drawing, " 0:w3  1:\xef\xbf\xbd" "5m  2:w4  3:</s>\n\n"));
    free(drawing);
}
END_TEST

START_TEST(options_follow_one_rule_and_say_what_is_wrong)
{
    char dir[512], err[700];
    scratch_dir(dir, sizeof dir, "translateoptions");
    snprintf(err, sizeof err, "%s/err.txt", dir);
    const struct {
        const char *argv[5];
        const char *said;
    } cases[] = {
        /* an unknown option is unknown, last or not */
        {{"--model", "m.ckpt", "--frobnicate"}, "translate: unknown option `--frobnicate` (see s2s "
                                                "translate --help)"},
        {{"--frobnicate", "--model", "m.ckpt"}, "translate: unknown option `--frobnicate` (see s2s "
                                                "translate --help)"},
        {{"--model", "m.ckpt", "--show-attention=1"}, "translate: `--show-attention` takes no value "
                                                      "(got `--show-attention=1`; see s2s translate --help)"},
        {{"--model", "m.ckpt", "--beam=5"}, "translate: write `--beam 5`: an option's value is the "
                                            "next argument, not after '=' (see s2s translate --help)"},
        {{"--model", "m.ckpt", "--beam"}, "translate: `--beam` needs a value (see s2s translate --help)"},
        {{"--model", "m.ckpt", "in.txt"}, "translate: unexpected argument `in.txt`: the input is "
                                          "stdin (see s2s translate --help)"},
        {{"--model", "m.ckpt", "--beam", ""}, "--beam: expected 1 to 100, got ``"},
        /* what a message quotes from outside is escaped: it cannot act on the terminal */
        {{"--model", "m\033[2J\a\xc2\x9b.ckpt"}, "cannot open checkpoint `m\\x1b[2J\\x07\\xc2\\x9b"
                                                  ".ckpt`: No such file or directory"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *argv[8] = {S2S, "translate"};
        for (int k = 0; cases[c].argv[k]; k++)
            argv[2 + k] = cases[c].argv[k];
        ck_assert_int_eq(run_command(argv, NULL, err, NULL), 2);
        char *said = read_file(err);
        char expected[512];
        snprintf(expected, sizeof expected, "s2s: error: %s\n", cases[c].said);
        ck_assert_str_eq(said, expected);
        free(said);
    }
    /* --help documents the rule */
    const char *help[] = {S2S, "translate", "--help", NULL};
    char out[700];
    snprintf(out, sizeof out, "%s/help.txt", dir);
    ck_assert_int_eq(run_command(help, out, err, NULL), 0);
    char *text = read_file(out);
    ck_assert_ptr_nonnull(strstr(text, "An option's value is the next argument: --beam 5, not --beam=5.\n"));
    free(text);
}
END_TEST

/* --unk-replace replaces each <unk> by the source word its attention row points at
 * most (the row of that very step, </s> not a word), and nothing else changes (issue 25:
 * the test accepted any word of the source line). Checked on the alignment records of the
 * same translation, with greedy decoding, beam 5, and hypotheses cut at the length limit
 * (a model whose translate.max_output_ratio ends them early). */
START_TEST(unknown_words_are_replaced_from_the_source)
{
    char dir[512], in[700], model[700], plain[700], replaced[700], err[700];
    /* a target vocabulary of one word: most target words are <unk>, and so are outputs */
    tiny_model_run(dir, sizeof dir, "unk", (const char *[]){"data.tgt_vocab_size=5",
                                                       "training.max_steps=200", NULL});
    snprintf(in, sizeof in, "%s/valid.src", dir);
    snprintf(plain, sizeof plain, "%s/plain.jsonl", dir);
    snprintf(replaced, sizeof replaced, "%s/replaced.jsonl", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    int replacements = 0, cut = 0;
    for (int c = 0; c < 3; c++) {
        const char *beam = c == 1 ? "5" : "1";
        if (c == 2) { /* the same weights, translations cut at 0.5 x (source tokens + 1) */
            char run[600], ratio[64] = "translate.max_output_ratio=0.5";
            snprintf(run, sizeof run, "%s/run", dir);
            const char *sets[] = {"training.max_steps=200", "data.tgt_vocab_size=5", ratio,
                                  "translate.max_output_extra=0", "run_dir=", NULL};
            char set_dir[700];
            snprintf(set_dir, sizeof set_dir, "run_dir=%s/cut", dir);
            sets[4] = set_dir;
            ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
            snprintf(model, sizeof model, "%s/cut/checkpoints/last.ckpt", dir);
        } else {
            snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
        }
        const char *as_is[] = {S2S, "translate", "--model", model, "--beam", beam,
                               "--out-alignments", plain, NULL};
        const char *unk[] = {S2S, "translate", "--model", model, "--beam", beam,
                             "--out-alignments", replaced, "--unk-replace", NULL};
        ck_assert_int_eq(run_command_with(as_is, NULL, err, &(RunOptions){.in_path = in}, NULL), 0);
        ck_assert_int_eq(run_command_with(unk, NULL, err, &(RunOptions){.in_path = in}, NULL), 0);
        AlignLog a, b;
        Error e;
        ck_assert_msg(alignlog_read(&a, plain, &e) == 0, "%s", e.msg);
        ck_assert_msg(alignlog_read(&b, replaced, &e) == 0, "%s", e.msg);
        ck_assert_int_eq(a.n, b.n);
        for (int k = 0; k < a.n; k++) {
            const AlignRecord *x = &a.records[k], *y = &b.records[k];
            ck_assert_int_eq(x->n_tgt, y->n_tgt);
            cut += strcmp(x->tgt[x->n_tgt - 1], "</s>") != 0;
            for (int i = 0; i < x->n_tgt; i++) {
                ck_assert_float_eq(x->weights[i * x->n_src], y->weights[i * y->n_src]);
                if (strcmp(x->tgt[i], "<unk>")) { /* a known word stays */
                    ck_assert_str_eq(x->tgt[i], y->tgt[i]);
                    continue;
                }
                /* the replacement is a source word (not </s>) at the row's largest weight
                 * (to the 8 digits the records keep; a tie may go to either) */
                const float *row = x->weights + (size_t)i * x->n_src;
                float most = 0;
                for (int j = 0; j < x->n_src - 1; j++)
                    most = row[j] > most ? row[j] : most;
                int found = 0;
                for (int j = 0; j < x->n_src - 1; j++)
                    found |= !strcmp(y->tgt[i], x->src[j]) && row[j] >= most - 1e-7f;
                ck_assert_msg(found, "line %ld, word %d: `%s` is not where the row points most",
                              x->id, i + 1, y->tgt[i]);
                replacements++;
            }
        }
        alignlog_free(&a);
        alignlog_free(&b);
    }
    printf("--unk-replace: %d replacements checked against their rows, %d cut hypotheses\n",
           replacements, cut);
    ck_assert_int_gt(replacements, 30);
    ck_assert_int_gt(cut, 5);
}
END_TEST

START_TEST(a_file_size_limit_makes_translate_exit_3)
{
    /* SIGXFSZ at its default disposition, as a shell leaves it (no trap): s2s must not die
     * of it, but report the write error */
    char dir[512], in[700], err[700], cmd[4096], line[512];
    tiny_model_run(dir, sizeof dir, "fsize", NULL);
    snprintf(in, sizeof in, "%s/many.in", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    FILE *f = fopen(in, "w");
    ck_assert(f != NULL);
    for (int k = 0; k < 1000; k++) /* 1000 lines out: over the 512 bytes allowed */
        fputs("w1 w2 w3 w4\n", f);
    ck_assert_int_eq(fclose(f), 0);
    snprintf(cmd, sizeof cmd, "ulimit -f 1 && exec %s translate --model %s/run/checkpoints/last.ckpt "
             "< %s > %s/out.txt 2> %s", S2S, dir, in, dir, err);
    int status = system(cmd);
    ck_assert_msg(WIFEXITED(status), "killed by signal %d", WTERMSIG(status));
    ck_assert_int_eq(WEXITSTATUS(status), 3);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "s2s: error: cannot write `stdout`: File too large");
}
END_TEST

/* ---- signals ------------------------------------------------------------------------------ */

/* The full translation of dir/NAME.in, line by line, for comparing a stopped one. */
static char *first_lines(const char *text, int n)
{
    const char *end = text;
    for (int k = 0; k < n; k++)
        end = strchr(end, '\n') + 1;
    char *out = malloc((size_t)(end - text) + 1);
    memcpy(out, text, (size_t)(end - text));
    out[end - text] = '\0';
    return out;
}

/* SIGINT or SIGTERM while translate writes a line (issue 25: the last line was cut in
 * half, nothing said on stderr): the line is finished, nothing after it is written, stderr
 * says how many lines were translated, the exit is 128 + the signal. The signal lands in
 * the middle of line 37's output through the fault hook (after its words, before its
 * alignment and newline), with one best translation per line and with n-best lists
 * (whose entries of line 37 are written whole), and at line 2, an empty input line. */
START_TEST(a_signal_stops_translate_after_a_whole_line)
{
    char dir[512], in[700], out[700], err[700], model[700], env_signal[64];
    tiny_model_run(dir, sizeof dir, "trsignal", NULL);
    snprintf(in, sizeof in, "%s/many.in", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    FILE *f = fopen(in, "w");
    ck_assert(f != NULL);
    for (int k = 0; k < 100; k++) /* 100 lines, the second one empty */
        fprintf(f, "%s\n", k == 1 ? "" : (const char *[]){"w1 w2 w3", "w4 w5", "w6 w7 w8 w9"}[k % 3]);
    ck_assert_int_eq(fclose(f), 0);
    static const struct {
        const char *n_best;
        int at, sig;
    } cases[] = {{"1", 37, SIGINT}, {"3", 37, SIGTERM}, {"1", 2, SIGTERM}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *argv[] = {S2S, "translate", "--model", model, "--n-best", cases[c].n_best,
                              "--beam", "3", "--alignment", "hard", NULL};
        ck_assert_int_eq(run_command_with(argv, out, err, &(RunOptions){.in_path = in}, NULL), 0);
        char *full = read_file(out);
        snprintf(env_signal, sizeof env_signal, "S2S_FAULT_SIGNAL=translate:%d:%d", cases[c].at,
                 cases[c].sig);
        argv[0] = S2S_FAULTS;
        const char *env[] = {env_signal, NULL};
        ck_assert_int_eq(run_command_with(argv, out, err, &(RunOptions){.in_path = in, .env = env},
                                          NULL), 128 + cases[c].sig);
        char *stopped = read_file(out);
        const int per_line = atoi(cases[c].n_best);
        /* n-best: 3 entries a line; the empty line 2 has none */
        int lines = per_line == 1 ? cases[c].at : per_line * (cases[c].at - 1);
        char *expected = first_lines(full, lines);
        ck_assert_str_eq(stopped, expected);
        char said[256], *stderr_text = read_file(err);
        snprintf(said, sizeof said, "s2s: translate stopped by signal %d: %d lines of stdin "
                 "translated, the output ends with the last of them\n", cases[c].sig, cases[c].at);
        const size_t n = strlen(stderr_text), m = strlen(said);
        ck_assert_msg(n >= m && !strcmp(stderr_text + n - m, said), "stderr ends otherwise:\n%s",
                      stderr_text);
        free(stderr_text);
        free(expected);
        free(stopped);
        free(full);
    }
}
END_TEST

/* Opens the FIFO at path for writing (the child opened it for reading). */
static FILE *open_fifo(const char *path)
{
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    setvbuf(f, NULL, _IONBF, 0);
    return f;
}

/* A real signal, not a hook: SIGTERM to a translate waiting for more input stops it at
 * once (0 lines: its three are in a batch not yet full); and a SIGINT ignored when
 * translate started -- a job run with `&` from a script -- stays ignored, as POSIX has
 * it: translate goes on and answers its input. */
START_TEST(translate_stops_on_sigterm_while_reading_and_keeps_an_ignored_sigint_ignored)
{
    char dir[512], fifo[700], out[700], err[700], model[700], line[512];
    tiny_model_run(dir, sizeof dir, "trsigreal", NULL);
    snprintf(fifo, sizeof fifo, "%s/in.fifo", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    const char *argv[] = {S2S, "translate", "--model", model, NULL};
    for (int ignore = 0; ignore < 2; ignore++) {
        pid_t pid = start_command_with(argv, out, err,
                                       &(RunOptions){.in_path = fifo, .ignore_sigint = ignore});
        FILE *w = open_fifo(fifo);
        fputs("w1 w2 w3\nw4 w5\nw6\n", w);
        /* it reads the three lines and waits for more */
        ck_assert_int_eq(wait_for_stdin_read(pid, 60), 0);
        kill(pid, ignore ? SIGINT : SIGTERM);
        if (ignore) {
            struct timespec pause = {0, 300 * 1000 * 1000};
            nanosleep(&pause, NULL);
            ck_assert_int_eq(waitpid(pid, NULL, WNOHANG), 0); /* still running */
            fclose(w);
            ck_assert_int_eq(wait_command(pid, 60), 0);
            char *text = read_file(out);
            ck_assert_int_eq(count_lines(text), 3);
            free(text);
        } else {
            ck_assert_int_eq(wait_command(pid, 60), 128 + SIGTERM);
            fclose(w);
            first_line(err, line, sizeof line);
            ck_assert_str_eq(line, "s2s: translate stopped by signal 15: 0 lines of stdin "
                                   "translated, the output ends with the last of them");
            char *text = read_file(out);
            ck_assert_str_eq(text, "");
            free(text);
        }
    }
}
END_TEST

/* ---- memory ---------------------------------------------------------------------------------- */

/* Translate's memory follows its input, not translate.max_source_length (issue 25: with
 * self-attention layers a limit of 20000 asked for 266 GB before reading a word). A
 * model whose limit is 2000 translates short lines in 1 GiB of address space, where a
 * batch of 32 sentences of 2000 words would need 2 GiB for the self-attention weights
 * alone. A 1500-word line, in the first batch of 32 lines, grows the buffers, and the
 * short lines after it, there and in the next batch, translate as they do alone. A limit
 * whose one sentence could not fit in the memory there is (here 384 MiB of address
 * space) is refused when the model is loaded (exit 2, naming it), and --max-source-length
 * lowers it. (No less: OpenBLAS spins, at full load, when it cannot map its buffers.) */
START_TEST(translate_memory_follows_the_input)
{
    char dir[512], in[700], out[700], err[700], model[700], line[1024];
    tiny_model_run(dir, sizeof dir, "trmemory",
               (const char *[]){"model.self_attention_layers=2", "model.self_attention_heads=2",
                                "translate.max_source_length=2000", NULL});
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(in, sizeof in, "%s/in.txt", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    static const char *const shorts[3] = {"w1 w2 w3", "w4 w5", "w6 w7 w8"};
    const char *env[] = {"OPENBLAS_NUM_THREADS=1", NULL}; /* the limits count one thread's buffers */
    const char *argv[] = {S2S, "translate", "--model", model, NULL};
    const size_t limit = under_memory_tool() ? 0 : (size_t)1 << 30;
    /* short lines alone: 40 of them, two batches */
    FILE *f = fopen(in, "w");
    for (int k = 0; k < 40; k++)
        fprintf(f, "%s\n", shorts[k % 3]);
    fclose(f);
    ck_assert_int_eq(run_command_with(argv, out, err, &(RunOptions){.in_path = in, .env = env,
                                      .max_address_space = limit, .timeout = 60}, NULL), 0);
    char *alone = read_file(out);
    ck_assert_int_eq(count_lines(alone), 40);
    /* then with a long line as line 2 */
    f = fopen(in, "w");
    for (int k = 0; k < 41; k++) {
        if (k == 1) {
            for (int w = 0; w < 1500; w++)
                fprintf(f, "%sw%d", w ? " " : "", (w * 7) % 20);
            fputc('\n', f);
        } else {
            fprintf(f, "%s\n", shorts[(k - (k > 1)) % 3]);
        }
    }
    fclose(f);
    ck_assert_int_eq(run_command_with(argv, out, err, &(RunOptions){.in_path = in, .env = env,
                                      .max_address_space = limit, .timeout = 60}, NULL), 0);
    char *with_long = read_file(out);
    ck_assert_int_eq(count_lines(with_long), 41);
    char *second = strchr(with_long, '\n') + 1, *third = strchr(second, '\n') + 1;
    char *without = malloc(strlen(with_long) + 1);
    snprintf(without, strlen(with_long) + 1, "%.*s%s", (int)(second - with_long), with_long, third);
    ck_assert_str_eq(without, alone);
    free(without);
    free(alone);
    free(with_long);
    /* a limit one sentence cannot use here: 100000 words with self-attention layers need
     * 2 heads x 2 layers x 100001^2 weights (149 GiB) before the beam's history */
    const char *huge[] = {S2S, "translate", "--model", model, "--max-source-length", "100000", NULL};
    ck_assert_int_eq(run_command_with(huge, out, err, &(RunOptions){.in_path = in, .env = env},
                                      NULL), 2);
    first_line(err, line, sizeof line);
    const char *said = "s2s: error: --max-source-length 100000: translating one source of that "
                       "many tokens with beam 5 would need ";
    ck_assert_msg(!strncmp(line, said, strlen(said)), "%s", line);
    ck_assert_ptr_nonnull(strstr(line, " GiB of memory is all there is here; lower it"));
    /* the model's own limit, refused under an address-space limit of 384 MiB */
    if (!under_memory_tool()) {
        ck_assert_int_eq(run_command_with(argv, out, err, &(RunOptions){.in_path = in, .env = env,
                                          .max_address_space = (size_t)384 << 20,
                                          .timeout = 60}, NULL), 2);
        first_line(err, line, sizeof line);
        ck_assert_msg(strstr(line, "s2s: error: translate.max_source_length 2000: translating ") &&
                      strstr(line, " GiB of memory is all there is here; lower it with "
                                   "--max-source-length N"), "%s", line);
        /* and lowered, it translates in that space, the long line cut */
        const char *lower[] = {S2S, "translate", "--model", model, "--max-source-length", "500",
                               NULL};
        ck_assert_int_eq(run_command_with(lower, out, err, &(RunOptions){.in_path = in, .env = env,
                                          .max_address_space = (size_t)384 << 20,
                                          .timeout = 60}, NULL), 0);
        first_line(err, line, sizeof line);
        ck_assert_str_eq(line, "s2s: warning: stdin:2: more than 500 tokens, translated the "
                               "first 500 (--max-source-length)");
    }
}
END_TEST

Suite *translate_suite(void)
{
    Suite *s = suite_create("translate");
    TCase *tc = tcase_create("translate");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, nbest_lists_are_sorted_by_score);
    tcase_add_test(tc, nbest_scores_are_length_normalised_at_any_alpha);
    tcase_add_test(tc, translate_searches_as_the_checkpoint_says_unless_told);
    tcase_add_test(tc, bad_input_lines_keep_their_place);
    tcase_add_test(tc, unknown_words_are_replaced_from_the_source);
    tcase_add_test(tc, show_attention_keeps_control_characters_off_the_terminal);
    tcase_add_test(tc, options_follow_one_rule_and_say_what_is_wrong);
    tcase_add_test(tc, a_file_size_limit_makes_translate_exit_3);
    tcase_add_test(tc, a_signal_stops_translate_after_a_whole_line);
    tcase_add_test(tc, translate_stops_on_sigterm_while_reading_and_keeps_an_ignored_sigint_ignored);
    tcase_add_test(tc, translate_memory_follows_the_input);
    suite_add_tcase(s, tc);
    return s;
}
