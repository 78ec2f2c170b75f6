/* model.h: the RNNsearch model of MODEL.md: parameter layout, initialisation, and the
 * batched forward and backward passes over one Batch.
 *
 * Parameters live in one flat buffer (Params.mem, Params.n floats); a second Params
 * over a second buffer of the same size holds the gradients, so clipping, optimizers,
 * checkpoints and the whole-model gradient check each loop once over [0, n).
 * Activations live in a Workspace sized once for the largest batch; a step never
 * allocates. */
#ifndef S2S_MODEL_H
#define S2S_MODEL_H

#include <stddef.h>

#include "batch.h"
#include "gru.h"
#include "mem.h"
#include "real.h"
#include "rng.h"
#include "rowgrad.h"

typedef struct {
    int src_vocab;  /* V_x */
    int tgt_vocab;  /* V_y */
    int emb;        /* m: embedding size, both sides */
    int enc_hidden; /* n: encoder units per direction */
    int dec_hidden; /* p: decoder units */
    int attn;       /* a: attention size */
    int readout;    /* l: readout size */
} Dims;

/* One named tensor of the flat buffer, for checkpoints, debugging and the checks. */
typedef struct {
    const char *name;
    real *data;
    int rows, cols; /* a vector is (rows, 1) */
    int is_bias;    /* initialised to 0 instead of uniform */
} Tensor;

#define MODEL_MAX_TENSORS 32

typedef struct {
    real *E_x, *E_y;          /* (V_x, m), (V_y, m) */
    GruParams enc_fwd;        /* W_i (3n, m), W_h (3n, n), b_i, b_h (3n) */
    GruParams enc_bwd;        /* same shapes */
    real *W_s, *b_s;          /* (p, n), (p): s_0 = tanh(W_s bwd_h_1 + b_s) */
    real *W_a, *U_a, *b_a;    /* (a, p), (a, 2n), (a) */
    real *v_a;                /* (a) */
    GruParams dec;            /* W_i (3p, m + 2n) on [ey; c], W_h (3p, p), b_i, b_h (3p) */
    real *W_t, *b_t;          /* (l, p + 2n + m) on [s; c; ey], (l) */
    real *W_o, *b_o;          /* (V_y, l), (V_y) */
    real *mem;                /* the flat buffer, owned when allocated by params_alloc */
    size_t n;                 /* floats in mem */
    Tensor tensors[MODEL_MAX_TENSORS];
    int n_tensors;
} Params;

/* Points every field of p into base (or only counts, if base is NULL) in the fixed
 * tensor order and returns the number of floats. Does not set p->mem. */
size_t params_carve(Params *p, real *base, const Dims *d);
/* The same without E_x and E_y (left NULL): the rest of the buffer, which follows the
 * embeddings, carved from base. For gradients whose embedding part is kept by rows. */
size_t params_carve_dense(Params *p, real *base, const Dims *d);
/* Allocates a zeroed buffer for d and carves p over it. params_free on a zeroed Params
 * is safe. */
void params_alloc(Params *p, const Dims *d);
void params_free(Params *p);
/* MODEL.md's initialisation: weights uniform in [-scale, scale] drawn from rng in
 * tensor order, biases 0. */
void params_init(Params *p, Pcg32 *rng, float scale);

/* Activations of one batch, and the scratch of its backward pass. All pointers point
 * into one arena, re-carved for each batch's (B, S, T). Position-major layouts:
 * source rows are j * B + b, target rows i * B + b. */
typedef struct {
    Dims dims;
    int max_batch, max_src_steps, max_tgt_steps, with_backward;
    Arena arena;
    int B, S, T, N;        /* this batch; N = real target positions */
    int R;                 /* decoder rows over all steps: N when sorted by target
                            * length, else T*B */

    /* encoder */
    real *ex;              /* (S*B, m) source embeddings */
    real *xg_fwd, *xg_bwd; /* (S*B, 3n) input projections */
    real *gru_fwd, *gru_bwd; /* (S*B, 4n) GRU caches */
    real *H;               /* (S*B, 2n) annotations [fwd_h_j ; bwd_h_j] */
    real *keys;            /* (S*B, a) U_a h_j + b_a */
    /* decoder */
    /* Decoder buffers hold the rows each step computes (see active), step after step:
     * step i's rows start at step_row[i] of the step buffers and at state_row[i] of the
     * state-block ones (which step i reads as s_{i-1}). */
    real *states;          /* (B + R, p): block 0 is s_0, block i+1 is s_i */
    real *dec_in;          /* (R, m + 2n) step rows: [ey_{i-1} ; c_i] */
    real *dec_xg;          /* (R, 3p) step rows */
    real *dec_gru;         /* (R, 4p) step rows */
    real *query;           /* (B + R, a) state blocks: W_a s_{i-1}, zero in rows left out */
    int keep_att_pre;      /* att_pre holds every step for backward (else one block;
                            * tests may clear it) */
    real *att_pre;         /* (T or 1, S*B, a) tanh(W_a s_{i-1} + U_a h_j + b_a) */
    real *scores;          /* (S*B) scratch: e_ij of one step */
    real *alpha;           /* (T, S*B) the alignment matrices */
    int *active;           /* (T) decoder rows computed at step i: those still in their
                            * sentence when the batch is sorted by target length, else B */
    int *step_len;         /* (T, B) source lengths seen at step i, 0 for rows past active */
    int *step_row;         /* (T + 1) first step row of step i; step_row[T] = R */
    int *state_row;        /* (T + 1) first row of state block i */
    /* readout over the N real target positions */
    int *real_rows;        /* (N) the step row of each real target position */
    int *targets;          /* (N) y_i */
    real *ro_in;           /* (N, p + 2n + m) [s_i ; c_i ; ey_{i-1}] */
    real *ro_out;          /* (N, l) t_i */
    int max_out_chunk_rows;/* rows of the logits buffer; tests may lower it to force chunks */
    int out_chunk_rows;    /* rows of one output-layer chunk in this batch */
    real *logits;          /* (out_chunk_rows, V_y) scratch: one chunk's logits, softmax,
                            * gradient */

    /* backward scratch (only with_backward); d_ro_in, d_dec_xg, d_xg_* and d_ex are the
     * memory of ro_in, dec_xg, xg_* and ex, and d_hg that of the readout's buffers,
     * all dead by the time their gradient is written */
    real *d_ro_out, *d_ro_in;
    real *d_states, *d_dec_in, *d_dec_xg, *d_query;
    real *d_hg, *d_carry;
    real *d_alpha, *d_scores;
    real *d_keys, *d_H, *d_xg_fwd, *d_xg_bwd, *d_ex, *d_s0;
} Workspace;

/* Sizes the arena for batches of up to max_batch pairs of up to max_src_steps /
 * max_tgt_steps positions (</s> included). Without with_backward, only forward
 * buffers. model_workspace_free on a zeroed Workspace is safe. */
void model_workspace_init(Workspace *ws, const Dims *d, int max_batch, int max_src_steps,
                          int max_tgt_steps, int with_backward);
void model_workspace_free(Workspace *ws);

/* Carves the workspace for the batch and runs the encoder: annotations H, keys and
 * s_0 (states block 0). Enough for decoding; model_forward calls it first. */
void model_encode(Workspace *ws, const Params *P, const Batch *batch);

/* Forward pass with teacher forcing. Returns the token-mean cross-entropy over the
 * batch's real target tokens (MODEL.md); keeps every activation for backward but the
 * output layer's, which model_backward computes again. */
double model_forward(Workspace *ws, const Params *P, const Batch *batch);

/* Backward of the last model_forward on the same batch. Accumulates into G (a Params
 * carved over the gradient buffer). Needs with_backward. Consumes forward's
 * activations: another backward needs another forward. */
void model_backward(Params *G, Workspace *ws, const Params *P, const Batch *batch);
/* The same with the embedding gradients added by rows to dE_x and dE_y (G->E_x and
 * G->E_y unused); NULL ones go to G as in model_backward. */
void model_backward_rows(Params *G, RowGrad *dE_x, RowGrad *dE_y, Workspace *ws,
                         const Params *P, const Batch *batch);
/* Training's pass: model_forward then model_backward_rows, without computing the output
 * layer twice (its gradient is taken chunk by chunk as the loss is). Returns the loss. */
double model_forward_backward(Params *G, RowGrad *dE_x, RowGrad *dE_y, Workspace *ws,
                              const Params *P, const Batch *batch);

#endif
