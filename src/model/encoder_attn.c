/* encoder_attn.c: the attention-only encoder of model/MODEL.md behind encoder.h
 * (model.encoder_cell: none). No recurrence: X_j = sqrt(m) ex_j + PE_j, the sinusoidal
 * positions of Vaswani et al. (2017), then the self-attention layers (at least one):
 * H = X', d_h = m. Nothing else carries a sentence's order, so the positions are what
 * tells "dog bites man" from "man bites dog". s_0 (and an LSTM decoder's c_0, see
 * init_cell_state) comes from the mean of X' over the sentence's real positions, and
 * score none's fixed context is that mean too. Never allocates. */
#include <math.h>
#include <string.h>

#include "model/encoder.h"
#include "nn/ops.h"

static int attn_only_width(const EncoderDims *d)
{
    return d->emb;
}

static int attn_only_init_width(const EncoderDims *d)
{
    return d->emb;
}

static void attn_only_carve_params(EncoderParams *p, TensorCarver *c, const EncoderDims *d)
{
    memset(p, 0, sizeof *p);
    sa_carve(p->sa, c, &d->sa);
}

static void attn_only_carve_work(EncoderWork *w, Arena *ar, const EncoderDims *d, int B, int S,
                            int with_summary, int with_backward)
{
    const size_t m = d->emb, SB = (size_t)S * B;
    w->B = B, w->S = S;
    encoder_carve_embeddings(w, ar, d, B, S, with_backward);
    w->x = arena_alloc(ar, SB * m, sizeof(real));
    sa_carve_work(&w->sa, ar, &d->sa, B, S, with_backward);
    w->H = (real *)sa_output(&w->sa, &d->sa, w->x);
    w->mean = arena_alloc(ar, (size_t)B * m, sizeof(real));
    w->init = w->mean;
    w->ld_init = (int)m;
    w->summary = with_summary ? w->mean : NULL;
    w->d_H = w->d_init = w->d_summary = w->d_top = w->d_below = w->d_carry = NULL;
    if (with_backward) {
        w->d_H = arena_alloc(ar, SB * m, sizeof(real));
        w->d_init = arena_alloc(ar, (size_t)B * m, sizeof(real));
        if (with_summary)
            w->d_summary = arena_alloc(ar, (size_t)B * m, sizeof(real));
    }
}

static void attn_only_forward(EncoderWork *w, const EncoderParams *P, const EncoderDims *d,
                              const EncoderSource *src)
{
    const int S = w->S, B = w->B, m = d->emb;
    const int *len = src->len;
    const real *ex = w->ex;
    encoder_embed_forward(w, d, src);
    positions_forward(w->x, ex, 0, S, B, m);
    w->sa_in = w->x;
    sa_forward(&w->sa, P->sa, &d->sa, w->x, len, S, B, w->sa_dropout, w->rng);
    encoder_mean_forward(w, m, len);
}

static void attn_only_backward(EncoderParams *G, EncoderWork *w, const EncoderParams *P,
                               const EncoderDims *d, const EncoderSource *src,
                               const EncoderSourceGrad *gsrc, real *scratch)
{
    (void)scratch;
    const int S = w->S, B = w->B, m = d->emb;
    const int *len = src->len;
    real *d_ex = w->ex; /* ex is not read again */
    /* the mean is computed from H, the layers' output: its gradient joins d_H first */
    encoder_mean_backward(w, m, len);
    /* the layers, into d_H's own memory; then X = sqrt(m) ex + PE */
    sa_backward(w->d_H, G->sa, &w->sa, w->d_H, P->sa, &d->sa, S, B);
    const real scale = (real)sqrt((double)m);
    const size_t n = (size_t)S * B * m;
    for (size_t k = 0; k < n; k++)
        d_ex[k] = scale * w->d_H[k];
    encoder_embed_backward(w, d, src, gsrc);
}

const EncoderOps attention_only_encoder = {
    .name = "attention-only",
    .width = attn_only_width,
    .init_width = attn_only_init_width,
    .init_cell_state = 1,
    .carve_params = attn_only_carve_params,
    .carve_work = attn_only_carve_work,
    .backward_scratch = encoder_no_scratch,
    .forward = attn_only_forward,
    .annotations_backward = encoder_mean_annotations_backward,
    .backward = attn_only_backward,
};
