/* conv.h: the image encoder's building blocks (model/MODEL.md, "Image encoder"): a 3 x 3
 * convolution (stride 1, zero padding 1, bias) as im2col and one gemm over the whole
 * batch, and 2 x 2 max-pooling (stride 2). ReLU is ops.h's.
 *
 * Pictures are channels last, (B, N, N, C): pixel (b, y, x) is row (b N + y) N + x, C
 * wide, so a conv's output rows are its gemm's rows and the last block's cells are
 * already annotation vectors. Weights as torch.nn.Conv2d's (C_out, C_in, 3, 3),
 * flattened: W (C_out, 9 C_in), column c * 9 + ky * 3 + kx, so torch's weights load as
 * they are. Kernels never allocate; parameter gradients are accumulated (+=). */
#ifndef S2S_CONV_H
#define S2S_CONV_H

#include "nn/real.h"

/* cols (B N N, 9 C_in): each pixel's 3 x 3 neighbourhood of x (B, N, N, C_in), zeros
 * outside the picture, column c * 9 + ky * 3 + kx holding x at (y + ky - 1, x + kx - 1);
 * then y (B N N, C_out) = cols W^T + b. cols is what backward reads. Overwrites y and
 * cols. */
void conv3x3_forward(real *y, real *cols, const real *x, const real *W, const real *b, int B,
                     int N, int C_in, int C_out);
/* From dy (B N N, C_out): dW (C_out, 9 C_in) += dy^T cols, db (C_out) += column sums of dy,
 * and, unless dx is NULL, dx (B, N, N, C_in) = the neighbourhoods' gradient dcols = dy W
 * summed back onto the pixels they were copied from (overwritten; dcols is scratch of
 * B N N 9 C_in). */
void conv3x3_backward(real *dx, real *dW, real *db, real *dcols, const real *dy,
                      const real *cols, const real *W, int B, int N, int C_in, int C_out);

/* y (B, N/2, N/2, C) = the largest of each 2 x 2 window of x (B, N, N, C), N even;
 * argmax (B N/2 N/2 C) the index into x of the value chosen. Ties go to the first in
 * the window's row-major order (as torch.nn.MaxPool2d's CPU kernel), and backward routes
 * the gradient to the same one: to exactly one input per output. A window holding a NaN
 * gives NaN (its first; torch's kernel too picks a NaN), so it reaches the loss. */
void maxpool2x2_forward(real *y, int *argmax, const real *x, int B, int N, int C);
/* dx (B, N, N, C) = 0 but dx[argmax[k]] = dy[k] (overwritten). */
void maxpool2x2_backward(real *dx, const real *dy, const int *argmax, int B, int N, int C);

#endif
