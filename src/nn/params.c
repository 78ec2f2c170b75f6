/* params.c: the parameter layout of the model (see model.h): every tensor of every
 * variant listed once, in the order of checkpoints and initialisation, and the
 * initialisation of MODEL.md. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/model.h"

const char *score_name(ScoreKind score)
{
    static const char *const names[] = {"additive", "dot", "general", "scaled_dot", "none"};
    return names[score];
}

int model_key_width(const Dims *d)
{
    switch (d->score) {
    case SCORE_ADDITIVE:
    case SCORE_SCALED_DOT:
        return d->attn;
    case SCORE_GENERAL:
        return d->dec_hidden;
    case SCORE_DOT:
        return 2 * d->enc_hidden;
    case SCORE_NONE:
        break;
    }
    return 0;
}

/* Carves every tensor, or (without with_embeddings) every tensor but E_x and E_y. The
 * names of the default model (one GRU layer, additive) are those of checkpoint format
 * v1; encoder layers above the first are enc_fwd_l1, enc_bwd_l1, ... as torch numbers
 * them. */
static size_t carve(Params *p, real *base, const Dims *d, int with_embeddings)
{
    const int m = d->emb, n = d->enc_hidden, dp = d->dec_hidden, a = d->attn;
    const int readout = d->readout;
    const int Ge = cell_gates(d->enc_cell), Gd = cell_gates(d->dec_cell);
    assert(d->enc_layers >= 1 && d->enc_layers <= MODEL_MAX_LAYERS);
    size_t offset = 0;
    memset(p->tensors, 0, sizeof p->tensors);
    p->n_tensors = 0;
    /* CARVE(pointer, rows, cols, is_bias, printf-style name) */
#define CARVE(ptr, rows_, cols_, bias_, ...)                                            \
    do {                                                                               \
        assert(p->n_tensors < MODEL_MAX_TENSORS);                                      \
        Tensor *x = &p->tensors[p->n_tensors++];                                       \
        (ptr) = base ? base + offset : NULL;                                           \
        snprintf(x->name, sizeof x->name, __VA_ARGS__);                                \
        x->data = (ptr), x->rows = (rows_), x->cols = (cols_), x->is_bias = (bias_);   \
        offset += (size_t)(rows_) * (size_t)(cols_);                                   \
    } while (0)
    p->E_x = p->E_y = NULL;
    p->W_a = p->U_a = p->b_a = p->v_a = p->W_g = p->W_q = p->W_k = NULL;
    memset(p->enc_fwd, 0, sizeof p->enc_fwd);
    memset(p->enc_bwd, 0, sizeof p->enc_bwd);
    if (with_embeddings) {
        CARVE(p->E_x, d->src_vocab, m, 0, "E_x");
        CARVE(p->E_y, d->tgt_vocab, m, 0, "E_y");
    }
    for (int l = 0; l < d->enc_layers; l++) {
        const int in = l == 0 ? m : 2 * n;
        char layer[16] = "";
        if (l > 0)
            snprintf(layer, sizeof layer, "_l%d", l);
        for (int dir = 0; dir < 2; dir++) {
            CellParams *c = dir ? &p->enc_bwd[l] : &p->enc_fwd[l];
            const char *side = dir ? "bwd" : "fwd";
            CARVE(c->W_i, Ge * n, in, 0, "enc_%s%s.W_i", side, layer);
            CARVE(c->W_h, Ge * n, n, 0, "enc_%s%s.W_h", side, layer);
            CARVE(c->b_i, Ge * n, 1, 1, "enc_%s%s.b_i", side, layer);
            CARVE(c->b_h, Ge * n, 1, 1, "enc_%s%s.b_h", side, layer);
        }
    }
    CARVE(p->W_s, dp, n, 0, "W_s");
    CARVE(p->b_s, dp, 1, 1, "b_s");
    switch (d->score) {
    case SCORE_ADDITIVE:
        CARVE(p->W_a, a, dp, 0, "W_a");
        CARVE(p->U_a, a, 2 * n, 0, "U_a");
        CARVE(p->b_a, a, 1, 1, "b_a");
        CARVE(p->v_a, a, 1, 0, "v_a");
        break;
    case SCORE_GENERAL:
        CARVE(p->W_g, dp, 2 * n, 0, "W_g");
        break;
    case SCORE_SCALED_DOT:
        CARVE(p->W_q, a, dp, 0, "W_q");
        CARVE(p->W_k, a, 2 * n, 0, "W_k");
        break;
    case SCORE_DOT:
    case SCORE_NONE:
        break;
    }
    CARVE(p->dec.W_i, Gd * dp, m + 2 * n, 0, "dec.W_i");
    CARVE(p->dec.W_h, Gd * dp, dp, 0, "dec.W_h");
    CARVE(p->dec.b_i, Gd * dp, 1, 1, "dec.b_i");
    CARVE(p->dec.b_h, Gd * dp, 1, 1, "dec.b_h");
    CARVE(p->W_t, readout, dp + 2 * n + m, 0, "W_t");
    CARVE(p->b_t, readout, 1, 1, "b_t");
    CARVE(p->W_o, d->tgt_vocab, readout, 0, "W_o");
    CARVE(p->b_o, d->tgt_vocab, 1, 1, "b_o");
#undef CARVE
    return offset;
}

size_t params_carve(Params *p, real *base, const Dims *d)
{
    return carve(p, base, d, 1);
}

size_t params_carve_dense(Params *p, real *base, const Dims *d)
{
    return carve(p, base, d, 0);
}

void params_alloc(Params *p, const Dims *d)
{
    *p = (Params){0};
    size_t n = params_carve(p, NULL, d);
    p->mem = xcalloc(n, sizeof(real));
    p->n = n;
    params_carve(p, p->mem, d);
}

void params_free(Params *p)
{
    free(p->mem);
    *p = (Params){0};
}

void params_init(Params *p, Pcg32 *rng, float scale)
{
    for (int t = 0; t < p->n_tensors; t++) {
        const Tensor *x = &p->tensors[t];
        size_t count = (size_t)x->rows * x->cols;
        for (size_t k = 0; k < count; k++)
            x->data[k] = x->is_bias ? 0 : (real)pcg32_uniform(rng, -scale, scale);
    }
}
