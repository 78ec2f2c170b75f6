/* heads.h: multi-head scaled dot-product attention of one sentence, forward and
 * backward: what the encoder's self-attention layers (self_attention.c) and the
 * Transformer decoder's self- and cross-attention (transformer_decoder.c) share.
 *
 * Head k reads columns [k hd, (k + 1) hd) of the projected queries Q, keys K and values
 * V (hd = d / H) and gives
 *     P^k = softmax_j(Q^k K^k^T / sqrt(hd))   over the real keys j < nk (causal: j <= i)
 *     z^k = P'^k V^k                            P' = P * mask (dropout on the weights)
 * and z = [z^1 ... z^H]. Rows past nq are query rows nothing reads: z is 0 there. */
#ifndef S2S_HEADS_H
#define S2S_HEADS_H

#include "base/rng.h"
#include "nn/real.h"

typedef struct {
    const real *Q, *K, *V; /* (nq, d), (nk, d), (nk, d) */
    int ldq, ldk, ldv;     /* their row strides */
    int nq, nk;            /* real queries and keys of the sentence */
    int causal;            /* 1: query i sees keys j <= i only (a decoder's prefix) */
    int heads, width;      /* H and d (H divides d) */
    int ldp;               /* row stride of a head's weights, at least nk */
    long head_stride;      /* floats from one head's weights to the next's */
} HeadsInput;

/* probs (H blocks at head_stride; query row i, key column j, row stride ldp) = each
 * head's softmax, 0 past the keys each query sees (within nq x nk); mean (NULL: skipped)
 * += the heads' mean, (nq, nk) at row stride ldp; z (nq, d; row stride ldz) overwritten,
 * its rows up to rows_z past nq zeroed. mask (laid out as probs; NULL: no dropout).
 * scratch: nq * ldp floats. */
void heads_forward(real *z, int ldz, int rows_z, real *probs, real *mean, const real *mask,
                   real *scratch, const HeadsInput *in);

/* Backward from dz (nq, d; row stride ldz): dQ, dK, dV (laid out as Q, K, V; the caller
 * zeroes them) accumulated. scratch: 2 nq * ldp floats. */
void heads_backward(real *dQ, real *dK, real *dV, const real *dz, int ldz, const real *probs,
                    const real *mask, real *scratch, const HeadsInput *in);

/* Dropout's factors for the weights of every head of B sentences, drawn from rng in
 * order (sentence, head, query row, key): for sentence b, the pairs its q_len[b] real
 * queries see -- keys j < k_len[b], or with k_len NULL (causal) j <= i -- each 0 with
 * probability rate, else 1 / (1 - rate); 0 elsewhere in its (rows, cols) blocks, one per
 * head, laid out as the weights. */
void heads_draw_masks(real *mask, const int *q_len, const int *k_len, int rows, int cols, int B,
                      int H, double rate, Pcg32 *rng);

#endif
