/* saved_model.c: the model's sections of a checkpoint, written and checked (see
 * saved_model.h). */
#include "run/saved_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "run/section_pack.h"

/* The sections of the sides' SentencePiece models: source, target. */
static const char *const SUBWORD_SECTIONS[2] = {"SPMS", "SPMT"};

/* ---- writing ---------------------------------------------------------------------------- */

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

int saved_model_write(SectionWriter *w, const char *config_yaml, const Dims *dims,
                      const Vocab *src_vocab, const Vocab *tgt_vocab, const Params *params,
                      const double *picture_mean, const SubwordModels *subwords, Error *err)
{
    Pack p[5] = {{0}};
    pack_dims(&p[0], dims);
    pack_vocab(&p[1], src_vocab);
    pack_vocab(&p[2], tgt_vocab);
    pack_tensor_table(&p[3], params);
    for (int c = 0; picture_mean && c < 3; c++)
        pack_f64(&p[4], picture_mean[c]);
    int rc = 0;
    if (secfile_section(w, "CONF", config_yaml, strlen(config_yaml), err) < 0 ||
        secfile_section(w, "DIMS", p[0].b, p[0].len, err) < 0 ||
        secfile_section(w, "VSRC", p[1].b, p[1].len, err) < 0 ||
        secfile_section(w, "VTGT", p[2].b, p[2].len, err) < 0 ||
        secfile_section(w, "TNSR", p[3].b, p[3].len, err) < 0 ||
        secfile_section(w, "PARM", params->mem, sizeof(float) * params->n, err) < 0 ||
        (picture_mean && secfile_section(w, "IMGM", p[4].b, p[4].len, err) < 0))
        rc = -1;
    for (int side = 0; rc == 0 && subwords && side < 2; side++)
        if (subwords->bytes[side] &&
            secfile_section(w, SUBWORD_SECTIONS[side], subwords->bytes[side], subwords->size[side],
                            err) < 0)
            rc = -1;
    for (int k = 0; k < 5; k++)
        free(p[k].b);
    return rc;
}

/* ---- reading ---------------------------------------------------------------------------- */

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
    if (cfg->model.self_attention_ffn == 0) { /* 4 d_h and 4 m, of the file's sizes */
        d->sa_ffn = 4 * model_annotation_width(d);
        d->dec_ffn = model_is_transformer(d) ? 4 * d->emb : 0;
    }
    if (d->share_embeddings && d->src_vocab != d->tgt_vocab) /* E_x is E_y */
        return error_set(err, "checkpoint `%s`: shared embeddings for vocabularies of %d and "
                         "%d words (they must be one)", name, d->src_vocab, d->tgt_vocab);
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

/* An image model's channel means (IMGM): what its pictures were less in training. */
static int load_picture_mean(SavedModel *m, const SectionFile *f, const char *name, Error *err)
{
    const Section *s = secfile_need(f, "IMGM", name, err);
    if (!s)
        return -1;
    Unpack u = {s->data, s->len, 0, 0};
    for (int c = 0; c < 3; c++)
        m->picture_mean[c] = take_f64(&u);
    for (int c = 0; c < 3; c++)
        if (!isfinite(m->picture_mean[c]) || m->picture_mean[c] < 0 || m->picture_mean[c] > 1)
            u.bad = 1;
    if (u.bad || u.at != u.len)
        return error_set(err, "checkpoint `%s`: bad channel means (expected 3 numbers in [0, 1]; "
                         "section IMGM)",
                         name);
    return 0;
}

/* The SentencePiece models of a model with data.subwords: sentencepiece: one per side
 * that reads text (SPMS, SPMT), each loaded. */
static int load_subwords(SavedModel *m, const SectionFile *f, const char *name, Error *err)
{
    for (int side = 0; side < 2; side++) {
        if (side == SIDE_SRC && model_reads_pictures(&m->dims))
            continue; /* a picture's grid has no words */
        const Section *s = secfile_need(f, SUBWORD_SECTIONS[side], name, err);
        if (!s)
            return -1;
        char where[700];
        snprintf(where, sizeof where, "checkpoint `%s`, section %s", name, SUBWORD_SECTIONS[side]);
        if (subword_models_set(&m->subwords, side, s->data, s->len, where, err) < 0)
            return -1;
    }
    return 0;
}

int saved_model_read(SavedModel *m, const SectionFile *f, const char *name, Error *err)
{
    const Section *conf = secfile_need(f, "CONF", name, err), *s;
    if (!conf)
        return -1;
    m->config_yaml = xmalloc(conf->len + 1);
    memcpy(m->config_yaml, conf->data, conf->len);
    m->config_yaml[conf->len] = '\0';
    config_defaults(&m->config);
    char conf_name[600];
    snprintf(conf_name, sizeof conf_name, "%s (its config, section CONF)", name);
    if (config_load_buffer(&m->config, m->config_yaml, conf->len, conf_name, err) < 0 ||
        config_validate(&m->config, err) < 0)
        return -1;
    config_keep_older_behaviour(&m->config);
    if (!(s = secfile_need(f, "DIMS", name, err)) || load_dims(&m->dims, &m->config, s, name,
                                                               err) < 0)
        return -1;
    if (!(s = secfile_need(f, "VSRC", name, err)) || load_vocab(&m->src_vocab, s, name, err) < 0)
        return -1;
    if (!(s = secfile_need(f, "VTGT", name, err)) || load_vocab(&m->tgt_vocab, s, name, err) < 0)
        return -1;
    if (m->src_vocab.size != m->dims.src_vocab || m->tgt_vocab.size != m->dims.tgt_vocab)
        return error_set(err, "checkpoint `%s`: vocabularies of %d and %d words for a model "
                         "of %d and %d", name, m->src_vocab.size, m->tgt_vocab.size,
                         m->dims.src_vocab, m->dims.tgt_vocab);
    for (int id = 0; m->dims.share_embeddings && id < m->src_vocab.size; id++)
        if (strcmp(vocab_word(&m->src_vocab, id), vocab_word(&m->tgt_vocab, id)))
            return error_set(err, "checkpoint `%s`: shared embeddings, but word %d is `%.40s` "
                             "in the source vocabulary and `%.40s` in the target's", name, id,
                             vocab_word(&m->src_vocab, id), vocab_word(&m->tgt_vocab, id));
    /* The sizes come from the file: its tensor table and weights are checked against
     * them before anything is allocated, so a damaged size cannot ask for more memory
     * than the file holds. */
    Params shape;
    size_t n_weights = params_carve(&shape, NULL, &m->dims);
    if (!(s = secfile_need(f, "TNSR", name, err)) || check_tensors(&shape, s, name, err) < 0)
        return -1;
    if (!(s = secfile_need(f, "PARM", name, err)))
        return -1;
    if (s->len != sizeof(float) * n_weights)
        return error_set(err,
                         "checkpoint `%s`: %llu bytes of weights, the model needs %zu (section "
                         "PARM)",
                         name, (unsigned long long)s->len, sizeof(float) * n_weights);
    if (model_reads_pictures(&m->dims) && load_picture_mean(m, f, name, err) < 0)
        return -1;
    if (m->config.data.subwords && load_subwords(m, f, name, err) < 0)
        return -1;
    params_alloc(&m->params, &m->dims);
    memcpy(m->params.mem, s->data, s->len);
    for (int t = 0; t < m->params.n_tensors; t++) {
        const Tensor *x = &m->params.tensors[t];
        for (size_t k = 0; k < (size_t)x->rows * x->cols; k++)
            if (!isfinite(x->data[k]))
                return error_set(err, "checkpoint `%s`: non-finite weight in %s", name, x->name);
    }
    const Section *prog = secfile_find(f, "PROG");
    if (prog && prog->len >= 8) {
        int64_t step;
        memcpy(&step, prog->data, 8);
        m->step = step >= 0 ? (long)step : 0;
    }
    return 0;
}

int saved_model_load_bytes(SavedModel *m, const void *bytes, size_t size, const char *name,
                           Error *err)
{
    memset(m, 0, sizeof *m);
    SectionFile f;
    int rc = secfile_parse(&f, bytes, size, name, err);
    if (rc == 0)
        rc = saved_model_read(m, &f, name, err);
    secfile_close(&f);
    return rc;
}

int saved_model_load(SavedModel *m, const char *path, Error *err)
{
    memset(m, 0, sizeof *m);
    SectionFile f;
    int rc = secfile_read(&f, path, err);
    if (rc == 0)
        rc = saved_model_read(m, &f, path, err);
    secfile_close(&f);
    return rc;
}

void saved_model_free(SavedModel *m)
{
    free(m->config_yaml);
    vocab_free(&m->src_vocab);
    vocab_free(&m->tgt_vocab);
    params_free(&m->params);
    subword_models_free(&m->subwords);
    memset(m, 0, sizeof *m);
}
