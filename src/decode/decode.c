/* decode.c: step-by-step decoding (see decode.h), built from the same kernels as the
 * training pass, so a decoded step computes what a teacher-forced step does: exactly
 * with the Params' own weights (validation), to float rounding with packed ones
 * (DecodeWeights: translate's, whose rows may leave). */
#include "decode/decode.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "nn/ops.h"

/* Carves the decoder's buffers from ar, or with a counting arena (no block) only
 * measures them. */
static void carve(Decoder *dec, Arena *ar)
{
    const Dims *d = &dec->dims;
    const AttnDims ad = model_attn_dims(d);
    const size_t B = (size_t)dec->max_rows, SB = (size_t)dec->max_src_steps * B;
    const size_t m = d->emb, d_h = model_annotation_width(d), p = d->dec_hidden;
    const size_t K = attn_key_width(&ad), Q = attn_query_width(&ad), A = attn_pre_width(&ad);
    const size_t G = cell_gates(d->dec_cell), C = cell_cache_width(d->dec_cell);
#define TAKE(field, count) (dec->field = (count) > 0 ? arena_alloc(ar, (count), sizeof(*dec->field)) : NULL)
    TAKE(H_rows, SB * d_h);
    TAKE(keys_rows, SB * K);
    TAKE(summary_rows, attn_has_weights(&ad) ? 0 : B * d_h);
    TAKE(src_len_rows, B);
    TAKE(state, B * p);
    TAKE(next_state, B * p);
    TAKE(cache, B * C * p);
    TAKE(next_cache, B * C * p);
    TAKE(query, B * Q);
    TAKE(att_pre, SB * A);
    TAKE(scores, SB);
    TAKE(alpha, SB);
    TAKE(alpha_heads, ad.heads > 1 ? ad.heads * SB : 0);
    TAKE(dec_in, B * (m + d_h));
    TAKE(xg, B * G * p);
    TAKE(ro_in, B * (p + d_h + m));
    TAKE(ro_out, B * d->readout);
    TAKE(logits, B * d->tgt_vocab);
    TAKE(prev, B);
    TAKE(done, B);
    TAKE(every_row, attn_has_weights(&ad) ? B : 0);
    TAKE(no_len, attn_has_weights(&ad) ? B : 0);
    TAKE(chosen, attn_has_weights(&ad) ? B * ad.heads : 0);
    TAKE(gate, d->context_gate ? B : 0);
    TAKE(x, model_is_transformer(d) ? B * m : 0);
#undef TAKE
}

/* The Transformer's cache for `cap` positions of max_rows rows. */
static size_t tcache_bytes(const Dims *d, int max_rows, int max_src_steps, int cap)
{
    const TdecDims td = model_tdec_dims(d);
    return model_is_transformer(d) ? sizeof(real) * tdec_cache_floats(&td, max_rows, cap,
                                                                      max_src_steps)
                                   : 0;
}

size_t decoder_bytes(const Dims *d, int max_batch, int max_src_steps, int max_beam)
{
    Decoder dec = {.dims = *d, .max_batch = max_batch, .max_src_steps = max_src_steps,
                   .max_rows = max_batch * max_beam};
    Arena counting = {0};
    carve(&dec, &counting);
    return counting.used + model_workspace_bytes(d, max_batch, max_src_steps, 0, 0) +
           tcache_bytes(d, dec.max_rows, max_src_steps, decode_output_limit(max_src_steps, 2, 10) + 1);
}

void decoder_init(Decoder *dec, const Dims *d, int max_batch, int max_src_steps, int max_beam)
{
    *dec = (Decoder){0};
    dec->dims = *d;
    dec->max_batch = max_batch;
    dec->max_src_steps = max_src_steps;
    dec->max_rows = max_batch * max_beam;
    dec->row_flops = decoder_row_flops(d);
    model_workspace_init(&dec->enc, d, max_batch, max_src_steps, 0, 0);
    const size_t B = (size_t)dec->max_rows, SB = (size_t)max_src_steps * B;
    Arena counting = {0};
    carve(dec, &counting); /* measure, then carve the block */
    arena_init(&dec->arena, counting.used);
    carve(dec, &dec->arena);
    if (!dec->alpha_heads)
        dec->alpha_heads = dec->alpha;
    /* a model without attention has no weights to show: rows of zeros */
    memset(dec->alpha, 0, sizeof(real) * SB);
    if (dec->every_row) {
        memset(dec->every_row, 1, B);
        memset(dec->no_len, 0, sizeof(int) * B);
    }
    /* the default output limit's room (translate.max_output_ratio 2, max_output_extra 10) */
    decoder_reserve_steps(dec, decode_output_limit(max_src_steps, 2, 10) + 1);
}

void decoder_reserve_steps(Decoder *dec, int steps)
{
    if (!model_is_transformer(&dec->dims) || steps <= dec->tcache.cap)
        return;
    const TdecDims td = model_tdec_dims(&dec->dims);
    free(dec->tcache_mem);
    dec->tcache_mem = xmalloc(tcache_bytes(&dec->dims, dec->max_rows, dec->max_src_steps, steps));
    tdec_cache_carve(&dec->tcache, dec->tcache_mem, &td, dec->max_rows, steps, dec->max_src_steps);
}

void decoder_free(Decoder *dec)
{
    free(dec->tcache_mem);
    model_workspace_free(&dec->enc);
    arena_free(&dec->arena);
    *dec = (Decoder){0};
}

void decoder_start(Decoder *dec, const Batch *bt, int per_sentence)
{
    const Dims *d = &dec->dims;
    const AttnDims ad = model_attn_dims(d);
    const int B = bt->batch_size, S = bt->src_steps, K = per_sentence, rows = B * K;
    const size_t d_h = model_annotation_width(d), p = d->dec_hidden, kw = attn_key_width(&ad);
    const size_t C = cell_cache_width(d->dec_cell);
    const Workspace *enc = &dec->enc;
    assert(rows <= dec->max_rows && S <= dec->max_src_steps);
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++)
            for (int k = 0; k < K; k++) {
                size_t to = (size_t)j * rows + (size_t)b * K + k, from = (size_t)j * B + b;
                memcpy(dec->H_rows + to * d_h, enc->enc.H + from * d_h, sizeof(real) * d_h);
                if (kw)
                    memcpy(dec->keys_rows + to * kw, enc->keys + from * kw, sizeof(real) * kw);
            }
    for (int b = 0; b < B; b++)
        for (int k = 0; k < K; k++) {
            int r = b * K + k;
            dec->src_len_rows[r] = bt->src_len[b];
            if (enc->dec.states)
                memcpy(dec->state + (size_t)r * p, enc->dec.states + (size_t)b * p,
                       sizeof(real) * p);
            if (dec->summary_rows)
                memcpy(dec->summary_rows + (size_t)r * d_h, enc->enc.summary + (size_t)b * d_h,
                       sizeof(real) * d_h);
            dec->prev[r] = TOK_BOS;
        }
    dec->step = 0;
    /* the LSTM's cell state is read from the "previous" cache: c_0 where the encoder
     * gives one (model_forward.c: init_states_forward), else 0 */
    if (enc->dec.cache0)
        for (int b = 0; b < B; b++)
            for (int k = 0; k < K; k++)
                memcpy(dec->cache + (size_t)(b * K + k) * C * p,
                       enc->dec.cache0 + (size_t)b * C * p,
                       sizeof(real) * C * p);
    else
        memset(dec->cache, 0, sizeof(real) * (size_t)rows * C * p);
}

/* The heads' weights of the last layer's cross-attention, (rows, H, S) in the cache, into
 * the alignment buffers: alpha (S*rows) their mean, alpha_heads (H, S*rows). */
static void transformer_alignments(Decoder *dec, int S, int rows)
{
    const TdecDims td = model_tdec_dims(&dec->dims);
    const int H = td.heads;
    const real *w = dec->tcache.cross_probs[td.layers - 1];
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < S; j++) {
            real mean = 0;
            for (int k = 0; k < H; k++) {
                const real a = w[((size_t)r * H + k) * S + j];
                mean += a / H;
                if (H > 1)
                    dec->alpha_heads[(size_t)k * S * rows + (size_t)j * rows + r] = a;
            }
            dec->alpha[(size_t)j * rows + r] = mean;
        }
}

void decode_weights_make(DecodeWeights *w, const Dims *d, const Params *P)
{
    *w = (DecodeWeights){0};
    const size_t out = (size_t)d->readout * d->tgt_vocab;
    if (model_is_transformer(d)) {
        const TdecDims td = model_tdec_dims(d);
        w->floats = tdec_step_weights_floats(&td) + out;
        w->mem = xmalloc_array(w->floats, sizeof(real));
        tdec_step_weights_make(w->layer, w->mem, P->tdec, &td);
        w->W_o = w->mem + tdec_step_weights_floats(&td);
        pack_panels(w->W_o, P->W_o, d->tgt_vocab, d->readout);
        return;
    }
    const AttnDims ad = model_attn_dims(d);
    const size_t p = d->dec_hidden, Gp = (size_t)cell_gates(d->dec_cell) * p;
    const size_t in_width = d->emb + model_annotation_width(d), ro_width = p + in_width;
    const size_t a = attn_query_width(&ad), readout = d->readout;
    w->floats = a * p + Gp * in_width + Gp * p + readout * ro_width + out;
    w->mem = xmalloc_array(w->floats, sizeof(real));
    real *at = w->mem;
    if (a) { /* additive or scaled dot: q = W s_{i-1} */
        w->W_query = at;
        pack_panels(w->W_query, ad.score == SCORE_ADDITIVE ? P->att.W_a : P->att.W_q, (int)a, (int)p);
        at += a * p;
    }
    w->W_i = at;
    pack_panels(w->W_i, P->dec.W_i, (int)Gp, (int)in_width);
    w->W_h = w->W_i + Gp * in_width;
    pack_panels(w->W_h, P->dec.W_h, (int)Gp, (int)p);
    w->W_t = w->W_h + Gp * p;
    pack_panels(w->W_t, P->W_t, (int)readout, (int)ro_width);
    w->W_o = w->W_t + readout * ro_width;
    pack_panels(w->W_o, P->W_o, d->tgt_vocab, (int)readout);
}

void decode_weights_free(DecodeWeights *w)
{
    free(w->mem);
    *w = (DecodeWeights){0};
}

/* A Transformer step: y_{i-1}'s input at position step, the layers over the cached
 * prefix, the logits from the last layer's output. */
static void transformer_step(Decoder *dec, const Params *P, int S, int rows)
{
    const Dims *d = &dec->dims;
    const TdecDims td = model_tdec_dims(d);
    assert(dec->step < dec->tcache.cap);
    if (dec->step == 0) /* the cross-attention's keys and values, once per batch */
        tdec_cache_start(&dec->tcache, P->tdec, &td, dec->H_rows, S, rows);
    transformer_embed_step(dec->x, P->E_y, dec->prev, dec->step, rows, d->emb);
    const DecodeWeights *w = dec->weights;
    tdec_step(&dec->tcache, P->tdec, w ? w->layer : NULL, &td, dec->x, dec->step,
              dec->src_len_rows, S, rows);
    transformer_alignments(dec, S, rows);
    linear_forward_any(dec->logits, dec->tcache.out, P->W_o, w ? w->W_o : NULL, P->b_o, rows,
                       d->emb, d->tgt_vocab);
}

double decoder_row_flops(const Dims *d)
{
    double mads = (double)d->readout * d->tgt_vocab; /* W_o */
    if (model_is_transformer(d)) {
        const TdecDims td = model_tdec_dims(d);
        const double w = td.width;
        /* self-attention's W_Q, W_K, W_V, W_O; the cross-attention's Wc_Q, Wc_O; W_1, W_2 */
        return 2 * (mads + td.layers * (6 * w * w + 2 * w * td.ffn));
    }
    const AttnDims ad = model_attn_dims(d);
    const double p = d->dec_hidden, Gp = (double)cell_gates(d->dec_cell) * p;
    const double in_width = d->emb + model_annotation_width(d);
    mads += attn_query_width(&ad) * p + Gp * in_width + Gp * p + d->readout * (p + in_width);
    return 2 * mads;
}

void decoder_step(Decoder *dec, const Params *P, int S, int rows)
{
    const Dims *d = &dec->dims;
    dec->flops += rows * dec->row_flops;
    if (model_is_transformer(d)) {
        transformer_step(dec, P, S, rows);
        return;
    }
    const AttnDims ad = model_attn_dims(d);
    const int B = rows;
    const int m = d->emb, d_h = model_annotation_width(d), p = d->dec_hidden;
    const int Gp = cell_gates(d->dec_cell) * p;
    const int in_width = m + d_h, ro_width = p + d_h + m;
    assert(rows <= dec->max_rows);

    embedding_forward(dec->dec_in, in_width, P->E_y, dec->prev, B, m);
    AttnStep step = {dec->dec_in + m, in_width, dec->alpha_heads, dec->alpha, dec->scores,
                     dec->query, dec->att_pre, NULL};
    const int argmax = dec->argmax && attn_has_weights(&ad);
    const AttnChoice choice = {dec->every_row, dec->no_len, NULL, 0, dec->chosen};
    const DecodeWeights *w = dec->weights;
    const AttnInput in = {dec->state, dec->H_rows, dec->keys_rows, dec->summary_rows,
                          dec->src_len_rows, S, B, B, argmax ? &choice : NULL,
                          w ? w->W_query : NULL};
    attn_step_forward(&step, &P->att, &ad, &in);
    if (dec->gate) /* c_i <- beta_i c_i, as training computes it (model_forward.c) */
        context_gate_forward(dec->dec_in + m, in_width, NULL, dec->gate, dec->state, P->w_beta,
                             P->b_beta, B, p, d_h);
    linear_forward_any(dec->xg, dec->dec_in, P->dec.W_i, w ? w->W_i : NULL, P->dec.b_i, B,
                       in_width, Gp);
    const real *W_h = P->dec.W_h;
    if (w) { /* the cell's hidden projections straight into the cache, as it keeps them */
        packed_product(dec->next_cache, cell_cache_width(d->dec_cell) * p, dec->state, p, w->W_h,
                       B, p, Gp);
        W_h = NULL;
    }
    cell_step_forward(d->dec_cell, dec->next_state, dec->next_cache, dec->xg, Gp, dec->state, p,
                      dec->cache, W_h, P->dec.b_h, NULL, 0, B, p);
    for (int b = 0; b < B; b++) {
        real *x = dec->ro_in + (size_t)b * ro_width;
        const real *from = dec->dec_in + (size_t)b * in_width;
        memcpy(x, dec->next_state + (size_t)b * p, sizeof(real) * p);
        memcpy(x + p, from + m, sizeof(real) * d_h);
        memcpy(x + p + d_h, from, sizeof(real) * m);
    }
    linear_forward_any(dec->ro_out, dec->ro_in, P->W_t, w ? w->W_t : NULL, P->b_t, B, ro_width,
                       d->readout);
    tanh_forward(dec->ro_out, dec->ro_out, (size_t)B * d->readout);
    linear_forward_any(dec->logits, dec->ro_out, P->W_o, w ? w->W_o : NULL, P->b_o, B,
                       d->readout, d->tgt_vocab);
}

void decoder_advance(Decoder *dec, const int *from, int rows)
{
    if (model_is_transformer(&dec->dims)) {
        const TdecDims td = model_tdec_dims(&dec->dims);
        if (from)
            tdec_cache_reorder(&dec->tcache, &td, from, dec->step, rows);
        dec->step++;
        return;
    }
    const size_t p = dec->dims.dec_hidden, Cp = (size_t)cell_cache_width(dec->dims.dec_cell) * p;
    if (!from) {
        real *swap = dec->state;
        dec->state = dec->next_state;
        dec->next_state = swap;
        swap = dec->cache;
        dec->cache = dec->next_cache;
        dec->next_cache = swap;
        return;
    }
    for (int r = 0; r < rows; r++) {
        memcpy(dec->state + (size_t)r * p, dec->next_state + (size_t)from[r] * p, sizeof(real) * p);
        /* only the LSTM carries anything in its cache from one step to the next */
        if (dec->dims.dec_cell == CELL_LSTM)
            memcpy(dec->cache + (size_t)r * Cp, dec->next_cache + (size_t)from[r] * Cp,
                   sizeof(real) * Cp);
    }
}

int decoder_rows_may_leave(const Decoder *dec)
{
    return dec->weights != NULL;
}

/* A plane of S positions of `rows` rows each (row j * rows + r, `width` floats) with only
 * rows keep[0..n) left, as rows 0..n). Rows only move down (keep[r] >= r, and j n + r <=
 * j rows + keep[r]): each place read is one not yet written. */
static void keep_plane(real *plane, size_t width, const int *keep, int n, int rows, int S)
{
    for (int j = 0; j < S; j++)
        for (int r = 0; r < n; r++)
            memmove(plane + ((size_t)j * n + r) * width,
                    plane + ((size_t)j * rows + keep[r]) * width, sizeof(real) * width);
}

/* The same for a row-major (rows, width) buffer. */
static void keep_row_buffer(void *buf, size_t bytes, const int *keep, int n)
{
    for (int r = 0; r < n; r++)
        memmove((char *)buf + r * bytes, (const char *)buf + (size_t)keep[r] * bytes, bytes);
}

void decoder_keep_rows(Decoder *dec, const int *keep, int n, int rows, int S)
{
    assert(decoder_rows_may_leave(dec) && n <= rows);
    const Dims *d = &dec->dims;
    keep_row_buffer(dec->src_len_rows, sizeof(int), keep, n);
    keep_row_buffer(dec->prev, sizeof(int), keep, n);
    if (model_is_transformer(d)) {
        const TdecDims td = model_tdec_dims(d);
        const size_t w2 = 2 * (size_t)td.width, cap = dec->tcache.cap;
        /* the annotations themselves stay: a Transformer reads them at step 0 only, into
         * its cross-attention's keys and values, which move */
        for (int l = 0; l < td.layers; l++) {
            keep_plane(dec->tcache.cross_kv[l], w2, keep, n, rows, S);
            /* the positions cached so far: 0 .. step - 1 */
            for (int r = 0; r < n; r++)
                memmove(dec->tcache.kv[l] + r * cap * w2,
                        dec->tcache.kv[l] + (size_t)keep[r] * cap * w2,
                        sizeof(real) * (size_t)dec->step * w2);
        }
        return;
    }
    /* a recurrent decoder reads its rows' annotations and keys at every step, and carries
     * its state (and an LSTM its cell state, in the cache) from one step to the next */
    const AttnDims ad = model_attn_dims(d);
    const size_t d_h = model_annotation_width(d), p = d->dec_hidden;
    keep_plane(dec->H_rows, d_h, keep, n, rows, S);
    if (attn_key_width(&ad))
        keep_plane(dec->keys_rows, (size_t)attn_key_width(&ad), keep, n, rows, S);
    if (dec->summary_rows)
        keep_row_buffer(dec->summary_rows, sizeof(real) * d_h, keep, n);
    keep_row_buffer(dec->state, sizeof(real) * p, keep, n);
    if (d->dec_cell == CELL_LSTM) /* only its cache carries anything to the next step */
        keep_row_buffer(dec->cache, sizeof(real) * cell_cache_width(d->dec_cell) * p, keep, n);
}

int decode_output_limit(int src_steps, double ratio, long extra)
{
    return (int)(ratio * src_steps) + (int)extra;
}

void decode_greedy(Decoder *dec, const Params *P, const Batch *bt, int max_out, int *out,
                   int *out_len)
{
    const int B = bt->batch_size, V = dec->dims.tgt_vocab;
    assert(B <= dec->max_batch && bt->src_steps <= dec->max_src_steps);
    model_encode(&dec->enc, P, bt);
    decoder_reserve_steps(dec, max_out + 1);
    decoder_start(dec, bt, 1);
    int n_done = 0;
    for (int b = 0; b < B; b++) {
        out_len[b] = 0;
        dec->done[b] = max_out <= 0;
        n_done += dec->done[b];
    }
    while (n_done < B) {
        decoder_step(dec, P, bt->src_steps, B);
        for (int b = 0; b < B; b++) {
            /* the most probable word; <pad> and <s> are never outputs (as in beam search) */
            const real *o = dec->logits + (size_t)b * V;
            int best = TOK_UNK;
            for (int v = TOK_UNK + 1; v < V; v++)
                if (v != TOK_BOS && o[v] > o[best])
                    best = v;
            dec->prev[b] = best;
            if (dec->done[b])
                continue;
            if (best == TOK_EOS) {
                dec->done[b] = 1;
                n_done++;
                continue;
            }
            out[(size_t)b * max_out + out_len[b]++] = best;
            if (out_len[b] == max_out) {
                dec->done[b] = 1;
                n_done++;
            }
        }
        decoder_advance(dec, NULL, B);
    }
}
