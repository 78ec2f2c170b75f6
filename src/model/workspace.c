/* workspace.c: the activations of one batch and the scratch of its backward pass, in one
 * arena sized once for the largest batch (model.h's Workspace). Carved stage by stage in
 * forward's order; model_forward.c and model_backward.c only read the layout. */
#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "model/model_pass.h"

/* Logits of one output-layer chunk: 4 MiB in float, rows enough for an efficient gemm
 * (65 at V_y = 16000) and for a whole batch of a small model. Chunks of 65 rather than
 * 131 rows measured no slower at size L and kept 6 MiB less resident (the smaller
 * chunk also shrinks OpenBLAS's packing of the dW_o product). */
#define OUTPUT_CHUNK_FLOATS ((size_t)1 << 20)
/* The attention's tanh layer of every decoder step is kept for backward up to 16 MiB
 * (float); above, backward computes each step's again (10% more attention work, 28 MiB
 * less at benchmark size L). */
#define ATT_PRE_KEEP_FLOATS ((size_t)1 << 22)

/* The additive score's tanh layer of one step takes `floats` values; each step's block
 * starts on an ARENA_ALIGN boundary, as the one block that backward fills again does:
 * BLAS kernels may sum in another order at another alignment (OpenBLAS's Prescott
 * kernels do), and kept or computed again, a step must give the same bits. */
static size_t att_pre_stride(size_t floats)
{
    const size_t per_line = ARENA_ALIGN / sizeof(real);
    return (floats + per_line - 1) / per_line * per_line;
}

/* The sizes every stage's carving reads: this batch's and the model's widths. */
typedef struct {
    size_t B, S, T, N, SB, TB;
    size_t rows, state_rows; /* decoder rows by step (R), and by state block (B + R) */
    size_t m, p, d_h, readout, Vy, K, Q, A, H, Gd, Cd;
    int attends, transformer;
} Shape;

#define TAKE(field, count) (ws->field = arena_alloc(ar, (count), sizeof(*ws->field)))
#define TAKE_IF(cond, field, count) (ws->field = (cond) ? arena_alloc(ar, (count), sizeof(*ws->field)) : NULL)

/* source_forward's: the encoder's buffers (a text encoder's embeddings first), the keys */
static void carve_source(Workspace *ws, Arena *ar, const Shape *s)
{
    const EncoderDims ed = model_encoder_dims(&ws->dims);
    /* a model without attention weights reads the encoder's fixed context instead */
    encoder_ops(&ed)->carve_work(&ws->enc, ar, &ed, (int)s->B, (int)s->S, !s->attends,
                                 ws->with_backward);
    TAKE_IF(s->K > 0, keys, s->SB * s->K);
}

/* The Transformer decoder's (R = T*B): its input rows and their dropout, its layers',
 * the alignment it leaves (the last layer's cross-attention) and the readout's index. */
static void carve_transformer(Workspace *ws, Arena *ar, const Shape *s)
{
    const TdecDims td = model_tdec_dims(&ws->dims);
    memset(&ws->dec, 0, offsetof(DecoderWork, tdec)); /* none of the recurrent decoder's */
    TAKE(dec.in, s->TB * s->m);
    TAKE_IF(ws->with_backward, dec.mask_y, s->TB * s->m);
    tdec_carve_work(&ws->dec.tdec, ar, &td, (int)s->B, (int)s->T, (int)s->S, ws->with_backward);
    TAKE(dec.alpha, s->TB * s->S);
    if (s->H > 1)
        TAKE(dec.alpha_heads, s->TB * s->H * s->S);
    else
        ws->dec.alpha_heads = ws->dec.alpha;
    TAKE(dec.active, s->T);
    TAKE(dec.step_row, s->T + 1);
    TAKE(dec.state_row, s->T + 1);
    TAKE(dec.step_len, s->TB);
    TAKE(ro.real_rows, s->N);
    TAKE(ro.targets, s->N);
}

/* the decoder's stages': states and step rows, the attention's per-step buffers, the
 * plan of active rows, and the index of real target positions the readout gathers */
static void carve_decoder(Workspace *ws, Arena *ar, const Shape *s)
{
    if (s->transformer) {
        carve_transformer(ws, ar, s);
        return;
    }
    TAKE(dec.states, s->state_rows * s->p);
    TAKE(dec.in, s->rows * (s->m + s->d_h));
    TAKE_IF(ws->with_backward, dec.mask_y, s->rows * s->m);
    TAKE(dec.xg, s->rows * s->Gd * s->p);
    TAKE(dec.cache, s->rows * s->Cd * s->p);
    TAKE_IF(model_starts_cell_state(&ws->dims), dec.cache0, s->B * s->Cd * s->p);
    TAKE_IF(s->Q > 0, dec.query, s->state_rows * s->Q);
    TAKE_IF(s->A > 0, dec.att_pre,
            (ws->dec.keep_att_pre ? s->T : 1) * att_pre_stride(s->SB * s->A));
    TAKE(dec.scores, s->SB);
    TAKE_IF(s->attends, dec.alpha, s->TB * s->S);
    if (s->H > 1)
        TAKE_IF(s->attends, dec.alpha_heads, s->TB * s->H * s->S);
    else
        ws->dec.alpha_heads = ws->dec.alpha;
    TAKE_IF(ws->dims.context_gate, dec.gate, s->rows);
    TAKE_IF(ws->dims.context_gate && ws->with_backward, dec.context_raw, s->rows * s->d_h);
    TAKE_IF(s->attends && ws->with_backward, dec.attn_total, s->SB);
    TAKE_IF(s->attends && ws->with_backward, dec.d_align, s->SB);
    TAKE(dec.active, s->T);
    TAKE(dec.step_row, s->T + 1);
    TAKE(dec.state_row, s->T + 1);
    TAKE(dec.step_len, s->TB);
    TAKE(ro.real_rows, s->N);
    TAKE(ro.targets, s->N);
}

/* hard attention's; a CONTEXT_GIVEN pass reads hard_pass.rows and chosen as the last pass of
 * this shape left them */
static void carve_hard(Workspace *ws, Arena *ar, const Shape *s)
{
    if (s->transformer) { /* its attention is always soft */
        memset(&ws->hard_pass, 0, sizeof ws->hard_pass);
        return;
    }
    const size_t TBH = s->TB * s->H;
    TAKE_IF(s->attends, hard_pass.rows, s->B);
    TAKE_IF(s->attends, hard_pass.soft_len, s->TB);
    TAKE_IF(s->attends, hard_pass.draws, TBH);
    TAKE_IF(s->attends, hard_pass.chosen, TBH);
    TAKE_IF(s->attends, hard_pass.tok_sentence, s->N);
    TAKE_IF(s->attends, hard_pass.tok_step, s->N);
    TAKE_IF(s->attends, hard_pass.tok_nll, s->N);
    TAKE_IF(s->attends, hard_pass.advantage, s->TB);
    TAKE_IF(s->attends && ws->with_backward, hard_pass.step_reinforce, s->B);
    TAKE_IF(s->attends && ws->with_backward, hard_pass.step_entropy, s->B);
}

/* readout_forward's and the output layer's, which runs over chunks of rows: its (N, V_y)
 * logits would be the largest activation of all (41 MiB at benchmark size L, batch 32) */
static void carve_readout(Workspace *ws, Arena *ar, const Shape *s)
{
    TAKE_IF(!s->transformer, ro.in, s->N * (s->p + s->d_h + s->m));
    TAKE(ro.out, s->N * s->readout);
    TAKE_IF(ws->with_backward, ro.mask_t, s->N * s->readout);
    TAKE_IF(ws->with_backward, ro.dropped, s->N * s->readout);
    const int most = ws->ro.max_out_chunk_rows;
    ws->ro.out_chunk_rows = (int)s->N < most ? (int)s->N : most;
    TAKE(ro.logits, (size_t)ws->ro.out_chunk_rows * s->Vy);
}

/* backward's own buffers, after d_hg (which carve_workspace places) */
static void carve_backward(Workspace *ws, Arena *ar, const Shape *s)
{
    TAKE(grad.d_ro_out, s->N * s->readout);
    if (s->transformer) { /* none of the recurrent decoder's */
        const BackwardWork kept = ws->grad;
        ws->grad = (BackwardWork){.d_hg = kept.d_hg, .d_ro_out = kept.d_ro_out};
        TAKE(grad.d_tdec_out, s->TB * s->m);
        return;
    }
    ws->grad.d_tdec_out = NULL;
    ws->grad.d_ro_in = ws->ro.in;
    TAKE(grad.d_states, s->state_rows * s->p);
    TAKE(grad.d_dec_in, s->rows * (s->m + s->d_h));
    ws->grad.d_dec_xg = ws->dec.xg;
    TAKE_IF(s->Q > 0, grad.d_query, s->state_rows * s->Q);
    TAKE_IF(ws->dims.dec_cell == CELL_LSTM, grad.d_cell, s->B * s->p);
    TAKE_IF(s->attends, grad.d_alpha, s->SB);
    TAKE_IF(s->attends, grad.d_scores, s->SB);
    TAKE_IF(s->K > 0, grad.d_keys, s->SB * s->K);
    TAKE(grad.d_s0, s->B * s->p);
}

static Shape shape_of(const Workspace *ws, int B, int S, int T, int N, int R)
{
    const Dims *d = &ws->dims;
    const AttnDims ad = model_attn_dims(d);
    return (Shape){.B = (size_t)B, .S = (size_t)S, .T = (size_t)T, .N = (size_t)N,
                   .SB = (size_t)S * B, .TB = (size_t)T * B,
                   .rows = (size_t)R, .state_rows = (size_t)B + R,
                   .m = (size_t)d->emb, .p = (size_t)d->dec_hidden,
                   .d_h = (size_t)model_annotation_width(d), .readout = (size_t)d->readout,
                   .Vy = (size_t)d->tgt_vocab, .K = attn_key_width(&ad),
                   .Q = attn_query_width(&ad), .A = attn_pre_width(&ad), .H = (size_t)ad.heads,
                   .Gd = cell_gates(d->dec_cell), .Cd = cell_cache_width(d->dec_cell),
                   .attends = attn_has_weights(&ad), .transformer = model_is_transformer(d)};
}

/* Points every buffer into the arena for a batch of (B, S, T, N) whose decoder computes
 * R rows over all steps; with a NULL arena base this only measures.
 *
 * Memory shared, stated once here:
 *  - d_hg, the recurrences' backward scratch (the decoder's, then the encoder's), starts
 *    where the readout's buffers start: they are dead once readout_backward has
 *    scattered their gradient back to the decoder, which is where d_hg's use begins
 *    (6.5 MiB at benchmark size L);
 *  - gradients that overwrite what only forward reads take its memory: d_ro_in is ro_in,
 *    d_dec_xg is dec_xg (the cell caches hold what backward needs); a text encoder's
 *    source embeddings' gradient is ex (read for its dW_i first, encoder.h);
 *  - alpha_heads is alpha itself with one head. */
void model_workspace_carve(Workspace *ws, int B, int S, int T, int N, int R)
{
    Arena *ar = &ws->arena;
    arena_reset(ar);
    ws->B = B, ws->S = S, ws->T = T, ws->N = N, ws->R = R;
    const Shape s = shape_of(ws, B, S, T, N, R);
    carve_source(ws, ar, &s);
    carve_decoder(ws, ar, &s);
    carve_hard(ws, ar, &s);
    const size_t readout_start = ar->used;
    carve_readout(ws, ar, &s);
    if (!ws->with_backward)
        return;
    const EncoderDims ed = model_encoder_dims(&ws->dims);
    const size_t enc_hg = encoder_ops(&ed)->backward_scratch(&ed, B, S);
    const size_t dec_hg = s.transformer ? 0 : s.state_rows * s.Gd * s.p, readout_end = ar->used;
    ar->used = readout_start;
    TAKE(grad.d_hg, enc_hg > dec_hg ? enc_hg : dec_hg);
    if (ar->used < readout_end)
        ar->used = readout_end;
    carve_backward(ws, ar, &s);
}

#undef TAKE_IF
#undef TAKE

real *model_att_pre_step(const Workspace *ws, int i)
{
    if (!ws->dec.att_pre)
        return NULL;
    const AttnDims ad = model_attn_dims(&ws->dims);
    const size_t block = att_pre_stride((size_t)ws->S * ws->B * attn_pre_width(&ad));
    return ws->dec.att_pre + (ws->dec.keep_att_pre ? (size_t)i : 0) * block;
}

/* Sets ws up for these sizes and measures its buffers in a counting arena (ws->arena.used
 * bytes), without allocating them. */
static void model_workspace_measure(Workspace *ws, const Dims *d, int max_batch,
                                    int max_src_steps, int max_tgt_steps, int with_backward)
{
    *ws = (Workspace){.kept.step = -1};
    ws->dims = *d;
    ws->max_batch = max_batch;
    ws->max_src_steps = max_src_steps;
    ws->max_tgt_steps = max_tgt_steps;
    ws->with_backward = with_backward;
    const AttnDims ad = model_attn_dims(d);
    size_t att_pre_all = (size_t)max_tgt_steps * max_src_steps * max_batch * attn_pre_width(&ad);
    ws->dec.keep_att_pre = with_backward && att_pre_all <= ATT_PRE_KEEP_FLOATS;
    int rows = (int)(OUTPUT_CHUNK_FLOATS / (size_t)d->tgt_vocab);
    ws->ro.max_out_chunk_rows = rows > 0 ? rows : 1;
    /* Every buffer grows with B, S, T and N, so the largest batch bounds them all. */
    const int most = max_batch * max_tgt_steps;
    model_workspace_carve(ws, max_batch, max_src_steps, max_tgt_steps, most, most);
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

void model_set_loss_counts(Workspace *ws, int tokens, int captions)
{
    assert(tokens >= 0 && captions >= 0);
    ws->loss_tokens = tokens;
    ws->loss_captions = captions;
}

void model_set_hard(Workspace *ws, const HardAttention *hard)
{
    ws->hard = hard ? *hard : (HardAttention){0};
}

void model_set_output_done(Workspace *ws, void (*done)(void *ctx), void *ctx)
{
    ws->output_hook.done = done;
    ws->output_hook.ctx = ctx;
}

void model_keep_step(Workspace *ws, int step, real *scores, real *pre)
{
    ws->kept.step = step;
    ws->kept.scores = scores;
    ws->kept.pre = pre;
}

void model_set_argmax(Workspace *ws, int argmax)
{
    model_set_hard(ws, argmax ? &(HardAttention){.mode = CONTEXT_ARGMAX} : NULL);
}

const real *model_self_weights(const Workspace *ws, int layer)
{
    return layer >= 0 && layer < ws->dims.sa_layers ? ws->enc.sa.layer[layer].mean : NULL;
}
