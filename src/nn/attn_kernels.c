/* attn_kernels.c: scores, masked softmax and context of MODEL.md's attention, forward and
 * backward, for one decoder step over a batch. Borrowed buffers only. */
#include "nn/attn_kernels.h"

#include <math.h>
#include <string.h>

/* Real positions of sentence b. */
static int n_real(const int *len, int S, int b)
{
    return len ? len[b] : S;
}

/* pre = tanh(k + q) for one row of A values. restrict lets the compiler vectorise. */
SIMD_CLONES static void tanh_of_sum(real *restrict pre, const real *restrict k, const real *restrict q, int A)
{
    for (int u = 0; u < A; u++)
        pre[u] = r_tanh(k[u] + q[u]);
}

void attn_additive_scores_forward(real *e, real *pre, const real *q, const real *keys, int ld,
                                  const real *v_a, const int *len, int S, int B, int A)
{
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++) {
            size_t row = (size_t)j * B + b;
            if (j < n_real(len, S, b))
                tanh_of_sum(pre + row * ld, keys + row * ld, q + (size_t)b * ld, A);
            else /* padding: zeros, so its score below is 0 */
                memset(pre + row * ld, 0, sizeof(real) * (size_t)A);
        }
    /* e (S*B) = pre (S*B, A) . v_a (A): every score in one product */
    cblas_gemv(CblasRowMajor, CblasNoTrans, S * B, A, 1, pre, ld, v_a, 1, 0, e, 1);
}

/* a . b over n in one order whatever the caller: eight lanes (u mod 8) side by side,
 * then the tail, then the lanes added in turn */
static real dot_in_lanes(const real *restrict a, const real *restrict b, int n)
{
    real lane[8] = {0};
    int u = 0;
    for (; u + 8 <= n; u += 8)
        for (int l = 0; l < 8; l++)
            lane[l] += a[u + l] * b[u + l];
    real sum = 0;
    for (; u < n; u++)
        sum += a[u] * b[u];
    for (int l = 0; l < 8; l++)
        sum += lane[l];
    return sum;
}

void attn_additive_scores_by_row(real *e, real *pre, const real *q, const real *keys, int ld,
                                 const real *v_a, const int *len, int S, int B, int A)
{
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++) {
            size_t row = (size_t)j * B + b;
            if (j < n_real(len, S, b)) {
                tanh_of_sum(pre + row * ld, keys + row * ld, q + (size_t)b * ld, A);
                e[row] = dot_in_lanes(pre + row * ld, v_a, A);
            } else {
                memset(pre + row * ld, 0, sizeof(real) * (size_t)A);
                e[row] = 0;
            }
        }
}

/* forward: e = v . t, t = tanh(k + q): dt = de v, and through tanh dk += dq += dt (1 - t^2) */
SIMD_CLONES static void tanh_sum_backward(real *restrict dk, real *restrict dq, const real *restrict t,
                              const real *restrict v, real de, int A)
{
    for (int u = 0; u < A; u++) {
        real dpre = de * v[u] * (1 - t[u] * t[u]);
        dk[u] += dpre;
        dq[u] += dpre;
    }
}

void attn_additive_scores_backward(real *dq, real *dkeys, real *dv_a, const real *de,
                                   const real *pre, int ld, const real *v_a, const int *len,
                                   int S, int B, int A)
{
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++) {
            size_t row = (size_t)j * B + b;
            if (j < n_real(len, S, b))
                tanh_sum_backward(dkeys + row * ld, dq + (size_t)b * ld, pre + row * ld, v_a,
                                  de[row], A);
        }
    /* forward: e = pre v_a, so dv_a (A) += pre^T (A, S*B) . de (S*B); padded rows of pre are
     * zero */
    cblas_gemv(CblasRowMajor, CblasTrans, S * B, A, 1, pre, ld, de, 1, 1, dv_a, 1);
}

void attn_dot_scores_forward(real *e, const real *q, int ld_q, const real *keys, int ld_keys,
                             real scale, const int *len, int S, int B, int D)
{
    for (int b = 0; b < B; b++) {
        const real *qb = q + (size_t)b * ld_q;
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

void attn_dot_scores_backward(real *dq, real *dkeys, const real *de, const real *q, int ld_q,
                              const real *keys, int ld_keys, real scale, const int *len,
                              int S, int B, int D)
{
    for (int b = 0; b < B; b++) {
        const real *qb = q + (size_t)b * ld_q;
        real *dqb = dq + (size_t)b * ld_q;
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

/* c += w v for D values. */
SIMD_CLONES static void add_scaled(real *restrict c, const real *restrict v, real w, int D)
{
    for (int u = 0; u < D; u++)
        c[u] += w * v[u];
}

void attn_context_forward(real *c, int ld_c, const real *alpha, const real *values, int ld_v,
                          const int *len, int S, int B, int D)
{
    for (int b = 0; b < B; b++) {
        int L = n_real(len, S, b);
        if (L == 0) /* a row the caller left out: its memory may belong to others */
            continue;
        real *cb = c + (size_t)b * ld_c;
        memset(cb, 0, sizeof(real) * (size_t)D);
        for (int j = 0; j < L; j++) {
            size_t row = (size_t)j * B + b;
            add_scaled(cb, values + row * ld_v, alpha[row], D);
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
        /* forward: c = sum_j alpha_j h_j, so dalpha_j = dc . h_j (one product over the
         * sentence's positions: rows j of values are B * ld_v apart) ... */
        if (L > 0)
            cblas_gemv(CblasRowMajor, CblasNoTrans, L, D, 1, values + (size_t)b * ld_v,
                       B * ld_v, dcb, 1, 0, dalpha + b, B);
        for (int j = L; j < S; j++)
            dalpha[(size_t)j * B + b] = 0;
        /* ... and dh_j += alpha_j dc */
        for (int j = 0; j < L; j++) {
            size_t row = (size_t)j * B + b;
            add_scaled(dvalues + row * ld_v, dcb, alpha[row], D);
        }
    }
}

/* ---- hard attention ---------------------------------------------------------------- */

int attn_choose(const real *alpha, int b, int B, int L, const double *draw)
{
    int pick = 0;
    if (!draw) {
        for (int j = 1; j < L; j++)
            if (alpha[(size_t)j * B + b] > alpha[(size_t)pick * B + b])
                pick = j;
        return pick;
    }
    /* the cumulative sum in double: the same choice in the float and the double build
     * unless u falls within rounding of a boundary */
    double cum = 0;
    for (int j = 0; j < L; j++) {
        double a = alpha[(size_t)j * B + b];
        if (a > 0)
            pick = j;
        cum += a;
        if (*draw < cum)
            return j;
    }
    return pick;
}

void attn_pick_forward(real *c, int ld_c, const int *chosen, int ld_chosen, const real *values,
                       int ld_v, int B, int D)
{
    for (int b = 0; b < B; b++) {
        int j = chosen[(size_t)b * ld_chosen];
        if (j >= 0)
            memcpy(c + (size_t)b * ld_c, values + ((size_t)j * B + b) * ld_v, sizeof(real) * D);
    }
}

void attn_pick_backward(real *dvalues, int ld_v, const real *dc, int ld_c, const int *chosen,
                        int ld_chosen, int B, int D)
{
    for (int b = 0; b < B; b++) {
        int j = chosen[(size_t)b * ld_chosen];
        if (j >= 0) /* forward: c_b = values[j, b] */
            add_scaled(dvalues + ((size_t)j * B + b) * ld_v, dc + (size_t)b * ld_c, 1, D);
    }
}

double attn_entropy(const real *alpha, int b, int B, int L)
{
    double h = 0;
    for (int j = 0; j < L; j++) {
        double a = alpha[(size_t)j * B + b];
        if (a > 0)
            h -= a * log(a);
    }
    return h;
}

void attn_entropy_backward(real *dalpha, const real *alpha, const real *w, const int *len, int S,
                           int B)
{
    for (int b = 0; b < B; b++) {
        int L = n_real(len, S, b);
        if (w[b] == 0)
            continue;
        /* forward: term = - w H = w sum_j alpha_j log alpha_j, so
         * dterm/dalpha_j = w (log alpha_j + 1) */
        for (int j = 0; j < L; j++) {
            size_t row = (size_t)j * B + b;
            if (alpha[row] > 0)
                dalpha[row] += w[b] * (r_log(alpha[row]) + 1);
        }
    }
}

void attn_log_prob_backward(real *de, const real *alpha, const real *w, const int *chosen,
                            int ld_chosen, const int *len, int S, int B)
{
    for (int b = 0; b < B; b++) {
        int L = n_real(len, S, b), pick = chosen[(size_t)b * ld_chosen];
        if (w[b] == 0 || pick < 0)
            continue;
        /* forward: term = - w log alpha_pick, alpha = softmax(e), so
         * dterm/de_j = - w ([j == pick] - alpha_j) */
        for (int j = 0; j < L; j++) {
            size_t row = (size_t)j * B + b;
            de[row] -= w[b] * ((j == pick) - alpha[row]);
        }
    }
}
