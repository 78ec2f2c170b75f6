/* cmd_align.c: `s2s align` (teacher-forced attention of given pairs: JSONL matrices,
 * Pharaoh links, AER against gold) and `s2s heatmap` (SVG files, the HTML report, or
 * text in the terminal). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/links.h"
#include "report/alignlog.h"
#include "base/atomicfile.h"
#include "train/checkpoint.h"
#include "cli/command.h"
#include "data/corpus.h"
#include "report/heatmap.h"
#include "base/mem.h"
#include "nn/model.h"
#include "text/termtext.h"

/* ---- s2s align ------------------------------------------------------------------------------ */

static const char ALIGN_USAGE[] =
    "usage: s2s align --model CKPT --src FILE --tgt FILE [--gold FILE] [--out FILE]\n"
    "                 [--threshold P]\n"
    "\n"
    "Runs the model over the given sentence pairs with teacher forcing and reads its\n"
    "attention as a word alignment. stdout: one line per pair, Pharaoh links j-i (0-based\n"
    "source and target tokens): for each target word the source word it attends to most,\n"
    "or with --threshold every source word with a weight above P; </s> is left out.\n"
    "--out FILE writes the attention matrices as JSONL (the format of alignments.jsonl).\n"
    "--gold FILE (links j-i sure, j?i possible; one line per line of the corpus files)\n"
    "prints AER, precision and recall on stderr.\n"
    "Tokenization, lowercasing and data.max_line_bytes are the model's. An option's value\n"
    "is the next argument: --out FILE, not --out=FILE.\n";

enum { ALIGN_BATCH = 32 };

int cmd_align(int argc, char **argv)
{
    const char *model = NULL, *src = NULL, *tgt = NULL, *gold_path = NULL, *out_path = NULL;
    float threshold = 0;
    enum { HELP, MODEL, SRC, TGT, GOLD, OUT, THRESHOLD };
    static const CmdOption OPTS[] = {
        [HELP] = {"--help", 0}, [MODEL] = {"--model", 1}, [SRC] = {"--src", 1},
        [TGT] = {"--tgt", 1}, [GOLD] = {"--gold", 1}, [OUT] = {"--out", 1},
        [THRESHOLD] = {"--threshold", 1}, {NULL, 0}};
    for (int a = 0; a < argc; a++) {
        const char *value = NULL;
        char *end;
        switch (cmd_option("align", OPTS, argc, argv, &a, &value)) {
        case -2:
            return EXIT_USAGE;
        case -1:
            return cmd_usage_error("align: unexpected argument `%s` (see s2s align --help)", argv[a]);
        case HELP:
            fputs(ALIGN_USAGE, stdout);
            return EXIT_OK;
        case MODEL:
            model = value;
            break;
        case SRC:
            src = value;
            break;
        case TGT:
            tgt = value;
            break;
        case GOLD:
            gold_path = value;
            break;
        case OUT:
            out_path = value;
            break;
        case THRESHOLD:
            threshold = strtof(value, &end);
            if (*end || end == value || !(threshold > 0 && threshold < 1))
                return cmd_usage_error("--threshold: expected a number between 0 and 1, got `%s`", value);
            break;
        }
    }
    if (!model || !src || !tgt)
        return cmd_usage_error("%s", "align needs --model, --src and --tgt (see s2s align --help)");

    Checkpoint ck;
    Corpus c;
    GoldAlignments gold = {0};
    Workspace ws = {0};
    Batch bt = {0};
    FILE *out = NULL;
    Error err;
    int rc = EXIT_USAGE;
    memset(&c, 0, sizeof c);
    if (checkpoint_load(&ck, model, 0, &err) < 0)
        goto done;
    if (!model_has_alignments(&ck.dims)) {
        error_set(&err, "%s: the model has no attention (model.attention: none), so no "
                  "alignments", model);
        goto done;
    }
    CorpusSpec spec = {.src_path = src, .tgt_path = tgt,
                       .level = ck.config.data.level,
                       .lowercase = ck.config.data.lowercase, .max_length = 0,
                       .max_line_bytes = ck.config.data.max_line_bytes};
    if (corpus_read(&c, &spec, &ck.src_vocab, &ck.tgt_vocab, 0, "alignment", &err) < 0)
        goto done;
    if (gold_path &&
        gold_read(&gold, gold_path, &c, (size_t)ck.config.data.max_line_bytes, &err) < 0)
        goto done;
    if (out_path && !(out = fopen(out_path, "w"))) {
        error_errno(&err, "cannot write", out_path);
        rc = EXIT_IO;
        goto done;
    }
    model_workspace_init(&ws, &ck.dims, ALIGN_BATCH, c.max_src_len + 1, c.max_tgt_len + 1, 0);
    batch_init(&bt, ALIGN_BATCH, c.max_src_len + 1, c.max_tgt_len + 1);
    const int *sp[ALIGN_BATCH], *tp[ALIGN_BATCH];
    int sn[ALIGN_BATCH], tn[ALIGN_BATCH];
    int max_links = (c.max_src_len + 1) * (c.max_tgt_len + 1);
    Link *links = xmalloc_array((size_t)max_links, sizeof(Link));
    char *text = xmalloc((size_t)max_links * 16 + 1);
    const char **sw = xmalloc_array((size_t)c.max_src_len + 1, sizeof(char *));
    const char **tw = xmalloc_array((size_t)c.max_tgt_len + 1, sizeof(char *));
    AerCounts aer = {0};
    long next_line = 1; /* empty pairs were skipped: they get empty lines */
    for (int first = 0; first < c.n; first += ALIGN_BATCH) {
        int count = c.n - first < ALIGN_BATCH ? c.n - first : ALIGN_BATCH;
        for (int k = 0; k < count; k++) {
            sp[k] = c.ids + c.src_start[first + k];
            tp[k] = c.ids + c.tgt_start[first + k];
            sn[k] = c.src_len[first + k];
            tn[k] = c.tgt_len[first + k];
        }
        batch_fill(&bt, count, sp, sn, tp, tn);
        model_forward(&ws, &ck.params, &bt);
        for (int k = 0; k < count; k++) {
            int pair = first + k;
            for (; next_line < c.line_no[pair]; next_line++)
                putchar('\n');
            next_line++;
            AttnMatrix m = {ws.alpha + k, bt.tgt_len[k], bt.src_len[k],
                            (long)bt.src_steps * count, count};
            int n = align_hard_links(&m, threshold, links, max_links);
            align_format_links(links, n, text, (size_t)max_links * 16 + 1);
            puts(text);
            if (gold_path)
                aer_add(&aer, links, n, gold.links + gold.start[pair], gold.count[pair]);
            if (out) {
                for (int j = 0; j < m.cols; j++)
                    sw[j] = vocab_word(&ck.src_vocab, bt.src[j * count + k]);
                for (int i = 0; i < m.rows; i++)
                    tw[i] = vocab_word(&ck.tgt_vocab, bt.tgt_out[i * count + k]);
                if (align_write_json(out, ck.step, -1, c.line_no[pair], sw, tw, &m) < 0)
                    break;
            }
        }
    }
    free(links);
    free(text);
    free(sw);
    free(tw);
    if (out && (ferror(out) || fclose(out) != 0)) {
        out = NULL;
        error_errno(&err, "cannot write", out_path);
        rc = EXIT_IO;
        goto done;
    }
    out = NULL;
    if (gold_path)
        fprintf(stderr, "AER = %.4f (precision %.4f, recall %.4f; %d pairs, %ld links, %ld sure "
                "gold links)\n", aer_rate(&aer), aer_precision(&aer), aer_recall(&aer), c.n,
                aer.hyp, aer.sure);
    rc = fflush(stdout) == 0 ? EXIT_OK : EXIT_IO;
    if (rc)
        error_errno(&err, "cannot write", "stdout");
done:
    if (out)
        fclose(out);
    model_workspace_free(&ws);
    batch_free(&bt);
    gold_free(&gold);
    corpus_free(&c);
    checkpoint_free(&ck);
    return rc == EXIT_OK ? EXIT_OK : cmd_error(&err, rc);
}

/* ---- s2s heatmap ---------------------------------------------------------------------------- */

static const char HEATMAP_USAGE[] =
    "usage: s2s heatmap ALIGNMENTS.jsonl [--format svg|html|txt] [--step N|last|all]\n"
    "                   [--out DIR]\n"
    "\n"
    "Draws the attention matrices of an alignments.jsonl (written by s2s train, or by\n"
    "s2s align --out):\n"
    "  svg   one file per sentence and step, DIR/heatmap-ID-STEP.svg (default: last step)\n"
    "  html  DIR/report.html, self-contained: per sentence a slider over the training\n"
    "        steps, and the learning curves of the metrics.jsonl beside the input\n"
    "        (default: all steps)\n"
    "  txt   the matrices on stdout with shade blocks, in colour on a terminal\n"
    "        (default: last step)\n"
    "DIR defaults to heatmaps/ beside ALIGNMENTS.jsonl; files are replaced whole (never\n"
    "half written). Control characters in tokens are drawn as U+FFFD in text. An option's\n"
    "value is the next argument: --step all, not --step=all.\n";

/* "s2s heatmap: wrote WHAT" on stderr, the paths in what escaped (termtext.h). */
static void say_wrote(const char *what)
{
    char safe[4 * 4200];
    fprintf(stderr, "s2s heatmap: wrote %s\n", termtext_escape(safe, sizeof safe, what));
}

/* The directory of path ("." if none) into out. */
static void dir_of(const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "%s", path);
    char *slash = strrchr(out, '/');
    if (slash)
        *(slash == out ? slash + 1 : slash) = '\0';
    else
        snprintf(out, cap, ".");
}

int cmd_heatmap(int argc, char **argv)
{
    const char *input = NULL, *format = "svg", *step_arg = NULL, *out_dir = NULL;
    enum { HELP, FORMAT, STEP, OUT };
    static const CmdOption OPTS[] = {[HELP] = {"--help", 0}, [FORMAT] = {"--format", 1},
                                     [STEP] = {"--step", 1}, [OUT] = {"--out", 1}, {NULL, 0}};
    for (int a = 0; a < argc; a++) {
        const char *value = NULL;
        switch (cmd_option("heatmap", OPTS, argc, argv, &a, &value)) {
        case -2:
            return EXIT_USAGE;
        case -1:
            if (input)
                return cmd_usage_error("heatmap: one input only (got a second: `%s`)", argv[a]);
            input = argv[a];
            break;
        case HELP:
            fputs(HEATMAP_USAGE, stdout);
            return EXIT_OK;
        case FORMAT:
            format = value;
            break;
        case STEP:
            step_arg = value;
            break;
        case OUT:
            out_dir = value;
            break;
        }
    }
    if (!input)
        return cmd_usage_error("%s", "heatmap needs ALIGNMENTS.jsonl (see s2s heatmap --help)");
    int html = !strcmp(format, "html"), txt = !strcmp(format, "txt");
    if (!html && !txt && strcmp(format, "svg"))
        return cmd_usage_error("--format: expected svg, html or txt, got `%s`", format);
    long want_step = -1; /* -1: last; -2: all */
    if (!step_arg)
        want_step = html ? -2 : -1;
    else if (!strcmp(step_arg, "last"))
        want_step = -1;
    else if (!strcmp(step_arg, "all"))
        want_step = -2;
    else {
        char *end;
        want_step = strtol(step_arg, &end, 10);
        if (*end || want_step < 0)
            return cmd_usage_error("--step: expected a step number, last or all, got `%s`", step_arg);
    }
    AlignLog log;
    Error err;
    if (alignlog_read(&log, input, &err) < 0) {
        alignlog_free(&log);
        return cmd_error(&err, EXIT_USAGE);
    }
    if (log.n == 0) {
        alignlog_free(&log);
        error_set(&err, "`%s` holds no attention matrices", input);
        return cmd_error(&err, EXIT_USAGE);
    }
    /* keep the selected records: the last step of each sentence, one step, or all */
    int kept = 0;
    for (int k = 0; k < log.n; k++) {
        const AlignRecord *r = &log.records[k];
        int keep = want_step == -2 || r->step == want_step;
        if (want_step == -1) {
            keep = 1;
            for (int m = k + 1; m < log.n && keep; m++)
                keep = log.records[m].id != r->id || log.records[m].step < r->step;
        }
        if (keep) {
            AlignRecord tmp = log.records[kept];
            log.records[kept++] = *r;
            log.records[k] = tmp;
        }
    }
    int n_all = log.n;
    log.n = kept; /* the rest are freed below, after restoring the count */
    int rc = EXIT_OK;
    if (kept == 0) {
        error_set(&err, "`%s` has no attention matrices of step %s", input, step_arg);
        rc = cmd_error(&err, EXIT_USAGE);
    } else if (txt) {
        int color = isatty(STDOUT_FILENO);
        for (int k = 0; k < log.n; k++)
            heatmap_txt(stdout, &log.records[k], color);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            error_errno(&err, "cannot write", "stdout");
            rc = cmd_error(&err, EXIT_IO);
        }
    } else {
        char dir[4096], path[4400];
        if (out_dir)
            snprintf(dir, sizeof dir, "%s", out_dir);
        else {
            char base[4000];
            dir_of(input, base, sizeof base);
            snprintf(dir, sizeof dir, "%s/heatmaps", base);
        }
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            error_errno(&err, "cannot create", dir);
            rc = cmd_error(&err, EXIT_IO);
        } else if (html) {
            char metrics[4100];
            dir_of(input, metrics, sizeof metrics);
            strncat(metrics, "/metrics.jsonl", sizeof metrics - strlen(metrics) - 1);
            snprintf(path, sizeof path, "%s/report.html", dir);
            int written = heatmap_report(path, &log, metrics, "s2s: attention during training",
                                         60, &err);
            if (written < 0) /* -2: metrics.jsonl is no text */
                rc = cmd_error(&err, written == -2 ? EXIT_USAGE : EXIT_IO);
            else
                say_wrote(path);
        } else {
            for (int k = 0; k < log.n && rc == EXIT_OK; k++) {
                const AlignRecord *r = &log.records[k];
                snprintf(path, sizeof path, "%s/heatmap-%ld-%ld.svg", dir, r->id, r->step);
                /* through a temporary: never half a file, nor a write through a link
                 * planted at the name */
                AtomicFile svg;
                int failed = atomicfile_begin(&svg, path, "", &err) < 0;
                if (!failed) {
                    heatmap_svg(svg.f, r, "0", 1);
                    failed = atomicfile_commit(&svg, &err) < 0; /* checks every write */
                }
                if (failed)
                    rc = cmd_error(&err, EXIT_IO);
            }
            if (rc == EXIT_OK) {
                char what[4200];
                snprintf(what, sizeof what, "%d SVG files to %s", log.n, dir);
                say_wrote(what);
            }
        }
    }
    log.n = n_all;
    alignlog_free(&log);
    return rc;
}
