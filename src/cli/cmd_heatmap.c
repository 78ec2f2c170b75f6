/* cmd_heatmap.c: `s2s heatmap`: an alignments.jsonl drawn as SVG files, the HTML report, or
 * text in the terminal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomicfile.h"
#include "base/error.h"
#include "cli/command.h"
#include "report/alignlog.h"
#include "report/heatmap.h"
#include "report/picture.h"
#include "text/termtext.h"

static const char HEATMAP_USAGE[] =
    "usage: s2s heatmap ALIGNMENTS.jsonl [--format svg|html|txt] [--step N|last|all]\n"
    "                   [--head K | --self LAYER | --layer L [--head K] | --dec-self L]\n"
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
    "The alignment of a multi-head model is the mean of its heads; --head K draws head K\n"
    "instead (heatmap-ID-STEP-headK.svg), --self LAYER the source-by-source weights of a\n"
    "self-attention layer (heatmap-ID-STEP-selfLAYER.svg); both count from 1, for svg and\n"
    "txt. A Transformer decoder's (model.decoder_cell none): its alignment is the mean of\n"
    "its last layer's cross-attention heads; --layer L draws layer L's cross-attention (the\n"
    "heads' mean, or with --head K its head K: heatmap-ID-STEP-layerL[-headK].svg), and\n"
    "--dec-self L layer L's masked self-attention, target by target\n"
    "(heatmap-ID-STEP-decselfL.svg). The report shows them all.\n"
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

typedef enum { DRAW_SVG, DRAW_HTML, DRAW_TXT } DrawFormat;

enum { STEP_LAST = -1, STEP_ALL = -2 };

typedef struct {
    const char *input, *out_dir, *step_arg;
    DrawFormat format;
    long step;          /* a step, STEP_LAST or STEP_ALL */
    int head, self;     /* draw this head, or this self-attention layer (from 1; 0: no) */
    int layer, dec_self; /* a Transformer decoder's layer: its cross-attention (with head,
                          * its head), or its masked self-attention (from 1; 0: no) */
} HeatmapOptions;

/* Reads the options into o. Returns -1 to go on, or the exit code (--help, an error). */
static int parse_options(HeatmapOptions *o, int argc, char **argv)
{
    const char *format = "svg";
    enum { HELP, FORMAT, STEP, OUT, HEAD, SELF, LAYER, DEC_SELF };
    static const CmdOption OPTS[] = {[HELP] = {"--help", 0}, [FORMAT] = {"--format", 1},
                                     [STEP] = {"--step", 1}, [OUT] = {"--out", 1},
                                     [HEAD] = {"--head", 1}, [SELF] = {"--self", 1},
                                     [LAYER] = {"--layer", 1}, [DEC_SELF] = {"--dec-self", 1},
                                     {NULL, 0}};
    *o = (HeatmapOptions){0};
    for (int a = 0; a < argc; a++) {
        const char *value = NULL;
        int opt = cmd_option("heatmap", OPTS, argc, argv, &a, &value);
        switch (opt) {
        case -2:
            return EXIT_USAGE;
        case -1:
            if (o->input)
                return cmd_usage_error("heatmap: one input only (got a second: `%s`)", argv[a]);
            o->input = argv[a];
            break;
        case HELP:
            fputs(HEATMAP_USAGE, stdout);
            return EXIT_OK;
        case FORMAT:
            format = value;
            break;
        case STEP:
            o->step_arg = value;
            break;
        case OUT:
            o->out_dir = value;
            break;
        case HEAD:
        case SELF:
        case LAYER:
        case DEC_SELF: {
            char *end;
            long k = strtol(value, &end, 10);
            static const char *const WANT[] = {
                [HEAD] = "--head: expected a head from 1 to 64, got `%s`",
                [SELF] = "--self: expected a layer from 1 to 64, got `%s`",
                [LAYER] = "--layer: expected a layer from 1 to 64, got `%s`",
                [DEC_SELF] = "--dec-self: expected a layer from 1 to 64, got `%s`"};
            if (*end || end == value || k < 1 || k > 64)
                return cmd_usage_error(WANT[opt], value);
            *(opt == HEAD ? &o->head : opt == SELF ? &o->self : opt == LAYER ? &o->layer
                                                                         : &o->dec_self) = (int)k;
            break;
        }
        }
    }
    if (!o->input)
        return cmd_usage_error("%s", "heatmap needs ALIGNMENTS.jsonl (see s2s heatmap --help)");
    if (!strcmp(format, "svg"))
        o->format = DRAW_SVG;
    else if (!strcmp(format, "html"))
        o->format = DRAW_HTML;
    else if (!strcmp(format, "txt"))
        o->format = DRAW_TXT;
    else
        return cmd_usage_error("--format: expected svg, html or txt, got `%s`", format);
    if ((o->self != 0) + (o->layer != 0) + (o->dec_self != 0) > 1 || (o->head && (o->self || o->dec_self)))
        return cmd_usage_error("%s", "heatmap: one view: --head K, --self L, --layer L (with or "
                               "without --head K) or --dec-self L (see s2s heatmap --help)");
    if ((o->head || o->self || o->layer || o->dec_self) && o->format == DRAW_HTML)
        return cmd_usage_error("%s", "heatmap: the report shows every head and layer; --head, "
                               "--self, --layer and --dec-self are for svg and txt");
    if (!o->step_arg)
        o->step = o->format == DRAW_HTML ? STEP_ALL : STEP_LAST;
    else if (!strcmp(o->step_arg, "last"))
        o->step = STEP_LAST;
    else if (!strcmp(o->step_arg, "all"))
        o->step = STEP_ALL;
    else {
        char *end;
        o->step = strtol(o->step_arg, &end, 10);
        if (*end || o->step < 0)
            return cmd_usage_error("--step: expected a step number, last or all, got `%s`",
                                   o->step_arg);
    }
    return -1;
}

/* Moves the records to draw to the front of log -- the last step of each sentence, one
 * step, or all -- and returns their number (the others stay behind them, to be freed). */
static int select_records(AlignLog *log, long step)
{
    int kept = 0;
    for (int k = 0; k < log->n; k++) {
        const AlignRecord *r = &log->records[k];
        int keep = step == STEP_ALL || r->step == step;
        if (step == STEP_LAST) {
            keep = 1;
            for (int m = k + 1; m < log->n && keep; m++)
                keep = log->records[m].id != r->id || log->records[m].step < r->step;
        }
        if (keep) {
            AlignRecord tmp = log->records[kept];
            log->records[kept++] = *r;
            log->records[k] = tmp;
        }
    }
    return kept;
}

/* The first n records on stdout, in colour on a terminal. */
static int draw_text(const AlignRecord *records, int n)
{
    int color = isatty(STDOUT_FILENO);
    for (int k = 0; k < n; k++)
        heatmap_txt(stdout, &records[k], color);
    return cmd_flush_stdout() == 0 ? EXIT_OK : EXIT_IO;
}

/* One SVG file per record in dir, each through a temporary: never half a file, nor a
 * write through a link planted at the name. A head's or layer's picture is named for it
 * (heatmap-ID-STEP-headK.svg, -selfL.svg), beside the alignment's, not over it. */
static int draw_svg_files(const AlignRecord *records, int n, const char *dir,
                          const HeatmapOptions *o)
{
    char path[4400], view[32] = "";
    Error err;
    if (o->layer)
        snprintf(view, sizeof view, "-layer%d", o->layer);
    else if (o->dec_self)
        snprintf(view, sizeof view, "-decself%d", o->dec_self);
    else if (o->self)
        snprintf(view, sizeof view, "-self%d", o->self);
    if (o->head)
        snprintf(view + strlen(view), sizeof view - strlen(view), "-head%d", o->head);
    for (int k = 0; k < n; k++) {
        const AlignRecord *r = &records[k];
        snprintf(path, sizeof path, "%s/heatmap-%ld-%ld%s.svg", dir, r->id, r->step, view);
        AtomicFile svg;
        if (atomicfile_begin(&svg, path, "", &err) < 0)
            return cmd_error(&err, EXIT_IO);
        /* an image model's alignment: over its picture */
        if (r->image && !o->head && !o->self && !o->dec_self) {
            if (picture_record_svg(svg.f, r, "0", 1, &err) < 0) {
                atomicfile_abort(&svg);
                return cmd_error(&err, EXIT_USAGE);
            }
        } else {
            heatmap_svg(svg.f, r, "0", 1);
        }
        if (atomicfile_commit(&svg, &err) < 0) /* checks every write */
            return cmd_error(&err, EXIT_IO);
    }
    char what[4200];
    snprintf(what, sizeof what, "%d SVG file%s to %s", n, plural(n), dir);
    say_wrote(what);
    return EXIT_OK;
}

/* The HTML report of log in dir, with the learning curves of the metrics.jsonl beside
 * the input. */
static int draw_report(const AlignLog *log, const char *input, const char *dir)
{
    char metrics[4100], path[4400];
    Error err;
    dir_of(input, metrics, sizeof metrics);
    strncat(metrics, "/metrics.jsonl", sizeof metrics - strlen(metrics) - 1);
    snprintf(path, sizeof path, "%s/report.html", dir);
    int written = heatmap_report(path, log, metrics, "s2s: attention during training",
                                 HEATMAP_REPORT_FRAMES, &err);
    if (written < 0) /* -2: metrics.jsonl is no text */
        return cmd_error(&err, written == -2 ? EXIT_USAGE : EXIT_IO);
    say_wrote(path);
    return EXIT_OK;
}

/* SVG files or the report in the output folder (made if need be). */
static int draw_files(const AlignLog *log, const HeatmapOptions *o)
{
    char dir[4096];
    if (o->out_dir)
        snprintf(dir, sizeof dir, "%s", o->out_dir);
    else {
        char base[4000];
        dir_of(o->input, base, sizeof base);
        snprintf(dir, sizeof dir, "%s/heatmaps", base);
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        Error err;
        error_errno(&err, "cannot create", dir);
        return cmd_error(&err, EXIT_IO);
    }
    if (o->format == DRAW_HTML)
        return draw_report(log, o->input, dir);
    return draw_svg_files(log->records, log->n, dir, o);
}

/* With --head, --self, --layer or --dec-self, each record's weights become that head's or
 * layer's. */
static int choose_matrices(AlignLog *log, const HeatmapOptions *o)
{
    for (int k = 0; k < log->n && (o->head || o->self || o->layer || o->dec_self); k++)
        if (alignrecord_select(&log->records[k], o->head, o->self, o->layer, o->dec_self) < 0) {
            const AlignRecord *r = &log->records[k];
            Error err;
            if (o->layer || o->dec_self)
                error_set(&err, "`%s`: sentence %ld at step %ld has no Transformer decoder layer %d%s "
                          "(it has %d layer%s of %d head%s)", o->input, r->id, r->step,
                          o->layer ? o->layer : o->dec_self,
                          o->head ? " with that head" : "", r->n_layers, r->n_layers == 1 ? "" : "s",
                          r->layer_heads, r->layer_heads == 1 ? "" : "s");
            else if (o->head)
                error_set(&err, "`%s`: sentence %ld at step %ld has no head %d (it has %d)",
                          o->input, r->id, r->step, o->head, r->n_heads ? r->n_heads : 1);
            else
                error_set(&err, "`%s`: sentence %ld at step %ld has no self-attention layer %d "
                          "(it has %d)", o->input, r->id, r->step, o->self, r->n_self);
            return cmd_error(&err, EXIT_USAGE);
        }
    return EXIT_OK;
}

int cmd_heatmap(int argc, char **argv)
{
    HeatmapOptions o;
    int rc = parse_options(&o, argc, argv);
    if (rc >= 0)
        return rc;
    AlignLog log;
    Error err;
    if (alignlog_read(&log, o.input, &err) < 0) {
        alignlog_free(&log);
        return cmd_error(&err, EXIT_USAGE);
    }
    if (log.n == 0) {
        alignlog_free(&log);
        error_set(&err, "`%s` holds no attention matrices", o.input);
        return cmd_error(&err, EXIT_USAGE);
    }
    int n_all = log.n;
    log.n = select_records(&log, o.step); /* the rest are freed below, with the count back */
    rc = log.n ? choose_matrices(&log, &o) : EXIT_OK;
    if (log.n == 0) {
        error_set(&err, "`%s` has no attention matrices of step %s", o.input, o.step_arg);
        rc = cmd_error(&err, EXIT_USAGE);
    } else if (rc == EXIT_OK) {
        rc = o.format == DRAW_TXT ? draw_text(log.records, log.n) : draw_files(&log, &o);
    }
    log.n = n_all;
    alignlog_free(&log);
    return rc;
}
