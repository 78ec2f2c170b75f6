/* epochs.h: epochs of batches over a corpus. Each epoch shuffles the pairs (PCG32,
 * the shuffle stream), sorts them by length within pools of bucket_batches batches so
 * that a batch holds sentences of similar length (little padding), cuts the pools into
 * batches and shuffles the batch order. A batch holds batch_size pairs, or, with a
 * token budget (batch_tokens > 0), as many pairs as fit in it: its pairs times its
 * longest side (source or target, with the end mark) at most batch_tokens, and at most
 * batch_size pairs (fairseq's --max-tokens, Joey NMT's batch_type: token), so that short
 * sentences come many to a batch and long ones few. The position (epoch, next batch,
 * and the RNG state at the epoch's start) is all a checkpoint needs to continue
 * exactly: the epoch's plan is made again from them. */
#ifndef S2S_EPOCHS_H
#define S2S_EPOCHS_H

#include "base/rng.h"
#include "data/corpus.h"
#include "model/batch.h"

typedef struct {
    const Corpus *corpus;
    int batch_size;      /* pairs a batch holds at most */
    long batch_tokens;   /* 0, or the padded positions a batch holds at most (see above) */
    int pool_batches, shuffle;
    Pcg32 rng;           /* the shuffle stream, after planning the current epoch */
    Pcg32 epoch_start;   /* the shuffle stream as it was when the epoch was planned */
    long epoch;          /* the current epoch, from 0 */
    long next;           /* the next batch of this epoch */
    int n_batches;       /* this epoch's (with a token budget, each epoch's may differ) */
    int *order;          /* (pairs) this epoch's order of the pairs */
    int *batch_first;    /* (n_batches + 1) batch b is order[batch_first[b] .. batch_first[b+1]) */
    int *batch_order;    /* (n_batches) order of the batches */
    /* called with the epoch's number before each epoch is planned (its batches depend
     * on the pairs' lengths): subword sampling splits the corpus anew there */
    void (*before_epoch)(void *ctx, long epoch);
    void *ctx;
} Epochs;

/* Sets up the first epoch from the seed's shuffle stream; batch_tokens 0 counts batches
 * in pairs only. epochs_free on a zeroed Epochs is safe. */
void epochs_init(Epochs *b, const Corpus *c, int batch_size, long batch_tokens,
                 int pool_batches, int shuffle, uint64_t seed);

/* The positions a pair takes in a batch's padded products: its longer side, with the end
 * mark (what training.batch_tokens counts). */
int epochs_pair_positions(const Corpus *c, int pair);
void epochs_free(Epochs *b);

/* Sets the hook called before each epoch is planned, and plans the current epoch again
 * with it (the same draws of the shuffle stream), from its first batch: call it before
 * drawing any (epochs_restore may follow). */
void epochs_set_hook(Epochs *b, void (*before_epoch)(void *ctx, long epoch), void *ctx);

/* Fills out with the next batch, moving to the next epoch when this one is done.
 * Returns corpus_batch's 0, or -1 with err set. */
int epochs_next(Epochs *b, Batch *out, Error *err);

/* Epochs done so far, with the fraction of the current one (for logs). */
double epochs_progress(const Epochs *b);

/* Continues from a saved position: the epoch, its next batch and the shuffle stream
 * as it was at the epoch's start. */
void epochs_restore(Epochs *b, long epoch, long next, uint64_t rng_state, uint64_t rng_inc);

#endif
