/* model.c: RNNsearch (MODEL.md) over a batch: the workspace, the encoder (stacked
 * bidirectional layers of any cell), the attention decoder with teacher forcing for
 * every score variant, the readout and the loss, with training's dropout and label
 * smoothing. Backward is model_backward.c's. Products over many positions are one gemm
 * each; only the recurrences loop over time. Never allocates after
 * model_workspace_init. */
#include "nn/model.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/attention.h"
#include "nn/model_pass.h"
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

/* Points every buffer into the arena for a batch of (B, S, T, N) whose decoder computes
 * R rows over all steps; with a NULL arena base this only measures. */
static void workspace_carve(Workspace *ws, int B, int S, int T, int N, int R)
{
    const Dims *d = &ws->dims;
    const size_t m = d->emb, n = d->enc_hidden, p = d->dec_hidden, a = d->attn;
    const size_t readout = d->readout, Vy = d->tgt_vocab, K = model_key_width(d);
    const size_t Ge = cell_gates(d->enc_cell), Ce = cell_cache_width(d->enc_cell);
    const size_t Gd = cell_gates(d->dec_cell), Cd = cell_cache_width(d->dec_cell);
    const int L = d->enc_layers, attends = d->score != SCORE_NONE;
    const int queries = d->score == SCORE_ADDITIVE || d->score == SCORE_SCALED_DOT;
    const size_t SB = (size_t)S * B, TB = (size_t)T * B;
    const size_t ro_width = p + 2 * n + m, in_width = m + 2 * n;
    Arena *ar = &ws->arena;
    arena_reset(ar);
    ws->B = B, ws->S = S, ws->T = T, ws->N = N, ws->R = R;
    /* decoder buffers by step rows (R) or by state blocks (at most B + R rows) */
    const size_t rows = (size_t)R, state_rows = (size_t)B + R;
#define TAKE(field, count) (ws->field = arena_alloc(ar, (count), sizeof(*ws->field)))
#define TAKE_IF(cond, field, count) (ws->field = (cond) ? arena_alloc(ar, (count), sizeof(*ws->field)) : NULL)
    TAKE(ex, SB * m);
    TAKE_IF(ws->with_backward, mask_x, SB * m);
    for (int l = 0; l < L; l++) {
        TAKE(xg_fwd[l], SB * Ge * n);
        TAKE(xg_bwd[l], SB * Ge * n);
        TAKE(cache_fwd[l], SB * Ce * n);
        TAKE(cache_bwd[l], SB * Ce * n);
        TAKE(enc_out[l], SB * 2 * n);
    }
    ws->H = ws->enc_out[L - 1];
    /* dot attends with h_j itself */
    TAKE_IF(K > 0 && d->score != SCORE_DOT, keys, SB * K);
    if (d->score == SCORE_DOT)
        ws->keys = ws->H;
    TAKE_IF(!attends, fixed_context, (size_t)B * 2 * n);
    TAKE(states, state_rows * p);
    TAKE(dec_in, rows * in_width);
    TAKE_IF(ws->with_backward, mask_y, rows * m);
    TAKE(dec_xg, rows * Gd * p);
    TAKE(dec_cache, rows * Cd * p);
    TAKE_IF(queries, query, state_rows * a);
    TAKE_IF(d->score == SCORE_ADDITIVE, att_pre, (ws->keep_att_pre ? TB : (size_t)B) * S * a);
    TAKE(scores, SB);
    TAKE_IF(attends, alpha, TB * S);
    TAKE(active, (size_t)T);
    TAKE(step_row, (size_t)T + 1);
    TAKE(state_row, (size_t)T + 1);
    TAKE(step_len, TB);
    TAKE(real_rows, (size_t)N);
    TAKE(targets, (size_t)N);
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
        size_t enc_hg = SB * Ge * n, dec_hg = state_rows * Gd * p;
        const size_t readout_end = ar->used;
        ar->used = readout_start;
        TAKE(d_hg, enc_hg > dec_hg ? enc_hg : dec_hg);
        if (ar->used < readout_end)
            ar->used = readout_end;
        TAKE(d_ro_out, (size_t)N * readout);
        /* Gradients that overwrite what only forward reads share its memory: the
         * readout's input, the input projections (the cell caches hold what backward
         * needs), the source embeddings (read for dW_i first) -- 32 MiB at size L. */
        ws->d_ro_in = ws->ro_in;
        TAKE(d_states, state_rows * p);
        TAKE(d_dec_in, rows * in_width);
        ws->d_dec_xg = ws->dec_xg;
        TAKE_IF(queries, d_query, state_rows * a);
        TAKE_IF(d->dec_cell == CELL_LSTM, d_cell, (size_t)B * p);
        size_t carry = cell_sequence_scratch(d->enc_cell, B, (int)n);
        TAKE(d_carry, carry);
        TAKE_IF(attends, d_alpha, SB);
        TAKE_IF(attends, d_scores, SB);
        TAKE_IF(K > 0 && d->score != SCORE_DOT, d_keys, SB * K);
        TAKE(d_H, SB * 2 * n);
        TAKE_IF(L > 1, d_below, SB * 2 * n);
        TAKE_IF(!attends, d_fixed_context, (size_t)B * 2 * n);
        for (int l = 0; l < L; l++) {
            ws->d_xg_fwd[l] = ws->xg_fwd[l];
            ws->d_xg_bwd[l] = ws->xg_bwd[l];
        }
        ws->d_ex = ws->ex;
        TAKE(d_s0, (size_t)B * p);
    }
#undef TAKE_IF
#undef TAKE
}

void model_workspace_init(Workspace *ws, const Dims *d, int max_batch, int max_src_steps,
                          int max_tgt_steps, int with_backward)
{
    *ws = (Workspace){0};
    ws->dims = *d;
    ws->max_batch = max_batch;
    ws->max_src_steps = max_src_steps;
    ws->max_tgt_steps = max_tgt_steps;
    ws->with_backward = with_backward;
    size_t att_pre_all = (size_t)max_tgt_steps * max_src_steps * max_batch * d->attn;
    ws->keep_att_pre = with_backward && att_pre_all <= ATT_PRE_KEEP_FLOATS;
    int rows = (int)(OUTPUT_CHUNK_FLOATS / (size_t)d->tgt_vocab);
    ws->max_out_chunk_rows = rows > 0 ? rows : 1;
    /* Every buffer grows with B, S, T and N, so the largest batch bounds them all. */
    const int most = max_batch * max_tgt_steps;
    workspace_carve(ws, max_batch, max_src_steps, max_tgt_steps, most, most);
    size_t bytes = ws->arena.used;
    arena_init(&ws->arena, bytes);
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

/* ---- forward --------------------------------------------------------------------- */

/* Inverted dropout of x (rows, cols, row stride ld) in place: each value kept with
 * probability 1 - rate and then scaled by 1 / (1 - rate), so that the expected value is
 * unchanged and nothing needs scaling at test time. The factors go to mask (rows, cols)
 * for backward. */
static void dropout_forward(real *x, int ld, real *mask, int rows, int cols, double rate,
                            Pcg32 *rng)
{
    const real keep = (real)(1 / (1 - rate));
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++) {
            real f = pcg32_unit(rng) < rate ? 0 : keep;
            mask[(size_t)r * cols + k] = f;
            x[(size_t)r * ld + k] *= f;
        }
}

/* Step i's tanh(W_a s_{i-1} + U_a h_j + b_a) (S*B, a): its own block when every step's is
 * kept, else the one block that backward fills again. */
real *model_att_pre_step(const Workspace *ws, int i)
{
    return ws->att_pre + (ws->keep_att_pre ? (size_t)i : 0) * ws->S * ws->B * ws->dims.attn;
}

/* The encoder: layer after layer, each direction's input projection for every position
 * in one gemm, then the recurrences, writing their halves of enc_out (row stride 2n). */
static void encode_layers(Workspace *ws, const Params *P, const Batch *bt)
{
    const Dims *d = &ws->dims;
    const int S = ws->S, B = ws->B, SB = S * B, n = d->enc_hidden, Gn = cell_gates(d->enc_cell) * n;
    for (int l = 0; l < d->enc_layers; l++) {
        const real *in = l == 0 ? ws->ex : ws->enc_out[l - 1];
        const int in_width = l == 0 ? d->emb : 2 * n;
        linear_forward(ws->xg_fwd[l], in, P->enc_fwd[l].W_i, P->enc_fwd[l].b_i, SB, in_width, Gn);
        linear_forward(ws->xg_bwd[l], in, P->enc_bwd[l].W_i, P->enc_bwd[l].b_i, SB, in_width, Gn);
        cell_sequence_forward(d->enc_cell, ws->enc_out[l], 2 * n, ws->cache_fwd[l], ws->xg_fwd[l],
                              P->enc_fwd[l].W_h, P->enc_fwd[l].b_h, bt->src_len, S, B, n, 0);
        cell_sequence_forward(d->enc_cell, ws->enc_out[l] + n, 2 * n, ws->cache_bwd[l],
                              ws->xg_bwd[l], P->enc_bwd[l].W_h, P->enc_bwd[l].b_h, bt->src_len,
                              S, B, n, 1);
    }
}

/* The encoder with source-embedding dropout drawn from rng (NULL: none). */
static void encode(Workspace *ws, const Params *P, const Batch *bt, Pcg32 *rng)
{
    const Dims *d = &ws->dims;
    const int B = bt->batch_size, S = bt->src_steps, T = bt->tgt_steps;
    const int m = d->emb, n = d->enc_hidden, p = d->dec_hidden;
    assert(B <= ws->max_batch && S <= ws->max_src_steps && T <= ws->max_tgt_steps);
    /* Sorted by target length, the decoder computes only the real target positions. */
    workspace_carve(ws, B, S, T, bt->n_tgt_tokens,
                    sorted_by_target(bt) ? bt->n_tgt_tokens : T * B);
    const int SB = S * B;

    embedding_forward(ws->ex, m, P->E_x, bt->src, SB, m);
    if (rng && ws->reg.embedding_dropout > 0)
        dropout_forward(ws->ex, m, ws->mask_x, SB, m, ws->reg.embedding_dropout, rng);
    encode_layers(ws, P, bt);
    const real *H = ws->H;
    /* The source side of the scores does not depend on the decoder step: once per batch. */
    switch (d->score) {
    case SCORE_ADDITIVE: /* keys = U_a h_j + b_a */
        linear_forward(ws->keys, H, P->U_a, P->b_a, SB, 2 * n, d->attn);
        break;
    case SCORE_GENERAL: /* keys = W_g h_j */
        linear_forward(ws->keys, H, P->W_g, NULL, SB, 2 * n, p);
        break;
    case SCORE_SCALED_DOT: /* keys = W_k h_j */
        linear_forward(ws->keys, H, P->W_k, NULL, SB, 2 * n, d->attn);
        break;
    case SCORE_NONE: /* c = [fwd_h_S ; bwd_h_1], S each sentence's own length */
        for (int b = 0; b < B; b++) {
            real *c = ws->fixed_context + (size_t)b * 2 * n;
            memcpy(c, H + ((size_t)(bt->src_len[b] - 1) * B + b) * 2 * n, sizeof(real) * n);
            memcpy(c + n, H + (size_t)b * 2 * n + n, sizeof(real) * n);
        }
        break;
    case SCORE_DOT:
        break;
    }
    /* s_0 (B, p) = tanh(bwd_h_1 (B, n; rows of H's position 0, stride 2n) . W_s^T + b_s) */
    real *s0 = ws->states;
    matmul(CblasNoTrans, CblasTrans, B, p, n, 1, H + n, 2 * n, P->W_s, n, 0, s0, p);
    for (int b = 0; b < B; b++)
        for (int k = 0; k < p; k++)
            s0[(size_t)b * p + k] = r_tanh(s0[(size_t)b * p + k] + P->b_s[k]);
}

void model_encode(Workspace *ws, const Params *P, const Batch *bt)
{
    encode(ws, P, bt, NULL);
}

void model_attend(const Params *P, const Dims *d, real *c, int ld_c, real *alpha, real *scores,
                  real *query, real *pre, const real *s_prev, const real *H, const real *keys,
                  const real *fixed_context, const int *len, int S, int B, int rows)
{
    const int n = d->enc_hidden, p = d->dec_hidden, a = d->attn;
    assert(rows <= B);
    switch (d->score) {
    case SCORE_ADDITIVE:
        /* q (rows, a) = s_{i-1} (rows, p) . W_a^T (p, a); e_ij = v_a . tanh(q + keys_j) */
        matmul(CblasNoTrans, CblasTrans, rows, a, p, 1, s_prev, p, P->W_a, p, 0, query, a);
        attn_additive_scores_forward(scores, pre, query, keys, P->v_a, len, S, B, a);
        break;
    case SCORE_DOT: /* e_ij = s_{i-1} . h_j */
        attn_dot_scores_forward(scores, s_prev, keys, 2 * n, 1, len, S, B, 2 * n);
        break;
    case SCORE_GENERAL: /* e_ij = s_{i-1} . (W_g h_j) */
        attn_dot_scores_forward(scores, s_prev, keys, p, 1, len, S, B, p);
        break;
    case SCORE_SCALED_DOT: /* e_ij = (W_q s_{i-1}) . (W_k h_j) / sqrt(a) */
        matmul(CblasNoTrans, CblasTrans, rows, a, p, 1, s_prev, p, P->W_q, p, 0, query, a);
        attn_dot_scores_forward(scores, query, keys, a, (real)(1 / sqrt((double)a)), len, S, B, a);
        break;
    case SCORE_NONE: /* c_i is the sentence's fixed context; rows of length 0 are left out */
        for (int b = 0; b < B; b++)
            if (len[b] > 0)
                memcpy(c + (size_t)b * ld_c, fixed_context + (size_t)b * 2 * n,
                       sizeof(real) * 2 * n);
        return;
    }
    attn_softmax_forward(alpha, scores, len, S, B);
    attn_context_forward(c, ld_c, alpha, H, 2 * n, len, S, B, 2 * n);
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
    const int B = ws->B, S = ws->S, T = ws->T, N = ws->N;
    const int m = d->emb, n = d->enc_hidden, p = d->dec_hidden, a = d->attn;
    const int Gp = cell_gates(d->dec_cell) * p, Cp = cell_cache_width(d->dec_cell) * p;
    const int in_width = m + 2 * n, ro_width = p + 2 * n + m;
    const size_t SB = (size_t)S * B;
    assert(T > 0 && N > 0);

    /* ey_{i-1} of every step's rows into the first m columns of dec_in; then the ey
     * part of the decoder's input projection for all steps at once:
     * dec_xg (R, Gp) = ey (R, m) . W_i[:, :m]^T + b_i */
    plan_active_rows(ws, bt);
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
        real *q = ws->query ? ws->query + block * a : NULL; /* laid out as s_prev, for dW */
        real *c = ws->dec_in + row * in_width + m;
        real *xg = ws->dec_xg + row * Gp;
        real *s_next = ws->states + (size_t)ws->state_row[i + 1] * p;
        model_attend(P, d, c, in_width, ws->alpha ? ws->alpha + (size_t)i * SB : NULL,
                     ws->scores, q, ws->att_pre ? model_att_pre_step(ws, i) : NULL, s_prev, ws->H,
                     ws->keys, ws->fixed_context, len, S, B, Bi);
        /* xg (Bi, Gp) += c_i (Bi, 2n) . W_i[:, m:]^T (2n, Gp) */
        matmul(CblasNoTrans, CblasTrans, Bi, Gp, 2 * n, 1, c, in_width, P->dec.W_i + m, in_width,
               1, xg, Gp);
        /* the LSTM's cell state comes from the previous step's cache (0 before step 0) */
        const real *cache_prev = i ? ws->dec_cache + (size_t)ws->step_row[i - 1] * Cp : NULL;
        cell_step_forward(d->dec_cell, s_next, ws->dec_cache + row * Cp, xg, Gp, s_prev, p,
                          cache_prev, P->dec.W_h, P->dec.b_h, NULL, i, Bi, p);
        /* rows of s_prev's block this step leaves out get zero queries, so that the
         * product over all blocks (dW_a, dW_q) meets only finite numbers there */
        if (q && Bi < block_rows)
            memset(q + (size_t)Bi * a, 0, sizeof(real) * (size_t)(block_rows - Bi) * a);
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
            memcpy(x + p, ws->dec_in + row * in_width + m, sizeof(real) * 2 * n);
            memcpy(x + p + 2 * n, ws->dec_in + row * in_width, sizeof(real) * m);
            ws->real_rows[k] = (int)row;
            ws->targets[k] = bt->tgt_out[(size_t)i * B + b];
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
        loss += softmax_xent_forward(ws->logits, y, smoothing, rows, Vy);
        if (G) {
            /* loss = sum_k xent(o_k, y_k) / N; the gradient replaces the softmax */
            softmax_xent_backward(ws->logits, ws->logits, y, smoothing, (real)1 / N, rows, Vy);
            linear_backward(ws->d_ro_out + (size_t)k0 * readout, G->W_o, G->b_o, ws->logits,
                            t, P->W_o, rows, readout, Vy);
        }
    }
    return loss;
}

double model_forward(Workspace *ws, const Params *P, const Batch *bt)
{
    model_forward_to_readout(ws, P, bt);
    return model_output_layer(NULL, ws, P) / ws->N;
}
