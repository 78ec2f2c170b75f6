/* trainer.c: the training loop of `s2s train` (see trainer.h): the steps, the stopping
 * rules, the checkpoints it saves, and the signals it stops for. Everything is allocated
 * before the first step (trainer_setup.c); a step never allocates. */
#include "train/trainer.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/fault.h"
#include "base/interrupt.h"
#include "base/ranks.h"
#include "text/number.h"
#include "text/termtext.h"
#include "run/sectionfile.h"
#include "train/trainer_parts.h"

/* Why training is over, or NULL. Each rule reads only the saved state (progress,
 * batcher), so a resumed run stops where the straight run does. */
static const char *stop_reason(const Trainer *t)
{
    const Config *cfg = t->cfg;
    if (cfg->training.early_stopping > 0 && t->prog.stale >= cfg->training.early_stopping)
        return "early stopping";
    if (cfg->training.max_steps > 0 && t->prog.step >= cfg->training.max_steps)
        return "reached training.max_steps";
    if (cfg->training.epochs > 0 &&
        epochs_progress(&t->data.batcher) >= (double)cfg->training.epochs)
        return "reached training.epochs";
    if (cfg->training.max_time > 0 && t->prog.train_seconds >= cfg->training.max_time)
        return "reached training.max_time";
    return NULL;
}

/* Hard attention's settings for this step: sampling (every sentence on the expected
 * context during the warm-up), the surrogate's weights, the baselines, and the step's
 * own window of 2^32 draws on the hard-attention stream (as dropout's). */
static HardAttention hard_step(const Trainer *t)
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
    return hard;
}

/* After an update: b <- d b + (1 - d) mean_s R_s over the sentences that sampled, and
 * b_tok likewise from their tokens' log p (unchanged when none sampled); the log's sums. */
static void update_baselines(Trainer *t)
{
    const HardStats *st = &t->model.shards.hard_stats;
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

/* One update. Returns 0, 1 if the step was skipped as non-finite, or -1 with err set if
 * its batch could not be read (a picture past the cache that no longer decodes). */
static int step(Trainer *t, Error *err)
{
    const Config *cfg = t->cfg;
    double t0 = now_seconds();
    if (epochs_next(&t->data.batcher, &t->data.batch, err) < 0)
        return -1;
    if (fault_batch_unreadable(t->prog.step + 1))
        return error_set(err, "the batch of step %ld cannot be read (S2S_FAULT_BATCH)",
                         t->prog.step + 1), -1;
    fault_signal_at("batch", t->prog.step + 1);
    batch_sort_by_target(&t->data.batch); /* lets the decoder skip ended sentences */
    if (t->data.batch.ground) /* each word's cells, by the rule validation scores them with */
        grounding_fill_batch(&t->data.batch, model_grid_side(&t->model.dims),
                             t->data.train_ground, &t->data.train);
    /* Dropout's masks come from this step's own window of 2^32 draws on the dropout
     * stream, so a resumed run draws exactly what a run straight through does. */
    Regularization reg = {.embedding_dropout = cfg->model.embedding_dropout,
                          .readout_dropout = cfg->model.readout_dropout,
                          .self_attention_dropout = cfg->model.self_attention_dropout,
                          .label_smoothing = cfg->training.label_smoothing,
                          .doubly_stochastic = cfg->training.doubly_stochastic,
                          .attention_supervision =
                              t->data.batch.ground ? cfg->training.attention_supervision : 0};
    pcg32_seed(&reg.rng, (uint64_t)cfg->seed, RNG_STREAM_DROPOUT);
    pcg32_advance(&reg.rng, (uint64_t)t->prog.step << 32);
    HardAttention hard = t->model.dims.hard ? hard_step(t) : (HardAttention){0};
    use_blas_threads(t, 0);
    double loss = shards_forward_backward(&t->model.shards, &t->model.P, &t->data.batch, &reg,
                                          t->model.dims.hard ? &hard : NULL);
    ModelGrad *G = shards_gradient(&t->model.shards);
    if (t->model.dims.hard) /* what it returned was the surrogate J: report the cross-entropy */
        loss = t->model.shards.hard_stats.nll;
    t->prog.step++;
    fault_signal_at("gradient", t->prog.step);
    fault_slow_step();
    if (fault_nan_loss(t->prog.step))
        loss = NAN;
    if (fault_inf_grad(t->prog.step))
        G->dense.mem[0] = INFINITY;
    /* the guard comes before the update: a non-finite step changes nothing */
    double norm = model_grad_norm(G);
    int bad = !isfinite(loss) || !isfinite(norm);
    if (bad) {
        t->prog.bad_steps++;
        t->prog.skipped_steps++;
    } else {
        t->prog.bad_steps = 0;
        model_grad_clip(G, cfg->training.clip_grad_norm);
        t->model.opt.lr = (float)learning_rate_at(t, t->prog.step);
        model_grad_apply(&t->model.opt, &t->model.P, G);
        fault_signal_at("update", t->prog.step);
        t->prog.log_loss += loss;
        t->prog.log_steps++;
        if (t->model.dims.hard)
            update_baselines(t);
    }
    t->prog.tokens += t->data.batch.n_tgt_tokens;
    t->prog.log_tokens += t->data.batch.n_tgt_tokens;
    double dt = now_seconds() - t0;
    t->prog.train_seconds += dt;
    t->prog.log_seconds += dt;
    if (bad) {
        char loss_text[32], norm_text[32];
        rundir_log(&t->run.dir,
                   "step=%ld skipped: non-finite %s (loss=%s grad_norm=%s); %ld in a row",
                   t->prog.step, isfinite(loss) ? "gradient" : "loss",
                   number_digits(loss_text, sizeof loss_text, loss, 6),
                   number_digits(norm_text, sizeof norm_text, norm, 6), t->prog.bad_steps);
    }
    return bad;
}

/* A validation (validation.c), the report, which draws its scores beside the attention,
 * then last.ckpt, which records the logs both wrote. Returns 0 or -1 (err set). */
static int validate(Trainer *t, Error *err)
{
    if (validate_keep_best(t, err) < 0)
        return -1;
    if (t->probes.n && t->cfg->alignments.every > 0)
        update_heatmap_report(t);
    if (save_checkpoint(t, "last.ckpt", err) < 0)
        return -1;
    note_early_stopping(t);
    return 0;
}

/* The end of training: the last step's dump, validation and save if it had none, then
 * the test set; the lead's work alone (under mpirun the other ranks are done). */
static int finish(Trainer *t, const char *reason, Error *err)
{
    if (!t->lead)
        return TRAIN_OK;
    /* the last step's attention, whatever the schedule: the report ends where training did
     * (once: a finished run resumed has it already) */
    if (dumps_on(t) && !dumped_this_step(t) && dump_alignments(t, err) < 0)
        return TRAIN_IO_ERROR;
    if (t->data.valid && t->prog.validated_step != t->prog.step && validate(t, err) < 0)
        return TRAIN_IO_ERROR;
    if (t->run.last_saved != t->prog.step && save_checkpoint(t, "last.ckpt", err) < 0)
        return TRAIN_IO_ERROR;
    rundir_log(&t->run.dir, "done: %s at step %ld, epoch %.3f, %.1fs of training%s", reason,
               t->prog.step, epochs_progress(&t->data.batcher), t->prog.train_seconds,
               t->data.valid ? "; best.ckpt is the best validation" : "");
    int tested = t->data.test ? translate_test_set(t, err) : 0;
    if (tested < 0)
        return TRAIN_IO_ERROR;
    if (tested > 0) {
        rundir_log(&t->run.dir, "stopped by signal %d during the test translation; checkpoints/"
                   "last.ckpt holds step %ld: --resume translates the test set",
                   interrupt_pending(), t->prog.step);
        return TRAIN_SIGNALLED;
    }
    return TRAIN_OK;
}

/* What the lead does after a step: its log line, the dumps, validation and the
 * checkpoints. Returns TRAIN_OK or TRAIN_IO_ERROR (err set). */
static int after_step(Trainer *t, Error *err)
{
    const Config *cfg = t->cfg;
    log_progress(t, t->prog.step % cfg->training.log_every == 0);
    if (dumps_due(t) && dump_alignments(t, err) < 0)
        return TRAIN_IO_ERROR;
    if (t->prog.step % cfg->training.valid_every == 0) {
        if (t->data.valid) {
            if (validate(t, err) < 0)
                return TRAIN_IO_ERROR;
        } else if (save_checkpoint(t, "last.ckpt", err) < 0) {
            return TRAIN_IO_ERROR;
        }
    }
    return TRAIN_OK;
}

/* Under mpirun, the ranks agree at each step's end: on the lead's outcome (a failed
 * write stops them all), on a signal any of them received (so they stop at the same
 * step), and on the progress, which validation and the clock change on the lead alone
 * (so every stopping rule, the learning rate and the schedules decide alike). *signal
 * (if not NULL) gets the agreed signal, 0 for none: what the ranks act on. A signal that
 * arrives after the agreement waits for the next step's: read again here, it would stop
 * one rank a step before the others, which then wait for it until killed. */
static int agree(Trainer *t, int rc, int *signal)
{
    long worst[2] = {rc, interrupt_pending()}; /* the outcome, the signal */
    if (ranks_size() > 1) {
        ranks_max(worst, 2);
        if (worst[1])
            interrupt_adopt((int)worst[1]);
        ranks_broadcast(&t->prog, sizeof t->prog, 0);
    }
    if (signal)
        *signal = (int)worst[1];
    return (int)worst[0];
}

/* Steps until a stopping rule, a divergence, a failed write or a signal ends training. */
static int train_loop(Trainer *t, Error *err)
{
    const Config *cfg = t->cfg;
    const int failed = t->lead && t->prog.step == 0 && dumps_due(t) && dump_alignments(t, err) < 0;
    /* the lead's first dump */
    const int first = agree(t, failed ? TRAIN_IO_ERROR : TRAIN_OK, NULL);
    if (first != TRAIN_OK)
        return first;
    for (;;) {
        const char *reason = stop_reason(t);
        if (reason)
            return finish(t, reason, err);
        const int bad = step(t, err);
        if (bad < 0 && ranks_size() > 1) {
            /* read by this rank alone: the others would wait for its shards for good. The
             * lead's log says why too; the message is escaped as cmd_error escapes. */
            char why[ERROR_MSG_MAX + 80], safe[4 * (ERROR_MSG_MAX + 80)];
            snprintf(why, sizeof why, "%s; the job ends here (the checkpoints saved are "
                     "whole)", err->msg);
            termtext_escape(safe, sizeof safe, why);
            rundir_note(&t->run.dir, "s2s: error: rank %d of %d: %s", ranks_rank(), ranks_size(),
                        safe);
            rundir_close(&t->run.dir); /* ends a live line on the terminal */
            ranks_abort(TRAIN_BAD_INPUT, safe);
        }
        if (bad < 0)
            return TRAIN_BAD_INPUT;
        if (bad && t->prog.bad_steps >= cfg->training.max_bad_steps)
            return error_set(err, "training diverged: %ld step%s in a row had a non-finite loss "
                             "or gradient (the last at step %ld); lower training.learning_rate "
                             "or set training.clip_grad_norm; the checkpoints were left as they "
                             "were", t->prog.bad_steps, plural(t->prog.bad_steps), t->prog.step),
                   TRAIN_DIVERGED;
        int signal;
        const int rc = agree(t, t->lead ? after_step(t, err) : TRAIN_OK, &signal);
        if (rc != TRAIN_OK)
            return rc;
        fault_signal_at("agreed", t->prog.step); /* a signal just after the agreement */
        /* Only here, with all of the step's work done (its log line, dump, validation),
         * is a signal acted on: the checkpoint then holds a state the straight run also
         * passes through, and the resumed run goes on exactly as it would have. */
        if (signal) {
            if (t->run.last_saved != t->prog.step && save_checkpoint(t, "last.ckpt", err) < 0)
                return TRAIN_IO_ERROR;
            rundir_log(&t->run.dir, "stopped by signal %d at step %ld; saved checkpoints/last.ckpt",
                       signal, t->prog.step);
            return TRAIN_SIGNALLED;
        }
    }
}

/* What a rank read: its config, vocabularies, pairs, weights and step, as one number. */
static uint32_t fingerprint(const Trainer *t)
{
    const long numbers[] = {t->data.src_vocab.size, t->data.tgt_vocab.size, t->data.train.n,
    t->prog.step};
    uint32_t crc = crc32_update(0, t->config_yaml, strlen(t->config_yaml));
    crc = crc32_update(crc, numbers, sizeof numbers);
    return crc32_update(crc, t->model.P.mem, sizeof(float) * t->model.P.n);
}

/* Under mpirun, the ranks start only together: each with the model the lead has (the
 * same config, data and checkpoint read), or none at all. An error the lead has too is
 * the lead's to say; one of another rank's own, that rank says. */
static int agree_to_start(Trainer *t, int rc, Error *err)
{
    if (ranks_size() == 1)
        return rc;
    struct {
        uint32_t print;
        int rc;
    } lead = {rc == TRAIN_OK ? fingerprint(t) : 0, rc};
    ranks_broadcast(&lead, sizeof lead, 0);
    const int lead_rc = lead.rc;
    if (rc == TRAIN_OK && lead_rc == TRAIN_OK && fingerprint(t) != lead.print) {
        error_set(err, "rank %d read another config, corpus or checkpoint than rank 0: every "
                  "process must read the same files (a shared file system, or the same copies "
                  "at the same paths)", ranks_rank());
        rc = TRAIN_BAD_INPUT;
    }
    long failed = rc != TRAIN_OK ? ranks_rank() : -1; /* the last rank that failed */
    ranks_max(&failed, 1);
    if (failed < 0)
        return TRAIN_OK;
    if (!t->lead && lead_rc != TRAIN_OK) {
        err->msg[0] = '\0'; /* the lead says it */
        return lead_rc;
    }
    if (rc != TRAIN_OK)
        return rc;
    if (t->lead)
        return error_set(err, "rank %ld could not start (its message above); nothing was "
                         "trained", failed), TRAIN_BAD_INPUT;
    err->msg[0] = '\0';
    return TRAIN_BAD_INPUT;
}

int train_run(Config *cfg, const char *resume_dir, Error *err)
{
    Trainer t = {.cfg = cfg, .lead = ranks_rank() == 0};
    err->msg[0] = '\0';
    t.run.dir.lock_fd = -1; /* nothing open until trainer_open_run */
    t.run.dir.log.fd = t.run.dir.metrics.fd = t.run.dir.alignments.fd = -1;
    int rc = agree_to_start(&t, trainer_setup(&t, resume_dir, err), err);
    if (rc == TRAIN_OK) /* nothing is written until every rank is ready */
        rc = agree_to_start(&t, trainer_open_run(&t, err), err);
    if (rc == TRAIN_OK) {
        log_header(&t, resume_dir != NULL);
        rc = train_loop(&t, err);
        if (!t.lead)
            err->msg[0] = '\0'; /* what ended training, the lead says */
        if (rc == TRAIN_DIVERGED || rc == TRAIN_IO_ERROR)
            rundir_note(&t.run.dir, "s2s: error: %s", err->msg); /* main prints it on stderr */
    }
    trainer_free(&t);
    return rc;
}
