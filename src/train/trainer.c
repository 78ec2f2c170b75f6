/* trainer.c: the training loop of `s2s train` (see trainer.h). Allocates everything before
 * the first step; a step never allocates. */
#include "train/trainer.h"

#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/atomicfile.h"
#include "base/fault.h"
#include "base/interrupt.h"
#include "base/mem.h"
#include "data/corpus.h"
#include "data/epochs.h"
#include "data/vocab.h"
#include "model/model.h"
#include "report/alignlog.h"
#include "report/heatmap.h"
#include "report/links.h"
#include "text/number.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/model_grad.h"
#include "train/optim.h"
#include "train/rundir.h"

typedef struct {
    Config *cfg;
    char *config_yaml;
    Vocab src_vocab, tgt_vocab;
    Corpus train, valid, test;
    int has_valid, has_test;
    Dims dims;
    Params P;
    ModelGrad G;
    Workspace ws;
    Optimizer opt;
    Epochs batcher;
    Batch batch;
    Evaluator eval;
    Progress prog;
    RunDir run;
    long last_saved;       /* step that checkpoints/last.ckpt holds (-1: none yet) */
    /* alignment dumps: the probe pairs of the validation set, and its gold links */
    GoldAlignments gold, test_gold; /* of the validation and the test pairs */
    int has_gold, has_test_gold, n_probes;
    int *probes;           /* pair index in t->valid of each probe */
    Workspace probe_ws;
    Batch probe_batch;
    /* since the last log line (saved in checkpoints: a resumed run's next line averages
     * over the same steps as a straight run's) */
    double log_loss;
    long log_steps, log_tokens;
    double log_seconds, live_at;
} Trainer;

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static CorpusSpec corpus_spec(const Config *cfg, const char *src, const char *tgt,
                              const char *tsv, long max_length, int keep_refs)
{
    return (CorpusSpec){.src_path = src[0] ? src : NULL, .tgt_path = tgt[0] ? tgt : NULL,
                        .tsv_path = tsv[0] ? tsv : NULL, .tsv_reverse = cfg->data.tsv_reverse,
                        .level = cfg->data.level,
                        .lowercase = cfg->data.lowercase, .max_length = max_length,
                        .max_line_bytes = cfg->data.max_line_bytes, .keep_refs = keep_refs,
                        .natural = cfg->translate.detokenize};
}

/* ---- setting up ------------------------------------------------------------------------- */

/* Resuming: the settings that shape the model or the training must be the ones the
 * checkpoint was made with; those it has no use for (config_key_unused) may change. The
 * keys that decide what is used are themselves compared. */
static int check_resume_config(const Config *now, const Config *then, const char *path, Error *err)
{
    char diff[ERROR_MSG_MAX] = "";
    int n = 0;
    for (int k = 0; k < config_n_keys(); k++) {
        if (config_key_free_on_resume(k) || config_key_unused(then, k))
            continue;
        char a[CONFIG_STR_MAX + 64], b[CONFIG_STR_MAX + 64];
        config_key_resolved_value(then, k, a, sizeof a);
        config_key_resolved_value(now, k, b, sizeof b);
        if (!strcmp(a, b))
            continue;
        size_t used = strlen(diff);
        snprintf(diff + used, sizeof diff - used, "%s%s (%.200s in the checkpoint, %.200s now)",
                 n++ ? "; " : "", config_key_path(k), a, b);
    }
    if (n)
        return error_set(err, "cannot resume from `%s`: %d setting%s differ%s: %s", path, n,
                         n > 1 ? "s" : "", n > 1 ? "" : "s", diff);
    return 0;
}

/* The probe pairs whose attention is dumped: alignments.lines of the validation
 * files, or its first alignments.probes pairs. */
static int choose_probes(Trainer *t, Error *err)
{
    const Config *cfg = t->cfg;
    const ConfigIntList *lines = &cfg->alignments.lines;
    int want = lines->n ? lines->n : (int)cfg->alignments.probes;
    const Dims arch = config_model_dims(cfg, 1, 1); /* before the vocabularies are known */
    if (!model_has_alignments(&arch)) /* nothing attends: nothing to dump */
        want = 0;
    if (want > t->valid.n)
        want = t->valid.n;
    t->probes = xmalloc_array((size_t)want + 1, sizeof(int));
    for (int k = 0; k < want; k++) {
        if (!lines->n) {
            t->probes[k] = k;
            continue;
        }
        int found = -1;
        for (int pair = 0; pair < t->valid.n && found < 0; pair++)
            if (t->valid.line_no[pair] == lines->v[k])
                found = pair;
        if (found < 0)
            return error_set(err, "alignments.lines: line %ld of the validation set is not a "
                             "usable pair (it is empty, or past the end)", lines->v[k]);
        t->probes[k] = found;
    }
    t->n_probes = want;
    return 0;
}

/* The training pairs, and the vocabularies: the checkpoint's (ck), else built from the
 * pairs' counts. */
static int read_training_pairs(Trainer *t, Checkpoint *ck, Error *err)
{
    const Config *cfg = t->cfg;
    CorpusSpec spec = corpus_spec(cfg, cfg->data.train_src, cfg->data.train_tgt,
                                  cfg->data.train_tsv, cfg->data.max_length, 0);
    if (ck) {
        /* the vocabularies are the checkpoint's */
        t->src_vocab = ck->src_vocab;
        t->tgt_vocab = ck->tgt_vocab;
        memset(&ck->src_vocab, 0, sizeof ck->src_vocab);
        memset(&ck->tgt_vocab, 0, sizeof ck->tgt_vocab);
        if (corpus_read(&t->train, &spec, &t->src_vocab, &t->tgt_vocab, 0, "training", err) < 0)
            return -1;
    } else {
        Vocab src_counts, tgt_counts;
        vocab_init(&src_counts);
        vocab_init(&tgt_counts);
        int rc = corpus_read(&t->train, &spec, &src_counts, &tgt_counts, 1, "training", err);
        if (rc == 0) {
            vocab_build(&t->src_vocab, &src_counts, (int)cfg->data.src_vocab_size,
                        (int)cfg->data.src_min_freq);
            vocab_build(&t->tgt_vocab, &tgt_counts, (int)cfg->data.tgt_vocab_size,
                        (int)cfg->data.tgt_min_freq);
            corpus_remap(&t->train, &src_counts, &t->src_vocab, &tgt_counts, &t->tgt_vocab);
        }
        vocab_free(&src_counts);
        vocab_free(&tgt_counts);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* The files of a held-out set as the config names them ("" for none). */
typedef struct {
    const char *src, *tgt, *tsv, *align;
} HeldOutFiles;

/* A held-out set (name: "validation" or "test", for messages) in the training
 * vocabularies, and its gold alignments if it has them (*has_gold then 1). Every
 * non-empty pair counts, however long. */
static int read_held_out(Trainer *t, const char *name, HeldOutFiles files, Corpus *pairs,
                         GoldAlignments *gold, int *has_gold, Error *err)
{
    const Config *cfg = t->cfg;
    CorpusSpec spec = corpus_spec(cfg, files.src, files.tgt, files.tsv, 0, 1);
    if (corpus_read(pairs, &spec, &t->src_vocab, &t->tgt_vocab, 0, name, err) < 0)
        return -1;
    if (files.align[0]) { /* read now: a bad test file must not wait for the end */
        if (gold_read(gold, files.align, pairs, (size_t)cfg->data.max_line_bytes, err) < 0)
            return -1;
        *has_gold = 1;
    }
    return 0;
}

/* The training pairs, the validation and test pairs, their gold alignments, the probes. */
static int read_data(Trainer *t, Checkpoint *ck, Error *err)
{
    const Config *cfg = t->cfg;
    if (read_training_pairs(t, ck, err) < 0)
        return -1;
    t->has_valid = cfg->data.valid_src[0] || cfg->data.valid_tsv[0];
    if (t->has_valid) {
        const HeldOutFiles files = {cfg->data.valid_src, cfg->data.valid_tgt,
                                    cfg->data.valid_tsv, cfg->data.valid_align};
        if (read_held_out(t, "validation", files, &t->valid, &t->gold, &t->has_gold, err) < 0 ||
            choose_probes(t, err) < 0)
            return -1;
    }
    t->has_test = cfg->data.test_src[0] || cfg->data.test_tsv[0];
    if (t->has_test) {
        const HeldOutFiles files = {cfg->data.test_src, cfg->data.test_tgt, cfg->data.test_tsv,
                                    cfg->data.test_align};
        if (read_held_out(t, "test", files, &t->test, &t->test_gold, &t->has_test_gold, err) < 0)
            return -1;
    }
    return 0;
}

/* The weights, the optimizer and the progress: the checkpoint's when resuming (ck), else
 * fresh ones from the seed. */
static void restore_or_start(Trainer *t, Checkpoint *ck)
{
    const Config *cfg = t->cfg;
    if (ck) {
        memcpy(t->P.mem, ck->params.mem, sizeof(float) * t->P.n);
        t->opt = ck->optim;
        memset(&ck->optim, 0, sizeof ck->optim);
        t->prog = ck->progress;
        t->log_loss = t->prog.log_loss;
        t->log_steps = t->prog.log_steps;
        t->log_tokens = t->prog.log_tokens;
        t->log_seconds = t->prog.log_seconds;
    } else {
        Pcg32 init;
        pcg32_seed(&init, (uint64_t)cfg->seed, RNG_STREAM_INIT);
        params_init(&t->P, &init, (float)cfg->model.init_range);
        const OptimKind kinds[] = {OPTIM_ADAM, OPTIM_SGD, OPTIM_ADADELTA};
        optim_init(&t->opt, kinds[cfg->training.optimizer], t->P.n, (float)cfg->training.learning_rate);
        if (cfg->training.optimizer == OPTIMIZER_ADADELTA) {
            t->opt.beta2 = (float)cfg->training.adadelta_rho;
            t->opt.eps = (float)cfg->training.adadelta_eps;
        } else {
            t->opt.beta1 = (float)cfg->training.adam_beta1;
            t->opt.beta2 = (float)cfg->training.adam_beta2;
            t->opt.eps = (float)cfg->training.adam_eps;
        }
        t->prog = (Progress){.lr = cfg->training.learning_rate, .best_score = -INFINITY};
    }
}

/* The workspace and batch of the alignment dumps, sized for the longest probe pair. */
static void init_probe_buffers(Trainer *t, int argmax)
{
    int max_src = 0, max_tgt = 0;
    for (int k = 0; k < t->n_probes; k++) {
        max_src = t->valid.src_len[t->probes[k]] > max_src ? t->valid.src_len[t->probes[k]] : max_src;
        max_tgt = t->valid.tgt_len[t->probes[k]] > max_tgt ? t->valid.tgt_len[t->probes[k]] : max_tgt;
    }
    model_workspace_init(&t->probe_ws, &t->dims, t->n_probes, max_src + 1, max_tgt + 1, 0);
    model_set_argmax(&t->probe_ws, argmax);
    batch_init(&t->probe_batch, t->n_probes, max_src + 1, max_tgt + 1);
}

/* The model, the optimizer and the progress, and every buffer that training, validation
 * and the dumps use, sized once for their largest batch. */
static void init_model(Trainer *t, Checkpoint *ck)
{
    const Config *cfg = t->cfg;
    t->dims = config_model_dims(cfg, t->src_vocab.size, t->tgt_vocab.size);
    params_alloc(&t->P, &t->dims);
    restore_or_start(t, ck);
    int max_batch = (int)cfg->training.batch_size;
    model_workspace_init(&t->ws, &t->dims, max_batch, t->train.max_src_len + 1,
                         t->train.max_tgt_len + 1, 1);
    model_grad_init(&t->G, &t->dims, max_batch, t->train.max_src_len + 1,
                  t->train.max_tgt_len + 1);
    batch_init(&t->batch, max_batch, t->train.max_src_len + 1, t->train.max_tgt_len + 1);
    epochs_init(&t->batcher, &t->train, max_batch, (int)cfg->training.bucket_batches,
                 cfg->training.shuffle, (uint64_t)cfg->seed);
    if (ck)
        epochs_restore(&t->batcher, t->prog.epoch, t->prog.next_batch, t->prog.rng_state,
                        t->prog.rng_inc);
    /* validation, dumps and the test read the contexts decoding uses (a hard model's:
     * argmax, unless translate.attention_mode says otherwise) */
    const int argmax = config_decodes_argmax(cfg, -1);
    if (t->has_valid) {
        evaluator_init(&t->eval, &t->dims, &t->valid, max_batch, cfg->translate.max_output_ratio,
                       cfg->translate.max_output_extra);
        evaluator_set_argmax(&t->eval, argmax);
    }
    if (t->n_probes)
        init_probe_buffers(t, argmax);
    if (!ck) {
        t->prog.validated_step = 0;
        t->prog.dumped_step = -1;
    }
    t->last_saved = ck ? t->prog.step : -1;
}

static void trainer_free(Trainer *t)
{
    free(t->config_yaml);
    vocab_free(&t->src_vocab);
    vocab_free(&t->tgt_vocab);
    corpus_free(&t->train);
    corpus_free(&t->valid);
    corpus_free(&t->test);
    params_free(&t->P);
    model_grad_free(&t->G);
    model_workspace_free(&t->ws);
    optim_free(&t->opt);
    epochs_free(&t->batcher);
    batch_free(&t->batch);
    if (t->has_valid)
        evaluator_free(&t->eval);
    gold_free(&t->gold);
    gold_free(&t->test_gold);
    free(t->probes);
    model_workspace_free(&t->probe_ws);
    batch_free(&t->probe_batch);
    rundir_close(&t->run);
}

/* ---- checkpoints ------------------------------------------------------------------------- */

static int save(Trainer *t, const char *name, Error *err)
{
    t->prog.epoch = t->batcher.epoch;
    t->prog.next_batch = t->batcher.next;
    t->prog.rng_state = t->batcher.epoch_start.state;
    t->prog.rng_inc = t->batcher.epoch_start.inc;
    RunMarks marks = rundir_marks(&t->run); /* the logs are durable before the checkpoint */
    t->prog.metrics_bytes = marks.metrics_bytes;
    t->prog.alignments_bytes = marks.alignments_bytes;
    t->prog.log_loss = t->log_loss;
    t->prog.log_steps = t->log_steps;
    t->prog.log_tokens = t->log_tokens;
    t->prog.log_seconds = t->log_seconds;
    char path[2200];
    snprintf(path, sizeof path, "checkpoints/%s", name);
    char full[4400];
    rundir_path(&t->run, path, full, sizeof full);
    interrupt_saving(1);
    fault_signal_at("save", t->prog.step);
    int rc = checkpoint_save(full, t->config_yaml, &t->dims, &t->src_vocab, &t->tgt_vocab, &t->P,
                             &t->opt, &t->prog, err);
    interrupt_saving(0);
    if (rc == 0 && !strcmp(name, "last.ckpt"))
        t->last_saved = t->prog.step;
    return rc;
}

/* The learning rate of update k (1-based): the scheduled rate (prog.lr, which the plateau
 * rule decays), times k / W during the W warm-up updates. A function of the step alone,
 * so a resumed run uses the rates a straight run does. */
static double learning_rate_at(const Trainer *t, long k)
{
    const long w = config_warmup_steps(t->cfg);
    return k < w ? t->prog.lr * (double)k / (double)w : t->prog.lr;
}

/* ---- logging ------------------------------------------------------------------------------ */

static void format_duration(double s, char *out, size_t cap)
{
    long sec = (long)(s + 0.5);
    if (sec >= 3600)
        snprintf(out, cap, "%ldh%02ldm", sec / 3600, sec / 60 % 60);
    else if (sec >= 60)
        snprintf(out, cap, "%ldm%02lds", sec / 60, sec % 60);
    else
        snprintf(out, cap, "%lds", sec);
}

/* Seconds of training left by the nearest stopping rule, or -1 if unknown. */
static double eta_seconds(const Trainer *t)
{
    const Config *cfg = t->cfg;
    double per_step = t->prog.step > 0 ? t->prog.train_seconds / (double)t->prog.step : 0;
    double eta = -1;
    if (cfg->training.max_steps > 0)
        eta = (double)(cfg->training.max_steps - t->prog.step) * per_step;
    if (cfg->training.epochs > 0) {
        double left = ((double)cfg->training.epochs - epochs_progress(&t->batcher)) *
                      t->batcher.n_batches * per_step;
        eta = eta < 0 || left < eta ? left : eta;
    }
    if (cfg->training.max_time > 0) {
        double left = cfg->training.max_time - t->prog.train_seconds;
        eta = eta < 0 || left < eta ? left : eta;
    }
    return eta;
}

/* A hard model's part of a log line and of its training record, from the sums since the
 * last line (which it then clears): the mean reward of the sentences that sampled, at the
 * level the surrogate rewards (sentence: R_s per sentence; token: log p(y_i) per token),
 * the baseline it is measured against (b or b_tok), and the mean entropy of a head's
 * weights per real target step. A record leaves out what had nothing to average (no
 * sentence sampled: the warm-up, or hard_expected_prob 1), and so does the line. */
static void hard_log_fields(Trainer *t, char *text, size_t text_size, char *json, size_t json_size)
{
    Progress *g = &t->prog;
    const int token = t->cfg->training.hard_reward == HARD_REWARD_TOKEN;
    const long count = token ? g->log_sampled_tokens : g->log_sampled;
    const double reward = count ? g->log_reward / (double)count : NAN;
    const double baseline = token ? g->hard_token_baseline : g->hard_baseline;
    const double entropy = g->log_entropy_terms ? g->log_entropy / (double)g->log_entropy_terms
                                                : NAN;
    char shown[32] = "", r[32], b[32], e[32];
    if (isfinite(reward))
        snprintf(shown, sizeof shown, " reward=%.4f", reward);
    snprintf(text, text_size, "%s baseline=%.4f entropy=%.4f", shown, baseline, entropy);
    snprintf(json, json_size, "%s%s,\"train_baseline\":%s%s%s",
             isfinite(reward) ? ",\"train_reward\":" : "",
             isfinite(reward) ? number_shortest(r, sizeof r, reward) : "",
             number_shortest(b, sizeof b, baseline),
             isfinite(entropy) ? ",\"train_attention_entropy\":" : "",
             isfinite(entropy) ? number_shortest(e, sizeof e, entropy) : "");
    g->log_reward = g->log_entropy = 0;
    g->log_sampled = g->log_sampled_tokens = g->log_entropy_terms = 0;
}

static void log_progress(Trainer *t, int line_due)
{
    double loss = t->log_steps ? t->log_loss / (double)t->log_steps : NAN;
    double tok_s = t->log_seconds > 0 ? (double)t->log_tokens / t->log_seconds : 0;
    char eta[32] = "?";
    double e = eta_seconds(t);
    if (e >= 0)
        format_duration(e, eta, sizeof eta);
    double epoch = epochs_progress(&t->batcher);
    if (t->run.tty && t->prog.train_seconds - t->live_at >= 0.25) {
        t->live_at = t->prog.train_seconds;
        char total[32] = "";
        if (t->cfg->training.max_steps > 0)
            snprintf(total, sizeof total, "/%ld", t->cfg->training.max_steps);
        char lr[32];
        rundir_live(&t->run, "epoch %.2f | step %ld%s | loss %.4f | ppl %.2f | %.0f tok/s | "
                    "lr %s | eta %s", epoch, t->prog.step, total, loss, exp(loss), tok_s,
                    number_digits(lr, sizeof lr, learning_rate_at(t, t->prog.step), 3), eta);
    }
    if (!line_due)
        return;
    char line[512], hard[160] = "", hard_json[256] = "", lr[32], lr_json[32];
    const double rate = learning_rate_at(t, t->prog.step);
    if (t->dims.hard)
        hard_log_fields(t, hard, sizeof hard, hard_json, sizeof hard_json);
    snprintf(line, sizeof line, "step=%ld epoch=%.3f loss=%.4f ppl=%.2f tok_per_s=%.0f lr=%s "
             "elapsed=%.1fs eta=%s%s", t->prog.step, epoch, loss, exp(loss), tok_s,
             number_digits(lr, sizeof lr, rate, 4), t->prog.train_seconds, eta, hard);
    if (t->run.tty) { /* the live line shows it; the log keeps it */
        rundir_note(&t->run, "%s", line);
    } else {
        rundir_log(&t->run, "%s", line);
    }
    fault_signal_at("log", t->prog.step);
    /* the loss exactly (the shortest text of its double: runs compare bit for bit), the
     * rest to the precision a reader uses */
    char json[640], loss_text[32];
    snprintf(json, sizeof json, "{\"step\":%ld,\"epoch\":%.4f,\"train_loss\":%s,\"lr\":%s,"
             "\"tokens_per_s\":%.1f,\"train_seconds\":%.3f%s}", t->prog.step, epoch,
             number_shortest(loss_text, sizeof loss_text, loss),
             number_digits(lr_json, sizeof lr_json, rate, 6), tok_s,
             t->prog.train_seconds, hard_json);
    rundir_metrics(&t->run, json);
    t->log_loss = 0;
    t->log_steps = t->log_tokens = 0;
    t->log_seconds = 0;
}

/* ---- alignment dumps -------------------------------------------------------------------------- */

/* The heatmap of one dumped record (its line of alignments.jsonl), as `s2s heatmap`
 * draws it, into RUN_DIR/heatmaps/: heatmap-ID.svg for alignments.svg: last (replaced at
 * every dump), heatmap-ID-STEP.svg for all. A heatmap that cannot be drawn is a warning,
 * as the report is: the dumps themselves are in alignments.jsonl. */
static void draw_record(Trainer *t, const char *record, size_t len, long id)
{
    char dir[2200], path[2400];
    rundir_path(&t->run, "heatmaps", dir, sizeof dir);
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
        heatmap_svg(svg.f, &log.records[0], "0", 1);
        rc = atomicfile_commit(&svg, &err); /* checks every write */
    }
    alignlog_free(&log);
    if (rc < 0)
        rundir_log(&t->run, "s2s: warning: heatmap not drawn: %s", err.msg);
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
    int rc = fclose(f) == 0 ? rundir_alignments(&t->run, text, len - 1, err)
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
    evaluate_alignments(&t->eval, &t->P, t->has_gold ? &t->gold : NULL, &aer, &entropy);
    char json[512];
    if (t->has_gold) {
        rundir_log(&t->run, "alignments step=%ld aer=%.4f precision=%.4f recall=%.4f "
                   "attention_entropy=%.4f", t->prog.step, aer_rate(&aer), aer_precision(&aer),
                   aer_recall(&aer), entropy);
        snprintf(json, sizeof json, "{\"step\":%ld,\"epoch\":%.4f,\"aer\":%.6f,\"aer_precision\":%.6f,"
                 "\"aer_recall\":%.6f,\"attention_entropy\":%.6f}", t->prog.step, epoch,
                 aer_rate(&aer), aer_precision(&aer), aer_recall(&aer), entropy);
    } else {
        snprintf(json, sizeof json, "{\"step\":%ld,\"epoch\":%.4f,\"attention_entropy\":%.6f}",
                 t->prog.step, epoch, entropy);
    }
    rundir_metrics(&t->run, json);
}

/* Appends the probes' teacher-forced attention to alignments.jsonl (one line each,
 * written whole, so a kill never leaves part of one) and logs the attention's entropy
 * over the validation set, with its AER when gold alignments are known. */
static int dump_alignments(Trainer *t, Error *err)
{
    fault_signal_at("dump", t->prog.step);
    const Corpus *v = &t->valid;
    int n = t->n_probes, rc = 0;
    Batch *b = &t->probe_batch;
    corpus_batch(v, t->probes, 0, n, 1, b);
    model_forward(&t->probe_ws, &t->P, b);
    double epoch = epochs_progress(&t->batcher);
    const char **src_words = xmalloc_array((size_t)b->src_steps, sizeof(char *));
    const char **tgt_words = xmalloc_array((size_t)b->tgt_steps, sizeof(char *));
    AttnMatrix heads[ATTN_MAX_HEADS], self[SA_MAX_LAYERS];
    for (int k = 0; k < n && rc == 0; k++) {
        int pair = t->probes[k];
        int ns = b->src_len[k], nt = b->tgt_len[k];
        for (int j = 0; j < ns; j++)
            src_words[j] = vocab_word(&t->src_vocab, b->src[j * b->batch_size + k]);
        for (int i = 0; i < nt; i++)
            tgt_words[i] = vocab_word(&t->tgt_vocab, b->tgt_out[i * b->batch_size + k]);
        const AttnMatrix m = align_of_pass(&t->probe_ws, k, nt, ns);
        const AlignExtras extra = align_extras_of_pass(&t->probe_ws, k, nt, ns, heads, self);
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
static void update_report(Trainer *t)
{
    char jsonl[2200], metrics[2200], dir[2200], report[2300];
    rundir_path(&t->run, "alignments.jsonl", jsonl, sizeof jsonl);
    rundir_path(&t->run, "metrics.jsonl", metrics, sizeof metrics);
    rundir_path(&t->run, "heatmaps", dir, sizeof dir);
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
        rundir_log(&t->run, "s2s: warning: report not updated: %s", err.msg);
}

/* ---- validation ----------------------------------------------------------------------------- */

/* After a validation without improvement: with training.scheduling plateau, the learning
 * rate decays once patience validations in a row have not improved, down to its floor. */
static void decay_on_plateau(Trainer *t)
{
    const Config *cfg = t->cfg;
    if (cfg->training.scheduling == SCHEDULING_PLATEAU &&
        t->prog.plateau >= cfg->training.patience && t->prog.lr > cfg->training.learning_rate_min) {
        double lr = t->prog.lr * cfg->training.decrease_factor;
        t->prog.lr = lr > cfg->training.learning_rate_min ? lr : cfg->training.learning_rate_min;
        t->prog.plateau = 0;
        char now[32];
        rundir_log(&t->run, "no improvement in %ld validation%s: learning rate now %s",
                   cfg->training.patience, plural(cfg->training.patience),
                   number_digits(now, sizeof now, t->prog.lr, 4));
    }
}

/* Validates, keeps best.ckpt and last.ckpt, decays the learning rate on a plateau.
 * Returns 0 or -1 (a checkpoint could not be written: err set). */
static int validate(Trainer *t, Error *err)
{
    const Config *cfg = t->cfg;
    EvalScores s;
    TokenLevel level = cfg->data.level;
    double t0 = now_seconds();
    fault_signal_at("validate", t->prog.step);
    /* not interrupted: a signal waits for the validation (its step's last work) */
    evaluate(&t->eval, &t->P, &t->tgt_vocab, level, cfg->translate.detokenize,
             cfg->translate.max_output_ratio, cfg->translate.max_output_extra, &s, NULL);
    double seconds = now_seconds() - t0;
    t->prog.validated_step = t->prog.step;
    t->prog.validations++;
    int metric = cfg->training.early_stopping_metric;
    double score = metric == METRIC_BLEU ? s.bleu : metric == METRIC_LOSS ? -s.loss : s.exact;
    int improved = score > t->prog.best_score;
    if (improved) {
        t->prog.best_score = score;
        t->prog.best_step = t->prog.step;
        t->prog.stale = t->prog.plateau = 0;
    } else {
        t->prog.stale++;
        t->prog.plateau++;
    }
    /* saved before the log line says so (a failed save must not be reported as done);
     * nothing below changes what best.ckpt holds when the score improved */
    if (improved && save(t, "best.ckpt", err) < 0)
        return -1;
    rundir_log(&t->run, "validation step=%ld valid_loss=%.4f valid_ppl=%.2f valid_bleu=%.2f "
               "valid_exact=%.2f time=%.1fs%s", t->prog.step, s.loss, s.ppl, s.bleu, s.exact,
               seconds, improved ? " (best so far: saved best.ckpt)" : "");
    if (!improved)
        decay_on_plateau(t);
    char json[512], next_lr[32];
    snprintf(json, sizeof json, "{\"step\":%ld,\"epoch\":%.4f,\"valid_loss\":%.6g,\"valid_ppl\":%.6g,"
             "\"valid_bleu\":%.4f,\"valid_exact\":%.4f,\"lr\":%s,\"best\":%s}", t->prog.step,
             epochs_progress(&t->batcher), s.loss, s.ppl, s.bleu, s.exact,
             number_digits(next_lr, sizeof next_lr, learning_rate_at(t, t->prog.step + 1), 6),
             improved ? "true" : "false");
    rundir_metrics(&t->run, json);
    if (t->n_probes && t->cfg->alignments.every > 0)
        update_report(t);
    if (save(t, "last.ckpt", err) < 0)
        return -1;
    if (cfg->training.early_stopping > 0 && t->prog.stale >= cfg->training.early_stopping)
        rundir_log(&t->run, "early stopping: no improvement in %ld validation%s (best at step "
                   "%ld)", t->prog.stale, plural(t->prog.stale), t->prog.best_step);
    return 0;
}

/* ---- the test set -------------------------------------------------------------------------- */

/* The test set's AER against its gold links (P's attention), for the log line (text) and
 * the metrics record (json). */
static void test_aer_fields(Trainer *t, Evaluator *e, const Params *P, char *text,
                            size_t text_size, char *json, size_t json_size)
{
    AerCounts aer;
    double entropy;
    evaluate_alignments(e, P, &t->test_gold, &aer, &entropy);
    snprintf(text, text_size, " test_aer=%.4f (precision %.4f, recall %.4f)",
             aer_rate(&aer), aer_precision(&aer), aer_recall(&aer));
    snprintf(json, json_size, ",\"test_aer\":%.6f,\"test_aer_precision\":%.6f,"
             "\"test_aer_recall\":%.6f", aer_rate(&aer), aer_precision(&aer), aer_recall(&aer));
}

/* The lines, each with its newline, as the whole of the file at path (atomicfile.h). */
static int write_lines(const char *path, char *const *lines, int n, Error *err)
{
    AtomicFile out;
    int rc = atomicfile_begin(&out, path, "", err);
    for (int k = 0; rc == 0 && k < n; k++)
        fprintf(out.f, "%s\n", lines[k]);
    if (rc == 0)
        rc = atomicfile_commit(&out, err); /* checks every write above */
    return rc;
}

/* Translates the test set with the best weights (the last ones without validation),
 * writes RUN_DIR/test.hyp and logs the scores. Returns 0, -1 (err set: the I/O failed)
 * or 1: a signal stopped it (nothing written; a resume translates the test set). */
static int test_best(Trainer *t, Error *err)
{
    const Config *cfg = t->cfg;
    const Params *P = &t->P;
    Checkpoint best = {0};
    char path[2200];
    rundir_path(&t->run, "checkpoints/best.ckpt", path, sizeof path);
    const char *which = "last";
    if (t->has_valid && t->prog.best_step > 0) {
        if (checkpoint_load(&best, path, 0, err) < 0)
            return -1;
        P = &best.params;
        which = "best";
    }
    Evaluator e;
    EvalScores s;
    TokenLevel level = cfg->data.level;
    evaluator_init(&e, &t->dims, &t->test, (int)cfg->training.batch_size,
                   cfg->translate.max_output_ratio, cfg->translate.max_output_extra);
    evaluator_set_argmax(&e, config_decodes_argmax(cfg, -1));
    fault_signal_at("test", t->prog.step);
    if (evaluate(&e, P, &t->tgt_vocab, level, cfg->translate.detokenize,
                 cfg->translate.max_output_ratio, cfg->translate.max_output_extra, &s,
                 interrupt_pending) < 0) {
        evaluator_free(&e);
        checkpoint_free(&best);
        return 1;
    }
    char aer_text[160] = "", aer_json[160] = "";
    if (t->has_test_gold && model_has_alignments(&t->dims))
        test_aer_fields(t, &e, P, aer_text, sizeof aer_text, aer_json, sizeof aer_json);
    rundir_path(&t->run, "test.hyp", path, sizeof path);
    int rc = write_lines(path, e.hyps, t->test.n, err);
    evaluator_free(&e);
    checkpoint_free(&best);
    if (rc < 0)
        return -1;
    rundir_log(&t->run, "test (%s.ckpt, %d pair%s): test_loss=%.4f test_ppl=%.2f test_bleu=%.2f "
               "test_exact=%.2f%s; translations in %s", which, t->test.n, plural(t->test.n),
               s.loss, s.ppl, s.bleu, s.exact, aer_text, path);
    char json[700];
    snprintf(json, sizeof json, "{\"step\":%ld,\"test_loss\":%.6g,\"test_ppl\":%.6g,"
             "\"test_bleu\":%.4f,\"test_exact\":%.4f%s,\"checkpoint\":\"%s\"}", t->prog.step,
             s.loss, s.ppl, s.bleu, s.exact, aer_json, which);
    rundir_metrics(&t->run, json);
    return 0;
}

/* ---- the loop ----------------------------------------------------------------------------- */

/* Why training is over, or NULL. Each rule reads only the saved state (progress,
 * batcher), so a resumed run stops where the straight run does. */
static const char *stop_reason(const Trainer *t)
{
    const Config *cfg = t->cfg;
    if (cfg->training.early_stopping > 0 && t->prog.stale >= cfg->training.early_stopping)
        return "early stopping";
    if (cfg->training.max_steps > 0 && t->prog.step >= cfg->training.max_steps)
        return "reached training.max_steps";
    if (cfg->training.epochs > 0 && epochs_progress(&t->batcher) >= (double)cfg->training.epochs)
        return "reached training.epochs";
    if (cfg->training.max_time > 0 && t->prog.train_seconds >= cfg->training.max_time)
        return "reached training.max_time";
    return NULL;
}

/* Hard attention's settings for this step: sampling (every sentence on the expected
 * context during the warm-up), the surrogate's weights, the baselines, and the step's
 * own window of 2^32 draws on the hard-attention stream (as dropout's). */
static void set_hard_step(Trainer *t)
{
    const Config *cfg = t->cfg;
    HardAttention hard = {.mode = CONTEXT_SAMPLE,
                          .expected_prob = t->prog.step < cfg->training.hard_warmup_steps
                                               ? 1.0
                                               : cfg->training.hard_expected_prob,
                          .reinforce_weight = cfg->training.hard_reinforce_weight,
                          .entropy_weight = cfg->training.hard_entropy_weight,
                          .token_reward = cfg->training.hard_reward == HARD_REWARD_TOKEN,
                          .baseline = t->prog.hard_baseline,
                          .token_baseline = t->prog.hard_token_baseline};
    pcg32_seed(&hard.rng, (uint64_t)cfg->seed, RNG_STREAM_HARD);
    pcg32_advance(&hard.rng, (uint64_t)t->prog.step << 32);
    model_set_hard(&t->ws, &hard);
}

/* After an update: b <- d b + (1 - d) mean_s R_s over the sentences that sampled, and
 * b_tok likewise from their tokens' log p (unchanged when none sampled); the log's sums. */
static void update_baselines(Trainer *t)
{
    const HardStats *st = &t->ws.hard_stats;
    const double d = t->cfg->training.hard_baseline_decay;
    Progress *g = &t->prog;
    if (st->sampled > 0) {
        g->hard_baseline = d * g->hard_baseline + (1 - d) * (st->reward_sum / st->sampled);
        g->hard_token_baseline =
            d * g->hard_token_baseline + (1 - d) * (st->reward_sum / st->sampled_tokens);
    }
    g->log_reward += st->reward_sum;
    g->log_sampled += st->sampled;
    g->log_sampled_tokens += st->sampled_tokens;
    g->log_entropy += st->entropy_sum;
    g->log_entropy_terms += st->entropy_terms;
}

/* One update. Returns 0, or 1 if the step was skipped as non-finite. */
static int step(Trainer *t)
{
    const Config *cfg = t->cfg;
    double t0 = now_seconds();
    epochs_next(&t->batcher, &t->batch);
    fault_signal_at("batch", t->prog.step + 1);
    batch_sort_by_target(&t->batch); /* lets the decoder skip ended sentences */
    /* Dropout's masks come from this step's own window of 2^32 draws on the dropout
     * stream, so a resumed run draws exactly what a run straight through does. */
    Regularization reg = {.embedding_dropout = cfg->model.embedding_dropout,
                          .readout_dropout = cfg->model.readout_dropout,
                          .self_attention_dropout = cfg->model.self_attention_dropout,
                          .label_smoothing = cfg->training.label_smoothing};
    pcg32_seed(&reg.rng, (uint64_t)cfg->seed, RNG_STREAM_DROPOUT);
    pcg32_advance(&reg.rng, (uint64_t)t->prog.step << 32);
    model_set_regularization(&t->ws, &reg);
    if (t->dims.hard)
        set_hard_step(t);
    model_grad_zero(&t->G);
    double loss = model_grad_forward_backward(&t->G, &t->ws, &t->P, &t->batch);
    if (t->dims.hard) /* what it returned was the surrogate J: report the cross-entropy */
        loss = t->ws.hard_stats.nll;
    t->prog.step++;
    fault_signal_at("gradient", t->prog.step);
    fault_slow_step();
    if (fault_nan_loss(t->prog.step))
        loss = NAN;
    if (fault_inf_grad(t->prog.step))
        t->G.dense.mem[0] = INFINITY;
    /* the guard comes before the update: a non-finite step changes nothing */
    double norm = model_grad_norm(&t->G);
    int bad = !isfinite(loss) || !isfinite(norm);
    if (bad) {
        t->prog.bad_steps++;
        t->prog.skipped_steps++;
    } else {
        t->prog.bad_steps = 0;
        model_grad_clip(&t->G, cfg->training.clip_grad_norm);
        t->opt.lr = (float)learning_rate_at(t, t->prog.step);
        model_grad_apply(&t->opt, &t->P, &t->G);
        fault_signal_at("update", t->prog.step);
        t->log_loss += loss;
        t->log_steps++;
        if (t->dims.hard)
            update_baselines(t);
    }
    t->prog.tokens += t->batch.n_tgt_tokens;
    t->log_tokens += t->batch.n_tgt_tokens;
    double dt = now_seconds() - t0;
    t->prog.train_seconds += dt;
    t->log_seconds += dt;
    if (bad) {
        char loss_text[32], norm_text[32];
        rundir_log(&t->run, "step=%ld skipped: non-finite %s (loss=%s grad_norm=%s); %ld in a row",
                   t->prog.step, isfinite(loss) ? "gradient" : "loss",
                   number_digits(loss_text, sizeof loss_text, loss, 6),
                   number_digits(norm_text, sizeof norm_text, norm, 6), t->prog.bad_steps);
    }
    return bad;
}

static void log_header(Trainer *t, int resumed)
{
    char a[256], b[256];
    corpus_describe(&t->train, a, sizeof a);
    rundir_log(&t->run, "training data: %s", a);
    if (t->has_valid) {
        corpus_describe(&t->valid, b, sizeof b);
        rundir_log(&t->run, "validation data: %s", b);
    }
    rundir_log(&t->run, "vocabularies: source %d, target %d; model: %zu parameters; run "
               "directory: %s", t->src_vocab.size, t->tgt_vocab.size, t->P.n, t->run.dir);
    const Config *cfg = t->cfg;
    char model[160];
    model_describe(&t->dims, model, sizeof model);
    char drop_e[32], drop_r[32], smooth[32];
    rundir_log(&t->run, "model: %s; embedding dropout %s, readout dropout %s, label smoothing "
               "%s", model, number_shortest(drop_e, sizeof drop_e, cfg->model.embedding_dropout),
               number_shortest(drop_r, sizeof drop_r, cfg->model.readout_dropout),
               number_shortest(smooth, sizeof smooth, cfg->training.label_smoothing));
    const long warmup = config_warmup_steps(cfg);
    if (warmup > 0) {
        char lr[32];
        rundir_log(&t->run, "learning rate: rises linearly to %s over the first %ld update%s "
                   "(training.warmup_steps%s)", number_shortest(lr, sizeof lr,
                   cfg->training.learning_rate), warmup, plural(warmup),
                   cfg->training.warmup_steps < 0 ? " -1: the self-attention layers' default" : "");
    }
    if (!model_has_alignments(&t->dims) && cfg->alignments.every > 0)
        rundir_log(&t->run, "no attention (model.attention: none): no alignments to dump");
    if (t->dims.hard) {
        char w[4][32];
        rundir_log(&t->run, "hard attention: %s reward, reinforce weight %s, entropy weight %s, "
                   "expected context for a sentence with probability %s after %ld warm-up steps, "
                   "baseline decay %s",
                   cfg->training.hard_reward == HARD_REWARD_TOKEN ? "token" : "sentence",
                   number_shortest(w[0], sizeof w[0], cfg->training.hard_reinforce_weight),
                   number_shortest(w[1], sizeof w[1], cfg->training.hard_entropy_weight),
                   number_shortest(w[2], sizeof w[2], cfg->training.hard_expected_prob),
                   cfg->training.hard_warmup_steps,
                   number_shortest(w[3], sizeof w[3], cfg->training.hard_baseline_decay));
    }
    if (t->dims.hard || config_decodes_argmax(cfg, -1))
        rundir_log(&t->run, "validation loss, translations, alignment dumps and the test use %s "
                   "contexts (translate.attention_mode)",
                   config_decodes_argmax(cfg, -1) ? "argmax" : "soft (expected)");
    if (resumed)
        rundir_log(&t->run, "resuming at step %ld (epoch %.3f)", t->prog.step,
                   epochs_progress(&t->batcher));
}

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
static int dumps_on(const Trainer *t)
{
    return t->n_probes > 0 && t->cfg->alignments.every > 0;
}

/* Whether the schedule has a dump at this step. */
static int dumps_due(const Trainer *t)
{
    return dumps_on(t) && dump_scheduled(t->prog.step, t->cfg->alignments.every,
                                         t->cfg->alignments.max_dumps);
}

/* Whether this step's attention is in alignments.jsonl already. */
static int dumped_this_step(const Trainer *t)
{
    if (t->prog.dumped_step < 0) /* a checkpoint older than the record: the schedule says */
        return dumps_due(t);
    return t->prog.dumped_step == t->prog.step;
}

/* The end of training: the last step's dump, validation and save if it had none, then
 * the test set. */
static int finish(Trainer *t, const char *reason, Error *err)
{
    /* the last step's attention, whatever the schedule: the report ends where training did
     * (once: a finished run resumed has it already) */
    if (dumps_on(t) && !dumped_this_step(t) && dump_alignments(t, err) < 0)
        return TRAIN_IO_ERROR;
    if (t->has_valid && t->prog.validated_step != t->prog.step && validate(t, err) < 0)
        return TRAIN_IO_ERROR;
    if (t->last_saved != t->prog.step && save(t, "last.ckpt", err) < 0)
        return TRAIN_IO_ERROR;
    rundir_log(&t->run, "done: %s at step %ld, epoch %.3f, %.1fs of training%s", reason,
               t->prog.step, epochs_progress(&t->batcher), t->prog.train_seconds,
               t->has_valid ? "; best.ckpt is the best validation" : "");
    int tested = t->has_test ? test_best(t, err) : 0;
    if (tested < 0)
        return TRAIN_IO_ERROR;
    if (tested > 0) {
        rundir_log(&t->run, "stopped by signal %d during the test translation; checkpoints/"
                   "last.ckpt holds step %ld: --resume translates the test set",
                   interrupt_pending(), t->prog.step);
        return TRAIN_SIGNALLED;
    }
    return TRAIN_OK;
}

/* Steps until a stopping rule, a divergence, a failed write or a signal ends training. */
static int train_loop(Trainer *t, Error *err)
{
    const Config *cfg = t->cfg;
    if (t->prog.step == 0 && dumps_due(t) && dump_alignments(t, err) < 0)
        return TRAIN_IO_ERROR;
    for (;;) {
        const char *reason = stop_reason(t);
        if (reason)
            return finish(t, reason, err);
        if (step(t) && t->prog.bad_steps >= cfg->training.max_bad_steps)
            return error_set(err, "training diverged: %ld step%s in a row had a non-finite loss "
                             "or gradient (the last at step %ld); lower training.learning_rate "
                             "or set training.clip_grad_norm; the checkpoints were left as they "
                             "were", t->prog.bad_steps, plural(t->prog.bad_steps), t->prog.step),
                   TRAIN_DIVERGED;
        log_progress(t, t->prog.step % cfg->training.log_every == 0);
        if (dumps_due(t) && dump_alignments(t, err) < 0)
            return TRAIN_IO_ERROR;
        if (t->prog.step % cfg->training.valid_every == 0) {
            if (t->has_valid) {
                if (validate(t, err) < 0)
                    return TRAIN_IO_ERROR;
            } else if (save(t, "last.ckpt", err) < 0) {
                return TRAIN_IO_ERROR;
            }
        }
        /* Only here, with all of the step's work done (its log line, dump, validation),
         * is a signal acted on: the checkpoint then holds a state the straight run also
         * passes through, and the resumed run goes on exactly as it would have. */
        if (interrupt_pending()) {
            if (t->last_saved != t->prog.step && save(t, "last.ckpt", err) < 0)
                return TRAIN_IO_ERROR;
            rundir_log(&t->run, "stopped by signal %d at step %ld; saved checkpoints/last.ckpt",
                       interrupt_pending(), t->prog.step);
            return TRAIN_SIGNALLED;
        }
    }
}

/* last.ckpt of resume_dir is damaged (err says how): if best.ckpt is whole, says so,
 * so the user can go on from there instead of starting over. */
static void offer_best_checkpoint(const char *resume_dir, Error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/checkpoints/best.ckpt", resume_dir);
    Checkpoint best;
    Error ignored;
    if (checkpoint_load(&best, path, 1, &ignored) == 0) {
        size_t used = strlen(err->msg);
        snprintf(err->msg + used, sizeof err->msg - used, "; checkpoints/best.ckpt (step %ld) is "
                 "intact: copy it over last.ckpt to resume from there", best.progress.step);
    }
    checkpoint_free(&best);
}

int train_run(Config *cfg, const char *resume_dir, Error *err)
{
    Trainer t = {.cfg = cfg};
    err->msg[0] = '\0';
    t.run.lock_fd = -1;
    Checkpoint ck = {0};
    int rc = TRAIN_BAD_INPUT;
    if (resume_dir) {
        char path[4200];
        snprintf(path, sizeof path, "%s/checkpoints/last.ckpt", resume_dir);
        if (checkpoint_load(&ck, path, 1, err) < 0) {
            offer_best_checkpoint(resume_dir, err);
            goto done;
        }
        if (check_resume_config(cfg, &ck.config, path, err) < 0)
            goto done;
        snprintf(cfg->run_dir, sizeof cfg->run_dir, "%s", resume_dir);
    }
    if (read_data(&t, resume_dir ? &ck : NULL, err) < 0) {
        if (interrupt_pending()) { /* the readers stop for a signal; nothing is written yet */
            size_t used = strlen(err->msg);
            snprintf(err->msg + used, sizeof err->msg - used, "; nothing was written");
            rc = TRAIN_SIGNALLED;
        }
        goto done;
    }
    t.config_yaml = config_to_yaml(cfg);
    RunMarks marks = {ck.progress.metrics_bytes, ck.progress.alignments_bytes};
    int opened = rundir_open(&t.run, cfg->run_dir, resume_dir ? &marks : NULL, err);
    if (opened < 0) {
        rc = opened == -2 ? TRAIN_IO_ERROR : TRAIN_BAD_INPUT;
        goto done;
    }
    if (rundir_write_config(&t.run, t.config_yaml, err) < 0) {
        rc = TRAIN_IO_ERROR;
        goto done;
    }
    /* threads 0: one for batches of up to 4 sentences, whose products are too small to
     * share out (measured: 1.3x faster at one sentence), else one per core */
    openblas_set_num_threads(cfg->training.threads > 0 ? (int)cfg->training.threads
                             : cfg->training.batch_size <= 4 ? 1 : openblas_get_num_procs());
    init_model(&t, resume_dir ? &ck : NULL);
    checkpoint_free(&ck);
    log_header(&t, resume_dir != NULL);
    rc = train_loop(&t, err);
    if (rc == TRAIN_DIVERGED || rc == TRAIN_IO_ERROR)
        rundir_note(&t.run, "s2s: error: %s", err->msg); /* main prints it on stderr */
done:
    checkpoint_free(&ck);
    trainer_free(&t);
    return rc;
}
