/* sublayers.h: the parts a post-norm Transformer layer repeats around its attentions
 * (self_attention.c's encoder layers, transformer_decoder.c's decoder layers), forward and
 * backward:
 *   the end of a sublayer     y = LayerNorm(res + dropout(z W^T + b))
 *   the FFN's inner layer     r = dropout(relu(y W_1^T + b_1))
 * so that the feed-forward sublayer is its inner layer, then an end with W_2.
 * Rows are a batch's real rows (nn/real_rows.h); dropout's masks are in its padded layout,
 * drawn from rng in padded row order (rng NULL: none). Never allocates. */
#ifndef S2S_SUBLAYERS_H
#define S2S_SUBLAYERS_H

#include "base/rng.h"
#include "nn/real.h"
#include "nn/real_rows.h"

/* A sublayer end's tensors (or their gradients): W (d, in), b (d), the norm's gamma and
 * beta (d); for decoding, W's panels Wp (nn/ops.h pack_panels) or NULL. */
typedef struct {
    real *W, *b, *gamma, *beta;
    const real *Wp;
} SublayerEnd;

/* Its activations: y (rows, d) the output, xhat (rows, d) and rstd (rows) the norm's,
 * mask (P*B, d) dropout's factors. */
typedef struct {
    real *y, *xhat, *rstd, *mask;
} SublayerEndWork;

/* w->y = LayerNorm(res + dropout(z W^T + b)), z (rows, in), res (rows, d); with rng, the
 * mask is drawn into w->mask at `rate`, the rows being rr's real rows (rr->n of them). */
void sublayer_end_forward(const SublayerEndWork *w, const SublayerEnd *P, const real *z, int in,
                          const real *res, int rows, int d, const RealRows *rr, double rate,
                          Pcg32 *rng);
/* Backward from dy (rows, d): dres (rows, d; may be dy's memory) overwritten with the
 * gradient of the norm's input (the residual's share), dz (rows, in) overwritten, G's
 * tensors accumulated. dropped: whether forward drew a mask (over rr's rows). scratch:
 * rows * d floats. */
void sublayer_end_backward(real *dz, real *dres, real *scratch, const SublayerEnd *G,
                           const SublayerEnd *P, const SublayerEndWork *w, int dropped,
                           const RealRows *rr, const real *dy, const real *z, int in, int rows,
                           int d);

/* The FFN's inner layer over rr's real rows: u (n, F) = relu(y W_1^T + b_1); with rng,
 * r = dropout(u) (mask_r (P*B, F) drawn) and r is returned, else u. */
const real *ffn_inner_forward(real *u, real *r, real *mask_r, const real *y, const real *W_1,
                              const real *b_1, const RealRows *rr, int d, int F, double rate,
                              Pcg32 *rng);
/* Its backward from dr (rows, F; overwritten): dW_1, db_1 accumulated, dy (rows, d) +=
 * the input's gradient. dropped: whether forward drew mask_r. */
void ffn_inner_backward(real *dy, real *dW_1, real *db_1, real *dr, const real *u,
                        const real *mask_r, int dropped, const RealRows *rr, const real *y,
                        const real *W_1, int d, int F);

#endif
