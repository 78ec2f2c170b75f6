/* attn_kernels.h: the attention kernel of MODEL.md for one decoder step over a batch:
 * scores -> masked softmax -> weighted sum of values, each a forward/backward pair.
 * The pieces work on any given queries, keys and values (a test drives them with the
 * classic worked examples), so the model and the score variants share them.
 *
 * Layout: source-side matrices are position-major, (S, B, width): row j * B + b is
 * position j of sentence b, as the encoder writes them. Scores and weights are (S, B).
 * len (B) gives each sentence's real positions; NULL means all S are real. Padded
 * positions get weight exactly 0 and never receive a gradient. */
#ifndef S2S_ATTN_KERNELS_H
#define S2S_ATTN_KERNELS_H

#include "nn/real.h"

/* Additive (Bahdanau) scores: e[j,b] = v_a . tanh(keys[j,b] + q[b]), where the caller
 * computed q = W_a s_{i-1} (B, A) and keys = U_a h_j + b_a (S*B, A) once per batch.
 * Writes e (S*B) and pre (S*B, A) = the tanh, saved for backward. q, keys and pre have
 * row stride ld >= A (a head's slice of wider rows). */
void attn_additive_scores_forward(real *e, real *pre, const real *q, const real *keys, int ld,
                                  const real *v_a, const int *len, int S, int B, int A);
/* Accumulates dq (B, A), dkeys (S*B, A) (both row stride ld), dv_a (A) from de (S*B). */
void attn_additive_scores_backward(real *dq, real *dkeys, real *dv_a, const real *de,
                                   const real *pre, int ld, const real *v_a, const int *len,
                                   int S, int B, int A);

/* Dot-product scores: e[j,b] = scale * q[b] . keys[j,b], q (B, D) with row stride ld_q,
 * keys (S*B, D) with row stride ld_keys. scale 1 is Luong's dot, 1/sqrt(D) the scaled dot
 * product. */
void attn_dot_scores_forward(real *e, const real *q, int ld_q, const real *keys, int ld_keys,
                             real scale, const int *len, int S, int B, int D);
/* Accumulates dq (B, D, stride ld_q) and dkeys (stride ld_keys; skipped if NULL) from de. */
void attn_dot_scores_backward(real *dq, real *dkeys, const real *de, const real *q, int ld_q,
                              const real *keys, int ld_keys, real scale, const int *len,
                              int S, int B, int D);

/* alpha[., b] = softmax of e[., b] over the real positions j < len[b] (the maximum is
 * taken over real positions only); alpha = 0 at padding. Overwrites alpha (S*B). */
void attn_softmax_forward(real *alpha, const real *e, const int *len, int S, int B);
/* de = alpha * (dalpha - sum_j alpha_j dalpha_j), 0 at padding. Overwrites de (S*B). */
void attn_softmax_backward(real *de, const real *dalpha, const real *alpha, const int *len,
                           int S, int B);

/* c[b] = sum_j alpha[j,b] values[j,b]: c (B, D) with row stride ld_c, values (S*B, D)
 * with row stride ld_v. Overwrites c, except rows of length 0 (rows left out). */
void attn_context_forward(real *c, int ld_c, const real *alpha, const real *values, int ld_v,
                          const int *len, int S, int B, int D);
/* Overwrites dalpha (S*B) with dc[b] . values[j,b]; accumulates dvalues (stride ld_v)
 * += alpha[j,b] dc[b]. dc has row stride ld_c. */
void attn_context_backward(real *dalpha, real *dvalues, const real *dc, int ld_c,
                           const real *alpha, const real *values, int ld_v, const int *len,
                           int S, int B, int D);

#endif
