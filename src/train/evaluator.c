/* evaluator.c: a model scored on a corpus (see evaluator.h): the teacher-forced loss,
 * greedy translations with BLEU and exact match, and the attention against gold links or
 * boxes. It knows nothing of training: validation.c is the trainer's use of it. */
#include "train/evaluator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "report/metrics.h"

typedef struct {
    int len, pair;
} ByLen;

static int by_len(const void *a, const void *b)
{
    const ByLen *x = a, *y = b;
    return x->len != y->len ? x->len - y->len : x->pair - y->pair;
}

void evaluator_init(Evaluator *e, const Dims *d, const Corpus *c, int batch_size,
                    double max_output_ratio, long max_output_extra)
{
    memset(e, 0, sizeof *e);
    e->corpus = c;
    e->batch_size = batch_size;
    int S = c->max_src_len + 1, T = c->max_tgt_len + 1;
    model_workspace_init(&e->ws, d, batch_size, S, T, 0);
    decoder_init(&e->dec, d, batch_size, S, 1);
    batch_init(&e->batch, batch_size, S, T);
    batch_init(&e->sources, batch_size, S, 0);
    if (c->pics.n) {
        batch_init_pictures(&e->batch, c->pics.size);
        batch_init_pictures(&e->sources, c->pics.size);
    }
    e->max_out = decode_output_limit(c->max_src_len + 1, max_output_ratio, max_output_extra);
    e->out = xmalloc_array((size_t)batch_size * (size_t)(e->max_out > 0 ? e->max_out : 1),
                           sizeof(int));
    e->out_len = xmalloc_array((size_t)batch_size, sizeof(int));
    e->hyps = xcalloc((size_t)c->n, sizeof(char *));
    e->n_hyps = c->n;
    ByLen *keys = xmalloc_array((size_t)c->n, sizeof(ByLen));
    for (int k = 0; k < c->n; k++)
        keys[k] = (ByLen){c->src_len[k], k};
    qsort(keys, (size_t)c->n, sizeof(ByLen), by_len);
    e->order = xmalloc_array((size_t)c->n, sizeof(int));
    for (int k = 0; k < c->n; k++)
        e->order[k] = keys[k].pair;
    free(keys);
}

void evaluator_free(Evaluator *e)
{
    model_workspace_free(&e->ws);
    decoder_free(&e->dec);
    batch_free(&e->batch);
    batch_free(&e->sources);
    for (int k = 0; k < e->n_hyps; k++)
        free(e->hyps[k]);
    free(e->hyps);
    free(e->out);
    free(e->out_len);
    free(e->order);
    memset(e, 0, sizeof *e);
}

/* The words of one decoded sentence as text. */
static char *hyp_text(const Vocab *v, const int *ids, int n, const Splitter *sp, int natural)
{
    const char **words = xmalloc_array((size_t)n + 1, sizeof(char *));
    for (int k = 0; k < n; k++)
        words[k] = vocab_word(v, ids[k]);
    size_t len = splitter_join(sp, NULL, 0, words, n, natural);
    char *s = xmalloc(len + 1);
    splitter_join(sp, s, len + 1, words, n, natural);
    free(words);
    return s;
}

void evaluator_set_argmax(Evaluator *e, int argmax)
{
    model_set_argmax(&e->ws, argmax);
    e->dec.argmax = argmax;
}

int evaluate(Evaluator *e, const Params *P, const Vocab *tgt_vocab, const Splitter *tgt,
             int natural, double max_output_ratio, long max_output_extra, EvalScores *out,
             int (*stop)(void))
{
    const Corpus *c = e->corpus;
    double loss_sum = 0;
    long tokens = 0;
    for (int first = 0; first < c->n; first += e->batch_size) {
        if (stop && stop())
            return -1;
        int count = c->n - first < e->batch_size ? c->n - first : e->batch_size;
        corpus_batch(c, e->order, first, count, 1, &e->batch, NULL);
        loss_sum += model_forward(&e->ws, P, &e->batch) * e->batch.n_tgt_tokens;
        tokens += e->batch.n_tgt_tokens;

        corpus_batch(c, e->order, first, count, 0, &e->sources, NULL);
        /* the longest source's positions, </s> included */
        int max_out = decode_output_limit(e->sources.src_steps, max_output_ratio, max_output_extra);
        decode_greedy(&e->dec, P, &e->sources, max_out, e->out, e->out_len);
        for (int k = 0; k < count; k++) {
            int pair = e->order[first + k];
            /* each sentence gets its own limit, as if decoded alone */
            int limit = decode_output_limit(c->src_len[pair] + 1, max_output_ratio,
                                            max_output_extra);
            int n = e->out_len[k] < limit ? e->out_len[k] : limit;
            free(e->hyps[pair]);
            e->hyps[pair] = hyp_text(tgt_vocab, e->out + (size_t)k * max_out, n, tgt, natural);
        }
    }
    out->tokens = tokens;
    out->loss = tokens ? loss_sum / tokens : 0;
    out->ppl = exp(out->loss);
    Bleu b;
    bleu_corpus(&b, (const char *const *)e->hyps, (const char *const *)c->refs, c->n, 0);
    out->bleu = b.score;
    out->exact = exact_match((const char *const *)e->hyps, (const char *const *)c->refs, c->n, 0);
    return 0;
}

void evaluate_alignments(Evaluator *e, const Params *P, const GoldAlignments *gold,
                         const GroundFile *ground, AerCounts *aer, GroundingCounts *grounding,
                         double *mean_entropy)
{
    const Corpus *c = e->corpus;
    const Dims *d = &e->ws.dims;
    memset(aer, 0, sizeof *aer);
    if (grounding)
        memset(grounding, 0, sizeof *grounding);
    double entropy = 0;
    long rows = 0;
    Link *links = xmalloc_array((size_t)(c->max_tgt_len + 1), sizeof(Link));
    for (int first = 0; first < c->n; first += e->batch_size) {
        int count = c->n - first < e->batch_size ? c->n - first : e->batch_size;
        corpus_batch(c, e->order, first, count, 1, &e->batch, NULL);
        model_forward(&e->ws, P, &e->batch);
        long SB = (long)e->batch.src_steps * count;
        for (int k = 0; k < count; k++) {
            int pair = e->order[first + k];
            AttnMatrix m = {e->ws.dec.alpha + k, e->batch.tgt_len[k], e->batch.src_len[k], SB,
            count,
                            model_reads_pictures(&e->ws.dims)};
            int n = align_hard_links(&m, 0, links, c->max_tgt_len + 1);
            if (gold)
                aer_add(aer, links, n, gold->links + gold->start[pair], gold->count[pair]);
            if (ground) {
                int n_boxes;
                const GroundBox *boxes = ground_line(ground, c->line_no[pair], &n_boxes);
                grounding_add(grounding, m.w, m.row_stride, m.col_stride,
                              model_grid_side(d), boxes, n_boxes, c->pics.orig[pair]);
            }
            entropy += align_entropy_sum(&m);
            rows += m.rows;
        }
    }
    free(links);
    *mean_entropy = rows ? entropy / (double)rows : 0;
}
