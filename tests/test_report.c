/* test_report.c: watching attention learn, end to end: alignment dumps during
 * training (every row a distribution), AER in metrics.jsonl, the HTML report opened in
 * headless Chromium, and the `s2s align` and `s2s heatmap` commands. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alignread.h"
#include "cli.h"
#include "metrics.h"
#include "suites.h"
#include "tinyrun.h"

/* Trains the tiny setup with alignment dumps every 5 steps on validation lines 2 and 5. */
static void train_with_dumps(char *dir, size_t cap)
{
    scratch_dir(dir, cap, "report");
    write_tiny_setup(dir);
    char gold[700];
    snprintf(gold, sizeof gold, "data.valid_align=%s/valid.align", dir);
    const char *sets[] = {gold, "alignments.every=5", "alignments.lines=[2, 5]", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
}

START_TEST(training_dumps_alignments_and_aer)
{
    char dir[512], path[700];
    train_with_dumps(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/run/alignments.jsonl", dir);
    AlignLog log;
    Error err;
    ck_assert_msg(alignlog_read(&log, path, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(log.n, 2 * 5); /* steps 0, 5, 10, 15, 20 */
    for (int k = 0; k < log.n; k++) {
        const AlignRecord *r = &log.records[k];
        ck_assert_int_eq(r->step, 5 * (k / 2));
        ck_assert_int_eq(r->id, k % 2 ? 5 : 2);
        ck_assert_str_eq(r->src[r->n_src - 1], "</s>");
        ck_assert_str_eq(r->tgt[r->n_tgt - 1], "</s>");
        for (int i = 0; i < r->n_tgt; i++) {
            double sum = 0;
            for (int j = 0; j < r->n_src; j++)
                sum += r->weights[i * r->n_src + j];
            ck_assert_double_eq_tol(sum, 1, 1e-5);
        }
    }
    alignlog_free(&log);
    snprintf(path, sizeof path, "%s/run/metrics.jsonl", dir);
    char *m = read_file(path);
    ck_assert_ptr_nonnull(strstr(m, "{\"step\":0,\"epoch\":0.0000,\"aer\":"));
    ck_assert_ptr_nonnull(strstr(m, "{\"step\":20,\"epoch\":"));
    ck_assert_ptr_nonnull(strstr(m, "\"attention_entropy\":"));
    free(m);
}
END_TEST

START_TEST(report_opens_in_headless_chromium_with_every_heatmap)
{
    char dir[512], report[700], out[700], profile[700], url[800];
    train_with_dumps(dir, sizeof dir);
    snprintf(report, sizeof report, "%s/run/heatmaps/report.html", dir);
    snprintf(out, sizeof out, "%s/dom.html", dir);
    snprintf(profile, sizeof profile, "--user-data-dir=%s/chromium", dir);
    snprintf(url, sizeof url, "file://%s", report);
    /* the report is rewritten at each validation (steps 10 and 20): it holds the dumps of
     * steps 0 to 20, five per sentence */
    const char *argv[] = {"/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
                          "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update",
                          "--disable-sync", profile, "--dump-dom", url, NULL};
    ck_assert_int_eq(run_command(argv, out, NULL, NULL), 0);
    char *dom = read_file(out);
    ck_assert_msg(strstr(dom, "data-heatmaps=\"10\"") != NULL, "the DOM Chromium rendered does not "
                  "show 10 heatmaps");
    ck_assert_ptr_nonnull(strstr(dom, "class=\"chart\""));
    free(dom);
}
END_TEST

START_TEST(align_command_writes_links_matrices_and_aer)
{
    char dir[512], model[700], src[700], tgt[700], gold[700], jsonl[700], out[700], err_path[700];
    train_with_dumps(dir, sizeof dir);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(src, sizeof src, "%s/valid.src", dir);
    snprintf(tgt, sizeof tgt, "%s/valid.tgt", dir);
    snprintf(gold, sizeof gold, "%s/valid.align", dir);
    snprintf(jsonl, sizeof jsonl, "%s/forced.jsonl", dir);
    snprintf(out, sizeof out, "%s/links.txt", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    const char *argv[] = {S2S, "align", "--model", model, "--src", src, "--tgt", tgt, "--gold", gold,
                          "--out", jsonl, NULL};
    ck_assert_int_eq(run_command(argv, out, err_path, NULL), 0);
    /* recompute the AER from the printed links: the two must agree */
    char *links = read_file(out), *golds = read_file(gold);
    AerCounts c = {0};
    int lines = 0;
    Link a[64], g[64];
    int bad;
    /* line by line, empty lines included (a sentence may have no link) */
    for (char *la = links, *lb = golds; *lb; lines++) {
        char *ea = strchr(la, '\n'), *eb = strchr(lb, '\n');
        ck_assert(ea && eb);
        *ea = *eb = '\0';
        int na = pharaoh_parse(la, a, 64, &bad), ng = pharaoh_parse(lb, g, 64, &bad);
        ck_assert(na >= 0 && ng >= 0);
        aer_add(&c, a, na, g, ng);
        la = ea + 1;
        lb = eb + 1;
    }
    ck_assert_int_eq(lines, 20);
    char want[128];
    snprintf(want, sizeof want, "AER = %.4f (precision %.4f, recall %.4f; 20 pairs", aer_rate(&c),
             aer_precision(&c), aer_recall(&c));
    char *said = read_file(err_path);
    ck_assert_msg(strstr(said, want) != NULL, "stderr: %s, expected: %s", said, want);
    free(said);
    free(links);
    free(golds);
    AlignLog log;
    Error err;
    ck_assert_msg(alignlog_read(&log, jsonl, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(log.n, 20);
    ck_assert_int_eq(log.records[0].step, 20);
    alignlog_free(&log);
}
END_TEST

START_TEST(heatmap_command_draws_svg_text_and_html)
{
    char dir[512], jsonl[700], out[700], err_path[700], svg_dir[700], path[800], cmd[900];
    train_with_dumps(dir, sizeof dir);
    snprintf(jsonl, sizeof jsonl, "%s/run/alignments.jsonl", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    snprintf(svg_dir, sizeof svg_dir, "%s/svg", dir);
    const char *svg[] = {S2S, "heatmap", jsonl, "--out", svg_dir, NULL};
    ck_assert_int_eq(run_command(svg, out, err_path, NULL), 0);
    for (int id = 2; id <= 5; id += 3) { /* the last step of each sentence */
        snprintf(path, sizeof path, "%s/heatmap-%d-20.svg", svg_dir, id);
        snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", path);
        ck_assert_int_eq(system(cmd), 0);
    }
    const char *all[] = {S2S, "heatmap", jsonl, "--out", svg_dir, "--step", "all", NULL};
    ck_assert_int_eq(run_command(all, out, err_path, NULL), 0);
    snprintf(path, sizeof path, "%s/heatmap-5-10.svg", svg_dir);
    char *s = read_file(path);
    ck_assert_ptr_nonnull(strstr(s, "<svg class=\"heatmap\""));
    free(s);
    const char *txt[] = {S2S, "heatmap", jsonl, "--format", "txt", "--step", "0", NULL};
    ck_assert_int_eq(run_command(txt, out, err_path, NULL), 0);
    s = read_file(out);
    ck_assert_ptr_nonnull(strstr(s, "step 0 (epoch 0.00), sentence 2\n"));
    ck_assert_ptr_nonnull(strstr(s, "</s>"));
    ck_assert_ptr_null(strstr(s, "\033[")); /* no colour off a terminal */
    free(s);
    const char *missing[] = {S2S, "heatmap", jsonl, "--format", "txt", "--step", "7", NULL};
    ck_assert_int_eq(run_command(missing, out, err_path, NULL), 2);
    char line[1024], expected[1400];
    first_line(err_path, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: `%s` has no attention matrices of step 7", jsonl);
    ck_assert_str_eq(line, expected);
    snprintf(path, sizeof path, "%s/broken.jsonl", dir);
    write_file(path, "{\"step\":1,\"id\":1,\"src\":[\"a\"],\"tgt\":[\"b\"],\"weights\":[[1]]}\n{\"step\":2,\n");
    const char *broken[] = {S2S, "heatmap", path, NULL};
    ck_assert_int_eq(run_command(broken, out, err_path, NULL), 2);
    first_line(err_path, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: %s:2:11: expected a string key", path);
    ck_assert_str_eq(line, expected);
}
END_TEST

Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, training_dumps_alignments_and_aer);
    tcase_add_test(tc, report_opens_in_headless_chromium_with_every_heatmap);
    tcase_add_test(tc, align_command_writes_links_matrices_and_aer);
    tcase_add_test(tc, heatmap_command_draws_svg_text_and_html);
    suite_add_tcase(s, tc);
    return s;
}
