/* shard_exchange.h: the sum of a step's shard gradients across the ranks of an mpirun
 * (base/ranks.h), in shard order, so that every rank ends with exactly the gradient one
 * process summing the same shards would have.
 *
 * One process sums its shards as a left fold: ((g_0 + g_1) + g_2) + ... (shards.c).
 * Float addition is not associative, so the ranks cannot each pre-sum their shards and
 * add the results in any tree an MPI library picks. They pass the fold along instead:
 * rank r holds shards r m .. r m + m - 1 (m = S / N); it receives the sum of the shards
 * before its own from rank r - 1, adds its own in order, and sends the sum on. The last
 * rank then holds the whole sum, and sends it around the ring (to rank 0, then 1, ...),
 * which only copies bytes. The dense part travels in chunks, so every link is busy with
 * one chunk while the next is being added: on two ranks each link carries the gradient
 * once, as a ring all-reduce's does. The embedding rows travel as one message per table,
 * the touched rows only (nn/embedding_grad.h), in the order one process would merge them.
 * A part of the gradient can go on its own (shard_exchange_dense): the output layer's,
 * final first in the backward pass, travels while the rest is computed (shards.c).
 *
 * Every buffer is made at init; a step allocates nothing. */
#ifndef S2S_SHARD_EXCHANGE_H
#define S2S_SHARD_EXCHANGE_H

#include <stddef.h>

#include "base/ranks.h"
#include "train/model_grad.h"

typedef struct {
    size_t chunk;            /* floats of the dense gradient in one message */
    int n_chunks;
    float *incoming;         /* (chunk) a partial sum arriving */
    EmbeddingGrad merged[2]; /* the embedding tables' partial sums, rebuilt in order */
    unsigned char *wire_out[2], *wire_in[2]; /* a table's rows as a message */
    size_t wire_cap[2];
    RanksSend *sends;        /* every send of one exchange, completed at its end */
    int n_sends, max_sends;
} ShardExchange;

/* For the gradients of model d over batches of up to max_src_positions and
 * max_tgt_positions token positions (the whole batch's). */
void shard_exchange_init(ShardExchange *x, const Dims *d, size_t max_src_positions,
                         size_t max_tgt_positions);
void shard_exchange_free(ShardExchange *x);

/* local[0 .. m-1]: this rank's shards' gradients, in shard order. Leaves in local[0], on
 * every rank, the sum of all ranks' shards in shard order. A collective. */
void shard_exchange_sum(ShardExchange *x, ModelGrad *local, int m);
/* The same for a part: the embedding rows, or the dense elements [from, to) alone. Each
 * rank must exchange the same parts in the same order; a part whose shards' gradients
 * are final may go while the shards still compute the rest (train/shards.c). */
void shard_exchange_rows(ShardExchange *x, ModelGrad *local, int m);
void shard_exchange_dense(ShardExchange *x, ModelGrad *local, int m, size_t from, size_t to);

#endif
