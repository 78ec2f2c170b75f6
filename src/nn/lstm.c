/* lstm.c: LSTM step forward and backward (see lstm.h). The hidden projection of a step
 * is one gemm over the batch; the gates are an element-wise loop. Borrowed buffers
 * only. */
#include "nn/lstm.h"

#include <string.h>

#include "nn/ops.h"
#include "nn/step_rows.h"

/* The gates of one row: on entry i, f, g, o hold W_h h (or 0) and x holds xg; c_prev is
 * the previous cell state (for the zero state any finite array, times c_scale 0, so the
 * loop has no branch). `restrict` lets the compiler vectorise without overlap tests. */
SIMD_CLONES static void gates_forward(real *restrict h, real *restrict i, real *restrict f,
                                      real *restrict g, real *restrict o, real *restrict c,
                                      real *restrict tc, const real *restrict x,
                                      const real *restrict b_h, const real *restrict c_prev,
                                      real c_scale, int H)
{
    for (int k = 0; k < H; k++) {
        i[k] = r_sigmoid(x[k] + i[k] + b_h[k]);
        f[k] = r_sigmoid(x[H + k] + f[k] + b_h[H + k]);
        g[k] = r_tanh(x[2 * H + k] + g[k] + b_h[2 * H + k]);
        o[k] = r_sigmoid(x[3 * H + k] + o[k] + b_h[3 * H + k]);
        c[k] = f[k] * (c_prev[k] * c_scale) + i[k] * g[k];
        tc[k] = r_tanh(c[k]);
        h[k] = o[k] * tc[k];
    }
}

void lstm_step_forward(real *h, real *cache, const real *xg, int ld_xg, const real *h_prev,
                       int ld_h, const real *cache_prev, const real *W_h, const real *b_h,
                       const int *len, int t, int B, int H)
{
    const int G = 4 * H, C = 6 * H;
    /* cache[:, 0:4H] (B, 4H) = h_prev (B, H) . W_h^T (H, 4H) */
    hidden_projection_forward(cache, C, h_prev, ld_h, W_h, B, H, G);
    for (int b = 0; b < B; b++) {
        real *c = cache + (size_t)b * C;
        real *hb = h + (size_t)b * ld_h;
        if (!step_row_forward(c, hb, h_prev, len, t, b, G, C, H))
            continue;
        /* the zero state: any finite array that the loop does not write, times 0 */
        const real *c_prev = cache_prev ? cache_prev + (size_t)b * C + 4 * H : b_h;
        gates_forward(hb, c, c + H, c + 2 * H, c + 3 * H, c + 4 * H, c + 5 * H,
                      xg + (size_t)b * ld_xg, b_h, c_prev, cache_prev ? 1 : 0, H);
    }
}

/* Backward through the gates of one row: from dh (to h') and dc (to c', from later
 * steps) to da (4H), the gradient of the gate pre-activations, and dc, overwritten with
 * the gradient reaching c. c_prev as in gates_forward. */
SIMD_CLONES static void gates_backward(real *restrict da, real *restrict dc,
                                       const real *restrict dh, const real *restrict i,
                                       const real *restrict f, const real *restrict g,
                                       const real *restrict o, const real *restrict tc,
                                       const real *restrict c_prev, real c_scale, int H)
{
    for (int k = 0; k < H; k++) {
        /* forward: h' = o tanh(c') */
        real d_o = dh[k] * tc[k];
        real dct = dc[k] + dh[k] * o[k] * (1 - tc[k] * tc[k]);
        /* forward: c' = f c + i g */
        real di = dct * g[k];
        real dg = dct * i[k];
        real df = dct * (c_prev[k] * c_scale);
        dc[k] = dct * f[k];
        /* forward: sigmoid gates i, f, o and the tanh gate g */
        da[k] = di * i[k] * (1 - i[k]);
        da[H + k] = df * f[k] * (1 - f[k]);
        da[2 * H + k] = dg * (1 - g[k] * g[k]);
        da[3 * H + k] = d_o * o[k] * (1 - o[k]);
    }
}

void lstm_step_backward(real *dh_prev, real *dcell, real *dxg, int ld_dxg, real *dhg,
                        real *dW_h, real *db_h, const real *dh, int ld_dh, const real *cache,
                        const real *h_prev, int ld_h, const real *cache_prev, const real *W_h,
                        const int *len, int t, int B, int H)
{
    const int G = 4 * H, C = 6 * H;
    for (int b = 0; b < B; b++) {
        real *dx = dxg + (size_t)b * ld_dxg;
        real *da = dhg + (size_t)b * G;
        real *dc = dcell + (size_t)b * H;
        if (!step_row_backward(dx, da, len, t, b, G)) {
            memset(dc, 0, sizeof(real) * (size_t)H); /* no gradient reaches its cell state */
            continue;
        }
        const real *c = cache + (size_t)b * C;
        const real *c_prev = cache_prev ? cache_prev + (size_t)b * C + 4 * H : c;
        gates_backward(da, dc, dh + (size_t)b * ld_dh, c, c + H, c + 2 * H, c + 3 * H,
                       c + 5 * H, c_prev, cache_prev ? 1 : 0, H);
        /* the input and the hidden projections enter the same pre-activations */
        memcpy(dx, da, sizeof(real) * (size_t)G);
    }
    /* forward: hg = h_prev W_h^T + b_h */
    hidden_projection_backward(dh_prev, ld_dh, dW_h, db_h, dhg, h_prev, ld_h, W_h, B, H, G);
}
