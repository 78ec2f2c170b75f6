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

#include "base/mem.h"
#include "base/rng.h"
#include "model/attention.h"
#include "model/batch.h"
#include "nn/cell.h"
#include "nn/embedding_grad.h"
#include "model/encoder.h"
#include "nn/real.h"
#include "nn/tensor.h"
#include "nn/transformer_decoder.h"

/* What computes the target side: a recurrent cell with the attention of attention.h
 * (s_i = cell([ey_{i-1} ; c_i], s_{i-1}), the readout t_i), or Transformer decoder
 * layers (model.decoder_cell none: masked self-attention, cross-attention, FFN), whose
 * last layer's output the output layer reads. */
typedef enum { DECODER_RNN, DECODER_TRANSFORMER } DecoderKind;

typedef struct {
    int src_vocab;  /* V_x */
    int tgt_vocab;  /* V_y */
    int emb;        /* m: embedding size, both sides */
    int enc_hidden; /* n: encoder units per direction */
    int dec_hidden; /* p: decoder units */
    int attn;       /* a: attention size (additive and scaled_dot) */
    int readout;    /* l: readout size */
    ScoreKind score;
    int heads;      /* H: attention heads (1: the single-head model) */
    EncoderKind encoder; /* the bi-RNN (0, the default), attention-only or image */
    DecoderKind decoder; /* the recurrent cell (0, the default) or Transformer layers */
    CellKind enc_cell, dec_cell;
    int dec_layers; /* the Transformer decoder's layers, 1 to DEC_MAX_LAYERS (its width is
                     * emb, its heads `heads`, its FFN's inner width dec_ffn; readout = emb:
                     * the output layer reads the last layer's output) */
    int dec_ffn;
    int enc_layers; /* bidirectional encoder layers, 1 to MODEL_MAX_LAYERS; layer k > 0
                     * reads [fwd_h ; bwd_h] of layer k - 1, as torch.nn.GRU does */
    int sa_layers;  /* self-attention layers on the encoder, 0 to SA_MAX_LAYERS */
    int sa_heads;   /* their heads (divides d_h) */
    int sa_ffn;     /* their feed-forward width F */
    int hard;       /* model.attention_mode hard: trained by sampling positions (its
                     * weights are a soft model's; decoding chooses, see ContextMode) */
    int context_gate; /* beta_i = sigmoid(w_beta . s_{i-1} + b_beta) scales c_i (Xu et al.) */
    int tie_output; /* the output layer's W_o is E_y itself (needs l = m; Press and Wolf 2017) */
    int share_embeddings; /* E_x is E_y itself: one table for the words of both sides
                           * (needs V_x = V_y, one vocabulary; a text encoder) */
    /* the image encoder's (model.encoder image): pictures of image_size x image_size,
     * conv_layers blocks of conv_channels[l] channels, grid positions a GridPositions */
    int image_size, conv_layers, conv_channels[CONV_MAX_LAYERS], grid_positions;
} Dims;

/* What the encoder and the attention need of the model's sizes, and d_h, the width of
 * the annotations (and of the context): the encoder's to say. */
EncoderDims model_encoder_dims(const Dims *d);
AttnDims model_attn_dims(const Dims *d);
int model_annotation_width(const Dims *d);
/* The Transformer decoder's sizes (meaningful for DECODER_TRANSFORMER only). */
TdecDims model_tdec_dims(const Dims *d);
/* Whether the target side is the Transformer decoder. */
int model_is_transformer(const Dims *d);

/* 0 for a model without attention weights (score none): it has no alignments to dump,
 * draw or score. */
int model_has_alignments(const Dims *d);

/* Whether the model reads pictures (the image encoder) rather than text: what the code
 * around the model asks instead of naming the encoder. */
int model_reads_pictures(const Dims *d);
/* Makes d an image model: pictures of image_size x image_size pixels through `layers`
 * conv blocks of channels[l] channels, with grid positions of that GridPositions kind. */
void model_use_image_encoder(Dims *d, int image_size, const int *channels, int layers,
                             int grid_positions);
/* An image model's grid side G (its source positions are the G x G cells over the
 * picture), 0 for a text model. */
int model_grid_side(const Dims *d);
/* The name of an image model's source position j, as dumps, heatmaps and explain show
 * it: its grid cell's number, row by row from the top left ("0" to "G^2 - 1"). */
void model_cell_name(int j, char *out, size_t cap);

/* 1 when an LSTM decoder's cell state starts from the encoder (c_0 = tanh(W_c init +
 * b_c), the attention-only encoder), 0 when it starts at 0. */
int model_starts_cell_state(const Dims *d);

/* The context gate (context_gate.c) over `rows` decoder rows: beta (rows) =
 * sigmoid(s_prev (rows, p) . w + b), then c (rows, d_h; row stride ld_c) *= beta in place,
 * the ungated context copied to c_raw (rows, d_h) first unless it is NULL. */
void context_gate_forward(real *c, int ld_c, real *c_raw, real *beta, const real *s_prev,
                          const real *w, const real *b, int rows, int p, int d_h);
/* Backward from dc (the gated context's gradient, row stride ld_dc), overwritten with the
 * ungated one's; accumulates ds_prev (rows, p), dw (p) and db (1). */
void context_gate_backward(real *dc, int ld_dc, real *ds_prev, real *dw, real *db,
                           const real *c_raw, const real *beta, const real *s_prev,
                           const real *w, int rows, int p, int d_h);

/* A Transformer decoder's input at position pos (from 0) for `rows` rows:
 * x (rows, m) = sqrt(m) E_y[prev[r]] + PE_pos, as training computes it. */
void transformer_embed_step(real *x, const real *E_y, const int *prev, int pos, int rows, int m);

/* "gru encoder (2 layers), lstm decoder, attention additive": the model in words. */
void model_describe(const Dims *d, char *out, size_t cap);

#define MODEL_MAX_TENSORS                                                                   \
    (21 + 8 * MODEL_MAX_LAYERS + 16 * SA_MAX_LAYERS + 2 * CONV_MAX_LAYERS + 26 * DEC_MAX_LAYERS)

/* Every tensor of model/MODEL.md, named as there; G = cell_gates of the decoder's cell.
 * The encoder's and the attention's are theirs (encoder.h, attention.h). */
typedef struct {
    real *E_x, *E_y;          /* (V_x, m), (V_y, m); with share_embeddings E_x is E_y */
    EncoderParams enc;
    real *W_s, *b_s;          /* (p, init width), (p): s_0 = tanh(W_s init + b_s) */
    real *W_c, *b_c;          /* the same shapes, c_0 = tanh(W_c init + b_c); NULL unless
                               * model_starts_cell_state */
    AttnParams att;
    CellParams dec;           /* W_i (Gp, m + d_h) on [ey; c], W_h (Gp, p), b_i, b_h (Gp) */
    real *w_beta, *b_beta;    /* (p), (1): the context gate (NULL without it) */
    real *W_t, *b_t;          /* (l, p + d_h + m) on [s; c; ey], (l) */
    TdecParams tdec[DEC_MAX_LAYERS]; /* the Transformer decoder's layers, instead of W_s
                               * (and W_c), the attention's, the cell's and the readout's */
    real *W_o, *b_o;          /* (V_y, l), (V_y); with tie_output W_o is E_y (l = m) */
    real *mem;                /* the flat buffer, owned when allocated by params_alloc */
    size_t n;                 /* floats in mem */
    Tensor tensors[MODEL_MAX_TENSORS];
    int n_tensors;
} Params;

/* Points every field of p into base (or only counts, if base is NULL) in the fixed
 * tensor order and returns the number of floats. Does not set p->mem. */
size_t params_carve(Params *p, real *base, const Dims *d);
/* The same without E_x and E_y (left NULL): the rest of the buffer, which follows the
 * embeddings, carved from base. For gradients whose embedding part is kept by rows. E_y
 * stays when params_dense_target_embeddings (and E_x is it, with shared embeddings). */
size_t params_carve_dense(Params *p, real *base, const Dims *d);
/* Whether E_y's gradient is dense, not by rows: a tied output layer fills every row, and
 * shared embeddings take the source's rows too. */
int params_dense_target_embeddings(const Dims *d);
/* Allocates a zeroed buffer for d and carves p over it. params_free on a zeroed Params
 * is safe. */
void params_alloc(Params *p, const Dims *d);
void params_free(Params *p);
/* MODEL.md's initialisation: weights uniform in [-scale, scale] drawn from rng in
 * tensor order, biases 0. */
void params_init(Params *p, Pcg32 *rng, float scale);

/* What training adds to the model's forward pass (Joey NMT's and OpenNMT's options):
 * inverted dropout on the embeddings (ex_j and ey_{i-1}, the one mask serving both the
 * decoder input and the readout) and on the readout t_i before the output layer, and
 * label smoothing of the loss as torch's cross_entropy(label_smoothing=eps) defines it:
 * (1 - eps) of the target's -log p plus eps times the mean -log p over all V_y words.
 * Masks are drawn from a copy of rng, so a forward pass is a function of its inputs:
 * the trainer gives each step its own position on the dropout stream. And Xu et al.'s
 * doubly stochastic term: lambda (1/B) sum_b sum_j (1 - sum_i alpha_ij)^2 added to the
 * loss, i over each caption's real steps. And attention supervision: lambda (1/N) sum
 * over the caption words that name an object of -log(alignment weight on its cells). */
typedef struct {
    double embedding_dropout, readout_dropout; /* probabilities in [0, 1) */
    double self_attention_dropout;             /* at torch's four sites of each layer */
    double label_smoothing;                    /* eps in [0, 1) */
    double doubly_stochastic;                  /* lambda >= 0 of the doubly stochastic term
                                                * (model/MODEL.md, "Image encoder") */
    double attention_supervision;              /* lambda >= 0 of attention supervision
                                                * (Liu et al. 2017; needs the batch's
                                                * ground cells; model/MODEL.md) */
    Pcg32 rng;
} Regularization;

/* How a pass forms the decoder's contexts (model/MODEL.md, "Hard attention"). */
typedef enum {
    CONTEXT_SOFT,   /* the expected context sum_j alpha_ij h_j: a soft model, or a hard
                     * model decoded "deterministically" */
    CONTEXT_ARGMAX, /* each head reads its most probable position */
    CONTEXT_SAMPLE, /* training a hard model: each head samples its position, and a
                     * sentence uses the expected context with probability expected_prob */
    CONTEXT_GIVEN   /* the positions and sentence choices the last pass left in the
                     * workspace (hard_pass.chosen, .rows): gradient checks, enumerations */
} ContextMode;

/* A hard pass's settings: the surrogate's weights and baselines (model/MODEL.md). */
typedef struct {
    ContextMode mode;
    double expected_prob;    /* CONTEXT_SAMPLE: a sentence's chance of the expected context */
    double reinforce_weight; /* lambda_r */
    double entropy_weight;   /* lambda_e */
    int token_reward;        /* 0: the sentence reward R_s - b; 1: each token's r_i */
    double baseline;         /* b, the running mean of R_s */
    double token_baseline;   /* b_tok, the running mean of a token's log p */
    int freeze_rewards;      /* keep the last pass's (R_s - b) or r_i: finite differences
                              * of the surrogate with the rewards held constant */
    Pcg32 rng;               /* the draws of this pass, from a copy, as reg.rng */
} HardAttention;

/* What the last pass measured of a hard model's contexts. */
typedef struct {
    double surrogate;        /* J: what backward differentiates (CONTEXT_SAMPLE, _GIVEN) */
    double nll;              /* (1/N) sum_s -R_s with label smoothing as trained: the loss
                              * reported (the cross-entropy model_forward returns otherwise) */
    double reward_sum;       /* sum of R_s over the sentences that chose positions (the
                              * sum of log p(y_i) over their real target tokens) */
    int sampled;             /* those sentences */
    int sampled_tokens;      /* and their real target tokens */
    double entropy_sum;      /* sum of H(alpha^k_i) over every real step and head */
    long entropy_terms;      /* those steps times heads */
} HardStats;

/* The decoder's buffers (model_forward.c's stages 2-3): the rows each step computes
 * (see active), step after step: step i's rows start at step_row[i] of the step buffers
 * and at state_row[i] of the state-block ones (which step i reads as s_{i-1}). */
typedef struct {
    real *states;          /* (B + R, p): block 0 is s_0, block i+1 is s_i */
    real *in;              /* (R, m + d_h) step rows: [ey_{i-1} ; c_i] */
    real *mask_y;          /* (R, m) embedding dropout of ey_{i-1} */
    real *xg;              /* (R, G_d p) step rows */
    real *cache;           /* (R, C_d p) step rows (the LSTM's cell state among them) */
    real *cache0;          /* (B, C_d p) what step 0 reads as the previous step's cache:
                            * c_0 in an LSTM's cell-state slot, the rest 0 (NULL when the
                            * cell state starts at 0, model_starts_cell_state) */
    real *query;           /* (B + R, Q) state blocks, zero in rows left out */
    int keep_att_pre;      /* att_pre holds every step for backward (else one block;
                            * tests may clear it) */
    real *att_pre;         /* (T or 1, S*B, A) the additive score's tanh layer */
    real *scores;          /* (S*B) scratch: e_ij of one step */
    real *alpha;           /* (T, S*B) the alignment matrices (the heads' mean); NULL for
                            * score none */
    real *alpha_heads;     /* (T, H, S*B) each head's weights; alpha itself when H = 1 */
    real *gate;            /* (R) step rows: the context gate's beta_i (NULL without it) */
    real *context_raw;     /* (R, d_h) step rows: the contexts before the gate (backward) */
    real *attn_total;      /* (S*B) sum over each caption's real steps of alpha_ij: the
                            * doubly stochastic term's (with backward) */
    real *d_align;         /* (S*B) scratch: that term's gradient on one step's alignment */
    int *active;           /* (T) decoder rows computed at step i: those still in their
                            * sentence when the batch is sorted by target length, else B */
    int *step_len;         /* (T, B) source lengths seen at step i, 0 for rows past active */
    int *step_row;         /* (T + 1) first step row of step i; step_row[T] = R */
    int *state_row;        /* (T + 1) first row of state block i */
    /* the Transformer decoder (R = T*B rows, i * B + b): in holds its input
     * X_i = sqrt(m) ey'_{i-1} + PE_i (R, m), mask_y ey's dropout */
    TdecWork tdec;
} DecoderWork;

/* The readout and the output layer over the N real target positions (stage 4). */
typedef struct {
    int *real_rows;        /* (N) the step row of each real target position */
    int *targets;          /* (N) y_i */
    real *in;              /* (N, p + d_h + m) [s_i ; c_i ; ey_{i-1}] */
    real *out;             /* (N, l) t_i */
    real *mask_t;          /* (N, l) readout dropout */
    real *dropped;         /* (N, l) t_i after dropout: what the output layer reads */
    int max_out_chunk_rows;/* rows of the logits buffer; tests may lower it to force chunks */
    int out_chunk_rows;    /* rows of one output-layer chunk in this batch */
    real *logits;          /* (out_chunk_rows, V_y) scratch: one chunk's logits, softmax,
                            * gradient */
} ReadoutWork;

/* What a hard pass keeps (model/MODEL.md, "Hard attention"); carved for every model
 * with attention weights. */
typedef struct {
    HardStats stats;       /* of the last pass with mode other than CONTEXT_SOFT */
    unsigned char *rows;   /* (B) 1: sentence b's heads choose positions */
    int *soft_len;         /* (T, B) dec.step_len with the choosing rows' set to 0 */
    double *draws;         /* (T, B, H) the uniform draws of sampling */
    int *chosen;           /* (T, B, H) each head's position; -1 in rows that did not
                            * choose. In a batch not sorted by target length (gradient
                            * checks, s2s align) a choosing row also draws at its padded
                            * steps, which nothing reads. */
    int *tok_sentence;     /* (N) the sentence (row b) of each real target position */
    int *tok_step;         /* (N) and its step i */
    double *tok_nll;       /* (N) its -log p(y_i), unsmoothed */
    double *advantage;     /* sentence reward: (B) R_s - b; token reward: (T, B) r_i at
                            * i * B + b */
    real *step_reinforce, *step_entropy; /* (B) one step's surrogate weights (backward) */
} HardPassWork;

/* The backward pass's scratch (only with_backward); d_ro_in and d_dec_xg are the memory
 * of ro.in and dec.xg, and d_hg that of the readout's buffers, all dead by the time
 * their gradient is written; the encoder's gradients are in enc. */
typedef struct {
    real *d_ro_out, *d_ro_in;
    real *d_states, *d_dec_in, *d_dec_xg, *d_query, *d_cell;
    real *d_hg;            /* the recurrences' scratch: the decoder's, then the encoder's */
    real *d_alpha, *d_scores;
    real *d_keys, *d_s0;
    real *d_tdec_out;      /* (T*B, m) the Transformer decoder's output's gradient */
} BackwardWork;

/* Activations of one batch, and the scratch of its backward pass, by stage, then what
 * two users ask of a pass: s2s explain's kept step and the Open MPI exchange's callback.
 * All pointers point into one arena, re-carved for each batch's (B, S, T).
 * Position-major layouts: source rows are j * B + b, target rows i * B + b. G_d, C_d:
 * gate and cache widths of the decoder's cell; K, Q, A: the attention's key, query and
 * tanh-layer widths. */
typedef struct {
    Dims dims;
    int max_batch, max_src_steps, max_tgt_steps, with_backward;
    Regularization reg;    /* all 0 unless model_set_regularization */
    HardAttention hard;    /* mode CONTEXT_SOFT unless model_set_hard */
    Arena arena;
    int B, S, T, N;        /* this batch; N = real target positions */
    /* what the loss divides by (model_set_loss_counts): 0 for this batch's own N target
     * tokens and B captions; a shard of a larger batch sets the whole batch's */
    int loss_tokens, loss_captions;
    int R;                 /* decoder rows over all steps: N when sorted by target
                            * length, else T*B */

    EncoderWork enc;       /* the annotations enc.H (S*B, d_h) and the encoder's buffers
                            * (a text encoder's embeddings enc.ex, their dropout enc.mask_x) */
    real *keys;            /* (S*B, K) the source side of the scores (NULL when K = 0) */
    DecoderWork dec;
    ReadoutWork ro;
    HardPassWork hard_pass;
    BackwardWork grad;

    /* s2s explain's copies of one step's scratch (model_keep_step): the step (from 0;
     * -1: none), each head's scores e_ij (H, S*B) and the additive score's tanh layer
     * (S*B, A); the workspace does not own them */
    struct {
        int step;
        real *scores, *pre;
    } kept;
    /* model_set_output_done: told when the output layer's gradient is final (the Open
     * MPI exchange starts sending it) */
    struct {
        void (*done)(void *ctx);
        void *ctx;
    } output_hook;
} Workspace;

/* Sizes the arena for batches of up to max_batch pairs of up to max_src_steps /
 * max_tgt_steps positions (</s> included). Without with_backward, only forward
 * buffers. model_workspace_free on a zeroed Workspace is safe. */
void model_workspace_init(Workspace *ws, const Dims *d, int max_batch, int max_src_steps,
                          int max_tgt_steps, int with_backward);
void model_workspace_free(Workspace *ws);
/* The bytes model_workspace_init would allocate for these sizes, without allocating. */
size_t model_workspace_bytes(const Dims *d, int max_batch, int max_src_steps, int max_tgt_steps,
                             int with_backward);

/* Dropout and label smoothing for the forward passes to come (training's workspace
 * only; NULL turns them off). Needs with_backward. */
void model_set_regularization(Workspace *ws, const Regularization *reg);

/* The coming passes' losses are normalised by `tokens` target tokens and `captions`
 * captions (the token-mean terms, and the doubly stochastic term's 1/B) instead of the
 * batch's own: a batch that is one shard of a larger one, given the whole batch's
 * counts, computes its share of the whole loss and gradient, so that the shards' sums
 * are the whole batch's. 0, 0: the batch's own (the default). */
void model_set_loss_counts(Workspace *ws, int tokens, int captions);

/* How the coming passes form their contexts (NULL: soft, the default). A hard model's
 * training sets CONTEXT_SAMPLE with its weights and baselines every step. */
void model_set_hard(Workspace *ws, const HardAttention *hard);

/* model_forward_backward calls done(ctx) as soon as the output layer's gradient (W_o and
 * b_o, the last tensors of the buffer; E_y of a tied model is not final yet) is, before
 * the rest of the backward pass: a trainer on several processes sends it meanwhile
 * (train/shards.c). NULL: nothing is called (the default). */
void model_set_output_done(Workspace *ws, void (*done)(void *ctx), void *ctx);

/* The coming passes copy what decoder step `step` (from 0; -1: none) computes and then
 * overwrites into scores (H, S*B: each head's e_ij) and pre (S*B, A: the additive
 * score's tanh layer; NULL for the other scores). For s2s explain. */
void model_keep_step(Workspace *ws, int step, real *scores, real *pre);

/* Teacher-forced passes and decoding with each head reading its most probable position
 * (argmax 1: CONTEXT_ARGMAX), or the weighted sum (0: soft). */
void model_set_argmax(Workspace *ws, int argmax);

/* The heads' mean of self-attention layer `layer` (from 0) over the last batch, (B, S, S):
 * sentence b's query position i over key position j at [(b * S + i) * S + j]; NULL when
 * the model has no such layer. */
const real *model_self_weights(const Workspace *ws, int layer);

/* Carves the workspace for the batch and runs the encoder, without dropout:
 * annotations enc.H, keys (or the fixed context enc.summary) and s_0 (states block 0).
 * Enough for decoding. */
void model_encode(Workspace *ws, const Params *P, const Batch *batch);

/* Forward pass with teacher forcing. Returns the token-mean cross-entropy over the
 * batch's real target tokens (MODEL.md; label-smoothed if the regularization says so),
 * or with hard contexts being trained (CONTEXT_SAMPLE, CONTEXT_GIVEN) the surrogate J
 * that backward differentiates (the cross-entropy is then hard_pass.stats.nll); keeps every
 * activation for backward but the output layer's, which model_backward computes again. */
double model_forward(Workspace *ws, const Params *P, const Batch *batch);

/* Backward of the last model_forward on the same batch. Accumulates into G (a Params
 * carved over the gradient buffer). Needs with_backward. Consumes forward's
 * activations: another backward needs another forward. */
void model_backward(Params *G, Workspace *ws, const Params *P, const Batch *batch);
/* The same with the embedding gradients added by rows to dE_x and dE_y (G->E_x and
 * G->E_y unused); NULL ones go to G as in model_backward. */
void model_backward_rows(Params *G, EmbeddingGrad *dE_x, EmbeddingGrad *dE_y, Workspace *ws,
                         const Params *P, const Batch *batch);
/* Training's pass: model_forward then model_backward_rows, without computing the output
 * layer twice (its gradient is taken chunk by chunk as the loss is). Returns the loss. */
double model_forward_backward(Params *G, EmbeddingGrad *dE_x, EmbeddingGrad *dE_y, Workspace *ws,
                              const Params *P, const Batch *batch);

#endif
