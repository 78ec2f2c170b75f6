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

int epochs_pair_positions(const Corpus *c, int pair)
{
    return (c->src_len[pair] > c->tgt_len[pair] ? c->src_len[pair] : c->tgt_len[pair]) + 1;
}

/* The pairs of one pool: batch_size * pool_batches of them, or with a token budget, pairs
 * until their positions reach pool_batches budgets (at least one pair). */
static size_t pool_count(const Epochs *b, size_t start)
{
    const Corpus *c = b->corpus;
    const size_t left = (size_t)c->n - start;
    if (b->batch_tokens <= 0) {
        size_t pool = (size_t)b->batch_size * (size_t)b->pool_batches;
        return left < pool ? left : pool;
    }
    const long budget = b->batch_tokens * b->pool_batches;
    long positions = 0;
    size_t count = 0;
    while (count < left && (count == 0 || positions < budget))
        positions += epochs_pair_positions(c, b->order[start + count++]);
    return count;
}

/* Cuts the sorted pool order[start .. start + count) into batches, appending them to
 * batch_first: a batch closes at batch_size pairs, or before a pair that would take it
 * past the token budget (its pairs times its longest side); a pair alone always fits. */
static void cut_pool(Epochs *b, size_t start, size_t count)
{
    int pairs = 0, longest = 0;
    for (size_t k = start; k < start + count; k++) {
        const int positions = epochs_pair_positions(b->corpus, b->order[k]);
        const int wider = positions > longest ? positions : longest;
        const int full = pairs == b->batch_size ||
                         (b->batch_tokens > 0 && (long)(pairs + 1) * wider > b->batch_tokens);
        if (pairs > 0 && full) {
            b->batch_first[++b->n_batches] = (int)k;
            pairs = 0;
        }
        longest = pairs > 0 ? wider : positions; /* a new batch starts with this pair */
        pairs++;
    }
    if (pairs > 0)
        b->batch_first[++b->n_batches] = (int)(start + count);
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
    SortKey *keys = xmalloc_array((size_t)c->n > 0 ? (size_t)c->n : 1, sizeof(SortKey));
    b->n_batches = 0;
    b->batch_first[0] = 0;
    for (size_t start = 0; start < (size_t)c->n;) {
        const size_t count = pool_count(b, start);
        for (size_t k = 0; k < count; k++) {
            int pair = b->order[start + k];
            keys[k] = (SortKey){c->src_len[pair], c->tgt_len[pair], (int)k, pair};
        }
        qsort(keys, count, sizeof(SortKey), by_length);
        for (size_t k = 0; k < count; k++)
            b->order[start + k] = keys[k].pair;
        cut_pool(b, start, count);
        start += count;
    }
    free(keys);
    for (int k = 0; k < b->n_batches; k++)
        b->batch_order[k] = k;
    if (b->shuffle)
        pcg32_shuffle(&b->rng, b->batch_order, (size_t)b->n_batches);
    b->next = 0;
}

void epochs_init(Epochs *b, const Corpus *c, int batch_size, long batch_tokens,
                 int pool_batches, int shuffle, uint64_t seed)
{
    *b = (Epochs){.corpus = c, .batch_size = batch_size, .batch_tokens = batch_tokens,
                  .pool_batches = pool_batches, .shuffle = shuffle};
    /* an epoch has at most a batch per pair */
    const size_t most = (size_t)c->n > 0 ? (size_t)c->n : 1;
    b->order = xmalloc_array(most, sizeof(int));
    b->batch_first = xmalloc_array(most + 1, sizeof(int));
    b->batch_order = xmalloc_array(most, sizeof(int));
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
    free(b->batch_first);
    free(b->batch_order);
    *b = (Epochs){0};
}

int epochs_next(Epochs *b, Batch *out, Error *err)
{
    if (b->next == b->n_batches) {
        b->epoch++;
        plan_epoch(b);
    }
    const int batch = b->batch_order[b->next++];
    const int first = b->batch_first[batch];
    return corpus_batch(b->corpus, b->order, first, b->batch_first[batch + 1] - first, 1, out,
                        err);
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
