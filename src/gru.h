/* gru.h: the GRU cell of MODEL.md in torch.nn.GRU's gate layout, as a step pair and a
 * masked sequence pair over a batch. Input projections x W_i^T + b_i are not done here:
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

#include "real.h"

typedef struct {
    real *W_i; /* (3H, in): W_ir | W_iz | W_ig */
    real *W_h; /* (3H, H) */
    real *b_i; /* (3H) */
    real *b_h; /* (3H) */
} GruParams;

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

/* A whole sequence of S steps from the zero state, forwards (t = 0..S-1) or, with
 * reverse, backwards (t = S-1..0). xg (S*B, 3H); writes hs (S*B, H) with row stride
 * ld_h (so two directions can share one annotation matrix) and cache (S*B, 4H).
 * Padded positions (t >= len[b]) hold h = 0, so a reverse pass starts from the zero
 * state at each sentence's own last position. */
void gru_sequence_forward(real *hs, int ld_h, real *cache, const real *xg, const real *W_h,
                          const real *b_h, const int *len, int S, int B, int H, int reverse);

/* Backward of gru_sequence_forward. dhs (S*B, H, stride ld_h): the gradient reaching
 * each h_t from outside the recurrence. Overwrites dxg (S*B, 3H); accumulates dW_h,
 * db_h (one product over all steps). Scratch: dcarry (2*B*H), dhg (S*B*3H). */
void gru_sequence_backward(real *dxg, real *dW_h, real *db_h, real *dcarry, real *dhg,
                           const real *dhs, const real *hs, int ld_h, const real *cache,
                           const real *W_h, const int *len, int S, int B, int H, int reverse);

#endif
