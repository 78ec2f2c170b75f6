/* init_state.c: the decoder's initial states from the encoder's summary `init` (B, w0):
 * s_0 = tanh(W_s init + b_s) and, for an LSTM decoder fed by the attention-only
 * encoder, c_0 = tanh(W_c init + b_c) (model/MODEL.md). One forward/backward pair serves
 * both; only where the result lives differs (the states' first block, or the cell-state
 * slot of the cache step 0 reads). */
#include "model/model_pass.h"
#include "nn/ops.h"

void init_state_forward(real *out, int ld_out, const InitState *st)
{
    const int B = st->B, p = st->p, w0 = st->w0;
    /* out (B, p; row stride ld_out) = init (B, w0) . W^T (w0, p), then tanh(. + b) */
    matmul(CblasNoTrans, CblasTrans, B, p, w0, 1, st->init, st->ld_init, st->W, w0, 0, out,
           ld_out);
    for (int b = 0; b < B; b++)
        for (int k = 0; k < p; k++) {
            real *o = out + (size_t)b * ld_out + k;
            *o = r_tanh(*o + st->b[k]);
        }
}

void init_state_backward(real *dW, real *db, real *d_init, real *d_pre, const real *d_out,
                         const real *out, int ld_out, const InitState *st)
{
    const int B = st->B, p = st->p, w0 = st->w0;
    /* forward: out = tanh(pre), so dpre = dout (1 - out^2) */
    for (int b = 0; b < B; b++)
        for (int k = 0; k < p; k++) {
            const real y = out[(size_t)b * ld_out + k];
            d_pre[(size_t)b * p + k] = d_out[(size_t)b * p + k] * (1 - y * y);
        }
    /* forward: pre = init W^T + b, so dW (p, w0) += dpre^T (p, B) . init (B, w0), db +=
     * the column sums, and dinit (B, w0) += dpre (B, p) . W (p, w0) */
    matmul(CblasTrans, CblasNoTrans, p, w0, B, 1, d_pre, p, st->init, st->ld_init, 1, dW, w0);
    column_sums_add(db, d_pre, B, p, p);
    matmul(CblasNoTrans, CblasNoTrans, B, w0, p, 1, d_pre, p, st->W, w0, 1, d_init, st->ld_init);
}
