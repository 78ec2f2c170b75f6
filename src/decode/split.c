/* split.c: a batch decoded in parts on threads of their own (see split.h). */
#include "decode/split.h"

#include <assert.h>
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

int split_parts(int n)
{
    const int parts = (n + SPLIT_PART_SENTENCES - 1) / SPLIT_PART_SENTENCES;
    return parts < 1 ? 1 : parts > SPLIT_MAX_PARTS ? SPLIT_MAX_PARTS : parts;
}

void split_decoder_init(SplitDecoder *sd, const Dims *d, const Params *P,
                        const DecodeWeights *w, int max_batch, int max_src_steps, int max_beam,
                        int argmax, int threads)
{
    memset(sd, 0, sizeof *sd);
    sd->params = P;
    sd->max_batch = max_batch;
    sd->parts = split_parts(max_batch);
    /* room for the largest part of any batch up to max_batch: 16 sentences (a batch of 16
     * is one part), or an eighth of the batch past 8 parts */
    sd->part_batch = max_batch < SPLIT_PART_SENTENCES ? max_batch : SPLIT_PART_SENTENCES;
    if (max_batch > SPLIT_MAX_PARTS * SPLIT_PART_SENTENCES)
        sd->part_batch = (max_batch + SPLIT_MAX_PARTS - 1) / SPLIT_MAX_PARTS;
    sd->blas_threads = threads < 1 ? 1 : threads;
    const int run_on = sd->parts < sd->blas_threads ? sd->parts : sd->blas_threads;
    sd->workers = run_on > 1 ? workers_start(run_on) : NULL;
    for (int k = 0; k < sd->parts; k++) {
        decoder_init(&sd->dec[k], d, sd->part_batch, max_src_steps, max_beam);
        sd->dec[k].argmax = argmax;
        sd->dec[k].weights = w && w->mem ? w : NULL;
        batch_init(&sd->part[k], sd->part_batch, max_src_steps, 0);
        if (model_reads_pictures(d))
            batch_init_pictures(&sd->part[k], d->image_size);
    }
}

void split_decoder_free(SplitDecoder *sd)
{
    workers_stop(sd->workers);
    for (int k = 0; k < sd->parts; k++) {
        decoder_free(&sd->dec[k]);
        batch_free(&sd->part[k]);
    }
    memset(sd, 0, sizeof *sd);
}

/* One search, its arguments and where each part's sentences go. */
typedef struct {
    SplitDecoder *sd;
    const Batch *bt;
    int beam, n_best, scores, parts;
    double alpha;
    const int *max_out;
    NBest *out;
} Search;

static void search_part(void *ctx, int k)
{
    const Search *s = ctx;
    SplitDecoder *sd = s->sd;
    Batch *part = &sd->part[k];
    const int n = batch_take_shard(part, s->bt, k, s->parts);
    if (n == 0)
        return;
    int *max_out = xmalloc_array((size_t)n, sizeof(int));
    NBest *out = xmalloc_array((size_t)n, sizeof(NBest));
    for (int c = 0; c < n; c++)
        max_out[c] = s->max_out[k + c * s->parts];
    beam_search(&sd->dec[k], sd->params, part, s->beam, s->alpha, s->n_best, s->scores, max_out,
                out);
    for (int c = 0; c < n; c++)
        s->out[k + c * s->parts] = out[c];
    free(max_out);
    free(out);
}

void split_beam_search(SplitDecoder *sd, const Batch *bt, int beam, double alpha, int n_best,
                       int scores, const int *max_out, NBest *out)
{
    const int parts = split_parts(bt->batch_size);
    assert(bt->batch_size <= sd->max_batch && parts <= sd->parts);
    Search s = {sd, bt, beam, n_best, scores, parts, alpha, max_out, out};
    sd->last_parts = parts;
    /* parts side by side take a core each: their products one BLAS thread (BLAS's
     * threads would wait for each other and spin on the cores the parts need) */
    if (sd->workers && parts > 1) {
        openblas_set_num_threads(1);
        workers_run(sd->workers, search_part, &s, parts);
        openblas_set_num_threads(sd->blas_threads);
    } else {
        for (int k = 0; k < parts; k++)
            search_part(&s, k);
    }
}

const Workspace *split_encoding(const SplitDecoder *sd, int b, int *column)
{
    assert(sd->last_parts > 0);
    *column = b / sd->last_parts;
    return &sd->dec[b % sd->last_parts].enc;
}
