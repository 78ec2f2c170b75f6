/* split.h: a batch decoded in parts side by side, one thread each, as training's shards
 * run: every step of beam search (beam.h) is a few products of a few dozen rows, whose
 * BLAS threads spend more time waiting for each other than multiplying, and a search's
 * selection and bookkeeping are one thread's work. Parts of a batch never meet, so each
 * runs whole on its own core: its encoder, its decoder steps and its search.
 *
 * What a sentence gets never depends on the threads: the parts are a rule of the batch's
 * size alone (split_parts), part k takes sentences k, k + n, k + 2n, ... (as
 * batch_take_shard does, so that sentences sorted by length share the work evenly), and
 * the threads only decide which of them run at the same time. */
#ifndef S2S_SPLIT_H
#define S2S_SPLIT_H

#include "base/workers.h"
#include "decode/beam.h"

/* Sentences a part takes at most: a part of 16 rows (80 at beam 5) keeps its products
 * large enough for BLAS's kernels and gives a batch of 32 one part a core on 2 cores. */
enum { SPLIT_PART_SENTENCES = 16, SPLIT_MAX_PARTS = 8 };

typedef struct {
    int max_batch, parts; /* parts of a full batch */
    int part_batch;       /* the most sentences a part of any batch takes */
    int last_parts;       /* the parts of the batch last decoded */
    int blas_threads;     /* BLAS's threads outside the parts (one part alone uses them) */
    Workers *workers;     /* the threads the parts run on (NULL when one) */
    const Params *params; /* the model's weights, unchanged while it decodes */
    Decoder dec[SPLIT_MAX_PARTS];
    Batch part[SPLIT_MAX_PARTS];
} SplitDecoder;

/* How many parts a batch of n sentences is decoded in: ceil(n / SPLIT_PART_SENTENCES),
 * at most SPLIT_MAX_PARTS. */
int split_parts(int n);

/* Sized as decoder_init for batches of up to max_batch sentences of the model P (whose
 * weights must not change while it decodes; w: their copies for decoding's products,
 * decode.h, or NULL), run on up to `threads` threads (the calling one among them).
 * argmax as Decoder's. */
void split_decoder_init(SplitDecoder *sd, const Dims *d, const Params *P,
                        const DecodeWeights *w, int max_batch, int max_src_steps, int max_beam,
                        int argmax, int threads);
void split_decoder_free(SplitDecoder *sd); /* safe on a zeroed SplitDecoder */

/* beam_search (beam.h) over bt, part by part: out[b] gets sentence b's hypotheses. */
void split_beam_search(SplitDecoder *sd, const Batch *bt, int beam, double alpha, int n_best,
                       int scores, const int *max_out, NBest *out);

/* The encoder's workspace that holds sentence b of the batch last decoded, and b's
 * column in it (*column). */
const Workspace *split_encoding(const SplitDecoder *sd, int b, int *column);

#endif
