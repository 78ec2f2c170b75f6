/* align_dumps.c: the attention of the probe pairs during training (see trainer_parts.h):
 * when it is dumped, its records in alignments.jsonl, their heatmaps and the report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "base/atomicfile.h"
#include "base/fault.h"
#include "base/mem.h"
#include "report/alignlog.h"
#include "report/heatmap.h"
#include "report/picture.h"
#include "train/trainer_parts.h"

/* Whether the dump schedule has one at step: step 0 and every `every` steps, for the
 * first max_dumps dumps; from there, each time the run doubles in length, the interval
 * doubles (steps [max_dumps, 2 max_dumps) x every get one every 2 x every, the next
 * doubling one every 4 x every, ...: max_dumps / 2 more dumps each time). So
 * alignments.jsonl grows with the logarithm of the run, keeps its first dumps dense, and
 * stays append-only: the schedule is a function of the step alone. */
static int dump_scheduled(long step, long every, long max_dumps)
{
    if (step % every)
        return 0;
    long s = step / every, interval = 1;
    for (long end = max_dumps; s >= end; end *= 2)
        interval *= 2;
    return s % interval == 0;
}

/* Whether the run dumps attention at all: it has probe pairs and alignments.every. */
int dumps_on(const Trainer *t)
{
    return t->probes.n > 0 && t->cfg->alignments.every > 0;
}

/* Whether the schedule has a dump at this step. */
int dumps_due(const Trainer *t)
{
    return dumps_on(t) && dump_scheduled(t->prog.step, t->cfg->alignments.every,
                                         t->cfg->alignments.max_dumps);
}

/* Whether this step's attention is in alignments.jsonl already. */
int dumped_this_step(const Trainer *t)
{
    if (t->prog.dumped_step < 0) /* a checkpoint older than the record: the schedule says */
        return dumps_due(t);
    return t->prog.dumped_step == t->prog.step;
}

/* The heatmap of one dumped record (its line of alignments.jsonl), as `s2s heatmap`
 * draws it, into RUN_DIR/heatmaps/: heatmap-ID.svg for alignments.svg: last (replaced at
 * every dump), heatmap-ID-STEP.svg for all. A heatmap that cannot be drawn is a warning,
 * as the report is: the dumps themselves are in alignments.jsonl. */
static void draw_record(Trainer *t, const char *record, size_t len, long id)
{
    char dir[2200], path[2400];
    rundir_path(&t->run.dir, "heatmaps", dir, sizeof dir);
    if (t->cfg->alignments.svg == SVG_LAST)
        snprintf(path, sizeof path, "%s/heatmap-%ld.svg", dir, id);
    else
        snprintf(path, sizeof path, "%s/heatmap-%ld-%ld.svg", dir, id, t->prog.step);
    AlignLog log;
    Error err;
    int rc = alignlog_parse(&log, record, len, "alignments.jsonl", &err);
    if (rc == 0 && mkdir(dir, 0777) != 0 && errno != EEXIST)
        rc = error_errno(&err, "cannot create", dir);
    AtomicFile svg;
    if (rc == 0 && (rc = atomicfile_begin(&svg, path, "", &err)) == 0) {
        const AlignRecord *r = &log.records[0];
        if (r->image) /* an image model's: over its picture */
            rc = picture_record_svg(svg.f, r, "0", 1, &err);
        else
            heatmap_svg(svg.f, r, "0", 1);
        if (rc == 0)
            rc = atomicfile_commit(&svg, &err); /* checks every write */
        else
            atomicfile_abort(&svg);
    }
    alignlog_free(&log);
    if (rc < 0)
        rundir_log(&t->run.dir, "s2s: warning: heatmap not drawn: %s", err.msg);
}

/* Appends one probe's record to alignments.jsonl: formatted whole first, so that it is
 * written as one line; then draws its heatmap, unless alignments.svg is none. */
static int append_record(Trainer *t, long id, double epoch, const char *const *src_words,
                         const char *const *tgt_words, const AttnMatrix *m,
                         const AlignExtras *extra, Error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return error_errno(err, "cannot format a record of", "alignments.jsonl");
    align_write_json(f, t->prog.step, epoch, id, src_words, tgt_words, m, extra);
    int rc = fclose(f) == 0 ? rundir_alignments(&t->run.dir, text, len - 1, err)
                            : error_errno(err, "cannot format a record of", "alignments.jsonl");
    if (rc == 0 && t->cfg->alignments.svg != SVG_NONE)
        draw_record(t, text, len, id);
    free(text);
    return rc;
}

/* The attention's mean entropy over the validation set, with its AER when gold
 * alignments are known: a metrics record, and a log line when there is an AER. */
static void log_attention_scores(Trainer *t, double epoch)
{
    AerCounts aer;
    double entropy;
    evaluate_alignments(&t->val.eval, &t->model.P, t->data.valid_gold, NULL, &aer, NULL, &entropy);
    char json[512];
    if (t->data.valid_gold) {
        rundir_log(&t->run.dir, "alignments step=%ld aer=%.4f precision=%.4f recall=%.4f "
                   "attention_entropy=%.4f", t->prog.step, aer_rate(&aer), aer_precision(&aer),
                   aer_recall(&aer), entropy);
        snprintf(json, sizeof json, "{\"step\":%ld,\"epoch\":%.4f,\"aer\":%.6f,\"aer_precision\":%.6f,"
                 "\"aer_recall\":%.6f,\"attention_entropy\":%.6f}", t->prog.step, epoch,
                 aer_rate(&aer), aer_precision(&aer), aer_recall(&aer), entropy);
    } else {
        snprintf(json, sizeof json, "{\"step\":%ld,\"epoch\":%.4f,\"attention_entropy\":%.6f}",
                 t->prog.step, epoch, entropy);
    }
    rundir_metrics(&t->run.dir, json);
}

/* Appends the probes' teacher-forced attention to alignments.jsonl (one line each,
 * written whole, so a kill never leaves part of one) and logs the attention's entropy
 * over the validation set, with its AER when gold alignments are known. */
int dump_alignments(Trainer *t, Error *err)
{
    use_blas_threads(t, 1);
    fault_signal_at("dump", t->prog.step);
    const Corpus *v = t->data.valid;
    int n = t->probes.n, rc = 0;
    Batch *b = &t->probes.batch;
    corpus_batch(v, t->probes.pairs, 0, n, 1, b, NULL);
    model_forward(&t->probes.ws, &t->model.P, b);
    double epoch = epochs_progress(&t->data.batcher);
    const char **src_words = xmalloc_array((size_t)b->src_steps, sizeof(char *));
    const char **tgt_words = xmalloc_array((size_t)b->tgt_steps, sizeof(char *));
    AlignExtraRoom room;
    for (int k = 0; k < n && rc == 0; k++) {
        int pair = t->probes.pairs[k];
        int ns = b->src_len[k], nt = b->tgt_len[k];
        for (int j = 0; j < ns; j++) /* an image's cells by number */
            src_words[j] = v->pics.n ? t->probes.cell_names[j]
                                     : vocab_word(&t->data.src_vocab,
                                                  b->src[j * b->batch_size + k]);
        for (int i = 0; i < nt; i++)
            tgt_words[i] = vocab_word(&t->data.tgt_vocab, b->tgt_out[i * b->batch_size + k]);
        const AttnMatrix m = align_of_pass(&t->probes.ws, k, nt, ns);
        AlignExtras extra = align_extras_of_pass(&t->probes.ws, k, nt, ns, &room);
        extra.image = v->pics.n ? v->pics.paths[pair] : NULL;
        rc = append_record(t, v->line_no[pair], epoch, src_words, tgt_words, &m, &extra, err);
    }
    free(src_words);
    free(tgt_words);
    if (rc < 0)
        return -1;
    log_attention_scores(t, epoch);
    t->prog.dumped_step = t->prog.step;
    return 0;
}

/* Brings RUN_DIR/heatmaps/report.html up to date with alignments.jsonl and
 * metrics.jsonl. A report that cannot be written is a warning, not a reason to stop. */
void update_heatmap_report(Trainer *t)
{
    char jsonl[2200], metrics[2200], dir[2200], report[2300];
    rundir_path(&t->run.dir, "alignments.jsonl", jsonl, sizeof jsonl);
    rundir_path(&t->run.dir, "metrics.jsonl", metrics, sizeof metrics);
    rundir_path(&t->run.dir, "heatmaps", dir, sizeof dir);
    snprintf(report, sizeof report, "%s/report.html", dir);
    fault_signal_at("report", t->prog.step);
    AlignLog log;
    Error err;
    int rc = alignlog_read(&log, jsonl, &err);
    if (rc == 0 && mkdir(dir, 0777) != 0 && errno != EEXIST)
        rc = error_errno(&err, "cannot create", dir);
    if (rc == 0) {
        char title[300];
        snprintf(title, sizeof title, "s2s: %.200s, attention during training", t->cfg->name);
        rc = heatmap_report(report, &log, metrics, title, HEATMAP_REPORT_FRAMES, &err);
    }
    alignlog_free(&log);
    if (rc < 0)
        rundir_log(&t->run.dir, "s2s: warning: report not updated: %s", err.msg);
}
