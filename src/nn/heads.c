/* heads.c: one sentence's multi-head attention (see heads.h): per head, one product for
 * the scores, a softmax over each query's row, one product for the weighted values.
 * Never allocates. */
#include "nn/heads.h"

#include <math.h>
#include <string.h>

#include "nn/ops.h"

/* The keys query row i sees. */
static int keys_seen(const HeadsInput *in, int i)
{
    return in->causal && i + 1 < in->nk ? i + 1 : in->nk;
}

/* Row i of P (ldp wide) = softmax of its first n entries; the rest of its nk set to 0. */
static void softmax_row(real *row, int n, int nk)
{
    real max = row[0], sum = 0;
    for (int j = 1; j < n; j++)
        max = row[j] > max ? row[j] : max;
    for (int j = 0; j < n; j++)
        sum += row[j] = r_exp(row[j] - max);
    const real inv = 1 / sum;
    for (int j = 0; j < n; j++)
        row[j] *= inv;
    for (int j = n; j < nk; j++)
        row[j] = 0;
}

void heads_forward(real *z, int ldz, int rows_z, real *probs, real *mean, const real *mask,
                   real *scratch, const HeadsInput *in)
{
    const int H = in->heads, hd = in->width / H, nq = in->nq, nk = in->nk, ldp = in->ldp;
    const real scale = (real)(1 / sqrt((double)hd));
    for (int k = 0; k < H; k++) {
        real *P = probs + k * in->head_stride, *zk = z + k * hd;
        /* P (nq, nk) = scale Q^k (nq, hd) . K^k^T (hd, nk), then each row's softmax over
         * the keys it sees */
        matmul_varied(CblasNoTrans, CblasTrans, nq, nk, hd, scale, in->Q + k * hd, in->ldq,
               in->K + k * hd, in->ldk, 0, P, ldp);
        for (int i = 0; i < nq; i++)
            softmax_row(P + (size_t)i * ldp, keys_seen(in, i), nk);
        if (mean)
            for (int i = 0; i < nq; i++)
                for (int j = 0; j < nk; j++)
                    mean[(size_t)i * ldp + j] += P[(size_t)i * ldp + j] / H;
        const real *used = P;
        if (mask) { /* dropout on the weights: they no longer sum to 1 */
            const real *M = mask + k * in->head_stride;
            for (int i = 0; i < nq; i++)
                for (int j = 0; j < nk; j++)
                    scratch[(size_t)i * ldp + j] = P[(size_t)i * ldp + j] * M[(size_t)i * ldp + j];
            used = scratch;
        }
        /* z^k (nq, hd) = P' (nq, nk) . V^k (nk, hd) */
        matmul_varied(CblasNoTrans, CblasNoTrans, nq, hd, nk, 1, used, ldp, in->V + k * hd, in->ldv, 0,
               zk, ldz);
        for (int i = nq; i < rows_z; i++)
            memset(zk + (size_t)i * ldz, 0, sizeof(real) * hd);
    }
}

void heads_backward(real *dQ, real *dK, real *dV, const real *dz, int ldz, const real *probs,
                    const real *mask, real *scratch, const HeadsInput *in)
{
    const int H = in->heads, hd = in->width / H, nq = in->nq, nk = in->nk, ldp = in->ldp;
    const real scale = (real)(1 / sqrt((double)hd));
    real *dropped = scratch, *dP = scratch + (size_t)nq * ldp;
    for (int k = 0; k < H; k++) {
        const real *P = probs + k * in->head_stride;
        const real *M = mask ? mask + k * in->head_stride : NULL;
        const real *dzk = dz + k * hd, *used = P;
        if (M) {
            for (int i = 0; i < nq; i++)
                for (int j = 0; j < nk; j++)
                    dropped[(size_t)i * ldp + j] = P[(size_t)i * ldp + j] * M[(size_t)i * ldp + j];
            used = dropped;
        }
        /* forward: z^k = P' V^k, so dP' (nq, nk) = dz^k (nq, hd) . V^k^T and
         * dV^k (nk, hd) += P'^T (nk, nq) . dz^k */
        matmul_varied(CblasNoTrans, CblasTrans, nq, nk, hd, 1, dzk, ldz, in->V + k * hd, in->ldv, 0, dP,
               ldp);
        matmul_varied(CblasTrans, CblasNoTrans, nk, hd, nq, 1, used, ldp, dzk, ldz, 1, dV + k * hd,
               in->ldv);
        /* forward: P' = P * M and P = softmax(E) by rows, so
         * dE_ij = P_ij (dP_ij - sum_j' P_ij' dP_ij'), with dP = dP' * M (0 where P is:
         * past the keys a query sees); E = scale Q K^T takes the scale */
        for (int i = 0; i < nq; i++) {
            const real *Pi = P + (size_t)i * ldp;
            real *dPi = dP + (size_t)i * ldp;
            if (M)
                for (int j = 0; j < nk; j++)
                    dPi[j] *= M[(size_t)i * ldp + j];
            real dot = 0;
            for (int j = 0; j < nk; j++)
                dot += Pi[j] * dPi[j];
            for (int j = 0; j < nk; j++)
                dPi[j] = scale * Pi[j] * (dPi[j] - dot);
        }
        /* forward: E = scale Q^k K^k^T, so dQ^k (nq, hd) += dE . K^k, dK^k (nk, hd) +=
         * dE^T . Q^k (the scale is in dE already) */
        matmul_varied(CblasNoTrans, CblasNoTrans, nq, hd, nk, 1, dP, ldp, in->K + k * hd, in->ldk, 1,
               dQ + k * hd, in->ldq);
        matmul_varied(CblasTrans, CblasNoTrans, nk, hd, nq, 1, dP, ldp, in->Q + k * hd, in->ldq, 1,
               dK + k * hd, in->ldk);
    }
}

void heads_draw_masks(real *mask, const int *q_len, const int *k_len, int rows, int cols, int B,
                      int H, double rate, Pcg32 *rng)
{
    const real keep = (real)(1 / (1 - rate));
    const size_t block = (size_t)rows * cols;
    for (int b = 0; b < B; b++)
        for (int k = 0; k < H; k++) {
            real *M = mask + ((size_t)b * H + k) * block;
            memset(M, 0, sizeof(real) * block);
            for (int i = 0; i < q_len[b]; i++) {
                const int seen = k_len ? k_len[b] : i + 1;
                for (int j = 0; j < seen; j++)
                    M[(size_t)i * cols + j] = pcg32_unit(rng) < rate ? 0 : keep;
            }
        }
}
