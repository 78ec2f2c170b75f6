/* test_explain.c: `s2s explain` from outside: the tutorials' worked examples give their
 * published numbers (tests/fixtures/README.md), hostile words are escaped, and bad input
 * is refused with a message naming the option and its limit. That explain shows what
 * the model computes is test_variants.c's (against s2s align, every variant) and
 * tests/model/test_explain.c's (against the model's pass). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/cli.h"
#include "support/qkv_example.h"
#include "support/suites.h"
#include "support/tinyrun.h"
#include "text/json.h"

/* `s2s explain ARGS --format json` on stdin_path; its output parsed into doc. */
static void explain_json(JsonDoc *doc, const char *dir, const char *const *args, const char *stdin_path)
{
    const char *argv[24] = {S2S, "explain"};
    int n = 2;
    for (int k = 0; args[k]; k++)
        argv[n++] = args[k];
    argv[n++] = "--format";
    argv[n++] = "json";
    argv[n] = NULL;
    char out[700], err[700];
    snprintf(out, sizeof out, "%s/out.json", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    ck_assert_int_eq(run_command_with(argv, out, err, &(RunOptions){.in_path = stdin_path}, NULL), 0);
    char *text = read_file(out);
    Error e;
    ck_assert_msg(json_parse(doc, text, strlen(text), out, 1, &e) == 0, "%s", e.msg);
    free(text);
}

static const JsonValue *tensor_values(const JsonDoc *doc, const char *name)
{
    const JsonValue *tensors = json_get(doc->root, "tensors");
    for (int k = 0; k < tensors->n_items; k++)
        if (!strcmp(json_get(&tensors->items[k], "name")->string, name))
            return json_get(&tensors->items[k], "values");
    ck_abort_msg("no tensor %s", name);
    return NULL;
}

/* |got / want - 1| <= tol, and got == want exactly where want is 0 */
static void assert_relative(double got, double want, double tol)
{
    if (want == 0)
        ck_assert(got == 0);
    else
        ck_assert_msg(fabs(got / want - 1) <= tol, "got %.17g, want %.17g", got, want);
}

START_TEST(the_dot_example_gives_the_tutorials_numbers)
{
    char dir[512];
    scratch_dir(dir, sizeof dir, "explain-dot");
    JsonDoc doc;
    const char *args[] = {"--example", "dot", NULL};
    explain_json(&doc, dir, args, NULL);
    const JsonValue *e = tensor_values(&doc, "scores"), *alpha = tensor_values(&doc, "alpha");
    const JsonValue *c = tensor_values(&doc, "context");
    const double scores[4] = {927, 397, 148, 929};
    /* tests/fixtures/README.md, example 2 (the context to 26 digits, by decimal arithmetic) */
    const double weights[4] = {0.11920292202211755, 7.947151507960154e-232, 0, 0.8807970779778823};
    const double context[3] = {3.8807970779778824440597291, 4.0728262981990580034624377,
                               45.264239123393364733217919};
    ck_assert_int_eq(e->n_items, 4);
    for (int j = 0; j < 4; j++) {
        ck_assert(e->items[j].number == scores[j]); /* "Result: 927" */
        assert_relative(alpha->items[j].number, weights[j], j == 1 ? 1e-13 : 1e-15);
    }
    for (int u = 0; u < 3; u++)
        assert_relative(c->items[u].number, context[u], 1e-15);
    json_free(&doc);
}
END_TEST

START_TEST(the_qkv_example_gives_the_tutorials_numbers)
{
    char dir[512];
    scratch_dir(dir, sizeof dir, "explain-qkv");
    for (int name = 0; name < 2; name++) { /* "general" is the tutorial's name for it */
        JsonDoc doc;
        const char *args[] = {"--example", name ? "general" : "qkv", NULL};
        explain_json(&doc, dir, args, NULL);
        const JsonValue *w = tensor_values(&doc, "W_K"), *alpha = tensor_values(&doc, "alpha");
        const JsonValue *z = tensor_values(&doc, "context");
        for (int r = 0; r < 9; r++)
            ck_assert(w->items[r].number == QKV_W[1][r / 3][r % 3]);
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < 4; j++)
                assert_relative(alpha->items[i * 4 + j].number, QKV_WEIGHTS[i][j], 1e-15);
            for (int u = 0; u < 3; u++)
                assert_relative(z->items[i * 3 + u].number, QKV_ATTENTION[i][u], 1e-15);
        }
        json_free(&doc);
    }
}
END_TEST

/* A tiny trained model, trained once for the tests below (dir/run). */
static char model_dir[512], model_path[700];

static void tiny_model(void)
{
    if (model_path[0])
        return;
    scratch_dir(model_dir, sizeof model_dir, "explain-model");
    write_tiny_setup(model_dir);
    const char *sets[] = {"training.max_steps=20", "training.valid_every=20", NULL};
    ck_assert_int_eq(train(S2S, model_dir, sets, NULL, NULL), 0);
    snprintf(model_path, sizeof model_path, "%s/run/checkpoints/last.ckpt", model_dir);
}

/* A tiny model with one self-attention layer of 2 heads (dir/run of its own). */
static char sa_dir[512], sa_model[700];

static void tiny_self_attention_model(void)
{
    scratch_dir(sa_dir, sizeof sa_dir, "explain-sa-model");
    write_tiny_setup(sa_dir);
    const char *sets[] = {"training.max_steps=5", "training.valid_every=5",
                          "model.self_attention_layers=1", "model.self_attention_heads=2", NULL};
    ck_assert_int_eq(train(S2S, sa_dir, sets, NULL, NULL), 0);
    snprintf(sa_model, sizeof sa_model, "%s/run/checkpoints/last.ckpt", sa_dir);
}

/* Runs explain with args on the given stdin text; returns the exit code and the first
 * line of stderr (or of stdout, with from_stdout). */
static int explain_says(const char *input, const char *const *args, char *line, size_t cap,
                        int from_stdout)
{
    tiny_model();
    char in[700], out[700], err[700];
    snprintf(in, sizeof in, "%s/in.txt", model_dir);
    snprintf(out, sizeof out, "%s/out.txt", model_dir);
    snprintf(err, sizeof err, "%s/err.txt", model_dir);
    write_file(in, input);
    const char *argv[24] = {S2S, "explain", "--model", model_path};
    int n = 4;
    for (int k = 0; args[k]; k++)
        argv[n++] = args[k];
    argv[n] = NULL;
    int rc = run_command_with(argv, out, err, &(RunOptions){.in_path = in}, NULL);
    first_line(from_stdout ? out : err, line, cap);
    return rc;
}

START_TEST(bad_input_is_refused_naming_the_option_and_its_limit)
{
    char line[1024], want[1024];
    const char *past_end[] = {"--tgt", "w3 w2", "--step", "4", NULL};
    ck_assert_int_eq(explain_says("w2 w3\n", past_end, line, sizeof line, 0), 2);
    ck_assert_str_eq(line, "s2s: error: --step 4: the target has 2 words, so its steps run "
                           "from 1 to 3 (the last emits </s>)");
    const char *last[] = {"--tgt", "w3 w2", "--step", "3", NULL};
    ck_assert_int_eq(explain_says("w2 w3\n", last, line, sizeof line, 1), 0);
    ck_assert_str_eq(line, "source: w2 w3 </s>");
    const char *head[] = {"--head", "2", NULL};
    ck_assert_int_eq(explain_says("w2 w3\n", head, line, sizeof line, 0), 2);
    ck_assert_str_eq(line, "s2s: error: --head 2: the model has 1 head (model.attention_heads)");
    const char *none[] = {NULL};
    ck_assert_int_eq(explain_says("\n", none, line, sizeof line, 0), 2);
    ck_assert_str_eq(line, "s2s: error: stdin:1: empty sentence (expected at least one word)");
    ck_assert_int_eq(explain_says("", none, line, sizeof line, 0), 2);
    ck_assert_str_eq(line, "s2s: error: stdin: no source sentence (expected one line of text)");
    ck_assert_int_eq(explain_says("w2 \xff w3\n", none, line, sizeof line, 0), 2);
    ck_assert_str_eq(line, "s2s: error: stdin:1:4: invalid UTF-8 (expected UTF-8 text)");
    const char *bad_tgt[] = {"--tgt", "w1 \xc3", NULL};
    ck_assert_int_eq(explain_says("w2\n", bad_tgt, line, sizeof line, 0), 2);
    ck_assert_str_eq(line, "s2s: error: --tgt:4: invalid UTF-8 (expected UTF-8 text)");
    /* lengths: the model's translate.max_source_length (250), and what a translation of
     * the source may have (the tiny config's ratio and extra) */
    char *long_line = malloc(3 * 251 + 2);
    for (int k = 0; k < 251; k++)
        memcpy(long_line + 3 * k, "w2 ", 3);
    strcpy(long_line + 3 * 251, "\n");
    ck_assert_int_eq(explain_says(long_line, none, line, sizeof line, 0), 2);
    ck_assert_str_eq(line, "s2s: error: stdin:1: 251 words, more than translate.max_source_length (250)");
    free(long_line);
    const char *long_tgt[] = {"--tgt", "w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 "
                                       "w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1", NULL};
    ck_assert_int_eq(explain_says("w2\n", long_tgt, line, sizeof line, 0), 2);
    ck_assert_ptr_nonnull(strstr(line, "s2s: error: --tgt: 40 words, more than a translation of "
                                       "this source may have ("));
    const char *step0[] = {"--step", "0", NULL};
    ck_assert_int_eq(explain_says("w2\n", step0, line, sizeof line, 0), 2);
    ck_assert_str_eq(line, "s2s: error: --step: expected a target position from 1, got `0`");
    snprintf(want, sizeof want, "s2s: error: explain: --example needs no --model (it explains "
             "the tutorials' numbers, not a model)");
    const char *both[] = {"--example", "dot", NULL};
    ck_assert_int_eq(explain_says("w2\n", both, line, sizeof line, 0), 2);
    ck_assert_str_eq(line, want);
    /* --self: a model without self-attention layers, a layer past the limit */
    const char *no_self[] = {"--self", "1", NULL};
    ck_assert_int_eq(explain_says("w2 w3\n", no_self, line, sizeof line, 0), 2);
    ck_assert_str_eq(line, "s2s: error: --self 1: the model has no self-attention layers "
                           "(model.self_attention_layers: 0)");
    const char *seven[] = {"--self", "7", NULL};
    ck_assert_int_eq(explain_says("w2 w3\n", seven, line, sizeof line, 0), 2);
    ck_assert_str_eq(line, "s2s: error: --self: expected a self-attention layer from 1 to 6, got `7`");
    /* and on a model with one layer of 2 heads: a layer, a head and a position it lacks */
    tiny_self_attention_model();
    char in[700], err[700];
    snprintf(in, sizeof in, "%s/in.txt", sa_dir);
    snprintf(err, sizeof err, "%s/err.txt", sa_dir);
    write_file(in, "w2 w3\n");
    static const char *const lacks[][5] = {
        {"--self", "2", "--step", "1", "s2s: error: --self 2: the model has 1 self-attention layer "
                                      "(model.self_attention_layers)"},
        {"--self", "1", "--head", "3", "s2s: error: --head 3: the self-attention layers have 2 heads "
                                      "(model.self_attention_heads)"},
        {"--self", "1", "--step", "4", "s2s: error: --step 4: the source has 2 words, so --self "
                                      "positions run from 1 to 3 (the last is </s>)"},
    };
    for (size_t k = 0; k < sizeof lacks / sizeof *lacks; k++) {
        const char *argv[] = {S2S, "explain", "--model", sa_model, lacks[k][0], lacks[k][1],
                              lacks[k][2], lacks[k][3], NULL};
        ck_assert_int_eq(run_command_with(argv, NULL, err, &(RunOptions){.in_path = in}, NULL), 2);
        first_line(err, line, sizeof line);
        ck_assert_str_eq(line, lacks[k][4]);
    }
    const char *last_position[] = {S2S, "explain", "--model", sa_model, "--self", "1", "--step",
                                   "3", "--head", "2", NULL};
    ck_assert_int_eq(run_command_with(last_position, NULL, err, &(RunOptions){.in_path = in}, NULL), 0);
    /* --tgt says what the decoder is given; the encoder's layers have no use for it */
    const char *self_tgt[] = {"--self", "1", "--tgt", "w1", NULL};
    ck_assert_int_eq(explain_says("w2\n", self_tgt, line, sizeof line, 0), 2);
    ck_assert_str_eq(line, "s2s: error: explain: --tgt has no use with --self (the encoder's "
                           "layers read the source alone)");
    const char *which[] = {"--example", "cosine", NULL};
    ck_assert_int_eq(explain_says("w2\n", which, line, sizeof line, 0), 2);
    ck_assert_str_eq(line, "s2s: error: --example: expected dot, general or qkv, got `cosine`");
}
END_TEST

/* A word that would move a terminal's cursor is drawn as U+FFFD there, and JSON
 * escapes it. */
START_TEST(hostile_words_are_escaped)
{
    char line[1024];
    const char *text[] = {NULL};
    ck_assert_int_eq(explain_says("w2 \x1b[2J w3\n", text, line, sizeof line, 1), 0);
    ck_assert_str_eq(line, "source: w2 <unk>(\xef\xbf\xbd[2J) w3 </s>");
    char out[700];
    snprintf(out, sizeof out, "%s/out.txt", model_dir);
    char *all = read_file(out);
    ck_assert_ptr_null(strchr(all, '\x1b'));
    free(all);
    /* a word too long for its column is cut where the cut is seen */
    ck_assert_int_eq(explain_says("w2 abcdefghijklmno w3\n", text, line, sizeof line, 1), 0);
    all = read_file(out);
    ck_assert_ptr_nonnull(strstr(all, "         w2 <unk>(abc\xe2\x80\xa6         w3       </s>\n"));
    free(all);
    const char *json[] = {"--format", "json", NULL};
    ck_assert_int_eq(explain_says("w2 \x1b[2J <b>\n", json, line, sizeof line, 1), 0);
    ck_assert_ptr_nonnull(strstr(line, "\"src\":[\"w2\",\"\\u001b[2J\",\"<b>\",\"</s>\"]"));
}
END_TEST

/* A word the vocabulary lacks is shown as what the model reads, <unk>, with the word
 * typed beside it, wherever it appears; JSON keeps the words as typed and lists where
 * the model reads <unk>. */
START_TEST(unknown_words_are_shown_as_the_model_reads_them)
{
    char line[1024], out[700];
    const char *tgt[] = {"--tgt", "w3 nowhere", "--step", "3", NULL};
    ck_assert_int_eq(explain_says("w2 zorglub w3\n", tgt, line, sizeof line, 1), 0);
    ck_assert_str_eq(line, "source: w2 <unk>(zorglub) w3 </s>");
    snprintf(out, sizeof out, "%s/out.txt", model_dir);
    char *all = read_file(out);
    ck_assert_ptr_nonnull(strstr(all, "\nstep 3 of the target, the decoder emitting </s> after w3 "
                                      "<unk>(nowhere)\n"));
    ck_assert_ptr_nonnull(strstr(all, "\n    <unk>(zorglub) "));
    free(all);
    const char *json[] = {"--tgt", "w3 nowhere", "--step", "3", "--format", "json", NULL};
    ck_assert_int_eq(explain_says("w2 zorglub w3\n", json, line, sizeof line, 1), 0);
    ck_assert_ptr_nonnull(strstr(line, "{\"src\":[\"w2\",\"zorglub\",\"w3\",\"</s>\"],"
                                       "\"src_unk\":[1],\"tgt\":[\"w3\",\"nowhere\",\"</s>\"],"
                                       "\"tgt_unk\":[1],"));
    const char *known[] = {"--format", "json", NULL};
    ck_assert_int_eq(explain_says("w2 w3\n", known, line, sizeof line, 1), 0);
    ck_assert_ptr_nonnull(strstr(line, "\"src_unk\":[],"));
}
END_TEST

/* The page opens in headless Chromium with its script run and every tensor drawn, one
 * cell per shown value, and a hostile word is text there, not markup. */
START_TEST(the_html_page_draws_every_tensor_in_chromium)
{
    char line[1024], page[700];
    const char *args[] = {"--format", "html", "--max-cols", "3", NULL};
    ck_assert_int_eq(explain_says("w2 <script>alert(1)</script> w3\n", args, line, sizeof line, 1), 0);
    ck_assert_str_eq(line, "<!DOCTYPE html>");
    snprintf(page, sizeof page, "%s/page.html", model_dir);
    char out[700];
    snprintf(out, sizeof out, "%s/out.txt", model_dir);
    char *html = read_file(out);
    write_file(page, html);
    /* the tiny model's additive step: H, s_{i-1}, W_a s, U_a h + b_a, sum, tanh, scores,
     * alpha, alpha h, context */
    ck_assert_int_eq(count_of(html, "<svg class=\"heatmap\""), 10);
    ck_assert_ptr_null(strstr(html, "<script>alert"));
    /* as the tokenizer split it, each piece unknown to the model */
    ck_assert_ptr_nonnull(strstr(html, "&lt;unk&gt;(&lt;script&gt;alert) &lt;unk&gt;(() "));
    free(html);
    char *dom = chromium_dom(page, model_dir);
    ck_assert_msg(strstr(dom, "data-tensors=\"10\"") != NULL, "Chromium did not run the page's script");
    ck_assert_int_eq(count_of(dom, "<svg class=\"heatmap\""), 10);
    /* the source of 5 positions (with </s>: w2, the markup's tokens, w3) in H's rows */
    ck_assert_ptr_nonnull(strstr(dom, "</h1>"));
    free(dom);
}
END_TEST

Suite *explain_cli_suite(void)
{
    Suite *s = suite_create("explain_cli");
    TCase *tc = tcase_create("explain_cli");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, the_dot_example_gives_the_tutorials_numbers);
    tcase_add_test(tc, the_qkv_example_gives_the_tutorials_numbers);
    tcase_add_test(tc, bad_input_is_refused_naming_the_option_and_its_limit);
    tcase_add_test(tc, hostile_words_are_escaped);
    tcase_add_test(tc, unknown_words_are_shown_as_the_model_reads_them);
    tcase_add_test(tc, the_html_page_draws_every_tensor_in_chromium);
    suite_add_tcase(s, tc);
    return s;
}
