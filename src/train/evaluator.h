/* evaluator.h: a model scored on a corpus: the teacher-forced loss (token mean,
 * perplexity), greedy translations scored with BLEU and exact match, and the attention's
 * links and boxes. Buffers are sized once for the corpus; batches follow source length
 * to keep padding low. Nothing here knows of training (validation.c is the trainer's
 * use of it). */
#ifndef S2S_EVALUATOR_H
#define S2S_EVALUATOR_H

#include "data/corpus.h"
#include "data/vocab.h"
#include "decode/decode.h"
#include "model/batch.h"
#include "model/model.h"
#include "data/ground.h"
#include "report/grounding.h"
#include "report/links.h"
#include "text/tokenize.h"

typedef struct {
    double loss, ppl, bleu, exact;
    long tokens; /* target tokens scored */
} EvalScores;

typedef struct {
    const Corpus *corpus;
    int batch_size;
    Workspace ws;
    Decoder dec;
    Batch batch, sources;
    int *order;           /* pairs by source length */
    int *out, *out_len;   /* decoded ids */
    int max_out;
    char **hyps;          /* (pairs) the translations of the last evaluate, as text */
    int n_hyps;           /* pairs, kept here: the corpus may be freed first */
} Evaluator;

/* Sizes everything for corpus c (which must outlive the evaluator). */
void evaluator_init(Evaluator *e, const Dims *d, const Corpus *c, int batch_size,
                    double max_output_ratio, long max_output_extra);
void evaluator_free(Evaluator *e);
/* Scores with argmax contexts (translate.attention_mode, resolved) or, with 0, soft ones
 * (the default): the teacher-forced loss, the translations and the alignments alike. */
void evaluator_set_argmax(Evaluator *e, int argmax);

/* Scores params on the corpus. Translations stop after ratio * (source tokens) + extra
 * words; they are left in e->hyps, joined by the target side's splitter, as natural text
 * or as tokens (natural 0). With stop not NULL, it is asked between batches whether to
 * give up (a signal arrived): then returns -1 and out and e->hyps are incomplete.
 * Returns 0 otherwise. */
int evaluate(Evaluator *e, const Params *P, const Vocab *tgt_vocab, const Splitter *tgt,
             int natural, double max_output_ratio, long max_output_extra, EvalScores *out,
             int (*stop)(void));

/* Teacher-forced attention over the corpus: the hard (argmax) links' AER counts against
 * gold (skipped if gold is NULL), an image model's attention correctness against the
 * caption words' boxes into grounding (skipped if ground is NULL), and the mean entropy
 * of the attention rows (nats). */
void evaluate_alignments(Evaluator *e, const Params *P, const GoldAlignments *gold,
                         const GroundFile *ground, AerCounts *aer, GroundingCounts *grounding,
                         double *mean_entropy);

#endif
