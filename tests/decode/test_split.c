/* test_split.c: a batch decoded in parts side by side (decode/split.h) gives every
 * sentence what beam search gives it in its part's sentences (k, k + n, ...) decoded as a
 * batch of their own, and the same on any number of threads: the parts never meet.
 * Compared bit for bit: words, log-probabilities, scores and attention. (That rows of
 * ended sentences leave a Transformer's products without changing the others is
 * test_beam.c's: the plain search there keeps every row.) */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "base/rng.h"
#include "decode/split.h"
#include "support/suites.h"
#include "support/tinyrun.h"

enum { N_SOURCES = 40, MAX_OUT = 12, BEAM = 3 };

/* The made-up sources: N_SOURCES of 2 to 7 words. */
static int ids[N_SOURCES][7], src_n[N_SOURCES];
static const int *src[N_SOURCES];

/* The tiny model of `run`, with random weights in [-1, 1] when `random` (a model that
 * ends anywhere), and a batch of the N_SOURCES sources. */
static void setup(const char *run, double random, Checkpoint *ck, Batch *bt, int *max_out)
{
    load_checkpoint(ck, run, "last.ckpt");
    Pcg32 rng;
    pcg32_seed(&rng, 6, 1);
    for (size_t k = 0; random && k < ck->model.params.n; k++)
        ck->model.params.mem[k] = pcg32_uniform(&rng, -1, 1);
    batch_init(bt, N_SOURCES, 8, 0);
    for (int b = 0; b < N_SOURCES; b++) {
        src_n[b] = 2 + (b * 5) % 6;
        for (int j = 0; j < src_n[b]; j++)
            ids[b][j] = N_SPECIAL_TOKENS + (b * 11 + j * 7) % (ck->model.src_vocab.size - N_SPECIAL_TOKENS);
        src[b] = ids[b];
        max_out[b] = MAX_OUT;
    }
    batch_fill(bt, N_SOURCES, src, src_n, NULL, NULL);
}

/* Sentence b's n-best lists a and b are the same, bit for bit. */
static void same_nbest(const NBest *x, const NBest *y, int b, const char *what)
{
    ck_assert_msg(x->n == y->n, "%s, source %d: %d hypotheses against %d", what, b, x->n, y->n);
    for (int i = 0; i < x->n; i++) {
        const Hypothesis *h = &x->hyps[i], *g = &y->hyps[i];
        const size_t rows = (size_t)h->len + h->ended, cells = rows * h->src_len;
        ck_assert_msg(h->len == g->len && h->ended == g->ended && h->n_heads == g->n_heads &&
                      !memcmp(h->tokens, g->tokens, sizeof(int) * h->len),
                      "%s, source %d, hypothesis %d: other words", what, b, i);
        ck_assert_msg(h->logprob == g->logprob && h->score == g->score,
                      "%s, source %d, hypothesis %d: log p %.17g against %.17g", what, b, i,
                      h->logprob, g->logprob);
        ck_assert_msg(!memcmp(h->attention, g->attention, sizeof(float) * cells) &&
                      (!h->n_heads || !memcmp(h->heads, g->heads, sizeof(float) * cells * h->n_heads)),
                      "%s, source %d, hypothesis %d: other attention", what, b, i);
    }
}

/* Decodes the first n sources (fewer than sd was sized for: fewer, larger parts) into
 * out. */
static void first_sentences(SplitDecoder *sd, int n, const int *max_out, NBest *out)
{
    Batch few;
    batch_init(&few, n, 8, 0);
    batch_fill(&few, n, src, src_n, NULL, NULL);
    split_beam_search(sd, &few, BEAM, 0.6, BEAM, 1, max_out, out);
    batch_free(&few);
}

/* The batch in parts on 2 threads and on 1, and each part's sentences by beam_search;
 * then smaller batches on the same decoder (16 sentences: one part, 5). */
static void check_split(const char *run, double random)
{
    Checkpoint ck;
    Batch bt;
    int max_out[N_SOURCES];
    setup(run, random, &ck, &bt, max_out);
    const Dims *d = &ck.model.dims;
    const Params *P = &ck.model.params;
    DecodeWeights w;
    decode_weights_make(&w, d, P);
    ck_assert(w.mem); /* every decoder's products take packed weights */
    /* what s2s bench --translate counts a row's step as: a multiply-add for each weight
     * the step reads, which the panels hold once each */
    ck_assert_double_eq(decoder_row_flops(d), 2.0 * (double)w.floats);
    static NBest two[N_SOURCES], one[N_SOURCES];
    const char *weights = random ? "random weights" : "trained";
    SplitDecoder sd;
    split_decoder_init(&sd, d, P, &w, N_SOURCES, 8, BEAM, 0, 2);
    ck_assert_int_eq(sd.parts, 3);
    split_beam_search(&sd, &bt, BEAM, 0.6, BEAM, 1, max_out, two);
    split_decoder_free(&sd);
    split_decoder_init(&sd, d, P, &w, N_SOURCES, 8, BEAM, 0, 1);
    split_beam_search(&sd, &bt, BEAM, 0.6, BEAM, 1, max_out, one);
    for (int n = 16; n >= 5; n -= 11) {
        static NBest few[N_SOURCES], alone[N_SOURCES];
        first_sentences(&sd, n, max_out, few);
        SplitDecoder small;
        split_decoder_init(&small, d, P, &w, n, 8, BEAM, 0, 2);
        first_sentences(&small, n, max_out, alone);
        split_decoder_free(&small);
        for (int b = 0; b < n; b++) {
            char what[96];
            snprintf(what, sizeof what, "%s, %d sentences on a decoder for %d", weights, n,
                     N_SOURCES);
            same_nbest(&few[b], &alone[b], b, what);
            nbest_free(&few[b]);
            nbest_free(&alone[b]);
        }
    }
    split_decoder_free(&sd);
    int ended_early = 0;
    for (int b = 0; b < N_SOURCES; b++) {
        char what[96];
        snprintf(what, sizeof what, "%s, 2 threads against 1", weights);
        same_nbest(&two[b], &one[b], b, what);
        ended_early += two[b].n && two[b].hyps[0].ended && two[b].hyps[0].len + 1 < MAX_OUT;
        nbest_free(&one[b]);
    }
    enum { PARTS = 3, PART = (N_SOURCES + PARTS - 1) / PARTS };
    Decoder dec;
    decoder_init(&dec, d, PART, 8, BEAM);
    dec.weights = &w;
    Batch part;
    batch_init(&part, PART, 8, 0);
    for (int k = 0; k < PARTS; k++) {
        const int n = batch_take_shard(&part, &bt, k, PARTS);
        int part_max[PART];
        NBest nb[PART];
        for (int c = 0; c < n; c++)
            part_max[c] = max_out[k + c * PARTS];
        beam_search(&dec, P, &part, BEAM, 0.6, BEAM, 1, part_max, nb);
        for (int c = 0; c < n; c++) {
            char what[96];
            snprintf(what, sizeof what, "%s, split against part %d by beam_search", weights, k);
            same_nbest(&two[k + c * PARTS], &nb[c], k + c * PARTS, what);
            nbest_free(&nb[c]);
        }
    }
    batch_free(&part);
    decoder_free(&dec);
    /* trained, the sentences end at different steps: rows left the decoder's products
     * (random weights may run every sentence to the limit) */
    ck_assert(random || ended_early >= N_SOURCES / 4);
    printf("split decoding (%s, %s): %d sentences in 3 parts, the same on 2 threads and 1 and "
           "as each part alone; %d ended before the limit\n", d->decoder ? "Transformer" : "GRU",
           weights, N_SOURCES, ended_early);
    for (int b = 0; b < N_SOURCES; b++)
        nbest_free(&two[b]);
    decode_weights_free(&w);
    batch_free(&bt);
    checkpoint_free(&ck);
}

START_TEST(split_decoding_is_each_part_decoded_on_any_threads)
{
    tiny_trained_and_random("split-gru", NULL, check_split);
    tiny_trained_and_random("split-transformer", TINY_TRANSFORMER, check_split);
}
END_TEST

Suite *split_suite(void)
{
    Suite *s = suite_create("split");
    TCase *tc = tcase_create("split");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, split_decoding_is_each_part_decoded_on_any_threads);
    suite_add_tcase(s, tc);
    return s;
}
