/* step_rows.h: how the three cells' steps (gru.c, lstm.c, rnn_tanh.c) begin each row of
 * the batch, written once: the mask (cell.h: with len, row b takes part in step t only
 * if t < len[b]), what a row the mask leaves out gets (a zero h and cache forward, zero
 * gradients backward) and the zero state's hidden projections. Inline: they run once a
 * row a step, inside the cells' hot loops. */
#ifndef S2S_STEP_ROWS_H
#define S2S_STEP_ROWS_H

#include <string.h>

#include "nn/real.h"

/* Whether row b takes part in step t (len NULL: every row does). */
static inline int step_row_active(const int *len, int t, int b)
{
    return !len || t < len[b];
}

/* Row b of a step forward, given its cache row (C wide, the hidden projections of
 * hidden_projection_forward in its first G) and its h row (H wide). Returns 1 when the
 * row takes part, its projections zeroed for the zero state (h_prev NULL: the gates
 * then add just b_h); 0 when the mask leaves it out, its cache and h zeroed. */
static inline int step_row_forward(real *cache_row, real *h_row, const real *h_prev,
                                   const int *len, int t, int b, int G, int C, int H)
{
    if (!step_row_active(len, t, b)) {
        memset(cache_row, 0, sizeof(real) * (size_t)C);
        memset(h_row, 0, sizeof(real) * (size_t)H);
        return 0;
    }
    if (!h_prev)
        memset(cache_row, 0, sizeof(real) * (size_t)G);
    return 1;
}

/* Row b of a step backward: 1 when it takes part; 0 when the mask leaves it out, its
 * gradients of xg (dx_row) and of the hidden projections (dhg_row), G wide each,
 * zeroed. */
static inline int step_row_backward(real *dx_row, real *dhg_row, const int *len, int t, int b,
                                    int G)
{
    if (step_row_active(len, t, b))
        return 1;
    memset(dx_row, 0, sizeof(real) * (size_t)G);
    memset(dhg_row, 0, sizeof(real) * (size_t)G);
    return 0;
}

#endif
