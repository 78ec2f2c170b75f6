/* rnn_tanh.h: the plain (Elman) recurrent cell of torch.nn.RNN with tanh, one step over
 * a batch, forward and backward. Input projections come precomputed (xg), as for the
 * GRU (gru.h); sequences are cell.h's.
 *
 *   h' = tanh(xg + W_h h + b_h)        W_h (H, H), b_h (H)
 *
 * The cache of one step is (B, H): h' itself, which backward needs for tanh'. Masking
 * as in gru.h: inactive rows get h' = 0 and zero gradients. */
#ifndef S2S_RNN_TANH_H
#define S2S_RNN_TANH_H

#include "nn/real.h"

/* One step. xg (B, H) row stride ld_xg; h_prev (B, H) row stride ld_h, NULL for the
 * zero state. Writes h (B, H) with row stride ld_h and cache (B, H). */
void rnn_tanh_step_forward(real *h, real *cache, const real *xg, int ld_xg, const real *h_prev,
                           int ld_h, const real *W_h, const real *b_h, const int *len, int t,
                           int B, int H);

/* Backward of one step. dh (B, H, stride ld_dh): the whole gradient reaching h'.
 * Overwrites dxg (B, H, stride ld_dxg) and dhg (B, H) with the gradient of the
 * pre-activation; accumulates dh_prev (skipped if NULL) and dW_h, db_h unless dW_h is
 * NULL (the caller then takes all steps' in one product). */
void rnn_tanh_step_backward(real *dh_prev, real *dxg, int ld_dxg, real *dhg, real *dW_h,
                            real *db_h, const real *dh, int ld_dh, const real *cache,
                            const real *h_prev, int ld_h, const real *W_h, const int *len,
                            int t, int B, int H);

#endif
