/* chunks.c: a batch of sentences decoded in chunks of similar lengths within a memory
 * budget, in buffers that grow with the input (see chunks.h). */
#include "decode/chunks.h"

#include <assert.h>
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "base/interrupt.h"
#include "base/mem.h"

/* The most words a translation of a source of `steps` positions may have. */
static int output_limit(const ChunkDecoder *cd, int steps)
{
    return decode_output_limit(steps, cd->max_output_ratio, cd->max_output_extra);
}

void chunk_decoder_init(ChunkDecoder *cd, int max_sentences)
{
    assert(max_sentences >= 1 && max_sentences <= CHUNK_MAX_SENTENCES);
    cd->budget = beam_search_bytes(cd->dims, max_sentences, CHUNK_BUDGET_STEPS, cd->beam,
                                   output_limit(cd, CHUNK_BUDGET_STEPS));
    const size_t have = mem_available();
    cd->budget = cd->budget < have ? cd->budget : have;
    cd->threads = openblas_get_num_threads();
    decode_weights_make(&cd->weights, cd->dims, cd->params);
    cd->dec = (SplitDecoder){0};
    cd->bt = (Batch){0};
    cd->batch = cd->steps = 0;
}

/* The buffers sized for the sentences of a chunk (all but the weights). */
static void buffers_free(ChunkDecoder *cd)
{
    split_decoder_free(&cd->dec);
    batch_free(&cd->bt);
}

void chunk_decoder_free(ChunkDecoder *cd)
{
    buffers_free(cd);
    decode_weights_free(&cd->weights);
}

/* Whether n sentences of up to `steps` positions may be decoded together. */
static int chunk_fits(const ChunkDecoder *cd, int n, int steps)
{
    return n == 1 ||
           beam_search_bytes(cd->dims, n, steps, cd->beam, output_limit(cd, steps)) <= cd->budget;
}

/* Makes room for n sentences of `steps` positions; keeps what the buffers held when that
 * and the new need fit in the budget together. */
static void buffers_fit(ChunkDecoder *cd, int n, int steps)
{
    if (n <= cd->batch && steps <= cd->steps)
        return;
    int want_n = n > cd->batch ? n : cd->batch, want_steps = steps > cd->steps ? steps : cd->steps;
    if (!chunk_fits(cd, want_n, want_steps)) {
        want_n = n;
        want_steps = steps;
    }
    buffers_free(cd);
    split_decoder_init(&cd->dec, cd->dims, cd->params, &cd->weights, want_n, want_steps, cd->beam,
                       cd->argmax, cd->threads);
    batch_init(&cd->bt, want_n, want_steps, 0);
    if (model_reads_pictures(cd->dims))
        batch_init_pictures(&cd->bt, cd->dims->image_size);
    cd->batch = want_n;
    cd->steps = want_steps;
}

/* Copies sentence b's self-attention maps out of the chunk's encoding (S positions a
 * row there) into s->self. */
static void keep_self_maps(const ChunkDecoder *cd, ChunkSource *s, int b)
{
    const int layers = cd->dims->sa_layers, L = s->n + 1;
    int column;
    const Workspace *enc = split_encoding(&cd->dec, b, &column);
    const int S = enc->S; /* its part's longest source */
    s->self = xmalloc_array((size_t)layers * L * L, sizeof(float));
    for (int l = 0; l < layers; l++) {
        const real *weights = model_self_weights(enc, l) + (size_t)column * S * S;
        for (int i = 0; i < L; i++)
            for (int j = 0; j < L; j++)
                s->self[((size_t)l * L + i) * L + j] = (float)weights[(size_t)i * S + j];
    }
}

void chunk_decode(ChunkDecoder *cd, ChunkSource *const *src, int n_src, NBest *results)
{
    assert(n_src <= CHUNK_MAX_SENTENCES);
    for (int k = 0; k < n_src; k++)
        results[k] = (NBest){0};
    int order[CHUNK_MAX_SENTENCES], n = 0;
    for (int k = 0; k < n_src; k++) /* by source length, stably: insertion */
        if (src[k]->ok) {
            assert(src[k]->n + 1 <= cd->max_steps);
            int at = n++;
            for (; at > 0 && src[order[at - 1]]->n > src[k]->n; at--)
                order[at] = order[at - 1];
            order[at] = k;
        }
    for (int start = 0; start < n && !interrupt_pending();) {
        int size = 1;
        while (start + size < n && chunk_fits(cd, size + 1, src[order[start + size]]->n + 1))
            size++;
        const int *ids[CHUNK_MAX_SENTENCES];
        int src_n[CHUNK_MAX_SENTENCES], max_out[CHUNK_MAX_SENTENCES];
        for (int b = 0; b < size; b++) {
            const ChunkSource *s = src[order[start + b]];
            ids[b] = s->ids;
            src_n[b] = s->n;
            max_out[b] = output_limit(cd, s->n + 1);
        }
        buffers_fit(cd, size, src_n[size - 1] + 1);
        batch_fill(&cd->bt, size, ids, src_n, NULL, NULL);
        if (cd->bt.pixels) {
            const size_t one = (size_t)cd->bt.picture_size * cd->bt.picture_size * 3;
            for (int b = 0; b < size; b++)
                memcpy(cd->bt.pixels + one * b, src[order[start + b]]->pixels, sizeof(float) * one);
        }
        NBest chunk[CHUNK_MAX_SENTENCES];
        /* scores are written with n-best lists only */
        split_beam_search(&cd->dec, &cd->bt, cd->beam, cd->alpha, cd->n_best,
                          cd->n_best > 1, max_out, chunk);
        for (int b = 0; b < size; b++) {
            results[order[start + b]] = chunk[b];
            if (cd->keep_self)
                keep_self_maps(cd, src[order[start + b]], b);
        }
        start += size;
    }
}
