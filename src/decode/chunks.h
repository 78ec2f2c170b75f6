/* chunks.h: decoding a batch of input sentences (`s2s translate`'s) in chunks: sorted by
 * length, as many sentences of similar lengths as fit in a memory budget go through
 * beam_search (beam.h) together, or one alone. The buffers are sized for what the input
 * needs and grown when it needs more: memory follows the input, not the longest source
 * allowed (translate.max_source_length). */
#ifndef S2S_CHUNKS_H
#define S2S_CHUNKS_H

#include <stddef.h>

#include "decode/split.h"

/* The most sentences a batch may have. The budget is what a full batch of
 * CHUNK_BUDGET_STEPS positions (translate.max_source_length's default, 250 tokens, and
 * </s>) takes: the memory decoding may take for several sentences at once. */
enum { CHUNK_MAX_SENTENCES = 32, CHUNK_BUDGET_STEPS = 251 };

/* One sentence of a batch. */
typedef struct {
    int ok;      /* 0: nothing to decode (a line that cannot be translated) */
    int n;       /* source tokens (without </s>) */
    int *ids;
    float *pixels; /* an image model's: the picture, (size, size, 3) channels last less
                    * the channel means (its n is then the grid's cells less one) */
    float *self; /* set by chunk_decode with keep_self: (sa_layers, n + 1, n + 1) its
                  * self-attention maps, malloc'd, kept from its chunk's encoding */
} ChunkSource;

typedef struct {
    /* set by the caller before chunk_decoder_init (the rest zero) */
    const Dims *dims;
    const Params *params;
    int beam, n_best, argmax;
    double alpha;
    double max_output_ratio; /* decode_output_limit's ratio and extra */
    long max_output_extra;
    int max_steps;           /* the longest source it is given, </s> included: one alone
                              * must fit in memory, which the caller checked */
    int keep_self;           /* keep each sentence's self-attention maps */
    /* set by chunk_decoder_init */
    size_t budget;           /* bytes a chunk of several sentences may take */
    int threads;             /* BLAS's threads when it starts: the parts run on as many */
    DecodeWeights weights;   /* the model's weights laid out for decoding (decode.h) */
    SplitDecoder dec;
    Batch bt;
    int batch, steps; /* the sentences and source positions the buffers hold (0: none yet) */
} ChunkDecoder;

/* Sets the budget for batches of up to max_sentences (at most CHUNK_MAX_SENTENCES): what
 * so many sentences of CHUNK_BUDGET_STEPS positions take, or the memory there is if
 * that is less. Allocates nothing yet. */
void chunk_decoder_init(ChunkDecoder *cd, int max_sentences);
void chunk_decoder_free(ChunkDecoder *cd);

/* Decodes the sentences of src[0..n_src) that are ok, in chunks of similar lengths;
 * results[k] gets sentence k's hypotheses, to nbest_free (none, all zero, for one not
 * ok, or one a signal left undecoded: decoding stops between chunks, interrupt.h), and
 * with keep_self each decoded sentence its self-attention maps. */
void chunk_decode(ChunkDecoder *cd, ChunkSource *const *src, int n_src, NBest *results);

#endif
