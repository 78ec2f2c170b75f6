/* checkpoint.c: the trainer's sections of a checkpoint, written and checked after the
 * model's (run/saved_model.h): the optimizer state, the progress, the logs' marks,
 * hard attention's state and the weight averages (see checkpoint.h). */
#include "train/checkpoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "run/section_pack.h"

/* ---- saving ----------------------------------------------------------------------------------- */

static void pack_progress(Pack *p, const Progress *g)
{
    pack_i64(p, g->step);
    pack_i64(p, g->epoch);
    pack_i64(p, g->next_batch);
    pack_u64(p, g->rng_state);
    pack_u64(p, g->rng_inc);
    pack_f64(p, g->lr);
    pack_f64(p, g->best_score);
    pack_i64(p, g->best_step);
    pack_i64(p, g->stale);
    pack_i64(p, g->plateau);
    pack_i64(p, g->bad_steps);
    pack_i64(p, g->skipped_steps);
    pack_i64(p, g->validations);
    pack_i64(p, g->tokens);
    pack_f64(p, g->train_seconds);
}

/* A section of its own, so checkpoints without it (format 1 as first released) load. */
static void pack_logs(Pack *p, const Progress *g)
{
    pack_i64(p, g->metrics_bytes);
    pack_i64(p, g->alignments_bytes);
    pack_f64(p, g->log_loss);
    pack_i64(p, g->log_steps);
    pack_i64(p, g->log_tokens);
    pack_f64(p, g->log_seconds);
    pack_i64(p, g->validated_step);
}

/* The step of the last attention dump: a section of its own, which older s2s skip and
 * which checkpoints before it lack (-1: unknown). */
static void pack_dump(Pack *p, const Progress *g)
{
    pack_i64(p, g->dumped_step);
}

/* Hard attention's state, a section of its own (checkpoints before it load with 0s). */
static void pack_hard(Pack *p, const Progress *g)
{
    pack_f64(p, g->hard_baseline);
    pack_f64(p, g->hard_token_baseline);
    pack_f64(p, g->log_reward);
    pack_i64(p, g->log_sampled);
    pack_i64(p, g->log_sampled_tokens);
    pack_f64(p, g->log_entropy);
    pack_i64(p, g->log_entropy_terms);
}

/* training.average_last's snapshots, sections of their own that only averaging runs
 * write: AVGK holds k, how many are held and the slot of the oldest; AVGW the ring's
 * slots in use (slots 0 to count - 1: a ring fills from slot 0). */
static int pack_average(SectionWriter *w, const WeightAverage *a, Error *err)
{
    Pack head = {0};
    pack_i64(&head, a->k);
    pack_i64(&head, a->count);
    pack_i64(&head, a->oldest);
    int rc = secfile_section(w, "AVGK", head.b, head.len, err);
    free(head.b);
    if (rc < 0)
        return -1;
    return secfile_section(w, "AVGW", a->ring, (size_t)a->count * a->n * sizeof(float), err);
}

static void pack_optim(Pack *p, const Optimizer *o)
{
    pack_i64(p, o->kind);
    pack_i64(p, o->step);
    pack_f64(p, o->beta1);
    pack_f64(p, o->beta2);
    pack_f64(p, o->eps);
    pack_u64(p, o->n);
}

int checkpoint_save(const char *path, const char *config_yaml, const Dims *dims,
                    const Vocab *src_vocab, const Vocab *tgt_vocab, const Params *params,
                    const double *picture_mean, const SubwordModels *subwords,
                    const Optimizer *optim,
                    const Progress *progress, const WeightAverage *average, Error *err)
{
    Pack p[5] = {{0}};
    if (optim)
        pack_optim(&p[0], optim);
    if (progress) {
        pack_progress(&p[1], progress);
        pack_logs(&p[2], progress);
        pack_hard(&p[3], progress);
        pack_dump(&p[4], progress);
    }
    SectionWriter w;
    int rc = -1;
    if (secfile_begin(&w, path, err) < 0)
        goto done;
    if (saved_model_write(&w, config_yaml, dims, src_vocab, tgt_vocab, params, picture_mean,
                          subwords, err) < 0)
        goto fail;
    if (optim) {
        size_t state = optim->kind == OPTIM_SGD ? 0 : sizeof(float) * optim->n;
        if (secfile_section(&w, "OPTM", p[0].b, p[0].len, err) < 0 ||
            (state && (secfile_section(&w, "OPTA", optim->m, state, err) < 0 ||
                       secfile_section(&w, "OPTB", optim->v, state, err) < 0)))
            goto fail;
    }
    if (progress && (secfile_section(&w, "PROG", p[1].b, p[1].len, err) < 0 ||
                     secfile_section(&w, "LOGS", p[2].b, p[2].len, err) < 0 ||
                     secfile_section(&w, "HARD", p[3].b, p[3].len, err) < 0 ||
                     secfile_section(&w, "DUMP", p[4].b, p[4].len, err) < 0))
        goto fail;
    if (progress && average && average->k > 1 && pack_average(&w, average, err) < 0)
        goto fail;
    rc = secfile_commit(&w, err);
    goto done;
fail:
    secfile_abort(&w);
done:
    for (int k = 0; k < 5; k++)
        free(p[k].b);
    return rc;
}

/* ---- loading --------------------------------------------------------------------------------- */

/* AVGK and AVGW, if the run averaged (pack_average). */
static int load_average(Checkpoint *ck, const SectionFile *f, const char *name, Error *err)
{
    const Section *head = secfile_find(f, "AVGK"), *ring;
    if (!head)
        return 0;
    if (!(ring = secfile_need(f, "AVGW", name, err)))
        return -1;
    Unpack u = {head->data, head->len, 0, 0};
    int64_t k = take_i64(&u), count = take_i64(&u), oldest = take_i64(&u);
    if (u.bad || u.at != u.len || k != ck->model.config.training.average_last || count < 1 ||
        count > k || oldest < 0 || oldest >= count || (count < k && oldest != 0))
        return error_set(err, "checkpoint `%s`: bad weight average (section AVGK)", name);
    const size_t n = ck->model.params.n;
    if (ring->len != (size_t)count * n * sizeof(float))
        return error_set(err, "checkpoint `%s`: %llu bytes of averaged weights, %lld snapshots "
                         "need %zu (section AVGW)", name, (unsigned long long)ring->len, (long long)count,
                         (size_t)count * n * sizeof(float));
    /* room for the snapshots the file holds; the trainer grows it to k */
    weight_average_init(&ck->average, (int)count, n);
    ck->average.k = (int)k;
    memcpy(ck->average.ring, ring->data, ring->len);
    ck->average.count = (int)count;
    ck->average.oldest = (int)oldest;
    for (size_t j = 0; j < (size_t)count * n; j++)
        if (!isfinite(ck->average.ring[j]))
            return error_set(err, "checkpoint `%s`: non-finite averaged weight (section AVGW)", name);
    return 0;
}

static int load_training(Checkpoint *ck, const SectionFile *f, const char *name, Error *err)
{
    const Section *o = secfile_need(f, "OPTM", name, err), *g;
    if (!o || !(g = secfile_need(f, "PROG", name, err)))
        return -1;
    Unpack u = {o->data, o->len, 0, 0};
    int64_t kind = take_i64(&u), step = take_i64(&u);
    double beta1 = take_f64(&u), beta2 = take_f64(&u), eps = take_f64(&u);
    uint64_t n = take_u64(&u);
    if (u.bad || u.at != u.len || kind < OPTIM_ADAM || kind > OPTIM_ADADELTA || step < 0 ||
        n != ck->model.params.n)
        return error_set(err, "checkpoint `%s`: bad optimizer state (section OPTM)", name);
    optim_init(&ck->optim, (OptimKind)kind, ck->model.params.n, 0);
    ck->optim.step = step;
    ck->optim.beta1 = (float)beta1;
    ck->optim.beta2 = (float)beta2;
    ck->optim.eps = (float)eps;
    if (kind != OPTIM_SGD) {
        const Section *a = secfile_need(f, "OPTA", name, err), *b;
        if (!a || !(b = secfile_need(f, "OPTB", name, err)))
            return -1;
        if (a->len != sizeof(float) * n || b->len != sizeof(float) * n)
            return error_set(err, "checkpoint `%s`: optimizer state of the wrong size (sections OPTA, OPTB)", name);
        memcpy(ck->optim.m, a->data, a->len);
        memcpy(ck->optim.v, b->data, b->len);
    }
    Unpack v = {g->data, g->len, 0, 0};
    Progress *p = &ck->progress;
    p->step = take_i64(&v);
    p->epoch = take_i64(&v);
    p->next_batch = take_i64(&v);
    p->rng_state = take_u64(&v);
    p->rng_inc = take_u64(&v);
    p->lr = take_f64(&v);
    p->best_score = take_f64(&v);
    p->best_step = take_i64(&v);
    p->stale = take_i64(&v);
    p->plateau = take_i64(&v);
    p->bad_steps = take_i64(&v);
    p->skipped_steps = take_i64(&v);
    p->validations = take_i64(&v);
    p->tokens = take_i64(&v);
    p->train_seconds = take_f64(&v);
    if (v.bad || v.at != v.len || p->step < 0 || p->epoch < 0 || p->next_batch < 0 ||
        !isfinite(p->lr) || p->lr <= 0)
        return error_set(err, "checkpoint `%s`: bad training progress (section PROG)", name);
    ck->optim.lr = (float)p->lr;
    p->metrics_bytes = p->alignments_bytes = -1;
    p->validated_step = p->step;
    p->dumped_step = -1;
    const Section *logs = secfile_find(f, "LOGS");
    if (logs) {
        Unpack w = {logs->data, logs->len, 0, 0};
        p->metrics_bytes = take_i64(&w);
        p->alignments_bytes = take_i64(&w);
        p->log_loss = take_f64(&w);
        p->log_steps = take_i64(&w);
        p->log_tokens = take_i64(&w);
        p->log_seconds = take_f64(&w);
        p->validated_step = take_i64(&w);
        if (w.bad || w.at != w.len || p->metrics_bytes < -1 || p->alignments_bytes < -1 ||
            !isfinite(p->log_loss) || p->log_steps < 0 || p->log_tokens < 0 ||
            !isfinite(p->log_seconds) || p->log_seconds < 0 || p->validated_step < 0 ||
            p->validated_step > p->step)
            return error_set(err, "checkpoint `%s`: bad log positions (section LOGS)", name);
    }
    const Section *dump = secfile_find(f, "DUMP");
    if (dump) {
        Unpack d = {dump->data, dump->len, 0, 0};
        p->dumped_step = take_i64(&d);
        if (d.bad || d.at != d.len || p->dumped_step < -1 || p->dumped_step > p->step)
            return error_set(err, "checkpoint `%s`: bad step of the last dump (section DUMP)", name);
    }
    const Section *hard = secfile_find(f, "HARD");
    if (hard) {
        Unpack h = {hard->data, hard->len, 0, 0};
        p->hard_baseline = take_f64(&h);
        p->hard_token_baseline = take_f64(&h);
        p->log_reward = take_f64(&h);
        p->log_sampled = take_i64(&h);
        p->log_sampled_tokens = take_i64(&h);
        p->log_entropy = take_f64(&h);
        p->log_entropy_terms = take_i64(&h);
        if (h.bad || h.at != h.len || !isfinite(p->hard_baseline) ||
            !isfinite(p->hard_token_baseline) || !isfinite(p->log_reward) ||
            !isfinite(p->log_entropy) || p->log_sampled < 0 ||
            p->log_sampled_tokens < p->log_sampled || p->log_entropy_terms < 0)
            return error_set(err, "checkpoint `%s`: bad hard-attention state (section HARD)", name);
    }
    if (load_average(ck, f, name, err) < 0)
        return -1;
    ck->has_training = 1;
    return 0;
}

static int load_from(Checkpoint *ck, const SectionFile *f, const char *name, int with_training,
                     Error *err)
{
    if (saved_model_read(&ck->model, f, name, err) < 0)
        return -1;
    return with_training ? load_training(ck, f, name, err) : 0;
}

int checkpoint_load_bytes(Checkpoint *ck, const void *bytes, size_t size, const char *name,
                          int with_training, Error *err)
{
    memset(ck, 0, sizeof *ck);
    SectionFile f;
    int rc = secfile_parse(&f, bytes, size, name, err);
    if (rc == 0)
        rc = load_from(ck, &f, name, with_training, err);
    secfile_close(&f);
    return rc;
}

int checkpoint_load(Checkpoint *ck, const char *path, int with_training, Error *err)
{
    memset(ck, 0, sizeof *ck);
    SectionFile f;
    int rc = secfile_read(&f, path, err);
    if (rc == 0)
        rc = load_from(ck, &f, path, with_training, err);
    secfile_close(&f);
    return rc;
}

void checkpoint_free(Checkpoint *ck)
{
    saved_model_free(&ck->model);
    optim_free(&ck->optim);
    weight_average_free(&ck->average);
    memset(ck, 0, sizeof *ck);
}
