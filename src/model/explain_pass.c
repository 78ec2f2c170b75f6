/* explain_pass.c: what the readers of a step share (see explain_pass.h): copying the
 * model's floats, whole or a head's slices, into ExplainTensors, and the next words. */
#include "model/explain_pass.h"

#include <math.h>

#include "model/model_pass.h"
#include "nn/ops.h"

/* The columns a head reads of a vector of `width` (its slice), or all of them. */
int explain_slice_from(const ExplainPass *ps, int width)
{
    return ps->head < 0 ? 0 : ps->head * (width / ps->H);
}

int explain_slice_width(const ExplainPass *ps, int width)
{
    return ps->head < 0 ? width : width / ps->H;
}

void explain_add_block(ExplainStep *out, const ExplainPass *ps, const char *name,
                       const char *title, ExplainRows rows_are, int rows, const real *src, int ld,
                       int width, const char *cols_are, const char *about)
{
    const int from = explain_slice_from(ps, width), cols = explain_slice_width(ps, width);
    ExplainTensor *t = explain_add_tensor(out, name, title, rows_are, rows, cols, cols_are, about);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            t->values[(size_t)r * cols + c] = src[(size_t)r * ld + from + c];
}

void explain_add_per_head(ExplainStep *out, const ExplainPass *ps, const char *name,
                          const char *title, const real *src, int cols, const char *cols_are,
                          const char *about)
{
    const int first = ps->head < 0 ? 0 : ps->head, n = ps->head < 0 ? ps->H : 1;
    ExplainTensor *t = explain_add_tensor(out, name, title, n > 1 ? ROWS_HEADS : ROWS_ONE, n, cols,
                                          cols_are, about);
    for (size_t e = 0; e < (size_t)n * cols; e++)
        t->values[e] = src[(size_t)first * cols + e];
}

/* The step's output distribution: the model's output layer and softmax (ops.h) on its
 * t_i, the readout of the step's row (with one sentence, real position i is row i). */
void explain_read_next_words(ExplainStep *out, Workspace *ws, const Params *P, int i)
{
    const int Vy = ws->dims.tgt_vocab, l = ws->dims.readout;
    const int target = ws->ro.targets[i];
    linear_forward(ws->ro.logits, ws->ro.out + (size_t)i * l, P->W_o, P->b_o, 1, l, Vy);
    softmax_xent_forward(ws->ro.logits, &target, 0, NULL, 1, Vy); /* logits become p */
    const real *prob = ws->ro.logits;
    out->n_next = Vy < EXPLAIN_TOP_WORDS ? Vy : EXPLAIN_TOP_WORDS;
    for (int r = 0; r < out->n_next; r++) {
        int best = -1;
        for (int w = 0; w < Vy; w++) {
            int taken = 0;
            for (int q = 0; q < r; q++)
                taken |= out->next_word[q] == w;
            if (!taken && (best < 0 || prob[w] > prob[best]))
                best = w;
        }
        out->next_word[r] = best;
        out->next_prob[r] = prob[best];
    }
}

void explain_head_scores(ExplainTensor *t, const real *q, const real *K, int ldk, int n, int k0,
                        int nk, int hd)
{
    const real scale = (real)(1 / sqrt((double)hd));
    for (int r = 0; r < nk; r++)
        for (int j = 0; j < n; j++) {
            real dot = 0;
            for (int u = 0; u < hd; u++)
                dot += q[(k0 + r) * hd + u] * K[(size_t)j * ldk + (k0 + r) * hd + u];
            t->values[(size_t)r * n + j] = scale * dot;
        }
}
