/* test_translate.c: `s2s translate` end to end: beam 1 equals greedy, n-best lists
 * sorted by score, bad input lines keep their place, <unk> replacement, the output
 * formats, and a full stdout. That beam search's alignments equal the teacher-forced
 * ones of `s2s align` on the same output is test_variants.c's, for every variant. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alignread.h"
#include "beam.h"
#include "checkpoint.h"
#include "cli.h"
#include "suites.h"
#include "tinyrun.h"

/* Trains the tiny reversal model once per test (80 steps, a few seconds). */
static void tiny_model(char *dir, size_t cap, const char *name, const char *const *extra)
{
    scratch_dir(dir, cap, name);
    write_tiny_setup(dir);
    const char *sets[8] = {"training.max_steps=80", "training.valid_every=40", NULL};
    for (int k = 0; extra && extra[k]; k++)
        sets[2 + k] = extra[k];
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
}

static int count_lines(const char *text)
{
    int n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

START_TEST(beam_of_one_is_greedy_decoding)
{
    char dir[512];
    tiny_model(dir, sizeof dir, "beam1", NULL);
    char run[600];
    snprintf(run, sizeof run, "%s/run", dir);
    Checkpoint ck;
    load_checkpoint(&ck, run, "last.ckpt");
    /* twenty sources of the validation set */
    Batch bt;
    batch_init(&bt, 20, 8, 0);
    const int *src[20];
    int src_n[20], ids[20][7], max_out[20];
    for (int b = 0; b < 20; b++) {
        src_n[b] = 2 + b % 5;
        for (int j = 0; j < src_n[b]; j++)
            ids[b][j] = N_SPECIAL_TOKENS + (b * 7 + j * 3) % (ck.src_vocab.size - N_SPECIAL_TOKENS);
        src[b] = ids[b];
        max_out[b] = 12;
    }
    batch_fill(&bt, 20, src, src_n, NULL, NULL);
    Decoder dec;
    decoder_init(&dec, &ck.dims, 20, 8, 1);
    int out[20 * 12], out_len[20];
    decode_greedy(&dec, &ck.params, &bt, 12, out, out_len);
    NBest nb[20];
    beam_search(&dec, &ck.params, &bt, 1, 0, 1, max_out, nb);
    for (int b = 0; b < 20; b++) {
        ck_assert_int_eq(nb[b].n, 1);
        ck_assert_int_eq(nb[b].hyps[0].len, out_len[b]);
        for (int i = 0; i < out_len[b]; i++)
            ck_assert_int_eq(nb[b].hyps[0].tokens[i], out[b * 12 + i]);
        nbest_free(&nb[b]);
    }
    decoder_free(&dec);
    batch_free(&bt);
    checkpoint_free(&ck);
}
END_TEST

START_TEST(nbest_lists_are_sorted_by_score)
{
    char dir[512], src[700], out[700], err[700], model[700];
    tiny_model(dir, sizeof dir, "nbest", NULL);
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

START_TEST(bad_input_lines_keep_their_place)
{
    char dir[512], in[700], out[700], err[700], model[700], cmd[4096];
    tiny_model(dir, sizeof dir, "badlines", NULL);
    snprintf(in, sizeof in, "%s/in.txt", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    write_file(in, "w1 w2 w3\n\nbad \xc3\x28 byte\n   \nw4 w5\r\nw6");
    snprintf(cmd, sizeof cmd, "%s translate --model %s --beam 3 --alignment soft < %s > %s 2> %s",
             S2S, model, in, out, err);
    ck_assert_int_eq(system(cmd), 0);
    char *text = read_file(out);
    ck_assert_int_eq(count_lines(text), 6);
    char *lines[6], *p = text;
    for (int k = 0; k < 6; k++) {
        lines[k] = p;
        p = strchr(p, '\n');
        *p++ = '\0';
    }
    ck_assert_str_eq(lines[1], "");
    ck_assert_str_eq(lines[2], "");
    ck_assert_str_eq(lines[3], "");
    /* soft alignments: rows of weights over 4 source tokens (3 words and </s>) */
    char *rows = strstr(lines[0], " ||| ") + 5;
    for (char *row = strtok(rows, " "); row; row = strtok(NULL, " ")) {
        double sum = 0;
        int n = 0;
        for (char *w = row; w; w = strchr(w, ',') ? strchr(w, ',') + 1 : NULL, n++)
            sum += atof(w);
        ck_assert_int_eq(n, 4);
        ck_assert_double_eq_tol(sum, 1, 1e-4);
    }
    free(text);
    char *warnings = read_file(err);
    ck_assert_ptr_nonnull(strstr(warnings, "s2s: warning: stdin:2: empty line; wrote an empty line\n"));
    ck_assert_ptr_nonnull(strstr(warnings, "s2s: warning: stdin:3:5: invalid UTF-8; wrote an empty line\n"));
    ck_assert_ptr_nonnull(strstr(warnings, "s2s: warning: stdin:4: empty line; wrote an empty line\n"));
    free(warnings);
}
END_TEST

START_TEST(unknown_words_are_replaced_from_the_source)
{
    /* a target vocabulary of one word: most target words are <unk>, and so are outputs */
    char dir[512], in[700], out[700], model[700], cmd[4096];
    tiny_model(dir, sizeof dir, "unk", (const char *[]){"data.tgt_vocab_size=5",
                                                       "training.max_steps=200", NULL});
    snprintf(in, sizeof in, "%s/valid.src", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(cmd, sizeof cmd, "%s translate --model %s --beam 1 < %s > %s.plain", S2S, model, in, out);
    ck_assert_int_eq(system(cmd), 0);
    char plain_path[800];
    snprintf(plain_path, sizeof plain_path, "%s.plain", out);
    char *plain = read_file(plain_path);
    ck_assert_ptr_nonnull(strstr(plain, "<unk>"));
    free(plain);
    snprintf(cmd, sizeof cmd, "%s translate --model %s --beam 1 --unk-replace < %s > %s", S2S, model, in, out);
    ck_assert_int_eq(system(cmd), 0);
    char *text = read_file(out), *sources = read_file(in);
    ck_assert_ptr_null(strstr(text, "<unk>"));
    /* every output word is the one known target word or a word of its own source line */
    char run[600];
    snprintf(run, sizeof run, "%s/run", dir);
    Checkpoint ck;
    load_checkpoint(&ck, run, "last.ckpt");
    ck_assert_int_eq(ck.tgt_vocab.size, 5);
    char known[64];
    snprintf(known, sizeof known, "%s", vocab_word(&ck.tgt_vocab, N_SPECIAL_TOKENS));
    checkpoint_free(&ck);
    int replaced = 0;
    char *save_a, *save_b;
    for (char *line = strtok_r(text, "\n", &save_a), *srcl = strtok_r(sources, "\n", &save_b); line;
         line = strtok_r(NULL, "\n", &save_a), srcl = strtok_r(NULL, "\n", &save_b)) {
        char padded[256];
        snprintf(padded, sizeof padded, " %s ", srcl);
        for (char *save_w, *w = strtok_r(line, " ", &save_w); w; w = strtok_r(NULL, " ", &save_w)) {
            char key[64];
            snprintf(key, sizeof key, " %s ", w);
            int from_source = strstr(padded, key) != NULL;
            ck_assert_msg(from_source || !strcmp(w, known), "`%s` is neither `%s` nor from `%s`", w,
                          known, srcl);
            replaced += from_source && strcmp(w, known);
        }
    }
    ck_assert_int_gt(replaced, 10);
    free(text);
    free(sources);
}
END_TEST

START_TEST(translate_to_a_full_disk_exits_3)
{
    char dir[512], in[700], model[700], cmd[4096], err[700];
    tiny_model(dir, sizeof dir, "full", NULL);
    snprintf(in, sizeof in, "%s/valid.src", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(cmd, sizeof cmd, "%s translate --model %s < %s > /dev/full 2> %s", S2S, model, in, err);
    int status = system(cmd);
    ck_assert_int_eq(WEXITSTATUS(status), 3);
    char line[512];
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "s2s: error: cannot write `stdout`: No space left on device");
}
END_TEST

Suite *translate_suite(void)
{
    Suite *s = suite_create("translate");
    TCase *tc = tcase_create("translate");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, beam_of_one_is_greedy_decoding);
    tcase_add_test(tc, nbest_lists_are_sorted_by_score);
    tcase_add_test(tc, bad_input_lines_keep_their_place);
    tcase_add_test(tc, unknown_words_are_replaced_from_the_source);
    tcase_add_test(tc, translate_to_a_full_disk_exits_3);
    suite_add_tcase(s, tc);
    return s;
}
