/* gradient.h: the training gradient of the whole model: a dense buffer for every
 * tensor but the embeddings, and the embeddings by rows (rowgrad.h).
 *
 * Bit for bit what a dense gradient buffer gives: the norm sums the same squares in the
 * same order (absent rows add nothing), clipping scales the same numbers, and the
 * optimizer reads absent rows as zeros. What changes is memory and time: at benchmark
 * size L the embedding tables are 16.4M of 38.5M parameters, and a batch touches about
 * a thousand of their 32,000 rows. */
#ifndef S2S_GRADIENT_H
#define S2S_GRADIENT_H

#include <stddef.h>

#include "model.h"
#include "optim.h"
#include "rowgrad.h"

typedef struct {
    Params dense;      /* every tensor but E_x, E_y (NULL); dense.mem owns the buffer */
    size_t offset;     /* where the dense part starts in the whole parameter buffer */
    RowGrad src_emb;   /* E_x's gradient */
    RowGrad tgt_emb;   /* E_y's gradient */
} Gradient;

/* For batches of up to max_batch pairs of up to max_src_steps / max_tgt_steps
 * positions. gradient_free on a zeroed Gradient is safe. */
void gradient_init(Gradient *g, const Dims *d, int max_batch, int max_src_steps,
                   int max_tgt_steps);
void gradient_free(Gradient *g);
void gradient_zero(Gradient *g);
/* model_forward_backward into g; returns the loss. */
double gradient_forward_backward(Gradient *g, Workspace *ws, const Params *P,
                                 const Batch *batch);
/* The L2 norm of the whole gradient, as grad_global_norm over a dense buffer. */
double gradient_norm(const Gradient *g);
/* Scales the gradient so its norm is at most max_norm (0: no clipping); returns the
 * norm before. */
double gradient_clip(Gradient *g, double max_norm);
/* One optimizer step of P (the whole buffer opt was made for) from g. */
void gradient_apply(Optimizer *opt, Params *P, const Gradient *g);

#endif
