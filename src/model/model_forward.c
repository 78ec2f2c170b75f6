/* model_forward.c: the model of model/MODEL.md over a batch, in four stages that
 * model_backward.c undoes in reverse order under the same names:
 *
 *   source_forward          the encoder (encoder.h: a text encoder embeds the source
 *                           itself), the keys, s_0 and c_0
 *   decoder_inputs_forward  which rows each step computes; ey_{i-1}; its share of the
 *                           decoder's input projection, for all steps at once
 *   decoder_steps_forward   step by step: the attention (attention.h), its context's
 *                           share of the projection, the cell
 *   readout_forward         t_i = tanh(W_t [s_i; c_i; ey_{i-1}] + b_t) at the real
 *                           target positions
 *
 * then the output layer and the loss (model_output_layer), with training's dropout and
 * label smoothing. Products over many positions are one gemm each; only the recurrences
 * loop over time. The workspace (workspace.c) is carved once per batch; nothing here
 * allocates. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "model/model_pass.h"
#include "nn/ops.h"

/* s_0 from the encoder's summary, and c_0 into the cache step 0 reads (lstm.h's cache
 * is i f g o c tanh(c): c_0 goes to the c slot; the others stay 0, nothing reads them). */
static void init_states_forward(Workspace *ws, const Params *P, int w0)
{
    const Dims *d = &ws->dims;
    if (!P->W_s) /* the Transformer decoder has no initial state */
        return;
    const InitState s0 = {ws->enc.init, ws->enc.ld_init, P->W_s, P->b_s, ws->B, d->dec_hidden, w0};
    init_state_forward(ws->dec.states, d->dec_hidden, &s0);
    if (ws->dec.cache0) {
        const int Cp = cell_cache_width(d->dec_cell) * d->dec_hidden;
        const int at = cell_state_offset(d->dec_cell) * d->dec_hidden;
        memset(ws->dec.cache0, 0, sizeof(real) * (size_t)ws->B * Cp);
        InitState c0 = s0;
        c0.W = P->W_c, c0.b = P->b_c;
        init_state_forward(ws->dec.cache0 + at, Cp, &c0);
    }
}

/* The source side, with dropout drawn from rng (NULL: none): the encoder's annotations
 * (from the batch's source as it is: token ids and E_x), the attention's keys, and s_0
 * (and c_0). Carves the workspace for the batch first. */
static void source_forward(Workspace *ws, const Params *P, const Batch *bt, Pcg32 *rng)
{
    const Dims *d = &ws->dims;
    const EncoderDims ed = model_encoder_dims(d);
    const AttnDims ad = model_attn_dims(d);
    const EncoderOps *encoder = encoder_ops(&ed);
    const int B = bt->batch_size, S = bt->src_steps, T = bt->tgt_steps;
    assert(B <= ws->max_batch && S <= ws->max_src_steps && T <= ws->max_tgt_steps);
    /* Sorted by target length, the recurrent decoder computes only the real target
     * positions; the Transformer's, every row. */
    const int only_real = batch_is_sorted_by_target(bt) && !model_is_transformer(d);
    model_workspace_carve(ws, B, S, T, bt->n_tgt_tokens, only_real ? bt->n_tgt_tokens : T * B);
    const int SB = S * B;

    ws->enc.rng = rng;
    ws->enc.embedding_dropout = rng ? ws->reg.embedding_dropout : 0;
    ws->enc.sa_dropout = rng ? ws->reg.self_attention_dropout : 0;
    const EncoderSource src = {bt->src, P->E_x, bt->src_len, bt->pixels};
    encoder->forward(&ws->enc, &P->enc, &ed, &src);
    /* The source side of the scores does not depend on the decoder step: once per batch. */
    attn_keys_forward(ws->keys, &P->att, &ad, ws->enc.H, SB);
    init_states_forward(ws, P, encoder->init_width(&ed));
}

void model_encode(Workspace *ws, const Params *P, const Batch *bt)
{
    source_forward(ws, P, bt, NULL);
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
    const int sorted = batch_is_sorted_by_target(bt);
    ws->dec.step_row[0] = 0;
    ws->dec.state_row[0] = 0;
    for (int i = 0; i < T; i++) {
        int Bi = B;
        if (sorted)
            for (Bi = 0; Bi < B && bt->tgt_len[Bi] > i;)
                Bi++;
        ws->dec.active[i] = Bi;
        ws->dec.step_row[i + 1] = ws->dec.step_row[i] + Bi;
        ws->dec.state_row[i + 1] = B + ws->dec.step_row[i];
        for (int b = 0; b < B; b++)
            ws->dec.step_len[(size_t)i * B + b] = b < Bi ? bt->src_len[b] : 0;
    }
    assert(ws->dec.step_row[T] == ws->R);
}

/* The rows each step computes (and a hard pass's choices), then ey_{i-1} of every
 * step's rows into the first m columns of dec.in, with target-embedding dropout from
 * rng, and their share of the decoder's input projection for all steps at once:
 * dec.xg (R, Gp) = ey (R, m) . W_i[:, :m]^T + b_i */
static void decoder_inputs_forward(Workspace *ws, const Params *P, const Batch *bt, Pcg32 *rng)
{
    const Dims *d = &ws->dims;
    const int B = ws->B, T = ws->T, m = d->emb;
    const int in_width = m + model_annotation_width(d), Gp = cell_gates(d->dec_cell) * d->dec_hidden;
    plan_active_rows(ws, bt);
    if (hard_contexts(ws))
        hard_plan(ws);
    const int R = ws->R;
    for (int i = 0; i < T; i++)
        embedding_forward(ws->dec.in + (size_t)ws->dec.step_row[i] * in_width, in_width, P->E_y,
                          bt->tgt_in + (size_t)i * B, ws->dec.active[i], m);
    if (ws->reg.embedding_dropout > 0)
        dropout_forward(ws->dec.in, in_width, ws->dec.mask_y, R, m, ws->reg.embedding_dropout,
                        rng);
    matmul(CblasNoTrans, CblasTrans, R, Gp, m, 1, ws->dec.in, in_width, P->dec.W_i, in_width, 0,
           ws->dec.xg, Gp);
    for (size_t r = 0; r < (size_t)R; r++)
        for (int k = 0; k < Gp; k++)
            ws->dec.xg[r * Gp + k] += P->dec.b_i[k];
}

/* Step i: the attention over the annotations from s_{i-1}, the context c_i into dec.in
 * and its share of the input projection, and the cell's s_i. Only the first Bi rows:
 * with the batch sorted by target length, the others have ended, and nothing real
 * depends on their further steps. */
static void decoder_step_forward(Workspace *ws, const Params *P, int i)
{
    const Dims *d = &ws->dims;
    const AttnDims ad = model_attn_dims(d);
    const int B = ws->B, S = ws->S, m = d->emb, d_h = model_annotation_width(d);
    const int p = d->dec_hidden, Q = attn_query_width(&ad), in_width = m + d_h;
    const int Gp = cell_gates(d->dec_cell) * p, Cp = cell_cache_width(d->dec_cell) * p;
    const size_t SB = (size_t)S * B;
    const int Bi = ws->dec.active[i], hard = hard_contexts(ws);
    const size_t row = (size_t)ws->dec.step_row[i], block = (size_t)ws->dec.state_row[i];
    const int block_rows = ws->dec.state_row[i + 1] - ws->dec.state_row[i];
    const real *s_prev = ws->dec.states + block * p;
    real *q = ws->dec.query ? ws->dec.query + block * Q : NULL; /* laid out as s_prev, for dW */
    real *c = ws->dec.in + row * in_width + m;
    real *xg = ws->dec.xg + row * Gp;
    AttnStep step = {c, in_width,
    ws->dec.alpha ? ws->dec.alpha_heads + (size_t)i * ad.heads * SB : NULL,
                     ws->dec.alpha ? ws->dec.alpha + (size_t)i * SB : NULL, ws->dec.scores, q,
                     model_att_pre_step(ws, i), i == ws->kept.step ? ws->kept.scores : NULL};
    const AttnChoice choice = hard ? hard_step_choice(ws, i) : (AttnChoice){0};
    const AttnInput in = {s_prev, ws->enc.H, ws->keys, ws->enc.summary,
                          ws->dec.step_len + (size_t)i * B, S, B, Bi, hard ? &choice : NULL,
                          NULL};
    attn_step_forward(&step, &P->att, &ad, &in);
    if (i == ws->kept.step && ws->kept.pre) /* s2s explain's copy, before the next step's */
        memcpy(ws->kept.pre, step.pre, sizeof(real) * SB * attn_pre_width(&ad));
    if (ws->dec.gate) /* c_i <- beta_i c_i where the decoder and the readout read it */
        context_gate_forward(c, in_width,
                             ws->dec.context_raw ? ws->dec.context_raw + row * d_h : NULL,
                             ws->dec.gate + row, s_prev, P->w_beta, P->b_beta, Bi, p, d_h);
    /* xg (Bi, Gp) += c_i (Bi, d_h) . W_i[:, m:]^T (d_h, Gp) */
    matmul(CblasNoTrans, CblasTrans, Bi, Gp, d_h, 1, c, in_width, P->dec.W_i + m, in_width, 1, xg,
           Gp);
    /* the LSTM's cell state comes from the previous step's cache (before step 0, cache0,
     * or 0 without it) */
    const real *cache_prev =
        i ? ws->dec.cache + (size_t)ws->dec.step_row[i - 1] * Cp : ws->dec.cache0;
    cell_step_forward(d->dec_cell, ws->dec.states + (size_t)ws->dec.state_row[i + 1] * p,
                      ws->dec.cache + row * Cp, xg, Gp, s_prev, p, cache_prev, P->dec.W_h,
                      P->dec.b_h, NULL, i, Bi, p);
    /* rows of s_prev's block this step leaves out get zero queries, so that the product
     * over all blocks (dW_a, dW_q) meets only finite numbers there */
    if (q && Bi < block_rows)
        memset(q + (size_t)Bi * Q, 0, sizeof(real) * (size_t)(block_rows - Bi) * Q);
}

static void decoder_steps_forward(Workspace *ws, const Params *P)
{
    for (int i = 0; i < ws->T; i++)
        decoder_step_forward(ws, P, i);
}

/* [s_i ; c_i ; ey_{i-1}] of every real target position into ro.in (N rows, in step
 * order), with the step row, the target and (hard passes) the sentence and step of each. */
static void gather_readout_inputs(Workspace *ws, const Batch *bt)
{
    const Dims *d = &ws->dims;
    const int B = ws->B, m = d->emb, d_h = model_annotation_width(d), p = d->dec_hidden;
    const int in_width = m + d_h, ro_width = p + d_h + m, hard = hard_contexts(ws);
    int k = 0;
    for (int i = 0; i < ws->T; i++)
        for (int b = 0; b < ws->dec.active[i]; b++) {
            if (i >= bt->tgt_len[b])
                continue;
            /* step i's row b: s_i is row B + row of the states (state_row[i + 1]) */
            size_t row = (size_t)ws->dec.step_row[i] + b;
            real *x = ws->ro.in + (size_t)k * ro_width;
            memcpy(x, ws->dec.states + (row + B) * p, sizeof(real) * p);
            memcpy(x + p, ws->dec.in + row * in_width + m, sizeof(real) * d_h);
            memcpy(x + p + d_h, ws->dec.in + row * in_width, sizeof(real) * m);
            ws->ro.real_rows[k] = (int)row;
            ws->ro.targets[k] = bt->tgt_out[(size_t)i * B + b];
            if (hard) {
                ws->hard_pass.tok_sentence[k] = b;
                ws->hard_pass.tok_step[k] = i;
            }
            k++;
        }
    assert(k == ws->N);
}

/* t_i over the real target positions only, then readout dropout from rng into ro.dropped. */
static void readout_forward(Workspace *ws, const Params *P, const Batch *bt, Pcg32 *rng)
{
    const Dims *d = &ws->dims;
    const int N = ws->N, ro_width = d->dec_hidden + model_annotation_width(d) + d->emb;
    gather_readout_inputs(ws, bt);
    linear_forward(ws->ro.out, ws->ro.in, P->W_t, P->b_t, N, ro_width, d->readout);
    tanh_forward(ws->ro.out, ws->ro.out, (size_t)N * d->readout);
    if (ws->reg.readout_dropout > 0) {
        memcpy(ws->ro.dropped, ws->ro.out, sizeof(real) * (size_t)N * d->readout);
        dropout_forward(ws->ro.dropped, d->readout, ws->ro.mask_t, N, d->readout,
                        ws->reg.readout_dropout, rng);
    }
}

void model_forward_to_readout(Workspace *ws, const Params *P, const Batch *bt)
{
    Pcg32 rng = ws->reg.rng; /* the masks of this pass, the same every time it runs */
    source_forward(ws, P, bt, &rng);
    assert(ws->T > 0 && ws->N > 0);
    if (model_is_transformer(&ws->dims)) {
        transformer_forward_to_readout(ws, P, bt, &rng);
        return;
    }
    decoder_inputs_forward(ws, P, bt, &rng);
    decoder_steps_forward(ws, P);
    readout_forward(ws, P, bt, &rng);
}

/* What the output layer reads: t_i, after dropout if there is any. */
static const real *readout_used(const Workspace *ws)
{
    return ws->reg.readout_dropout > 0 ? ws->ro.dropped : ws->ro.out;
}

double model_output_layer(Params *G, Workspace *ws, const Params *P)
{
    const int N = ws->N, readout = ws->dims.readout, Vy = ws->dims.tgt_vocab;
    const real smoothing = (real)ws->reg.label_smoothing;
    const real *ro = readout_used(ws);
    double loss = 0;
    if (G)
        memset(ws->grad.d_ro_out, 0, sizeof(real) * (size_t)N * readout);
    for (int k0 = 0; k0 < N; k0 += ws->ro.out_chunk_rows) {
        const int rows = N - k0 < ws->ro.out_chunk_rows ? N - k0 : ws->ro.out_chunk_rows;
        const real *t = ro + (size_t)k0 * readout;
        const int *y = ws->ro.targets + k0;
        /* o (rows, V) = t W_o^T + b_o */
        linear_forward(ws->ro.logits, t, P->W_o, P->b_o, rows, readout, Vy);
        loss += softmax_xent_forward(ws->ro.logits, y, smoothing,
                                     hard_contexts(ws) ? ws->hard_pass.tok_nll + k0 : NULL, rows,
                                     Vy);
        if (G) {
            /* loss = sum_k xent(o_k, y_k) / N; the gradient replaces the softmax */
            softmax_xent_backward(ws->ro.logits, ws->ro.logits, y, smoothing,
                                  (real)(1 / loss_tokens(ws)), rows, Vy);
            linear_backward(ws->grad.d_ro_out + (size_t)k0 * readout, G->W_o, G->b_o, ws->ro.logits,
                            t, P->W_o, rows, readout, Vy);
        }
    }
    return loss;
}

/* lambda (1/B) sum_b sum_j (1 - A_jb)^2, A_jb = sum over caption b's real steps i of its
 * alignment alpha_ij, kept in attn_total for backward. */
static double doubly_stochastic_term(Workspace *ws, const Batch *bt)
{
    const int B = ws->B, S = ws->S;
    const size_t SB = (size_t)S * B;
    real *A = ws->dec.attn_total;
    memset(A, 0, sizeof(real) * SB);
    for (int i = 0; i < ws->T; i++)
        for (int b = 0; b < B; b++)
            if (i < bt->tgt_len[b])
                for (int j = 0; j < bt->src_len[b]; j++)
                    A[(size_t)j * B + b] += ws->dec.alpha[(size_t)i * SB + (size_t)j * B + b];
    double sum = 0;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < bt->src_len[b]; j++) {
            const double gap = 1 - (double)A[(size_t)j * B + b];
            sum += gap * gap;
        }
    return ws->reg.doubly_stochastic * sum / loss_captions(ws);
}

double model_ground_mass(const Workspace *ws, const Batch *bt, int i, int b)
{
    const int S = ws->S, B = ws->B;
    assert(bt->ground && bt->ground_cells == S);
    if (i >= bt->tgt_len[b])
        return -1;
    const unsigned char *cells = bt->ground + ((size_t)i * B + b) * S;
    const real *alpha = ws->dec.alpha + (size_t)i * S * B + b;
    double m = 0;
    int named = 0;
    for (int j = 0; j < S; j++)
        if (cells[j]) {
            named = 1;
            m += alpha[(size_t)j * B];
        }
    return !named ? -1 : m > 1e-30 ? m : 1e-30;
}

/* lambda (1/N) sum over the words (b, i) that name an object of -log m_bi, m_bi the
 * alignment's weight on the word's cells (model_ground_mass); N the loss's tokens. */
static double attention_supervision_term(Workspace *ws, const Batch *bt)
{
    double sum = 0;
    for (int i = 0; i < ws->T; i++)
        for (int b = 0; b < ws->B; b++) {
            const double m = model_ground_mass(ws, bt, i, b);
            if (m >= 0)
                sum -= log(m);
        }
    return ws->reg.attention_supervision * sum / loss_tokens(ws);
}

double model_pass_loss(Workspace *ws, const Batch *bt, double ce_sum)
{
    double loss = hard_contexts(ws) ? hard_objective(ws, bt, ce_sum) : ce_sum / loss_tokens(ws);
    if (ws->reg.doubly_stochastic > 0 && ws->dec.alpha)
        loss += doubly_stochastic_term(ws, bt);
    if (ws->reg.attention_supervision > 0 && ws->dec.alpha)
        loss += attention_supervision_term(ws, bt);
    return loss;
}

double model_forward(Workspace *ws, const Params *P, const Batch *bt)
{
    model_forward_to_readout(ws, P, bt);
    return model_pass_loss(ws, bt, model_output_layer(NULL, ws, P));
}
