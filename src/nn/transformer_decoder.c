/* transformer_decoder.c: post-LN Transformer decoder layers (see transformer_decoder.h),
 * as torch.nn.TransformerDecoderLayer computes them. Per layer:
 *   [Q ; K ; V] = X [W_Q ; W_K ; W_V]^T + b                  one gemm over every row
 *   Z^k  = softmax(Q^k K^k^T / sqrt(d/H), causal) V^k          per sentence and head
 *   Y1   = LayerNorm_1(X + dropout(Z W_O^T + b_O))
 *   Qc   = Y1 Wc_Q^T + bc_Q;  [Kc ; Vc] = M [Wc_K ; Wc_V]^T + [bc_K ; bc_V]
 *   Zc^k = softmax(Qc^k Kc^k^T / sqrt(d/H), real sources) Vc^k
 *   Y2   = LayerNorm_2(Y1 + dropout(Zc Wc_O^T + bc_O))
 *   X'   = LayerNorm_3(Y2 + dropout(dropout(relu(Y2 W_1^T + b_1)) W_2^T + b_2))
 * and dropout on both attentions' weights. Never allocates. */
#include "nn/transformer_decoder.h"

#include <assert.h>
#include <string.h>

#include "nn/heads.h"
#include "nn/ops.h"

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
    }
#undef TAKE
}

/* ---- the two attentions of a layer, sentence by sentence ------------------------------ */

/* Sentence b's self-attention over its own prefix: queries, keys and values in qkv
 * (T*B, 3d), its positions B rows apart. */
static HeadsInput self_heads(const real *qkv, const int *tgt_len, int b, int T, int B,
                             const TdecDims *D)
{
    const int d = D->width, ld = 3 * d * B;
    const real *Q = qkv + (size_t)b * 3 * d;
    return (HeadsInput){Q, Q + d, Q + 2 * d, ld, ld, ld, tgt_len[b], tgt_len[b], 1, D->heads, d,
                        T, (long)T * T};
}

/* Sentence b's cross-attention: queries q (T*B, d), keys and values kv (S*B, 2d). */
static HeadsInput cross_heads(const real *q, const real *kv, const int *tgt_len,
                              const int *src_len, int b, int T, int S, int B, const TdecDims *D)
{
    const int d = D->width;
    const real *K = kv + (size_t)b * 2 * d;
    (void)T;
    return (HeadsInput){q + (size_t)b * d, K, K + d, d * B, 2 * d * B, 2 * d * B, tgt_len[b],
                        src_len[b], 0, D->heads, d, S, (long)T * S};
}

/* Dropout's factors for every head's weights over the pairs a sentence's real queries
 * see: its prefix (causal) or its real sources; 0 elsewhere. */
static void draw_weight_masks(real *mask, const int *tgt_len, const int *src_len, int causal,
                              int T, int cols, int B, int H, double rate, Pcg32 *rng)
{
    const real keep = (real)(1 / (1 - rate));
    const size_t block = (size_t)T * cols;
    for (int b = 0; b < B; b++)
        for (int k = 0; k < H; k++) {
            real *M = mask + ((size_t)b * H + k) * block;
            memset(M, 0, sizeof(real) * block);
            for (int i = 0; i < tgt_len[b]; i++) {
                const int seen = causal ? i + 1 : src_len[b];
                for (int j = 0; j < seen; j++)
                    M[(size_t)i * cols + j] = pcg32_unit(rng) < rate ? 0 : keep;
            }
        }
}

/* y (rows, d) = LayerNorm(y + res), y holding the sublayer's output (dropped out already). */
static void add_and_norm(real *y, real *xhat, real *rstd, const real *res, const real *gamma,
                         const real *beta, int rows, int d)
{
    for (size_t k = 0; k < (size_t)rows * d; k++)
        y[k] += res[k];
    layer_norm_forward(y, xhat, rstd, y, gamma, beta, rows, d);
}

/* x (T*B, d) -> w->out (T*B, d). */
static void layer_forward(TdecLayerWork *w, real *scratch, const TdecParams *P, const TdecDims *D,
                          const real *x, const int *tgt_len, const real *memory,
                          const int *src_len, int T, int S, int B, double rate, Pcg32 *rng)
{
    const int d = D->width, F = D->ffn, H = D->heads, TB = T * B, SB = S * B;
    const size_t TT = (size_t)T * T, TS = (size_t)T * S;
    w->dropped = rng && rate > 0 && w->mask_sp;
    assert(P->W_K == P->W_Q + (size_t)d * d && P->b_K == P->b_Q + d); /* one in_proj */
    assert(P->Wc_V == P->Wc_K + (size_t)d * D->memory && P->bc_V == P->bc_K + d);
    /* the self-attention: [Q ; K ; V] (T*B, 3d) = x . [W_Q ; W_K ; W_V]^T + b */
    linear_forward(w->qkv, x, P->W_Q, P->b_Q, TB, d, 3 * d);
    if (w->dropped)
        draw_weight_masks(w->mask_sp, tgt_len, NULL, 1, T, T, B, H, rate, rng);
    memset(w->self_probs, 0, sizeof(real) * B * H * TT);
    memset(w->self_mean, 0, sizeof(real) * B * TT);
    for (int b = 0; b < B; b++) {
        const HeadsInput in = self_heads(w->qkv, tgt_len, b, T, B, D);
        const size_t at = (size_t)b * H * TT;
        heads_forward(w->self_z + (size_t)b * d, B * d, T, w->self_probs + at,
                      w->self_mean + b * TT, w->dropped ? w->mask_sp + at : NULL, scratch, &in);
    }
    /* Y1 = LayerNorm_1(x + dropout(Z W_O^T + b_O)) */
    linear_forward(w->y1, w->self_z, P->W_O, P->b_O, TB, d, d);
    if (w->dropped)
        dropout_forward(w->y1, d, w->mask_sa, TB, d, rate, rng);
    add_and_norm(w->y1, w->xhat1, w->rstd1, x, P->gamma_1, P->beta_1, TB, d);
    /* the cross-attention: Qc (T*B, d) = Y1 Wc_Q^T + bc_Q, [Kc ; Vc] (S*B, 2d) = M
     * [Wc_K ; Wc_V]^T + [bc_K ; bc_V] */
    linear_forward(w->cross_q, w->y1, P->Wc_Q, P->bc_Q, TB, d, d);
    linear_forward(w->cross_kv, memory, P->Wc_K, P->bc_K, SB, D->memory, 2 * d);
    if (w->dropped)
        draw_weight_masks(w->mask_cp, tgt_len, src_len, 0, T, S, B, H, rate, rng);
    memset(w->cross_probs, 0, sizeof(real) * B * H * TS);
    memset(w->cross_mean, 0, sizeof(real) * B * TS);
    for (int b = 0; b < B; b++) {
        const HeadsInput in = cross_heads(w->cross_q, w->cross_kv, tgt_len, src_len, b, T, S, B, D);
        const size_t at = (size_t)b * H * TS;
        heads_forward(w->cross_z + (size_t)b * d, B * d, T, w->cross_probs + at,
                      w->cross_mean + b * TS, w->dropped ? w->mask_cp + at : NULL, scratch, &in);
    }
    /* Y2 = LayerNorm_2(Y1 + dropout(Zc Wc_O^T + bc_O)) */
    linear_forward(w->y2, w->cross_z, P->Wc_O, P->bc_O, TB, d, d);
    if (w->dropped)
        dropout_forward(w->y2, d, w->mask_ca, TB, d, rate, rng);
    add_and_norm(w->y2, w->xhat2, w->rstd2, w->y1, P->gamma_2, P->beta_2, TB, d);
    /* u (T*B, F) = relu(Y2 W_1^T + b_1), 0 in rows past a sentence's end; r = dropout(u) */
    linear_forward(w->u, w->y2, P->W_1, P->b_1, TB, d, F);
    for (int i = 0; i < T; i++)
        for (int b = 0; b < B; b++) {
            real *row = w->u + ((size_t)i * B + b) * F;
            if (i < tgt_len[b])
                relu_forward(row, row, (size_t)F);
            else
                memset(row, 0, sizeof(real) * F);
        }
    const real *r = w->u;
    if (w->dropped) {
        memcpy(w->r, w->u, sizeof(real) * TB * F);
        dropout_forward(w->r, F, w->mask_r, TB, F, rate, rng);
        r = w->r;
    }
    /* X' = LayerNorm_3(Y2 + dropout(r W_2^T + b_2)) */
    linear_forward(w->out, r, P->W_2, P->b_2, TB, F, d);
    if (w->dropped)
        dropout_forward(w->out, d, w->mask_o, TB, d, rate, rng);
    add_and_norm(w->out, w->xhat3, w->rstd3, w->y2, P->gamma_3, P->beta_3, TB, d);
}

/* The sublayer output's gradient from a residual block's: dres (rows, d) becomes the
 * gradient of the norm's input (the residual's share), d_sub = dres * mask (or a copy). */
static void norm_and_dropout_backward(real *d_sub, real *dres, real *dgamma, real *dbeta,
                                      const real *dout, const real *xhat, const real *rstd,
                                      const real *gamma, const real *mask, int rows, int d)
{
    layer_norm_backward(dres, dgamma, dbeta, dout, xhat, rstd, gamma, rows, d);
    memcpy(d_sub, dres, sizeof(real) * (size_t)rows * d);
    if (mask)
        dropout_backward(d_sub, d, mask, rows, d);
}

/* Backward of layer_forward from dout (T*B, d) to dx (T*B, d; overwritten, may be dout's
 * memory) and d_memory (S*B, d_h; accumulated). */
static void layer_backward(real *dx, real *d_memory, TdecParams *G, const TdecLayerWork *w,
                           TdecWork *tw, const real *dout, const TdecParams *P,
                           const TdecDims *D, const real *x, const int *tgt_len,
                           const real *memory, const int *src_len, int T, int S, int B)
{
    const int d = D->width, F = D->ffn, H = D->heads, TB = T * B, SB = S * B;
    const size_t TT = (size_t)T * T, TS = (size_t)T * S;
    real *dY = tw->d_y, *dt = tw->d_t, *dr = tw->d_r, *dz = tw->d_z;
    const int dropped = w->dropped;
    /* forward: X' = LayerNorm_3(Y2 + o'), o' = dropout(o): dY starts as the residual's
     * share, do (in dt) */
    norm_and_dropout_backward(dt, dY, G->gamma_3, G->beta_3, dout, w->xhat3, w->rstd3, P->gamma_3,
                              dropped ? w->mask_o : NULL, TB, d);
    /* forward: o = r W_2^T + b_2, so dW_2 (d, F) += do^T r, dr (T*B, F) = do . W_2 */
    linear_backward(NULL, G->W_2, G->b_2, dt, dropped ? w->r : w->u, P->W_2, TB, F, d);
    matmul(CblasNoTrans, CblasNoTrans, TB, F, d, 1, dt, d, P->W_2, F, 0, dr, F);
    /* forward: r = u * mask_r, u = relu(Y2 W_1^T + b_1): dY2 += du . W_1 */
    if (dropped)
        dropout_backward(dr, F, w->mask_r, TB, F);
    relu_backward(dr, dr, w->u, (size_t)TB * F);
    linear_backward(dY, G->W_1, G->b_1, dr, w->y2, P->W_1, TB, d, F);
    /* forward: Y2 = LayerNorm_2(Y1 + dropout(Zc Wc_O^T + bc_O)) */
    norm_and_dropout_backward(dt, dY, G->gamma_2, G->beta_2, dY, w->xhat2, w->rstd2, P->gamma_2,
                              dropped ? w->mask_ca : NULL, TB, d);
    linear_backward(NULL, G->Wc_O, G->bc_O, dt, w->cross_z, P->Wc_O, TB, d, d);
    matmul(CblasNoTrans, CblasNoTrans, TB, d, d, 1, dt, d, P->Wc_O, d, 0, dz, d);
    /* the cross-attention, sentence by sentence, into dQc (T*B, d) and d[Kc ; Vc] */
    memset(tw->d_cross_q, 0, sizeof(real) * (size_t)TB * d);
    memset(tw->d_cross_kv, 0, sizeof(real) * (size_t)SB * 2 * d);
    for (int b = 0; b < B; b++) {
        const HeadsInput in = cross_heads(w->cross_q, w->cross_kv, tgt_len, src_len, b, T, S, B, D);
        const size_t at = (size_t)b * H * TS;
        real *dK = tw->d_cross_kv + (size_t)b * 2 * d;
        heads_backward(tw->d_cross_q + (size_t)b * d, dK, dK + d, dz + (size_t)b * d, B * d,
                       w->cross_probs + at, dropped ? w->mask_cp + at : NULL, tw->scratch, &in);
    }
    /* forward: Qc = Y1 Wc_Q^T + bc_Q, so dY1 (the residual's share, in dY) += dQc . Wc_Q;
     * [Kc ; Vc] = M [Wc_K ; Wc_V]^T + b, so d_memory += d[Kc ; Vc] . [Wc_K ; Wc_V] */
    linear_backward(dY, G->Wc_Q, G->bc_Q, tw->d_cross_q, w->y1, P->Wc_Q, TB, d, d);
    linear_backward(d_memory, G->Wc_K, G->bc_K, tw->d_cross_kv, memory, P->Wc_K, SB, D->memory,
                    2 * d);
    /* forward: Y1 = LayerNorm_1(x + dropout(Z W_O^T + b_O)) */
    norm_and_dropout_backward(dt, dY, G->gamma_1, G->beta_1, dY, w->xhat1, w->rstd1, P->gamma_1,
                              dropped ? w->mask_sa : NULL, TB, d);
    linear_backward(NULL, G->W_O, G->b_O, dt, w->self_z, P->W_O, TB, d, d);
    matmul(CblasNoTrans, CblasNoTrans, TB, d, d, 1, dt, d, P->W_O, d, 0, dz, d);
    memset(tw->d_qkv, 0, sizeof(real) * (size_t)TB * 3 * d);
    for (int b = 0; b < B; b++) {
        const HeadsInput in = self_heads(w->qkv, tgt_len, b, T, B, D);
        const size_t at = (size_t)b * H * TT;
        real *dQ = tw->d_qkv + (size_t)b * 3 * d;
        heads_backward(dQ, dQ + d, dQ + 2 * d, dz + (size_t)b * d, B * d, w->self_probs + at,
                       dropped ? w->mask_sp + at : NULL, tw->scratch, &in);
    }
    /* forward: [Q ; K ; V] = x W_in^T + b_in, so dx = dYpre1 + dqkv . W_in */
    linear_backward(NULL, G->W_Q, G->b_Q, tw->d_qkv, x, P->W_Q, TB, d, 3 * d);
    memcpy(dx, dY, sizeof(real) * (size_t)TB * d);
    matmul(CblasNoTrans, CblasNoTrans, TB, d, 3 * d, 1, tw->d_qkv, 3 * d, P->W_Q, d, 1, dx, d);
}

void tdec_forward(TdecWork *w, const TdecParams *P, const TdecDims *d, const real *x,
                  const int *tgt_len, const real *memory, const int *src_len, int T, int S,
                  int B, double rate, Pcg32 *rng)
{
    for (int l = 0; l < d->layers; l++)
        layer_forward(&w->layer[l], w->scratch, &P[l], d, l ? w->layer[l - 1].out : x, tgt_len,
                      memory, src_len, T, S, B, rate, rng);
}

void tdec_backward(real *dx, real *d_memory, TdecParams *G, TdecWork *w, const real *dout,
                   const TdecParams *P, const TdecDims *d, const real *x, const int *tgt_len,
                   const real *memory, const int *src_len, int T, int S, int B)
{
    const int L = d->layers;
    /* top to bottom; between layers the gradient stays in d_between (each layer reads its
     * dout before it writes its dx) */
    for (int l = L - 1; l >= 0; l--)
        layer_backward(l ? w->d_between : dx, d_memory, &G[l], &w->layer[l], w,
                       l == L - 1 ? dout : w->d_between, &P[l], d, l ? w->layer[l - 1].out : x,
                       tgt_len, memory, src_len, T, S, B);
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

/* One layer at position pos: x (rows, d) -> c->out (rows, d), which may be x. */
static void layer_step(TdecCache *c, int l, const TdecParams *P, const TdecDims *D, const real *x,
                       int pos, const int *src_len, int S, int rows)
{
    const int d = D->width, F = D->ffn, H = D->heads, cap = c->cap;
    real *kv = c->kv[l];
    /* [q ; k ; v] (rows, 3d) = x W_in^T + b; k and v join the cache at position pos */
    linear_forward(c->qkv, x, P->W_Q, P->b_Q, rows, d, 3 * d);
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
    linear_forward(c->y1, c->z, P->W_O, P->b_O, rows, d, d);
    add_and_norm(c->y1, c->xhat, c->rstd, x, P->gamma_1, P->beta_1, rows, d);
    /* the cross-attention over each row's source */
    linear_forward(c->q, c->y1, P->Wc_Q, P->bc_Q, rows, d, d);
    for (int r = 0; r < rows; r++) {
        const real *K = c->cross_kv[l] + (size_t)r * 2 * d;
        const HeadsInput in = {c->q + (size_t)r * d, K, K + d, d, 2 * d * rows, 2 * d * rows, 1,
                               src_len[r], 0, H, d, S, S};
        heads_forward(c->z + (size_t)r * d, d, 1, c->cross_probs[l] + (size_t)r * H * S, NULL,
                      NULL, NULL, &in);
    }
    linear_forward(c->y2, c->z, P->Wc_O, P->bc_O, rows, d, d);
    add_and_norm(c->y2, c->xhat, c->rstd, c->y1, P->gamma_2, P->beta_2, rows, d);
    linear_forward(c->u, c->y2, P->W_1, P->b_1, rows, d, F);
    relu_forward(c->u, c->u, (size_t)rows * F);
    linear_forward(c->out, c->u, P->W_2, P->b_2, rows, F, d);
    add_and_norm(c->out, c->xhat, c->rstd, c->y2, P->gamma_3, P->beta_3, rows, d);
}

void tdec_step(TdecCache *c, const TdecParams *P, const TdecDims *d, const real *x, int pos,
               const int *src_len, int S, int rows)
{
    assert(pos < c->cap && rows <= c->rows && S <= c->src_steps);
    for (int l = 0; l < d->layers; l++)
        layer_step(c, l, &P[l], d, l ? c->out : x, pos, src_len, S, rows);
}

void tdec_cache_reorder(TdecCache *c, const TdecDims *d, const int *from, int pos, int rows)
{
    const size_t w2 = 2 * (size_t)d->width, cap = c->cap;
    for (int l = 0; l < d->layers; l++) {
        for (int r = 0; r < rows; r++)
            memcpy(c->next_kv[l] + r * cap * w2, c->kv[l] + (size_t)from[r] * cap * w2,
                   sizeof(real) * (size_t)(pos + 1) * w2);
        real *swap = c->kv[l];
        c->kv[l] = c->next_kv[l];
        c->next_kv[l] = swap;
    }
}
