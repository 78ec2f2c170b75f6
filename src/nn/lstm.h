/* lstm.h: the LSTM cell in torch.nn.LSTM's gate layout (i, f, g, o), one step over a
 * batch, forward and backward. Input projections x W_i^T + b_i come precomputed (xg),
 * as for the GRU (gru.h); sequences are cell.h's.
 *
 *   i = sigmoid(xg_i + W_hi h + b_hi)     f = sigmoid(xg_f + W_hf h + b_hf)
 *   g = tanh(xg_g + W_hg h + b_hg)         o = sigmoid(xg_o + W_ho h + b_ho)
 *   c' = f * c + i * g                     h' = o * tanh(c')
 *
 * Weights: W_h (4H, H) with rows W_hi | W_hf | W_hg | W_ho; b_h (4H). The cache of one
 * step is (B, 6H) with columns [i | f | g | o | c' | tanh c']: the cell state c' lives
 * in the cache, so the next step reads c from this step's cache. Masking as in gru.h:
 * inactive rows get h' = 0 and a zero cache (so c' = 0 too) and zero gradients. */
#ifndef S2S_LSTM_H
#define S2S_LSTM_H

#include "nn/real.h"

/* One step. xg (B, 4H) row stride ld_xg; h_prev (B, H) row stride ld_h and cache_prev
 * (B, 6H), the previous step's cache, both NULL for the zero state. Writes h (B, H)
 * with row stride ld_h and cache (B, 6H). */
void lstm_step_forward(real *h, real *cache, const real *xg, int ld_xg, const real *h_prev,
                       int ld_h, const real *cache_prev, const real *W_h, const real *b_h,
                       const int *len, int t, int B, int H);

/* Backward of one step. dh (B, H, stride ld_dh): the whole gradient reaching h'. dcell
 * (B, H): on entry the gradient reaching c' from later steps, on return the gradient
 * reaching c (0 in inactive rows). Overwrites dxg (B, 4H, stride ld_dxg) and dhg (B, 4H),
 * the gradient of the gate pre-activations (the same for the input and the hidden
 * projections). Accumulates dh_prev (stride ld_dh; skipped if NULL), and dW_h, db_h
 * unless dW_h is NULL (the caller then takes all steps' in one product). */
void lstm_step_backward(real *dh_prev, real *dcell, real *dxg, int ld_dxg, real *dhg,
                        real *dW_h, real *db_h, const real *dh, int ld_dh, const real *cache,
                        const real *h_prev, int ld_h, const real *cache_prev, const real *W_h,
                        const int *len, int t, int B, int H);

#endif
