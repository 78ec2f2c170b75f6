/* transformer_decoder.h: the Transformer decoder's layers (model/MODEL.md, "Transformer
 * decoder"): each is torch.nn.TransformerDecoderLayer(d, H, F, activation=relu,
 * norm_first=False) with a causal mask on its self-attention and the source's padding
 * masked in its cross-attention, whose keys and values read the encoder's annotations
 * (d_h wide: torch's MultiheadAttention with kdim = vdim = d_h). Forward and backward
 * over a teacher-forced batch, and one decoding step over cached keys and values.
 *
 * Layouts: in, target rows i * B + b (T*B rows, d wide) and source rows j * B + b (S*B,
 * d_h); tgt_len and src_len (B) the real positions. The layers compute the real rows
 * alone (nn/real_rows.h: sentence b's position i at row start[b] + i; n_t target and n_s
 * source rows), and their output is in that layout. The causal mask keeps real rows
 * from later ones, and the padded ones torch computes are read by nothing. */
#ifndef S2S_TRANSFORMER_DECODER_H
#define S2S_TRANSFORMER_DECODER_H

#include "base/mem.h"
#include "base/rng.h"
#include "nn/real.h"
#include "nn/real_rows.h"
#include "nn/tensor.h"

/* Decoder layers at most (and the same in words, for messages). */
#define DEC_MAX_LAYERS 6
#define DEC_MAX_LAYERS_TEXT "6"

typedef struct {
    int width;  /* d: the decoder's width, in and out */
    int memory; /* d_h: the annotations' width (cross-attention's keys and values read it) */
    int heads;  /* H: divides d */
    int ffn;    /* F: the feed-forward layer's inner width */
    int layers; /* L: 1 to DEC_MAX_LAYERS */
} TdecDims;

/* One layer's tensors in torch's order: self_attn, multihead_attn, linear1, linear2,
 * norm1-3. W_Q, W_K, W_V lie one after another (torch's in_proj_weight), and so do
 * Wc_K and Wc_V (with Wc_Q before them: in_proj_weight again when d_h = d). */
typedef struct {
    real *W_Q, *W_K, *W_V, *b_Q, *b_K, *b_V; /* (d, d) each, (d) each */
    real *W_O, *b_O;                         /* (d, d), (d) */
    real *Wc_Q, *Wc_K, *Wc_V;                /* (d, d), (d, d_h), (d, d_h) */
    real *bc_Q, *bc_K, *bc_V;                /* (d) each */
    real *Wc_O, *bc_O;                       /* (d, d), (d) */
    real *W_1, *b_1, *W_2, *b_2;             /* (F, d), (F), (d, F), (d) */
    real *gamma_1, *beta_1, *gamma_2, *beta_2, *gamma_3, *beta_3; /* (d) */
} TdecParams;

/* Carves the L layers' tensors, named dec1.W_Q, ..., decL.beta_3. */
void tdec_carve(TdecParams *p, TensorCarver *c, const TdecDims *d);

/* One layer's activations over a batch's real rows: what backward needs. */
typedef struct {
    real *qkv;            /* (n_t, 3d) the self-attention's projections */
    real *self_probs;     /* (B, H, T, T) each head's causal weights */
    real *self_mean;      /* (B, T, T) their mean */
    real *self_z;         /* (n_t, d) */
    real *xhat1, *rstd1, *y1;
    real *cross_q;        /* (n_t, d) the cross-attention's queries */
    real *cross_kv;       /* (n_s, 2d) its keys and values, from the annotations */
    real *cross_probs;    /* (B, H, T, S) each head's weights over the source */
    real *cross_mean;     /* (B, T, S) their mean */
    real *cross_z;        /* (n_t, d) */
    real *xhat2, *rstd2, *y2;
    real *u, *r;          /* (n_t, F) relu(y2 W_1^T + b_1), and after dropout */
    real *xhat3, *rstd3, *out;
    /* dropout's factors (training only, padded: real_rows.h), at torch's six sites in
     * the order drawn: the self-attention's weights (B, H, T, T) and output (T*B, d), the cross-attention's
     * weights (B, H, T, S) and output (T*B, d), the FFN's inner layer (T*B, F) and
     * output (T*B, d) */
    real *mask_sp, *mask_sa, *mask_cp, *mask_ca, *mask_r, *mask_o;
    int dropped;
} TdecLayerWork;

typedef struct {
    TdecLayerWork layer[DEC_MAX_LAYERS];
    RealRows tgt, src;    /* the last forward's real rows */
    real *x_rows;         /* (n_t, d) the input's real rows */
    real *memory_rows;    /* (n_s, d_h) the annotations' real rows */
    real *scratch;        /* 2 T max(T, S): one head's dropped weights and their gradient */
    /* backward: the gradient between layers (n_t, d), the annotations' (n_s, d_h), and a
     * layer's scratch */
    real *d_between, *d_memory_rows, *d_y, *d_t, *d_r, *d_z, *d_qkv, *d_cross_q, *d_cross_kv;
} TdecWork;

/* Carves the stack's buffers for (B, T, S) from ar (a counting arena measures); the
 * masks and backward's buffers only with with_backward. */
void tdec_carve_work(TdecWork *w, Arena *ar, const TdecDims *d, int B, int T, int S,
                     int with_backward);

/* The stack: x (T*B, d) through every layer, reading memory (S*B, d_h); the output is
 * w->layer[L - 1].out, (n_t, d) over the real rows w->tgt. With rng and rate > 0, dropout
 * at torch's six sites of each layer, masks drawn from rng layer by layer. */
void tdec_forward(TdecWork *w, const TdecParams *P, const TdecDims *d, const real *x,
                  const int *tgt_len, const real *memory, const int *src_len, int T, int S,
                  int B, double rate, Pcg32 *rng);

/* Backward of the last tdec_forward (its inputs and rows) from dout (n_t, d), the
 * output's layout: the weights' gradients accumulated into G, dx (T*B, d) overwritten, 0
 * in padded rows (it may be dout's memory), d_memory (S*B, d_h) accumulated. */
void tdec_backward(real *dx, real *d_memory, TdecParams *G, TdecWork *w, const real *dout,
                   const TdecParams *P, const TdecDims *d);

/* ---- decoding, one position at a time ------------------------------------------------ */

/* What a step reads and keeps, for `rows` hypotheses side by side, up to `cap`
 * positions: each layer's self-attention keys and values of the positions so far
 * (rows, cap, 2d), and its cross-attention's keys and values of each row's source
 * (S*rows, 2d, row j * rows + r). */
typedef struct {
    int rows, cap, src_steps;
    real *kv[DEC_MAX_LAYERS], *next_kv[DEC_MAX_LAYERS]; /* next_kv: reordering's copy */
    real *cross_kv[DEC_MAX_LAYERS];
    /* one step's: the self-attention's weights (rows, H, cap) and the cross-attention's
     * (rows, H, S) of every layer, then the layer's buffers */
    real *self_probs[DEC_MAX_LAYERS], *cross_probs[DEC_MAX_LAYERS];
    real *qkv, *z, *y1, *y2, *q, *u, *xhat, *rstd, *out; /* (rows, 3d | d | F), (rows) */
} TdecCache;

/* A layer's weights that a step multiplies its rows by, packed in panels once for a
 * model's decoding (nn/ops.h pack_panels): [W_Q ; W_K ; W_V] (3d outputs of d), W_O,
 * Wc_Q, Wc_O (d of d), W_1 (F of d), W_2 (d of F). */
typedef struct {
    real *in_proj, *W_O, *Wc_Q, *Wc_O, *W_1, *W_2;
} TdecStepWeights;

/* Floats tdec_step_weights_make takes for every layer. */
size_t tdec_step_weights_floats(const TdecDims *d);
/* Each layer's step weights from P into base (tdec_step_weights_floats of them). */
void tdec_step_weights_make(TdecStepWeights *t, real *base, const TdecParams *P,
                            const TdecDims *d);

/* Floats tdec_cache_carve takes for these sizes. */
size_t tdec_cache_floats(const TdecDims *d, int rows, int cap, int src_steps);
/* Points the cache's buffers into base (tdec_cache_floats of them). */
void tdec_cache_carve(TdecCache *c, real *base, const TdecDims *d, int rows, int cap,
                      int src_steps);
/* The cross-attention's keys and values of every layer from memory (S*rows, d_h). */
void tdec_cache_start(TdecCache *c, const TdecParams *P, const TdecDims *d, const real *memory,
                      int S, int rows);
/* Position pos (from 0) of `rows` rows: x (rows, d) through every layer into c->out
 * (rows, d), the new keys and values appended to the cache. src_len (rows). tw: the
 * layers' step weights (P's, packed: linear_forward_packed), or NULL to multiply by P's
 * through BLAS. */
void tdec_step(TdecCache *c, const TdecParams *P, const TdecStepWeights *tw, const TdecDims *d,
               const real *x, int pos, const int *src_len, int S, int rows);
/* Row r continues from row from[r] after position pos: the cached positions 0..pos of
 * every layer reordered. */
void tdec_cache_reorder(TdecCache *c, const TdecDims *d, const int *from, int pos, int rows);

#endif
