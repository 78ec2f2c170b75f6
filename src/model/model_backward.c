/* model_backward.c: the backward pass of the model, model_forward.c's stages undone in
 * reverse order under the same names (readout, decoder steps, decoder inputs, source),
 * with dropout's masks; the encoder's and the attention's are theirs (encoder.h,
 * attention.h). Each step quotes the forward line it differentiates. Accumulates into
 * the gradient Params; never allocates. */
#include <assert.h>
#include <string.h>

#include "model/model_pass.h"
#include "nn/ops.h"

/* The readout, from d_ro_out (the gradient of what the output layer read, as
 * model_output_layer leaves it) to the decoder's buffers: d_states (ds_i), d_dec_in's
 * context columns (dc_i) and its embedding columns (dey_{i-1}). */
static void readout_backward(Params *G, Workspace *ws, const Params *P)
{
    const Dims *d = &ws->dims;
    const int B = ws->B, N = ws->N, m = d->emb, d_h = model_annotation_width(d);
    const int p = d->dec_hidden, readout = d->readout;
    const int in_width = m + d_h, ro_width = p + d_h + m;
    const size_t R = (size_t)ws->R;
    /* forward: t' = t * mask (readout dropout) */
    if (ws->reg.readout_dropout > 0)
        dropout_backward(ws->grad.d_ro_out, readout, ws->ro.mask_t, N, readout);
    /* forward: t = tanh(W_t [s; c; ey] + b_t) */
    tanh_backward(ws->grad.d_ro_out, ws->grad.d_ro_out, ws->ro.out, (size_t)N * readout);
    linear_backward(NULL, G->W_t, G->b_t, ws->grad.d_ro_out, ws->ro.in, P->W_t, N, ro_width,
                    readout);
    /* d_ro_in (N, p+d_h+m) = dt (N, l) . W_t (l, p+d_h+m), over ro_in, now read */
    matmul(CblasNoTrans, CblasNoTrans, N, ro_width, readout,
           1, ws->grad.d_ro_out, readout, P->W_t, ro_width, 0, ws->grad.d_ro_in, ro_width);

    /* Scatter [ds_i ; dc_i ; dey_{i-1}] back to the decoder's buffers. */
    memset(ws->grad.d_states, 0, sizeof(real) * (B + R) * p);
    memset(ws->grad.d_dec_in, 0, sizeof(real) * R * in_width);
    for (int k = 0; k < N; k++) {
        size_t row = (size_t)ws->ro.real_rows[k];
        const real *g = ws->grad.d_ro_in + (size_t)k * ro_width;
        real *ds = ws->grad.d_states + (row + B) * p;
        real *dx = ws->grad.d_dec_in + row * in_width;
        for (int u = 0; u < p; u++)
            ds[u] += g[u];
        for (int u = 0; u < d_h; u++)
            dx[m + u] += g[p + u];
        for (int u = 0; u < m; u++)
            dx[u] += g[p + d_h + u];
    }
}

/* The gradient on step i's alignment of the loss terms that read the attention weights
 * (model_forward.c), or NULL when there are none: the doubly stochastic term's,
 * -2 lambda / B (1 - A_jb) at caption b's real positions j if i is one of its real steps,
 * and attention supervision's, -lambda / (N m_bi) on each cell of the word's box. */
static const real *alignment_terms_step_backward(Workspace *ws, const Batch *bt, int i)
{
    const int stochastic = ws->reg.doubly_stochastic > 0;
    const int supervised = ws->reg.attention_supervision > 0;
    if (!ws->dec.alpha || (!stochastic && !supervised))
        return NULL;
    const int B = ws->B, S = ws->S;
    const real scale = (real)(-2 * ws->reg.doubly_stochastic / loss_captions(ws));
    memset(ws->dec.d_align, 0, sizeof(real) * (size_t)S * B);
    for (int b = 0; stochastic && b < B; b++)
        if (i < bt->tgt_len[b])
            for (int j = 0; j < bt->src_len[b]; j++) {
                const size_t x = (size_t)j * B + b;
                ws->dec.d_align[x] = scale * (1 - ws->dec.attn_total[x]);
            }
    for (int b = 0; supervised && b < B; b++) {
        const double m = model_ground_mass(ws, bt, i, b);
        if (m < 0)
            continue;
        const unsigned char *cells = bt->ground + ((size_t)i * B + b) * S;
        const real g = (real)(-ws->reg.attention_supervision / (loss_tokens(ws) * m));
        for (int j = 0; j < S; j++)
            if (cells[j])
                ws->dec.d_align[(size_t)j * B + b] += g;
    }
    return ws->dec.d_align;
}

/* Step i, undone: the cell's step (d_states block i+1 is complete here), then the
 * context's share of the input projection, then the attention, into d_states block i,
 * the annotations' gradient (enc.d_H), the keys', the fixed context's and the query's,
 * and the hidden projection's scratch d_hg. */
static void decoder_step_backward(Params *G, Workspace *ws, const Params *P, const Batch *bt, int i)
{
    const Dims *d = &ws->dims;
    const AttnDims ad = model_attn_dims(d);
    EncoderWork *enc = &ws->enc;
    const int B = ws->B, S = ws->S, m = d->emb, d_h = model_annotation_width(d);
    const int p = d->dec_hidden, Q = attn_query_width(&ad), in_width = m + d_h;
    const int Gp = cell_gates(d->dec_cell) * p, Cp = cell_cache_width(d->dec_cell) * p;
    const size_t SB = (size_t)S * B;
    const int Bi = ws->dec.active[i], hard = hard_contexts(ws);
    const size_t row = (size_t)ws->dec.step_row[i], block = (size_t)ws->dec.state_row[i];
    const int block_rows = ws->dec.state_row[i + 1] - ws->dec.state_row[i];
    const real *s_prev = ws->dec.states + block * p;
    real *ds_prev = ws->grad.d_states + block * p;
    real *dxg = ws->grad.d_dec_xg + row * Gp;
    real *dhg = ws->grad.d_hg + block * Gp; /* laid out as s_prev, for dW_h */
    real *dc = ws->grad.d_dec_in + row * in_width + m;
    const real *cache_prev =
        i ? ws->dec.cache + (size_t)ws->dec.step_row[i - 1] * Cp : ws->dec.cache0;
    /* forward: s_i = cell(xg_i, s_{i-1}) */
    cell_step_backward(d->dec_cell, ds_prev, ws->grad.d_cell, dxg, Gp, dhg, NULL, NULL,
                       ws->grad.d_states + (size_t)ws->dec.state_row[i + 1] * p, p,
                       ws->dec.cache + row * Cp, s_prev, p, cache_prev, P->dec.W_h, NULL, i,
                       Bi, p);
    if (Bi < block_rows) /* rows of the block this step left out: no gradient */
        memset(dhg + (size_t)Bi * Gp, 0, sizeof(real) * (size_t)(block_rows - Bi) * Gp);
    /* forward: xg_i += c_i W_i[:, m:]^T, so dc_i (Bi, d_h) += dxg (Bi, Gp) . W_i[:, m:] */
    matmul(CblasNoTrans, CblasNoTrans, Bi, d_h, Gp, 1, dxg, Gp, P->dec.W_i + m, in_width, 1, dc,
           in_width);
    /* forward: c_i <- beta_i c_i (the context gate) */
    if (ws->dec.gate)
        context_gate_backward(dc, in_width, ds_prev, G->w_beta, G->b_beta,
                              ws->dec.context_raw + row * d_h, ws->dec.gate + row, s_prev,
                              P->w_beta, Bi,
                              p, d_h);
    const real *dalign = alignment_terms_step_backward(ws, bt, i);
    const AttnChoice choice = hard ? hard_step_choice(ws, i) : (AttnChoice){0};
    const AttnInput in = {s_prev, enc->H, ws->keys, enc->summary, ws->dec.step_len + (size_t)i * B,
                          S,      B,      Bi,       hard ? &choice : NULL, NULL};
    if (hard)
        hard_step_weights(ws, bt, i);
    const AttnStep step = {NULL, 0,
    ws->dec.alpha ? ws->dec.alpha_heads + (size_t)i * ad.heads * SB : NULL,
                           NULL, ws->dec.scores, ws->dec.query ? ws->dec.query + block * Q : NULL,
                           model_att_pre_step(ws, i), NULL};
    AttnGrads g = {ds_prev,         ws->grad.d_query ? ws->grad.d_query + block * Q : NULL,
                   enc->d_H,        ws->grad.d_keys,
                   enc->d_summary,  ws->grad.d_alpha,
                   ws->grad.d_scores,    hard ? ws->hard_pass.step_reinforce : NULL,
                   hard ? ws->hard_pass.step_entropy : NULL, dalign};
    attn_step_backward(&g, &G->att, dc, in_width, &step, ws->dec.keep_att_pre, &P->att, &ad, &in);
}

/* The decoder's steps, last to first, then the weights every step used, all steps at
 * once: the hidden projection's dW_h and the attention's query weights. */
static void decoder_steps_backward(Params *G, Workspace *ws, const Params *P, const Batch *bt)
{
    const Dims *d = &ws->dims;
    const AttnDims ad = model_attn_dims(d);
    EncoderWork *enc = &ws->enc;
    const int B = ws->B, T = ws->T, p = d->dec_hidden, Gp = cell_gates(d->dec_cell) * p;
    const size_t SB = (size_t)ws->S * B;
    const int rows_read = ws->dec.state_row[T]; /* rows of the blocks some step reads */
    if (ws->grad.d_query)
        memset(ws->grad.d_query, 0, sizeof(real) * (size_t)rows_read * attn_query_width(&ad));
    if (ws->grad.d_keys)
        memset(ws->grad.d_keys, 0, sizeof(real) * SB * attn_key_width(&ad));
    if (enc->d_summary)
        memset(enc->d_summary, 0, sizeof(real) * (size_t)B * model_annotation_width(d));
    if (ws->grad.d_cell) /* the LSTM's cell state after the last step reaches nothing */
        memset(ws->grad.d_cell, 0, sizeof(real) * (size_t)B * p);
    memset(enc->d_H, 0, sizeof(real) * SB * model_annotation_width(d));
    for (int i = T - 1; i >= 0; i--)
        decoder_step_backward(G, ws, P, bt, i);
    /* forward: hg_i = s_{i-1} W_h^T + b_h, so dW_h (Gp, p) += dhg^T (Gp, rows) . s_{i-1}
     * (rows, p), all steps at once (rows left out are zero in dhg) */
    matmul(CblasTrans, CblasNoTrans, Gp, p, rows_read, 1, ws->grad.d_hg, Gp, ws->dec.states, p, 1,
           G->dec.W_h, p);
    column_sums_add(G->dec.b_h, ws->grad.d_hg, rows_read, Gp, Gp);
    if (ws->grad.d_query)
        attn_queries_backward(&G->att, &ad, ws->grad.d_query, ws->dec.states, rows_read);
}

/* decoder_inputs_forward undone: the input projection's weights over all steps at once
 * (dW_i on [ey ; c]), then ey's gradient through its dropout to the target embeddings. */
static void decoder_inputs_backward(Params *G, EmbeddingGrad *dE_y, Workspace *ws,
                                    const Params *P, const Batch *bt)
{
    const Dims *d = &ws->dims;
    const int B = ws->B, T = ws->T, m = d->emb, d_h = model_annotation_width(d);
    const int p = d->dec_hidden, in_width = m + d_h, Gp = cell_gates(d->dec_cell) * p;
    const int R = ws->R;
    /* forward: dec.xg = [ey ; c] W_i^T + b_i, so
     * dW_i (Gp, m+d_h) += dxg^T (Gp, R) . [ey ; c] (R, m+d_h) */
    matmul(CblasTrans, CblasNoTrans, Gp, in_width, R, 1, ws->grad.d_dec_xg, Gp, ws->dec.in,
           in_width, 1, G->dec.W_i, in_width);
    column_sums_add(G->dec.b_i, ws->grad.d_dec_xg, R, Gp, Gp);
    /* dey (R, m) += dxg (R, Gp) . W_i[:, :m] (Gp, m) */
    matmul(CblasNoTrans, CblasNoTrans, R, m, Gp, 1, ws->grad.d_dec_xg, Gp, P->dec.W_i, in_width,
           1, ws->grad.d_dec_in, in_width);
    /* forward: ey' = ey * mask (embedding dropout; the decoder and the readout read ey') */
    if (ws->reg.embedding_dropout > 0)
        dropout_backward(ws->grad.d_dec_in, in_width, ws->dec.mask_y, R, m);
    for (int i = 0; i < T; i++) {
        const real *dey = ws->grad.d_dec_in + (size_t)ws->dec.step_row[i] * in_width;
        const int *ids = bt->tgt_in + (size_t)i * B;
        if (dE_y)
            embedding_grad_add(dE_y, dey, in_width, ids, TOK_PAD, ws->dec.active[i]);
        else
            embedding_backward(G->E_y, dey, in_width, ids, TOK_PAD, ws->dec.active[i], m);
    }
}

/* init_states_forward undone: s_0's gradient (d_states block 0) and c_0's (d_cell after
 * step 0's backward, made the pre-activation's in place) to W_s, W_c, their biases and
 * the encoder's summary (enc.d_init). */
static void init_states_backward(Params *G, Workspace *ws, const Params *P, int w0)
{
    const Dims *d = &ws->dims;
    EncoderWork *enc = &ws->enc;
    const int p = d->dec_hidden;
    if (!P->W_s) /* the Transformer decoder has no initial state */
        return;
    const InitState s0 = {enc->init, enc->ld_init, P->W_s, P->b_s, ws->B, p, w0};
    init_state_backward(G->W_s, G->b_s, enc->d_init, ws->grad.d_s0, ws->grad.d_states,
                        ws->dec.states, p, &s0);
    if (ws->dec.cache0) {
        const int Cp = cell_cache_width(d->dec_cell) * p, at = cell_state_offset(d->dec_cell) * p;
        InitState c0 = s0;
        c0.W = P->W_c, c0.b = P->b_c;
        init_state_backward(G->W_c, G->b_c, enc->d_init, ws->grad.d_cell, ws->grad.d_cell,
                            ws->dec.cache0 + at,
                            Cp, &c0);
    }
}

/* The source side: the keys' gradient (summed over the steps) and the fixed context's
 * back to the annotations, s_0's (and c_0's) to what it was computed from, then the
 * encoder and the source embeddings. */
static void source_backward(Params *G, EmbeddingGrad *dE_x, Workspace *ws, const Params *P,
                            const Batch *bt)
{
    const Dims *d = &ws->dims;
    const EncoderDims ed = model_encoder_dims(d);
    const AttnDims ad = model_attn_dims(d);
    const EncoderOps *encoder = encoder_ops(&ed);
    EncoderWork *enc = &ws->enc;
    const int SB = ws->S * ws->B, w0 = encoder->init_width(&ed);
    attn_keys_backward(enc->d_H, &G->att, ws->grad.d_keys, enc->H, &P->att, &ad, SB);
    /* before s_0's gradient reaches what it was computed from (the same numbers may
     * meet there: the order of the sums stays the one forward implies) */
    encoder->annotations_backward(&G->enc, enc, &P->enc, &ed, bt->src_len);
    init_states_backward(G, ws, P, w0);
    /* back to the source: E_x's gradient by rows (dE_x) or dense (G->E_x) */
    const EncoderSource src = {bt->src, P->E_x, bt->src_len, bt->pixels};
    const EncoderSourceGrad gsrc = {G->E_x, dE_x};
    encoder->backward(&G->enc, enc, &P->enc, &ed, &src, &gsrc, ws->grad.d_hg);
}

/* Backward from d_ro_out, stage by stage in the reverse of forward's order. */
static void backward_from_readout(Params *G, EmbeddingGrad *dE_x, EmbeddingGrad *dE_y, Workspace *ws,
                                  const Params *P, const Batch *bt)
{
    assert(ws->with_backward);
    if (model_is_transformer(&ws->dims)) {
        transformer_backward_from_readout(G, dE_y, ws, P, bt);
    } else {
        readout_backward(G, ws, P);
        decoder_steps_backward(G, ws, P, bt);
        decoder_inputs_backward(G, dE_y, ws, P, bt);
    }
    source_backward(G, dE_x, ws, P, bt);
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
    double ce_sum = model_output_layer(G, ws, P); /* the output layer's backward with its forward */
    if (ws->output_hook.done)
        ws->output_hook.done(ws->output_hook.ctx);
    double loss = model_pass_loss(ws, bt, ce_sum);
    backward_from_readout(G, dE_x, dE_y, ws, P, bt);
    return loss;
}
