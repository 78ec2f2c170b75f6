/* decode.c: step-by-step decoding (see decode.h), built from the same kernels as the
 * training pass, so a decoded step computes exactly what a teacher-forced step does. */
#include "decode.h"

#include <assert.h>
#include <string.h>

#include "attention.h"
#include "ops.h"

void decoder_init(Decoder *dec, const Dims *d, int max_batch, int max_src_steps, int max_beam)
{
    *dec = (Decoder){0};
    dec->dims = *d;
    dec->max_batch = max_batch;
    dec->max_src_steps = max_src_steps;
    dec->max_rows = max_batch * max_beam;
    model_workspace_init(&dec->enc, d, max_batch, max_src_steps, 0, 0);
    const size_t B = (size_t)dec->max_rows, SB = (size_t)max_src_steps * B;
    const size_t m = d->emb, n = d->enc_hidden, p = d->dec_hidden, a = d->attn;
    /* Two passes over the same list: measure, then carve. */
    for (int pass = 0; pass < 2; pass++) {
        Arena *ar = &dec->arena;
        if (pass == 1)
            arena_init(ar, ar->used);
#define TAKE(field, count) (dec->field = arena_alloc(ar, (count), sizeof(*dec->field)))
        TAKE(H_rows, SB * 2 * n);
        TAKE(keys_rows, SB * a);
        TAKE(src_len_rows, B);
        TAKE(state, B * p);
        TAKE(next_state, B * p);
        TAKE(query, B * a);
        TAKE(att_pre, SB * a);
        TAKE(scores, SB);
        TAKE(alpha, SB);
        TAKE(dec_in, B * (m + 2 * n));
        TAKE(xg, B * 3 * p);
        TAKE(gru_cache, B * 4 * p);
        TAKE(ro_in, B * (p + 2 * n + m));
        TAKE(ro_out, B * d->readout);
        TAKE(logits, B * d->tgt_vocab);
        TAKE(prev, B);
        TAKE(done, B);
#undef TAKE
    }
}

void decoder_free(Decoder *dec)
{
    model_workspace_free(&dec->enc);
    arena_free(&dec->arena);
    *dec = (Decoder){0};
}

void decoder_step(Decoder *dec, const Params *P, const real *H, const real *keys,
                  const int *src_len, int S, int rows)
{
    const Dims *d = &dec->dims;
    const int B = rows;
    const int m = d->emb, n = d->enc_hidden, p = d->dec_hidden, a = d->attn;
    const int in_width = m + 2 * n, ro_width = p + 2 * n + m;
    assert(rows <= dec->max_rows);

    embedding_forward(dec->dec_in, in_width, P->E_y, dec->prev, B, m);
    linear_forward(dec->query, dec->state, P->W_a, NULL, B, p, a);
    attn_additive_scores_forward(dec->scores, dec->att_pre, dec->query, keys, P->v_a, src_len, S,
                                 B, a);
    attn_softmax_forward(dec->alpha, dec->scores, src_len, S, B);
    attn_context_forward(dec->dec_in + m, in_width, dec->alpha, H, 2 * n, src_len, S, B, 2 * n);
    linear_forward(dec->xg, dec->dec_in, P->dec.W_i, P->dec.b_i, B, in_width, 3 * p);
    gru_step_forward(dec->next_state, dec->gru_cache, dec->xg, 3 * p, dec->state, p,
                     P->dec.W_h, P->dec.b_h, NULL, 0, B, p);
    for (int b = 0; b < B; b++) {
        real *x = dec->ro_in + (size_t)b * ro_width;
        const real *in = dec->dec_in + (size_t)b * in_width;
        memcpy(x, dec->next_state + (size_t)b * p, sizeof(real) * p);
        memcpy(x + p, in + m, sizeof(real) * 2 * n);
        memcpy(x + p + 2 * n, in, sizeof(real) * m);
    }
    linear_forward(dec->ro_out, dec->ro_in, P->W_t, P->b_t, B, ro_width, d->readout);
    tanh_forward(dec->ro_out, dec->ro_out, (size_t)B * d->readout);
    linear_forward(dec->logits, dec->ro_out, P->W_o, P->b_o, B, d->readout, d->tgt_vocab);
}

void decode_greedy(Decoder *dec, const Params *P, const Batch *bt, int max_out, int *out,
                   int *out_len)
{
    const int B = bt->batch_size, p = dec->dims.dec_hidden, V = dec->dims.tgt_vocab;
    assert(B <= dec->max_batch && bt->src_steps <= dec->max_src_steps);
    model_encode(&dec->enc, P, bt);
    memcpy(dec->state, dec->enc.states, sizeof(real) * (size_t)B * p);
    int n_done = 0;
    for (int b = 0; b < B; b++) {
        dec->prev[b] = TOK_BOS;
        out_len[b] = 0;
        dec->done[b] = max_out <= 0;
        n_done += dec->done[b];
    }
    while (n_done < B) {
        decoder_step(dec, P, dec->enc.H, dec->enc.keys, bt->src_len, bt->src_steps, B);
        for (int b = 0; b < B; b++) {
            const real *o = dec->logits + (size_t)b * V;
            int best = 0;
            for (int v = 1; v < V; v++)
                if (o[v] > o[best])
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
        real *swap = dec->state;
        dec->state = dec->next_state;
        dec->next_state = swap;
    }
}
