/* self_attention.c: post-LN Transformer encoder layers (see self_attention.h), as
 * torch.nn.TransformerEncoderLayer computes them. Per layer:
 *   [Q ; K ; V] = X [W_Q ; W_K ; W_V]^T + b           one gemm over every real position
 *   Z^k = softmax(Q^k K^k^T / sqrt(d/H)) V^k             per sentence and head
 *   Y   = LayerNorm_1(X + dropout(Z W_O^T + b_O))
 *   X'  = LayerNorm_2(Y + dropout(dropout(relu(Y W_1^T + b_1)) W_2^T + b_2))
 * and dropout on the attention weights too. The layers compute the batch's real rows
 * alone (nn/real_rows.h), gathered from the padded input and scattered into the padded
 * output. Never allocates. */
#include "nn/self_attention.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "nn/heads.h"
#include "nn/ops.h"
#include "nn/real_rows.h"
#include "nn/sublayers.h"

void sa_carve(SelfAttnParams *p, TensorCarver *c, const SelfAttnDims *d)
{
    const int w = d->width, F = d->ffn;
    memset(p, 0, sizeof *p * SA_MAX_LAYERS);
    assert(d->layers >= 0 && d->layers <= SA_MAX_LAYERS);
    for (int l = 0; l < d->layers; l++) {
        SelfAttnParams *x = &p[l];
        const int n = l + 1; /* layers count from 1, as s2s heatmap --self does */
        x->W_Q = tensor_carve(c, w, w, 0, "sa%d.W_Q", n);
        x->W_K = tensor_carve(c, w, w, 0, "sa%d.W_K", n);
        x->W_V = tensor_carve(c, w, w, 0, "sa%d.W_V", n);
        x->b_Q = tensor_carve(c, w, 1, 1, "sa%d.b_Q", n);
        x->b_K = tensor_carve(c, w, 1, 1, "sa%d.b_K", n);
        x->b_V = tensor_carve(c, w, 1, 1, "sa%d.b_V", n);
        x->W_O = tensor_carve(c, w, w, 0, "sa%d.W_O", n);
        x->b_O = tensor_carve(c, w, 1, 1, "sa%d.b_O", n);
        x->W_1 = tensor_carve(c, F, w, 0, "sa%d.W_1", n);
        x->b_1 = tensor_carve(c, F, 1, 1, "sa%d.b_1", n);
        x->W_2 = tensor_carve(c, w, F, 0, "sa%d.W_2", n);
        x->b_2 = tensor_carve(c, w, 1, 1, "sa%d.b_2", n);
        x->gamma_1 = tensor_carve(c, w, 1, TENSOR_ONES, "sa%d.gamma_1", n);
        x->beta_1 = tensor_carve(c, w, 1, 1, "sa%d.beta_1", n);
        x->gamma_2 = tensor_carve(c, w, 1, TENSOR_ONES, "sa%d.gamma_2", n);
        x->beta_2 = tensor_carve(c, w, 1, 1, "sa%d.beta_2", n);
    }
}

void sa_carve_work(SelfAttnWork *w, Arena *ar, const SelfAttnDims *d, int B, int S,
                   int with_backward)
{
    const size_t SB = (size_t)S * B, SS = (size_t)S * S, dw = d->width, F = d->ffn;
    const size_t H = d->heads;
    memset(w, 0, sizeof *w);
    if (d->layers == 0)
        return;
#define TAKE(field, count) (field = arena_alloc(ar, (count), sizeof(real)))
    real_rows_carve(&w->rows, ar, S, B);
    TAKE(w->x_rows, SB * dw);
    TAKE(w->out, SB * dw);
    for (int l = 0; l < d->layers; l++) {
        SelfAttnLayerWork *x = &w->layer[l];
        TAKE(x->qkv, SB * 3 * dw);
        TAKE(x->probs, B * H * SS);
        TAKE(x->mean, B * SS);
        TAKE(x->z, SB * dw);
        TAKE(x->xhat1, SB * dw);
        TAKE(x->rstd1, SB);
        TAKE(x->y, SB * dw);
        TAKE(x->u, SB * F);
        TAKE(x->xhat2, SB * dw);
        TAKE(x->rstd2, SB);
        TAKE(x->out, SB * dw);
        if (with_backward) {
            TAKE(x->r, SB * F);
            TAKE(x->mask_p, B * H * SS);
            TAKE(x->mask_a, SB * dw);
            TAKE(x->mask_r, SB * F);
            TAKE(x->mask_o, SB * dw);
        }
    }
    TAKE(w->probs_dropped, 2 * SS);
    if (with_backward) {
        TAKE(w->d_between, SB * dw);
        TAKE(w->d_y, SB * dw);
        TAKE(w->d_t, SB * dw);
        TAKE(w->d_r, SB * F);
        TAKE(w->d_z, SB * dw);
        TAKE(w->d_qkv, SB * 3 * dw);
    }
#undef TAKE
}

/* ---- the attention of one layer -------------------------------------------------- */

/* Sentence b's queries, keys and values in qkv (n, 3d): its rows lie together. */
static HeadsInput sentence_heads(const real *qkv, const RealRows *rr, int b, int H, int d)
{
    const real *Q = qkv + (size_t)rr->start[b] * 3 * d;
    const int S = rr->P, len = rr->len[b];
    return (HeadsInput){Q, Q + d, Q + 2 * d, 3 * d, 3 * d, 3 * d, len, len, 0, H, d, S,
                        (long)S * S};
}

void sa_attend_forward(real *z, real *probs, real *mean, const real *mask_p, real *scratch,
                       const real *qkv, const RealRows *rr, int H, int d)
{
    const int S = rr->P, B = rr->B;
    const size_t SS = (size_t)S * S;
    if (mean)
        memset(mean, 0, sizeof(real) * B * SS);
    memset(probs, 0, sizeof(real) * B * H * SS); /* 0 outside each sentence */
    for (int b = 0; b < B; b++) {
        const HeadsInput in = sentence_heads(qkv, rr, b, H, d);
        const size_t at = (size_t)b * H * SS;
        heads_forward(z + (size_t)rr->start[b] * d, d, rr->len[b], probs + at,
                      mean ? mean + b * SS : NULL, mask_p ? mask_p + at : NULL, scratch, &in);
    }
}

void sa_attend_backward(real *dqkv, const real *dz, const real *probs, const real *mask_p,
                        real *scratch, const real *qkv, const RealRows *rr, int H, int d)
{
    const int S = rr->P, B = rr->B;
    const size_t SS = (size_t)S * S;
    memset(dqkv, 0, sizeof(real) * (size_t)rr->n * 3 * d);
    for (int b = 0; b < B; b++) {
        const HeadsInput in = sentence_heads(qkv, rr, b, H, d);
        const size_t at = (size_t)b * H * SS, row = rr->start[b];
        real *dQ = dqkv + row * 3 * d;
        heads_backward(dQ, dQ + d, dQ + 2 * d, dz + row * d, d, probs + at,
                       mask_p ? mask_p + at : NULL, scratch, &in);
    }
}

/* ---- a layer --------------------------------------------------------------------- */

/* The ends of the layer's two sublayers: the attention's (W_O, norm 1) and the FFN's
 * (W_2, norm 2), tensors and activations. */
static SublayerEnd attention_end(const SelfAttnParams *P)
{
    return (SublayerEnd){P->W_O, P->b_O, P->gamma_1, P->beta_1, NULL};
}

static SublayerEnd ffn_end(const SelfAttnParams *P)
{
    return (SublayerEnd){P->W_2, P->b_2, P->gamma_2, P->beta_2, NULL};
}

static SublayerEndWork attention_end_work(const SelfAttnLayerWork *w)
{
    return (SublayerEndWork){w->y, w->xhat1, w->rstd1, w->mask_a};
}

static SublayerEndWork ffn_end_work(const SelfAttnLayerWork *w)
{
    return (SublayerEndWork){w->out, w->xhat2, w->rstd2, w->mask_o};
}

/* x (n, d) -> w->out (n, d), over rr's real rows. */
static void layer_forward(SelfAttnLayerWork *w, real *scratch, const SelfAttnParams *P,
                          const SelfAttnDims *D, const real *x, const RealRows *rr, double rate,
                          Pcg32 *rng)
{
    const int d = D->width, F = D->ffn, n = rr->n;
    w->dropped = rng && rate > 0 && w->mask_p;
    Pcg32 *drop = w->dropped ? rng : NULL;
    assert(P->W_K == P->W_Q + (size_t)d * d && P->b_K == P->b_Q + d); /* one in_proj */
    /* [Q ; K ; V] (n, 3d) = x (n, d) . [W_Q ; W_K ; W_V]^T + [b_Q ; b_K ; b_V] */
    linear_forward(w->qkv, x, P->W_Q, P->b_Q, n, d, 3 * d);
    if (w->dropped)
        heads_draw_masks(w->mask_p, rr->len, rr->len, rr->P, rr->P, rr->B, D->heads, rate, rng);
    sa_attend_forward(w->z, w->probs, w->mean, w->dropped ? w->mask_p : NULL, scratch, w->qkv,
                      rr, D->heads, d);
    /* Y = LayerNorm_1(x + dropout(z W_O^T + b_O)) */
    const SublayerEnd a = attention_end(P), o = ffn_end(P);
    const SublayerEndWork aw = attention_end_work(w), ow = ffn_end_work(w);
    sublayer_end_forward(&aw, &a, w->z, d, x, n, d, rr, rate, drop);
    /* X' = LayerNorm_2(Y + dropout(r W_2^T + b_2)), r = dropout(relu(Y W_1^T + b_1)) */
    const real *r = ffn_inner_forward(w->u, w->r, w->mask_r, w->y, P->W_1, P->b_1, rr, d, F,
                                      rate, drop);
    sublayer_end_forward(&ow, &o, r, F, w->y, n, d, rr, rate, drop);
}

/* Backward of layer_forward from dout (n, d) to dx (n, d; overwritten, and it may be
 * dout's memory: dout is read first). */
static void layer_backward(real *dx, SelfAttnParams *G, const SelfAttnLayerWork *w,
                           SelfAttnWork *sw, const real *dout, const SelfAttnParams *P,
                           const SelfAttnDims *D, const real *x)
{
    const RealRows *rr = &sw->rows;
    const int d = D->width, F = D->ffn, n = rr->n;
    real *dY = sw->d_y, *dt = sw->d_t, *dr = sw->d_r, *dz = sw->d_z, *dqkv = sw->d_qkv;
    const SublayerEnd a = attention_end(P), o = ffn_end(P), ga = attention_end(G), go = ffn_end(G);
    const SublayerEndWork aw = attention_end_work(w), ow = ffn_end_work(w);
    /* the FFN's end, then its inner layer: dY is the residual's share plus the FFN's */
    sublayer_end_backward(dr, dY, dt, &go, &o, &ow, w->dropped, rr, dout,
                          w->dropped ? w->r : w->u, F, n, d);
    ffn_inner_backward(dY, G->W_1, G->b_1, dr, w->u, w->mask_r, w->dropped, rr, w->y, P->W_1, d, F);
    /* the attention's end: dY becomes dYpre, the residual's share of dx; dz = dA W_O */
    sublayer_end_backward(dz, dY, dt, &ga, &a, &aw, w->dropped, rr, dY, w->z, d, n, d);
    sa_attend_backward(dqkv, dz, w->probs, w->dropped ? w->mask_p : NULL, sw->probs_dropped,
                       w->qkv, rr, D->heads, d);
    /* forward: [Q ; K ; V] = x W_in^T + b_in, so dW_in += dqkv^T x and
     * dx = dYpre + dqkv (n, 3d) . W_in (3d, d) */
    linear_backward(NULL, G->W_Q, G->b_Q, dqkv, x, P->W_Q, n, d, 3 * d);
    memcpy(dx, dY, sizeof(real) * (size_t)n * d);
    matmul(CblasNoTrans, CblasNoTrans, n, d, 3 * d, 1, dqkv, 3 * d, P->W_Q, d, 1, dx, d);
}

/* ---- the stack ------------------------------------------------------------------- */

void sa_forward(SelfAttnWork *w, const SelfAttnParams *P, const SelfAttnDims *d, const real *x,
                const int *len, int S, int B, double rate, Pcg32 *rng)
{
    const int L = d->layers;
    if (L == 0)
        return;
    real_rows_set(&w->rows, len, S, B);
    real_rows_gather(w->x_rows, x, &w->rows, d->width);
    for (int l = 0; l < L; l++)
        layer_forward(&w->layer[l], w->probs_dropped, &P[l], d,
                      l ? w->layer[l - 1].out : w->x_rows, &w->rows, rate, rng);
    real_rows_scatter(w->out, w->layer[L - 1].out, &w->rows, d->width);
}

const real *sa_output(const SelfAttnWork *w, const SelfAttnDims *d, const real *x)
{
    return d->layers ? w->out : x;
}

void sa_backward(real *dx, SelfAttnParams *G, SelfAttnWork *w, const real *dout,
                 const SelfAttnParams *P, const SelfAttnDims *d, int S, int B)
{
    const int L = d->layers;
    if (L == 0) {
        memmove(dx, dout, sizeof(real) * (size_t)S * B * d->width);
        return;
    }
    /* the real rows' gradient, top to bottom in d_between (each layer reads its dout
     * before it writes its dx), then back into the padded layout */
    real_rows_gather(w->d_between, dout, &w->rows, d->width);
    for (int l = L - 1; l >= 0; l--)
        layer_backward(w->d_between, &G[l], &w->layer[l], w, w->d_between, &P[l], d,
                       l ? w->layer[l - 1].out : w->x_rows);
    real_rows_scatter(dx, w->d_between, &w->rows, d->width);
}
