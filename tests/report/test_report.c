/* test_report.c: watching attention learn, end to end: alignment dumps during
 * training (every row a distribution), AER in metrics.jsonl, the HTML report opened in
 * headless Chromium (and written even when a signal lands while it is made), the `s2s
 * align` and `s2s heatmap` commands, and gold alignments read in memory bounded by
 * their corpus (/dev/zero, an 80 MB line, more lines than the corpus). */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/alignlog.h"
#include "report/metrics.h"
#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"

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
    char dir[512], report[700];
    train_with_dumps(dir, sizeof dir);
    snprintf(report, sizeof report, "%s/run/heatmaps/report.html", dir);
    /* the report is rewritten at each validation (steps 10 and 20): it holds the dumps of
     * steps 0 to 20, five per sentence */
    char *dom = chromium_dom(report, dir);
    ck_assert_msg(strstr(dom, "data-heatmaps=\"10\"") != NULL, "the DOM Chromium rendered does not "
                  "show 10 heatmaps");
    /* the report holds numbers; these heatmaps are the ones its script drew */
    ck_assert_int_eq(count_of(dom, "<svg class=\"heatmap\""), 10);
    ck_assert_ptr_nonnull(strstr(dom, "<title>attention, step 20, sentence 5</title>"));
    ck_assert_ptr_nonnull(strstr(dom, "fill=\"url(#scale-9)\""));
    ck_assert_ptr_nonnull(strstr(dom, "class=\"chart\""));
    free(dom);
}
END_TEST

/* The report holds every dump as numbers (no pictures), and heatmaps/ the SVGs that
 * alignments.svg asks for: each probe's at the last dump (the default), at every dump,
 * or none. */
START_TEST(heatmaps_keep_the_last_svgs_and_the_report_every_dump)
{
    static const struct {
        const char *svg, *files;
    } cases[] = {
        {"alignments.svg=last", "heatmap-2.svg heatmap-5.svg report.html"},
        {"alignments.svg=all", "heatmap-2-0.svg heatmap-2-10.svg heatmap-2-15.svg heatmap-2-20.svg "
                               "heatmap-2-5.svg heatmap-5-0.svg heatmap-5-10.svg heatmap-5-15.svg "
                               "heatmap-5-20.svg heatmap-5-5.svg report.html"},
        {"alignments.svg=none", "report.html"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char dir[512], gold[700], path[800], cmd[1200], listing[2000];
        scratch_dir(dir, sizeof dir, "svgkeep");
        write_tiny_setup(dir);
        snprintf(gold, sizeof gold, "data.valid_align=%s/valid.align", dir);
        const char *sets[] = {gold, "alignments.every=5", "alignments.lines=[2, 5]", cases[c].svg,
                              NULL};
        ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
        snprintf(cmd, sizeof cmd, "ls %s/run/heatmaps | sort | tr '\\n' ' ' > %s/ls.txt", dir, dir);
        ck_assert_int_eq(system(cmd), 0);
        snprintf(path, sizeof path, "%s/ls.txt", dir);
        char *ls = read_file(path);
        snprintf(listing, sizeof listing, "%s ", cases[c].files);
        ck_assert_str_eq(ls, listing);
        free(ls);
        if (c == 0) { /* the last dump's picture: step 20 */
            snprintf(path, sizeof path, "%s/run/heatmaps/heatmap-5.svg", dir);
            char *svg = read_file(path);
            ck_assert_ptr_nonnull(strstr(svg, "<title>attention, step 20, sentence 5</title>"));
            free(svg);
            snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", path);
            ck_assert_int_eq(system(cmd), 0);
        }
        snprintf(path, sizeof path, "%s/run/heatmaps/report.html", dir);
        char *html = read_file(path);
        ck_assert_int_eq(count_of(html, "{\"step\":"), 10); /* 2 sentences x 5 dumps */
        ck_assert_int_eq(count_of(html, "<svg class=\"heatmap\""), 0); /* drawn by the browser */
        free(html);
    }
}
END_TEST

/* After alignments.max_dumps dumps the interval doubles each time the run doubles in
 * length, and the last step is dumped whatever the schedule. */
START_TEST(dumps_thin_out_after_max_dumps_and_keep_the_last_step)
{
    char dir[512], gold[700], path[800];
    scratch_dir(dir, sizeof dir, "thin");
    write_tiny_setup(dir);
    snprintf(gold, sizeof gold, "data.valid_align=%s/valid.align", dir);
    const char *sets[] = {gold, "alignments.every=1", "alignments.max_dumps=4",
                          "alignments.lines=[2]", "training.max_steps=23", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/run/alignments.jsonl", dir);
    AlignLog log;
    Error err;
    ck_assert_msg(alignlog_read(&log, path, &err) == 0, "%s", err.msg);
    /* every step for 4 dumps; [4, 8) every 2; [8, 16) every 4; [16, 32) every 8; and 23 */
    static const long steps[] = {0, 1, 2, 3, 4, 6, 8, 12, 16, 23};
    ck_assert_int_eq(log.n, (int)(sizeof steps / sizeof *steps));
    for (int k = 0; k < log.n; k++)
        ck_assert_int_eq(log.records[k].step, steps[k]);
    alignlog_free(&log);
}
END_TEST

/* Tokens that are markup stay text: in the report's data they cannot end its script
 * (`</script>` is written \u003c/script\u003e), and the browser draws them as words. */
START_TEST(report_keeps_tokens_that_look_like_markup_as_text)
{
    char dir[512], jsonl[700], report[700];
    scratch_dir(dir, sizeof dir, "markup");
    snprintf(jsonl, sizeof jsonl, "%s/a.jsonl", dir);
    write_file(jsonl, "{\"step\":3,\"id\":1,\"src\":[\"</script><script>document.title='owned'"
                      "</script>\",\"&amp;\",\"</s>\"],\"tgt\":[\"<b>x\",\"</s>\"],"
                      "\"weights\":[[0.5,0.25,0.25],[0,0,1]]}\n");
    const char *html[] = {S2S, "heatmap", jsonl, "--format", "html", NULL};
    ck_assert_int_eq(run_command(html, NULL, NULL, NULL), 0);
    snprintf(report, sizeof report, "%s/heatmaps/report.html", dir);
    char *text = read_file(report);
    ck_assert_ptr_null(strstr(text, "<script>document"));
    ck_assert_ptr_nonnull(strstr(text, "\\u003c/script\\u003e\\u003cscript\\u003edocument"));
    free(text);
    char *dom = chromium_dom(report, dir);
    ck_assert_msg(strstr(dom, "data-heatmaps=\"1\"") != NULL, "the report's script did not run");
    ck_assert_ptr_null(strstr(dom, "<title>owned</title>")); /* its script never ran */
    /* the tokens are drawn as text: the DOM escapes them again */
    ck_assert_ptr_nonnull(strstr(dom, "&lt;/script&gt;&lt;script&gt;document.title="));
    ck_assert_ptr_nonnull(strstr(dom, "&lt;b&gt;x"));
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
    /* outside training there is no epoch to tell: the records claim none */
    ck_assert_int_eq(log.records[0].has_epoch, 0);
    alignlog_free(&log);
    char *text = read_file(jsonl);
    const char *start = "{\"step\":20,\"id\":1,\"src\":[";
    ck_assert_int_eq(strncmp(text, start, strlen(start)), 0);
    ck_assert_ptr_null(strstr(text, "epoch"));
    free(text);
    const char *txt[] = {S2S, "heatmap", jsonl, "--format", "txt", NULL};
    ck_assert_int_eq(run_command(txt, out, err_path, NULL), 0);
    text = read_file(out);
    start = "step 20, sentence 1\n";
    ck_assert_int_eq(strncmp(text, start, strlen(start)), 0);
    ck_assert_ptr_null(strstr(text, "epoch"));
    free(text);
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


/* Appends to the page at path a script that measures, in the browser, every text of
 * every heatmap and chart against its picture and writes what sticks out into <body
 * data-cut="N: text|text...">. */
static void append_fit_check(const char *path)
{
    FILE *f = fopen(path, "a");
    ck_assert_ptr_nonnull(f);
    fputs("<script>(function(){var bad=[];"
          "document.querySelectorAll('svg.heatmap, svg.chart').forEach(function(svg){"
          "var box=svg.getBoundingClientRect();svg.querySelectorAll('text').forEach(function(t){"
          "var r=t.getBoundingClientRect();if(r.left<box.left-0.5||r.right>box.right+0.5||"
          "r.top<box.top-0.5||r.bottom>box.bottom+0.5)bad.push(t.textContent);});});"
          "document.body.setAttribute('data-cut',bad.length+': '+bad.join('|'));})();</script>\n", f);
    ck_assert_int_eq(fclose(f), 0);
}

/* Every word, caption and label of every picture is inside it, measured in Chromium
 * (issue 25: "...mean of 4 hea", "...self-attenti" and the top-right </s> of a
 * multi-head panel were cut off): the SVGs s2s heatmap writes and the report's panels,
 * for a two-word sentence of a model with 4 heads and a self-attention layer, whose
 * captions are far wider than its grid. A chart whose points share one step shows it
 * once, under a dot (a line of one point is invisible; its axis read "79 ... step 80"). */
START_TEST(every_label_and_caption_fits_inside_its_picture)
{
    char dir[512], path[700], jsonl[700], out[700], err_path[700], svg_dir[700], page[700];
    scratch_dir(dir, sizeof dir, "fit");
    write_tiny_setup(dir);
    snprintf(path, sizeof path, "%s/valid.src", dir);
    write_file(path, "w1 w2\nw3 w4 w5\n");
    snprintf(path, sizeof path, "%s/valid.tgt", dir);
    write_file(path, "w2 w1\nw5 w4 w3\n");
    const char *sets[] = {"model.attention_heads=4", "model.self_attention_layers=1",
                          "model.self_attention_heads=2", "training.max_steps=79",
                          "training.valid_every=1000", "training.log_every=1000",
                          "alignments.every=1000", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    snprintf(jsonl, sizeof jsonl, "%s/run/alignments.jsonl", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    snprintf(svg_dir, sizeof svg_dir, "%s/svg", dir);
    /* one page holding every SVG s2s heatmap writes: the mean, head 4, the layer */
    snprintf(page, sizeof page, "%s/svgs.html", dir);
    write_file(page, "<!DOCTYPE html><html><body>\n");
    const char *views[][2] = {{NULL, NULL}, {"--head", "4"}, {"--self", "1"}};
    int pictures = 0;
    for (int v = 0; v < 3; v++) {
        const char *argv[] = {S2S, "heatmap", jsonl, "--out", svg_dir, "--step", "all",
                              views[v][0], views[v][1], NULL};
        ck_assert_int_eq(run_command(argv, out, err_path, NULL), 0);
        for (int step = 0; step <= 79; step += 79)
            for (int id = 1; id <= 2; id++) {
                char file[800];
                snprintf(file, sizeof file, "%s/heatmap-%d-%d%s.svg", svg_dir, id, step,
                         v == 1 ? "-head4" : v == 2 ? "-self1" : "");
                char *svg = read_file(file);
                ck_assert_msg(svg[0] != '\0', "no %s", file);
                FILE *f = fopen(page, "a");
                fputs(strstr(svg, "<svg"), f); /* without its XML declaration */
                fclose(f);
                free(svg);
                pictures++;
            }
    }
    FILE *f = fopen(page, "a");
    fputs("</body></html>\n", f);
    fclose(f);
    append_fit_check(page);
    char *dom = chromium_dom(page, dir);
    ck_assert_int_eq(count_of(dom, "<svg class=\"heatmap\""), pictures);
    ck_assert_msg(strstr(dom, "data-cut=\"0: \"") != NULL, "cut off in s2s heatmap's SVGs: %.300s",
                  strstr(dom, "data-cut=") ? strstr(dom, "data-cut=") : "(no verdict)");
    free(dom);
    /* the report: every panel its script draws, and the charts */
    snprintf(page, sizeof page, "%s/run/heatmaps/report.html", dir);
    append_fit_check(page);
    dom = chromium_dom(page, dir);
    ck_assert_ptr_nonnull(strstr(dom, "mean of 4 heads"));
    ck_assert_ptr_nonnull(strstr(dom, "self-attention layer 1"));
    ck_assert_msg(strstr(dom, "data-cut=\"0: \"") != NULL, "cut off in the report: %.300s",
                  strstr(dom, "data-cut=") ? strstr(dom, "data-cut=") : "(no verdict)");
    free(dom);
    /* the loss chart holds one validation, at step 79: a dot, and its step once */
    char *html = read_file(page);
    const char *loss = strstr(html, "<svg class=\"chart\"");
    ck_assert_ptr_nonnull(loss);
    const char *end = strstr(loss, "</svg>");
    char *chart = strndup(loss, (size_t)(end - loss + strlen("</svg>")));
    ck_assert_ptr_nonnull(strstr(chart, "\"/><circle cx=\""));
    ck_assert_ptr_nonnull(strstr(chart, ">step 79</text>"));
    ck_assert_ptr_null(strstr(chart, "step 80"));
    ck_assert_ptr_null(strstr(chart, ">78<"));
    /* well-formed XML on its own, the dot included */
    char chart_path[700], cmd[800];
    snprintf(chart_path, sizeof chart_path, "%s/chart.svg", dir);
    write_file(chart_path, chart);
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", chart_path);
    ck_assert_int_eq(system(cmd), 0);
    free(chart);
    free(html);
}
END_TEST

/* Row sums of an (rows, cols) matrix are 1, to the 8 digits alignments.jsonl writes. */
static void assert_rows_are_distributions(const float *w, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        double sum = 0;
        for (int j = 0; j < cols; j++)
            sum += w[i * cols + j];
        ck_assert_double_eq_tol(sum, 1, 1e-5);
    }
}

/* A multi-head model shows each head: training's dumps carry every head beside their
 * mean (the alignment), s2s align --out too (the same numbers from the last checkpoint),
 * the report draws a panel per head, and s2s heatmap --head draws one head. */
START_TEST(a_multi_head_model_shows_each_head)
{
    char dir[512], path[700], out[700], err_path[700], svg_dir[700], model[700], src[700],
        tgt[700], forced[700];
    scratch_dir(dir, sizeof dir, "heads");
    write_tiny_setup(dir);
    const char *sets[] = {"model.attention_heads=2", "alignments.every=10", "alignments.lines=[2]",
                          NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/run/alignments.jsonl", dir);
    AlignLog log;
    Error err;
    ck_assert_msg(alignlog_read(&log, path, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(log.n, 3); /* steps 0, 10, 20 */
    for (int k = 0; k < log.n; k++) {
        const AlignRecord *r = &log.records[k];
        const int T = r->n_tgt, S = r->n_src;
        ck_assert_int_eq(r->n_heads, 2);
        assert_rows_are_distributions(r->weights, T, S);
        for (int h = 0; h < 2; h++)
            assert_rows_are_distributions(r->heads + h * T * S, T, S);
        for (int c = 0; c < T * S; c++)
            ck_assert_double_eq_tol(r->weights[c], (r->heads[c] + r->heads[T * S + c]) / 2, 1e-6);
    }
    /* the heads differ: each has its own slices */
    const AlignRecord *last = &log.records[2];
    double apart = 0;
    for (int c = 0; c < last->n_tgt * last->n_src; c++)
        apart = fmax(apart, fabs(last->heads[c] - last->heads[last->n_tgt * last->n_src + c]));
    ck_assert_double_gt(apart, 1e-3);

    /* s2s align --out: the same heads from the checkpoint of the last step */
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(src, sizeof src, "%s/valid.src", dir);
    snprintf(tgt, sizeof tgt, "%s/valid.tgt", dir);
    snprintf(forced, sizeof forced, "%s/forced.jsonl", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    const char *align[] = {S2S, "align", "--model", model, "--src", src, "--tgt", tgt, "--out", forced,
                           NULL};
    ck_assert_int_eq(run_command(align, out, err_path, NULL), 0);
    AlignLog again;
    ck_assert_msg(alignlog_read(&again, forced, &err) == 0, "%s", err.msg);
    const AlignRecord *line2 = &again.records[1];
    ck_assert_int_eq(line2->id, 2);
    ck_assert_int_eq(line2->n_heads, 2);
    ck_assert_int_eq(line2->n_tgt, last->n_tgt);
    ck_assert_int_eq(line2->n_src, last->n_src);
    for (int c = 0; c < 2 * last->n_tgt * last->n_src; c++)
        ck_assert_double_eq_tol(line2->heads[c], last->heads[c], 1e-6);
    alignlog_free(&again);

    /* s2s heatmap --head 2: head 2's picture, beside the alignment's */
    snprintf(svg_dir, sizeof svg_dir, "%s/svg", dir);
    const char *head2[] = {S2S, "heatmap", path, "--head", "2", "--out", svg_dir, NULL};
    ck_assert_int_eq(run_command(head2, out, err_path, NULL), 0);
    char file[800];
    snprintf(file, sizeof file, "%s/heatmap-2-20-head2.svg", svg_dir);
    char *svg = read_file(file);
    ck_assert_ptr_nonnull(strstr(svg, "<title>attention, step 20, sentence 2, head 2</title>"));
    free(svg);
    const char *txt[] = {S2S, "heatmap", path, "--format", "txt", "--head", "1", NULL};
    ck_assert_int_eq(run_command(txt, out, err_path, NULL), 0);
    char *text = read_file(out);
    ck_assert_ptr_nonnull(strstr(text, "step 20 (epoch "));
    ck_assert_ptr_nonnull(strstr(text, "sentence 2, head 1\n"));
    free(text);
    char line[1024], expected[1400];
    const char *head3[] = {S2S, "heatmap", path, "--head", "3", NULL};
    ck_assert_int_eq(run_command(head3, out, err_path, NULL), 2);
    first_line(err_path, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: `%s`: sentence 2 at step 20 has no head 3 (it "
             "has 2)", path);
    ck_assert_str_eq(line, expected);
    const char *self1[] = {S2S, "heatmap", path, "--self", "1", NULL};
    ck_assert_int_eq(run_command(self1, out, err_path, NULL), 2);
    first_line(err_path, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: `%s`: sentence 2 at step 20 has no "
             "self-attention layer 1 (it has 0)", path);
    ck_assert_str_eq(line, expected);
    const char *html[] = {S2S, "heatmap", path, "--format", "html", "--head", "1", NULL};
    ck_assert_int_eq(run_command(html, out, err_path, NULL), 2);

    /* the report: per dump the mean and a panel per head, drawn by Chromium */
    snprintf(file, sizeof file, "%s/run/heatmaps/report.html", dir);
    char *dom = chromium_dom(file, dir);
    ck_assert_msg(strstr(dom, "data-heatmaps=\"9\"") != NULL, "expected 3 dumps x 3 panels");
    ck_assert_ptr_nonnull(strstr(dom, "<title>attention, step 20, sentence 2, mean of 2 heads</title>"));
    ck_assert_ptr_nonnull(strstr(dom, "<title>attention, step 20, sentence 2, head 2</title>"));
    free(dom);
    alignlog_free(&log);
}
END_TEST

/* A Transformer decoder shows each layer: training's dumps carry every decoder layer's
 * cross-attention head by head (the alignment is the last layer's heads' mean, and its
 * heads are "heads") and each layer's masked self-attention (0 above the diagonal: a
 * position never reads a later one), s2s align --out the same from the last checkpoint;
 * s2s heatmap --layer L [--head K] and --dec-self L draw one of them, and the report draws
 * them all. */
START_TEST(a_transformer_shows_each_layer_and_head)
{
    char dir[512], path[700], out[700], err_path[700], svg_dir[700], model[700], src[700],
        tgt[700], forced[700], file[800], line[1024], expected[1400];
    scratch_dir(dir, sizeof dir, "transformer");
    write_tiny_setup(dir);
    const char *sets[] = {"model.encoder_cell=none", "model.self_attention_layers=1",
                          "model.decoder_cell=none", "model.decoder_layers=2",
                          "model.attention_heads=2", "alignments.every=10", "alignments.lines=[2]",
                          NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/run/alignments.jsonl", dir);
    AlignLog log;
    Error err;
    ck_assert_msg(alignlog_read(&log, path, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(log.n, 3); /* steps 0, 10, 20 */
    for (int k = 0; k < log.n; k++) {
        const AlignRecord *r = &log.records[k];
        const int T = r->n_tgt, S = r->n_src;
        ck_assert_int_eq(r->n_layers, 2);
        ck_assert_int_eq(r->layer_heads, 2);
        ck_assert_int_eq(r->n_dec_self, 2);
        ck_assert_int_eq(r->n_heads, 2);
        const float *top = r->layers + (size_t)2 * T * S; /* layer 2, head 1 */
        for (int c = 0; c < 2 * T * S; c++)
            ck_assert_double_eq_tol(r->heads[c], top[c], 1e-6);
        for (int c = 0; c < T * S; c++)
            ck_assert_double_eq_tol(r->weights[c], (top[c] + top[T * S + c]) / 2, 1e-6);
        for (int m = 0; m < 4; m++)
            assert_rows_are_distributions(r->layers + (size_t)m * T * S, T, S);
        for (int l = 0; l < 2; l++) {
            const float *w = r->dec_self + (size_t)l * T * T;
            assert_rows_are_distributions(w, T, T);
            for (int i = 0; i < T; i++)
                for (int j = i + 1; j < T; j++)
                    ck_assert(w[i * T + j] == 0);
        }
    }
    /* s2s align --out: the same layers from the checkpoint of the last step */
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(src, sizeof src, "%s/valid.src", dir);
    snprintf(tgt, sizeof tgt, "%s/valid.tgt", dir);
    snprintf(forced, sizeof forced, "%s/forced.jsonl", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    const char *align[] = {S2S, "align", "--model", model, "--src", src, "--tgt", tgt, "--out", forced,
                           NULL};
    ck_assert_int_eq(run_command(align, out, err_path, NULL), 0);
    AlignLog again;
    ck_assert_msg(alignlog_read(&again, forced, &err) == 0, "%s", err.msg);
    const AlignRecord *last = &log.records[2], *line2 = &again.records[1];
    ck_assert_int_eq(line2->n_layers, 2);
    const int TS = last->n_tgt * last->n_src, TT = last->n_tgt * last->n_tgt;
    for (int c = 0; c < 4 * TS; c++)
        ck_assert_double_eq_tol(line2->layers[c], last->layers[c], 1e-6);
    for (int c = 0; c < 2 * TT; c++)
        ck_assert_double_eq_tol(line2->dec_self[c], last->dec_self[c], 1e-6);
    alignlog_free(&again);

    /* s2s heatmap: one layer's head, and a layer's self-attention over <s> and the words */
    snprintf(svg_dir, sizeof svg_dir, "%s/svg", dir);
    const char *layer1[] = {S2S, "heatmap", path, "--layer", "1", "--head", "2", "--out", svg_dir,
                            NULL};
    ck_assert_int_eq(run_command(layer1, out, err_path, NULL), 0);
    snprintf(file, sizeof file, "%s/heatmap-2-20-layer1-head2.svg", svg_dir);
    char *svg = read_file(file);
    ck_assert_ptr_nonnull(strstr(svg, "<title>attention, step 20, sentence 2, decoder layer 1, "
                                      "head 2</title>"));
    free(svg);
    const char *dec_self[] = {S2S, "heatmap", path, "--format", "txt", "--dec-self", "2", NULL};
    ck_assert_int_eq(run_command(dec_self, out, err_path, NULL), 0);
    char *text = read_file(out);
    ck_assert_ptr_nonnull(strstr(text, "sentence 2, decoder self-attention layer 2\n"));
    ck_assert_ptr_nonnull(strstr(text, "0:<s>"));
    free(text);
    const char *layer3[] = {S2S, "heatmap", path, "--layer", "3", NULL};
    ck_assert_int_eq(run_command(layer3, out, err_path, NULL), 2);
    first_line(err_path, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: `%s`: sentence 2 at step 20 has no "
             "Transformer decoder layer 3 (it has 2 layers of 2 heads)", path);
    ck_assert_str_eq(line, expected);
    const char *both[] = {S2S, "heatmap", path, "--dec-self", "1", "--head", "1", NULL};
    ck_assert_int_eq(run_command(both, out, err_path, NULL), 2);

    /* the report: per dump the mean, 2 heads, the encoder's layer, 2 x 2 decoder heads and
     * 2 decoder self-attentions, drawn by Chromium */
    snprintf(file, sizeof file, "%s/run/heatmaps/report.html", dir);
    char *dom = chromium_dom(file, dir);
    ck_assert_msg(strstr(dom, "data-heatmaps=\"30\"") != NULL, "expected 3 dumps x 10 panels");
    ck_assert_ptr_nonnull(strstr(dom, "<title>attention, step 20, sentence 2, decoder layer 2, "
                                      "head 1</title>"));
    ck_assert_ptr_nonnull(strstr(dom, "<title>attention, step 20, sentence 2, decoder "
                                      "self-attention layer 1</title>"));
    free(dom);
    alignlog_free(&log);
}
END_TEST

/* A hard-attention model's dumps carry the position each head chose (its argmax, in
 * the decoding mode), and every picture outlines them: SVG, text, the report. */
START_TEST(a_hard_model_shows_its_chosen_positions)
{
    char dir[512], path[700], out[700], err_path[700], svg_dir[700], file[800];
    scratch_dir(dir, sizeof dir, "hard");
    write_tiny_setup(dir);
    const char *sets[] = {"model.attention_mode=hard", "model.attention_heads=2",
                          "training.hard_warmup_steps=5", "alignments.every=10",
                          "alignments.lines=[2]", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/run/alignments.jsonl", dir);
    AlignLog log;
    Error err;
    ck_assert_msg(alignlog_read(&log, path, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(log.n, 3); /* steps 0, 10, 20 */
    const int T = log.records[0].n_tgt, S = log.records[0].n_src;
    for (int k = 0; k < log.n; k++) {
        const AlignRecord *r = &log.records[k];
        ck_assert_int_eq(r->n_chosen, 2);
        for (int h = 0; h < 2; h++)
            for (int i = 0; i < T; i++) { /* each head's most probable position */
                const float *row = r->heads + ((size_t)h * T + i) * S;
                float best = 0;
                for (int j = 0; j < S; j++)
                    best = fmaxf(best, row[j]);
                ck_assert_float_ge(row[r->chosen[i * 2 + h]], best - 1e-7f);
            }
    }
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    snprintf(svg_dir, sizeof svg_dir, "%s/svg", dir);
    /* SVG: a cell per head and row outlined; with --head 2, that head's only */
    const char *all[] = {S2S, "heatmap", path, "--out", svg_dir, NULL};
    ck_assert_int_eq(run_command(all, out, err_path, NULL), 0);
    snprintf(file, sizeof file, "%s/heatmap-2-20.svg", svg_dir);
    char *svg = read_file(file);
    ck_assert_int_eq(count_of(svg, "class=\"chosen\""), 2 * T);
    free(svg);
    const char *head2[] = {S2S, "heatmap", path, "--head", "2", "--out", svg_dir, NULL};
    ck_assert_int_eq(run_command(head2, out, err_path, NULL), 0);
    snprintf(file, sizeof file, "%s/heatmap-2-20-head2.svg", svg_dir);
    svg = read_file(file);
    ck_assert_int_eq(count_of(svg, "class=\"chosen\""), T);
    free(svg);
    /* text: one `>` per row for one head (the others close a `</s>`) */
    const char *txt[] = {S2S, "heatmap", path, "--format", "txt", "--head", "1", NULL};
    ck_assert_int_eq(run_command(txt, out, err_path, NULL), 0);
    char *text = read_file(out);
    ck_assert_int_eq(count_of(text, ">") - count_of(text, "</s>"), T);
    free(text);
    /* the report: per dump, the mean's panel (both heads' choices) and each head's */
    snprintf(file, sizeof file, "%s/run/heatmaps/report.html", dir);
    char *dom = chromium_dom(file, dir);
    ck_assert_int_eq(count_of(dom, "class=\"chosen\""), 3 * (2 * T + T + T));
    free(dom);
    alignlog_free(&log);
}
END_TEST

START_TEST(a_signal_while_the_report_is_made_waits_for_it)
{
    /* SIGTERM at the report of step 10's validation: the run saves and stops, and the
     * report it leaves shows step 10 (its reading of the run's own logs finishes) */
    char dir[512], report[700];
    scratch_dir(dir, sizeof dir, "reportsignal");
    write_tiny_setup(dir);
    char gold[700];
    snprintf(gold, sizeof gold, "data.valid_align=%s/valid.align", dir);
    const char *sets[] = {gold, "alignments.every=5", "alignments.lines=[2, 5]", NULL};
    char signal_env[64];
    snprintf(signal_env, sizeof signal_env, "S2S_FAULT_SIGNAL=report:10:%d", SIGTERM);
    const char *env[] = {signal_env, NULL};
    ck_assert_int_eq(train(S2S_FAULTS, dir, sets, env, NULL), 128 + SIGTERM);
    snprintf(report, sizeof report, "%s/run/heatmaps/report.html", dir);
    char *html = read_file(report);
    ck_assert_ptr_nonnull(strstr(html, "{\"step\":10,\"epoch\":")); /* a frame's data */
    ck_assert_ptr_nonnull(strstr(html, "<polyline")); /* the curves of metrics.jsonl */
    free(html);
    char path[700];
    snprintf(path, sizeof path, "%s/run/train.log", dir);
    char *log = read_file(path);
    ck_assert_ptr_null(strstr(log, "report not updated"));
    free(log);
}
END_TEST

/* ---- gold alignments in bounded memory ------------------------------------------------------------ */

/* Runs argv under an address-space limit of 512 MiB (none under a memory tool) and a
 * time limit of 60 s; returns the exit code, the peak memory in KiB and the first line
 * of stderr (err_path). */
static int run_limited(const char *const *argv, const char *err_path, long *rss_kib, char *line,
                       size_t cap)
{
    RunOptions opt = {.timeout = 60,
                      .max_address_space = under_memory_tool() ? 0 : (size_t)512 << 20};
    int rc = run_command_with(argv, NULL, err_path, &opt, rss_kib);
    first_line(err_path, line, cap);
    return rc;
}

/* path: 20 lines of links, one of them (line 3) of mib MiB. */
static void write_gold_with_a_huge_line(const char *path, int mib)
{
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    static char chunk[1 << 20];
    for (size_t k = 0; k < sizeof chunk; k += 4)
        memcpy(chunk + k, "0-0 ", 4);
    for (int line = 1; line <= 20; line++) {
        for (int k = 0; line == 3 && k < mib; k++)
            ck_assert_uint_eq(fwrite(chunk, 1, sizeof chunk, f), sizeof chunk);
        fputs("0-0\n", f);
    }
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(align_reads_gold_alignments_in_memory_bounded_by_the_corpus)
{
    char dir[512], model[700], src[700], tgt[700], gold[700], err[700], line[1400], expected[1400];
    long rss_kib;
    train_with_dumps(dir, sizeof dir);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(src, sizeof src, "%s/valid.src", dir);
    snprintf(tgt, sizeof tgt, "%s/valid.tgt", dir);
    snprintf(gold, sizeof gold, "%s/gold.align", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    const char *zero[] = {S2S, "align", "--model", model, "--src", src, "--tgt", tgt, "--gold",
                          "/dev/zero", NULL};
    ck_assert_int_eq(run_limited(zero, err, &rss_kib, line, sizeof line), 2);
    ck_assert_str_eq(line, "s2s: error: /dev/zero:1:1: NUL byte (expected UTF-8 text)");
    const char *argv[] = {S2S, "align", "--model", model, "--src", src, "--tgt", tgt, "--gold",
                          gold, NULL};
    write_gold_with_a_huge_line(gold, 80);
    ck_assert_int_eq(run_limited(argv, err, &rss_kib, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: %s:3: line longer than data.max_line_bytes "
             "(1048576 bytes)", gold);
    ck_assert_str_eq(line, expected);
    printf("peak memory of s2s align on a gold file with an 80 MB line: %ld KiB\n", rss_kib);
    if (!under_memory_tool())
        ck_assert_int_lt(rss_kib, 40 * 1024L);
    /* more lines than the corpus: refused at the first one too many, whatever follows */
    char valid_path[700];
    snprintf(valid_path, sizeof valid_path, "%s/valid.align", dir);
    char *valid = read_file(valid_path);
    FILE *f = fopen(gold, "w");
    ck_assert(f != NULL);
    fputs(valid, f);
    for (int k = 0; k < 1000; k++)
        fputs("0-0\n", f);
    ck_assert_int_eq(fclose(f), 0);
    free(valid);
    ck_assert_int_eq(run_limited(argv, err, &rss_kib, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: `%s` has more lines than the 20 of the corpus "
             "it aligns (its line 21 has no sentence pair)", gold);
    ck_assert_str_eq(line, expected);
    unlink(gold);
}
END_TEST

START_TEST(training_reads_gold_alignments_in_bounded_memory)
{
    char dir[512], config[700], err[700], data[4800], line[1400], expected[1400], gold[700];
    long rss_kib;
    scratch_dir(dir, sizeof dir, "goldtrain");
    write_tiny_setup(dir);
    snprintf(config, sizeof config, "%s/c.yaml", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    snprintf(gold, sizeof gold, "%s/gold.align", dir);
    write_gold_with_a_huge_line(gold, 80);
    const char *keys[] = {"valid_align", "test_align"};
    const char *files[] = {"/dev/zero", gold};
    for (int k = 0; k < 2; k++)
        for (int which = 0; which < 2; which++) {
            snprintf(data, sizeof data,
                     "  train_src: %s/train.src\n  train_tgt: %s/train.tgt\n"
                     "  valid_src: %s/valid.src\n  valid_tgt: %s/valid.tgt\n"
                     "  test_src: %s/valid.src\n  test_tgt: %s/valid.tgt\n  %s: %s",
                     dir, dir, dir, dir, dir, dir, keys[k], files[which]);
            write_data_config(dir, data);
            const char *argv[] = {S2S, "train", config, NULL};
            ck_assert_int_eq(run_limited(argv, err, &rss_kib, line, sizeof line), 2);
            if (which == 0)
                snprintf(expected, sizeof expected, "s2s: error: /dev/zero:1:1: NUL byte (expected "
                         "UTF-8 text)");
            else
                snprintf(expected, sizeof expected, "s2s: error: %s:3: line longer than "
                         "data.max_line_bytes (1048576 bytes)", gold);
            ck_assert_msg(!strcmp(line, expected), "data.%s: %s: `%s`, expected `%s`", keys[k],
                          files[which], line, expected);
            if (!under_memory_tool())
                ck_assert_int_lt(rss_kib, 40 * 1024L);
        }
    unlink(gold);
}
END_TEST

Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, training_dumps_alignments_and_aer);
    tcase_add_test(tc, report_opens_in_headless_chromium_with_every_heatmap);
    tcase_add_test(tc, heatmaps_keep_the_last_svgs_and_the_report_every_dump);
    tcase_add_test(tc, report_keeps_tokens_that_look_like_markup_as_text);
    tcase_add_test(tc, dumps_thin_out_after_max_dumps_and_keep_the_last_step);
    tcase_add_test(tc, align_command_writes_links_matrices_and_aer);
    tcase_add_test(tc, heatmap_command_draws_svg_text_and_html);
    tcase_add_test(tc, a_multi_head_model_shows_each_head);
    tcase_add_test(tc, a_transformer_shows_each_layer_and_head);
    tcase_add_test(tc, every_label_and_caption_fits_inside_its_picture);
    tcase_add_test(tc, a_hard_model_shows_its_chosen_positions);
    tcase_add_test(tc, a_signal_while_the_report_is_made_waits_for_it);
    tcase_add_test(tc, align_reads_gold_alignments_in_memory_bounded_by_the_corpus);
    tcase_add_test(tc, training_reads_gold_alignments_in_bounded_memory);
    suite_add_tcase(s, tc);
    return s;
}
