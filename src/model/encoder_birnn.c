/* encoder_birnn.c: the bidirectional recurrent encoder of model/MODEL.md behind encoder.h:
 * `layers` stacked layers of any cell, each direction's input projection for every
 * position in one gemm, then the recurrences. h_j = [fwd_h_j ; bwd_h_j] of the top
 * layer (d_h = 2n), through the self-attention layers when there are any (RNMT+'s
 * cascaded encoder); s_0 comes from the top recurrent layer's bwd_h_1, and score none's
 * fixed context is its [fwd_h_S ; bwd_h_1]. Never allocates. */
#include <stdio.h>
#include <string.h>

#include "model/encoder.h"
#include "nn/ops.h"

static int birnn_width(const EncoderDims *d)
{
    return 2 * d->hidden;
}

static int birnn_init_width(const EncoderDims *d)
{
    return d->hidden;
}

/* Names of checkpoint format v1 for the first layer; layers above it are enc_fwd_l1,
 * enc_bwd_l1, ... as torch numbers them. */
static void birnn_carve_params(EncoderParams *p, TensorCarver *c, const EncoderDims *d)
{
    const int n = d->hidden, Gn = cell_gates(d->cell) * n;
    memset(p, 0, sizeof *p);
    for (int l = 0; l < d->layers; l++) {
        const int in = l == 0 ? d->emb : 2 * n;
        char layer[16] = "";
        if (l > 0)
            snprintf(layer, sizeof layer, "_l%d", l);
        for (int dir = 0; dir < 2; dir++) {
            CellParams *x = dir ? &p->bwd[l] : &p->fwd[l];
            const char *side = dir ? "bwd" : "fwd";
            x->W_i = tensor_carve(c, Gn, in, 0, "enc_%s%s.W_i", side, layer);
            x->W_h = tensor_carve(c, Gn, n, 0, "enc_%s%s.W_h", side, layer);
            x->b_i = tensor_carve(c, Gn, 1, 1, "enc_%s%s.b_i", side, layer);
            x->b_h = tensor_carve(c, Gn, 1, 1, "enc_%s%s.b_h", side, layer);
        }
    }
    sa_carve(p->sa, c, &d->sa);
}

static void birnn_carve_work(EncoderWork *w, Arena *ar, const EncoderDims *d, int B, int S,
                             int with_summary, int with_backward)
{
    const size_t n = d->hidden, SB = (size_t)S * B;
    const size_t G = cell_gates(d->cell), C = cell_cache_width(d->cell);
    const int L = d->layers;
    w->B = B, w->S = S;
    encoder_carve_embeddings(w, ar, d, B, S, with_backward);
#define TAKE(field, count) (w->field = arena_alloc(ar, (count), sizeof(*w->field)))
    for (int l = 0; l < L; l++) {
        TAKE(xg_fwd[l], SB * G * n);
        TAKE(xg_bwd[l], SB * G * n);
        TAKE(cache_fwd[l], SB * C * n);
        TAKE(cache_bwd[l], SB * C * n);
        TAKE(out[l], SB * 2 * n);
    }
    sa_carve_work(&w->sa, ar, &d->sa, B, S, with_backward);
    real *top = w->out[L - 1];
    w->H = (real *)sa_output(&w->sa, &d->sa, top);
    /* s_0 reads bwd_h_1: the second half of position 0's rows of the top layer */
    w->ld_init = (int)(2 * n);
    w->init = top ? top + n : NULL;
    w->summary = with_summary ? arena_alloc(ar, (size_t)B * 2 * n, sizeof(real)) : NULL;
    w->d_H = w->d_init = w->d_summary = w->d_top = w->d_below = w->d_carry = NULL;
    if (with_backward) {
        TAKE(d_carry, cell_sequence_scratch(d->cell, B, (int)n));
        TAKE(d_H, SB * 2 * n);
        if (d->sa.layers)
            TAKE(d_top, SB * 2 * n);
        else
            w->d_top = w->d_H;
        w->d_init = w->d_top ? w->d_top + n : NULL;
        if (L > 1)
            TAKE(d_below, SB * 2 * n);
        if (with_summary)
            TAKE(d_summary, (size_t)B * 2 * n);
    }
#undef TAKE
}

static size_t birnn_backward_scratch(const EncoderDims *d, int B, int S)
{
    return (size_t)S * B * cell_gates(d->cell) * d->hidden;
}

static void birnn_forward(EncoderWork *w, const EncoderParams *P, const EncoderDims *d,
                          const EncoderSource *src)
{
    const int S = w->S, B = w->B, SB = S * B, n = d->hidden, Gn = cell_gates(d->cell) * n;
    const int *len = src->len;
    const real *ex = w->ex;
    encoder_embed_forward(w, d, src);
    /* layer after layer, writing each direction's half of out[l] (row stride 2n) */
    for (int l = 0; l < d->layers; l++) {
        const real *in = l == 0 ? ex : w->out[l - 1];
        const int in_width = l == 0 ? d->emb : 2 * n;
        linear_forward(w->xg_fwd[l], in, P->fwd[l].W_i, P->fwd[l].b_i, SB, in_width, Gn);
        linear_forward(w->xg_bwd[l], in, P->bwd[l].W_i, P->bwd[l].b_i, SB, in_width, Gn);
        cell_sequence_forward(d->cell, w->out[l], 2 * n, w->cache_fwd[l], w->xg_fwd[l],
                              P->fwd[l].W_h, P->fwd[l].b_h, len, S, B, n, 0);
        cell_sequence_forward(d->cell, w->out[l] + n, 2 * n, w->cache_bwd[l], w->xg_bwd[l],
                              P->bwd[l].W_h, P->bwd[l].b_h, len, S, B, n, 1);
    }
    const real *top = w->out[d->layers - 1];
    w->sa_in = top;
    sa_forward(&w->sa, P->sa, &d->sa, top, len, S, B, w->sa_dropout, w->rng);
    if (w->summary) /* [fwd_h_S ; bwd_h_1], S each sentence's own length */
        for (int b = 0; b < B; b++) {
            real *c = w->summary + (size_t)b * 2 * n;
            memcpy(c, top + ((size_t)(len[b] - 1) * B + b) * 2 * n, sizeof(real) * n);
            memcpy(c + n, top + (size_t)b * 2 * n + n, sizeof(real) * n);
        }
}

static void birnn_annotations_backward(EncoderParams *G, EncoderWork *w, const EncoderParams *P,
                                       const EncoderDims *d, const int *len)
{
    const int B = w->B, n = d->hidden;
    /* forward: H = the self-attention layers of the top layer's output */
    if (d->sa.layers)
        sa_backward(w->d_top, G->sa, &w->sa, w->d_H, P->sa, &d->sa, w->S, B);
    if (!w->d_summary)
        return;
    /* forward: summary = [fwd_h at the last position ; bwd_h at the first] */
    for (int b = 0; b < B; b++) {
        const real *dcf = w->d_summary + (size_t)b * 2 * n;
        real *last = w->d_top + ((size_t)(len[b] - 1) * B + b) * 2 * n;
        real *first = w->d_top + (size_t)b * 2 * n + n;
        for (int u = 0; u < n; u++) {
            last[u] += dcf[u];
            first[u] += dcf[n + u];
        }
    }
}

/* The recurrent layers, top to bottom, from d_top (where d_init lies) to the source
 * embeddings' gradient (over ex), and from there to the source's. */
static void birnn_backward(EncoderParams *G, EncoderWork *w, const EncoderParams *P,
                           const EncoderDims *d, const EncoderSource *src,
                           const EncoderSourceGrad *gsrc, real *scratch)
{
    const int S = w->S, B = w->B, SB = S * B, n = d->hidden, Gn = cell_gates(d->cell) * n;
    const int *len = src->len;
    const real *ex = w->ex;
    real *d_ex = w->ex;
    real *d_out = w->d_top;
    for (int l = d->layers - 1; l >= 0; l--) {
        CellParams *gf = &G->fwd[l], *gb = &G->bwd[l];
        const CellParams *pf = &P->fwd[l], *pb = &P->bwd[l];
        /* the input projections' gradients overwrite them (the caches hold what the
         * recurrences' backward needs) */
        real *dxg_fwd = w->xg_fwd[l], *dxg_bwd = w->xg_bwd[l];
        cell_sequence_backward(d->cell, dxg_bwd, gb->W_h, gb->b_h, w->d_carry, scratch,
                               d_out + n, w->out[l] + n, 2 * n, w->cache_bwd[l], pb->W_h, len,
                               S, B, n, 1);
        cell_sequence_backward(d->cell, dxg_fwd, gf->W_h, gf->b_h, w->d_carry, scratch, d_out,
                               w->out[l], 2 * n, w->cache_fwd[l], pf->W_h, len, S, B, n, 0);
        /* forward: xg = in W_i^T + b_i per direction, in = ex or the layer below; the
         * weight gradients read in, and then d_in may overwrite it (d_ex over ex):
         * d_in (S*B, width) = dxg_fwd . W_i_fwd + dxg_bwd . W_i_bwd */
        const real *in = l ? w->out[l - 1] : ex;
        const int width = l ? 2 * n : d->emb;
        linear_backward(NULL, gf->W_i, gf->b_i, dxg_fwd, in, pf->W_i, SB, width, Gn);
        linear_backward(NULL, gb->W_i, gb->b_i, dxg_bwd, in, pb->W_i, SB, width, Gn);
        real *d_in = l ? (d_out == w->d_top ? w->d_below : w->d_top) : d_ex;
        matmul(CblasNoTrans, CblasNoTrans, SB, width, Gn, 1, dxg_fwd, Gn, pf->W_i, width, 0, d_in,
               width);
        matmul(CblasNoTrans, CblasNoTrans, SB, width, Gn, 1, dxg_bwd, Gn, pb->W_i, width, 1, d_in,
               width);
        d_out = d_in;
    }
    encoder_embed_backward(w, d, src, gsrc);
}

const EncoderOps birnn_encoder = {
    .name = "birnn",
    .width = birnn_width,
    .init_width = birnn_init_width,
    .carve_params = birnn_carve_params,
    .carve_work = birnn_carve_work,
    .backward_scratch = birnn_backward_scratch,
    .forward = birnn_forward,
    .annotations_backward = birnn_annotations_backward,
    .backward = birnn_backward,
};
