/* explain.c: the tensors of one decoder attention step, read from the model's own pass
 * (see explain.h). */
#include "model/explain.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "model/explain_pass.h"
#include "model/model_pass.h"
#include "nn/ops.h"

/* What the step starts from: the annotations and the decoder's state. */
static void add_inputs(ExplainStep *out, const ExplainPass *ps)
{
    const Workspace *ws = ps->ws;
    const int dot = ps->ad.score == SCORE_DOT, general = ps->ad.score == SCORE_GENERAL;
    explain_add_block(out, ps, "H", "H = h_1 .. h_S", ROWS_SOURCE, ps->S, ws->enc.H, ps->d_h, ps->d_h,
              "d_h (the annotation width)",
              "the annotations: per source word, what the encoder read there and around it; "
              "the attention weighs them, and the context is their weighted sum");
    /* the dot and general scores split s_{i-1} among the heads; the others read it whole */
    ExplainPass whole = *ps;
    if (!dot && !general)
        whole.head = -1;
    explain_add_block(out, &whole, "s_prev", "s_{i-1}", ROWS_ONE, 1,
              ws->dec.states + (size_t)ws->dec.state_row[ps->i] * ps->p, ps->p, ps->p,
              "decoder_size (p)",
              "the decoder's state before this step: what it has written so far; from it the "
              "attention asks which source words matter now");
}

/* additive: e_ij = v_a . tanh(W_a s_{i-1} + U_a h_j + b_a) */
static void add_additive(ExplainStep *out, const ExplainPass *ps)
{
    const Workspace *ws = ps->ws;
    const int a = ps->a, S = ps->S;
    const real *q = ws->dec.query + (size_t)ws->dec.state_row[ps->i] * a;
    explain_add_block(out, ps, "W_a s", "W_a s_{i-1}", ROWS_ONE, 1, q, a, a, "attention_size (a)",
              "the query: the decoder's state mapped to attention_size numbers, the width in "
              "which the additive score compares it with each source word; attention_size is "
              "a free choice (model.attention_size), not the width of anything else");
    explain_add_block(out, ps, "U_a h + b_a", "U_a h_j + b_a", ROWS_SOURCE, S, ws->keys, a, a,
              "attention_size (a)",
              "the keys: each annotation mapped to the same attention_size numbers (once per "
              "sentence: they do not depend on the step)");
    ExplainTensor *sum = explain_add_tensor(out, "sum", "W_a s_{i-1} + U_a h_j + b_a",
                                            ROWS_SOURCE, S,
                             explain_slice_width(ps, a), "attention_size (a)",
                             "the query added to every key: this state and each source word "
                             "combined (formed here to show it; the model adds and takes the "
                             "tanh in one pass)");
    for (int j = 0; j < S; j++)
        for (int u = 0; u < sum->cols; u++)
            sum->values[(size_t)j * sum->cols + u] =
                (real)(q[explain_slice_from(ps, a) + u] + ws->keys[(size_t)j * a + explain_slice_from(ps, a) + u]);
    explain_add_block(out, ps, "tanh", "tanh(W_a s_{i-1} + U_a h_j + b_a)", ROWS_SOURCE, S,
              ws->kept.pre, a, a, "attention_size (a)",
              "squashed into (-1, 1): the score's hidden layer, attention_size values per "
              "source word");
    explain_add_per_head(out, ps, "scores", "e_ij = v_a . tanh(...)", ws->kept.scores, ps->S, "source words",
                 "the scores: v_a reads each row of the hidden layer down to one number, how "
                 "well that source word answers the decoder's question (any real number)");
}

/* dot, general and scaled_dot: products of a query-side and a key-side vector */
static void add_products(ExplainStep *out, const ExplainPass *ps)
{
    const Workspace *ws = ps->ws;
    const int a = ps->a, p = ps->p, S = ps->S;
    switch (ps->ad.score) {
    case SCORE_DOT:
        explain_add_per_head(out, ps, "scores", "e_ij = s_{i-1} . h_j", ws->kept.scores, ps->S, "source words",
                     "the scores: the decoder's state against each annotation as they are, "
                     "one dot product each (so decoder_size must equal d_h)");
        break;
    case SCORE_GENERAL:
        explain_add_block(out, ps, "W_g h", "W_g h_j", ROWS_SOURCE, S, ws->keys, p, p, "decoder_size (p)",
                  "each annotation mapped into the decoder state's space, so that the two can "
                  "be compared (once per sentence)");
        explain_add_per_head(out, ps, "scores", "e_ij = s_{i-1} . W_g h_j", ws->kept.scores, ps->S, "source words",
                     "the scores: the decoder's state against each mapped annotation, one dot "
                     "product each");
        break;
    case SCORE_SCALED_DOT:
        explain_add_block(out, ps, "W_q s", "W_q s_{i-1}", ROWS_ONE, 1,
                  ws->dec.query + (size_t)ws->dec.state_row[ps->i] * a, a, a, "attention_size (a)",
                  "the query: the decoder's state mapped to attention_size numbers");
        explain_add_block(out, ps, "W_k h", "W_k h_j", ROWS_SOURCE, S, ws->keys, a, a,
                  "attention_size (a)",
                  "the keys: each annotation mapped to the same attention_size numbers (once "
                  "per sentence)");
        explain_add_per_head(out, ps, "scores", "e_ij = (W_q s_{i-1}) . (W_k h_j) / sqrt(a / H)",
                     ws->kept.scores, ps->S, "source words",
                     "the scores: query against each key, divided by the square root of the "
                     "width compared, so that wide vectors do not push the softmax to 0 and 1");
        break;
    case SCORE_ADDITIVE:
    case SCORE_NONE:
        break;
    }
}

/* alpha, each annotation times its weight, and their sum, the context */
static void add_weights_and_context(ExplainStep *out, const ExplainPass *ps, int m)
{
    const Workspace *ws = ps->ws;
    const int S = ps->S, d_h = ps->d_h, H = ps->H, vh = d_h / H;
    const real *alpha = ws->dec.alpha_heads + (size_t)ps->i * H * S;
    explain_add_per_head(out, ps, "alpha", "alpha_ij = softmax_j(e_ij)", alpha, ps->S, "source words",
                 "the weights: the scores made positive and summing to 1 over the source "
                 "words; the alignment the heatmaps draw");
    const int in_width = m + d_h;
    const real *c = ws->dec.in + (size_t)ws->dec.step_row[ps->i] * in_width + m;
    if (ws->hard.mode == CONTEXT_ARGMAX) {
        /* each head reads the one position it weighs most: no weighted sum */
        explain_add_block(out, ps, "context", "c_i = [h_{j*(1)} ; ... ; h_{j*(H)}]", ROWS_ONE, 1, c,
                  in_width, d_h, "d_h (the annotation width)",
                  "the context, read where each head's weight is largest (argmax attention: "
                  "each head takes its slice of that one annotation, not a weighted sum)");
        return;
    }
    ExplainTensor *t = explain_add_tensor(out, "alpha h", "alpha_ij h_j", ROWS_SOURCE, S,
                                          explain_slice_width(ps, d_h),
                           "d_h (the annotation width)",
                           "each annotation scaled by its weight (formed here to show it; the "
                           "model sums them in one pass): the context is the sum of these rows");
    for (int j = 0; j < S; j++)
        for (int u = 0; u < t->cols; u++) {
            const int col = explain_slice_from(ps, d_h) + u, k = col / vh;
            t->values[(size_t)j * t->cols + u] =
                (real)(alpha[(size_t)k * S + j] * ws->enc.H[(size_t)j * d_h + col]);
        }
    explain_add_block(out, ps, "context", "c_i = sum_j alpha_ij h_j", ROWS_ONE, 1, c, in_width, d_h,
              "d_h (the annotation width)",
              H > 1 ? "the context: each head's weighted sum of its slice of the annotations, "
                      "side by side; the decoder reads it with its own state"
                    : "the context: what the decoder reads from the source at this step, "
                      "beside its own state");
}

void explain_decoder_step(ExplainStep *out, Workspace *ws, const Params *P, const Batch *bt,
                          int step, int head)
{
    const Dims *d = &ws->dims;
    assert(bt->batch_size == 1 && model_has_alignments(d));
    assert(step >= 1 && step <= bt->tgt_len[0]);
    if (model_is_transformer(d)) {
        explain_transformer_step(out, ws, P, bt, step, head, 0);
        return;
    }
    const AttnDims ad = model_attn_dims(d);
    const size_t S = (size_t)bt->src_steps;
    real *scores = xmalloc_array((size_t)ad.heads * S, sizeof(real));
    real *pre = attn_pre_width(&ad) ? xmalloc_array(S * attn_pre_width(&ad), sizeof(real)) : NULL;
    model_keep_step(ws, step - 1, scores, pre);
    model_forward(ws, P, bt);
    *out = (ExplainStep){.step = step, .heads = ad.heads, .head = head,
                         .float_values = sizeof(real) == sizeof(float)};
    const ExplainPass ps = {ws, ad, ws->S, step - 1, ad.heads, head,
                     d->dec_hidden, model_annotation_width(d), d->attn};
    add_inputs(out, &ps);
    if (ad.score == SCORE_ADDITIVE)
        add_additive(out, &ps);
    else
        add_products(out, &ps);
    add_weights_and_context(out, &ps, d->emb);
    model_keep_step(ws, -1, NULL, NULL);
    free(scores);
    free(pre);
    for (int k = 0; k < ad.heads; k++)
        out->chosen[k] = ws->hard.mode == CONTEXT_ARGMAX
                             ? ws->hard_pass.chosen[(size_t)ps.i * ad.heads + k]
                             : -1;
    explain_read_next_words(out, ws, P, ps.i);
}

/* --self's tensors after the projections: the scores, the mask, each head's weights
 * and their mean, what the position gathers, the layer's output there. */
static void add_self_attention(ExplainStep *out, const ExplainPass *ps, const SelfAttnLayerWork *lw,
                               int q, int real_len)
{
    const int S = ps->S, w = ps->d_h, H = ps->H, hd = w / H;
    const int k0 = ps->head < 0 ? 0 : ps->head, nk = ps->head < 0 ? H : 1;
    const ExplainRows rows = nk > 1 ? ROWS_HEADS : ROWS_ONE;
    ExplainTensor *e = explain_add_tensor(
        out, "scores", "q_j . k_l / sqrt(d_h / H)", rows, nk, S, "source words",
        "the scores: the query against every key, head by head on its own slices, divided by "
        "the square root of the slice's width (formed here to show them; the layer writes "
        "them where their softmax goes)");
    explain_head_scores(e, lw->qkv + (size_t)q * 3 * w, lw->qkv + w, 3 * w, S, k0, nk, hd);
    ExplainTensor *mask = explain_add_tensor(
        out, "mask", "padding mask", ROWS_ONE, 1, S, "source words",
        "1 where a key is a real word; a sentence alone has no padding, but in a batch the "
        "positions past its end get weight 0");
    for (int j = 0; j < S; j++)
        mask->values[j] = j < real_len;
    const size_t SS = (size_t)S * S;
    ExplainTensor *alpha = explain_add_tensor(
        out, "alpha", "alpha = softmax(scores)", rows, nk, S, "source words",
        "the weights of this position over every word, each head's summing to 1");
    for (int r = 0; r < nk; r++)
        for (int j = 0; j < S; j++)
            alpha->values[(size_t)r * S + j] = lw->probs[(size_t)(k0 + r) * SS + (size_t)q * S + j];
    const ExplainPass whole = {.H = 1, .head = -1};
    explain_add_block(out, &whole, "alpha mean", "the heads' mean", ROWS_ONE, 1, lw->mean + (size_t)q * S,
              S, S, "source words",
              "the mean of the heads' weights: the map alignments.jsonl holds and s2s heatmap "
              "--self draws");
    explain_add_block(out, ps, "context", "z_j = [alpha^1 V^1 ; ... ; alpha^H V^H]", ROWS_ONE, 1,
              lw->z + (size_t)q * w, w, w, "d_h",
              "each head's weighted sum of its slice of the values, side by side: what this "
              "position gathers from the sentence");
    explain_add_block(out, &whole, "out", "x'_j (the layer's output)", ROWS_ONE, 1,
              lw->out + (size_t)q * w, w, w, "d_h",
              "after W_O, the residual, the norm and the feed-forward layer: this position's "
              "row of what the next layer (or the decoder) reads");
}

void explain_self_step(ExplainStep *out, Workspace *ws, const Params *P, const Batch *bt,
                       int layer, int position, int head)
{
    const Dims *d = &ws->dims;
    assert(bt->batch_size == 1 && layer >= 1 && layer <= d->sa_layers);
    model_encode(ws, P, bt);
    const int S = ws->S, w = model_annotation_width(d), H = d->sa_heads, q = position - 1;
    const SelfAttnLayerWork *lw = &ws->enc.sa.layer[layer - 1];
    const real *x = layer == 1 ? ws->enc.sa_in : ws->enc.sa.layer[layer - 2].out;
    *out = (ExplainStep){.step = position, .self_layer = layer, .heads = H, .head = head,
                         .float_values = sizeof(real) == sizeof(float)};
    for (int k = 0; k < ATTN_MAX_HEADS; k++)
        out->chosen[k] = -1;
    const ExplainPass ps = {ws, model_attn_dims(d), S, 0, H, head, d->dec_hidden, w, d->attn};
    explain_add_block(out, &ps, "X", "X (the layer's input)", ROWS_SOURCE, S, x, w, w, "d_h",
              layer == 1 ? "what the first layer reads: one row per source word (the "
                           "encoder's output below the self-attention layers)"
                         : "what this layer reads: the layer below's output, one row per "
                           "source word");
    explain_add_block(out, &ps, "q", "q_j = x_j W_Q^T + b_Q", ROWS_ONE, 1, lw->qkv + (size_t)q * 3 * w,
              3 * w, w, "d_h", "the query of this position: what its word looks for");
    explain_add_block(out, &ps, "K", "K = X W_K^T + b_K", ROWS_SOURCE, S, lw->qkv + w, 3 * w, w, "d_h",
              "the keys: what each word offers to be found by");
    explain_add_block(out, &ps, "V", "V = X W_V^T + b_V", ROWS_SOURCE, S, lw->qkv + 2 * w, 3 * w, w, "d_h",
              "the values: what each word gives to the words that attend to it");
    add_self_attention(out, &ps, lw, q, bt->src_len[0]);
}
