/* rnn_tanh.c: the tanh RNN step forward and backward (see rnn_tanh.h). Borrowed buffers
 * only. */
#include "nn/rnn_tanh.h"

#include <string.h>

#include "nn/ops.h"
#include "nn/step_rows.h"

/* h = tanh(x + a + b_h), a = W_h h_prev (or 0); the result also goes to the cache. */
SIMD_CLONES static void unit_forward(real *restrict h, real *restrict cache,
                                     const real *restrict x, const real *restrict b_h, int H)
{
    for (int k = 0; k < H; k++) {
        cache[k] = r_tanh(x[k] + cache[k] + b_h[k]);
        h[k] = cache[k];
    }
}

void rnn_tanh_step_forward(real *h, real *cache, const real *xg, int ld_xg, const real *h_prev,
                           int ld_h, const real *W_h, const real *b_h, const int *len, int t,
                           int B, int H)
{
    /* cache (B, H) = h_prev (B, H) . W_h^T (H, H) */
    hidden_projection_forward(cache, H, h_prev, ld_h, W_h, B, H, H);
    for (int b = 0; b < B; b++) {
        real *c = cache + (size_t)b * H;
        real *hb = h + (size_t)b * ld_h;
        if (!step_row_forward(c, hb, h_prev, len, t, b, H, H, H))
            continue;
        unit_forward(hb, c, xg + (size_t)b * ld_xg, b_h, H);
    }
}

void rnn_tanh_step_backward(real *dh_prev, real *dxg, int ld_dxg, real *dhg, real *dW_h,
                            real *db_h, const real *dh, int ld_dh, const real *cache,
                            const real *h_prev, int ld_h, const real *W_h, const int *len,
                            int t, int B, int H)
{
    for (int b = 0; b < B; b++) {
        real *dx = dxg + (size_t)b * ld_dxg;
        real *da = dhg + (size_t)b * H;
        if (!step_row_backward(dx, da, len, t, b, H))
            continue;
        /* forward: h' = tanh(a) */
        tanh_backward(da, dh + (size_t)b * ld_dh, cache + (size_t)b * H, (size_t)H);
        memcpy(dx, da, sizeof(real) * (size_t)H);
    }
    /* forward: a = h_prev W_h^T + b_h + xg */
    hidden_projection_backward(dh_prev, ld_dh, dW_h, db_h, dhg, h_prev, ld_h, W_h, B, H, H);
}
