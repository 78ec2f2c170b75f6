/* model_backward.c: the backward pass of the model (model.c's forward), for every cell,
 * score and depth, with dropout's masks; each step quotes the forward line it
 * differentiates. Accumulates into the gradient Params; never allocates. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "nn/attention.h"
#include "nn/model_pass.h"
#include "nn/ops.h"

/* forward: x' = x * mask (dropout), so dx = dx' * mask; dx (rows, cols, row stride ld) in
 * place. */
static void dropout_backward(real *dx, int ld, const real *mask, int rows, int cols)
{
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++)
            dx[(size_t)r * ld + k] *= mask[(size_t)r * cols + k];
}

/* Backward of step i's attention, from the gradient dc (rows of the step, row stride
 * in_width) of its context: into ds_prev (the gradient of s_{i-1}), d_query (block),
 * d_keys or d_H, v_a's gradient, or d_fixed_context for score none. */
static void attend_backward(Params *G, Workspace *ws, const Params *P, int i, const real *dc,
                            real *ds_prev, const real *s_prev, size_t block)
{
    const Dims *d = &ws->dims;
    const int B = ws->B, S = ws->S, Bi = ws->active[i];
    const int n = d->enc_hidden, p = d->dec_hidden, a = d->attn, in_width = d->emb + 2 * n;
    const int *len = ws->step_len + (size_t)i * B;
    if (d->score == SCORE_NONE) { /* forward: c_i = fixed context, at every step */
        for (int b = 0; b < Bi; b++)
            for (int u = 0; u < 2 * n; u++)
                ws->d_fixed_context[(size_t)b * 2 * n + u] += dc[(size_t)b * in_width + u];
        return;
    }
    const real *alpha = ws->alpha + (size_t)i * S * B;
    /* forward: c_i = sum_j alpha_ij h_j; alpha_i = softmax(e_i) */
    attn_context_backward(ws->d_alpha, ws->d_H, dc, in_width, alpha, ws->H, 2 * n, len, S, B, 2 * n);
    attn_softmax_backward(ws->d_scores, ws->d_alpha, alpha, len, S, B);
    real *q = ws->query ? ws->query + block * a : NULL;
    real *dq = ws->d_query ? ws->d_query + block * a : NULL;
    switch (d->score) {
    case SCORE_ADDITIVE: {
        real *pre = model_att_pre_step(ws, i);
        if (!ws->keep_att_pre) /* the same arithmetic as forward: the same numbers */
            attn_additive_scores_forward(ws->scores, pre, q, ws->keys, P->v_a, len, S, B, a);
        attn_additive_scores_backward(dq, ws->d_keys, G->v_a, ws->d_scores, pre, P->v_a, len, S,
                                      B, a);
        /* forward: q = s_{i-1} W_a^T, so ds_{i-1} (Bi, p) += dq (Bi, a) . W_a (a, p) */
        matmul(CblasNoTrans, CblasNoTrans, Bi, p, a, 1, dq, a, P->W_a, p, 1, ds_prev, p);
        break;
    }
    case SCORE_DOT: /* forward: e_ij = s_{i-1} . h_j */
        attn_dot_scores_backward(ds_prev, ws->d_H, ws->d_scores, s_prev, ws->H, 2 * n, 1, len, S,
                                 B, 2 * n);
        break;
    case SCORE_GENERAL: /* forward: e_ij = s_{i-1} . keys_j, keys = W_g h_j */
        attn_dot_scores_backward(ds_prev, ws->d_keys, ws->d_scores, s_prev, ws->keys, p, 1, len,
                                 S, B, p);
        break;
    case SCORE_SCALED_DOT:
        /* forward: e_ij = q . keys_j / sqrt(a), q = W_q s_{i-1}, keys = W_k h_j */
        attn_dot_scores_backward(dq, ws->d_keys, ws->d_scores, q, ws->keys, a,
                                 (real)(1 / sqrt((double)a)), len, S, B, a);
        /* ds_{i-1} (Bi, p) += dq (Bi, a) . W_q (a, p) */
        matmul(CblasNoTrans, CblasNoTrans, Bi, p, a, 1, dq, a, P->W_q, p, 1, ds_prev, p);
        break;
    case SCORE_NONE:
        break;
    }
}

/* The encoder's layers, top to bottom, from the gradient reaching the annotations
 * (d_H); leaves the gradient of the source embeddings in d_ex. */
static void encoder_backward(Params *G, Workspace *ws, const Params *P, const Batch *bt)
{
    const Dims *d = &ws->dims;
    const int S = ws->S, B = ws->B, SB = S * B, n = d->enc_hidden;
    const int Gn = cell_gates(d->enc_cell) * n;
    real *d_out = ws->d_H;
    for (int l = d->enc_layers - 1; l >= 0; l--) {
        CellParams *gf = &G->enc_fwd[l], *gb = &G->enc_bwd[l];
        const CellParams *pf = &P->enc_fwd[l], *pb = &P->enc_bwd[l];
        cell_sequence_backward(d->enc_cell, ws->d_xg_bwd[l], gb->W_h, gb->b_h, ws->d_carry,
                               ws->d_hg, d_out + n, ws->enc_out[l] + n, 2 * n, ws->cache_bwd[l],
                               pb->W_h, bt->src_len, S, B, n, 1);
        cell_sequence_backward(d->enc_cell, ws->d_xg_fwd[l], gf->W_h, gf->b_h, ws->d_carry,
                               ws->d_hg, d_out, ws->enc_out[l], 2 * n, ws->cache_fwd[l], pf->W_h,
                               bt->src_len, S, B, n, 0);
        /* forward: xg = in W_i^T + b_i per direction, in = ex or the layer below; the
         * weight gradients read in, and then d_in may overwrite it (d_ex over ex):
         * d_in (S*B, width) = dxg_fwd . W_i_fwd + dxg_bwd . W_i_bwd */
        const real *in = l ? ws->enc_out[l - 1] : ws->ex;
        const int width = l ? 2 * n : d->emb;
        linear_backward(NULL, gf->W_i, gf->b_i, ws->d_xg_fwd[l], in, pf->W_i, SB, width, Gn);
        linear_backward(NULL, gb->W_i, gb->b_i, ws->d_xg_bwd[l], in, pb->W_i, SB, width, Gn);
        real *d_in = l ? (d_out == ws->d_H ? ws->d_below : ws->d_H) : ws->d_ex;
        matmul(CblasNoTrans, CblasNoTrans, SB, width, Gn, 1, ws->d_xg_fwd[l], Gn, pf->W_i, width,
               0, d_in, width);
        matmul(CblasNoTrans, CblasNoTrans, SB, width, Gn, 1, ws->d_xg_bwd[l], Gn, pb->W_i, width,
               1, d_in, width);
        d_out = d_in;
    }
}

/* Backward from d_ro_out (the gradient of what the output layer read, as
 * model_output_layer leaves it). */
static void backward_from_readout(Params *G, EmbeddingGrad *dE_x, EmbeddingGrad *dE_y, Workspace *ws,
                                  const Params *P, const Batch *bt)
{
    const Dims *d = &ws->dims;
    const int B = ws->B, S = ws->S, T = ws->T, N = ws->N;
    const int m = d->emb, n = d->enc_hidden, p = d->dec_hidden, a = d->attn;
    const int readout = d->readout;
    const int Gp = cell_gates(d->dec_cell) * p, Cp = cell_cache_width(d->dec_cell) * p;
    const int in_width = m + 2 * n, ro_width = p + 2 * n + m;
    const size_t SB = (size_t)S * B, R = (size_t)ws->R;
    const size_t Q = (size_t)ws->state_row[T]; /* rows of the blocks some step reads */
    assert(ws->with_backward);

    /* forward: t' = t * mask (readout dropout) */
    if (ws->reg.readout_dropout > 0)
        dropout_backward(ws->d_ro_out, readout, ws->mask_t, N, readout);
    /* forward: t = tanh(W_t [s; c; ey] + b_t) */
    tanh_backward(ws->d_ro_out, ws->d_ro_out, ws->ro_out, (size_t)N * readout);
    linear_backward(NULL, G->W_t, G->b_t, ws->d_ro_out, ws->ro_in, P->W_t, N, ro_width,
                    readout);
    /* d_ro_in (N, p+2n+m) = dt (N, l) . W_t (l, p+2n+m), over ro_in, now read */
    matmul(CblasNoTrans, CblasNoTrans, N, ro_width, readout,
           1, ws->d_ro_out, readout, P->W_t, ro_width, 0, ws->d_ro_in, ro_width);

    /* Scatter [ds_i ; dc_i ; dey_{i-1}] back to the decoder's buffers. */
    memset(ws->d_states, 0, sizeof(real) * (B + R) * p);
    memset(ws->d_dec_in, 0, sizeof(real) * R * in_width);
    for (int k = 0; k < N; k++) {
        size_t row = (size_t)ws->real_rows[k];
        const real *g = ws->d_ro_in + (size_t)k * ro_width;
        real *ds = ws->d_states + (row + B) * p;
        real *dx = ws->d_dec_in + row * in_width;
        for (int u = 0; u < p; u++)
            ds[u] += g[u];
        for (int u = 0; u < 2 * n; u++)
            dx[m + u] += g[p + u];
        for (int u = 0; u < m; u++)
            dx[u] += g[p + 2 * n + u];
    }

    if (ws->d_query)
        memset(ws->d_query, 0, sizeof(real) * Q * a);
    if (ws->d_keys)
        memset(ws->d_keys, 0, sizeof(real) * SB * model_key_width(d));
    if (ws->d_fixed_context)
        memset(ws->d_fixed_context, 0, sizeof(real) * (size_t)B * 2 * n);
    if (ws->d_cell) /* the LSTM's cell state after the last step reaches nothing */
        memset(ws->d_cell, 0, sizeof(real) * (size_t)B * p);
    memset(ws->d_H, 0, sizeof(real) * SB * 2 * n);
    for (int i = T - 1; i >= 0; i--) {
        const int Bi = ws->active[i];
        const size_t row = (size_t)ws->step_row[i], block = (size_t)ws->state_row[i];
        const int block_rows = ws->state_row[i + 1] - ws->state_row[i];
        const real *s_prev = ws->states + block * p;
        real *ds_prev = ws->d_states + block * p;
        real *dxg = ws->d_dec_xg + row * Gp;
        real *dhg = ws->d_hg + block * Gp; /* laid out as s_prev, for dW_h below */
        real *dc = ws->d_dec_in + row * in_width + m;
        const real *cache_prev = i ? ws->dec_cache + (size_t)ws->step_row[i - 1] * Cp : NULL;
        /* forward: s_i = cell(xg_i, s_{i-1}); d_states block i+1 is complete here */
        cell_step_backward(d->dec_cell, ds_prev, ws->d_cell, dxg, Gp, dhg, NULL, NULL,
                           ws->d_states + (size_t)ws->state_row[i + 1] * p, p,
                           ws->dec_cache + row * Cp, s_prev, p, cache_prev, P->dec.W_h, NULL, i,
                           Bi, p);
        if (Bi < block_rows) /* rows of the block this step left out: no gradient */
            memset(dhg + (size_t)Bi * Gp, 0, sizeof(real) * (size_t)(block_rows - Bi) * Gp);
        /* forward: xg_i += c_i W_i[:, m:]^T, so dc_i (Bi, 2n) += dxg (Bi, Gp) . W_i[:, m:] */
        matmul(CblasNoTrans, CblasNoTrans, Bi, 2 * n, Gp, 1, dxg, Gp, P->dec.W_i + m, in_width,
               1, dc, in_width);
        attend_backward(G, ws, P, i, dc, ds_prev, s_prev, block);
    }
    /* forward: hg_i = s_{i-1} W_h^T + b_h, so dW_h (Gp, p) += dhg^T (Gp, Q) . s_{i-1}
     * (Q, p), all steps at once (rows left out are zero in dhg) */
    matmul(CblasTrans, CblasNoTrans, Gp, p, (int)Q, 1, ws->d_hg, Gp, ws->states, p, 1,
           G->dec.W_h, p);
    column_sums_add(G->dec.b_h, ws->d_hg, (int)Q, Gp, Gp);
    /* forward: q = s_{i-1} W^T (W_a or W_q), so dW (a, p) += dq^T (a, Q) . s_{i-1} (Q, p),
     * all steps at once */
    if (ws->d_query)
        matmul(CblasTrans, CblasNoTrans, a, p, (int)Q, 1, ws->d_query, a, ws->states, p, 1,
               d->score == SCORE_ADDITIVE ? G->W_a : G->W_q, p);
    /* forward: dec_xg = [ey ; c] W_i^T + b_i, so
     * dW_i (Gp, m+2n) += dxg^T (Gp, R) . [ey ; c] (R, m+2n) */
    matmul(CblasTrans, CblasNoTrans, Gp, in_width, (int)R, 1, ws->d_dec_xg, Gp, ws->dec_in,
           in_width, 1, G->dec.W_i, in_width);
    column_sums_add(G->dec.b_i, ws->d_dec_xg, (int)R, Gp, Gp);
    /* dey (R, m) += dxg (R, Gp) . W_i[:, :m] (Gp, m) */
    matmul(CblasNoTrans, CblasNoTrans, (int)R, m, Gp, 1, ws->d_dec_xg, Gp, P->dec.W_i, in_width,
           1, ws->d_dec_in, in_width);
    /* forward: ey' = ey * mask (embedding dropout; the decoder and the readout read ey') */
    if (ws->reg.embedding_dropout > 0)
        dropout_backward(ws->d_dec_in, in_width, ws->mask_y, (int)R, m);
    for (int i = 0; i < T; i++) {
        const real *dey = ws->d_dec_in + (size_t)ws->step_row[i] * in_width;
        const int *ids = bt->tgt_in + (size_t)i * B;
        if (dE_y)
            embedding_grad_add(dE_y, dey, in_width, ids, TOK_PAD, ws->active[i]);
        else
            embedding_backward(G->E_y, dey, in_width, ids, TOK_PAD, ws->active[i], m);
    }

    /* the source side of the scores */
    switch (d->score) {
    case SCORE_ADDITIVE: /* forward: keys = H U_a^T + b_a */
        linear_backward(ws->d_H, G->U_a, G->b_a, ws->d_keys, ws->H, P->U_a, (int)SB, 2 * n, a);
        break;
    case SCORE_GENERAL: /* forward: keys = H W_g^T */
        linear_backward(ws->d_H, G->W_g, NULL, ws->d_keys, ws->H, P->W_g, (int)SB, 2 * n, p);
        break;
    case SCORE_SCALED_DOT: /* forward: keys = H W_k^T */
        linear_backward(ws->d_H, G->W_k, NULL, ws->d_keys, ws->H, P->W_k, (int)SB, 2 * n, a);
        break;
    case SCORE_NONE: /* forward: c = [fwd_h at the last position ; bwd_h at the first] */
        for (int b = 0; b < B; b++) {
            const real *dcf = ws->d_fixed_context + (size_t)b * 2 * n;
            real *last = ws->d_H + ((size_t)(bt->src_len[b] - 1) * B + b) * 2 * n;
            real *first = ws->d_H + (size_t)b * 2 * n + n;
            for (int u = 0; u < n; u++) {
                last[u] += dcf[u];
                first[u] += dcf[n + u];
            }
        }
        break;
    case SCORE_DOT: /* the keys were H: d_H has their gradient already */
        break;
    }
    /* forward: s_0 = tanh(bwd_h_1 W_s^T + b_s) */
    tanh_backward(ws->d_s0, ws->d_states, ws->states, (size_t)B * p);
    /* dW_s (p, n) += ds0^T (p, B) . bwd_h_1 (B, n) */
    matmul(CblasTrans, CblasNoTrans, p, n, B, 1, ws->d_s0, p, ws->H + n, 2 * n, 1, G->W_s, n);
    column_sums_add(G->b_s, ws->d_s0, B, p, p);
    /* dbwd_h_1 (B, n) += ds0 (B, p) . W_s (p, n) */
    matmul(CblasNoTrans, CblasNoTrans, B, n, p, 1, ws->d_s0, p, P->W_s, n, 1, ws->d_H + n, 2 * n);

    encoder_backward(G, ws, P, bt);
    /* forward: ex' = ex * mask (embedding dropout) */
    if (ws->reg.embedding_dropout > 0)
        dropout_backward(ws->d_ex, m, ws->mask_x, (int)SB, m);
    if (dE_x)
        embedding_grad_add(dE_x, ws->d_ex, m, bt->src, TOK_PAD, (int)SB);
    else
        embedding_backward(G->E_x, ws->d_ex, m, bt->src, TOK_PAD, (int)SB, m);
}

void model_backward_rows(Params *G, EmbeddingGrad *dE_x, EmbeddingGrad *dE_y, Workspace *ws,
                         const Params *P, const Batch *bt)
{
    assert(ws->with_backward);
    model_output_layer(G, ws, P); /* the logits of forward were not kept: computed again */
    backward_from_readout(G, dE_x, dE_y, ws, P, bt);
}

void model_backward(Params *G, Workspace *ws, const Params *P, const Batch *bt)
{
    model_backward_rows(G, NULL, NULL, ws, P, bt);
}

double model_forward_backward(Params *G, EmbeddingGrad *dE_x, EmbeddingGrad *dE_y, Workspace *ws,
                              const Params *P, const Batch *bt)
{
    assert(ws->with_backward);
    model_forward_to_readout(ws, P, bt);
    double loss = model_output_layer(G, ws, P); /* the output layer's backward with its forward */
    backward_from_readout(G, dE_x, dE_y, ws, P, bt);
    return loss / ws->N;
}
