/* embedding_grad.h: the gradient of an embedding table, kept only for the rows a batch uses.
 *
 * A batch of 32 sentences touches a few hundred of a table's thousands of rows; every
 * other row's gradient is zero. Training keeps the touched rows alone, so a large
 * vocabulary costs no gradient memory, no zeroing and no norm summing over zeros (at
 * benchmark size L, 62 MiB and two passes over them per step). The optimizer reads an
 * absent row as zeros, which is bit for bit what the dense update does. */
#ifndef S2S_EMBEDDING_GRAD_H
#define S2S_EMBEDDING_GRAD_H

#include <stddef.h>

#include "nn/real.h"

typedef struct {
    int vocab, dim;
    int capacity;  /* rows it can hold: at most the positions of one batch */
    int count;     /* rows in use, in order of first use */
    int *slot;     /* (vocab): the row of `rows` holding a token's gradient, or -1 */
    int *tokens;   /* (capacity): the token of each row in use */
    real *rows;    /* (capacity, dim) */
} EmbeddingGrad;

/* For a (vocab, dim) table and batches of up to max_positions token positions.
 * embedding_grad_free on a zeroed EmbeddingGrad is safe. */
void embedding_grad_init(EmbeddingGrad *g, int vocab, int dim, int max_positions);
void embedding_grad_free(EmbeddingGrad *g);
/* Back to all zero; costs the rows in use, not the vocabulary. */
void embedding_grad_clear(EmbeddingGrad *g);
/* The gradient of an embedding lookup: for each k < n with ids[k] != skip_id, adds row
 * k of dout (row stride ld_dout) to token ids[k]'s row. */
void embedding_grad_add(EmbeddingGrad *g, const real *dout, int ld_dout, const int *ids, int skip_id,
                 int n);
/* dst += src, row by row in src's order (a row dst lacks is appended as a copy): the
 * sum of shards' gradients (train/shards.h). dst needs room for both tables' rows. */
void embedding_grad_merge(EmbeddingGrad *dst, const EmbeddingGrad *src);

/* Token t's gradient row, or NULL when it is zero. */
static inline const real *embedding_grad_row(const EmbeddingGrad *g, int t)
{
    return g->slot[t] < 0 ? NULL : g->rows + (size_t)g->slot[t] * g->dim;
}

#endif
