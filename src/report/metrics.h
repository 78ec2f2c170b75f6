/* metrics.h: translation and alignment scores. BLEU and chrF exactly as sacreBLEU 2.6.0
 * computes them by default (Papineni et al. 2002: 13a tokenization, exp smoothing, one
 * reference; Popovic 2015: character 6-grams, beta 2), the exact-match rate, and the
 * alignment error rate of Och and Ney against sure and possible gold links. */
#ifndef S2S_METRICS_H
#define S2S_METRICS_H

#include <stddef.h>

typedef struct {
    long correct[4], total[4]; /* clipped n-gram matches and hypothesis n-grams, n = 1..4 */
    long hyp_len, ref_len;     /* tokens after 13a tokenization */
    double precision[4];       /* percent, after exp smoothing */
    double bp;                 /* brevity penalty */
    double score;              /* BLEU, 0..100 */
} Bleu;

/* Corpus BLEU of n hypotheses against one reference each (lowercasing both first if
 * asked, like sacreBLEU -lc). */
void bleu_corpus(Bleu *out, const char *const *hyps, const char *const *refs, int n, int lowercase);

/* How BLEU cuts a line into tokens: sacreBLEU's 13a (its default, what bleu_corpus
 * does), or none: at whitespace alone (Python's str.split()), for text tokenized
 * beforehand, as multi-bleu.perl and sacreBLEU -tok none score it (the papers' BLEU on
 * Moses-tokenized text). */
typedef enum { BLEU_TOKENIZE_13A, BLEU_TOKENIZE_NONE } BleuTokenize;

/* bleu_corpus with the given tokenization. */
void bleu_corpus_tokenized(Bleu *out, const char *const *hyps, const char *const *refs, int n,
                           int lowercase, BleuTokenize tokenize);

/* sacreBLEU's line: "BLEU = 34.12 65.1/40.2/27.3/19.0 (BP = 0.981 ratio = 0.981 hyp_len
 * = 812 ref_len = 828)". */
void bleu_format(const Bleu *b, char *out, size_t cap);

/* The 13a tokenization of line (mteval-v13a, as sacreBLEU does it), tokens separated
 * by single spaces. Returns a malloc'd string. */
char *tokenize_13a(const char *line);

/* Corpus chrF (Popovic 2015) as sacreBLEU 2.6.0 computes it by default: character
 * n-grams of orders 1 to 6 with whitespace removed, statistics summed over the corpus,
 * precision and recall averaged over the orders both sides have, beta = 2. 0..100. */
double chrf_corpus(const char *const *hyps, const char *const *refs, int n, int lowercase);

/* Percent of hypotheses identical to their reference (with lowercase, once both are
 * lowercased). */
double exact_match(const char *const *hyps, const char *const *refs, int n, int lowercase);

/* Word alignments: a link joins source token j and target token i; gold links are
 * sure or only possible. Pharaoh text: "j-i" (sure) or "j?i" (possible), space
 * separated, 0-based. */
typedef struct {
    int j, i;
    int possible; /* 1 for a possible-only gold link */
} Link;

/* Parses one Pharaoh line into links (at most cap). Returns their number, or -1 if the
 * line is malformed (with *bad_at the byte offset of the problem). */
int pharaoh_parse(const char *line, Link *links, int cap, int *bad_at);

/* Alignment error rate (Och and Ney 2003) accumulated over sentences:
 * AER = 1 - (|A & S| + |A & P|) / (|A| + |S|), S the sure links, P the sure and
 * possible ones, A the hypothesis; precision |A & P| / |A|, recall |A & S| / |S|. */
typedef struct {
    long hyp, sure, hyp_sure, hyp_possible;
} AerCounts;

/* Adds one sentence: hyp links (their `possible` field is ignored) against gold. */
void aer_add(AerCounts *c, const Link *hyp, int n_hyp, const Link *gold, int n_gold);
double aer_rate(const AerCounts *c);
double aer_precision(const AerCounts *c);
double aer_recall(const AerCounts *c);

#endif
