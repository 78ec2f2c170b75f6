/* real_rows.h: a padded batch's real rows, kept sentence by sentence.
 *
 * Between stages a batch travels padded and position-major: row p * B + b holds position
 * p of sentence b, P positions for the longest sentence. A Transformer layer's dense
 * products need only the real rows (p < len[b]), and at lengths uniform in 5..20 the
 * padding is a third of the rows. So the layers (nn/self_attention.c,
 * nn/transformer_decoder.c) gather the real rows on the way in, compute on them alone,
 * and scatter them back on the way out. Inside, sentence b's position p is row
 * start[b] + p: a sentence's rows lie together, which its attention heads read with
 * stride one row.
 *
 * Dropout's masks stay in the padded layout and are drawn in its row order, padded rows
 * included, as before the rows were compacted: the draws, and the reference's
 * (scripts/reference/dropout.py), do not depend on which rows are computed. */
#ifndef S2S_REAL_ROWS_H
#define S2S_REAL_ROWS_H

#include "base/mem.h"
#include "base/rng.h"
#include "nn/real.h"

typedef struct {
    int P, B;       /* positions (the longest sentence's), sentences */
    int n;          /* real rows in all: the sum of len */
    const int *len; /* (B) real positions of each sentence */
    int *start;     /* (B) sentence b's first row */
    int *padded;    /* (P*B) the padded row p * B + b of each real row (n used) */
} RealRows;

/* Carves start and padded for up to B sentences of up to P positions from ar. */
void real_rows_carve(RealRows *r, Arena *ar, int P, int B);
/* Lays out the real rows of B sentences of len (each <= P) in r's carved memory. */
void real_rows_set(RealRows *r, const int *len, int P, int B);

/* to (n, cols) = the real rows of from (P*B, cols). */
void real_rows_gather(real *to, const real *from, const RealRows *r, int cols);
/* to (P*B, cols) = from (n, cols) at the real rows, 0 in the padded ones. */
void real_rows_scatter(real *to, const real *from, const RealRows *r, int cols);
/* to (P*B, cols) += from (n, cols) at the real rows. */
void real_rows_scatter_add(real *to, const real *from, const RealRows *r, int cols);

/* Dropout at `rate` on x (n, cols): mask (P*B, cols) drawn from rng in padded row order
 * (nn/ops.h dropout_forward's draws over P*B rows), then each real row scaled by its
 * padded row's factors. */
void real_rows_dropout_forward(real *x, real *mask, const RealRows *r, int cols, double rate,
                               Pcg32 *rng);
/* dx (n, cols) *= its rows' factors in mask (P*B, cols): dropout's backward. */
void real_rows_dropout_backward(real *dx, const real *mask, const RealRows *r, int cols);

#endif
