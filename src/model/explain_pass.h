/* explain_pass.h: what the readers of a step (explain.c: the recurrent decoder's and the
 * encoder's self-attention; explain_transformer.c: the Transformer decoder's) share:
 * the pass's sizes and the helpers that copy the model's floats into ExplainTensors.
 * Internal to src/model/. */
#ifndef S2S_EXPLAIN_PASS_H
#define S2S_EXPLAIN_PASS_H

#include "model/explain.h"

/* What every reader needs of the pass: its sizes and where step i's rows are. */
typedef struct {
    const Workspace *ws;
    AttnDims ad;
    int S, i, H, head; /* head: -1 every head */
    int p, d_h, a;
} ExplainPass;

/* The columns a head reads of a vector of `width` (its slice), or all of them. */
int explain_slice_from(const ExplainPass *ps, int width);
int explain_slice_width(const ExplainPass *ps, int width);
/* rows x (the shown slice of width) from src (rows, row stride ld) */
void explain_add_block(ExplainStep *out, const ExplainPass *ps, const char *name,
                       const char *title, ExplainRows rows_are, int rows, const real *src, int ld,
                       int width, const char *cols_are, const char *about);
/* The heads' rows of an (H, cols) tensor, or the one head's. */
void explain_add_per_head(ExplainStep *out, const ExplainPass *ps, const char *name,
                          const char *title, const real *src, int cols, const char *cols_are,
                          const char *about);

/* The step's output distribution: the model's output layer and softmax (ops.h) on its
 * t_i, the readout of real target position i (with one sentence, step i's): the five
 * most probable next words into out. */
void explain_read_next_words(ExplainStep *out, Workspace *ws, const Params *P, int i);

/* t's nk rows (n wide) = the scores of the query q (heads k0 .. k0 + nk - 1, hd columns
 * each) against keys 0..n-1 (row stride ldk), scaled by 1 / sqrt(hd) as the layers scale
 * them: formed to show them (the layers write them where their softmax goes). */
void explain_head_scores(ExplainTensor *t, const real *q, const real *K, int ldk, int n, int k0,
                         int nk, int hd);

#endif
