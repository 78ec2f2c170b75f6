/* test_align.c: alignment error rate on hand-computed cases (possible links included),
 * Pharaoh parsing, hard links from attention, the alignments.jsonl writer and reader,
 * and the heatmaps (SVG checked by xmllint). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alignments.h"
#include "alignread.h"
#include "cli.h"
#include "heatmap.h"
#include "suites.h"

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
    AttnMatrix m = {w, 3, 4, 4, 1};
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
    AttnMatrix m = {w + 1, 3, 4, 8, 2};
    const char *src[] = {"le", "\"quoted\"", "a\\b", "</s>"}, *tgt[] = {"x", "é", "</s>"};
    ck_assert_int_eq(align_write_json(f, 7, 1.5, 42, src, tgt, &m), 0);
    ck_assert_int_eq(align_write_json(f, 9, 2.0, 42, src, tgt, &m), 0);
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

static const char *read_error(const char *text)
{
    static Error err;
    AlignLog log;
    err.msg[0] = '\0';
    alignlog_parse(&log, text, strlen(text), "a.jsonl", &err);
    alignlog_free(&log);
    return err.msg;
}

START_TEST(alignments_reader_names_line_and_column)
{
    const char *ok = "{\"step\":1,\"epoch\":0,\"id\":3,\"src\":[\"a\",\"</s>\"],\"tgt\":[\"</s>\"],\"weights\":[[0.5,0.5]]}\n";
    ck_assert_str_eq(read_error(ok), "");
    char two[512];
    snprintf(two, sizeof two, "%s\n{\"step\":1,", ok);
    ck_assert_str_eq(read_error(two), "a.jsonl:3:11: expected a string key");
    ck_assert_str_eq(read_error("{\"step\":1 \"id\":2}"), "a.jsonl:1:11: expected ',' or '}'");
    ck_assert_str_eq(read_error("{\"step\":1,\"id\":3,\"src\":[\"a\"],\"tgt\":[\"b\"],\"weights\":[[0.5,0.5]]}"),
                     "a.jsonl:1:1: weights row 1: expected 1 numbers, one per source token");
    ck_assert_str_eq(read_error("{\"step\":1,\"id\":3,\"src\":[\"a\"],\"tgt\":[\"b\"],\"weights\":[[1.5]]}"),
                     "a.jsonl:1:1: weights row 1, column 1: expected a number from 0 to 1");
    ck_assert_str_eq(read_error("{\"step\":1.5,\"id\":3}"), "a.jsonl:1:1: expected integer \"step\" and \"id\"");
    ck_assert_str_eq(read_error("[1, 2"), "a.jsonl:1:6: expected ',' or ']'");
    ck_assert_str_eq(read_error("{\"step\":01}"), "a.jsonl:1:9: leading zero in a number");
    ck_assert_str_eq(read_error("\"\\ud800\""), "a.jsonl:1:8: lone surrogate in \\u escape");
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
    AlignRecord r = {.step = 10, .id = 1, .epoch = 0.5, .n_src = 4, .n_tgt = 3, .src = copy_src,
                     .tgt = copy_tgt, .weights = w};
    snprintf(path, sizeof path, "%s/h.svg", dir);
    FILE *f = fopen(path, "w");
    heatmap_svg(f, &r, "x", 1);
    fclose(f);
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", path);
    ck_assert_int_eq(system(cmd), 0);
    char *svg = read_file(path);
    ck_assert_ptr_nonnull(strstr(svg, "&lt;red&gt; &amp; &quot;blue&quot;"));
    ck_assert_ptr_nonnull(strstr(svg, "<title>voiture \xe2\x86\x90 car: 0.800</title>"));
    int cells = 0;
    for (char *p = svg; (p = strstr(p, "<rect x=")); p++)
        cells++;
    ck_assert_int_eq(cells, 12 + 1); /* the cells and the colour scale */
    free(svg);
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
    tcase_add_test(tc, svg_heatmaps_are_well_formed_xml);
    suite_add_tcase(s, tc);
    return s;
}
