/* shards.h: one training step's forward and backward pass over a batch cut into shards.
 *
 * A batch of B sentences is cut into n shards (batch_take_shard: every n-th sentence of
 * the batch sorted by target length, so their work is nearly equal). Each shard's pass
 * has its own workspace and gradient, divides by the whole batch's token and caption
 * counts (model_set_loss_counts), and draws its dropout masks and hard-attention samples
 * from its own window of the step's draws; then the gradients are summed in shard order.
 * So the result is a function of the batch, the step and n alone: the same whether the
 * shards run on one thread or several, in one process or in several (mpirun: each rank
 * runs n / ranks of them, and shard_exchange.h sums them in the same order), bit for bit.
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
#include "train/shard_exchange.h"

/* What a shard's pass reports besides its gradient, gathered from every rank. */
typedef struct {
    double loss;
    HardStats hard_stats;
    int used;           /* the shard had sentences */
} ShardResult;

typedef struct {
    int n;              /* shards of every batch */
    int first, local;   /* this rank's shards: first .. first + local - 1 (all of them
                         * without mpirun) */
    Batch *batch;       /* (local) each shard's sentences */
    Workspace *ws;      /* (local) */
    ModelGrad *grad;    /* (local) each shard's gradient; grad[0] then holds the sum */
    ShardResult *mine;  /* (local) */
    ShardResult *all;   /* (n) every rank's, in shard order */
    ShardExchange exchange; /* with several ranks: the sum across them */
    /* With several ranks, the output layer's gradient (dense elements output_from ..
     * the end: W_o and b_o, 36% of size M's) is exchanged while the shards' backward
     * passes go on: task 0 of the step's job, on the calling thread (the one that calls
     * MPI), waits on `outputs` for every shard's output layer, then sends it. */
    int overlap;
    size_t output_from;
    Latch *outputs;
    double exposed_seconds;  /* seconds of the exchange after the passes, summed */
    Workers *workers;   /* the threads this rank's shards run on (and, to overlap, one
                         * more: the calling thread's seat) */
    const Params *P;    /* the current step's parameters (during shards_forward_backward) */
    HardStats hard_stats; /* the shards' hard-attention statistics, summed */
} Shards;

/* For n shards of batches of up to max_batch pairs (of max_src_steps / max_tgt_steps
 * positions) on `threads` threads, the calling thread's included (no more than there
 * are shards to run at once); pictures of picture_size pixels and ground cells when
 * nonzero (as the whole batch has them). Under mpirun, this rank's share of them
 * (ranks_size() must divide n), on up to one thread more than that share: with it, the
 * exchange overlaps the passes. shards_free on a zeroed Shards is safe. */
void shards_init(Shards *s, const Dims *d, int n, int threads, int max_batch,
                 int max_src_steps, int max_tgt_steps, int picture_size, int ground_cells);
void shards_free(Shards *s);
/* With several ranks: whether the output layer's gradient goes during the passes (the
 * default, where the threads allow) or after them (0; `s2s bench --no-overlap` measures
 * what the overlap saves). The numbers are the same either way. */
void shards_set_overlap(Shards *s, int on);

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
