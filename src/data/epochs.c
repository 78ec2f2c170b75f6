/* epochs.c: length-bucketed, shuffled batches with a resumable position (see
 * epochs.h). */
#include "data/epochs.h"

#include <stdlib.h>

#include "base/mem.h"

typedef struct {
    int src_len, tgt_len, position, pair;
} SortKey;

/* By source length, then target length, then position in the shuffled order (so the
 * sort is deterministic whatever qsort does with ties). */
static int by_length(const void *a, const void *b)
{
    const SortKey *x = a, *y = b;
    if (x->src_len != y->src_len)
        return x->src_len - y->src_len;
    if (x->tgt_len != y->tgt_len)
        return x->tgt_len - y->tgt_len;
    return x->position - y->position;
}

/* Plans the epoch that starts with the stream in b->rng. */
static void plan_epoch(Epochs *b)
{
    if (b->before_epoch)
        b->before_epoch(b->ctx, b->epoch);
    const Corpus *c = b->corpus;
    b->epoch_start = b->rng;
    for (int k = 0; k < c->n; k++)
        b->order[k] = k;
    if (b->shuffle)
        pcg32_shuffle(&b->rng, b->order, (size_t)c->n);
    size_t pool = (size_t)b->batch_size * (size_t)b->pool_batches;
    SortKey *keys = xmalloc_array(pool < (size_t)c->n ? pool : (size_t)c->n, sizeof(SortKey));
    for (size_t start = 0; start < (size_t)c->n; start += pool) {
        size_t count = (size_t)c->n - start < pool ? (size_t)c->n - start : pool;
        for (size_t k = 0; k < count; k++) {
            int pair = b->order[start + k];
            keys[k] = (SortKey){c->src_len[pair], c->tgt_len[pair], (int)k, pair};
        }
        qsort(keys, count, sizeof(SortKey), by_length);
        for (size_t k = 0; k < count; k++)
            b->order[start + k] = keys[k].pair;
    }
    free(keys);
    for (int k = 0; k < b->n_batches; k++)
        b->batch_order[k] = k;
    if (b->shuffle)
        pcg32_shuffle(&b->rng, b->batch_order, (size_t)b->n_batches);
    b->next = 0;
}

void epochs_init(Epochs *b, const Corpus *c, int batch_size, int pool_batches, int shuffle,
                  uint64_t seed)
{
    *b = (Epochs){.corpus = c, .batch_size = batch_size, .pool_batches = pool_batches,
                   .shuffle = shuffle};
    b->n_batches = (c->n + batch_size - 1) / batch_size;
    b->order = xmalloc_array((size_t)c->n, sizeof(int));
    b->batch_order = xmalloc_array((size_t)b->n_batches, sizeof(int));
    pcg32_seed(&b->rng, seed, RNG_STREAM_SHUFFLE);
    plan_epoch(b);
}

void epochs_set_hook(Epochs *b, void (*before_epoch)(void *ctx, long epoch), void *ctx)
{
    b->before_epoch = before_epoch;
    b->ctx = ctx;
    b->rng = b->epoch_start;
    plan_epoch(b);
}

void epochs_free(Epochs *b)
{
    free(b->order);
    free(b->batch_order);
    *b = (Epochs){0};
}

int epochs_next(Epochs *b, Batch *out, Error *err)
{
    if (b->next == b->n_batches) {
        b->epoch++;
        plan_epoch(b);
    }
    const Corpus *c = b->corpus;
    int first = b->batch_order[b->next++] * b->batch_size;
    int count = c->n - first < b->batch_size ? c->n - first : b->batch_size;
    return corpus_batch(c, b->order, first, count, 1, out, err);
}

double epochs_progress(const Epochs *b)
{
    return (double)b->epoch + (double)b->next / (double)b->n_batches;
}

void epochs_restore(Epochs *b, long epoch, long next, uint64_t rng_state, uint64_t rng_inc)
{
    b->rng.state = rng_state;
    b->rng.inc = rng_inc;
    b->epoch = epoch;
    plan_epoch(b);
    b->next = next;
}
