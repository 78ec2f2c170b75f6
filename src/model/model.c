/* model.c: the model of model/MODEL.md over a batch: the workspace, the source embeddings,
 * the encoder (encoder.h) and the attention (attention.h) behind their seams, the
 * decoder with teacher forcing, the readout and the loss, with training's dropout and
 * label smoothing. Backward is model_backward.c's. Products over many positions are one
 * gemm each; only the recurrences loop over time. Never allocates after
 * model_workspace_init. */
#include "model/model.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_pass.h"
#include "nn/ops.h"

/* ---- workspace ------------------------------------------------------------------- */

/* Logits of one output-layer chunk: 4 MiB in float, rows enough for an efficient gemm
 * (65 at V_y = 16000) and for a whole batch of a small model. Chunks of 65 rather than
 * 131 rows measured no slower at size L and kept 6 MiB less resident (the smaller
 * chunk also shrinks OpenBLAS's packing of the dW_o product). */
#define OUTPUT_CHUNK_FLOATS ((size_t)1 << 20)
/* The attention's tanh layer of every decoder step is kept for backward up to 16 MiB
 * (float); above, backward computes each step's again (10% more attention work, 28 MiB
 * less at benchmark size L). */
#define ATT_PRE_KEEP_FLOATS ((size_t)1 << 22)

/* Whether the batch's target lengths fall from first to last (batch_sort_by_target). */
static int sorted_by_target(const Batch *bt)
{
    for (int b = 1; b < bt->batch_size; b++)
        if (bt->tgt_len[b] > bt->tgt_len[b - 1])
            return 0;
    return 1;
}

/* The additive score's tanh layer of one step takes `floats` values; each step's block
 * starts on an ARENA_ALIGN boundary, as the one block that backward fills again does:
 * BLAS kernels may sum in another order at another alignment (OpenBLAS's Prescott
 * kernels do), and kept or computed again, a step must give the same bits. */
static size_t att_pre_stride(size_t floats)
{
    const size_t per_line = ARENA_ALIGN / sizeof(real);
    return (floats + per_line - 1) / per_line * per_line;
}

/* Points every buffer into the arena for a batch of (B, S, T, N) whose decoder computes
 * R rows over all steps; with a NULL arena base this only measures. */
static void workspace_carve(Workspace *ws, int B, int S, int T, int N, int R)
{
    const Dims *d = &ws->dims;
    const EncoderDims ed = model_encoder_dims(d);
    const AttnDims ad = model_attn_dims(d);
    const EncoderOps *encoder = encoder_ops(&ed);
    const size_t m = d->emb, p = d->dec_hidden, d_h = model_annotation_width(d);
    const size_t readout = d->readout, Vy = d->tgt_vocab, K = attn_key_width(&ad);
    const size_t Q = attn_query_width(&ad), A = attn_pre_width(&ad);
    const size_t Gd = cell_gates(d->dec_cell), Cd = cell_cache_width(d->dec_cell);
    const int attends = attn_has_weights(&ad);
    const size_t SB = (size_t)S * B, TB = (size_t)T * B;
    const size_t ro_width = p + d_h + m, in_width = m + d_h;
    Arena *ar = &ws->arena;
    arena_reset(ar);
    ws->B = B, ws->S = S, ws->T = T, ws->N = N, ws->R = R;
    /* decoder buffers by step rows (R) or by state blocks (at most B + R rows) */
    const size_t rows = (size_t)R, state_rows = (size_t)B + R;
#define TAKE(field, count) (ws->field = arena_alloc(ar, (count), sizeof(*ws->field)))
#define TAKE_IF(cond, field, count) (ws->field = (cond) ? arena_alloc(ar, (count), sizeof(*ws->field)) : NULL)
    TAKE(ex, SB * m);
    TAKE_IF(ws->with_backward, mask_x, SB * m);
    /* a model without attention weights reads the encoder's fixed context instead */
    encoder->carve_work(&ws->enc, ar, &ed, B, S, !attends, ws->with_backward);
    TAKE_IF(K > 0, keys, SB * K);
    TAKE(states, state_rows * p);
    TAKE(dec_in, rows * in_width);
    TAKE_IF(ws->with_backward, mask_y, rows * m);
    TAKE(dec_xg, rows * Gd * p);
    TAKE(dec_cache, rows * Cd * p);
    TAKE_IF(model_starts_cell_state(d), cache0, (size_t)B * Cd * p);
    TAKE_IF(Q > 0, query, state_rows * Q);
    TAKE_IF(A > 0, att_pre, (ws->keep_att_pre ? (size_t)T : 1) * att_pre_stride(SB * A));
    TAKE(scores, SB);
    TAKE_IF(attends, alpha, TB * S);
    if (ad.heads > 1)
        TAKE_IF(attends, alpha_heads, TB * ad.heads * S);
    else
        ws->alpha_heads = ws->alpha;
    TAKE(active, (size_t)T);
    TAKE(step_row, (size_t)T + 1);
    TAKE(state_row, (size_t)T + 1);
    TAKE(step_len, TB);
    TAKE(real_rows, (size_t)N);
    TAKE(targets, (size_t)N);
    /* hard attention's, before the readout's (whose memory backward reuses): a
     * CONTEXT_GIVEN pass reads hard_rows and chosen as the last pass of this shape left them */
    const size_t TBH = TB * ad.heads;
    TAKE_IF(attends, hard_rows, (size_t)B);
    TAKE_IF(attends, soft_len, TB);
    TAKE_IF(attends, draws, TBH);
    TAKE_IF(attends, chosen, TBH);
    TAKE_IF(attends, tok_sentence, (size_t)N);
    TAKE_IF(attends, tok_step, (size_t)N);
    TAKE_IF(attends, tok_nll, (size_t)N);
    TAKE_IF(attends, advantage, TB);
    TAKE_IF(attends && ws->with_backward, step_reinforce, (size_t)B);
    TAKE_IF(attends && ws->with_backward, step_entropy, (size_t)B);
    /* The readout's buffers are dead once backward has scattered their gradient back to
     * the decoder (d_ro_in is ro_in), which is where the recurrences' scratch d_hg
     * begins its use: d_hg shares their memory (6.5 MiB at benchmark size L). */
    const size_t readout_start = ar->used;
    TAKE(ro_in, (size_t)N * ro_width);
    TAKE(ro_out, (size_t)N * readout);
    TAKE_IF(ws->with_backward, mask_t, (size_t)N * readout);
    TAKE_IF(ws->with_backward, ro_dropped, (size_t)N * readout);
    /* the output layer runs over chunks of rows: its (N, V_y) logits would be the
     * largest activation of all (41 MiB at benchmark size L, batch 32) */
    ws->out_chunk_rows = N < ws->max_out_chunk_rows ? N : ws->max_out_chunk_rows;
    TAKE(logits, (size_t)ws->out_chunk_rows * Vy);
    if (ws->with_backward) {
        size_t enc_hg = encoder->backward_scratch(&ed, B, S), dec_hg = state_rows * Gd * p;
        const size_t readout_end = ar->used;
        ar->used = readout_start;
        TAKE(d_hg, enc_hg > dec_hg ? enc_hg : dec_hg);
        if (ar->used < readout_end)
            ar->used = readout_end;
        TAKE(d_ro_out, (size_t)N * readout);
        /* Gradients that overwrite what only forward reads share its memory: the
         * readout's input, the decoder's input projections (the cell caches hold what
         * backward needs), the source embeddings (read for the encoder's dW_i first). */
        ws->d_ro_in = ws->ro_in;
        TAKE(d_states, state_rows * p);
        TAKE(d_dec_in, rows * in_width);
        ws->d_dec_xg = ws->dec_xg;
        TAKE_IF(Q > 0, d_query, state_rows * Q);
        TAKE_IF(d->dec_cell == CELL_LSTM, d_cell, (size_t)B * p);
        TAKE_IF(attends, d_alpha, SB);
        TAKE_IF(attends, d_scores, SB);
        TAKE_IF(K > 0, d_keys, SB * K);
        ws->d_ex = ws->ex;
        TAKE(d_s0, (size_t)B * p);
    }
#undef TAKE_IF
#undef TAKE
}

/* Sets ws up for these sizes and measures its buffers in a counting arena (ws->arena.used
 * bytes), without allocating them. */
static void model_workspace_measure(Workspace *ws, const Dims *d, int max_batch,
                                    int max_src_steps, int max_tgt_steps, int with_backward)
{
    *ws = (Workspace){0};
    ws->dims = *d;
    ws->max_batch = max_batch;
    ws->max_src_steps = max_src_steps;
    ws->max_tgt_steps = max_tgt_steps;
    ws->with_backward = with_backward;
    const AttnDims ad = model_attn_dims(d);
    size_t att_pre_all = (size_t)max_tgt_steps * max_src_steps * max_batch * attn_pre_width(&ad);
    ws->keep_att_pre = with_backward && att_pre_all <= ATT_PRE_KEEP_FLOATS;
    int rows = (int)(OUTPUT_CHUNK_FLOATS / (size_t)d->tgt_vocab);
    ws->max_out_chunk_rows = rows > 0 ? rows : 1;
    /* Every buffer grows with B, S, T and N, so the largest batch bounds them all. */
    const int most = max_batch * max_tgt_steps;
    workspace_carve(ws, max_batch, max_src_steps, max_tgt_steps, most, most);
}

size_t model_workspace_bytes(const Dims *d, int max_batch, int max_src_steps, int max_tgt_steps,
                             int with_backward)
{
    Workspace ws;
    model_workspace_measure(&ws, d, max_batch, max_src_steps, max_tgt_steps, with_backward);
    return ws.arena.used;
}

void model_workspace_init(Workspace *ws, const Dims *d, int max_batch, int max_src_steps,
                          int max_tgt_steps, int with_backward)
{
    model_workspace_measure(ws, d, max_batch, max_src_steps, max_tgt_steps, with_backward);
    arena_init(&ws->arena, ws->arena.used);
}

void model_workspace_free(Workspace *ws)
{
    arena_free(&ws->arena);
    *ws = (Workspace){0};
}

void model_set_regularization(Workspace *ws, const Regularization *reg)
{
    assert(!reg || ws->with_backward);
    ws->reg = reg ? *reg : (Regularization){0};
}

void model_set_hard(Workspace *ws, const HardAttention *hard)
{
    ws->hard = hard ? *hard : (HardAttention){0};
}

void model_set_argmax(Workspace *ws, int argmax)
{
    model_set_hard(ws, argmax ? &(HardAttention){.mode = CONTEXT_ARGMAX} : NULL);
}

/* ---- forward --------------------------------------------------------------------- */

/* Step i's tanh layer of the additive score (S*B, A): its own block when every step's is
 * kept, else the one block that backward fills again; NULL for the other scores. */
real *model_att_pre_step(const Workspace *ws, int i)
{
    if (!ws->att_pre)
        return NULL;
    const AttnDims ad = model_attn_dims(&ws->dims);
    const size_t block = att_pre_stride((size_t)ws->S * ws->B * attn_pre_width(&ad));
    return ws->att_pre + (ws->keep_att_pre ? (size_t)i : 0) * block;
}

/* The source side, with source-embedding dropout drawn from rng (NULL: none): the
 * embeddings, the encoder's annotations, the attention's keys, and s_0. */
static void encode(Workspace *ws, const Params *P, const Batch *bt, Pcg32 *rng)
{
    const Dims *d = &ws->dims;
    const EncoderDims ed = model_encoder_dims(d);
    const AttnDims ad = model_attn_dims(d);
    const EncoderOps *encoder = encoder_ops(&ed);
    const int B = bt->batch_size, S = bt->src_steps, T = bt->tgt_steps;
    const int m = d->emb, p = d->dec_hidden, w0 = encoder->init_width(&ed);
    assert(B <= ws->max_batch && S <= ws->max_src_steps && T <= ws->max_tgt_steps);
    /* Sorted by target length, the decoder computes only the real target positions. */
    workspace_carve(ws, B, S, T, bt->n_tgt_tokens,
                    sorted_by_target(bt) ? bt->n_tgt_tokens : T * B);
    const int SB = S * B;

    embedding_forward(ws->ex, m, P->E_x, bt->src, SB, m);
    if (rng && ws->reg.embedding_dropout > 0)
        dropout_forward(ws->ex, m, ws->mask_x, SB, m, ws->reg.embedding_dropout, rng);
    ws->enc.rng = rng;
    ws->enc.sa_dropout = rng ? ws->reg.self_attention_dropout : 0;
    encoder->forward(&ws->enc, &P->enc, &ed, ws->ex, bt->src_len);
    /* The source side of the scores does not depend on the decoder step: once per batch. */
    attn_keys_forward(ws->keys, &P->att, &ad, ws->enc.H, SB);
    /* s_0 (B, p) = tanh(init (B, w0; row stride ld_init) . W_s^T + b_s) */
    real *s0 = ws->states;
    matmul(CblasNoTrans, CblasTrans, B, p, w0, 1, ws->enc.init, ws->enc.ld_init, P->W_s, w0, 0,
           s0, p);
    for (int b = 0; b < B; b++)
        for (int k = 0; k < p; k++)
            s0[(size_t)b * p + k] = r_tanh(s0[(size_t)b * p + k] + P->b_s[k]);
    if (ws->cache0) {
        /* c_0 (B, p) = tanh(init . W_c^T + b_c), into the LSTM cache's cell-state slot
         * (lstm.h: i f g o c tanh(c)); the other slots stay 0, nothing reads them */
        const int Cp = cell_cache_width(d->dec_cell) * p, at = cell_state_offset(d->dec_cell) * p;
        memset(ws->cache0, 0, sizeof(real) * (size_t)B * Cp);
        matmul(CblasNoTrans, CblasTrans, B, p, w0, 1, ws->enc.init, ws->enc.ld_init, P->W_c, w0, 0,
               ws->cache0 + at, Cp);
        for (int b = 0; b < B; b++)
            for (int k = 0; k < p; k++) {
                real *c = ws->cache0 + (size_t)b * Cp + at + k;
                *c = r_tanh(*c + P->b_c[k]);
            }
    }
}

void model_encode(Workspace *ws, const Params *P, const Batch *bt)
{
    encode(ws, P, bt, NULL);
}

const real *model_self_weights(const Workspace *ws, int layer)
{
    return layer >= 0 && layer < ws->dims.sa_layers ? ws->enc.sa.layer[layer].mean : NULL;
}

/* The decoder rows each step computes: with targets sorted longest first (see
 * batch_sort_by_target), step i needs only the sentences longer than i, a prefix of the
 * batch; otherwise every row. step_len gives the attention those rows' source lengths
 * and 0 to the others, which the attention kernels then skip. The decoder's buffers
 * hold only these rows, step after step (step_row), and the states likewise by block
 * (state_row: block 0 is s_0 of all B sentences, block k > 0 the rows step k-1 wrote). */
static void plan_active_rows(Workspace *ws, const Batch *bt)
{
    const int B = ws->B, T = ws->T;
    const int sorted = sorted_by_target(bt);
    ws->step_row[0] = 0;
    ws->state_row[0] = 0;
    for (int i = 0; i < T; i++) {
        int Bi = B;
        if (sorted)
            for (Bi = 0; Bi < B && bt->tgt_len[Bi] > i;)
                Bi++;
        ws->active[i] = Bi;
        ws->step_row[i + 1] = ws->step_row[i] + Bi;
        ws->state_row[i + 1] = B + ws->step_row[i];
        for (int b = 0; b < B; b++)
            ws->step_len[(size_t)i * B + b] = b < Bi ? bt->src_len[b] : 0;
    }
    assert(ws->step_row[T] == ws->R);
}

void model_forward_to_readout(Workspace *ws, const Params *P, const Batch *bt)
{
    Pcg32 rng = ws->reg.rng; /* the masks of this pass, the same every time it runs */
    encode(ws, P, bt, &rng);
    const Dims *d = &ws->dims;
    const AttnDims ad = model_attn_dims(d);
    const int B = ws->B, S = ws->S, T = ws->T, N = ws->N;
    const int m = d->emb, d_h = model_annotation_width(d), p = d->dec_hidden;
    const int Q = attn_query_width(&ad);
    const int Gp = cell_gates(d->dec_cell) * p, Cp = cell_cache_width(d->dec_cell) * p;
    const int in_width = m + d_h, ro_width = p + d_h + m;
    const size_t SB = (size_t)S * B;
    assert(T > 0 && N > 0);

    /* ey_{i-1} of every step's rows into the first m columns of dec_in; then the ey
     * part of the decoder's input projection for all steps at once:
     * dec_xg (R, Gp) = ey (R, m) . W_i[:, :m]^T + b_i */
    plan_active_rows(ws, bt);
    const int hard = hard_contexts(ws);
    if (hard)
        hard_plan(ws);
    const int R = ws->R;
    for (int i = 0; i < T; i++)
        embedding_forward(ws->dec_in + (size_t)ws->step_row[i] * in_width, in_width, P->E_y,
                          bt->tgt_in + (size_t)i * B, ws->active[i], m);
    if (ws->reg.embedding_dropout > 0)
        dropout_forward(ws->dec_in, in_width, ws->mask_y, R, m, ws->reg.embedding_dropout, &rng);
    matmul(CblasNoTrans, CblasTrans, R, Gp, m, 1, ws->dec_in, in_width, P->dec.W_i, in_width, 0,
           ws->dec_xg, Gp);
    for (size_t r = 0; r < (size_t)R; r++)
        for (int k = 0; k < Gp; k++)
            ws->dec_xg[r * Gp + k] += P->dec.b_i[k];

    for (int i = 0; i < T; i++) {
        /* Only the first Bi rows: with the batch sorted by target length, the others have
         * ended, and nothing real depends on their further steps. */
        const int Bi = ws->active[i];
        const int *len = ws->step_len + (size_t)i * B;
        const size_t row = (size_t)ws->step_row[i], block = (size_t)ws->state_row[i];
        const int block_rows = ws->state_row[i + 1] - ws->state_row[i];
        const real *s_prev = ws->states + block * p;
        real *q = ws->query ? ws->query + block * Q : NULL; /* laid out as s_prev, for dW */
        real *c = ws->dec_in + row * in_width + m;
        real *xg = ws->dec_xg + row * Gp;
        real *s_next = ws->states + (size_t)ws->state_row[i + 1] * p;
        AttnStep step = {c, in_width, ws->alpha ? ws->alpha_heads + (size_t)i * ad.heads * SB : NULL,
                         ws->alpha ? ws->alpha + (size_t)i * SB : NULL, ws->scores, q,
                         model_att_pre_step(ws, i)};
        const AttnChoice choice = hard ? hard_step_choice(ws, i) : (AttnChoice){0};
        const AttnInput in = {s_prev, ws->enc.H,     ws->keys, ws->enc.summary, len,
                              S,      B,             Bi,       hard ? &choice : NULL};
        attn_step_forward(&step, &P->att, &ad, &in);
        /* xg (Bi, Gp) += c_i (Bi, d_h) . W_i[:, m:]^T (d_h, Gp) */
        matmul(CblasNoTrans, CblasTrans, Bi, Gp, d_h, 1, c, in_width, P->dec.W_i + m, in_width,
               1, xg, Gp);
        /* the LSTM's cell state comes from the previous step's cache (before step 0,
         * cache0, or 0 without it) */
        const real *cache_prev = i ? ws->dec_cache + (size_t)ws->step_row[i - 1] * Cp : ws->cache0;
        cell_step_forward(d->dec_cell, s_next, ws->dec_cache + row * Cp, xg, Gp, s_prev, p,
                          cache_prev, P->dec.W_h, P->dec.b_h, NULL, i, Bi, p);
        /* rows of s_prev's block this step leaves out get zero queries, so that the
         * product over all blocks (dW_a, dW_q) meets only finite numbers there */
        if (q && Bi < block_rows)
            memset(q + (size_t)Bi * Q, 0, sizeof(real) * (size_t)(block_rows - Bi) * Q);
    }

    /* Readout and output layer over the real target positions only. */
    int k = 0;
    for (int i = 0; i < T; i++)
        for (int b = 0; b < ws->active[i]; b++) {
            if (i >= bt->tgt_len[b])
                continue;
            /* step i's row b: s_i is row B + row of the states (state_row[i + 1]) */
            size_t row = (size_t)ws->step_row[i] + b;
            real *x = ws->ro_in + (size_t)k * ro_width;
            memcpy(x, ws->states + (row + B) * p, sizeof(real) * p);
            memcpy(x + p, ws->dec_in + row * in_width + m, sizeof(real) * d_h);
            memcpy(x + p + d_h, ws->dec_in + row * in_width, sizeof(real) * m);
            ws->real_rows[k] = (int)row;
            ws->targets[k] = bt->tgt_out[(size_t)i * B + b];
            if (hard) {
                ws->tok_sentence[k] = b;
                ws->tok_step[k] = i;
            }
            k++;
        }
    assert(k == N);
    linear_forward(ws->ro_out, ws->ro_in, P->W_t, P->b_t, N, ro_width, d->readout);
    tanh_forward(ws->ro_out, ws->ro_out, (size_t)N * d->readout);
    if (ws->reg.readout_dropout > 0) {
        memcpy(ws->ro_dropped, ws->ro_out, sizeof(real) * (size_t)N * d->readout);
        dropout_forward(ws->ro_dropped, d->readout, ws->mask_t, N, d->readout,
                        ws->reg.readout_dropout, &rng);
    }
}

/* What the output layer reads: t_i, after dropout if there is any. */
static const real *readout_used(const Workspace *ws)
{
    return ws->reg.readout_dropout > 0 ? ws->ro_dropped : ws->ro_out;
}

double model_output_layer(Params *G, Workspace *ws, const Params *P)
{
    const int N = ws->N, readout = ws->dims.readout, Vy = ws->dims.tgt_vocab;
    const real smoothing = (real)ws->reg.label_smoothing;
    const real *ro = readout_used(ws);
    double loss = 0;
    if (G)
        memset(ws->d_ro_out, 0, sizeof(real) * (size_t)N * readout);
    for (int k0 = 0; k0 < N; k0 += ws->out_chunk_rows) {
        const int rows = N - k0 < ws->out_chunk_rows ? N - k0 : ws->out_chunk_rows;
        const real *t = ro + (size_t)k0 * readout;
        const int *y = ws->targets + k0;
        /* o (rows, V) = t W_o^T + b_o */
        linear_forward(ws->logits, t, P->W_o, P->b_o, rows, readout, Vy);
        loss += softmax_xent_forward(ws->logits, y, smoothing,
                                     hard_contexts(ws) ? ws->tok_nll + k0 : NULL, rows, Vy);
        if (G) {
            /* loss = sum_k xent(o_k, y_k) / N; the gradient replaces the softmax */
            softmax_xent_backward(ws->logits, ws->logits, y, smoothing, (real)1 / N, rows, Vy);
            linear_backward(ws->d_ro_out + (size_t)k0 * readout, G->W_o, G->b_o, ws->logits,
                            t, P->W_o, rows, readout, Vy);
        }
    }
    return loss;
}

double model_pass_loss(Workspace *ws, const Batch *bt, double ce_sum)
{
    return hard_contexts(ws) ? hard_objective(ws, bt, ce_sum) : ce_sum / ws->N;
}

double model_forward(Workspace *ws, const Params *P, const Batch *bt)
{
    model_forward_to_readout(ws, P, bt);
    return model_pass_loss(ws, bt, model_output_layer(NULL, ws, P));
}
