/* gru.h: the GRU cell of MODEL.md in torch.nn.GRU's gate layout, as a step pair over a
 * batch (sequences of any cell are cell.h's). Input projections x W_i^T + b_i are not done here:
 * the caller computes them for all positions in one gemm (xg), since only the hidden
 * projection depends on the recurrence.
 *
 *   r = sigmoid(xg_r + W_hr h + b_hr)      z = sigmoid(xg_z + W_hz h + b_hz)
 *   g = tanh(xg_g + r * (W_hg h + b_hg))    h' = (1 - z) * g + z * h
 *
 * Weights: W_h (3H, H) with rows W_hr | W_hz | W_hg; b_h (3H). The cache of one step
 * is (B, 4H) with columns [r | z | hn | g], hn = W_hg h + b_hg (kept because r
 * multiplies it). Masking: when len is not NULL, row b takes part in step t only if
 * t < len[b]; other rows get h' = 0 and a zero cache, and receive zero gradients. */
#ifndef S2S_GRU_H
#define S2S_GRU_H

#include "nn/real.h"

/* One step. xg (B, 3H) row stride ld_xg; h_prev (B, H) row stride ld_h, or NULL for
 * the zero state. Writes h (B, H) with row stride ld_h and cache (B, 4H). */
void gru_step_forward(real *h, real *cache, const real *xg, int ld_xg, const real *h_prev,
                      int ld_h, const real *W_h, const real *b_h, const int *len, int t,
                      int B, int H);

/* Backward of one step. dh (B, H, stride ld_dh): the whole gradient reaching h.
 * Overwrites dxg (B, 3H, stride ld_dxg) with the gradient of xg and dhg (B, 3H) with
 * that of the hidden projections W_h h + b_h. Accumulates dh_prev (stride ld_dh,
 * skipped if NULL: the zero initial state), dW_h and db_h -- unless dW_h is NULL: a
 * caller that keeps every step's dhg accumulates them in one product afterwards. h_prev
 * as in forward (NULL for the zero state). */
void gru_step_backward(real *dh_prev, real *dxg, int ld_dxg, real *dhg, real *dW_h, real *db_h,
                       const real *dh, int ld_dh, const real *cache, const real *h_prev,
                       int ld_h, const real *W_h, const int *len, int t, int B, int H);

#endif
