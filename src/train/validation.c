/* validation.c: the trainer's policy around the evaluator (evaluator.h): a validation
 * keeps best.ckpt and last.ckpt, decays the learning rate on a plateau and says when
 * early stopping is due; at the end, the test set is translated with the best weights. */
#include <stdio.h>
#include <string.h>

#include "base/atomicfile.h"
#include "base/fault.h"
#include "base/interrupt.h"
#include "text/number.h"
#include "train/trainer_parts.h"

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
        rundir_log(&t->run.dir, "no improvement in %ld validation%s: learning rate now %s",
                   cfg->training.patience, plural(cfg->training.patience),
                   number_digits(now, sizeof now, t->prog.lr, 4));
    }
}

/* A hard-attention run trains a model that reads sampled cells, but through its warm-up
 * (training.hard_warmup_steps) it trains on expected contexts alone: validations there
 * score a model that has not yet sampled once. On argmax contexts they score near 0
 * however well it learns (on scenes of shapes the plateau rule halved the rate at step
 * 1200 of a 2000-step warm-up); on expected contexts they score captions of an attention
 * not yet sharpened, and their best.ckpt would outlast every later one (100% exact, mass
 * 0.59, where the validations after the warm-up reached 100% at mass 0.85). So they
 * neither decay the learning rate nor count towards early stopping, and the first
 * validation after the warm-up replaces their best.ckpt whatever its score (a run that
 * ends in the warm-up keeps theirs). */
static int in_hard_warmup(const Trainer *t)
{
    return t->model.dims.hard && t->prog.step <= t->cfg->training.hard_warmup_steps;
}

static int best_is_from_hard_warmup(const Trainer *t)
{
    return t->model.dims.hard && t->prog.best_step > 0 &&
           t->prog.best_step <= t->cfg->training.hard_warmup_steps;
}

int validate_keep_best(Trainer *t, Error *err)
{
    const Config *cfg = t->cfg;
    EvalScores s;
    const Splitter tgt = {cfg->data.level, cfg->data.lowercase,
                          t->data.subwords.model[SIDE_TGT], 0};
    double t0 = now_seconds();
    use_blas_threads(t, 1);
    fault_signal_at("validate", t->prog.step);
    const Params *V = &t->model.P; /* the weights validated: of the moment, or the average */
    if (t->val.average.k > 1) {
        weight_average_push(&t->val.average, t->model.P.mem);
        weight_average_mean(&t->val.average, t->val.averaged.mem);
        V = &t->val.averaged;
    }
    /* not interrupted: a signal waits for the validation (its step's last work) */
    evaluate(&t->val.eval, V, &t->data.tgt_vocab, &tgt, cfg->translate.detokenize,
             cfg->translate.max_output_ratio, cfg->translate.max_output_extra, &s, NULL);
    /* where the attention looks, against the captions' boxes */
    char ground_text[96] = "", ground_json[96] = "";
    if (t->data.valid_ground && model_has_alignments(&t->model.dims)) {
        AerCounts aer;
        GroundingCounts g;
        double entropy, pointing, mass;
        evaluate_alignments(&t->val.eval, V, NULL, t->data.valid_ground, &aer, &g, &entropy);
        grounding_scores(&g, &pointing, &mass);
        snprintf(ground_text, sizeof ground_text, " valid_pointing=%.4f valid_mass=%.4f", pointing,
                 mass);
        snprintf(ground_json, sizeof ground_json, ",\"valid_pointing\":%.6f,\"valid_mass\":%.6f",
                 pointing, mass);
    }
    double seconds = now_seconds() - t0;
    t->prog.validated_step = t->prog.step;
    t->prog.validations++;
    int metric = cfg->training.early_stopping_metric;
    double score = metric == METRIC_BLEU ? s.bleu : metric == METRIC_LOSS ? -s.loss : s.exact;
    const int warm_up = in_hard_warmup(t);
    const int after_warm_up = !warm_up && best_is_from_hard_warmup(t);
    int improved = score > t->prog.best_score || after_warm_up;
    if (improved) {
        t->prog.best_score = score;
        t->prog.best_step = t->prog.step;
        t->prog.stale = t->prog.plateau = 0;
    } else if (!warm_up) {
        t->prog.stale++;
        t->prog.plateau++;
    }
    /* saved before the log line says so (a failed save must not be reported as done);
     * nothing below changes what best.ckpt holds when the score improved */
    if (improved && save_checkpoint_with(t, "best.ckpt", V, err) < 0)
        return -1;
    rundir_log(&t->run.dir, "validation step=%ld valid_loss=%.4f valid_ppl=%.2f valid_bleu=%.2f "
               "valid_exact=%.2f%s time=%.1fs%s", t->prog.step, s.loss, s.ppl, s.bleu, s.exact,
               ground_text, seconds,
               after_warm_up ? " (the first after the hard-attention warm-up: saved best.ckpt)"
               : improved    ? " (best so far: saved best.ckpt)"
               : warm_up     ? " (hard-attention warm-up: not counted)"
                             : "");
    if (!improved)
        decay_on_plateau(t);
    char json[512], next_lr[32];
    snprintf(json, sizeof json,
             "{\"step\":%ld,\"epoch\":%.4f,\"valid_loss\":%.6g,\"valid_ppl\":%.6g,"
             "\"valid_bleu\":%.4f,\"valid_exact\":%.4f%s,\"lr\":%s,\"best\":%s}", t->prog.step,
             epochs_progress(&t->data.batcher), s.loss, s.ppl, s.bleu, s.exact, ground_json,
             number_digits(next_lr, sizeof next_lr, learning_rate_at(t, t->prog.step + 1), 6),
             improved ? "true" : "false");
    rundir_metrics(&t->run.dir, json);
    return 0;
}

void note_early_stopping(Trainer *t)
{
    const long patience = t->cfg->training.early_stopping;
    if (patience > 0 && t->prog.stale >= patience)
        rundir_log(&t->run.dir, "early stopping: no improvement in %ld validation%s (best at step "
                   "%ld)", t->prog.stale, plural(t->prog.stale), t->prog.best_step);
}

/* The test set's AER against its gold links (P's attention), for the log line (text) and
 * the metrics record (json). */
static void test_aer_fields(Trainer *t, Evaluator *e, const Params *P, char *text,
                            size_t text_size, char *json, size_t json_size)
{
    AerCounts aer;
    double entropy;
    evaluate_alignments(e, P, t->data.test_gold, NULL, &aer, NULL, &entropy);
    snprintf(text, text_size, " test_aer=%.4f (precision %.4f, recall %.4f)",
             aer_rate(&aer), aer_precision(&aer), aer_recall(&aer));
    snprintf(json, json_size, ",\"test_aer\":%.6f,\"test_aer_precision\":%.6f,"
             "\"test_aer_recall\":%.6f", aer_rate(&aer), aer_precision(&aer), aer_recall(&aer));
}

/* The test set's attention correctness against its boxes (P's attention), for the log
 * line (text) and the metrics record (json). */
static void test_grounding_fields(Trainer *t, Evaluator *e, const Params *P, char *text,
                                  size_t text_size, char *json, size_t json_size)
{
    AerCounts aer;
    GroundingCounts g;
    double entropy, pointing, mass;
    evaluate_alignments(e, P, NULL, t->data.test_ground, &aer, &g, &entropy);
    grounding_scores(&g, &pointing, &mass);
    snprintf(text, text_size, " test_pointing=%.4f test_mass=%.4f", pointing, mass);
    snprintf(json, json_size, ",\"test_pointing\":%.6f,\"test_mass\":%.6f", pointing, mass);
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
int translate_test_set(Trainer *t, Error *err)
{
    use_blas_threads(t, 1);
    const Config *cfg = t->cfg;
    const Params *P = &t->model.P;
    SavedModel best = {0};
    char path[2200];
    rundir_path(&t->run.dir, "checkpoints/best.ckpt", path, sizeof path);
    const char *which = "last";
    if (t->data.valid && t->prog.best_step > 0) {
        if (saved_model_load(&best, path, err) < 0)
            return -1;
        P = &best.params;
        which = "best";
    }
    Evaluator e;
    EvalScores s;
    const Splitter tgt = {cfg->data.level, cfg->data.lowercase,
                          t->data.subwords.model[SIDE_TGT], 0};
    evaluator_init(&e, &t->model.dims, t->data.test, (int)cfg->training.batch_size,
                   cfg->translate.max_output_ratio, cfg->translate.max_output_extra);
    evaluator_set_argmax(&e, config_decodes_argmax(cfg, -1));
    fault_signal_at("test", t->prog.step);
    if (evaluate(&e, P, &t->data.tgt_vocab, &tgt, cfg->translate.detokenize,
                 cfg->translate.max_output_ratio, cfg->translate.max_output_extra, &s,
                 interrupt_pending) < 0) {
        evaluator_free(&e);
        saved_model_free(&best);
        return 1;
    }
    char aer_text[160] = "", aer_json[160] = "";
    if (t->data.test_gold && model_has_alignments(&t->model.dims))
        test_aer_fields(t, &e, P, aer_text, sizeof aer_text, aer_json, sizeof aer_json);
    if (t->data.test_ground && model_has_alignments(&t->model.dims))
        test_grounding_fields(t, &e, P, aer_text, sizeof aer_text, aer_json, sizeof aer_json);
    rundir_path(&t->run.dir, "test.hyp", path, sizeof path);
    int rc = write_lines(path, e.hyps, t->data.test->n, err);
    evaluator_free(&e);
    saved_model_free(&best);
    if (rc < 0)
        return -1;
    rundir_log(&t->run.dir,
               "test (%s.ckpt, %d pair%s): test_loss=%.4f test_ppl=%.2f test_bleu=%.2f "
               "test_exact=%.2f%s; translations in %s", which, t->data.test->n,
               plural(t->data.test->n),
               s.loss, s.ppl, s.bleu, s.exact, aer_text, path);
    char json[700];
    snprintf(json, sizeof json, "{\"step\":%ld,\"test_loss\":%.6g,\"test_ppl\":%.6g,"
             "\"test_bleu\":%.4f,\"test_exact\":%.4f%s,\"checkpoint\":\"%s\"}", t->prog.step,
             s.loss, s.ppl, s.bleu, s.exact, aer_json, which);
    rundir_metrics(&t->run.dir, json);
    return 0;
}
