/* checkpoint.c: the sections of an s2s checkpoint, written and checked (see
 * checkpoint.h). Fixed-size little helpers pack the numbers; every read is bounds-
 * checked, so a damaged file gives a message, never a crash. */
#include "train/checkpoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "train/sectionfile.h"

/* ---- packing ----------------------------------------------------------------------------- */

typedef struct {
    unsigned char *b;
    size_t len, cap;
} Pack;

static void pack_bytes(Pack *p, const void *data, size_t n)
{
    if (p->len + n > p->cap) {
        p->cap = (p->len + n) * 2 + 64;
        p->b = xrealloc_array(p->b, p->cap, 1);
    }
    memcpy(p->b + p->len, data, n);
    p->len += n;
}

static void pack_i64(Pack *p, int64_t v) { pack_bytes(p, &v, 8); }
static void pack_u64(Pack *p, uint64_t v) { pack_bytes(p, &v, 8); }
static void pack_f64(Pack *p, double v) { pack_bytes(p, &v, 8); }

typedef struct {
    const unsigned char *b;
    size_t len, at;
    int bad;
} Unpack;

static void take(Unpack *u, void *out, size_t n)
{
    if (u->bad || u->len - u->at < n) {
        u->bad = 1;
        memset(out, 0, n);
        return;
    }
    memcpy(out, u->b + u->at, n);
    u->at += n;
}

static int64_t take_i64(Unpack *u) { int64_t v; take(u, &v, 8); return v; }
static uint64_t take_u64(Unpack *u) { uint64_t v; take(u, &v, 8); return v; }
static double take_f64(Unpack *u) { double v; take(u, &v, 8); return v; }

/* ---- saving ----------------------------------------------------------------------------------- */

static void pack_vocab(Pack *p, const Vocab *v)
{
    pack_i64(p, v->size);
    for (int k = 0; k < v->size; k++)
        pack_bytes(p, v->words[k], strlen(v->words[k]) + 1);
}

static void pack_dims(Pack *p, const Dims *d)
{
    const int64_t v[7] = {d->src_vocab, d->tgt_vocab, d->emb, d->enc_hidden, d->dec_hidden,
                          d->attn, d->readout};
    for (int k = 0; k < 7; k++)
        pack_i64(p, v[k]);
}

static void pack_tensor_table(Pack *p, const Params *params)
{
    pack_i64(p, params->n_tensors);
    for (int t = 0; t < params->n_tensors; t++) {
        const Tensor *x = &params->tensors[t];
        pack_bytes(p, x->name, strlen(x->name) + 1);
        pack_i64(p, x->rows);
        pack_i64(p, x->cols);
    }
}

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
                    const double *picture_mean, const Optimizer *optim,
                    const Progress *progress, const WeightAverage *average, Error *err)
{
    Pack p[10] = {{0}};
    for (int c = 0; picture_mean && c < 3; c++)
        pack_f64(&p[9], picture_mean[c]);
    pack_dims(&p[0], dims);
    pack_vocab(&p[1], src_vocab);
    pack_vocab(&p[2], tgt_vocab);
    pack_tensor_table(&p[3], params);
    if (optim)
        pack_optim(&p[4], optim);
    if (progress) {
        pack_progress(&p[5], progress);
        pack_logs(&p[6], progress);
        pack_hard(&p[7], progress);
        pack_dump(&p[8], progress);
    }
    SectionWriter w;
    int rc = -1;
    if (secfile_begin(&w, path, err) < 0)
        goto done;
    if (secfile_section(&w, "CONF", config_yaml, strlen(config_yaml), err) < 0 ||
        secfile_section(&w, "DIMS", p[0].b, p[0].len, err) < 0 ||
        secfile_section(&w, "VSRC", p[1].b, p[1].len, err) < 0 ||
        secfile_section(&w, "VTGT", p[2].b, p[2].len, err) < 0 ||
        secfile_section(&w, "TNSR", p[3].b, p[3].len, err) < 0 ||
        secfile_section(&w, "PARM", params->mem, sizeof(float) * params->n, err) < 0 ||
        (picture_mean && secfile_section(&w, "IMGM", p[9].b, p[9].len, err) < 0))
        goto fail;
    if (optim) {
        size_t state = optim->kind == OPTIM_SGD ? 0 : sizeof(float) * optim->n;
        if (secfile_section(&w, "OPTM", p[4].b, p[4].len, err) < 0 ||
            (state && (secfile_section(&w, "OPTA", optim->m, state, err) < 0 ||
                       secfile_section(&w, "OPTB", optim->v, state, err) < 0)))
            goto fail;
    }
    if (progress && (secfile_section(&w, "PROG", p[5].b, p[5].len, err) < 0 ||
                     secfile_section(&w, "LOGS", p[6].b, p[6].len, err) < 0 ||
                     secfile_section(&w, "HARD", p[7].b, p[7].len, err) < 0 ||
                     secfile_section(&w, "DUMP", p[8].b, p[8].len, err) < 0))
        goto fail;
    if (progress && average && average->k > 1 && pack_average(&w, average, err) < 0)
        goto fail;
    rc = secfile_commit(&w, err);
    goto done;
fail:
    secfile_abort(&w);
done:
    for (int k = 0; k < 10; k++)
        free(p[k].b);
    return rc;
}

/* ---- loading --------------------------------------------------------------------------------- */

static const Section *need(const SectionFile *f, const char *tag, const char *name, Error *err)
{
    const Section *s = secfile_find(f, tag);
    if (!s)
        error_set(err, "checkpoint `%s` has no %s section", name, tag);
    return s;
}

static int load_vocab(Vocab *v, const Section *s, const char *name, Error *err)
{
    Unpack u = {s->data, s->len, 0, 0};
    int64_t n = take_i64(&u);
    if (u.bad || n < N_SPECIAL_TOKENS || (uint64_t)n > s->len)
        return error_set(err, "checkpoint `%s`: bad vocabulary in section %s", name, s->tag);
    const char **words = xmalloc_array((size_t)n, sizeof(char *));
    int ok = 1;
    for (int64_t k = 0; k < n && ok; k++) {
        const unsigned char *start = u.b + u.at;
        const unsigned char *nul = memchr(start, '\0', u.len - u.at);
        ok = nul != NULL;
        if (ok) {
            words[k] = (const char *)start;
            u.at += (size_t)(nul - start) + 1;
        }
    }
    int rc = 0;
    if (!ok || u.at != u.len || vocab_from_list(v, words, (int)n) < 0)
        rc = error_set(err, "checkpoint `%s`: bad vocabulary in section %s", name, s->tag);
    free(words);
    return rc;
}

static int load_dims(Dims *d, const Config *cfg, const Section *s, const char *name,
                     Error *err)
{
    Unpack u = {s->data, s->len, 0, 0};
    int64_t v[7];
    for (int k = 0; k < 7; k++)
        v[k] = take_i64(&u);
    for (int k = 0; k < 7; k++)
        if (v[k] < 1 || v[k] > 100000000)
            u.bad = 1;
    if (u.bad || u.at != u.len)
        return error_set(err, "checkpoint `%s`: bad model sizes (section DIMS)", name);
    /* the sizes are the file's; the architecture (score, heads, cells, depth) is its
     * config's */
    *d = config_model_dims(cfg, (int)v[0], (int)v[1]);
    d->emb = (int)v[2];
    d->enc_hidden = (int)v[3];
    d->dec_hidden = (int)v[4];
    d->attn = (int)v[5];
    d->readout = (int)v[6];
    if (cfg->model.self_attention_ffn == 0) /* 4 d_h, of the file's sizes */
        d->sa_ffn = 4 * model_annotation_width(d);
    if (d->tie_output && d->readout != d->emb) /* W_o is E_y: the shapes must agree */
        return error_set(err, "checkpoint `%s`: a tied output layer with readout size %d and "
                         "embedding size %d (they must be equal)", name, d->readout, d->emb);
    return 0;
}

/* The stored tensor table must be the one these sizes and this architecture give. The
 * first tensor that differs is named with both shapes: that says more than the counts
 * (a config naming another cell or score than the weights were trained with). */
static int check_tensors(const Params *p, const Section *s, const char *name, Error *err)
{
    Unpack u = {s->data, s->len, 0, 0};
    int64_t n = take_i64(&u);
    if (u.bad || n < 0 || n > MODEL_MAX_TENSORS)
        return error_set(err, "checkpoint `%s`: bad tensor table (section TNSR)", name);
    for (int t = 0; t < n && t < p->n_tensors; t++) {
        const Tensor *x = &p->tensors[t];
        const unsigned char *start = u.b + u.at;
        const unsigned char *nul = u.at < u.len ? memchr(start, '\0', u.len - u.at) : NULL;
        if (!nul)
            return error_set(err, "checkpoint `%s`: bad tensor table (section TNSR)", name);
        u.at += (size_t)(nul - start) + 1;
        int64_t rows = take_i64(&u), cols = take_i64(&u);
        if (u.bad)
            return error_set(err, "checkpoint `%s`: bad tensor table (section TNSR)", name);
        if (strcmp((const char *)start, x->name) || rows != x->rows || cols != x->cols)
            return error_set(err, "checkpoint `%s`: tensor %d is %.40s (%lld x %lld), this model "
                             "expects %s (%d x %d)", name, t + 1, (const char *)start,
                             (long long)rows, (long long)cols, x->name, x->rows, x->cols);
    }
    if (n != p->n_tensors)
        return error_set(err, "checkpoint `%s`: %lld tensors, this model has %d", name,
                         (long long)n, p->n_tensors);
    if (u.at != u.len) /* bytes the table does not explain */
        return error_set(err, "checkpoint `%s`: bad tensor table (section TNSR)", name);
    return 0;
}

/* AVGK and AVGW, if the run averaged (pack_average). */
static int load_average(Checkpoint *ck, const SectionFile *f, const char *name, Error *err)
{
    const Section *head = secfile_find(f, "AVGK"), *ring;
    if (!head)
        return 0;
    if (!(ring = need(f, "AVGW", name, err)))
        return -1;
    Unpack u = {head->data, head->len, 0, 0};
    int64_t k = take_i64(&u), count = take_i64(&u), oldest = take_i64(&u);
    if (u.bad || u.at != u.len || k != ck->config.training.average_last || count < 1 ||
        count > k || oldest < 0 || oldest >= count || (count < k && oldest != 0))
        return error_set(err, "checkpoint `%s`: bad weight average (section AVGK)", name);
    const size_t n = ck->params.n;
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
    const Section *o = need(f, "OPTM", name, err), *g;
    if (!o || !(g = need(f, "PROG", name, err)))
        return -1;
    Unpack u = {o->data, o->len, 0, 0};
    int64_t kind = take_i64(&u), step = take_i64(&u);
    double beta1 = take_f64(&u), beta2 = take_f64(&u), eps = take_f64(&u);
    uint64_t n = take_u64(&u);
    if (u.bad || u.at != u.len || kind < OPTIM_ADAM || kind > OPTIM_ADADELTA || step < 0 ||
        n != ck->params.n)
        return error_set(err, "checkpoint `%s`: bad optimizer state (section OPTM)", name);
    optim_init(&ck->optim, (OptimKind)kind, ck->params.n, 0);
    ck->optim.step = step;
    ck->optim.beta1 = (float)beta1;
    ck->optim.beta2 = (float)beta2;
    ck->optim.eps = (float)eps;
    if (kind != OPTIM_SGD) {
        const Section *a = need(f, "OPTA", name, err), *b;
        if (!a || !(b = need(f, "OPTB", name, err)))
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

/* An image model's channel means (IMGM): what its pictures were less in training. */
static int load_picture_mean(Checkpoint *ck, const SectionFile *f, const char *name, Error *err)
{
    const Section *s = need(f, "IMGM", name, err);
    if (!s)
        return -1;
    Unpack u = {s->data, s->len, 0, 0};
    for (int c = 0; c < 3; c++)
        ck->picture_mean[c] = take_f64(&u);
    for (int c = 0; c < 3; c++)
        if (!isfinite(ck->picture_mean[c]) || ck->picture_mean[c] < 0 || ck->picture_mean[c] > 1)
            u.bad = 1;
    if (u.bad || u.at != u.len)
        return error_set(err, "checkpoint `%s`: bad channel means (expected 3 numbers in [0, 1]; "
                         "section IMGM)",
                         name);
    return 0;
}

static int load_from(Checkpoint *ck, const SectionFile *f, const char *name, int with_training,
                     Error *err)
{
    const Section *conf = need(f, "CONF", name, err), *s;
    if (!conf)
        return -1;
    ck->config_yaml = xmalloc(conf->len + 1);
    memcpy(ck->config_yaml, conf->data, conf->len);
    ck->config_yaml[conf->len] = '\0';
    config_defaults(&ck->config);
    char conf_name[600];
    snprintf(conf_name, sizeof conf_name, "%s (its config, section CONF)", name);
    if (config_load_buffer(&ck->config, ck->config_yaml, conf->len, conf_name, err) < 0 ||
        config_validate(&ck->config, err) < 0)
        return -1;
    config_keep_older_behaviour(&ck->config);
    if (!(s = need(f, "DIMS", name, err)) || load_dims(&ck->dims, &ck->config, s, name, err) < 0)
        return -1;
    if (!(s = need(f, "VSRC", name, err)) || load_vocab(&ck->src_vocab, s, name, err) < 0)
        return -1;
    if (!(s = need(f, "VTGT", name, err)) || load_vocab(&ck->tgt_vocab, s, name, err) < 0)
        return -1;
    if (ck->src_vocab.size != ck->dims.src_vocab || ck->tgt_vocab.size != ck->dims.tgt_vocab)
        return error_set(err, "checkpoint `%s`: vocabularies of %d and %d words for a model "
                         "of %d and %d", name, ck->src_vocab.size, ck->tgt_vocab.size,
                         ck->dims.src_vocab, ck->dims.tgt_vocab);
    /* The sizes come from the file: its tensor table and weights are checked against
     * them before anything is allocated, so a damaged size cannot ask for more memory
     * than the file holds. */
    Params shape;
    size_t n_weights = params_carve(&shape, NULL, &ck->dims);
    if (!(s = need(f, "TNSR", name, err)) || check_tensors(&shape, s, name, err) < 0)
        return -1;
    if (!(s = need(f, "PARM", name, err)))
        return -1;
    if (s->len != sizeof(float) * n_weights)
        return error_set(err, "checkpoint `%s`: %llu bytes of weights, the model needs %zu (section "
                         "PARM)",
                         name, (unsigned long long)s->len, sizeof(float) * n_weights);
    if (ck->dims.encoder == ENCODER_IMAGE && load_picture_mean(ck, f, name, err) < 0)
        return -1;
    params_alloc(&ck->params, &ck->dims);
    memcpy(ck->params.mem, s->data, s->len);
    for (int t = 0; t < ck->params.n_tensors; t++) {
        const Tensor *x = &ck->params.tensors[t];
        for (size_t k = 0; k < (size_t)x->rows * x->cols; k++)
            if (!isfinite(x->data[k]))
                return error_set(err, "checkpoint `%s`: non-finite weight in %s", name, x->name);
    }
    const Section *prog = secfile_find(f, "PROG");
    if (prog && prog->len >= 8) {
        int64_t step;
        memcpy(&step, prog->data, 8);
        ck->step = step >= 0 ? (long)step : 0;
    }
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
    free(ck->config_yaml);
    vocab_free(&ck->src_vocab);
    vocab_free(&ck->tgt_vocab);
    params_free(&ck->params);
    optim_free(&ck->optim);
    weight_average_free(&ck->average);
    memset(ck, 0, sizeof *ck);
}
