/* model_pass.h: what the forward pass (model_forward.c), the backward pass
 * (model_backward.c), the workspace's layout (workspace.c), the initial states
 * (init_state.c), hard attention (hard_attention.c) and s2s explain's reading of a
 * step (explain.c) share. Internal to src/model/. */
#ifndef S2S_MODEL_PASS_H
#define S2S_MODEL_PASS_H

#include "model/model.h"

/* What the loss divides by: the target tokens and the captions model_set_loss_counts
 * gave, or this batch's own. */
static inline double loss_tokens(const Workspace *ws)
{
    return ws->loss_tokens > 0 ? ws->loss_tokens : ws->N;
}

static inline double loss_captions(const Workspace *ws)
{
    return ws->loss_captions > 0 ? ws->loss_captions : ws->B;
}

/* Points every buffer of ws into its arena for a batch of (B, S, T, N) whose decoder
 * computes R rows over all steps (workspace.c states which buffers share memory). */
void model_workspace_carve(Workspace *ws, int B, int S, int T, int N, int R);

/* An initial state of the decoder, tanh(W init + b) (B, p), from the encoder's summary
 * init (B, w0; row stride ld_init): s_0 with (W_s, b_s), c_0 with (W_c, b_c). */
typedef struct {
    const real *init;
    int ld_init;
    const real *W, *b; /* (p, w0), (p) */
    int B, p, w0;
} InitState;
/* out (B, p; row stride ld_out) = tanh(init W^T + b) */
void init_state_forward(real *out, int ld_out, const InitState *st);
/* From d_out (B, p), the gradient of out (row stride ld_out, as forward wrote it):
 * d_pre (B, p; may be d_out's memory) the pre-activation's, and dW, db and d_init
 * (row stride st->ld_init) accumulated. */
void init_state_backward(real *dW, real *db, real *d_init, real *d_pre, const real *d_out,
                         const real *out, int ld_out, const InitState *st);

/* Everything up to the readout t_i (ws->ro.out, and ws->ro.dropped with readout
 * dropout) of every real target position, with the regularization's masks. */
void model_forward_to_readout(Workspace *ws, const Params *P, const Batch *bt);

/* The output layer and the loss, chunk by chunk; returns the summed cross-entropy. With
 * G, also its backward: dW_o and db_o into G, d_ro_out (N, l) overwritten with the
 * gradient of what the output layer read. */
double model_output_layer(Params *G, Workspace *ws, const Params *P);

/* What a pass returns, from the output layer's summed cross-entropy: its token mean, or
 * with hard contexts hard_objective's value (J when they are being trained). */
double model_pass_loss(Workspace *ws, const Batch *bt, double ce_sum);

/* Training's attention supervision (Regularization.attention_supervision): the weight
 * step i's alignment gives pair b's word on the cells its box covers (bt->ground), at
 * least 1e-30 so that its log is finite; or -1 for a step that names nothing (a word
 * without a box, </s>, a step past the caption). */
double model_ground_mass(const Workspace *ws, const Batch *bt, int i, int b);

/* Step i's additive-attention tanh layer (S*B, a): its own block when every step's is
 * kept for backward, else the one block that backward fills again. */
real *model_att_pre_step(const Workspace *ws, int i);

/* The Transformer decoder (decoder_transformer.c) in place of the recurrent decoder's
 * stages: from the annotations to the readout ro.out (and ro.dropped) of every real target
 * position, the alignment in dec.alpha; and back from d_ro_out to the decoder's weights,
 * the annotations' gradient enc.d_H (overwritten) and the target embeddings'. */
void transformer_forward_to_readout(Workspace *ws, const Params *P, const Batch *bt, Pcg32 *rng);
void transformer_backward_from_readout(Params *G, EmbeddingGrad *dE_y, Workspace *ws,
                                       const Params *P, const Batch *bt);

/* Hard attention (hard_attention.c). Whether this pass forms contexts other than the
 * expected ones. */
int hard_contexts(const Workspace *ws);
/* Before the decoder steps: which sentences choose (hard_pass.rows), the draws, soft_len. */
void hard_plan(Workspace *ws);
/* Step i's AttnChoice over the workspace's buffers. */
AttnChoice hard_step_choice(const Workspace *ws, int i);
/* After the output layer, from its summed loss ce_sum and tok_nll: hard_pass.stats, the
 * advantages (unless frozen), and the returned value: J in a surrogate pass
 * (CONTEXT_SAMPLE, CONTEXT_GIVEN), else the token-mean cross-entropy. */
double hard_objective(Workspace *ws, const Batch *bt, double ce_sum);
/* Step i's surrogate weights into step_reinforce and step_entropy (B), for backward. */
void hard_step_weights(Workspace *ws, const Batch *bt, int i);

#endif
