/* attention.c: scores, masked softmax and context of MODEL.md's attention, forward and
 * backward, for one decoder step over a batch. Borrowed buffers only. */
#include "attention.h"

#include <string.h>

/* Real positions of sentence b. */
static int n_real(const int *len, int S, int b)
{
    return len ? len[b] : S;
}

void attn_additive_scores_forward(real *e, real *pre, const real *q, const real *keys,
                                  const real *v_a, const int *len, int S, int B, int A)
{
    for (int b = 0; b < B; b++) {
        const real *qb = q + (size_t)b * A;
        int L = n_real(len, S, b);
        for (int j = 0; j < S; j++) {
            size_t row = (size_t)j * B + b;
            if (j >= L) {
                e[row] = 0;
                continue;
            }
            const real *k = keys + row * A;
            real *t = pre + row * A;
            real sum = 0;
            for (int u = 0; u < A; u++) {
                t[u] = r_tanh(k[u] + qb[u]);
                sum += v_a[u] * t[u];
            }
            e[row] = sum;
        }
    }
}

void attn_additive_scores_backward(real *dq, real *dkeys, real *dv_a, const real *de,
                                   const real *pre, const real *v_a, const int *len,
                                   int S, int B, int A)
{
    for (int b = 0; b < B; b++) {
        real *dqb = dq + (size_t)b * A;
        int L = n_real(len, S, b);
        for (int j = 0; j < L; j++) {
            size_t row = (size_t)j * B + b;
            const real *t = pre + row * A;
            real *dk = dkeys + row * A;
            for (int u = 0; u < A; u++) {
                /* forward: e = sum_u v_u t_u, t_u = tanh(k_u + q_u) */
                dv_a[u] += de[row] * t[u];
                real dpre = de[row] * v_a[u] * (1 - t[u] * t[u]);
                dk[u] += dpre;
                dqb[u] += dpre;
            }
        }
    }
}

void attn_dot_scores_forward(real *e, const real *q, const real *keys, int ld_keys,
                             real scale, const int *len, int S, int B, int D)
{
    for (int b = 0; b < B; b++) {
        const real *qb = q + (size_t)b * D;
        int L = n_real(len, S, b);
        for (int j = 0; j < S; j++) {
            size_t row = (size_t)j * B + b;
            if (j >= L) {
                e[row] = 0;
                continue;
            }
            const real *k = keys + row * ld_keys;
            real sum = 0;
            for (int u = 0; u < D; u++)
                sum += qb[u] * k[u];
            e[row] = scale * sum;
        }
    }
}

void attn_dot_scores_backward(real *dq, real *dkeys, const real *de, const real *q,
                              const real *keys, int ld_keys, real scale, const int *len,
                              int S, int B, int D)
{
    for (int b = 0; b < B; b++) {
        const real *qb = q + (size_t)b * D;
        real *dqb = dq + (size_t)b * D;
        int L = n_real(len, S, b);
        for (int j = 0; j < L; j++) {
            size_t row = (size_t)j * B + b;
            /* forward: e = scale * q . k */
            real g = scale * de[row];
            const real *k = keys + row * ld_keys;
            for (int u = 0; u < D; u++)
                dqb[u] += g * k[u];
            if (dkeys) {
                real *dk = dkeys + row * ld_keys;
                for (int u = 0; u < D; u++)
                    dk[u] += g * qb[u];
            }
        }
    }
}

void attn_softmax_forward(real *alpha, const real *e, const int *len, int S, int B)
{
    for (int b = 0; b < B; b++) {
        int L = n_real(len, S, b);
        real max = e[b];
        for (int j = 1; j < L; j++)
            if (e[(size_t)j * B + b] > max)
                max = e[(size_t)j * B + b];
        real sum = 0;
        for (int j = 0; j < L; j++) {
            real w = r_exp(e[(size_t)j * B + b] - max);
            alpha[(size_t)j * B + b] = w;
            sum += w;
        }
        for (int j = 0; j < L; j++)
            alpha[(size_t)j * B + b] /= sum;
        for (int j = L; j < S; j++)
            alpha[(size_t)j * B + b] = 0;
    }
}

void attn_softmax_backward(real *de, const real *dalpha, const real *alpha, const int *len,
                           int S, int B)
{
    for (int b = 0; b < B; b++) {
        int L = n_real(len, S, b);
        /* forward: alpha_j = exp(e_j) / sum_k exp(e_k), so
         * de_j = alpha_j (dalpha_j - sum_k alpha_k dalpha_k) */
        real dot = 0;
        for (int j = 0; j < L; j++)
            dot += alpha[(size_t)j * B + b] * dalpha[(size_t)j * B + b];
        for (int j = 0; j < L; j++) {
            size_t row = (size_t)j * B + b;
            de[row] = alpha[row] * (dalpha[row] - dot);
        }
        for (int j = L; j < S; j++)
            de[(size_t)j * B + b] = 0;
    }
}

void attn_context_forward(real *c, int ld_c, const real *alpha, const real *values, int ld_v,
                          const int *len, int S, int B, int D)
{
    for (int b = 0; b < B; b++) {
        real *cb = c + (size_t)b * ld_c;
        memset(cb, 0, sizeof(real) * (size_t)D);
        int L = n_real(len, S, b);
        for (int j = 0; j < L; j++) {
            size_t row = (size_t)j * B + b;
            const real *v = values + row * ld_v;
            real w = alpha[row];
            for (int u = 0; u < D; u++)
                cb[u] += w * v[u];
        }
    }
}

void attn_context_backward(real *dalpha, real *dvalues, const real *dc, int ld_c,
                           const real *alpha, const real *values, int ld_v, const int *len,
                           int S, int B, int D)
{
    for (int b = 0; b < B; b++) {
        const real *dcb = dc + (size_t)b * ld_c;
        int L = n_real(len, S, b);
        for (int j = 0; j < S; j++) {
            size_t row = (size_t)j * B + b;
            if (j >= L) {
                dalpha[row] = 0;
                continue;
            }
            /* forward: c += alpha_j h_j, so dalpha_j = dc . h_j, dh_j += alpha_j dc */
            const real *v = values + row * ld_v;
            real *dv = dvalues + row * ld_v;
            real sum = 0;
            for (int u = 0; u < D; u++) {
                sum += dcb[u] * v[u];
                dv[u] += alpha[row] * dcb[u];
            }
            dalpha[row] = sum;
        }
    }
}
