/* sublayers.c: a post-norm Transformer layer's repeated parts (see sublayers.h). */
#include "nn/sublayers.h"

#include <string.h>

#include "nn/ops.h"

void sublayer_end_forward(const SublayerEndWork *w, const SublayerEnd *P, const real *z, int in,
                          const real *res, int rows, int d, const RealRows *rr, double rate,
                          Pcg32 *rng)
{
    /* a (rows, d) = z W^T + b in y's memory; y = LayerNorm(res + dropout(a)) */
    linear_forward_any(w->y, z, P->W, P->Wp, P->b, rows, in, d);
    if (rng)
        real_rows_dropout_forward(w->y, w->mask, rr, d, rate, rng);
    for (size_t k = 0; k < (size_t)rows * d; k++)
        w->y[k] += res[k];
    layer_norm_forward(w->y, w->xhat, w->rstd, w->y, P->gamma, P->beta, rows, d);
}

void sublayer_end_backward(real *dz, real *dres, real *scratch, const SublayerEnd *G,
                           const SublayerEnd *P, const SublayerEndWork *w, int dropped,
                           const RealRows *rr, const real *dy, const real *z, int in, int rows,
                           int d)
{
    /* forward: y = LayerNorm(u), u = res + a', a' = dropout(a): dres = du (the residual's
     * share), da (in scratch) = du * mask */
    layer_norm_backward(dres, G->gamma, G->beta, dy, w->xhat, w->rstd, P->gamma, rows, d);
    memcpy(scratch, dres, sizeof(real) * (size_t)rows * d);
    if (dropped)
        real_rows_dropout_backward(scratch, w->mask, rr, d);
    /* forward: a = z W^T + b, so dW (d, in) += da^T z, dz (rows, in) = da . W */
    linear_backward(NULL, G->W, G->b, scratch, z, P->W, rows, in, d);
    matmul(CblasNoTrans, CblasNoTrans, rows, in, d, 1, scratch, d, P->W, in, 0, dz, in);
}

const real *ffn_inner_forward(real *u, real *r, real *mask_r, const real *y, const real *W_1,
                              const real *b_1, const RealRows *rr, int d, int F, double rate,
                              Pcg32 *rng)
{
    const int rows = rr->n;
    linear_forward(u, y, W_1, b_1, rows, d, F);
    relu_forward(u, u, (size_t)rows * F);
    if (!rng)
        return u;
    memcpy(r, u, sizeof(real) * (size_t)rows * F);
    real_rows_dropout_forward(r, mask_r, rr, F, rate, rng);
    return r;
}

void ffn_inner_backward(real *dy, real *dW_1, real *db_1, real *dr, const real *u,
                        const real *mask_r, int dropped, const RealRows *rr, const real *y,
                        const real *W_1, int d, int F)
{
    const int rows = rr->n;
    /* forward: r = u * mask_r, u = relu(y W_1^T + b_1) */
    if (dropped)
        real_rows_dropout_backward(dr, mask_r, rr, F);
    relu_backward(dr, dr, u, (size_t)rows * F);
    /* dW_1 (F, d) += du^T y, dy (rows, d) += du . W_1 */
    linear_backward(dy, dW_1, db_1, dr, y, W_1, rows, d, F);
}
