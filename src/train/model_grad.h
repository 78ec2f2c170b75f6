/* model_grad.h: the training gradient of the whole model: a dense buffer for every
 * tensor but the embeddings, and the embeddings by rows (nn/embedding_grad.h).
 *
 * Bit for bit what a dense gradient buffer gives: the norm sums the same squares in the
 * same order (absent rows add nothing), clipping scales the same numbers, and the
 * optimizer reads absent rows as zeros. What changes is memory and time: at benchmark
 * size L the embedding tables are 16.4M of 38.5M parameters, and a batch touches about
 * a thousand of their 32,000 rows. */
#ifndef S2S_MODEL_GRAD_H
#define S2S_MODEL_GRAD_H

#include <stddef.h>

#include "nn/embedding_grad.h"
#include "model/model.h"
#include "train/optim.h"

typedef struct {
    Params dense;      /* every tensor but E_x, E_y (NULL); dense.mem owns the buffer. A
                        * tied model's E_y (W_o) is dense: the output layer fills it all;
                        * so are shared embeddings' (E_x is E_y) */
    size_t offset;     /* where the dense part starts in the whole parameter buffer */
    EmbeddingGrad src_emb;   /* E_x's gradient (left empty when E_x is E_y) */
    EmbeddingGrad tgt_emb;   /* E_y's gradient (left empty when E_y is dense) */
} ModelGrad;

/* For batches of up to max_batch pairs of up to max_src_steps / max_tgt_steps
 * positions. model_grad_free on a zeroed ModelGrad is safe. */
void model_grad_init(ModelGrad *g, const Dims *d, int max_batch, int max_src_steps,
                   int max_tgt_steps);
void model_grad_free(ModelGrad *g);
void model_grad_zero(ModelGrad *g);
/* model_forward_backward into g; returns the loss. */
double model_grad_forward_backward(ModelGrad *g, Workspace *ws, const Params *P,
                                 const Batch *batch);
/* The L2 norm of the whole gradient, as grad_global_norm over a dense buffer. */
double model_grad_norm(const ModelGrad *g);
/* Scales the gradient so its norm is at most max_norm (0: no clipping); returns the
 * norm before. */
double model_grad_clip(ModelGrad *g, double max_norm);
/* One optimizer step of P (the whole buffer opt was made for) from g. */
void model_grad_apply(Optimizer *opt, Params *P, const ModelGrad *g);

#endif
