/* context_gate.c: the gate of Show, Attend and Tell (model/MODEL.md, "Image encoder";
 * model.context_gate), for any encoder: a scalar per decoder row,
 *
 *     beta_i = sigmoid(w_beta . s_{i-1} + b_beta),
 *
 * by which the context is scaled wherever the decoder and the readout read it. Never
 * allocates. */
#include <math.h>
#include <string.h>

#include "model/model.h"

void context_gate_forward(real *c, int ld_c, real *c_raw, real *beta, const real *s_prev,
                          const real *w, const real *b, int rows, int p, int d_h)
{
    for (int r = 0; r < rows; r++) {
        const real *s = s_prev + (size_t)r * p;
        double z = b[0];
        for (int u = 0; u < p; u++)
            z += (double)w[u] * s[u];
        const real g = (real)(1 / (1 + exp(-z)));
        real *x = c + (size_t)r * ld_c;
        if (c_raw)
            memcpy(c_raw + (size_t)r * d_h, x, sizeof(real) * d_h);
        for (int u = 0; u < d_h; u++)
            x[u] *= g;
        beta[r] = g;
    }
}

void context_gate_backward(real *dc, int ld_dc, real *ds_prev, real *dw, real *db,
                           const real *c_raw, const real *beta, const real *s_prev,
                           const real *w, int rows, int p, int d_h)
{
    for (int r = 0; r < rows; r++) {
        real *g = dc + (size_t)r * ld_dc;
        const real *c = c_raw + (size_t)r * d_h, *s = s_prev + (size_t)r * p;
        /* forward: c' = beta c, so dbeta = dc' . c and dc = beta dc' */
        double dbeta = 0;
        for (int u = 0; u < d_h; u++) {
            dbeta += (double)g[u] * c[u];
            g[u] *= beta[r];
        }
        /* beta = sigmoid(z): dz = dbeta beta (1 - beta); z = w . s_{i-1} + b */
        const real dz = (real)(dbeta * beta[r] * (1 - beta[r]));
        db[0] += dz;
        for (int u = 0; u < p; u++) {
            dw[u] += dz * s[u];
            ds_prev[(size_t)r * p + u] += dz * w[u];
        }
    }
}
