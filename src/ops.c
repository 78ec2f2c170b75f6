/* ops.c: linear, embedding, tanh and softmax cross-entropy kernels (see ops.h).
 * Implements the readout and loss of MODEL.md; borrowed buffers only. */
#include "ops.h"

#include <assert.h>
#include <string.h>

void linear_forward(real *y, const real *x, const real *W, const real *b,
                    int rows, int in, int out)
{
    if (rows == 0)
        return;
    /* y (rows, out) = x (rows, in) . W^T (in, out) */
    cblas_gemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, out, in,
               1, x, in, W, in, 0, y, out);
    if (b)
        for (int r = 0; r < rows; r++)
            for (int o = 0; o < out; o++)
                y[(size_t)r * out + o] += b[o];
}

void linear_backward(real *dx, real *dW, real *db, const real *dy, const real *x,
                     const real *W, int rows, int in, int out)
{
    if (rows == 0)
        return;
    /* forward: y = x W^T + b */
    if (dx) /* dx (rows, in) += dy (rows, out) . W (out, in) */
        cblas_gemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, in, out,
                   1, dy, out, W, in, 1, dx, in);
    /* dW (out, in) += dy^T (out, rows) . x (rows, in) */
    cblas_gemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, rows,
               1, dy, out, x, in, 1, dW, in);
    if (db)
        column_sums_add(db, dy, rows, out, out);
}

void column_sums_add(real *sums, const real *m, int rows, int cols, int ld)
{
    for (int r = 0; r < rows; r++) {
        const real *row = m + (size_t)r * ld;
        for (int c = 0; c < cols; c++)
            sums[c] += row[c];
    }
}

void embedding_forward(real *out, int ld_out, const real *E, const int *ids, int n, int dim)
{
    for (int k = 0; k < n; k++)
        memcpy(out + (size_t)k * ld_out, E + (size_t)ids[k] * dim, sizeof(real) * (size_t)dim);
}

void embedding_backward(real *dE, const real *dout, int ld_dout, const int *ids, int skip_id,
                        int n, int dim)
{
    for (int k = 0; k < n; k++) {
        if (ids[k] == skip_id)
            continue;
        real *row = dE + (size_t)ids[k] * dim;
        const real *g = dout + (size_t)k * ld_dout;
        for (int c = 0; c < dim; c++)
            row[c] += g[c];
    }
}

void tanh_forward(real *y, const real *x, size_t n)
{
    for (size_t k = 0; k < n; k++)
        y[k] = r_tanh(x[k]);
}

void tanh_backward(real *dx, const real *dy, const real *y, size_t n)
{
    for (size_t k = 0; k < n; k++)
        dx[k] = dy[k] * (1 - y[k] * y[k]);
}

double softmax_xent_forward(real *lse, const real *logits, const int *targets, int rows, int V)
{
    double loss = 0;
    for (int r = 0; r < rows; r++) {
        const real *o = logits + (size_t)r * V;
        assert(targets[r] >= 0 && targets[r] < V);
        real max = o[0];
        for (int v = 1; v < V; v++)
            if (o[v] > max)
                max = o[v];
        real sum = 0;
        for (int v = 0; v < V; v++)
            sum += r_exp(o[v] - max);
        lse[r] = max + r_log(sum);
        loss += (double)lse[r] - (double)o[targets[r]];
    }
    return loss;
}

void softmax_xent_backward(real *dlogits, const real *logits, const real *lse,
                           const int *targets, real scale, int rows, int V)
{
    /* forward: loss_r = lse_r - o[y_r], so dloss_r/do_v = softmax(o)_v - [v == y_r] */
    for (int r = 0; r < rows; r++) {
        const real *o = logits + (size_t)r * V;
        real *d = dlogits + (size_t)r * V;
        for (int v = 0; v < V; v++)
            d[v] = scale * r_exp(o[v] - lse[r]);
        d[targets[r]] -= scale;
    }
}
