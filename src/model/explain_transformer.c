/* explain_transformer.c: one step of the Transformer decoder worked out (see explain.h),
 * read from the model's own teacher-forced pass: the decoder layers keep every position's
 * projections, weights and outputs (nn/transformer_decoder.h), and with one sentence
 * (B = 1) target position r is row r of each. The only values formed here are the scores
 * (the layers write them where their softmax goes), the causal mask the softmax applies,
 * and the heads' mean. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "model/explain_pass.h"

/* Each head's weights of query row i: (H, cols) from probs (H blocks of T x cols). */
static void add_weights(ExplainStep *out, const ExplainPass *ps, const char *name,
                        const char *title, const real *probs, int T, int cols, const char *cols_are,
                        const char *about)
{
    real *rows = xmalloc_array((size_t)ps->H * cols, sizeof(real));
    for (int k = 0; k < ps->H; k++)
        memcpy(rows + (size_t)k * cols, probs + ((size_t)k * T + ps->i) * cols,
               sizeof(real) * cols);
    explain_add_per_head(out, ps, name, title, rows, cols, cols_are, about);
    free(rows);
}

/* The masked self-attention of layer lw at step i: its input, the query, the cached keys
 * and values, the scores, the mask, the weights, what they gather. names[0..6]: the
 * tensors' names (--dec-self takes --self's, the step its own). */
static void add_self_attention(ExplainStep *out, const ExplainPass *ps, const TdecLayerWork *lw,
                               const real *x, int m, int T, const char *const names[7])
{
    const int i = ps->i, n = i + 1, hd = m / ps->H;
    const int k0 = ps->head < 0 ? 0 : ps->head, nk = ps->head < 0 ? ps->H : 1;
    const ExplainPass whole = {.H = 1, .head = -1};
    explain_add_block(out, &whole, names[0], "X (the layer's input)", ROWS_PREFIX, n, x, m, m,
                      "m (embedding_size)",
                      "what this layer reads at the positions so far: <s> and the words before "
                      "this step (the first layer: sqrt(m) E_y[y] + PE; above, the layer "
                      "below's output)");
    explain_add_block(out, ps, names[1], "q_i = x_i W_Q^T + b_Q", ROWS_ONE, 1,
                      lw->qkv + (size_t)i * 3 * m, 3 * m, m, "m",
                      "the query of this step: what the position being written looks for in "
                      "what is written already");
    explain_add_block(out, ps, names[2], "K = X W_K^T + b_K", ROWS_PREFIX, n, lw->qkv + m, 3 * m, m,
                      "m", "the keys of the positions so far: in decoding, cached, one new row "
                      "a step");
    explain_add_block(out, ps, names[3], "V = X W_V^T + b_V", ROWS_PREFIX, n, lw->qkv + 2 * m,
                      3 * m, m, "m", "the values of the positions so far (cached likewise)");
    ExplainTensor *e = explain_add_tensor(
        out, names[4], "q_i . k_j / sqrt(m / H)", nk > 1 ? ROWS_HEADS : ROWS_ONE, nk, n,
        "target prefix",
        "the scores against every earlier position and this one, head by head on its own "
        "slices (formed here to show them; the layer writes them where their softmax goes)");
    explain_head_scores(e, lw->qkv + (size_t)i * 3 * m, lw->qkv + m, 3 * m, n, k0, nk, hd);
    ExplainTensor *mask = explain_add_tensor(
        out, names[5], "causal mask", ROWS_ONE, 1, T, "target positions",
        "1 where the step may look: itself and the positions before it; the later ones get "
        "weight 0, so a step never reads a word it has not written yet");
    for (int j = 0; j < T; j++)
        mask->values[j] = j <= i;
    add_weights(out, ps, names[6], "alpha = softmax(scores)", lw->self_probs, T, T,
                "target positions", "each head's weights over the target positions, 0 past "
                "this step, summing to 1");
}

/* What the self-attention gathers, and (y1 not NULL) the sublayer's output. */
static void add_self_output(ExplainStep *out, const ExplainPass *ps, const TdecLayerWork *lw,
                            int m, const char *context, const char *y1)
{
    const ExplainPass whole = {.H = 1, .head = -1};
    explain_add_block(out, ps, context, "z_i = [alpha^1 V^1 ; ... ; alpha^H V^H]", ROWS_ONE, 1,
                      lw->self_z + (size_t)ps->i * m, m, m, "m",
                      "each head's weighted sum of its slice of the values, side by side: what "
                      "this step gathers from what is written");
    if (!y1)
        return;
    explain_add_block(out, &whole, y1, "y1_i = LayerNorm_1(x_i + z_i W_O^T + b_O)", ROWS_ONE, 1,
                      lw->y1 + (size_t)ps->i * m, m, m, "m",
                      "after W_O, the residual and the first norm: the query side of the "
                      "cross-attention");
}

/* The cross-attention of the layer at step i over the annotations. */
static void add_cross_attention(ExplainStep *out, const ExplainPass *ps, const TdecLayerWork *lw,
                                const real *H, int m, int d_h, int T)
{
    const int S = ps->S, i = ps->i, hd = m / ps->H;
    const int k0 = ps->head < 0 ? 0 : ps->head, nk = ps->head < 0 ? ps->H : 1;
    const ExplainPass whole = {.H = 1, .head = -1};
    explain_add_block(out, &whole, "H", "H = h_1 .. h_S", ROWS_SOURCE, S, H, d_h, d_h,
                      "d_h (the annotation width)",
                      "the annotations: per source word, what the encoder read there and "
                      "around it");
    explain_add_block(out, ps, "cross q", "qc_i = y1_i Wc_Q^T + bc_Q", ROWS_ONE, 1,
                      lw->cross_q + (size_t)i * m, m, m, "m",
                      "the cross-attention's query: what this step asks of the source");
    explain_add_block(out, ps, "cross K", "Kc = H Wc_K^T + bc_K", ROWS_SOURCE, S, lw->cross_kv,
                      2 * m, m, "m", "its keys: each annotation mapped into the decoder's width "
                      "(once per sentence; decoding computes them once)");
    explain_add_block(out, ps, "cross V", "Vc = H Wc_V^T + bc_V", ROWS_SOURCE, S,
                      lw->cross_kv + m, 2 * m, m, "m", "its values (once per sentence too)");
    ExplainTensor *e = explain_add_tensor(
        out, "scores", "qc_i . kc_j / sqrt(m / H)", nk > 1 ? ROWS_HEADS : ROWS_ONE, nk, S,
        "source words", "the scores against each source word, head by head (formed here to "
        "show them)");
    explain_head_scores(e, lw->cross_q + (size_t)i * m, lw->cross_kv, 2 * m, S, k0, nk, hd);
    add_weights(out, ps, "alpha", "alpha_ij = softmax_j(scores)", lw->cross_probs, T, S,
                "source words", "the weights over the source words, each head's summing to 1; "
                "their mean is the alignment the heatmaps draw");
    if (ps->H > 1 && ps->head < 0)
        explain_add_block(out, &whole, "alpha mean", "the heads' mean", ROWS_ONE, 1,
                          lw->cross_mean + (size_t)i * S, S, S, "source words",
                          "the mean of the heads' weights: the alignment of this step");
    explain_add_block(out, ps, "context", "c_i = [alpha^1 Vc^1 ; ... ; alpha^H Vc^H]", ROWS_ONE,
                      1, lw->cross_z + (size_t)i * m, m, m, "m",
                      "the context: each head's weighted sum of its slice of the values, what "
                      "this step reads from the source");
    explain_add_block(out, &whole, "out", "x'_i (the layer's output)", ROWS_ONE, 1,
                      lw->out + (size_t)i * m, m, m, "m",
                      "after Wc_O, the second residual and norm, and the feed-forward layer: "
                      "the row the output layer reads (the last layer) or the next layer does");
}

void explain_transformer_step(ExplainStep *out, Workspace *ws, const Params *P, const Batch *bt,
                              int step, int head, int dec_self)
{
    const Dims *d = &ws->dims;
    const TdecDims td = model_tdec_dims(d);
    model_forward(ws, P, bt);
    const int m = d->emb, T = ws->T, l = dec_self ? dec_self - 1 : td.layers - 1;
    const TdecLayerWork *lw = &ws->dec.tdec.layer[l];
    const real *x = l ? ws->dec.tdec.layer[l - 1].out : ws->dec.in;
    *out = (ExplainStep){.step = step, .dec_self = dec_self, .dec_layers = td.layers,
                         .heads = td.heads, .head = head,
                         .float_values = sizeof(real) == sizeof(float)};
    for (int k = 0; k < ATTN_MAX_HEADS; k++)
        out->chosen[k] = -1;
    const ExplainPass ps = {ws, model_attn_dims(d), ws->S, step - 1, td.heads, head,
                            m, td.memory, m};
    static const char *const SELF_NAMES[] = {"X", "q", "K", "V", "scores", "mask", "alpha"};
    static const char *const STEP_NAMES[] = {"X", "self q", "self K", "self V", "self scores",
                                             "causal mask", "self alpha"};
    add_self_attention(out, &ps, lw, x, m, T, dec_self ? SELF_NAMES : STEP_NAMES);
    if (dec_self) {
        const ExplainPass whole = {.H = 1, .head = -1};
        explain_add_block(out, &whole, "alpha mean", "the heads' mean", ROWS_ONE, 1,
                          lw->self_mean + (size_t)ps.i * T, T, T, "target positions",
                          "the mean of the heads' weights: the map s2s heatmap --dec-self draws");
        add_self_output(out, &ps, lw, m, "context", NULL);
        explain_add_block(out, &whole, "out", "x'_i (the layer's output)", ROWS_ONE, 1,
                          lw->out + (size_t)ps.i * m, m, m, "m",
                          "after W_O, the residual and norm, the cross-attention and the "
                          "feed-forward layer: this step's row of what the next layer (or the "
                          "output layer) reads");
    } else {
        add_self_output(out, &ps, lw, m, "self context", "y1");
        add_cross_attention(out, &ps, lw, ws->enc.H, m, td.memory, T);
    }
    explain_read_next_words(out, ws, P, ps.i);
}
