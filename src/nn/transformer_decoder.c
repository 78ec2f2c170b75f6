/* transformer_decoder.c: post-LN Transformer decoder layers (see transformer_decoder.h),
 * as torch.nn.TransformerDecoderLayer computes them. Per layer:
 *   [Q ; K ; V] = X [W_Q ; W_K ; W_V]^T + b                  one gemm over every row
 *   Z^k  = softmax(Q^k K^k^T / sqrt(d/H), causal) V^k          per sentence and head
 *   Y1   = LayerNorm_1(X + dropout(Z W_O^T + b_O))
 *   Qc   = Y1 Wc_Q^T + bc_Q;  [Kc ; Vc] = M [Wc_K ; Wc_V]^T + [bc_K ; bc_V]
 *   Zc^k = softmax(Qc^k Kc^k^T / sqrt(d/H), real sources) Vc^k
 *   Y2   = LayerNorm_2(Y1 + dropout(Zc Wc_O^T + bc_O))
 *   X'   = LayerNorm_3(Y2 + dropout(dropout(relu(Y2 W_1^T + b_1)) W_2^T + b_2))
 * and dropout on both attentions' weights. The layers compute the batch's real target
 * rows alone, over the real source rows (nn/real_rows.h). Never allocates. */
#include "nn/transformer_decoder.h"

#include <assert.h>
#include <string.h>

#include "nn/heads.h"
#include "nn/ops.h"
#include "nn/real_rows.h"
#include "nn/sublayers.h"

void tdec_carve(TdecParams *p, TensorCarver *c, const TdecDims *d)
{
    const int w = d->width, F = d->ffn, dh = d->memory;
    memset(p, 0, sizeof *p * DEC_MAX_LAYERS);
    assert(d->layers >= 1 && d->layers <= DEC_MAX_LAYERS);
    for (int l = 0; l < d->layers; l++) {
        TdecParams *x = &p[l];
        const int n = l + 1; /* layers count from 1, as s2s heatmap --layer does */
        x->W_Q = tensor_carve(c, w, w, 0, "dec%d.W_Q", n);
        x->W_K = tensor_carve(c, w, w, 0, "dec%d.W_K", n);
        x->W_V = tensor_carve(c, w, w, 0, "dec%d.W_V", n);
        x->b_Q = tensor_carve(c, w, 1, 1, "dec%d.b_Q", n);
        x->b_K = tensor_carve(c, w, 1, 1, "dec%d.b_K", n);
        x->b_V = tensor_carve(c, w, 1, 1, "dec%d.b_V", n);
        x->W_O = tensor_carve(c, w, w, 0, "dec%d.W_O", n);
        x->b_O = tensor_carve(c, w, 1, 1, "dec%d.b_O", n);
        x->Wc_Q = tensor_carve(c, w, w, 0, "dec%d.Wc_Q", n);
        x->Wc_K = tensor_carve(c, w, dh, 0, "dec%d.Wc_K", n);
        x->Wc_V = tensor_carve(c, w, dh, 0, "dec%d.Wc_V", n);
        x->bc_Q = tensor_carve(c, w, 1, 1, "dec%d.bc_Q", n);
        x->bc_K = tensor_carve(c, w, 1, 1, "dec%d.bc_K", n);
        x->bc_V = tensor_carve(c, w, 1, 1, "dec%d.bc_V", n);
        x->Wc_O = tensor_carve(c, w, w, 0, "dec%d.Wc_O", n);
        x->bc_O = tensor_carve(c, w, 1, 1, "dec%d.bc_O", n);
        x->W_1 = tensor_carve(c, F, w, 0, "dec%d.W_1", n);
        x->b_1 = tensor_carve(c, F, 1, 1, "dec%d.b_1", n);
        x->W_2 = tensor_carve(c, w, F, 0, "dec%d.W_2", n);
        x->b_2 = tensor_carve(c, w, 1, 1, "dec%d.b_2", n);
        x->gamma_1 = tensor_carve(c, w, 1, TENSOR_ONES, "dec%d.gamma_1", n);
        x->beta_1 = tensor_carve(c, w, 1, 1, "dec%d.beta_1", n);
        x->gamma_2 = tensor_carve(c, w, 1, TENSOR_ONES, "dec%d.gamma_2", n);
        x->beta_2 = tensor_carve(c, w, 1, 1, "dec%d.beta_2", n);
        x->gamma_3 = tensor_carve(c, w, 1, TENSOR_ONES, "dec%d.gamma_3", n);
        x->beta_3 = tensor_carve(c, w, 1, 1, "dec%d.beta_3", n);
    }
}

void tdec_carve_work(TdecWork *w, Arena *ar, const TdecDims *d, int B, int T, int S,
                     int with_backward)
{
    const size_t TB = (size_t)T * B, SB = (size_t)S * B, dw = d->width, F = d->ffn;
    const size_t H = d->heads, TT = (size_t)T * T, TS = (size_t)T * S;
    memset(w, 0, sizeof *w);
#define TAKE(field, count) (field = arena_alloc(ar, (count), sizeof(real)))
    real_rows_carve(&w->tgt, ar, T, B);
    real_rows_carve(&w->src, ar, S, B);
    TAKE(w->x_rows, TB * dw);
    TAKE(w->memory_rows, SB * d->memory);
    for (int l = 0; l < d->layers; l++) {
        TdecLayerWork *x = &w->layer[l];
        TAKE(x->qkv, TB * 3 * dw);
        TAKE(x->self_probs, B * H * TT);
        TAKE(x->self_mean, B * TT);
        TAKE(x->self_z, TB * dw);
        TAKE(x->xhat1, TB * dw);
        TAKE(x->rstd1, TB);
        TAKE(x->y1, TB * dw);
        TAKE(x->cross_q, TB * dw);
        TAKE(x->cross_kv, SB * 2 * dw);
        TAKE(x->cross_probs, B * H * TS);
        TAKE(x->cross_mean, B * TS);
        TAKE(x->cross_z, TB * dw);
        TAKE(x->xhat2, TB * dw);
        TAKE(x->rstd2, TB);
        TAKE(x->y2, TB * dw);
        TAKE(x->u, TB * F);
        TAKE(x->xhat3, TB * dw);
        TAKE(x->rstd3, TB);
        TAKE(x->out, TB * dw);
        if (with_backward) {
            TAKE(x->r, TB * F);
            TAKE(x->mask_sp, B * H * TT);
            TAKE(x->mask_sa, TB * dw);
            TAKE(x->mask_cp, B * H * TS);
            TAKE(x->mask_ca, TB * dw);
            TAKE(x->mask_r, TB * F);
            TAKE(x->mask_o, TB * dw);
        }
    }
    TAKE(w->scratch, 2 * (size_t)T * (T > S ? T : S));
    if (with_backward) {
        TAKE(w->d_between, TB * dw);
        TAKE(w->d_y, TB * dw);
        TAKE(w->d_t, TB * dw);
        TAKE(w->d_r, TB * F);
        TAKE(w->d_z, TB * dw);
        TAKE(w->d_qkv, TB * 3 * dw);
        TAKE(w->d_cross_q, TB * dw);
        TAKE(w->d_cross_kv, SB * 2 * dw);
        TAKE(w->d_memory_rows, SB * d->memory);
    }
#undef TAKE
}

/* ---- the two attentions of a layer, sentence by sentence ------------------------------ */

/* Sentence b's self-attention over its own prefix: queries, keys and values in qkv
 * (n_t, 3d), its rows together. */
static HeadsInput self_heads(const real *qkv, const RealRows *tgt, int b, const TdecDims *D)
{
    const int d = D->width, T = tgt->P, len = tgt->len[b];
    const real *Q = qkv + (size_t)tgt->start[b] * 3 * d;
    return (HeadsInput){Q, Q + d, Q + 2 * d, 3 * d, 3 * d, 3 * d, len, len, 1, D->heads, d, T,
                        (long)T * T};
}

/* Sentence b's cross-attention: queries q (n_t, d), keys and values kv (n_s, 2d). */
static HeadsInput cross_heads(const real *q, const real *kv, const RealRows *tgt,
                              const RealRows *src, int b, const TdecDims *D)
{
    const int d = D->width, T = tgt->P, S = src->P;
    const real *K = kv + (size_t)src->start[b] * 2 * d;
    return (HeadsInput){q + (size_t)tgt->start[b] * d, K, K + d, d, 2 * d, 2 * d, tgt->len[b],
                        src->len[b], 0, D->heads, d, S, (long)T * S};
}

/* The ends of the layer's three sublayers (self-attention, cross-attention, FFN): their
 * tensors (k = 0, 1, 2) and activations. */
static SublayerEnd sublayer_end(const TdecParams *P, int k)
{
    return k == 0 ? (SublayerEnd){P->W_O, P->b_O, P->gamma_1, P->beta_1, NULL}
           : k == 1 ? (SublayerEnd){P->Wc_O, P->bc_O, P->gamma_2, P->beta_2, NULL}
                    : (SublayerEnd){P->W_2, P->b_2, P->gamma_3, P->beta_3, NULL};
}

static SublayerEndWork sublayer_end_work(const TdecLayerWork *w, int k)
{
    return k == 0 ? (SublayerEndWork){w->y1, w->xhat1, w->rstd1, w->mask_sa}
           : k == 1 ? (SublayerEndWork){w->y2, w->xhat2, w->rstd2, w->mask_ca}
                    : (SublayerEndWork){w->out, w->xhat3, w->rstd3, w->mask_o};
}

/* The self-attention: [Q ; K ; V] (n_t, 3d) = x . [W_Q ; W_K ; W_V]^T + b, each sentence's
 * heads over its own prefix, into self_z. */
static void self_attention_forward(TdecLayerWork *w, real *scratch, const TdecParams *P,
                                   const TdecDims *D, const real *x, const RealRows *tgt,
                                   double rate, Pcg32 *drop)
{
    const int d = D->width, H = D->heads, T = tgt->P, B = tgt->B;
    const size_t TT = (size_t)T * T;
    assert(P->W_K == P->W_Q + (size_t)d * d && P->b_K == P->b_Q + d); /* one in_proj */
    linear_forward(w->qkv, x, P->W_Q, P->b_Q, tgt->n, d, 3 * d);
    if (drop)
        heads_draw_masks(w->mask_sp, tgt->len, NULL, T, T, B, H, rate, drop);
    memset(w->self_probs, 0, sizeof(real) * B * H * TT);
    memset(w->self_mean, 0, sizeof(real) * B * TT);
    for (int b = 0; b < B; b++) {
        const HeadsInput in = self_heads(w->qkv, tgt, b, D);
        const size_t at = (size_t)b * H * TT;
        heads_forward(w->self_z + (size_t)tgt->start[b] * d, d, tgt->len[b], w->self_probs + at,
                      w->self_mean + b * TT, drop ? w->mask_sp + at : NULL, scratch, &in);
    }
}

/* The cross-attention: Qc (n_t, d) = Y1 Wc_Q^T + bc_Q, [Kc ; Vc] (n_s, 2d) = M [Wc_K ;
 * Wc_V]^T + [bc_K ; bc_V], each sentence's heads over its real sources, into cross_z. */
static void cross_attention_forward(TdecLayerWork *w, real *scratch, const TdecParams *P,
                                    const TdecDims *D, const real *memory, const RealRows *tgt,
                                    const RealRows *src, double rate, Pcg32 *drop)
{
    const int d = D->width, H = D->heads, T = tgt->P, S = src->P, B = tgt->B;
    const size_t TS = (size_t)T * S;
    assert(P->Wc_V == P->Wc_K + (size_t)d * D->memory && P->bc_V == P->bc_K + d);
    linear_forward(w->cross_q, w->y1, P->Wc_Q, P->bc_Q, tgt->n, d, d);
    linear_forward(w->cross_kv, memory, P->Wc_K, P->bc_K, src->n, D->memory, 2 * d);
    if (drop)
        heads_draw_masks(w->mask_cp, tgt->len, src->len, T, S, B, H, rate, drop);
    memset(w->cross_probs, 0, sizeof(real) * B * H * TS);
    memset(w->cross_mean, 0, sizeof(real) * B * TS);
    for (int b = 0; b < B; b++) {
        const HeadsInput in = cross_heads(w->cross_q, w->cross_kv, tgt, src, b, D);
        const size_t at = (size_t)b * H * TS;
        heads_forward(w->cross_z + (size_t)tgt->start[b] * d, d, tgt->len[b],
                      w->cross_probs + at, w->cross_mean + b * TS,
                      drop ? w->mask_cp + at : NULL, scratch, &in);
    }
}

/* x (n_t, d) -> w->out (n_t, d), reading memory (n_s, d_h). */
static void layer_forward(TdecLayerWork *w, real *scratch, const TdecParams *P, const TdecDims *D,
                          const real *x, const real *memory, const RealRows *tgt,
                          const RealRows *src, double rate, Pcg32 *rng)
{
    const int d = D->width, F = D->ffn, n = tgt->n;
    w->dropped = rng && rate > 0 && w->mask_sp;
    Pcg32 *drop = w->dropped ? rng : NULL;
    SublayerEnd end[3];
    SublayerEndWork ew[3];
    for (int k = 0; k < 3; k++)
        end[k] = sublayer_end(P, k), ew[k] = sublayer_end_work(w, k);
    /* Y1 = LayerNorm_1(x + dropout(Z W_O^T + b_O)) */
    self_attention_forward(w, scratch, P, D, x, tgt, rate, drop);
    sublayer_end_forward(&ew[0], &end[0], w->self_z, d, x, n, d, tgt, rate, drop);
    /* Y2 = LayerNorm_2(Y1 + dropout(Zc Wc_O^T + bc_O)) */
    cross_attention_forward(w, scratch, P, D, memory, tgt, src, rate, drop);
    sublayer_end_forward(&ew[1], &end[1], w->cross_z, d, w->y1, n, d, tgt, rate, drop);
    /* X' = LayerNorm_3(Y2 + dropout(r W_2^T + b_2)), r = dropout(relu(Y2 W_1^T + b_1)) */
    const real *r = ffn_inner_forward(w->u, w->r, w->mask_r, w->y2, P->W_1, P->b_1, tgt, d, F,
                                      rate, drop);
    sublayer_end_forward(&ew[2], &end[2], r, F, w->y2, n, d, tgt, rate, drop);
}

/* The cross-attention undone from dz (n_t, d): dY1 (n_t, d) += the queries' share,
 * d_memory (n_s, d_h) += the keys' and values'. */
static void cross_attention_backward(real *dY1, real *d_memory, TdecParams *G,
                                     const TdecLayerWork *w, TdecWork *tw, const real *dz,
                                     const TdecParams *P, const TdecDims *D, const real *memory)
{
    const RealRows *tgt = &tw->tgt, *src = &tw->src;
    const int d = D->width, H = D->heads, B = tgt->B;
    const size_t TS = (size_t)tgt->P * src->P;
    memset(tw->d_cross_q, 0, sizeof(real) * (size_t)tgt->n * d);
    memset(tw->d_cross_kv, 0, sizeof(real) * (size_t)src->n * 2 * d);
    for (int b = 0; b < B; b++) {
        const HeadsInput in = cross_heads(w->cross_q, w->cross_kv, tgt, src, b, D);
        const size_t at = (size_t)b * H * TS, row = tgt->start[b];
        real *dK = tw->d_cross_kv + (size_t)src->start[b] * 2 * d;
        heads_backward(tw->d_cross_q + row * d, dK, dK + d, dz + row * d, d,
                       w->cross_probs + at, w->dropped ? w->mask_cp + at : NULL, tw->scratch, &in);
    }
    /* forward: Qc = Y1 Wc_Q^T + bc_Q, [Kc ; Vc] = M [Wc_K ; Wc_V]^T + [bc_K ; bc_V] */
    linear_backward(dY1, G->Wc_Q, G->bc_Q, tw->d_cross_q, w->y1, P->Wc_Q, tgt->n, d, d);
    linear_backward(d_memory, G->Wc_K, G->bc_K, tw->d_cross_kv, memory, P->Wc_K, src->n,
                    D->memory, 2 * d);
}

/* The self-attention undone from dz (n_t, d): dx (n_t, d) overwritten with dres (the
 * residual's share) + the projections' share. */
static void self_attention_backward(real *dx, const real *dres, TdecParams *G,
                                    const TdecLayerWork *w, TdecWork *tw, const real *dz,
                                    const TdecParams *P, const TdecDims *D, const real *x)
{
    const RealRows *tgt = &tw->tgt;
    const int d = D->width, H = D->heads, n = tgt->n;
    const size_t TT = (size_t)tgt->P * tgt->P;
    memset(tw->d_qkv, 0, sizeof(real) * (size_t)n * 3 * d);
    for (int b = 0; b < tgt->B; b++) {
        const HeadsInput in = self_heads(w->qkv, tgt, b, D);
        const size_t at = (size_t)b * H * TT, row = tgt->start[b];
        real *dQ = tw->d_qkv + row * 3 * d;
        heads_backward(dQ, dQ + d, dQ + 2 * d, dz + row * d, d, w->self_probs + at,
                       w->dropped ? w->mask_sp + at : NULL, tw->scratch, &in);
    }
    /* forward: [Q ; K ; V] = x W_in^T + b_in, so dx = dres + dqkv . W_in */
    linear_backward(NULL, G->W_Q, G->b_Q, tw->d_qkv, x, P->W_Q, n, d, 3 * d);
    memcpy(dx, dres, sizeof(real) * (size_t)n * d);
    matmul(CblasNoTrans, CblasNoTrans, n, d, 3 * d, 1, tw->d_qkv, 3 * d, P->W_Q, d, 1, dx, d);
}

/* Backward of layer_forward from dout (n_t, d) to dx (n_t, d; overwritten, may be dout's
 * memory) and d_memory (n_s, d_h; accumulated). */
static void layer_backward(real *dx, real *d_memory, TdecParams *G, const TdecLayerWork *w,
                           TdecWork *tw, const real *dout, const TdecParams *P,
                           const TdecDims *D, const real *x, const real *memory)
{
    const RealRows *tgt = &tw->tgt;
    const int d = D->width, F = D->ffn, n = tgt->n;
    real *dY = tw->d_y, *dt = tw->d_t, *dr = tw->d_r, *dz = tw->d_z;
    const int dropped = w->dropped;
    SublayerEnd end[3], gend[3];
    SublayerEndWork ew[3];
    for (int k = 0; k < 3; k++)
        end[k] = sublayer_end(P, k), gend[k] = sublayer_end(G, k), ew[k] = sublayer_end_work(w, k);
    /* the FFN: its end, then its inner layer; dY is Y2's gradient */
    sublayer_end_backward(dr, dY, dt, &gend[2], &end[2], &ew[2], dropped, tgt, dout,
                          dropped ? w->r : w->u, F, n, d);
    ffn_inner_backward(dY, G->W_1, G->b_1, dr, w->u, w->mask_r, dropped, tgt, w->y2, P->W_1, d, F);
    /* the cross-attention: its end (dY becomes Y1's residual share), then its heads */
    sublayer_end_backward(dz, dY, dt, &gend[1], &end[1], &ew[1], dropped, tgt, dY, w->cross_z, d,
                          n, d);
    cross_attention_backward(dY, d_memory, G, w, tw, dz, P, D, memory);
    /* the self-attention: its end (dY becomes x's residual share), then its heads */
    sublayer_end_backward(dz, dY, dt, &gend[0], &end[0], &ew[0], dropped, tgt, dY, w->self_z, d,
                          n, d);
    self_attention_backward(dx, dY, G, w, tw, dz, P, D, x);
}

void tdec_forward(TdecWork *w, const TdecParams *P, const TdecDims *d, const real *x,
                  const int *tgt_len, const real *memory, const int *src_len, int T, int S,
                  int B, double rate, Pcg32 *rng)
{
    real_rows_set(&w->tgt, tgt_len, T, B);
    real_rows_set(&w->src, src_len, S, B);
    real_rows_gather(w->x_rows, x, &w->tgt, d->width);
    real_rows_gather(w->memory_rows, memory, &w->src, d->memory);
    for (int l = 0; l < d->layers; l++)
        layer_forward(&w->layer[l], w->scratch, &P[l], d, l ? w->layer[l - 1].out : w->x_rows,
                      w->memory_rows, &w->tgt, &w->src, rate, rng);
}

void tdec_backward(real *dx, real *d_memory, TdecParams *G, TdecWork *w, const real *dout,
                   const TdecParams *P, const TdecDims *d)
{
    const int L = d->layers;
    /* top to bottom over the real rows; between layers the gradient stays in d_between
     * (each layer reads its dout before it writes its dx) */
    memset(w->d_memory_rows, 0, sizeof(real) * (size_t)w->src.n * d->memory);
    for (int l = L - 1; l >= 0; l--)
        layer_backward(w->d_between, w->d_memory_rows, &G[l], &w->layer[l], w,
                       l == L - 1 ? dout : w->d_between, &P[l], d,
                       l ? w->layer[l - 1].out : w->x_rows, w->memory_rows);
    real_rows_scatter(dx, w->d_between, &w->tgt, d->width);
    real_rows_scatter_add(d_memory, w->d_memory_rows, &w->src, d->memory);
}

/* ---- decoding ------------------------------------------------------------------------ */

size_t tdec_cache_floats(const TdecDims *d, int rows, int cap, int src_steps)
{
    const size_t R = rows, w = d->width, H = d->heads, L = d->layers;
    const size_t per_layer = 2 * R * cap * 2 * w + (size_t)src_steps * R * 2 * w +
                             R * H * cap + R * H * src_steps;
    return L * per_layer + R * (3 * w + 5 * w + d->ffn + 1);
}

void tdec_cache_carve(TdecCache *c, real *base, const TdecDims *d, int rows, int cap,
                      int src_steps)
{
    const size_t R = rows, w = d->width, H = d->heads;
    memset(c, 0, sizeof *c);
    c->rows = rows, c->cap = cap, c->src_steps = src_steps;
    real *at = base;
#define TAKE(field, count) (field = at, at += (count))
    for (int l = 0; l < d->layers; l++) {
        TAKE(c->kv[l], R * cap * 2 * w);
        TAKE(c->next_kv[l], R * cap * 2 * w);
        TAKE(c->cross_kv[l], (size_t)src_steps * R * 2 * w);
        TAKE(c->self_probs[l], R * H * cap);
        TAKE(c->cross_probs[l], R * H * src_steps);
    }
    TAKE(c->qkv, R * 3 * w);
    TAKE(c->z, R * w);
    TAKE(c->y1, R * w);
    TAKE(c->y2, R * w);
    TAKE(c->q, R * w);
    TAKE(c->out, R * w);
    TAKE(c->u, R * d->ffn);
    TAKE(c->rstd, R);
#undef TAKE
    c->xhat = c->q; /* the norms' xhat is scratch here; q is dead when they run */
    assert((size_t)(at - base) == tdec_cache_floats(d, rows, cap, src_steps));
}

void tdec_cache_start(TdecCache *c, const TdecParams *P, const TdecDims *d, const real *memory,
                      int S, int rows)
{
    assert(S <= c->src_steps && rows <= c->rows);
    for (int l = 0; l < d->layers; l++)
        linear_forward(c->cross_kv[l], memory, P[l].Wc_K, P[l].bc_K, S * rows, d->memory,
                       2 * d->width);
}

size_t tdec_step_weights_floats(const TdecDims *d)
{
    const size_t w = d->width, F = d->ffn;
    return d->layers * (6 * w * w + 2 * w * F);
}

void tdec_step_weights_make(TdecStepWeights *t, real *base, const TdecParams *P,
                            const TdecDims *d)
{
    const int w = d->width, F = d->ffn;
    real *at = base;
    for (int l = 0; l < d->layers; l++) {
        TdecStepWeights *x = &t[l];
        const TdecParams *p = &P[l];
        x->in_proj = at, at += (size_t)3 * w * w;
        x->W_O = at, at += (size_t)w * w;
        x->Wc_Q = at, at += (size_t)w * w;
        x->Wc_O = at, at += (size_t)w * w;
        x->W_1 = at, at += (size_t)w * F;
        x->W_2 = at, at += (size_t)F * w;
        pack_panels(x->in_proj, p->W_Q, 3 * w, w);
        pack_panels(x->W_O, p->W_O, w, w);
        pack_panels(x->Wc_Q, p->Wc_Q, w, w);
        pack_panels(x->Wc_O, p->Wc_O, w, w);
        pack_panels(x->W_1, p->W_1, F, w);
        pack_panels(x->W_2, p->W_2, w, F);
    }
    assert((size_t)(at - base) == tdec_step_weights_floats(d));
}

/* One layer at position pos: x (rows, d) -> c->out (rows, d), which may be x. */
static void layer_step(TdecCache *c, int l, const TdecParams *P, const TdecStepWeights *tw,
                       const TdecDims *D, const real *x, int pos, const int *src_len, int S,
                       int rows)
{
    const int d = D->width, F = D->ffn, H = D->heads, cap = c->cap;
    real *kv = c->kv[l];
    /* [q ; k ; v] (rows, 3d) = x W_in^T + b; k and v join the cache at position pos */
    linear_forward_any(c->qkv, x, P->W_Q, tw ? tw->in_proj : NULL, P->b_Q, rows, d, 3 * d);
    for (int r = 0; r < rows; r++)
        memcpy(kv + ((size_t)r * cap + pos) * 2 * d, c->qkv + (size_t)r * 3 * d + d,
               sizeof(real) * 2 * d);
    for (int r = 0; r < rows; r++) {
        const real *K = kv + (size_t)r * cap * 2 * d;
        const HeadsInput in = {c->qkv + (size_t)r * 3 * d, K, K + d, 3 * d, 2 * d, 2 * d, 1,
                               pos + 1, 0, H, d, cap, cap};
        heads_forward(c->z + (size_t)r * d, d, 1, c->self_probs[l] + (size_t)r * H * cap, NULL,
                      NULL, NULL, &in);
    }
    const SublayerEndWork y1 = {c->y1, c->xhat, c->rstd, NULL}, y2 = {c->y2, c->xhat, c->rstd, NULL};
    const SublayerEndWork out = {c->out, c->xhat, c->rstd, NULL};
    SublayerEnd end[3];
    for (int k = 0; k < 3; k++)
        end[k] = sublayer_end(P, k);
    if (tw) {
        end[0].Wp = tw->W_O;
        end[1].Wp = tw->Wc_O;
        end[2].Wp = tw->W_2;
    }
    sublayer_end_forward(&y1, &end[0], c->z, d, x, rows, d, NULL, 0, NULL);
    /* the cross-attention over each row's source */
    linear_forward_any(c->q, c->y1, P->Wc_Q, tw ? tw->Wc_Q : NULL, P->bc_Q, rows, d, d);
    for (int r = 0; r < rows; r++) {
        const real *K = c->cross_kv[l] + (size_t)r * 2 * d;
        const HeadsInput in = {c->q + (size_t)r * d, K, K + d, d, 2 * d * rows, 2 * d * rows, 1,
                               src_len[r], 0, H, d, S, S};
        heads_forward(c->z + (size_t)r * d, d, 1, c->cross_probs[l] + (size_t)r * H * S, NULL,
                      NULL, NULL, &in);
    }
    sublayer_end_forward(&y2, &end[1], c->z, d, c->y1, rows, d, NULL, 0, NULL);
    /* the FFN (every row is a real position) */
    linear_forward_any(c->u, c->y2, P->W_1, tw ? tw->W_1 : NULL, P->b_1, rows, d, F);
    relu_forward(c->u, c->u, (size_t)rows * F);
    sublayer_end_forward(&out, &end[2], c->u, F, c->y2, rows, d, NULL, 0, NULL);
}

void tdec_step(TdecCache *c, const TdecParams *P, const TdecStepWeights *tw, const TdecDims *d,
               const real *x, int pos, const int *src_len, int S, int rows)
{
    assert(pos < c->cap && rows <= c->rows && S <= c->src_steps);
    for (int l = 0; l < d->layers; l++)
        layer_step(c, l, &P[l], tw ? &tw[l] : NULL, d, l ? c->out : x, pos, src_len, S, rows);
}

void tdec_cache_reorder(TdecCache *c, const TdecDims *d, const int *from, int pos, int rows)
{
    const size_t w2 = 2 * (size_t)d->width, cap = c->cap, bytes = sizeof(real) * (pos + 1) * w2;
    /* only rows that take another row's prefix move (none in greedy search): each is
     * copied aside from the old cache, then back, so no row reads one already moved */
    for (int l = 0; l < d->layers; l++) {
        for (int r = 0; r < rows; r++)
            if (from[r] != r)
                memcpy(c->next_kv[l] + r * cap * w2, c->kv[l] + (size_t)from[r] * cap * w2, bytes);
        for (int r = 0; r < rows; r++)
            if (from[r] != r)
                memcpy(c->kv[l] + r * cap * w2, c->next_kv[l] + r * cap * w2, bytes);
    }
}
