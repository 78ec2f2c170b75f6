/* trainer_services.c: what the parts of the trainer share (trainer_parts.h), below them
 * all: a checkpoint of the moment, OpenBLAS's threads for a phase, and the learning
 * rate of a step. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fault.h"
#include "base/interrupt.h"
#include "nn/small_gemm.h"
#include "train/trainer_parts.h"

/* Checkpoints carry the state a resume needs, the data logs' lengths included. */
int save_checkpoint_with(Trainer *t, const char *name, const Params *weights, Error *err)
{
    if (!t->lead) /* one process writes the run */
        return 0;
    t->prog.epoch = t->data.batcher.epoch;
    t->prog.next_batch = t->data.batcher.next;
    t->prog.rng_state = t->data.batcher.epoch_start.state;
    t->prog.rng_inc = t->data.batcher.epoch_start.inc;
    RunMarks marks = rundir_marks(&t->run.dir); /* the logs are durable before the checkpoint */
    t->prog.metrics_bytes = marks.metrics_bytes;
    t->prog.alignments_bytes = marks.alignments_bytes;
    fault_trace("marks %lld %lld", (long long)marks.metrics_bytes,
                (long long)marks.alignments_bytes);
    char path[2200];
    snprintf(path, sizeof path, "checkpoints/%s", name);
    char full[4400];
    rundir_path(&t->run.dir, path, full, sizeof full);
    interrupt_saving(1);
    fault_signal_at("save", t->prog.step);
    int rc = checkpoint_save(full, t->config_yaml, &t->model.dims, &t->data.src_vocab,
                             &t->data.tgt_vocab,
                             weights, t->data.train.pics.n ? t->data.train.mean : NULL,
                             &t->data.subwords,
                             &t->model.opt, &t->prog,
                             t->val.average.count > 0 ? &t->val.average : NULL, err);
    interrupt_saving(0);
    if (rc == 0 && !strcmp(name, "last.ckpt"))
        t->run.last_saved = t->prog.step;
    return rc;
}

int save_checkpoint(Trainer *t, const char *name, Error *err)
{
    return save_checkpoint_with(t, name, &t->model.P, err);
}

void use_blas_threads(Trainer *t, int eval)
{
    const int want = eval ? t->model.eval_blas_threads : t->model.step_blas_threads;
    if (openblas_get_num_threads() != want)
        openblas_set_num_threads(want);
    small_gemm_enable(!eval && t->cfg->training.shards > 1);
}

/* The learning rate of update k (1-based): the scheduled rate (prog.lr, which the plateau
 * rule decays), times k / W during the W warm-up updates, and with inverse_sqrt times
 * sqrt(W / k) after them (the two meet at k = W). A function of the step alone (and of
 * prog.lr, which is in the checkpoint), so a resumed run uses the rates a straight run
 * does. */
double learning_rate_at(const Trainer *t, long k)
{
    const long w = config_warmup_steps(t->cfg);
    if (k < w)
        return t->prog.lr * (double)k / (double)w;
    if (t->cfg->training.scheduling == SCHEDULING_INVERSE_SQRT)
        return t->prog.lr * sqrt((double)w / (double)k);
    return t->prog.lr;
}
