/* shards.h: one training step's forward and backward pass over a batch cut into shards.
 *
 * A batch of B sentences is cut into n shards (batch_take_shard: every n-th sentence of
 * the batch sorted by target length, so their work is nearly equal). Each shard's pass
 * has its own workspace and gradient, divides by the whole batch's token and caption
 * counts (model_set_loss_counts), and draws its dropout masks and hard-attention samples
 * from its own window of the step's draws; then the gradients are summed in shard order.
 * So the result is a function of the batch, the step and n alone: the same whether the
 * shards run on one thread or several (or, later, on several processes), bit for bit.
 *
 * Why: products of one decoder step over 32 sentences are too small for BLAS's threads
 * to pay (make bench-gemm measured them); two passes of 16 sentences, one per core with
 * single-threaded BLAS, keep both cores busy through the whole step. With n = 1 this
 * is the plain pass, with the trainer's own draws. */
#ifndef S2S_SHARDS_H
#define S2S_SHARDS_H

#include "base/workers.h"
#include "model/model.h"
#include "train/model_grad.h"

typedef struct {
    int n;              /* shards of every batch */
    Batch *batch;       /* (n) each shard's sentences */
    Workspace *ws;      /* (n) */
    ModelGrad *grad;    /* (n) each shard's gradient; grad[0] then holds the sum */
    double *loss;       /* (n) */
    Workers *workers;   /* the threads the shards run on */
    const Params *P;    /* the current step's parameters (during shards_forward_backward) */
    HardStats hard_stats; /* the shards' hard-attention statistics, summed */
} Shards;

/* For n shards of batches of up to max_batch pairs (of max_src_steps / max_tgt_steps
 * positions) on `threads` threads; pictures of picture_size pixels and ground cells
 * when nonzero (as the whole batch has them). shards_free on a zeroed Shards is safe. */
void shards_init(Shards *s, const Dims *d, int n, int threads, int max_batch,
                 int max_src_steps, int max_tgt_steps, int picture_size, int ground_cells);
void shards_free(Shards *s);

/* The step's forward and backward pass over batch: returns the loss (the hard
 * surrogate for a hard model, as model_forward_backward) and leaves the gradient in
 * shards_gradient. reg and hard (NULL: a soft pass) carry the step's generators,
 * positioned at the step's window of 2^32 draws; shard k draws from the k-th of n equal
 * parts of that window. */
double shards_forward_backward(Shards *s, const Params *P, const Batch *batch,
                               const Regularization *reg, const HardAttention *hard);
static inline ModelGrad *shards_gradient(Shards *s)
{
    return &s->grad[0];
}

#endif
