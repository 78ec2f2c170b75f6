/* progress.c: what the trainer tells as it goes (see trainer_parts.h): the log's header,
 * the live line on a terminal, and every log_every steps a line of train.log with its
 * record in metrics.jsonl. */
#include <math.h>
#include <stdio.h>

#include "base/fault.h"
#include "base/ranks.h"
#include "text/number.h"
#include "train/trainer_parts.h"

/* How the epoch is cut into batches: their sizes as the first epoch has them. */
static void log_batches(Trainer *t)
{
    const Epochs *e = &t->data.batcher;
    const Corpus *c = e->corpus;
    long target = 0;
    for (int k = 0; k < c->n; k++)
        target += c->tgt_len[k] + 1;
    const double per_batch = (double)c->n / e->n_batches, tokens = (double)target / e->n_batches;
    if (e->batch_tokens > 0)
        rundir_log(&t->run.dir, "batches: as many pairs as fit in %ld tokens (training.batch_"
                   "tokens: pairs times the longest side), at most %d (training.batch_size); "
                   "%d in the first epoch, of %.1f pairs and %.0f target tokens on average",
                   e->batch_tokens, e->batch_size, e->n_batches, per_batch, tokens);
    else
        rundir_log(&t->run.dir, "batches: %d pairs (training.batch_size), %d an epoch, of %.0f "
                   "target tokens on average", e->batch_size, e->n_batches, tokens);
}

void log_header(Trainer *t, int resumed)
{
    char a[256], b[256];
    corpus_describe(&t->data.train, a, sizeof a);
    rundir_log(&t->run.dir, "training data: %s", a);
    if (t->data.valid) {
        corpus_describe(t->data.valid, b, sizeof b);
        rundir_log(&t->run.dir, "validation data: %s", b);
    }
    rundir_log(&t->run.dir, "vocabularies: source %d, target %d; model: %zu parameters; run "
               "directory: %s", t->data.src_vocab.size, t->data.tgt_vocab.size, t->model.P.n,
               t->run.dir.dir);
    const Config *cfg = t->cfg;
    char model[320]; /* the longest description (the whole Transformer, tied and shared) fits */
    model_describe(&t->model.dims, model, sizeof model);
    char drop_e[32], drop_r[32], smooth[32];
    rundir_log(&t->run.dir, "model: %s; embedding dropout %s, readout dropout %s, label smoothing "
               "%s", model, number_shortest(drop_e, sizeof drop_e, cfg->model.embedding_dropout),
               number_shortest(drop_r, sizeof drop_r, cfg->model.readout_dropout),
               number_shortest(smooth, sizeof smooth, cfg->training.label_smoothing));
    const long shards = cfg->training.shards;
    const int threads = workers_threads(t->model.shards.workers);
    const int ranks = ranks_size();
    /* the threads a rank was given (training.threads, resolved), of which it uses no
     * more than a shard each and the exchange's */
    char given[64] = "training.threads";
    if (threads != t->model.eval_blas_threads)
        snprintf(given, sizeof given, "of the %d of training.threads", t->model.eval_blas_threads);
    if (ranks > 1)
        rundir_log(&t->run.dir, "each batch in %ld shards (training.shards) over %d processes "
                   "(mpirun), %d each on %d thread%s (%s), %d BLAS thread%s each; "
                   "%s; rank 0 writes the run", shards, ranks, t->model.shards.local, threads,
                   plural(threads), given, t->model.step_blas_threads,
                   plural(t->model.step_blas_threads),
                   t->model.shards.overlap
                       ? "a thread of its own sends the output layer's gradient during the "
                         "backward pass"
                       : "the gradients go after the passes (a thread more than the shards "
                         "would send the output layer's during them)");
    else
        rundir_log(&t->run.dir,
                   "each batch in %ld shard%s (training.shards) on %d thread%s, %d BLAS "
                   "thread%s each", shards, plural(shards), threads, plural(threads),
                   t->model.step_blas_threads, plural(t->model.step_blas_threads));
    log_batches(t);
    if (t->val.average.k > 1)
        rundir_log(&t->run.dir,
                   "validation scores, and best.ckpt keeps, the mean of the weights at "
                   "the last %d validations (training.average_last); the alignment dumps show "
                   "the weights of the moment", t->val.average.k);
    const long warmup = config_warmup_steps(cfg);
    if (warmup > 0) {
        char lr[32];
        rundir_log(&t->run.dir, "learning rate: rises linearly to %s over the first %ld update%s "
                   "(training.warmup_steps%s)", number_shortest(lr, sizeof lr,
                   cfg->training.learning_rate), warmup, plural(warmup),
                   cfg->training.warmup_steps < 0 ? " -1: the self-attention layers' default" : "");
        if (cfg->training.scheduling == SCHEDULING_INVERSE_SQRT)
            rundir_log(&t->run.dir, "learning rate: then falls as sqrt(%ld / k) at update k "
                       "(training.scheduling: inverse_sqrt)", warmup);
    }
    if (!model_has_alignments(&t->model.dims) && cfg->alignments.every > 0)
        rundir_log(&t->run.dir, "no attention (model.attention: none): no alignments to dump");
    if (t->model.dims.hard) {
        char w[4][32];
        rundir_log(&t->run.dir,
                   "hard attention: %s reward, reinforce weight %s, entropy weight %s, "
                   "expected context for a sentence with probability %s after %ld warm-up steps, "
                   "baseline decay %s",
                   cfg->training.hard_reward == HARD_REWARD_TOKEN ? "token" : "sentence",
                   number_shortest(w[0], sizeof w[0], cfg->training.hard_reinforce_weight),
                   number_shortest(w[1], sizeof w[1], cfg->training.hard_entropy_weight),
                   number_shortest(w[2], sizeof w[2], cfg->training.hard_expected_prob),
                   cfg->training.hard_warmup_steps,
                   number_shortest(w[3], sizeof w[3], cfg->training.hard_baseline_decay));
    }
    if (t->model.dims.hard || config_decodes_argmax(cfg, -1))
        rundir_log(&t->run.dir,
                   "validation loss, translations, alignment dumps and the test use %s "
                   "contexts (translate.attention_mode)",
                   config_decodes_argmax(cfg, -1) ? "argmax" : "soft (expected)");
    if (resumed)
        rundir_log(&t->run.dir, "resuming at step %ld (epoch %.3f)", t->prog.step,
                   epochs_progress(&t->data.batcher));
}

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
        double left = ((double)cfg->training.epochs - epochs_progress(&t->data.batcher)) *
                      t->data.batcher.n_batches * per_step;
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

void log_progress(Trainer *t, int line_due)
{
    double loss = t->prog.log_steps ? t->prog.log_loss / (double)t->prog.log_steps : NAN;
    double tok_s = t->prog.log_seconds > 0 ? (double)t->prog.log_tokens / t->prog.log_seconds : 0;
    char eta[32] = "?";
    double e = eta_seconds(t);
    if (e >= 0)
        format_duration(e, eta, sizeof eta);
    double epoch = epochs_progress(&t->data.batcher);
    if (t->run.dir.tty && t->prog.train_seconds - t->run.live_at >= 0.25) {
        t->run.live_at = t->prog.train_seconds;
        char total[32] = "";
        if (t->cfg->training.max_steps > 0)
            snprintf(total, sizeof total, "/%ld", t->cfg->training.max_steps);
        char lr[32];
        rundir_live(&t->run.dir, "epoch %.2f | step %ld%s | loss %.4f | ppl %.2f | %.0f tok/s | "
                    "lr %s | eta %s", epoch, t->prog.step, total, loss, exp(loss), tok_s,
                    number_digits(lr, sizeof lr, learning_rate_at(t, t->prog.step), 3), eta);
    }
    if (!line_due)
        return;
    char line[512], hard[160] = "", hard_json[256] = "", lr[32], lr_json[32];
    const double rate = learning_rate_at(t, t->prog.step);
    if (t->model.dims.hard)
        hard_log_fields(t, hard, sizeof hard, hard_json, sizeof hard_json);
    snprintf(line, sizeof line, "step=%ld epoch=%.3f loss=%.4f ppl=%.2f tok_per_s=%.0f lr=%s "
             "elapsed=%.1fs eta=%s%s", t->prog.step, epoch, loss, exp(loss), tok_s,
             number_digits(lr, sizeof lr, rate, 4), t->prog.train_seconds, eta, hard);
    if (t->run.dir.tty) { /* the live line shows it; the log keeps it */
        rundir_note(&t->run.dir, "%s", line);
    } else {
        rundir_log(&t->run.dir, "%s", line);
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
    rundir_metrics(&t->run.dir, json);
    t->prog.log_loss = 0;
    t->prog.log_steps = t->prog.log_tokens = 0;
    t->prog.log_seconds = 0;
}
