/* beam.h: beam search over a batch of sentences, hypotheses side by side in the
 * decoder's rows, with the attention of every step carried along and traced back with
 * the hypothesis it belongs to (so beam search, not only greedy decoding, has
 * alignments). Scores are log-probabilities, normalised by the length penalty of Wu et
 * al. 2016 (GNMT): ((5 + |Y|) / 6)^alpha, |Y| counting </s>. */
#ifndef S2S_BEAM_H
#define S2S_BEAM_H

#include "decode/decode.h"

typedef struct {
    int *tokens;       /* the words, </s> not included */
    int len;
    int ended;         /* it ended with </s> (else it reached the length limit) */
    double logprob;    /* sum of log-probabilities of its tokens, </s> included */
    double score;      /* logprob over the length penalty: what the beam ranks by */
    float *attention;  /* (len + ended) rows of src_len weights: one row per output step
                        * (a multi-head model's: the mean of its heads) */
    int n_heads;       /* 0, or a multi-head model's heads: */
    float *heads;      /* (n_heads, len + ended, src_len) each head's rows */
    int *chosen;       /* (len + ended, H) each head's position, decoded with argmax
                        * contexts (NULL otherwise) */
    int n_chosen;      /* H when chosen is set, else 0 */
    int src_len;       /* source positions, </s> included */
} Hypothesis;

typedef struct {
    Hypothesis *hyps; /* best first */
    int n;
} NBest;

/* The memory beam_search needs for `batch` sentences of up to src_steps positions (</s>
 * included) and at most max_out words, with beam hypotheses each: the decoder's buffers,
 * the attention history of every hypothesis, and the hypotheses it returns. */
size_t beam_search_bytes(const Dims *d, int batch, int src_steps, int beam, int max_out);

/* Translates the source-only batch with beam (1: greedy) hypotheses per sentence; out[b]
 * receives the n_best (<= beam) best hypotheses of sentence b (fewer when fewer
 * finished): the search of a sentence stops once its best hypothesis has ended and beam
 * have, or when nothing lives, or after max_out[b] words, where its live hypotheses
 * count too (cut). n_best only chooses how many are returned, not what is found. The
 * decoder must have room for batch x beam rows. Without `scores`, greedy search (beam
 * 1) leaves the logits unnormalised: the same words and attention, and NAN for each
 * hypothesis's logprob and score (beam > 1 always has them). Allocates the hypotheses:
 * nbest_free each out[b]. */
void beam_search(Decoder *dec, const Params *P, const Batch *bt, int beam, double alpha,
                 int n_best, int scores, const int *max_out, NBest *out);
void nbest_free(NBest *nb);

#endif
