/* embedding_grad.c: embedding gradients by row (see embedding_grad.h). */
#include "nn/embedding_grad.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

void embedding_grad_init(EmbeddingGrad *g, int vocab, int dim, int max_positions)
{
    *g = (EmbeddingGrad){.vocab = vocab, .dim = dim};
    g->capacity = max_positions < vocab ? max_positions : vocab;
    g->slot = xmalloc_array((size_t)vocab, sizeof(int));
    for (int t = 0; t < vocab; t++)
        g->slot[t] = -1;
    g->tokens = xmalloc_array((size_t)g->capacity, sizeof(int));
    g->rows = xmalloc_array((size_t)g->capacity * dim, sizeof(real));
}

void embedding_grad_free(EmbeddingGrad *g)
{
    free(g->slot);
    free(g->tokens);
    free(g->rows);
    *g = (EmbeddingGrad){0};
}

void embedding_grad_clear(EmbeddingGrad *g)
{
    for (int r = 0; r < g->count; r++)
        g->slot[g->tokens[r]] = -1;
    g->count = 0;
}

void embedding_grad_add(EmbeddingGrad *g, const real *dout, int ld_dout, const int *ids, int skip_id,
                 int n)
{
    for (int k = 0; k < n; k++) {
        int t = ids[k];
        if (t == skip_id)
            continue;
        assert(t >= 0 && t < g->vocab);
        if (g->slot[t] < 0) {
            assert(g->count < g->capacity);
            g->slot[t] = g->count;
            g->tokens[g->count] = t;
            memset(g->rows + (size_t)g->count * g->dim, 0, sizeof(real) * g->dim);
            g->count++;
        }
        real *row = g->rows + (size_t)g->slot[t] * g->dim;
        const real *d = dout + (size_t)k * ld_dout;
        for (int c = 0; c < g->dim; c++)
            row[c] += d[c];
    }
}

void embedding_grad_merge(EmbeddingGrad *dst, const EmbeddingGrad *src)
{
    assert(dst->vocab == src->vocab && dst->dim == src->dim);
    for (int r = 0; r < src->count; r++) {
        const int t = src->tokens[r];
        const real *from = src->rows + (size_t)r * src->dim;
        if (dst->slot[t] < 0) {
            assert(dst->count < dst->capacity);
            dst->slot[t] = dst->count;
            dst->tokens[dst->count] = t;
            memcpy(dst->rows + (size_t)dst->count * dst->dim, from, sizeof(real) * dst->dim);
            dst->count++;
            continue;
        }
        real *row = dst->rows + (size_t)dst->slot[t] * dst->dim;
        for (int c = 0; c < dst->dim; c++)
            row[c] += from[c];
    }
}
