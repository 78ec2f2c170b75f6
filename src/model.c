/* model.c: RNNsearch (MODEL.md) over a batch: parameter layout and init, encoder,
 * attention decoder with teacher forcing, readout and loss, and their backward pass.
 * Products over many positions are one gemm each; only the recurrences loop over time.
 * Never allocates after model_workspace_init. */
#include "model.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "ops.h"

/* ---- parameters ------------------------------------------------------------------ */

/* Carves every tensor, or (without with_embeddings) every tensor but E_x and E_y. */
static size_t carve(Params *p, real *base, const Dims *d, int with_embeddings)
{
    const int m = d->emb, n = d->enc_hidden, dp = d->dec_hidden, a = d->attn;
    const int readout = d->readout;
    size_t offset = 0;
    p->n_tensors = 0;
    /* Every tensor is listed once, here; the order is the checkpoint and init order. */
#define CARVE(field, name_, rows_, cols_, bias_)                                       \
    do {                                                                               \
        assert(p->n_tensors < MODEL_MAX_TENSORS);                                      \
        p->field = base ? base + offset : NULL;                                        \
        p->tensors[p->n_tensors++] = (Tensor){name_, p->field, rows_, cols_, bias_};   \
        offset += (size_t)(rows_) * (size_t)(cols_);                                   \
    } while (0)
    p->E_x = p->E_y = NULL;
    if (with_embeddings) {
        CARVE(E_x, "E_x", d->src_vocab, m, 0);
        CARVE(E_y, "E_y", d->tgt_vocab, m, 0);
    }
    CARVE(enc_fwd.W_i, "enc_fwd.W_i", 3 * n, m, 0);
    CARVE(enc_fwd.W_h, "enc_fwd.W_h", 3 * n, n, 0);
    CARVE(enc_fwd.b_i, "enc_fwd.b_i", 3 * n, 1, 1);
    CARVE(enc_fwd.b_h, "enc_fwd.b_h", 3 * n, 1, 1);
    CARVE(enc_bwd.W_i, "enc_bwd.W_i", 3 * n, m, 0);
    CARVE(enc_bwd.W_h, "enc_bwd.W_h", 3 * n, n, 0);
    CARVE(enc_bwd.b_i, "enc_bwd.b_i", 3 * n, 1, 1);
    CARVE(enc_bwd.b_h, "enc_bwd.b_h", 3 * n, 1, 1);
    CARVE(W_s, "W_s", dp, n, 0);
    CARVE(b_s, "b_s", dp, 1, 1);
    CARVE(W_a, "W_a", a, dp, 0);
    CARVE(U_a, "U_a", a, 2 * n, 0);
    CARVE(b_a, "b_a", a, 1, 1);
    CARVE(v_a, "v_a", a, 1, 0);
    CARVE(dec.W_i, "dec.W_i", 3 * dp, m + 2 * n, 0);
    CARVE(dec.W_h, "dec.W_h", 3 * dp, dp, 0);
    CARVE(dec.b_i, "dec.b_i", 3 * dp, 1, 1);
    CARVE(dec.b_h, "dec.b_h", 3 * dp, 1, 1);
    CARVE(W_t, "W_t", readout, dp + 2 * n + m, 0);
    CARVE(b_t, "b_t", readout, 1, 1);
    CARVE(W_o, "W_o", d->tgt_vocab, readout, 0);
    CARVE(b_o, "b_o", d->tgt_vocab, 1, 1);
#undef CARVE
    return offset;
}

size_t params_carve(Params *p, real *base, const Dims *d)
{
    return carve(p, base, d, 1);
}

size_t params_carve_dense(Params *p, real *base, const Dims *d)
{
    return carve(p, base, d, 0);
}

void params_alloc(Params *p, const Dims *d)
{
    *p = (Params){0};
    size_t n = params_carve(p, NULL, d);
    p->mem = xcalloc(n, sizeof(real));
    p->n = n;
    params_carve(p, p->mem, d);
}

void params_free(Params *p)
{
    free(p->mem);
    *p = (Params){0};
}

void params_init(Params *p, Pcg32 *rng, float scale)
{
    for (int t = 0; t < p->n_tensors; t++) {
        const Tensor *x = &p->tensors[t];
        size_t count = (size_t)x->rows * x->cols;
        for (size_t k = 0; k < count; k++)
            x->data[k] = x->is_bias ? 0 : (real)pcg32_uniform(rng, -scale, scale);
    }
}

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
    const size_t readout = d->readout, Vy = d->tgt_vocab;
    const size_t SB = (size_t)S * B, TB = (size_t)T * B;
    const size_t ro_width = p + 2 * n + m, in_width = m + 2 * n;
    Arena *ar = &ws->arena;
    arena_reset(ar);
    ws->B = B, ws->S = S, ws->T = T, ws->N = N, ws->R = R;
    /* decoder buffers by step rows (R) or by state blocks (at most B + R rows) */
    const size_t rows = (size_t)R, state_rows = (size_t)B + R;
#define TAKE(field, count) (ws->field = arena_alloc(ar, (count), sizeof(*ws->field)))
    TAKE(ex, SB * m);
    TAKE(xg_fwd, SB * 3 * n);
    TAKE(xg_bwd, SB * 3 * n);
    TAKE(gru_fwd, SB * 4 * n);
    TAKE(gru_bwd, SB * 4 * n);
    TAKE(H, SB * 2 * n);
    TAKE(keys, SB * a);
    TAKE(states, state_rows * p);
    TAKE(dec_in, rows * in_width);
    TAKE(dec_xg, rows * 3 * p);
    TAKE(dec_gru, rows * 4 * p);
    TAKE(query, state_rows * a);
    TAKE(att_pre, (ws->keep_att_pre ? TB : (size_t)B) * S * a);
    TAKE(scores, SB);
    TAKE(alpha, TB * S);
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
    /* the output layer runs over chunks of rows: its (N, V_y) logits would be the
     * largest activation of all (41 MiB at benchmark size L, batch 32) */
    ws->out_chunk_rows = N < ws->max_out_chunk_rows ? N : ws->max_out_chunk_rows;
    TAKE(logits, (size_t)ws->out_chunk_rows * Vy);
    if (ws->with_backward) {
        size_t enc_hg = SB * 3 * n, dec_hg = state_rows * 3 * p;
        const size_t readout_end = ar->used;
        ar->used = readout_start;
        TAKE(d_hg, enc_hg > dec_hg ? enc_hg : dec_hg);
        if (ar->used < readout_end)
            ar->used = readout_end;
        TAKE(d_ro_out, (size_t)N * readout);
        /* Gradients that overwrite what only forward reads share its memory: the
         * readout's input, the input projections (the GRU caches hold what backward
         * needs), the source embeddings (read for dW_i first) -- 32 MiB at size L. */
        ws->d_ro_in = ws->ro_in;
        TAKE(d_states, state_rows * p);
        TAKE(d_dec_in, rows * in_width);
        ws->d_dec_xg = ws->dec_xg;
        TAKE(d_query, state_rows * a);
        TAKE(d_carry, (size_t)2 * B * n);
        TAKE(d_alpha, SB);
        TAKE(d_scores, SB);
        TAKE(d_keys, SB * a);
        TAKE(d_H, SB * 2 * n);
        ws->d_xg_fwd = ws->xg_fwd;
        ws->d_xg_bwd = ws->xg_bwd;
        ws->d_ex = ws->ex;
        TAKE(d_s0, (size_t)B * p);
    }
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

/* ---- forward --------------------------------------------------------------------- */

/* Step i's tanh(W_a s_{i-1} + U_a h_j + b_a) (S*B, a): its own block when every step's is
 * kept, else the one block that backward fills again. */
static real *att_pre_step(const Workspace *ws, int i)
{
    return ws->att_pre + (ws->keep_att_pre ? (size_t)i : 0) * ws->S * ws->B * ws->dims.attn;
}

void model_encode(Workspace *ws, const Params *P, const Batch *bt)
{
    const Dims *d = &ws->dims;
    const int B = bt->batch_size, S = bt->src_steps, T = bt->tgt_steps;
    const int m = d->emb, n = d->enc_hidden, p = d->dec_hidden, a = d->attn;
    assert(B <= ws->max_batch && S <= ws->max_src_steps && T <= ws->max_tgt_steps);
    /* Sorted by target length, the decoder computes only the real target positions. */
    workspace_carve(ws, B, S, T, bt->n_tgt_tokens,
                    sorted_by_target(bt) ? bt->n_tgt_tokens : T * B);
    const int SB = S * B;

    embedding_forward(ws->ex, m, P->E_x, bt->src, SB, m);
    /* Input projections of both directions for every position: one gemm each. */
    linear_forward(ws->xg_fwd, ws->ex, P->enc_fwd.W_i, P->enc_fwd.b_i, SB, m, 3 * n);
    linear_forward(ws->xg_bwd, ws->ex, P->enc_bwd.W_i, P->enc_bwd.b_i, SB, m, 3 * n);
    /* Each direction writes its half of H = [fwd_h ; bwd_h] (row stride 2n). */
    gru_sequence_forward(ws->H, 2 * n, ws->gru_fwd, ws->xg_fwd, P->enc_fwd.W_h,
                         P->enc_fwd.b_h, bt->src_len, S, B, n, 0);
    gru_sequence_forward(ws->H + n, 2 * n, ws->gru_bwd, ws->xg_bwd, P->enc_bwd.W_h,
                         P->enc_bwd.b_h, bt->src_len, S, B, n, 1);
    /* U_a h_j + b_a does not depend on the decoder step: once per batch. */
    linear_forward(ws->keys, ws->H, P->U_a, P->b_a, SB, 2 * n, a);
    /* s_0 (B, p) = tanh(bwd_h_1 (B, n; rows of H's position 0, stride 2n) . W_s^T + b_s) */
    real *s0 = ws->states;
    matmul(CblasNoTrans, CblasTrans, B, p, n,
               1, ws->H + n, 2 * n, P->W_s, n, 0, s0, p);
    for (int b = 0; b < B; b++)
        for (int k = 0; k < p; k++)
            s0[(size_t)b * p + k] = r_tanh(s0[(size_t)b * p + k] + P->b_s[k]);
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

/* Everything up to the readout t_i (ws->ro_out) of every real target position. */
static void forward_to_readout(Workspace *ws, const Params *P, const Batch *bt)
{
    model_encode(ws, P, bt);
    const Dims *d = &ws->dims;
    const int B = ws->B, S = ws->S, T = ws->T, N = ws->N;
    const int m = d->emb, n = d->enc_hidden, p = d->dec_hidden, a = d->attn;
    const int in_width = m + 2 * n, ro_width = p + 2 * n + m;
    const size_t SB = (size_t)S * B;
    assert(T > 0 && N > 0);

    /* ey_{i-1} of every step's rows into the first m columns of dec_in; then the ey
     * part of the decoder's input projection for all steps at once:
     * dec_xg (R, 3p) = ey (R, m) . W_i[:, :m]^T + b_i */
    plan_active_rows(ws, bt);
    const int R = ws->R;
    for (int i = 0; i < T; i++)
        embedding_forward(ws->dec_in + (size_t)ws->step_row[i] * in_width, in_width, P->E_y,
                          bt->tgt_in + (size_t)i * B, ws->active[i], m);
    matmul(CblasNoTrans, CblasTrans, R, 3 * p, m,
               1, ws->dec_in, in_width, P->dec.W_i, in_width, 0, ws->dec_xg, 3 * p);
    for (size_t r = 0; r < (size_t)R; r++)
        for (int k = 0; k < 3 * p; k++)
            ws->dec_xg[r * 3 * p + k] += P->dec.b_i[k];

    for (int i = 0; i < T; i++) {
        /* Only the first Bi rows: with the batch sorted by target length, the others have
         * ended, and nothing real depends on their further steps. */
        const int Bi = ws->active[i];
        const int *len = ws->step_len + (size_t)i * B;
        const size_t row = (size_t)ws->step_row[i], block = (size_t)ws->state_row[i];
        const int block_rows = ws->state_row[i + 1] - ws->state_row[i];
        const real *s_prev = ws->states + block * p;
        real *q = ws->query + block * a; /* laid out as s_prev, for dW_a below */
        real *pre = att_pre_step(ws, i);
        real *alpha = ws->alpha + (size_t)i * SB;
        real *c = ws->dec_in + row * in_width + m;
        real *xg = ws->dec_xg + row * 3 * p;
        real *s_next = ws->states + (size_t)ws->state_row[i + 1] * p;
        /* q (Bi, a) = s_{i-1} (Bi, p) . W_a^T (p, a) */
        matmul(CblasNoTrans, CblasTrans, Bi, a, p,
                   1, s_prev, p, P->W_a, p, 0, q, a);
        attn_additive_scores_forward(ws->scores, pre, q, ws->keys, P->v_a, len, S, B, a);
        attn_softmax_forward(alpha, ws->scores, len, S, B);
        attn_context_forward(c, in_width, alpha, ws->H, 2 * n, len, S, B, 2 * n);
        /* xg (Bi, 3p) += c_i (Bi, 2n) . W_i[:, m:]^T (2n, 3p) */
        matmul(CblasNoTrans, CblasTrans, Bi, 3 * p, 2 * n,
                   1, c, in_width, P->dec.W_i + m, in_width, 1, xg, 3 * p);
        gru_step_forward(s_next, ws->dec_gru + row * 4 * p, xg, 3 * p, s_prev, p,
                         P->dec.W_h, P->dec.b_h, NULL, i, Bi, p);
        /* rows of s_prev's block this step leaves out get zero queries, so that the
         * product over all blocks (dW_a) meets only finite numbers there */
        if (Bi < block_rows)
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
}

/* The output layer and the loss, chunk by chunk; returns the summed cross-entropy. With
 * G, also its backward: dW_o and db_o into G, d_ro_out (N, l) overwritten. */
static double output_layer(Params *G, Workspace *ws, const Params *P)
{
    const int N = ws->N, readout = ws->dims.readout, Vy = ws->dims.tgt_vocab;
    double loss = 0;
    if (G)
        memset(ws->d_ro_out, 0, sizeof(real) * (size_t)N * readout);
    for (int k0 = 0; k0 < N; k0 += ws->out_chunk_rows) {
        const int rows = N - k0 < ws->out_chunk_rows ? N - k0 : ws->out_chunk_rows;
        const real *t = ws->ro_out + (size_t)k0 * readout;
        const int *y = ws->targets + k0;
        /* o (rows, V) = t W_o^T + b_o */
        linear_forward(ws->logits, t, P->W_o, P->b_o, rows, readout, Vy);
        loss += softmax_xent_forward(ws->logits, y, rows, Vy);
        if (G) {
            /* loss = sum_k xent(o_k, y_k) / N; the gradient replaces the softmax */
            softmax_xent_backward(ws->logits, ws->logits, y, (real)1 / N, rows, Vy);
            linear_backward(ws->d_ro_out + (size_t)k0 * readout, G->W_o, G->b_o, ws->logits,
                            t, P->W_o, rows, readout, Vy);
        }
    }
    return loss;
}

double model_forward(Workspace *ws, const Params *P, const Batch *bt)
{
    forward_to_readout(ws, P, bt);
    return output_layer(NULL, ws, P) / ws->N;
}

/* ---- backward -------------------------------------------------------------------- */


/* Backward from d_ro_out (dloss/dt, as output_layer leaves it). */
static void backward_from_readout(Params *G, RowGrad *dE_x, RowGrad *dE_y, Workspace *ws,
                                  const Params *P, const Batch *bt)
{
    const Dims *d = &ws->dims;
    const int B = ws->B, S = ws->S, T = ws->T, N = ws->N;
    const int m = d->emb, n = d->enc_hidden, p = d->dec_hidden, a = d->attn;
    const int readout = d->readout;
    const int in_width = m + 2 * n, ro_width = p + 2 * n + m;
    const size_t SB = (size_t)S * B, R = (size_t)ws->R;
    const size_t Q = (size_t)ws->state_row[T]; /* rows of the blocks some step reads */
    assert(ws->with_backward);

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

    memset(ws->d_query, 0, sizeof(real) * Q * a);
    memset(ws->d_keys, 0, sizeof(real) * SB * a);
    memset(ws->d_H, 0, sizeof(real) * SB * 2 * n);
    for (int i = T - 1; i >= 0; i--) {
        const int Bi = ws->active[i];
        const int *len = ws->step_len + (size_t)i * B;
        const size_t row = (size_t)ws->step_row[i], block = (size_t)ws->state_row[i];
        const int block_rows = ws->state_row[i + 1] - ws->state_row[i];
        const real *s_prev = ws->states + block * p;
        real *ds_prev = ws->d_states + block * p;
        real *dxg = ws->d_dec_xg + row * 3 * p;
        real *dhg = ws->d_hg + block * 3 * p; /* laid out as s_prev, for dW_h below */
        real *dc = ws->d_dec_in + row * in_width + m;
        real *dq = ws->d_query + block * a;
        const real *alpha = ws->alpha + (size_t)i * SB;
        /* forward: s_i = GRU(xg_i, s_{i-1}); d_states block i+1 is complete here */
        gru_step_backward(ds_prev, dxg, 3 * p, dhg, NULL, NULL,
                          ws->d_states + (size_t)ws->state_row[i + 1] * p, p,
                          ws->dec_gru + row * 4 * p, s_prev, p, P->dec.W_h, NULL, i, Bi, p);
        if (Bi < block_rows) /* rows of the block this step left out: no gradient */
            memset(dhg + (size_t)Bi * 3 * p, 0, sizeof(real) * (size_t)(block_rows - Bi) * 3 * p);
        /* forward: xg_i += c_i W_i[:, m:]^T, so dc_i (Bi, 2n) += dxg (Bi, 3p) . W_i[:, m:] */
        matmul(CblasNoTrans, CblasNoTrans, Bi, 2 * n, 3 * p,
                   1, dxg, 3 * p, P->dec.W_i + m, in_width, 1, dc, in_width);
        attn_context_backward(ws->d_alpha, ws->d_H, dc, in_width, alpha, ws->H, 2 * n,
                              len, S, B, 2 * n);
        attn_softmax_backward(ws->d_scores, ws->d_alpha, alpha, len, S, B);
        real *pre = att_pre_step(ws, i);
        if (!ws->keep_att_pre) /* the same arithmetic as forward: the same numbers */
            attn_additive_scores_forward(ws->scores, pre, ws->query + block * a,
                                         ws->keys, P->v_a, len, S, B, a);
        attn_additive_scores_backward(dq, ws->d_keys, G->v_a, ws->d_scores, pre, P->v_a, len,
                                      S, B, a);
        /* forward: q = s_{i-1} W_a^T, so ds_{i-1} (Bi, p) += dq (Bi, a) . W_a (a, p) */
        matmul(CblasNoTrans, CblasNoTrans, Bi, p, a,
                   1, dq, a, P->W_a, p, 1, ds_prev, p);
    }
    /* forward: hg_i = s_{i-1} W_h^T + b_h, so dW_h (3p, p) += dhg^T (3p, Q) . s_{i-1}
     * (Q, p), all steps at once (rows left out are zero in dhg) */
    matmul(CblasTrans, CblasNoTrans, 3 * p, p, (int)Q,
               1, ws->d_hg, 3 * p, ws->states, p, 1, G->dec.W_h, p);
    column_sums_add(G->dec.b_h, ws->d_hg, (int)Q, 3 * p, 3 * p);
    /* dW_a (a, p) += dq^T (a, Q) . s_{i-1} (Q, p), all steps at once */
    matmul(CblasTrans, CblasNoTrans, a, p, (int)Q,
               1, ws->d_query, a, ws->states, p, 1, G->W_a, p);
    /* forward: dec_xg = [ey ; c] W_i^T + b_i, so
     * dW_i (3p, m+2n) += dxg^T (3p, R) . [ey ; c] (R, m+2n) */
    matmul(CblasTrans, CblasNoTrans, 3 * p, in_width, (int)R,
               1, ws->d_dec_xg, 3 * p, ws->dec_in, in_width, 1, G->dec.W_i, in_width);
    column_sums_add(G->dec.b_i, ws->d_dec_xg, (int)R, 3 * p, 3 * p);
    /* dey (R, m) += dxg (R, 3p) . W_i[:, :m] (3p, m) */
    matmul(CblasNoTrans, CblasNoTrans, (int)R, m, 3 * p,
               1, ws->d_dec_xg, 3 * p, P->dec.W_i, in_width, 1, ws->d_dec_in, in_width);
    for (int i = 0; i < T; i++) {
        const real *dey = ws->d_dec_in + (size_t)ws->step_row[i] * in_width;
        const int *ids = bt->tgt_in + (size_t)i * B;
        if (dE_y)
            rowgrad_add(dE_y, dey, in_width, ids, TOK_PAD, ws->active[i]);
        else
            embedding_backward(G->E_y, dey, in_width, ids, TOK_PAD, ws->active[i], m);
    }

    /* forward: keys = H U_a^T + b_a */
    linear_backward(ws->d_H, G->U_a, G->b_a, ws->d_keys, ws->H, P->U_a, (int)SB, 2 * n, a);
    /* forward: s_0 = tanh(bwd_h_1 W_s^T + b_s) */
    tanh_backward(ws->d_s0, ws->d_states, ws->states, (size_t)B * p);
    /* dW_s (p, n) += ds0^T (p, B) . bwd_h_1 (B, n) */
    matmul(CblasTrans, CblasNoTrans, p, n, B,
               1, ws->d_s0, p, ws->H + n, 2 * n, 1, G->W_s, n);
    column_sums_add(G->b_s, ws->d_s0, B, p, p);
    /* dbwd_h_1 (B, n) += ds0 (B, p) . W_s (p, n) */
    matmul(CblasNoTrans, CblasNoTrans, B, n, p,
               1, ws->d_s0, p, P->W_s, n, 1, ws->d_H + n, 2 * n);

    gru_sequence_backward(ws->d_xg_bwd, G->enc_bwd.W_h, G->enc_bwd.b_h, ws->d_carry, ws->d_hg,
                          ws->d_H + n, ws->H + n, 2 * n, ws->gru_bwd, P->enc_bwd.W_h,
                          bt->src_len, S, B, n, 1);
    gru_sequence_backward(ws->d_xg_fwd, G->enc_fwd.W_h, G->enc_fwd.b_h, ws->d_carry, ws->d_hg,
                          ws->d_H, ws->H, 2 * n, ws->gru_fwd, P->enc_fwd.W_h,
                          bt->src_len, S, B, n, 0);
    /* forward: xg = ex W_i^T + b_i per direction; the weight gradients read ex, and
     * then d_ex overwrites it: d_ex (S*B, m) = dxg_fwd . W_i_fwd + dxg_bwd . W_i_bwd */
    linear_backward(NULL, G->enc_fwd.W_i, G->enc_fwd.b_i, ws->d_xg_fwd, ws->ex,
                    P->enc_fwd.W_i, (int)SB, m, 3 * n);
    linear_backward(NULL, G->enc_bwd.W_i, G->enc_bwd.b_i, ws->d_xg_bwd, ws->ex,
                    P->enc_bwd.W_i, (int)SB, m, 3 * n);
    matmul(CblasNoTrans, CblasNoTrans, (int)SB, m, 3 * n,
           1, ws->d_xg_fwd, 3 * n, P->enc_fwd.W_i, m, 0, ws->d_ex, m);
    matmul(CblasNoTrans, CblasNoTrans, (int)SB, m, 3 * n,
           1, ws->d_xg_bwd, 3 * n, P->enc_bwd.W_i, m, 1, ws->d_ex, m);
    if (dE_x)
        rowgrad_add(dE_x, ws->d_ex, m, bt->src, TOK_PAD, (int)SB);
    else
        embedding_backward(G->E_x, ws->d_ex, m, bt->src, TOK_PAD, (int)SB, m);
}

void model_backward_rows(Params *G, RowGrad *dE_x, RowGrad *dE_y, Workspace *ws,
                         const Params *P, const Batch *bt)
{
    assert(ws->with_backward);
    output_layer(G, ws, P); /* the logits of forward were not kept: computed again */
    backward_from_readout(G, dE_x, dE_y, ws, P, bt);
}

void model_backward(Params *G, Workspace *ws, const Params *P, const Batch *bt)
{
    model_backward_rows(G, NULL, NULL, ws, P, bt);
}

double model_forward_backward(Params *G, RowGrad *dE_x, RowGrad *dE_y, Workspace *ws,
                              const Params *P, const Batch *bt)
{
    assert(ws->with_backward);
    forward_to_readout(ws, P, bt);
    double loss = output_layer(G, ws, P); /* the output layer's backward with its forward */
    backward_from_readout(G, dE_x, dE_y, ws, P, bt);
    return loss / ws->N;
}
