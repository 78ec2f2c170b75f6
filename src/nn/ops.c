/* ops.c: linear, embedding, tanh, relu, layer normalisation, dropout and softmax
 * cross-entropy kernels (see ops.h); borrowed buffers only. */
#include "nn/ops.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

void linear_forward(real *y, const real *x, const real *W, const real *b,
                    int rows, int in, int out)
{
    if (rows == 0)
        return;
    /* y (rows, out) = x (rows, in) . W^T (in, out) */
    matmul(CblasNoTrans, CblasTrans, rows, out, in,
               1, x, in, W, in, 0, y, out);
    if (b)
        for (int r = 0; r < rows; r++)
            for (int o = 0; o < out; o++)
                y[(size_t)r * out + o] += b[o];
}

void pack_panels(real *Wp, const real *W, int out, int in)
{
    for (int c0 = 0; c0 < out; c0 += PANEL_COLUMNS) {
        const int w = out - c0 < PANEL_COLUMNS ? out - c0 : PANEL_COLUMNS;
        real *panel = Wp + (size_t)c0 * in;
        for (int j = 0; j < w; j++)
            for (int k = 0; k < in; k++)
                panel[(size_t)k * w + j] = W[(size_t)(c0 + j) * in + k];
    }
}

/* y (rows, w; row stride ldy) = x (rows, in; row stride ldx) . panel (in, w), each output
 * summed over k in order: what a row gets never depends on the rows beside it. */
SIMD_CLONES static void panel_product(real *y, int ldy, const real *x, int ldx, const real *panel,
                                      int rows, int in, int w)
{
    for (int r = 0; r < rows; r++) {
        real acc[PANEL_COLUMNS] = {0};
        for (int k = 0; k < in; k++) {
            const real xk = x[(size_t)r * ldx + k], *p = panel + (size_t)k * w;
            for (int j = 0; j < w; j++)
                acc[j] += xk * p[j];
        }
        memcpy(y + (size_t)r * ldy, acc, sizeof(real) * w);
    }
}

void packed_product(real *y, int ldy, const real *x, int ldx, const real *Wp, int rows, int in,
                    int out)
{
    if (rows == 0)
        return;
    for (int c0 = 0; c0 < out; c0 += PANEL_COLUMNS) {
        /* y[:, c0 .. c0 + w) (rows, w) = x (rows, in) . panel (in, w): a whole panel by
         * libxsmm's kernel (which, too, sums each output over k in order, whatever the
         * rows), a narrower one by panel_product, never BLAS's (one row would take its
         * matrix-vector path, whose sums run in another order). libxsmm's kernels for
         * outputs 2 to 16 wide run across the rows instead, and a row's sums then depend
         * on how many rows there are (measured with libxsmm 1.17's AVX2 kernels). */
        const int w = out - c0 < PANEL_COLUMNS ? out - c0 : PANEL_COLUMNS;
        const real *panel = Wp + (size_t)c0 * in;
#ifndef S2S_REAL_DOUBLE
        if (w == PANEL_COLUMNS &&
            small_gemm_always(CblasNoTrans, CblasNoTrans, rows, w, in, x, ldx, panel, w, 0,
                              y + c0, ldy))
            continue;
#endif
        panel_product(y + c0, ldy, x, ldx, panel, rows, in, w);
    }
}

void linear_forward_packed(real *y, const real *x, const real *Wp, const real *b,
                           int rows, int in, int out)
{
    packed_product(y, out, x, in, Wp, rows, in, out);
    if (b)
        for (int r = 0; r < rows; r++)
            for (int o = 0; o < out; o++)
                y[(size_t)r * out + o] += b[o];
}

void linear_forward_any(real *y, const real *x, const real *W, const real *Wp, const real *b,
                        int rows, int in, int out)
{
    if (Wp)
        linear_forward_packed(y, x, Wp, b, rows, in, out);
    else
        linear_forward(y, x, W, b, rows, in, out);
}

void linear_backward(real *dx, real *dW, real *db, const real *dy, const real *x,
                     const real *W, int rows, int in, int out)
{
    if (rows == 0)
        return;
    /* forward: y = x W^T + b */
    if (dx) /* dx (rows, in) += dy (rows, out) . W (out, in) */
        matmul(CblasNoTrans, CblasNoTrans, rows, in, out,
                   1, dy, out, W, in, 1, dx, in);
    /* dW (out, in) += dy^T (out, rows) . x (rows, in) */
    matmul(CblasTrans, CblasNoTrans, out, in, rows,
               1, dy, out, x, in, 1, dW, in);
    if (db)
        column_sums_add(db, dy, rows, out, out);
}

void hidden_projection_forward(real *hg, int ld_hg, const real *h_prev, int ld_h,
                               const real *W_h, int B, int H, int G)
{
    if (h_prev && W_h)
        matmul(CblasNoTrans, CblasTrans, B, G, H, 1, h_prev, ld_h, W_h, H, 0, hg, ld_hg);
}

void hidden_projection_backward(real *dh_prev, int ld_dh, real *dW_h, real *db_h, const real *dhg,
                                const real *h_prev, int ld_h, const real *W_h, int B, int H, int G)
{
    if (dW_h) {
        column_sums_add(db_h, dhg, B, G, G);
        /* dW_h (G, H) += dhg^T (G, B) . h_prev (B, H) */
        if (h_prev)
            matmul(CblasTrans, CblasNoTrans, G, H, B, 1, dhg, G, h_prev, ld_h, 1, dW_h, H);
    }
    /* dh_prev (B, H) += dhg (B, G) . W_h (G, H) */
    if (dh_prev && h_prev)
        matmul(CblasNoTrans, CblasNoTrans, B, H, G, 1, dhg, G, W_h, H, 1, dh_prev, ld_dh);
}

SIMD_CLONES void column_sums_add(real *sums, const real *m, int rows, int cols, int ld)
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

SIMD_CLONES void tanh_forward(real *y, const real *x, size_t n)
{
    for (size_t k = 0; k < n; k++)
        y[k] = r_tanh(x[k]);
}

SIMD_CLONES void tanh_backward(real *dx, const real *dy, const real *y, size_t n)
{
    for (size_t k = 0; k < n; k++)
        dx[k] = dy[k] * (1 - y[k] * y[k]);
}

#ifdef S2S_REAL_DOUBLE
/* The frozen pattern (ops.h): one byte per input relu_forward has seen since the
 * recording began; the replay reads it back in the same order. Test code only. */
static ReluMode relu_mode;
static unsigned char *relu_tape;
static size_t relu_taped, relu_tape_cap, relu_at;

/* ... and the choices of max-pooling's windows, on a tape of their own */
static unsigned char *choice_tape;
static size_t choices_taped, choice_tape_cap, choice_at;

void relu_freeze(ReluMode mode)
{
    relu_mode = mode;
    relu_at = choice_at = 0;
    if (mode == RELU_RECORD)
        relu_taped = choices_taped = 0;
    if (mode == RELU_FREE) {
        free(relu_tape);
        free(choice_tape);
        relu_tape = choice_tape = NULL;
        relu_taped = relu_tape_cap = choices_taped = choice_tape_cap = 0;
    }
}

int relu_frozen_choice(int choice)
{
    if (relu_mode == RELU_RECORD) {
        if (choices_taped == choice_tape_cap) {
            choice_tape_cap = choice_tape_cap * 2 + 1024;
            choice_tape = xrealloc_array(choice_tape, choice_tape_cap, 1);
        }
        choice_tape[choices_taped++] = (unsigned char)choice;
    } else if (relu_mode == RELU_REPLAY) {
        assert(choice_at < choices_taped);
        choice = choice_tape[choice_at++];
    }
    return choice;
}

void relu_forward(real *y, const real *x, size_t n)
{
    if (relu_mode == RELU_RECORD && relu_taped + n > relu_tape_cap) {
        relu_tape_cap = (relu_taped + n) * 2;
        relu_tape = xrealloc_array(relu_tape, relu_tape_cap, 1);
    }
    /* a replay runs the forward pass that was recorded: the same calls, in order */
    assert(relu_mode != RELU_REPLAY || relu_at + n <= relu_taped);
    for (size_t k = 0; k < n; k++) {
        int on = x[k] > 0;
        if (relu_mode == RELU_RECORD)
            relu_tape[relu_taped++] = (unsigned char)on;
        else if (relu_mode == RELU_REPLAY)
            on = relu_tape[relu_at++];
        y[k] = on ? x[k] : 0;
    }
}
#else
SIMD_CLONES void relu_forward(real *y, const real *x, size_t n)
{
    for (size_t k = 0; k < n; k++)
        y[k] = x[k] > 0 ? x[k] : 0;
}
#endif

SIMD_CLONES void relu_backward(real *dx, const real *dy, const real *y, size_t n)
{
    for (size_t k = 0; k < n; k++)
        dx[k] = y[k] > 0 ? dy[k] : 0;
}

void layer_norm_forward(real *y, real *xhat, real *rstd, const real *x, const real *gamma,
                        const real *beta, int rows, int d)
{
    for (int r = 0; r < rows; r++) {
        const real *xr = x + (size_t)r * d;
        real *hr = xhat + (size_t)r * d, *yr = y + (size_t)r * d;
        /* two passes in double: the mean, then the mean square of the deviations */
        double mean = 0, var = 0;
        for (int k = 0; k < d; k++)
            mean += xr[k];
        mean /= d;
        for (int k = 0; k < d; k++)
            var += (xr[k] - mean) * (xr[k] - mean);
        var /= d;
        const double inv = 1 / sqrt(var + LAYER_NORM_EPS);
        rstd[r] = (real)inv;
        for (int k = 0; k < d; k++) {
            hr[k] = (real)((xr[k] - mean) * inv);
            yr[k] = gamma[k] * hr[k] + beta[k];
        }
    }
}

void layer_norm_backward(real *dx, real *dgamma, real *dbeta, const real *dy, const real *xhat,
                         const real *rstd, const real *gamma, int rows, int d)
{
    for (int r = 0; r < rows; r++) {
        const real *dyr = dy + (size_t)r * d, *hr = xhat + (size_t)r * d;
        real *dxr = dx + (size_t)r * d;
        /* forward: y = gamma xhat + beta; xhat = (x - mean) rstd, where mean and rstd
         * depend on every x_k of the row: the two means below are their share */
        double mean_dxhat = 0, mean_dxhat_xhat = 0;
        for (int k = 0; k < d; k++) {
            const double dxhat = (double)gamma[k] * dyr[k];
            mean_dxhat += dxhat;
            mean_dxhat_xhat += dxhat * hr[k];
            dgamma[k] += dyr[k] * hr[k];
            dbeta[k] += dyr[k];
        }
        mean_dxhat /= d;
        mean_dxhat_xhat /= d;
        for (int k = 0; k < d; k++)
            dxr[k] = (real)(rstd[r] * ((double)gamma[k] * dyr[k] - mean_dxhat - hr[k] * mean_dxhat_xhat));
    }
}

void dropout_forward(real *x, int ld, real *mask, int rows, int cols, double rate, Pcg32 *rng)
{
    const real keep = (real)(1 / (1 - rate));
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++) {
            real f = pcg32_unit(rng) < rate ? 0 : keep;
            mask[(size_t)r * cols + k] = f;
            x[(size_t)r * ld + k] *= f;
        }
}

void dropout_backward(real *dx, int ld, const real *mask, int rows, int cols)
{
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++)
            dx[(size_t)r * ld + k] *= mask[(size_t)r * cols + k];
}

/* Sum and maximum of n values in eight interleaved lanes: the compiler turns each into
 * one vector operation (a plain loop is one long chain of dependent additions); the
 * lanes are combined in a fixed order, so the result is the same on every run. */
static real sum_lanes(const real *x, int n)
{
    real lane[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++)
            lane[l] += x[i + l];
    real sum = 0;
    for (int l = 0; l < 8; l++)
        sum += lane[l];
    for (; i < n; i++)
        sum += x[i];
    return sum;
}

static real max_lanes(const real *x, int n)
{
    real lane[8];
    for (int l = 0; l < 8; l++)
        lane[l] = x[0];
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++)
            lane[l] = x[i + l] > lane[l] ? x[i + l] : lane[l];
    real max = lane[0];
    for (int l = 1; l < 8; l++)
        max = lane[l] > max ? lane[l] : max;
    for (; i < n; i++)
        max = x[i] > max ? x[i] : max;
    return max;
}

SIMD_CLONES double softmax_xent_forward(real *o_to_p, const int *targets, real smoothing,
                                        double *row_nll, int rows, int V)
{
    double loss = 0;
    for (int r = 0; r < rows; r++) {
        real *o = o_to_p + (size_t)r * V;
        assert(targets[r] >= 0 && targets[r] < V);
        real max = max_lanes(o, V), target = o[targets[r]];
        /* label smoothing also weighs the mean logit: read it before o becomes p */
        double mean = smoothing > 0 ? (double)sum_lanes(o, V) / V : 0;
        for (int v = 0; v < V; v++)
            o[v] = r_exp(o[v] - max);
        real sum = sum_lanes(o, V);
        /* loss_r = log sum_v exp(o_v) - o_target; smoothed, the target's share is
         * 1 - eps and every word's eps / V: lse - (1 - eps) o_target - eps mean_v o_v */
        if (smoothing > 0)
            loss += (double)(max + r_log(sum)) - (1 - (double)smoothing) * target - smoothing * mean;
        else
            loss += (double)(max + r_log(sum)) - (double)target;
        if (row_nll)
            row_nll[r] = (double)(max + r_log(sum)) - (double)target;
        real inv = 1 / sum;
        for (int v = 0; v < V; v++)
            o[v] *= inv;
    }
    return loss;
}

SIMD_CLONES void softmax_xent_backward(real *dlogits, const real *probs, const int *targets,
                                       real smoothing, real scale, int rows, int V)
{
    /* forward: loss_r = lse_r - (1 - eps) o[y_r] - eps mean(o), so
     * dloss_r/do_v = softmax(o)_v - (1 - eps) [v == y_r] - eps / V */
    const real uniform = scale * smoothing / V, target = scale * (1 - smoothing);
    for (int r = 0; r < rows; r++) {
        const real *pr = probs + (size_t)r * V;
        real *d = dlogits + (size_t)r * V;
        if (smoothing > 0)
            for (int v = 0; v < V; v++)
                d[v] = scale * pr[v] - uniform;
        else
            for (int v = 0; v < V; v++)
                d[v] = scale * pr[v];
        d[targets[r]] -= target;
    }
}

double sinusoid_position(int j, int u, int m)
{
    const double angle = j / pow(10000.0, (double)(u - u % 2) / m);
    return u % 2 ? cos(angle) : sin(angle);
}

void positions_forward(real *x, const real *e, int first, int positions, int rows, int m)
{
    const real scale = (real)sqrt((double)m);
    for (int p = 0; p < positions; p++)
        for (int u = 0; u < m; u++) {
            const real pe = (real)sinusoid_position(first + p, u, m);
            for (int r = 0; r < rows; r++) {
                const size_t at = ((size_t)p * rows + r) * m + u;
                x[at] = scale * e[at] + pe;
            }
        }
}
