/* self_attention.h: self-attention encoder layers over the annotations (model/MODEL.md,
 * "Self-attention layers"): each is torch.nn.TransformerEncoderLayer(d, H, F,
 * activation=relu, norm_first=False) with a key padding mask, forward and backward,
 * and a stack of them. An encoder puts the stack on top of what it computes
 * (encoder_birnn.c) or is made of it (encoder_attn.c).
 *
 * In and out, the layout of the source side everywhere: (S, B, width), row j * B + b;
 * len (B) the real positions. Padded positions are masked as keys, so nothing real
 * depends on them, and the layers compute the real rows alone (nn/real_rows.h: sentence
 * b's position j at row start[b] + j, n rows); the output's padded rows are 0. torch
 * computes padded positions as queries too, and nothing reads them. */
#ifndef S2S_SELF_ATTENTION_H
#define S2S_SELF_ATTENTION_H

#include <stddef.h>

#include "base/mem.h"
#include "base/rng.h"
#include "nn/real.h"
#include "nn/real_rows.h"
#include "nn/tensor.h"

/* Self-attention layers at most (and the same in words, for messages). */
#define SA_MAX_LAYERS 6
#define SA_MAX_LAYERS_TEXT "6"

typedef struct {
    int width;  /* d: the annotations' width, in and out */
    int heads;  /* H: divides d; each head reads d / H columns of Q, K and V */
    int ffn;    /* F: the feed-forward layer's inner width */
    int layers; /* L: 0 to SA_MAX_LAYERS */
} SelfAttnDims;

/* One layer's tensors, in torch's order. W_Q, W_K, W_V lie one after another (and so do
 * their biases): together they are torch's in_proj_weight (3d, d) and in_proj_bias. */
typedef struct {
    real *W_Q, *W_K, *W_V; /* (d, d) each */
    real *b_Q, *b_K, *b_V; /* (d) each */
    real *W_O, *b_O;       /* (d, d), (d): out_proj */
    real *W_1, *b_1;       /* (F, d), (F): linear1 */
    real *W_2, *b_2;       /* (d, F), (d): linear2 */
    real *gamma_1, *beta_1, *gamma_2, *beta_2; /* (d): norm1, norm2 (gamma starts at 1) */
} SelfAttnParams;

/* Carves the L layers' tensors, named sa1.W_Q, ..., saL.beta_2. */
void sa_carve(SelfAttnParams *p, TensorCarver *c, const SelfAttnDims *d);

/* One layer's activations over a batch's n real rows: what backward needs. */
typedef struct {
    real *qkv;         /* (n, 3d) [Q ; K ; V] = x [W_Q ; W_K ; W_V]^T + b */
    real *probs;       /* (B, H, S, S) each head's softmax, query row i over key j (0
                        * outside the sentence) */
    real *mean;        /* (B, S, S) the heads' mean: what alignments.jsonl shows */
    real *z;           /* (n, d) [Z^1 ... Z^H], each head's weighted values */
    real *xhat1, *rstd1, *y;  /* norm1's (n, d), (n), and its output Y (n, d) */
    real *u;           /* (n, F) relu(Y W_1^T + b_1) */
    real *r;           /* (n, F) u after dropout (training only; without dropout the
                        * layer reads u) */
    real *xhat2, *rstd2;
    real *out;         /* (n, d) X', the layer's output */
    /* dropout's factors (training only), padded (real_rows.h): on the weights
     * (B, H, S, S), on the attention's output A (S*B, d), on u (S*B, F), on the FFN's
     * output (S*B, d) */
    real *mask_p, *mask_a, *mask_r, *mask_o;
    int dropped;       /* whether the last forward applied them */
} SelfAttnLayerWork;

typedef struct {
    SelfAttnLayerWork layer[SA_MAX_LAYERS];
    RealRows rows;       /* the last forward's real rows */
    real *x_rows;        /* (n, d) the input's real rows */
    real *out;           /* (S*B, d) the last layer's output, padded (0 in padded rows) */
    real *probs_dropped; /* (2, S, S) one head's weights after dropout, and backward's
                          * gradient of them */
    /* backward: the gradient between layers (n, d), and a layer's scratch */
    real *d_between, *d_y, *d_t, *d_r, *d_z, *d_qkv;
} SelfAttnWork;

/* Carves the stack's buffers for (B, S) from ar (a counting arena measures); dropout's
 * masks and backward's buffers only with with_backward. */
void sa_carve_work(SelfAttnWork *w, Arena *ar, const SelfAttnDims *d, int B, int S,
                   int with_backward);

/* The attention of a layer from its projections: per sentence b and head k,
 * probs = softmax(Q^k K^k^T / sqrt(d / H)) over the real keys, then z^k = probs' V^k with
 * probs' the weights after dropout (mask_p; NULL: none). qkv (n, 3d) over rr's real rows
 * (S = rr->P); writes probs, mean (NULL: skipped) and z (n, d). scratch: S*S floats. */
void sa_attend_forward(real *z, real *probs, real *mean, const real *mask_p, real *scratch,
                       const real *qkv, const RealRows *rr, int H, int d);
/* Its backward from dz (n, d): dqkv (n, 3d) overwritten. Scratch: 2 S*S floats. */
void sa_attend_backward(real *dqkv, const real *dz, const real *probs, const real *mask_p,
                        real *scratch, const real *qkv, const RealRows *rr, int H, int d);

/* The stack: x (S*B, d) through every layer; the output, padded, is w->out (x itself
 * when L = 0). With rng and rate > 0, dropout at torch's four sites, masks drawn from
 * rng layer by layer. */
void sa_forward(SelfAttnWork *w, const SelfAttnParams *P, const SelfAttnDims *d, const real *x,
                const int *len, int S, int B, double rate, Pcg32 *rng);
/* The stack's output (x when L = 0). */
const real *sa_output(const SelfAttnWork *w, const SelfAttnDims *d, const real *x);

/* Backward of the last sa_forward (its input and rows) from dout (S*B, d), the gradient
 * reaching the output: the weights' gradients accumulated into G, dx (S*B, d)
 * overwritten, 0 in padded rows (it may be dout's memory). */
void sa_backward(real *dx, SelfAttnParams *G, SelfAttnWork *w, const real *dout,
                 const SelfAttnParams *P, const SelfAttnDims *d, int S, int B);

#endif
