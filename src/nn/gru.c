/* gru.c: the GRU step, forward and backward (MODEL.md, encoder and decoder).
 * The hidden projection of each step is one gemm over the batch; the gates are an
 * element-wise loop. Borrowed buffers only. */
#include "nn/gru.h"

#include "nn/ops.h"
#include "nn/step_rows.h"

/* The gates of one row: on entry r, z, hn hold W_h h (or 0); x holds xg. A function of
 * its own so that `restrict` tells the compiler the arrays never overlap, and it can
 * vectorise the loop without run-time overlap tests. */
SIMD_CLONES static void gates_forward(real *restrict r, real *restrict z, real *restrict hn,
                          real *restrict g, const real *restrict x, const real *restrict b_h,
                          int H)
{
    for (int k = 0; k < H; k++) {
        r[k] = r_sigmoid(x[k] + r[k] + b_h[k]);
        z[k] = r_sigmoid(x[H + k] + z[k] + b_h[H + k]);
        hn[k] = hn[k] + b_h[2 * H + k];
        g[k] = r_tanh(x[2 * H + k] + r[k] * hn[k]);
    }
}

SIMD_CLONES void gru_step_forward(real *h, real *cache, const real *xg, int ld_xg, const real *h_prev,
                      int ld_h, const real *W_h, const real *b_h, const int *len, int t,
                      int B, int H)
{
    const int G = 3 * H, C = 4 * H;
    /* cache[:, 0:3H] (B, 3H) = h_prev (B, H) . W_h^T (H, 3H): [W_hr h | W_hz h | W_hg h] */
    hidden_projection_forward(cache, C, h_prev, ld_h, W_h, B, H, G);
    for (int b = 0; b < B; b++) {
        real *c = cache + (size_t)b * C;
        real *hb = h + (size_t)b * ld_h;
        if (!step_row_forward(c, hb, h_prev, len, t, b, G, C, H))
            continue;
        const real *x = xg + (size_t)b * ld_xg;
        real *r = c, *z = c + H, *hn = c + 2 * H, *g = c + 3 * H;
        gates_forward(r, z, hn, g, x, b_h, H);
        if (h_prev) {
            const real *hp = h_prev + (size_t)b * ld_h;
            for (int k = 0; k < H; k++)
                hb[k] = (1 - z[k]) * g[k] + z[k] * hp[k];
        } else {
            for (int k = 0; k < H; k++)
                hb[k] = (1 - z[k]) * g[k];
        }
    }
}

/* Backward through the gates of one row: writes dx (3H), the gradient of xg, and dhg
 * (3H), that of the hidden projections. The previous state is hp[k] * hp_scale: the
 * zero state comes as any finite array with scale 0, so the loop has no branch and
 * vectorises. */
SIMD_CLONES static void gates_backward(real *restrict dx, real *restrict dhg, const real *restrict dh,
                           const real *restrict r, const real *restrict z,
                           const real *restrict hn, const real *restrict g,
                           const real *restrict hp, real hp_scale, int H)
{
    for (int k = 0; k < H; k++) {
        real hprev = hp[k] * hp_scale;
        /* forward: h' = (1 - z) g + z h */
        real dg = dh[k] * (1 - z[k]);
        real dz = dh[k] * (hprev - g[k]);
        /* forward: g = tanh(xg_g + r * hn) */
        real dag = dg * (1 - g[k] * g[k]);
        real dr = dag * hn[k];
        /* forward: r = sigmoid(a_r), z = sigmoid(a_z) */
        real dar = dr * r[k] * (1 - r[k]);
        real daz = dz * z[k] * (1 - z[k]);
        dx[k] = dar;
        dx[H + k] = daz;
        dx[2 * H + k] = dag;
        /* the hidden pre-activations: a_r and a_z contain W_h h + b_h directly; hn
         * enters g only through r * hn */
        dhg[k] = dar;
        dhg[H + k] = daz;
        dhg[2 * H + k] = dag * r[k];
    }
}

void gru_step_backward(real *dh_prev, real *dxg, int ld_dxg, real *dhg, real *dW_h, real *db_h,
                       const real *dh, int ld_dh, const real *cache, const real *h_prev,
                       int ld_h, const real *W_h, const int *len, int t, int B, int H)
{
    const int G = 3 * H, C = 4 * H;
    for (int b = 0; b < B; b++) {
        real *dx = dxg + (size_t)b * ld_dxg;
        real *dhgb = dhg + (size_t)b * G;
        if (!step_row_backward(dx, dhgb, len, t, b, G))
            continue;
        const real *c = cache + (size_t)b * C;
        const real *dhb = dh + (size_t)b * ld_dh;
        const real *hp = h_prev ? h_prev + (size_t)b * ld_h : c; /* c: finite, scaled by 0 */
        gates_backward(dx, dhgb, dhb, c, c + H, c + 2 * H, c + 3 * H, hp, h_prev ? 1 : 0, H);
        if (dh_prev) { /* forward: h' = (1 - z) g + z h, so dh += dh' z */
            real *dhp = dh_prev + (size_t)b * ld_dh;
            const real *z = c + H;
            for (int k = 0; k < H; k++)
                dhp[k] += dhb[k] * z[k];
        }
    }
    /* forward: hg = h_prev W_h^T + b_h */
    hidden_projection_backward(dh_prev, ld_dh, dW_h, db_h, dhg, h_prev, ld_h, W_h, B, H, G);
}
