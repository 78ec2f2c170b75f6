/* test_align.c: alignment error rate on hand-computed cases (possible links included),
 * Pharaoh parsing, hard links from attention, the alignments.jsonl writer and reader,
 * and the heatmaps (SVG checked by xmllint); control characters of tokens never reach
 * a terminal; `s2s heatmap` reads its inputs in bounded memory (/dev/zero, an 80 MB
 * line, a file-size limit), and its options follow the one rule of command.h. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "report/alignlog.h"
#include "report/heatmap.h"
#include "report/links.h"
#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"
#include "text/termtext.h"
#include "text/textfile.h"

static int parse(const char *line, Link *links)
{
    int bad;
    int n = pharaoh_parse(line, links, 64, &bad);
    ck_assert_int_ge(n, 0);
    return n;
}

START_TEST(aer_matches_hand_computed_cases)
{
    Link a[64], g[64];
    struct {
        const char *hyp, *gold;
        double aer, precision, recall;
    } cases[] = {
        /* perfect */
        {"0-0 1-1", "0-0 1-1", 0, 1, 1},
        /* a possible link counts for precision, not for recall: 1 - (1 + 2) / (2 + 1) */
        {"0-0 1-2", "0-0 1?2", 0, 1, 1},
        /* |A&S| = 1, |A&P| = 2, |A| = 2, |S| = 2: 1 - 3/4 */
        {"0-0 2-2", "0-0 1-1 2?2", 0.25, 1, 0.5},
        /* nothing proposed: 1 - 0 / (0 + 1) */
        {"", "0-0", 1, 0, 0},
        /* a wrong link and a right one: |A&S| = |A&P| = 1, |A| = 2, |S| = 1: 1 - 2/3 */
        {"0-0 3-1", "0-0", 1.0 / 3, 0.5, 1},
        /* a repeated link counts once */
        {"0-0 0-0", "0-0", 0, 1, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        AerCounts c = {0};
        int na = parse(cases[k].hyp, a), ng = parse(cases[k].gold, g);
        aer_add(&c, a, na, g, ng);
        ck_assert_double_eq_tol(aer_rate(&c), cases[k].aer, 1e-12);
        ck_assert_double_eq_tol(aer_precision(&c), cases[k].precision, 1e-12);
        ck_assert_double_eq_tol(aer_recall(&c), cases[k].recall, 1e-12);
    }
    /* over a corpus the counts add up before the ratio */
    AerCounts c = {0};
    int na = parse("0-0 1-1", a), ng = parse("0-0 1-1", g);
    aer_add(&c, a, na, g, ng);
    na = parse("0-1", a);
    ng = parse("0-0", g);
    aer_add(&c, a, na, g, ng);
    ck_assert_double_eq_tol(aer_rate(&c), 1 - 4.0 / 6, 1e-12);
}
END_TEST

START_TEST(pharaoh_parser_refuses_malformed_links)
{
    Link l[8];
    int bad;
    ck_assert_int_eq(pharaoh_parse("  3-4\t5?6 ", l, 8, &bad), 2);
    ck_assert(l[0].j == 3 && l[0].i == 4 && !l[0].possible && l[1].possible);
    const char *wrong[] = {"3", "3-", "-4", "3-4x", "a-b", "3:4", "1-2 3"};
    for (size_t k = 0; k < sizeof wrong / sizeof *wrong; k++)
        ck_assert_int_eq(pharaoh_parse(wrong[k], l, 8, &bad), -1);
    ck_assert_int_eq(pharaoh_parse("1-2 3-4x", l, 8, &bad), -1);
    ck_assert_int_eq(bad, 6);
}
END_TEST

START_TEST(hard_links_skip_the_end_of_sentence)
{
    /* 3 target rows (the last is </s>), 4 source columns (the last is </s>) */
    const float w[3 * 4] = {0.1f, 0.7f, 0.1f, 0.1f,   /* -> source 1 */
                            0.1f, 0.1f, 0.2f, 0.6f,   /* -> </s>: no link */
                            0.9f, 0.0f, 0.0f, 0.1f};  /* the </s> row: no link */
    AttnMatrix m = {w, 3, 4, 4, 1, 0};
    Link l[16];
    ck_assert_int_eq(align_hard_links(&m, 0, l, 16), 1);
    ck_assert(l[0].j == 1 && l[0].i == 0);
    ck_assert_int_eq(align_hard_links(&m, 0.15f, l, 16), 2); /* 0-1 (0.7), 1-2 (0.2) */
    ck_assert(l[0].j == 1 && l[0].i == 0 && l[1].j == 2 && l[1].i == 1);
    /* entropy of rows: 3 rows */
    double h = 0;
    for (int k = 0; k < 12; k++)
        h -= w[k] > 0 ? w[k] * log(w[k]) : 0;
    ck_assert_double_eq_tol(align_entropy_sum(&m), h, 1e-6);
    /* an image's grid: the last column is a cell like the others, and links to it count */
    m.grid = 1;
    ck_assert_int_eq(align_hard_links(&m, 0, l, 16), 2);
    ck_assert(l[1].j == 3 && l[1].i == 1);
    ck_assert_int_eq(align_hard_links(&m, 0.15f, l, 16), 3); /* and 1-3 (0.6) */
    ck_assert(l[2].j == 3 && l[2].i == 1);
}
END_TEST

START_TEST(alignments_jsonl_round_trips_and_rows_sum_to_one)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "jsonl");
    snprintf(path, sizeof path, "%s/a.jsonl", dir);
    FILE *f = fopen(path, "w");
    /* weights of a softmax in float, in a (T, S, B) layout with B = 2, sentence 1 */
    float w[3 * 4 * 2];
    for (int i = 0; i < 3; i++) {
        float sum = 0;
        for (int j = 0; j < 4; j++)
            sum += w[(i * 4 + j) * 2 + 1] = expf((float)(i * j) / 3.0f);
        for (int j = 0; j < 4; j++)
            w[(i * 4 + j) * 2 + 1] /= sum;
    }
    AttnMatrix m = {w + 1, 3, 4, 8, 2, 0};
    const char *src[] = {"le", "\"quoted\"", "a\\b", "</s>"}, *tgt[] = {"x", "é", "</s>"};
    ck_assert_int_eq(align_write_json(f, 7, 1.5, 42, src, tgt, &m, NULL), 0);
    ck_assert_int_eq(align_write_json(f, 9, 2.0, 42, src, tgt, &m, NULL), 0);
    fclose(f);
    AlignLog log;
    Error err;
    ck_assert_msg(alignlog_read(&log, path, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(log.n, 2);
    const AlignRecord *r = &log.records[1];
    ck_assert_int_eq(r->step, 9);
    ck_assert_int_eq(r->id, 42);
    ck_assert_str_eq(r->src[1], "\"quoted\"");
    ck_assert_str_eq(r->src[2], "a\\b");
    ck_assert_str_eq(r->tgt[1], "é");
    for (int i = 0; i < 3; i++) {
        double sum = 0;
        for (int j = 0; j < 4; j++) {
            sum += r->weights[i * 4 + j];
            ck_assert_float_eq(r->weights[i * 4 + j], attn_at(&m, i, j));
        }
        ck_assert_double_eq_tol(sum, 1, 1e-5);
    }
    alignlog_free(&log);
}
END_TEST

/* A multi-head model's record keeps each head and each self-attention layer: they read
 * back as written, and alignrecord_select puts the one asked for where heatmaps look. */
START_TEST(alignments_jsonl_keeps_heads_and_self_attention)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "jsonl-heads");
    snprintf(path, sizeof path, "%s/a.jsonl", dir);
    /* two heads of 2 x 3 and their mean; one self-attention layer of 3 x 3 */
    const float h[2][2][3] = {{{0.5f, 0.25f, 0.25f}, {1, 0, 0}}, {{0.125f, 0.375f, 0.5f}, {0, 0, 1}}};
    float mean[2][3];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            mean[i][j] = (h[0][i][j] + h[1][i][j]) / 2;
    const float self[3][3] = {{0.75f, 0.25f, 0}, {0, 1, 0}, {0.5f, 0, 0.5f}};
    AttnMatrix m = {&mean[0][0], 2, 3, 3, 1, 0};
    AttnMatrix heads[2] = {{&h[0][0][0], 2, 3, 3, 1, 0}, {&h[1][0][0], 2, 3, 3, 1, 0}};
    AttnMatrix layers[1] = {{&self[0][0], 3, 3, 3, 1, 0}};
    /* and the positions each head chose, as a hard-attention pass writes them */
    const int chosen[2][2] = {{0, 2}, {1, 2}};
    AlignExtras extra = {.heads = heads, .n_heads = 2, .self = layers, .n_self = 1,
                         .chosen = &chosen[0][0], .n_chosen = 2, .chosen_stride = 2};
    const char *src[] = {"a", "b", "</s>"}, *tgt[] = {"x", "</s>"};
    FILE *f = fopen(path, "w");
    ck_assert_int_eq(align_write_json(f, 3, -1, 5, src, tgt, &m, &extra), 0);
    fclose(f);
    AlignLog log;
    Error err;
    ck_assert_msg(alignlog_read(&log, path, &err) == 0, "%s", err.msg);
    AlignRecord *r = &log.records[0];
    ck_assert_int_eq(r->n_heads, 2);
    ck_assert_int_eq(r->n_self, 1);
    ck_assert_int_eq(r->n_chosen, 2);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++)
            ck_assert_int_eq(r->chosen[i * 2 + k], chosen[i][k]);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                ck_assert_float_eq(r->heads[(k * 2 + i) * 3 + j], h[k][i][j]);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            ck_assert_float_eq(r->self[i * 3 + j], self[i][j]);
    ck_assert_int_eq(alignrecord_select(r, 3, 0, 0, 0), -1);
    ck_assert_int_eq(alignrecord_select(r, 0, 2, 0, 0), -1);
    ck_assert_int_eq(alignrecord_select(r, 2, 0, 0, 0), 0);
    ck_assert_str_eq(r->view, "head 2");
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            ck_assert_float_eq(r->weights[i * 3 + j], h[1][i][j]);
    ck_assert_int_eq(alignrecord_select(r, 0, 1, 0, 0), 0);
    ck_assert_str_eq(r->view, "self-attention layer 1");
    ck_assert_int_eq(r->n_tgt, 3);
    ck_assert_str_eq(r->tgt[1], "b");
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            ck_assert_float_eq(r->weights[i * 3 + j], self[i][j]);
    alignlog_free(&log);
    /* a one-head record has no "heads"; its head 1 is the alignment */
    f = fopen(path, "w");
    ck_assert_int_eq(align_write_json(f, 3, -1, 5, src, tgt, &m, NULL), 0);
    fclose(f);
    char *text = read_file(path);
    ck_assert_ptr_null(strstr(text, "\"heads\""));
    ck_assert_ptr_null(strstr(text, "\"self\""));
    free(text);
    ck_assert_msg(alignlog_read(&log, path, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(alignrecord_select(&log.records[0], 1, 0, 0, 0), 0);
    ck_assert_float_eq(log.records[0].weights[1], mean[0][1]);
    ck_assert_int_eq(alignrecord_select(&log.records[0], 2, 0, 0, 0), -1);
    alignlog_free(&log);
}
END_TEST

static const char *read_error(const char *text)
{
    static Error err;
    AlignLog log;
    err.msg[0] = '\0';
    alignlog_parse(&log, text, strlen(text), "a.jsonl", &err);
    alignlog_free(&log);
    return err.msg;
}

/* A Transformer decoder's record: each layer's heads ("layers", "layer_heads") and masked
 * self-attention ("dec_self") read back exactly, and alignrecord_select draws a layer's
 * heads' mean, one of its heads, or a layer's self-attention with its columns the
 * positions read (<s> and the words before); a malformed "layers" is refused. */
START_TEST(alignments_jsonl_keeps_a_transformer_decoders_layers)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "layers");
    snprintf(path, sizeof path, "%s/a.jsonl", dir);
    /* 2 layers of 2 heads, over 2 target and 3 source tokens */
    const float L[2][2][2][3] = {{{{0.5f, 0.5f, 0}, {0, 0, 1}}, {{1, 0, 0}, {0.25f, 0.75f, 0}}},
                                 {{{0, 1, 0}, {0.5f, 0, 0.5f}}, {{0, 0.5f, 0.5f}, {1, 0, 0}}}};
    const float D[2][2][2] = {{{1, 0}, {0.25f, 0.75f}}, {{1, 0}, {0.5f, 0.5f}}};
    AttnMatrix layers[4], dec_self[2];
    for (int m = 0; m < 4; m++)
        layers[m] = (AttnMatrix){&L[m / 2][m % 2][0][0], 2, 3, 3, 1, 0};
    for (int l = 0; l < 2; l++)
        dec_self[l] = (AttnMatrix){&D[l][0][0], 2, 2, 2, 1, 0};
    float mean[2][3];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            mean[i][j] = (L[1][0][i][j] + L[1][1][i][j]) / 2;
    AttnMatrix m = {&mean[0][0], 2, 3, 3, 1, 0};
    AlignExtras extra = {.layers = layers, .n_layers = 2, .layer_heads = 2, .dec_self = dec_self,
                         .n_dec_self = 2};
    const char *src[] = {"a", "b", "</s>"}, *tgt[] = {"x", "</s>"};
    FILE *f = fopen(path, "w");
    ck_assert_int_eq(align_write_json(f, 3, -1, 5, src, tgt, &m, &extra), 0);
    fclose(f);
    AlignLog log;
    Error err;
    ck_assert_msg(alignlog_read(&log, path, &err) == 0, "%s", err.msg);
    AlignRecord *r = &log.records[0];
    ck_assert_int_eq(r->n_layers, 2);
    ck_assert_int_eq(r->layer_heads, 2);
    ck_assert_int_eq(r->n_dec_self, 2);
    for (int e = 0; e < 24; e++)
        ck_assert_float_eq(r->layers[e], (&L[0][0][0][0])[e]);
    for (int e = 0; e < 8; e++)
        ck_assert_float_eq(r->dec_self[e], (&D[0][0][0])[e]);
    ck_assert_int_eq(alignrecord_select(r, 0, 0, 3, 0), -1);
    ck_assert_int_eq(alignrecord_select(r, 3, 0, 1, 0), -1);
    ck_assert_int_eq(alignrecord_select(r, 2, 0, 0, 1), -1); /* a self-attention has no heads */
    ck_assert_int_eq(alignrecord_select(r, 0, 0, 1, 0), 0);
    ck_assert_str_eq(r->view, "decoder layer 1");
    for (int e = 0; e < 6; e++)
        ck_assert_float_eq(r->weights[e], ((&L[0][0][0][0])[e] + (&L[0][1][0][0])[e]) / 2);
    ck_assert_int_eq(alignrecord_select(r, 2, 0, 2, 0), 0);
    ck_assert_str_eq(r->view, "decoder layer 2, head 2");
    for (int e = 0; e < 6; e++)
        ck_assert_float_eq(r->weights[e], (&L[1][1][0][0])[e]);
    ck_assert_int_eq(alignrecord_select(r, 0, 0, 0, 2), 0);
    ck_assert_str_eq(r->view, "decoder self-attention layer 2");
    ck_assert_int_eq(r->n_src, 2);
    ck_assert_str_eq(r->src[0], "<s>");
    ck_assert_str_eq(r->src[1], "x");
    for (int e = 0; e < 4; e++)
        ck_assert_float_eq(r->weights[e], (&D[1][0][0])[e]);
    alignlog_free(&log);
    /* layers that are not layer_heads a layer, or without layer_heads */
    const char *base = "{\"step\":1,\"id\":3,\"src\":[\"a\"],\"tgt\":[\"b\"],\"weights\":[[1]],";
    char text[512];
    snprintf(text, sizeof text, "%s\"layer_heads\":2,\"layers\":[[[1]],[[1]],[[1]]]}", base);
    ck_assert_str_eq(read_error(text), "a.jsonl:1:1: \"layers\": 3 matrices are not "
                     "\"layer_heads\" (2) for each layer");
    snprintf(text, sizeof text, "%s\"layers\":[[[1]]]}", base);
    ck_assert_str_eq(read_error(text), "a.jsonl:1:1: \"layers\": 1 matrices are not "
                     "\"layer_heads\" (1) for each layer");
    snprintf(text, sizeof text, "%s\"layer_heads\":0,\"layers\":[[[1]]]}", base);
    ck_assert_str_eq(read_error(text), "a.jsonl:1:1: expected \"layer_heads\": a whole number >= 1");
    snprintf(text, sizeof text, "%s\"dec_self\":[[[0.5,0.5]]]}", base);
    ck_assert_str_eq(read_error(text), "a.jsonl:1:1: dec_self 1 row 1: expected 1 number, one per "
                     "target position");
}
END_TEST

START_TEST(alignments_reader_names_line_and_column)
{
    const char *ok = "{\"step\":1,\"epoch\":0,\"id\":3,\"src\":[\"a\",\"</s>\"],\"tgt\":[\"</s>\"],\"weights\":[[0.5,0.5]]}\n";
    ck_assert_str_eq(read_error(ok), "");
    char two[512];
    snprintf(two, sizeof two, "%s\n{\"step\":1,", ok);
    ck_assert_str_eq(read_error(two), "a.jsonl:3:11: expected a string key");
    ck_assert_str_eq(read_error("{\"step\":1 \"id\":2}"), "a.jsonl:1:11: expected ',' or '}'");
    ck_assert_str_eq(read_error("{\"step\":1,\"id\":3,\"src\":[\"a\"],\"tgt\":[\"b\"],\"weights\":[[0.5,0.5]]}"),
                     "a.jsonl:1:1: weights row 1: expected 1 number, one per source token");
    ck_assert_str_eq(read_error("{\"step\":1,\"id\":3,\"src\":[\"a\"],\"tgt\":[\"b\"],\"weights\":[[1.5]]}"),
                     "a.jsonl:1:1: weights row 1, column 1: expected a number from 0 to 1");
    ck_assert_str_eq(read_error("{\"step\":1.5,\"id\":3}"), "a.jsonl:1:1: expected \"step\": a whole "
                     "number >= 0 (the training step), got 1.5");
    /* ids name the SVG files (heatmap-ID-STEP.svg): no `heatmap--5-1.svg` */
    ck_assert_str_eq(read_error("{\"step\":1,\"id\":-5,\"src\":[\"a\"],\"tgt\":[\"b\"],\"weights\":[[1]]}"),
                     "a.jsonl:1:1: expected \"id\": a whole number >= 1 (the sentence's line in its "
                     "file), got -5");
    ck_assert_str_eq(read_error("{\"step\":1,\"id\":0}"), "a.jsonl:1:1: expected \"id\": a whole number "
                     ">= 1 (the sentence's line in its file), got 0");
    ck_assert_str_eq(read_error("{\"step\":1,\"id\":2.5}"), "a.jsonl:1:1: expected \"id\": a whole "
                     "number >= 1 (the sentence's line in its file), got 2.5");
    ck_assert_str_eq(read_error("{\"step\":-1,\"id\":2}"), "a.jsonl:1:1: expected \"step\": a whole "
                     "number >= 0 (the training step), got -1");
    ck_assert_str_eq(read_error("{\"step\":1,\"id\":\"2\"}"), "a.jsonl:1:1: expected \"id\": a whole "
                     "number >= 1 (the sentence's line in its file), got a string");
    /* a number too small for a double is the nearest one (a subnormal, or 0): only
     * overflow is out of range */
    ck_assert_str_eq(read_error("{\"step\":1,\"id\":2,\"src\":[\"a\",\"b\"],\"tgt\":[\"x\"],"
                                "\"weights\":[[1e-320,1]]}"), "");
    ck_assert_str_eq(read_error("{\"step\":1,\"id\":2,\"src\":[\"a\"],\"tgt\":[\"x\"],"
                                "\"weights\":[[1e-400]]}"), "");
    ck_assert_str_eq(read_error("{\"step\":1,\"id\":2,\"src\":[\"a\"],\"tgt\":[\"x\"],"
                                "\"weights\":[[1e400]]}"), "a.jsonl:1:54: number out of range");
    ck_assert_str_eq(read_error("[1, 2"), "a.jsonl:1:6: expected ',' or ']'");
    ck_assert_str_eq(read_error("{\"step\":01}"), "a.jsonl:1:9: leading zero in a number");
    ck_assert_str_eq(read_error("\"\\ud800\""), "a.jsonl:1:8: lone surrogate in \\u escape");
    /* the optional heads (T x S each) and self-attention layers (S x S each) */
#define ONE "{\"step\":1,\"id\":2,\"src\":[\"a\",\"</s>\"],\"tgt\":[\"</s>\"],\"weights\":[[0.5,0.5]]"
    ck_assert_str_eq(read_error(ONE ",\"heads\":[[[1,0]],[[0,1]]],\"self\":[[[1,0],[0,1]]]}"), "");
    ck_assert_str_eq(read_error(ONE ",\"heads\":[]}"),
                     "a.jsonl:1:1: expected \"heads\": a list of 1 to 64 matrices");
    ck_assert_str_eq(read_error(ONE ",\"heads\":[[[1,0]],[[0,1],[1,0]]]}"),
                     "a.jsonl:1:1: expected \"heads\" 2: 1 row, one per target token");
    ck_assert_str_eq(read_error(ONE ",\"heads\":[[[1,0]],[[0,1.5]]]}"),
                     "a.jsonl:1:1: heads 2 row 1, column 2: expected a number from 0 to 1");
    ck_assert_str_eq(read_error(ONE ",\"self\":[[[1,0]]]}"),
                     "a.jsonl:1:1: expected \"self\" 1: 2 rows, one per source token");
    ck_assert_str_eq(read_error(ONE ",\"self\":{}}"),
                     "a.jsonl:1:1: expected \"self\": a list of 1 to 64 matrices");
    /* a hard-attention record's chosen positions: T rows of H source positions */
    ck_assert_str_eq(read_error(ONE ",\"chosen\":[[1,0]]}"), "");
    ck_assert_str_eq(read_error(ONE ",\"chosen\":[[2]]}"),
                     "a.jsonl:1:1: \"chosen\" row 1: expected 1 source positions from 0 to 1");
    ck_assert_str_eq(read_error(ONE ",\"chosen\":[[0],[1]]}"),
                     "a.jsonl:1:1: expected \"chosen\": 1 row, one per target token, of 1 to 64 "
                     "source positions");
    ck_assert_str_eq(read_error(ONE ",\"chosen\":[[0.5]]}"),
                     "a.jsonl:1:1: \"chosen\" row 1: expected 1 source positions from 0 to 1");
#undef ONE
}
END_TEST

START_TEST(svg_heatmaps_are_well_formed_xml)
{
    char dir[512], path[700], cmd[900];
    scratch_dir(dir, sizeof dir, "svg");
    const char *src[] = {"the", "<red> & \"blue\"", "car", "</s>"}, *tgt[] = {"la", "voiture", "</s>"};
    float w[3 * 4] = {0.7f, 0.1f, 0.1f, 0.1f, 0.05f, 0.05f, 0.8f, 0.1f, 0, 0, 0.1f, 0.9f};
    char *copy_src[4], *copy_tgt[3];
    for (int k = 0; k < 4; k++)
        copy_src[k] = (char *)src[k];
    for (int k = 0; k < 3; k++)
        copy_tgt[k] = (char *)tgt[k];
    AlignRecord r = {.step = 10, .id = 1, .epoch = 0.5, .has_epoch = 1, .n_src = 4, .n_tgt = 3,
                     .src = copy_src, .tgt = copy_tgt, .weights = w};
    snprintf(path, sizeof path, "%s/h.svg", dir);
    FILE *f = fopen(path, "w");
    heatmap_svg(f, &r, "x", 1);
    fclose(f);
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", path);
    ck_assert_int_eq(system(cmd), 0);
    char *svg = read_file(path);
    ck_assert_ptr_nonnull(strstr(svg, "&lt;red&gt; &amp; &quot;blue&quot;"));
    ck_assert_ptr_nonnull(strstr(svg, "<title>voiture \xe2\x86\x90 car: 0.800</title>"));
    ck_assert_ptr_nonnull(strstr(svg, ">step 10 \xc2\xb7 epoch 0.50 \xc2\xb7 sentence 1</text>"));
    int cells = 0;
    for (char *p = svg; (p = strstr(p, "<rect x=")); p++)
        cells++;
    ck_assert_int_eq(cells, 12 + 1); /* the cells and the colour scale */
    free(svg);
}
END_TEST


/* ---- terminals -------------------------------------------------------------------------------- */

/* Fails unless text is safe on a terminal: no control character but the line feed (no
 * C0, no DEL, no C1 in its UTF-8 form) and no byte outside UTF-8 (a lone 0x9B is CSI to
 * a terminal in an 8-bit mode). */
static void assert_terminal_safe(const char *text, const char *what)
{
    size_t bad_at, bad_len, n = strlen(text);
    ck_assert_msg(utf8_validate(text, n, &bad_at, &bad_len) == 0, "%s: not UTF-8 at byte %zu", what,
                  bad_at);
    for (size_t k = 0; k < n; k++) {
        unsigned char c = (unsigned char)text[k];
        ck_assert_msg((c >= 0x20 && c != 0x7f) || c == '\n', "%s: control byte 0x%02x at %zu", what,
                      c, k);
        ck_assert_msg(!(c == 0xc2 && (unsigned char)text[k + 1] >= 0x80 &&
                        (unsigned char)text[k + 1] <= 0x9f), "%s: a C1 control at %zu", what, k);
    }
}

/* Tokens that hold ESC [ 2 J (clear the screen), BEL, DEL, U+009B (CSI in one
 * character) and a tab, as a hostile corpus may. */
static char *HOSTILE_SRC[] = {"a\033[2J", "b\a", "</s>"};
static char *HOSTILE_TGT[] = {"x\x7f", "\xc2\x9b" "1\t", "</s>"};
static float HOSTILE_W[9] = {0.9f, 0.1f, 0, 0.2f, 0.6f, 0.2f, 0, 0.3f, 0.7f};

/* The text drawing of the hostile record: each control character one U+FFFD, so the
 * columns stay where they belong. */
#define R "\xef\xbf\xbd"
static const char HOSTILE_TXT[] =
    "step 7 (epoch 0.50), sentence 3\n"
    "      0 1 2\n"
    "x" R "    \xe2\x96\x88 \xe2\x96\x91 \xc2\xb7\n"
    R "1" R "   \xe2\x96\x91 \xe2\x96\x93 \xe2\x96\x91\n"
    "</s>  \xc2\xb7 \xe2\x96\x92 \xe2\x96\x93\n"
    "     0:a" R "[2J  1:b" R "  2:</s>\n\n";

START_TEST(terminal_drawings_show_control_characters_as_replacement_characters)
{
    AlignRecord r = {.step = 7, .id = 3, .epoch = 0.5, .has_epoch = 1, .n_src = 3, .n_tgt = 3,
                     .src = HOSTILE_SRC, .tgt = HOSTILE_TGT, .weights = HOSTILE_W};
    char *text = NULL;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    heatmap_txt(f, &r, 0);
    fclose(f);
    ck_assert_str_eq(text, HOSTILE_TXT);
    assert_terminal_safe(text, "heatmap_txt");
    free(text);
    /* a record without an epoch (s2s align, translate) claims none */
    r.has_epoch = 0;
    f = open_memstream(&text, &len);
    heatmap_txt(f, &r, 0);
    fclose(f);
    const char *start = "step 7, sentence 3\n      0 1 2\n";
    ck_assert_int_eq(strncmp(text, start, strlen(start)), 0);
    free(text);
    /* in colour the only escapes are the drawing's own: ESC [ 38;5;N m and ESC [ 0 m */
    f = open_memstream(&text, &len);
    heatmap_txt_titled(f, &r, "line\033]0;title\a 3", 1);
    fclose(f);
    start = "line" R "]0;title" R " 3\n";
    ck_assert_int_eq(strncmp(text, start, strlen(start)), 0);
    for (char *esc = strchr(text, '\033'); esc; esc = strchr(esc + 1, '\033'))
        ck_assert_msg(!strncmp(esc, "\033[38;5;", 7) || !strncmp(esc, "\033[0m", 4), "%s", esc);
    ck_assert_ptr_null(strchr(text, '\a'));
    free(text);
}
END_TEST

START_TEST(termtext_escapes_control_characters_and_counts_columns)
{
    char out[64];
    ck_assert_str_eq(termtext_escape(out, sizeof out, "a\033[2Jb\a"), "a\\x1b[2Jb\\x07");
    ck_assert_str_eq(termtext_escape(out, sizeof out, "\xc2\x9b|\x7f|\n|\t"),
                     "\\xc2\\x9b|\\x7f|\\x0a|\\x09");
    /* bytes that are not UTF-8 (a lone CSI byte, a cut sequence); UTF-8 text stays */
    ck_assert_str_eq(termtext_escape(out, sizeof out, "\x9b\xff\xe2\x96|\xc3\xa9\xe2\x96\x88"),
                     "\\x9b\\xff\\xe2\\x96|\xc3\xa9\xe2\x96\x88");
    /* cut whole: never half an escape or half a character */
    ck_assert_str_eq(termtext_escape(out, 6, "ab\033c"), "ab");
    ck_assert_str_eq(termtext_escape(out, 4, "a\xc3\xa9"), "a\xc3\xa9");
    ck_assert_str_eq(termtext_escape(out, 3, "a\xc3\xa9"), "a");
    ck_assert_int_eq(termtext_width("a\033[2J"), 5);
    ck_assert_int_eq(termtext_width("\xe6\x97\xa5\xe6\x9c\xac"), 4); /* 日本: wide */
    ck_assert_int_eq(termtext_width("e\xcc\x81"), 1);                /* e + combining acute */
    ck_assert_int_eq(termtext_width("\xc2\x9b\xff"), 2);
}
END_TEST

/* Writes the hostile record as alignments.jsonl does into path, at step 7 and, with
 * more_steps, at the 50 steps after it. */
static void write_hostile_jsonl(const char *path, int more_steps)
{
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    AttnMatrix m = {HOSTILE_W, 3, 3, 3, 1, 0};
    for (int step = 7; step <= 7 + more_steps; step++)
        ck_assert_int_eq(align_write_json(f, step, 0.5, 3, (const char *const *)HOSTILE_SRC,
                                          (const char *const *)HOSTILE_TGT, &m, NULL), 0);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(heatmap_txt_command_keeps_control_characters_off_the_terminal)
{
    char dir[512], jsonl[700], out[700], err[700], bad[800], line[1400], expected[1400];
    scratch_dir(dir, sizeof dir, "hostile");
    snprintf(jsonl, sizeof jsonl, "%s/a.jsonl", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    write_hostile_jsonl(jsonl, 0);
    const char *txt[] = {S2S, "heatmap", jsonl, "--format", "txt", NULL};
    ck_assert_int_eq(run_command(txt, out, err, NULL), 0);
    char *text = read_file(out);
    ck_assert_str_eq(text, HOSTILE_TXT);
    free(text);
    /* the paths of messages: escaped as \xHH, whole, on one line */
    snprintf(bad, sizeof bad, "%s/a\033[2J\a\n.jsonl", dir);
    const char *missing[] = {S2S, "heatmap", bad, "--format", "txt", NULL};
    ck_assert_int_eq(run_command(missing, out, err, NULL), 2);
    text = read_file(err);
    assert_terminal_safe(text, "stderr");
    snprintf(expected, sizeof expected, "s2s: error: cannot open alignments `%s/a\\x1b[2J\\x07\\x0a"
             ".jsonl`: No such file or directory\n", dir);
    ck_assert_str_eq(text, expected);
    free(text);
    snprintf(bad, sizeof bad, "%s/out\033[2J", dir);
    const char *svg[] = {S2S, "heatmap", jsonl, "--out", bad, NULL};
    ck_assert_int_eq(run_command(svg, out, err, NULL), 0);
    first_line(err, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s heatmap: wrote 1 SVG file to %s/out\\x1b[2J", dir);
    ck_assert_str_eq(line, expected);
}
END_TEST
#undef R

/* ---- bounded reading --------------------------------------------------------------------------- */

/* Runs argv under an address-space limit of 512 MiB (none under a memory tool) and a
 * time limit of 60 s; returns the exit code (-1 on time out), the peak memory in KiB
 * and the first line of stderr. */
static int run_limited(const char *const *argv, const char *err_path, long *rss_kib, char *line,
                       size_t cap)
{
    RunOptions opt = {.timeout = 60,
                      .max_address_space = under_memory_tool() ? 0 : (size_t)512 << 20};
    int rc = run_command_with(argv, NULL, err_path, &opt, rss_kib);
    first_line(err_path, line, cap);
    return rc;
}

/* path: one line of bytes MiB (a JSON string, so no NUL and valid UTF-8), then a
 * newline. */
static void write_huge_line(const char *path, int mib)
{
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    static char chunk[1 << 20];
    memset(chunk, 'x', sizeof chunk);
    fputs("{\"step\":1,\"id\":1,\"pad\":\"", f);
    for (int k = 0; k < mib; k++)
        ck_assert_uint_eq(fwrite(chunk, 1, sizeof chunk, f), sizeof chunk);
    fputs("\"}\n", f);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(heatmap_input_is_read_in_bounded_memory)
{
    char dir[512], err[700], huge[700], line[1400], expected[1400];
    long rss_kib;
    scratch_dir(dir, sizeof dir, "boundedheatmap");
    snprintf(err, sizeof err, "%s/err.txt", dir);
    /* /dev/zero: refused at its first byte, at once (it used to grow by hundreds of MB/s) */
    const char *zero[] = {S2S, "heatmap", "/dev/zero", "--format", "txt", NULL};
    ck_assert_int_eq(run_limited(zero, err, &rss_kib, line, sizeof line), 2);
    ck_assert_str_eq(line, "s2s: error: /dev/zero:1:1: NUL byte (expected UTF-8 text)");
    /* one line of 80 MB: refused once past 4 MiB, which is all it holds */
    snprintf(huge, sizeof huge, "%s/huge.jsonl", dir);
    write_huge_line(huge, 80);
    const char *argv[] = {S2S, "heatmap", huge, "--format", "txt", NULL};
    ck_assert_int_eq(run_limited(argv, err, &rss_kib, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: %s:1: line longer than 4194304 bytes (is this "
             "a text file?)", huge);
    ck_assert_str_eq(line, expected);
    printf("peak memory of s2s heatmap on an 80 MB line: %ld KiB\n", rss_kib);
    if (!under_memory_tool())
        ck_assert_int_lt(rss_kib, 40 * 1024L);
    /* a line within the cap that is the worst case for a JSON tree: a million tiny lists
     * ("[0],"), each a value and an allocation of its own; it parses in some 20 times
     * its size (the tree used to take over 100 times) */
    FILE *f = fopen(huge, "w");
    ck_assert(f != NULL);
    fputs("{\"step\":1,\"id\":1,\"src\":[\"a\"],\"tgt\":[\"b\"],\"weights\":[[1]],\"pad\":[", f);
    for (int k = 0; k < 1000000; k++)
        fputs("[0],", f);
    fputs("[0]]}\n", f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(run_limited(argv, err, &rss_kib, line, sizeof line), 0);
    printf("peak memory of s2s heatmap on a 4 MB line of a million lists: %ld KiB\n", rss_kib);
    if (!under_memory_tool())
        ck_assert_int_lt(rss_kib, 100 * 1024L);
    unlink(huge);
}
END_TEST

START_TEST(report_refuses_a_metrics_file_that_is_no_text)
{
    char dir[512], jsonl[700], metrics[700], out_dir[700], err[700], line[1400], expected[1400];
    long rss_kib;
    scratch_dir(dir, sizeof dir, "metricszero");
    snprintf(jsonl, sizeof jsonl, "%s/a.jsonl", dir);
    snprintf(metrics, sizeof metrics, "%s/metrics.jsonl", dir);
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    write_hostile_jsonl(jsonl, 0);
    const char *argv[] = {S2S, "heatmap", jsonl, "--format", "html", "--out", out_dir, NULL};
    ck_assert_int_eq(symlink("/dev/zero", metrics), 0);
    ck_assert_int_eq(run_limited(argv, err, &rss_kib, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: %s:1:1: NUL byte (expected UTF-8 text)", metrics);
    ck_assert_str_eq(line, expected);
    unlink(metrics);
    /* a 2 MB line: over the 1 MiB a metrics line may have */
    write_huge_line(metrics, 2);
    ck_assert_int_eq(run_limited(argv, err, &rss_kib, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: %s:1: line longer than 1048576 bytes (is this "
             "a text file?)", metrics);
    ck_assert_str_eq(line, expected);
    char report[800];
    snprintf(report, sizeof report, "%s/report.html", out_dir);
    ck_assert(!path_exists(report));
    /* records and lines that are not records: the curves of the records */
    write_file(metrics, "{\"step\":5,\"train_loss\":2.5}\nnot json\n{\"step\":10,\"train_loss\":1.5}\n");
    ck_assert_int_eq(run_limited(argv, err, &rss_kib, line, sizeof line), 0);
    char *html = read_file(report);
    ck_assert_ptr_nonnull(strstr(html, "<polyline fill=\"none\" stroke=\"#1f77b4\""));
    free(html);
}
END_TEST

/* The entries of dir but . and .., joined by spaces. */
static void list_dir(const char *dir, char *out, size_t cap)
{
    char cmd[800];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | tr '\\n' ' '", dir);
    FILE *p = popen(cmd, "r");
    ck_assert(p != NULL);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    ck_assert_int_eq(pclose(p), 0);
}

START_TEST(a_file_size_limit_makes_heatmap_exit_3_and_leave_nothing)
{
    /* SIGXFSZ left at its default (no trap): s2s itself must ignore it, so that the write
     * fails with EFBIG, is reported, and the temporary removed */
    char dir[512], jsonl[700], out_dir[700], err[700], cmd[3000], line[1400], expected[1400];
    char listing[1024];
    scratch_dir(dir, sizeof dir, "fsizeheatmap");
    snprintf(jsonl, sizeof jsonl, "%s/a.jsonl", dir);
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    write_hostile_jsonl(jsonl, 0);
    ck_assert_int_eq(mkdir(out_dir, 0777), 0);
    const char *formats[] = {"html", "svg"};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "ulimit -f 1 && exec '%s' heatmap '%s' --format %s --out '%s' "
                 "2> '%s'", S2S, jsonl, formats[k], out_dir, err);
        int status = system(cmd);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 3, "--format %s: status 0x%x",
                      formats[k], status);
        first_line(err, line, sizeof line);
        ck_assert_msg(strstr(line, "s2s: error: cannot write `") == line &&
                      strstr(line, "`: File too large"), "--format %s: %s", formats[k], line);
        list_dir(out_dir, listing, sizeof listing);
        ck_assert_msg(!strcmp(listing, ""), "--format %s left: %s", formats[k], listing);
    }
    /* text on stdout (51 drawings, 7 KB): the write error itself, not a bare "cannot write" */
    write_hostile_jsonl(jsonl, 50);
    snprintf(cmd, sizeof cmd, "ulimit -f 1 && exec '%s' heatmap '%s' --format txt --step all > "
             "'%s/out.txt' 2> '%s'", S2S, jsonl, dir, err);
    int status = system(cmd);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 3);
    first_line(err, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: cannot write `stdout`: File too large");
    ck_assert_str_eq(line, expected);
}
END_TEST

START_TEST(textfile_checks_each_line)
{
    char dir[512], path[700], expected[900];
    scratch_dir(dir, sizeof dir, "textfile");
    snprintf(path, sizeof path, "%s/t.txt", dir);
    TextFile f;
    Error err;
    write_file(path, "one\r\ntwo\n\nthree");
    ck_assert_int_eq(textfile_read(&f, path, &err), 0);
    ck_assert_int_eq(f.n, 4);
    ck_assert_str_eq(f.lines[0], "one");
    ck_assert_str_eq(f.lines[1], "two");
    ck_assert_str_eq(f.lines[2], "");
    ck_assert_str_eq(f.lines[3], "three");
    textfile_free(&f);
    FILE *out = fopen(path, "wb");
    ck_assert(out && fwrite("ok\nab\0c\n", 1, 8, out) == 8 && fclose(out) == 0);
    ck_assert_int_eq(textfile_read(&f, path, &err), -1);
    textfile_free(&f);
    snprintf(expected, sizeof expected, "%s:2:3: NUL byte (expected UTF-8 text)", path);
    ck_assert_str_eq(err.msg, expected);
    write_file(path, "ok\nbad \xe2\x82 x\n");
    ck_assert_int_eq(textfile_read(&f, path, &err), -1);
    textfile_free(&f);
    snprintf(expected, sizeof expected, "%s:2:5: invalid UTF-8 (0xe2 0x82)", path);
    ck_assert_str_eq(err.msg, expected);
    write_huge_line(path, 2);
    ck_assert_int_eq(textfile_read(&f, path, &err), -1);
    textfile_free(&f);
    snprintf(expected, sizeof expected, "%s:1: line longer than 1048576 bytes (is this a text "
             "file?)", path);
    ck_assert_str_eq(err.msg, expected);
    ck_assert_int_eq(textfile_read(&f, "/dev/zero", &err), -1);
    textfile_free(&f);
    ck_assert_str_eq(err.msg, "/dev/zero:1:1: NUL byte (expected UTF-8 text)");
    ck_assert_int_eq(textfile_read(&f, "/nonexistent", &err), -1);
    textfile_free(&f);
    ck_assert_str_eq(err.msg, "cannot open `/nonexistent`: No such file or directory");
}
END_TEST

/* ---- options ------------------------------------------------------------------------------------ */

/* The first line of what `s2s ARGS...` says on stderr; its exit code must be 2. */
static void usage_error_of(const char *const *argv, char *line, size_t cap)
{
    char dir[512], err[700];
    scratch_dir(dir, sizeof dir, "options");
    snprintf(err, sizeof err, "%s/err.txt", dir);
    ck_assert_int_eq(run_command(argv, NULL, err, NULL), 2);
    first_line(err, line, cap);
}

START_TEST(options_of_align_heatmap_and_train_follow_one_rule)
{
    char line[1024];
    const struct {
        const char *argv[6];
        const char *said;
    } cases[] = {
        {{"heatmap", "a.jsonl", "--format"}, "heatmap: `--format` needs a value (see s2s heatmap --help)"},
        {{"heatmap", "a.jsonl", "--step=all"}, "heatmap: write `--step all`: an option's value is "
                                               "the next argument, not after '=' (see s2s heatmap --help)"},
        {{"heatmap", "a.jsonl", "--colour"}, "heatmap: unknown option `--colour` (see s2s heatmap --help)"},
        {{"heatmap", "--help=1"}, "heatmap: `--help` takes no value (got `--help=1`; see s2s heatmap --help)"},
        {{"align", "--model", "m.ckpt", "--bogus"}, "align: unknown option `--bogus` (see s2s align --help)"},
        {{"align", "--model"}, "align: `--model` needs a value (see s2s align --help)"},
        {{"align", "--gold=g.txt"}, "align: write `--gold g.txt`: an option's value is the next "
                                    "argument, not after '=' (see s2s align --help)"},
        {{"train", "c.yaml", "--resume=run"}, "train: write `--resume run`: an option's value is the "
                                              "next argument, not after '=' (see s2s train --help)"},
        {{"train", "c.yaml", "--sett", "a=1"}, "train: unknown option `--sett` (see s2s train --help)"},
        {{"train", "c.yaml", "--set"}, "train: `--set` needs a value (see s2s train --help)"},
        {{"gradcheck", "c.yaml", "--samples=3"}, "gradcheck: write `--samples 3`: an option's value is "
                                                 "the next argument, not after '=' (see s2s gradcheck --help)"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *argv[8] = {S2S};
        for (int k = 0; cases[c].argv[k]; k++)
            argv[1 + k] = cases[c].argv[k];
        usage_error_of(argv, line, sizeof line);
        char expected[512];
        snprintf(expected, sizeof expected, "s2s: error: %s", cases[c].said);
        ck_assert_str_eq(line, expected);
    }
}
END_TEST

Suite *align_suite(void)
{
    Suite *s = suite_create("align");
    TCase *tc = tcase_create("align");
    tcase_add_test(tc, aer_matches_hand_computed_cases);
    tcase_add_test(tc, pharaoh_parser_refuses_malformed_links);
    tcase_add_test(tc, hard_links_skip_the_end_of_sentence);
    tcase_add_test(tc, alignments_jsonl_round_trips_and_rows_sum_to_one);
    tcase_add_test(tc, alignments_reader_names_line_and_column);
    tcase_add_test(tc, alignments_jsonl_keeps_heads_and_self_attention);
    tcase_add_test(tc, alignments_jsonl_keeps_a_transformer_decoders_layers);
    tcase_add_test(tc, svg_heatmaps_are_well_formed_xml);
    tcase_add_test(tc, terminal_drawings_show_control_characters_as_replacement_characters);
    tcase_add_test(tc, termtext_escapes_control_characters_and_counts_columns);
    tcase_add_test(tc, heatmap_txt_command_keeps_control_characters_off_the_terminal);
    tcase_add_test(tc, heatmap_input_is_read_in_bounded_memory);
    tcase_add_test(tc, report_refuses_a_metrics_file_that_is_no_text);
    tcase_add_test(tc, a_file_size_limit_makes_heatmap_exit_3_and_leave_nothing);
    tcase_add_test(tc, textfile_checks_each_line);
    tcase_add_test(tc, options_of_align_heatmap_and_train_follow_one_rule);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
