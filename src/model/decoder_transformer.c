/* decoder_transformer.c: the target side of model.decoder_cell none (model/MODEL.md,
 * "Transformer decoder"), in place of model_forward.c's recurrent stages 2-4:
 *
 *   X_i = sqrt(m) ey'_{i-1} + PE_i        ey' after embedding dropout, i from 0
 *   X'  = the decoder layers over X and the annotations (nn/transformer_decoder.h)
 *   t_i = X'_i at the real target positions, after readout dropout
 *
 * then the output layer and the loss, as for every model. The alignment a_ij is the
 * heads' mean of the last layer's cross-attention: the weights that form the context
 * the output is computed from (a lower layer's feed a representation the layers above
 * still mix). Never allocates. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "model/model_pass.h"
#include "nn/ops.h"

/* The last layer's cross-attention into the alignment buffers every model has:
 * alpha (T, S*B) at i * SB + j * B + b, alpha_heads (T, H, S*B). */
static void copy_alignments(Workspace *ws)
{
    const TdecDims td = model_tdec_dims(&ws->dims);
    const TdecLayerWork *top = &ws->dec.tdec.layer[td.layers - 1];
    const int B = ws->B, S = ws->S, T = ws->T, H = td.heads;
    const size_t SB = (size_t)S * B, TS = (size_t)T * S;
    for (int i = 0; i < T; i++)
        for (int b = 0; b < B; b++)
            for (int j = 0; j < S; j++) {
                const size_t to = (size_t)j * B + b;
                ws->dec.alpha[(size_t)i * SB + to] = top->cross_mean[b * TS + (size_t)i * S + j];
                if (H > 1)
                    for (int k = 0; k < H; k++)
                        ws->dec.alpha_heads[((size_t)i * H + k) * SB + to] =
                            top->cross_probs[((size_t)b * H + k) * TS + (size_t)i * S + j];
            }
}

void transformer_forward_to_readout(Workspace *ws, const Params *P, const Batch *bt, Pcg32 *rng)
{
    const Dims *d = &ws->dims;
    const TdecDims td = model_tdec_dims(d);
    const int B = ws->B, T = ws->T, S = ws->S, m = d->emb, TB = T * B;
    assert(ws->R == TB);
    /* every row is computed: a Transformer step costs the same whatever the batch's order */
    for (int i = 0; i < T; i++) {
        ws->dec.active[i] = B;
        ws->dec.step_row[i] = i * B;
        ws->dec.state_row[i] = i * B;
        for (int b = 0; b < B; b++)
            ws->dec.step_len[(size_t)i * B + b] = bt->src_len[b];
    }
    ws->dec.step_row[T] = ws->dec.state_row[T] = TB;
    embedding_forward(ws->dec.in, m, P->E_y, bt->tgt_in, TB, m);
    if (ws->reg.embedding_dropout > 0)
        dropout_forward(ws->dec.in, m, ws->dec.mask_y, TB, m, ws->reg.embedding_dropout, rng);
    positions_forward(ws->dec.in, ws->dec.in, 0, T, B, m);
    tdec_forward(&ws->dec.tdec, P->tdec, &td, ws->dec.in, bt->tgt_len, ws->enc.H, bt->src_len, T,
                 S, B, rng ? ws->reg.self_attention_dropout : 0, rng);
    copy_alignments(ws);
    /* t_i: the last layer's output at the real target positions (its rows sentence by
     * sentence), in the order of the output layer's rows: position by position */
    const real *out = ws->dec.tdec.layer[td.layers - 1].out;
    const int *start = ws->dec.tdec.tgt.start;
    int k = 0;
    for (int i = 0; i < T; i++)
        for (int b = 0; b < B; b++) {
            if (i >= bt->tgt_len[b])
                continue;
            const size_t row = (size_t)i * B + b;
            memcpy(ws->ro.out + (size_t)k * m, out + (size_t)(start[b] + i) * m, sizeof(real) * m);
            ws->ro.real_rows[k] = (int)row;
            ws->ro.targets[k] = bt->tgt_out[row];
            k++;
        }
    assert(k == ws->N);
    if (ws->reg.readout_dropout > 0) {
        memcpy(ws->ro.dropped, ws->ro.out, sizeof(real) * (size_t)ws->N * m);
        dropout_forward(ws->ro.dropped, m, ws->ro.mask_t, ws->N, m, ws->reg.readout_dropout, rng);
    }
}

void transformer_backward_from_readout(Params *G, EmbeddingGrad *dE_y, Workspace *ws,
                                       const Params *P, const Batch *bt)
{
    const Dims *d = &ws->dims;
    const TdecDims td = model_tdec_dims(d);
    const int B = ws->B, T = ws->T, S = ws->S, N = ws->N, m = d->emb, TB = T * B;
    real *dx = ws->grad.d_tdec_out;
    /* forward: t' = t * mask (readout dropout), t_k = X'_{row k}, the output's row
     * start[b] + i of position i of sentence b */
    if (ws->reg.readout_dropout > 0)
        dropout_backward(ws->grad.d_ro_out, m, ws->ro.mask_t, N, m);
    const int *start = ws->dec.tdec.tgt.start;
    for (int k = 0; k < N; k++) {
        const int row = ws->ro.real_rows[k], i = row / B, b = row % B;
        memcpy(dx + (size_t)(start[b] + i) * m, ws->grad.d_ro_out + (size_t)k * m,
               sizeof(real) * m);
    }
    /* the layers, into dx's own memory (padded again); the annotations' gradient is
     * theirs alone */
    memset(ws->enc.d_H, 0, sizeof(real) * (size_t)S * B * td.memory);
    tdec_backward(dx, ws->enc.d_H, G->tdec, &ws->dec.tdec, dx, P->tdec, &td);
    /* forward: X = sqrt(m) ey' + PE, ey' = ey * mask */
    const real scale = (real)sqrt((double)m);
    for (size_t k = 0; k < (size_t)TB * m; k++)
        dx[k] *= scale;
    if (ws->reg.embedding_dropout > 0)
        dropout_backward(dx, m, ws->dec.mask_y, TB, m);
    if (dE_y)
        embedding_grad_add(dE_y, dx, m, bt->tgt_in, TOK_PAD, TB);
    else
        embedding_backward(G->E_y, dx, m, bt->tgt_in, TOK_PAD, TB, m);
}

void transformer_embed_step(real *x, const real *E_y, const int *prev, int pos, int rows, int m)
{
    embedding_forward(x, m, E_y, prev, rows, m);
    positions_forward(x, x, pos, 1, rows, m);
}
