/* beam.c: batched beam search with attention kept per hypothesis (see beam.h). The
 * per-step work is the decoder step over all rows and a top-2k selection per sentence;
 * the history of tokens, parents and attention rows is traced back at the end. */
#include "decode/beam.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

typedef struct {
    double score;
    int row, token;
} Candidate;

/* A finished hypothesis, before tracing back: it ended (with </s> from `row` at step t)
 * or was cut at the length limit (row `row` after step t). */
typedef struct {
    int t, row, ended;
    double logprob, score;
} Finished;

typedef struct {
    int rows, S, T;
    int *token, *parent; /* (T, rows): chosen after each step */
    int planes;          /* attention rows kept per step: the alignment, then each head's
                          * of a multi-head model */
    float *att;          /* (T, rows, planes, S): the attention each row used at each step */
    int heads;           /* H when decoding with argmax contexts, else 0: */
    int *chosen;         /* (T, rows, H) the positions each row's heads read */
} History;

/* log sum_v e^{o_v} over a row of V logits, in double: e^{o_v - max} in eight lanes,
 * which the compiler runs side by side (fast_exp), summed in a fixed order. */
SIMD_CLONES static double log_sum_exp(const real *o, int V)
{
    real max = o[0];
    for (int v = 1; v < V; v++)
        max = o[v] > max ? o[v] : max;
    double lane[8] = {0};
    int v = 0;
    for (; v + 8 <= V; v += 8)
        for (int l = 0; l < 8; l++)
            lane[l] += fast_exp((double)o[v + l] - max);
    double sum = 0;
    for (int l = 0; l < 8; l++)
        sum += lane[l];
    for (; v < V; v++)
        sum += fast_exp((double)o[v] - max);
    return max + log(sum);
}

/* Words a row's logits are scanned by at once: a block none of whose logits passes a
 * threshold is skipped after one vector comparison. */
enum { SCAN_BLOCK = 16 };

/* Whether any of o[0..n) is above `floor` (or at it, with `or_equal`), compared in
 * double as the callers compare. */
static int any_above(const real *o, int n, double floor, int or_equal)
{
    int any = 0;
    for (int v = 0; v < n; v++)
        any |= or_equal ? (double)o[v] >= floor : (double)o[v] > floor;
    return any;
}

/* The n-th largest of a row's logits among the words a hypothesis may take (not <pad>,
 * not <s>), or -inf when there are fewer: no word below it can be among the row's n best
 * extensions. best (n) is scratch. Once n are held, a block of words none of which beats
 * the n-th is passed over whole (the n-th largest value does not depend on the order the
 * words are seen in). */
static real nth_best(const real *o, int V, int n, real *best)
{
    int have = 0; /* best[0..have) falling */
    for (int v0 = 0; v0 < V; v0 += SCAN_BLOCK) {
        const int end = v0 + SCAN_BLOCK < V ? v0 + SCAN_BLOCK : V;
        if (have == n && !any_above(o + v0, end - v0, best[n - 1], 0))
            continue;
        for (int v = v0; v < end; v++) {
            if (v == TOK_PAD || v == TOK_BOS || (have == n && o[v] <= best[n - 1]))
                continue;
            int at = have < n ? have++ : n - 1;
            for (; at > 0 && best[at - 1] < o[v]; at--)
                best[at] = best[at - 1];
            best[at] = o[v];
        }
    }
    return have == n ? best[n - 1] : -INFINITY;
}

static double length_penalty(int length, double alpha)
{
    return alpha > 0 ? pow((5.0 + length) / 6.0, alpha) : 1.0;
}

static int by_score_desc(const void *a, const void *b)
{
    const Candidate *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return x->row != y->row ? x->row - y->row : x->token - y->token; /* deterministic ties */
}

static int finished_desc(const void *a, const void *b)
{
    const Finished *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return x->row - y->row;
}

/* Output step `step`'s attention rows as row `row` kept them, into out (rows n_rows). */
static void take_rows(const History *h, int step, int row, Hypothesis *out, int n_rows)
{
    const size_t S = (size_t)out->src_len;
    const float *at = h->att + ((size_t)step * h->rows + row) * h->planes * h->S;
    memcpy(out->attention + (size_t)step * S, at, sizeof(float) * S);
    for (int k = 0; k < out->n_heads; k++)
        memcpy(out->heads + ((size_t)k * n_rows + step) * S, at + (size_t)(k + 1) * h->S,
               sizeof(float) * S);
    if (h->heads)
        memcpy(out->chosen + (size_t)step * h->heads,
               h->chosen + ((size_t)step * h->rows + row) * h->heads, sizeof(int) * h->heads);
}

/* The words of row `row` after step t and the attention rows that produced them. */
static void trace(const History *h, int t, int row, Hypothesis *out, int n_words, int n_rows)
{
    for (int step = t; step >= 0; step--) {
        int parent = h->parent[step * h->rows + row];
        out->tokens[step] = h->token[step * h->rows + row];
        take_rows(h, step, parent, out, n_rows);
        row = parent;
    }
    assert(t + 1 == n_words);
}

static void make_hypothesis(const History *h, const Finished *f, int src_len, int normalise,
                            Hypothesis *out)
{
    int words = f->ended ? f->t : f->t + 1;
    out->len = words;
    out->ended = f->ended;
    out->logprob = normalise ? f->logprob : NAN; /* else sums of logits: no score to give */
    out->score = normalise ? f->score : NAN;
    out->src_len = src_len;
    const int n_rows = words + f->ended;
    out->tokens = xmalloc_array((size_t)words + 1, sizeof(int));
    out->attention = xmalloc_array((size_t)n_rows * src_len + 1, sizeof(float));
    out->n_heads = h->planes > 1 ? h->planes - 1 : 0;
    out->heads = out->n_heads ? xmalloc_array((size_t)out->n_heads * n_rows * src_len, sizeof(float))
                              : NULL;
    out->n_chosen = h->heads;
    out->chosen = h->heads ? xmalloc_array((size_t)n_rows * h->heads + 1, sizeof(int)) : NULL;
    if (f->ended) {
        if (words > 0)
            trace(h, f->t - 1, f->row, out, words, n_rows);
        /* the row that chose </s> attended like this at step t */
        take_rows(h, f->t, f->row, out, n_rows);
    } else {
        trace(h, f->t, f->row, out, words, n_rows);
    }
}

/* Everything a search keeps besides the decoder: rows are the decoder's, K per
 * sentence (row b * K + k). */
typedef struct {
    int B, K, rows, V;
    int normalise;           /* log-probabilities; else (greedy, no scores asked for) the
                              * logits as they are: the same argmax, no log-sum-exp */
    double alpha;
    History h;
    double *score;           /* (rows) log-probability of each live hypothesis, -inf if none */
    double *next_score;      /* (rows) the next step's, as chosen */
    int *next_token, *next_parent; /* (rows) */
    Candidate *cand;         /* (K V) one sentence's extensions that may be among its 2K best */
    real *best;              /* (2K) nth_best's scratch */
    Finished *fin;           /* (B, 2K) the finished hypotheses of each sentence */
    int *n_fin, *done;       /* (B) */
    int *best_ended;         /* (B) the sentence's best extension of some step ended */
} Search;

static void search_init(Search *s, int B, int K, int S, int T, int V, double alpha, int heads,
                        int argmax, int normalise)
{
    const int rows = B * K, planes = heads > 1 ? 1 + heads : 1;
    *s = (Search){.B = B, .K = K, .rows = rows, .V = V, .normalise = normalise, .alpha = alpha,
                  .h = {rows, S, T, xmalloc_array((size_t)T * rows, sizeof(int)),
                        xmalloc_array((size_t)T * rows, sizeof(int)), planes,
                        xmalloc_array((size_t)T * rows * planes * S, sizeof(float)),
                        argmax ? heads : 0,
                        argmax ? xmalloc_array((size_t)T * rows * heads, sizeof(int)) : NULL}};
    s->score = xmalloc_array((size_t)rows, sizeof(double));
    s->next_score = xmalloc_array((size_t)rows, sizeof(double));
    s->next_token = xmalloc_array((size_t)rows, sizeof(int));
    s->next_parent = xmalloc_array((size_t)rows, sizeof(int));
    s->cand = xmalloc_array((size_t)K * V, sizeof(Candidate));
    s->best = xmalloc_array((size_t)2 * K, sizeof(real));
    s->fin = xmalloc_array((size_t)B * 2 * K, sizeof(Finished));
    s->n_fin = xcalloc((size_t)B, sizeof(int));
    s->done = xcalloc((size_t)B, sizeof(int));
    s->best_ended = xcalloc((size_t)B, sizeof(int));
    for (int b = 0; b < B; b++)
        for (int k = 0; k < K; k++)
            s->score[b * K + k] = k == 0 ? 0 : -INFINITY; /* one start, not K copies of it */
}

static void search_free(Search *s)
{
    free(s->h.token);
    free(s->h.parent);
    free(s->h.att);
    free(s->h.chosen);
    free(s->score);
    free(s->next_score);
    free(s->next_token);
    free(s->next_parent);
    free(s->cand);
    free(s->best);
    free(s->fin);
    free(s->n_fin);
    free(s->done);
    free(s->best_ended);
}

/* Among a sentence's finished hypotheses f[0..*n), at most K: h joins while fewer than K
 * have finished, else it replaces the worst of them if it scores better. */
static void keep_finished(Finished *f, int *n, int K, Finished h)
{
    if (*n < K) {
        f[(*n)++] = h;
        return;
    }
    int worst = 0;
    for (int k = 1; k < *n; k++)
        worst = f[k].score < f[worst].score ? k : worst;
    if (h.score > f[worst].score)
        f[worst] = h;
}

/* Step t of sentence b, from its rows' logits: the 2K best extensions of its live
 * hypotheses by log-probability; of those ending in </s>, the ones among the K best
 * are finished (the K best finished are kept), and the K best others live on (next_*).
 * (2K, so that K live on however many end; only the K best may end, as in fairseq: a
 * </s> ranked below them would stop the search on a hypothesis the beam itself would
 * not keep -- with K = 1, not greedy's.) The sentence is done once its best extension
 * of some step has ended (the beam's best hypothesis has finished, where OpenNMT-py and
 * Joey NMT stop; with alpha = 0 no live hypothesis can beat it, as log-probabilities
 * only fall) and K have finished (so that the n-best lists are full and the same
 * whatever n_best asks for), or when it reached max_out words, or nothing lives; at
 * max_out its live hypotheses count as finished too (cut), otherwise they are dropped.
 * Stopping as soon as K had finished, as fairseq does, cut off the best hypothesis
 * while it was still live whenever K worse, shorter ones ended first (captions: "below
 * it" ending before "below left of it"). logits: the sentence's K rows. Returns 1 if
 * the sentence is done at this step. */
static int extend_sentence(Search *s, const real *logits, int b, int t, int max_out)
{
    const int K = s->K, V = s->V, base = b * K;
    int live = 0;
    for (int k = 0; k < K; k++) { /* defaults: a dead row */
        s->next_score[base + k] = -INFINITY;
        s->next_token[base + k] = TOK_PAD;
        s->next_parent[base + k] = base + k;
    }
    if (s->done[b])
        return 0;
    /* the 2K best extensions by (score, row, word): of each live row, only words whose
     * score may reach that of the row's 2K-th best word (its score is monotone in the
     * logit; the margin covers the rounding of two sums, so that a word left out scores
     * strictly below 2K others); then those few sorted */
    int n_cand = 0;
    for (int k = 0; k < K; k++) {
        int r = base + k;
        if (s->score[r] == -INFINITY)
            continue;
        const real *o = logits + (size_t)k * V;
        const double lse = s->normalise ? log_sum_exp(o, V) : 0;
        const double floor = nth_best(o, V, 2 * K, s->best);
        const double margin = 8 * DBL_EPSILON * (fabs(s->score[r]) + fabs(lse) + fabs(floor) + 1);
        const double least = floor - margin;
        for (int v0 = 0; v0 < V; v0 += SCAN_BLOCK) {
            const int end = v0 + SCAN_BLOCK < V ? v0 + SCAN_BLOCK : V;
            if (!any_above(o + v0, end - v0, least, 1))
                continue;
            for (int v = v0; v < end; v++)
                if (v != TOK_PAD && v != TOK_BOS && o[v] >= least)
                    s->cand[n_cand++] = (Candidate){s->score[r] + o[v] - lse, r, v};
        }
    }
    const Candidate *best = s->cand;
    qsort(s->cand, (size_t)n_cand, sizeof(Candidate), by_score_desc);
    const int n_best = n_cand < 2 * K ? n_cand : 2 * K;
    Finished *f = s->fin + (size_t)b * 2 * K;
    int *n_fin = &s->n_fin[b];
    for (int c = 0; c < n_best && live < K; c++) {
        if (best[c].token == TOK_EOS) {
            if (c < K)
                keep_finished(f, n_fin, K, (Finished){t, best[c].row, 1, best[c].score,
                                           best[c].score / length_penalty(t + 1, s->alpha)});
        } else {
            s->next_score[base + live] = best[c].score;
            s->next_token[base + live] = best[c].token;
            s->next_parent[base + live] = best[c].row;
            live++;
        }
    }
    /* after this step the live hypotheses have t + 1 words */
    if (n_best > 0 && best[0].token == TOK_EOS)
        s->best_ended[b] = 1;
    if ((s->best_ended[b] && *n_fin >= K) || t + 1 >= max_out || live == 0) {
        if (t + 1 >= max_out) /* cut: at most K ended and K live, the 2K slots of f */
            for (int k = 0; k < live; k++)
                f[(*n_fin)++] = (Finished){t, base + k, 0, s->next_score[base + k],
                                           s->next_score[base + k] / length_penalty(t + 1, s->alpha)};
        s->done[b] = 1;
        return 1;
    }
    return 0;
}

size_t beam_search_bytes(const Dims *d, int batch, int src_steps, int beam, int max_out)
{
    const AttnDims ad = model_attn_dims(d);
    const size_t S = (size_t)src_steps, T = (size_t)max_out + 1, K = (size_t)batch * beam;
    const size_t planes = ad.heads > 1 ? 1 + (size_t)ad.heads : 1;
    /* search_init's history (token, parent, attention, chosen), then up to K hypotheses
     * of T rows each */
    const size_t history = T * K * (2 * sizeof(int) + planes * S * sizeof(float) +
                                     (size_t)ad.heads * sizeof(int));
    const size_t results = K * T * (sizeof(int) + planes * S * sizeof(float));
    const size_t candidates = (size_t)beam * d->tgt_vocab * sizeof(Candidate);
    return decoder_bytes(d, batch, src_steps, beam) + history + results + candidates;
}

void beam_search(Decoder *dec, const Params *P, const Batch *bt, int beam, double alpha,
                 int n_best, int scores, const int *max_out, NBest *out)
{
    const int B = bt->batch_size, S = bt->src_steps, K = beam, rows = B * K;
    assert(rows <= dec->max_rows && n_best >= 1 && n_best <= K);
    model_encode(&dec->enc, P, bt);
    int T = 1;
    for (int b = 0; b < B; b++)
        T = max_out[b] + 1 > T ? max_out[b] + 1 : T;
    decoder_reserve_steps(dec, T);
    /* every hypothesis row attends over its sentence's annotations */
    decoder_start(dec, bt, K);
    Search s;
    const AttnDims ad = model_attn_dims(&dec->dims);
    /* Greedy search chooses each row's largest logit whatever the normalisation: the
     * log-sum-exp over the vocabulary, a fifth of a small model's step, is left out
     * unless the scores are wanted. With K > 1 the rows' scores rank against each
     * other: always normalised. */
    search_init(&s, B, K, S, T, dec->dims.tgt_vocab, alpha, ad.heads,
                dec->argmax && attn_has_weights(&ad), scores || K > 1);
    /* The decoder's rows: sentence live[p]'s K hypotheses at rows p K .. p K + K - 1 (the
     * search's own arrays keep hypothesis b K + k of sentence b). A sentence that ended
     * leaves them where a row's numbers do not depend on the rows beside it
     * (decoder_rows_may_leave); elsewhere its rows go on, unread. */
    int *live = xmalloc_array((size_t)B, sizeof(int)), n_live = B;
    int *from = xmalloc_array((size_t)rows, sizeof(int));
    int *staying = xmalloc_array((size_t)rows, sizeof(int));
    for (int b = 0; b < B; b++)
        live[b] = b;
    const int leave = decoder_rows_may_leave(dec), V = dec->dims.tgt_vocab, planes = s.h.planes;
    int n_done = 0;
    for (int t = 0; t < T && n_done < B; t++) {
        const int now = n_live * K;
        decoder_step(dec, P, S, now);
        /* each row's attention: the alignment, and each head's when there are several */
        for (int r = 0; r < now; r++) {
            const int h = live[r / K] * K + r % K;
            for (int q = 0; q < planes; q++) {
                const real *w = q ? dec->alpha_heads + (size_t)(q - 1) * S * now : dec->alpha;
                float *at = s.h.att + (((size_t)t * rows + h) * planes + q) * S;
                for (int j = 0; j < S; j++)
                    at[j] = (float)w[(size_t)j * now + r];
            }
            if (s.h.chosen)
                memcpy(s.h.chosen + ((size_t)t * rows + h) * ad.heads,
                       dec->chosen + (size_t)r * ad.heads, sizeof(int) * (size_t)ad.heads);
        }
        for (int p = 0; p < n_live; p++) {
            const int b = live[p];
            n_done += extend_sentence(&s, dec->logits + (size_t)p * K * V, b, t, max_out[b]);
        }
        /* each surviving hypothesis continues from its parent's new state */
        for (int r = 0; r < now; r++) {
            const int base = live[r / K] * K, h = base + r % K;
            from[r] = r - r % K + (s.next_parent[h] - base);
        }
        decoder_advance(dec, from, now);
        for (int r = 0; r < now; r++) {
            const int h = live[r / K] * K + r % K;
            dec->prev[r] = s.next_token[h];
            s.score[h] = s.next_score[h];
            s.h.token[(size_t)t * rows + h] = s.next_token[h];
            s.h.parent[(size_t)t * rows + h] = s.next_parent[h];
        }
        if (!leave)
            continue;
        int kept = 0, n = 0;
        for (int p = 0; p < n_live; p++)
            if (!s.done[live[p]]) {
                for (int k = 0; k < K; k++)
                    staying[n++] = p * K + k;
                live[kept++] = live[p];
            }
        if (kept < n_live)
            decoder_keep_rows(dec, staying, n, now, S);
        n_live = kept;
    }
    free(live);
    free(from);
    free(staying);
    for (int b = 0; b < B; b++) {
        Finished *f = s.fin + (size_t)b * 2 * K;
        qsort(f, (size_t)s.n_fin[b], sizeof(Finished), finished_desc);
        int keep = s.n_fin[b] < n_best ? s.n_fin[b] : n_best;
        out[b].n = keep;
        out[b].hyps = xcalloc((size_t)(keep ? keep : 1), sizeof(Hypothesis));
        for (int k = 0; k < keep; k++)
            make_hypothesis(&s.h, &f[k], bt->src_len[b], s.normalise, &out[b].hyps[k]);
    }
    search_free(&s);
}

void nbest_free(NBest *nb)
{
    for (int k = 0; k < nb->n; k++) {
        free(nb->hyps[k].tokens);
        free(nb->hyps[k].attention);
        free(nb->hyps[k].heads);
        free(nb->hyps[k].chosen);
    }
    free(nb->hyps);
    nb->hyps = NULL;
    nb->n = 0;
}
