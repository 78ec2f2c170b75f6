/* ops.h: stateless layer kernels as forward/backward pairs: linear (one BLAS gemm per
 * product), embedding lookup, tanh, relu, layer normalisation, inverted dropout, and the
 * fused softmax + cross-entropy.
 * Kernels never allocate, print or exit. Parameter gradients are always accumulated
 * (+=); the trainer zeroes them once per step. Shapes use MODEL.md's letters. */
#ifndef S2S_OPS_H
#define S2S_OPS_H

#include <stdint.h>

#include "base/rng.h"
#include "nn/real.h"

/* y (rows, out) = x (rows, in) W^T + b, with W (out, in) and b (out) or NULL.
 * Overwrites y. */
void linear_forward(real *y, const real *x, const real *W, const real *b,
                    int rows, int in, int out);
/* Weights packed for linear_forward_packed: W (out, in) as panels of PANEL_COLUMNS outputs
 * (the last one narrower), panel c (in, w) row-major, its columns W's rows c * PANEL_COLUMNS
 * on, one panel after another: in * out floats. Decoding multiplies a few rows by the
 * same weights at every step. BLAS copies (packs) W into its own panels on every call,
 * which at a few dozen rows costs as much as the product; packed once so, libxsmm's
 * kernels read each panel where it is, front to back (W^T read in place would stride
 * a whole row of outputs between consecutive floats: a cache miss each). */
enum { PANEL_COLUMNS = 64 };
void pack_panels(real *Wp, const real *W, int out, int in);
/* y (rows, out) = x (rows, in) W^T + b from W's panels Wp, each output summed over in in
 * order whatever the rows beside it (linear_forward's to float rounding; bit for bit
 * with OpenBLAS's Cooperlake kernels up to in = 256, which sum one block in order too:
 * the golden trace's translations are the same bytes). */
void linear_forward_packed(real *y, const real *x, const real *Wp, const real *b,
                           int rows, int in, int out);
/* y = x W^T + b by W's panels Wp when there are some (linear_forward_packed), else by W
 * itself (linear_forward): the decoders' step products, packed for translation, plain for
 * validation. */
void linear_forward_any(real *y, const real *x, const real *W, const real *Wp, const real *b,
                        int rows, int in, int out);
/* The same product without the bias, x's rows ldx floats apart and y's ldy (a block of
 * a wider row: a recurrent cell's hidden projections go straight into its cache). */
void packed_product(real *y, int ldy, const real *x, int ldx, const real *Wp, int rows, int in,
                    int out);
/* Accumulates dx (rows, in) += dy W (skipped if dx is NULL), dW (out, in) += dy^T x,
 * db (out) += column sums of dy (skipped if db is NULL). */
void linear_backward(real *dx, real *dW, real *db, const real *dy, const real *x,
                     const real *W, int rows, int in, int out);

/* A recurrent cell's hidden projections of one step without b_h (the gates add it):
 * hg (B, G, row stride ld_hg) = h_prev (B, H, row stride ld_h) . W_h^T (H, G), one
 * product for the batch. h_prev NULL is the zero state: nothing is written (each row
 * zeroes its own, step_rows.h); W_h NULL: nothing either (the caller wrote hg). */
void hidden_projection_forward(real *hg, int ld_hg, const real *h_prev, int ld_h,
                               const real *W_h, int B, int H, int G);

/* Backward of a recurrent cell's hidden projection hg (B, G) = h_prev (B, H, row stride
 * ld_h) . W_h^T (H, G) + b_h, from its gradient dhg (B, G): accumulates db_h and dW_h
 * (skipped if dW_h is NULL: a caller that keeps every step's dhg takes all steps in one
 * product) and dh_prev (row stride ld_dh; skipped if NULL). h_prev NULL is the zero
 * state: no dW_h, no dh_prev. */
void hidden_projection_backward(real *dh_prev, int ld_dh, real *dW_h, real *db_h, const real *dhg,
                                const real *h_prev, int ld_h, const real *W_h, int B, int H, int G);

/* sums (cols) += column sums of m (rows, cols), row stride ld. */
void column_sums_add(real *sums, const real *m, int rows, int cols, int ld);

/* out[k] (dim, row stride ld_out) = E[ids[k]] for k < n. Overwrites out. */
void embedding_forward(real *out, int ld_out, const real *E, const int *ids, int n, int dim);
/* dE[ids[k]] += dout[k] (row stride ld_dout), except for rows whose id is skip_id
 * (pass -1 to skip none): padding positions never train the <pad> embedding. */
void embedding_backward(real *dE, const real *dout, int ld_dout, const int *ids, int skip_id,
                        int n, int dim);

/* The sinusoidal positions of Vaswani et al. (2017): PE_{j, 2t} = sin(j / 10000^(2t/m)),
 * PE_{j, 2t+1} = cos(the same), j from 0; entry u of position j for an even width m.
 * Computed in double, as torch's reference does before casting. */
double sinusoid_position(int j, int u, int m);
/* x = sqrt(m) e + PE over `positions` positions of `rows` rows each, row p * rows + r at
 * position first + p: a Transformer's input from its embeddings (x may be e). */
void positions_forward(real *x, const real *e, int first, int positions, int rows, int m);

/* y = tanh(x) for n values; y may alias x. */
void tanh_forward(real *y, const real *x, size_t n);
/* dx = dy * (1 - y^2) for n values, given y = tanh(x). Overwrites dx (which may alias
 * dy): a tanh's input has exactly one consumer in the model, so nothing to accumulate. */
void tanh_backward(real *dx, const real *dy, const real *y, size_t n);

/* y = max(x, 0) for n values; y may alias x. */
void relu_forward(real *y, const real *x, size_t n);
#ifdef S2S_REAL_DOUBLE
/* The double build's relu can be frozen for the finite differences (fdcheck.c). Near a
 * kink a difference quotient measures the kink, not the gradient; but with the pattern
 * of which inputs are positive held as it is at the point, the loss is smooth there and
 * its derivative is the analytic gradient (which uses that very pattern). RELU_RECORD:
 * relu_forward notes each input's sign, in call order; RELU_REPLAY: from the first call
 * on, it keeps the inputs whose recorded sign was positive and zeroes the others,
 * whatever their sign now; RELU_FREE: a plain relu. Each call of relu_freeze starts at
 * the first input again. */
typedef enum { RELU_FREE, RELU_RECORD, RELU_REPLAY } ReluMode;
void relu_freeze(ReluMode mode);
/* Max-pooling's windows are kinks too (conv.c): the same mode records, in call order,
 * which of its inputs each window passed on (choice, 0 to 3) and replays it. Returns the
 * choice to use: choice itself, or under RELU_REPLAY the recorded one. */
int relu_frozen_choice(int choice);
#endif
/* dx = dy where y > 0, else 0, given y = relu(x). Overwrites dx (which may alias dy). */
void relu_backward(real *dx, const real *dy, const real *y, size_t n);

/* torch.nn.LayerNorm over each row of x (rows, d): xhat = (x - mean) / sqrt(var + eps)
 * with the biased variance and eps = 1e-5, y = gamma * xhat + beta. Writes y, and xhat
 * (rows, d) and rstd = 1 / sqrt(var + eps) (rows) for backward; y may alias x. */
#define LAYER_NORM_EPS 1e-5
void layer_norm_forward(real *y, real *xhat, real *rstd, const real *x, const real *gamma,
                        const real *beta, int rows, int d);
/* Accumulates dgamma += sum over rows of dy * xhat and dbeta += sum of dy; overwrites dx
 * (rows, d; may alias dy) = rstd (dxhat - mean(dxhat) - xhat mean(dxhat * xhat)) with
 * dxhat = gamma * dy, row by row. */
void layer_norm_backward(real *dx, real *dgamma, real *dbeta, const real *dy, const real *xhat,
                         const real *rstd, const real *gamma, int rows, int d);

/* Inverted dropout of x (rows, cols, row stride ld) in place: each value kept with
 * probability 1 - rate and then scaled by 1 / (1 - rate), so that the expected value is
 * unchanged and nothing needs scaling at test time. The factors (0 or 1 / (1 - rate))
 * go to mask (rows, cols) for backward, drawn from rng row by row. */
void dropout_forward(real *x, int ld, real *mask, int rows, int cols, double rate, Pcg32 *rng);
/* Its backward: forward was x' = x * mask, so dx = dx' * mask; dx (rows, cols, row stride
 * ld) in place. */
void dropout_backward(real *dx, int ld, const real *mask, int rows, int cols);

/* Softmax cross-entropy over rows of logits (rows, V) with one target id per row:
 * replaces every row by its softmax (the largest buffer of the model is reused, and
 * backward needs no second pass of exponentials) and returns the summed loss
 * sum_r (log sum_v exp(o[r, v]) - o[r, target[r]]), accumulated in double. With label
 * smoothing eps > 0 the target of row r is (1 - eps) onehot + eps / V (torch's
 * cross_entropy with label_smoothing=eps): the loss is lse - (1 - eps) o_target -
 * eps mean_v o_v.
 * With row_nll (not NULL), row r's own unsmoothed -log p(target) goes to row_nll[r]. */
double softmax_xent_forward(real *logits_to_probs, const int *targets, real smoothing,
                            double *row_nll, int rows, int V);
/* dlogits = scale * (probs - (1 - eps) onehot(target) - eps / V), probs as
 * softmax_xent_forward left them. Overwrites dlogits, which may alias probs. */
void softmax_xent_backward(real *dlogits, const real *probs, const int *targets, real smoothing,
                           real scale, int rows, int V);

#endif
