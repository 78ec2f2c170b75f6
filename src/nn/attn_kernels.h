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
/* The same scores, each summed over A in one fixed order of its own (eight running
 * sums, then the rest), where the one above sums them all in one BLAS product: what a
 * row gets never depends on the rows beside it, so decoding's rows may leave
 * (decode/decode.h). The same numbers to float rounding. */
void attn_additive_scores_by_row(real *e, real *pre, const real *q, const real *keys, int ld,
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

/* Hard attention (model/MODEL.md): one position instead of the weighted sum.
 * attn_choose picks row b's position among its L real ones: with a draw u in [0, 1), the
 * first j whose cumulative weight alpha_0 + ... + alpha_j exceeds u (so j with
 * probability alpha_j; rounding that leaves u above the total picks the last position
 * of non-zero weight); with draw NULL the most probable (the first of equal ones). */
int attn_choose(const real *alpha, int b, int B, int L, const double *draw);
/* c[b] = values[chosen[b], b] for the rows with chosen[b] >= 0: c (B, D) row stride
 * ld_c, values (S*B, D) row stride ld_v, chosen (B) stride ld_chosen (one head's column
 * of a (B, H) table). Other rows are left alone. */
void attn_pick_forward(real *c, int ld_c, const int *chosen, int ld_chosen, const real *values,
                       int ld_v, int B, int D);
/* Backward of attn_pick_forward: dvalues[chosen[b], b] += dc[b]. */
void attn_pick_backward(real *dvalues, int ld_v, const real *dc, int ld_c, const int *chosen,
                        int ld_chosen, int B, int D);
/* The entropy term of the surrogate, - w_b H(alpha[., b]) with H = - sum_j alpha_j log
 * alpha_j, for the rows with w[b] != 0: dalpha_j += w_b (log alpha_j + 1) over the real
 * positions (0 where alpha_j is 0: alpha log alpha -> 0). Returns nothing; the weights'
 * entropy itself is attn_entropy's. */
void attn_entropy_backward(real *dalpha, const real *alpha, const real *w, const int *len, int S,
                           int B);
/* H(alpha[., b]) over row b's L real positions. */
double attn_entropy(const real *alpha, int b, int B, int L);
/* The REINFORCE term of the surrogate, - w_b log alpha[chosen[b], b], for the rows with
 * w[b] != 0: de_j -= w_b ([j == chosen[b]] - alpha_j), written on the scores directly
 * (the softmax's Jacobian applied in closed form: no division by a small alpha). */
void attn_log_prob_backward(real *de, const real *alpha, const real *w, const int *chosen,
                            int ld_chosen, const int *len, int S, int B);

#endif
