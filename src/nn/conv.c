/* conv.c: the 3 x 3 convolution as im2col and one gemm, and 2 x 2 max-pooling (see
 * conv.h); borrowed buffers only. Pictures are channels last (B, N, N, C): pixel
 * (b, y, x) starts at ((b N + y) N + x) C. */
#include "nn/conv.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "nn/ops.h"

/* The offset of pixel (b, y, x) of a (B, N, N, C) picture. */
static size_t pixel(int b, int y, int x, int N, int C)
{
    return (((size_t)b * N + y) * N + x) * C;
}

/* cols (B N N, 9 C) = each pixel's 3 x 3 neighbourhood of x (B, N, N, C): row
 * (b N + y) N + x, column c * 9 + k with k = ky * 3 + kx, holds x at (y + ky - 1,
 * x + kx - 1), or 0 where that lies outside the picture (the zero padding). */
static void im2col(real *cols, const real *x, int B, int N, int C)
{
    const size_t width = (size_t)9 * C;
    static const real zeros[1] = {0};
    for (int b = 0; b < B; b++)
        for (int y = 0; y < N; y++)
            for (int x0 = 0; x0 < N; x0++) {
                real *row = cols + pixel(b, y, x0, N, 1) * width;
                /* each of the 9 neighbours' channels, or a zero for one outside: the row
                 * is then written in order (column c * 9 + k), the fastest way through */
                const real *src[9];
                size_t stride[9];
                for (int k = 0; k < 9; k++) {
                    const int sy = y + k / 3 - 1, sx = x0 + k % 3 - 1;
                    const int inside = sy >= 0 && sy < N && sx >= 0 && sx < N;
                    src[k] = inside ? x + pixel(b, sy, sx, N, C) : zeros;
                    stride[k] = inside;
                }
                for (int c = 0; c < C; c++)
                    for (int k = 0; k < 9; k++)
                        row[c * 9 + k] = src[k][c * stride[k]];
            }
}

/* The adjoint of im2col: dx (B, N, N, C) = 0, then every entry of dcols (B N N, 9 C)
 * added onto the pixel im2col copied it from (padding entries go nowhere). */
static void col2im(real *dx, const real *dcols, int B, int N, int C)
{
    const size_t width = (size_t)9 * C;
    memset(dx, 0, sizeof(real) * pixel(B, 0, 0, N, C));
    for (int b = 0; b < B; b++)
        for (int y = 0; y < N; y++)
            for (int x0 = 0; x0 < N; x0++) {
                const real *row = dcols + pixel(b, y, x0, N, 1) * width;
                for (int k = 0; k < 9; k++) {
                    const int sy = y + k / 3 - 1, sx = x0 + k % 3 - 1;
                    if (sy < 0 || sy >= N || sx < 0 || sx >= N)
                        continue;
                    real *dst = dx + pixel(b, sy, sx, N, C);
                    for (int c = 0; c < C; c++)
                        dst[c] += row[c * 9 + k];
                }
            }
}

void conv3x3_forward(real *y, real *cols, const real *x, const real *W, const real *b, int B,
                     int N, int C_in, int C_out)
{
    const int rows = B * N * N, width = 9 * C_in;
    if (rows == 0)
        return;
    im2col(cols, x, B, N, C_in);
    /* y (B N N, C_out) = cols (B N N, 9 C_in) . W^T (9 C_in, C_out) */
    matmul(CblasNoTrans, CblasTrans, rows, C_out, width, 1, cols, width, W, width, 0, y, C_out);
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < C_out; o++)
            y[(size_t)r * C_out + o] += b[o];
}

void conv3x3_backward(real *dx, real *dW, real *db, real *dcols, const real *dy,
                      const real *cols, const real *W, int B, int N, int C_in, int C_out)
{
    const int rows = B * N * N, width = 9 * C_in;
    if (rows == 0)
        return;
    /* dW (C_out, 9 C_in) += dy^T (C_out, B N N) . cols (B N N, 9 C_in) */
    matmul(CblasTrans, CblasNoTrans, C_out, width, rows, 1, dy, C_out, cols, width, 1, dW, width);
    /* db (C_out) += column sums of dy (B N N, C_out) */
    column_sums_add(db, dy, rows, C_out, C_out);
    if (!dx)
        return;
    /* dcols (B N N, 9 C_in) = dy (B N N, C_out) . W (C_out, 9 C_in), overwritten */
    matmul(CblasNoTrans, CblasNoTrans, rows, width, C_out, 1, dy, C_out, W, width, 0, dcols,
           width);
    col2im(dx, dcols, B, N, C_in);
}

#ifdef S2S_REAL_DOUBLE
/* The index of the largest of x[at + step[k]], k = 0..3: the first of equals (a later
 * one must be strictly larger), and the first NaN if there is one (nothing compares
 * larger than a NaN, so once taken it stays, and reaches the loss). */
static size_t window_argmax(const real *x, size_t at, const size_t step[4])
{
    size_t best = at;
    for (int k = 1; k < 4; k++) {
        const size_t at_k = at + step[k];
        if (x[at_k] > x[best] || (isnan(x[at_k]) && !isnan(x[best])))
            best = at_k;
    }
    return best;
}
#endif

void maxpool2x2_forward(real *y, int *argmax, const real *x, int B, int N, int C)
{
    assert(N % 2 == 0);
    const int M = N / 2;
    /* a window's four inputs in row-major order, as offsets from its top left one */
    const size_t step[4] = {0, (size_t)C, (size_t)N * C, (size_t)N * C + C};
    for (int b = 0; b < B; b++)
        for (int oy = 0; oy < M; oy++)
            for (int ox = 0; ox < M; ox++) {
                const size_t in = pixel(b, 2 * oy, 2 * ox, N, C), out = pixel(b, oy, ox, M, C);
#ifdef S2S_REAL_DOUBLE /* finite differences hold each window's choice (ops.h) */
                for (int c = 0; c < C; c++) {
                    size_t best = window_argmax(x, in + c, step);
                    int k = 0;
                    while (in + c + step[k] != best)
                        k++;
                    best = in + c + step[relu_frozen_choice(k)];
                    y[out + c] = x[best];
                    argmax[out + c] = (int)best;
                }
#else
                /* window_argmax's rule, branch-free over the channels so that the
                 * compiler can take 8 at a time: the first of equals, the first NaN */
                const real *x0 = x + in, *x1 = x0 + step[1], *x2 = x0 + step[2], *x3 = x0 + step[3];
                for (int c = 0; c < C; c++) {
                    real best = x0[c];
                    int k = 0;
                    const real v[3] = {x1[c], x2[c], x3[c]};
                    for (int j = 0; j < 3; j++) {
                        const int take = v[j] > best || (v[j] != v[j] && best == best);
                        best = take ? v[j] : best;
                        k = take ? j + 1 : k;
                    }
                    y[out + c] = best;
                    argmax[out + c] = (int)in + c + (k & 1) * C + (k >> 1) * N * C;
                }
#endif
            }
}

void maxpool2x2_backward(real *dx, const real *dy, const int *argmax, int B, int N, int C)
{
    const size_t n_out = pixel(B, 0, 0, N / 2, C);
    memset(dx, 0, sizeof(real) * pixel(B, 0, 0, N, C));
    /* the windows do not overlap: each input receives at most one output's gradient */
    for (size_t k = 0; k < n_out; k++)
        dx[argmax[k]] = dy[k];
}
