/* bench_translate.c: decoding speed on formula weights and sources (see bench_translate.h). */
#include "cli/bench_translate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "base/clock.h"
#include "base/mem.h"
#include "cli/command.h"
#include "decode/split.h"

enum { MAX_WORDS = 20 };

void bench_formula_weights(Params *P)
{
    for (int k = 0; k < P->n_tensors; k++) {
        const Tensor *t = &P->tensors[k];
        int sum = 0;
        for (const char *c = t->name; *c; c++)
            sum += (unsigned char)*c;
        const double phase = sum / 10.0;
        for (size_t e = 0; e < (size_t)t->rows * t->cols; e++)
            t->data[e] = (real)(0.1 * sin(0.7 * (double)e + phase));
    }
}

/* Batch s of the formula sources (bench_translate.h). */
static void formula_sources(Batch *bt, const Dims *d, int s, int batch, int (*words)[MAX_WORDS])
{
    for (int k = 0; k < batch; k++) {
        bt->pair_src_n[k] = 5 + (7 * k + 3 * s) % 16;
        for (int j = 0; j < bt->pair_src_n[k]; j++)
            words[k][j] = N_SPECIAL_TOKENS + (131 * k + 31 * j + 17 * s) % (d->src_vocab - N_SPECIAL_TOKENS);
        bt->pair_src[k] = words[k];
    }
    batch_fill(bt, batch, bt->pair_src, bt->pair_src_n, NULL, NULL);
}

/* The step weight products' operations of every part's decoder so far. */
static double parts_flops(const SplitDecoder *sd)
{
    double flops = 0;
    for (int k = 0; k < SPLIT_MAX_PARTS; k++)
        flops += sd->dec[k].flops;
    return flops;
}

int bench_translate(const Dims *d, const char *size, int batch, int batches, int warmup,
                    int beam)
{
    Params P;
    params_alloc(&P, d);
    bench_formula_weights(&P);
    DecodeWeights weights; /* as s2s translate decodes: in parts side by side */
    decode_weights_make(&weights, d, &P);
    SplitDecoder dec;
    split_decoder_init(&dec, d, &P, &weights, batch, MAX_WORDS + 1, beam, 0, openblas_get_num_threads());
    Batch bt;
    batch_init(&bt, batch, MAX_WORDS + 1, 0);
    int (*words)[MAX_WORDS] = xmalloc_array((size_t)batch, sizeof *words);
    int *max_out = xmalloc_array((size_t)batch, sizeof(int));
    NBest *out = xmalloc_array((size_t)batch, sizeof(NBest));
    double seconds = 0, warmup_flops = 0;
    long sentences = 0, words_out = 0;
    unsigned long fingerprint = 0; /* of the words: the same in torch's decoding */
    for (int s = 0; s < warmup + batches; s++) {
        formula_sources(&bt, d, s, batch, words);
        for (int k = 0; k < batch; k++)
            max_out[k] = decode_output_limit(bt.src_len[k], 2, 10);
        if (s == warmup)
            warmup_flops = parts_flops(&dec);
        const double t0 = now_seconds();
        split_beam_search(&dec, &bt, beam, 0.6, 1, 0, max_out, out); /* as translate: no scores */
        const double dt = now_seconds() - t0;
        for (int k = 0; k < batch; k++) {
            const Hypothesis *h = out[k].n ? &out[k].hyps[0] : NULL;
            for (int j = 0; h && s >= warmup && j < h->len; j++)
                fingerprint = (fingerprint * 31 + (unsigned long)h->tokens[j]) % 1000000007UL;
            if (s >= warmup)
                words_out += h ? h->len : 0;
            nbest_free(&out[k]);
        }
        if (s >= warmup) {
            seconds += dt;
            sentences += batch;
        }
    }
    const double flops = parts_flops(&dec) - warmup_flops;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const double rss_mib = (double)ru.ru_maxrss / 1024.0;
    const int threads = dec.workers ? workers_threads(dec.workers) : 1;
    printf("s2s bench --translate: size %s, %s, batches of %d in %d part%s on %d thread%s, %d "
           "after %d warm-up\n", size, beam == 1 ? "greedy" : "beam search", batch,
           split_parts(batch), split_parts(batch) > 1 ? "s" : "", threads, threads > 1 ? "s" : "",
           batches, warmup);
    printf("sentences/s          : %.1f\n", (double)sentences / seconds);
    printf("words out            : %ld (%.1f a sentence)\n", words_out,
           (double)words_out / (double)sentences);
    printf("weight products      : %.1f GFLOP/s (the steps' rows times their products)\n",
           flops / seconds / 1e9);
    printf("peak RSS             : %.1f MiB\n", rss_mib);
    printf("RESULT {\"size\": \"%s\", \"batch\": %d, \"beam\": %d, \"sentences_per_s\": %.3f, "
           "\"words_out\": %ld, \"fingerprint\": %lu, \"step_gflops\": %.2f, "
           "\"peak_rss_mib\": %.1f}\n", size, batch, beam, (double)sentences / seconds, words_out,
           fingerprint, flops / seconds / 1e9, rss_mib);
    free(words);
    free(max_out);
    free(out);
    batch_free(&bt);
    split_decoder_free(&dec);
    decode_weights_free(&weights);
    params_free(&P);
    return cmd_flush_stdout() == 0 ? EXIT_OK : EXIT_IO;
}
