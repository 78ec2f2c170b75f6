/* subword_sampling.c: data.subword_alpha, each epoch's split of the training pairs drawn
 * anew (see trainer_parts.h). */
#include <stdint.h>
#include <string.h>

#include "train/trainer_parts.h"

/* data.subword_alpha: the training pairs are split anew, drawing the pieces, each epoch. */
int subword_sampling_on(const Config *cfg)
{
    return cfg->data.subwords && cfg->data.subword_alpha > 0;
}

/* Counts every piece of model once more into counts (its <unk>, <s> and </s> aside): a
 * drawn split may use pieces that no best split of the training text does, and they
 * need a place in the vocabulary. */
void subword_sampling_count_pieces(Vocab *counts, const Subwords *model)
{
    for (int k = 0; model && k < subwords_vocab_size(model); k++) {
        const char *piece = subwords_piece(model, k);
        if (strcmp(piece, "<unk>") && strcmp(piece, "<s>") && strcmp(piece, "</s>"))
            vocab_count(counts, piece);
    }
}

/* Epoch `epoch`'s split of the training pairs (data.subword_alpha): each drawn by
 * SentencePiece on a fresh thread whose draws start from the epoch's own seed, so every
 * process of a run, and a resumed run, draws the same. */
typedef struct {
    Trainer *t;
    long fell_back;
} SplitJob;

static void split_pairs(void *arg)
{
    SplitJob *job = arg;
    Trainer *t = job->t;
    const Config *cfg = t->cfg;
    const Splitter src = {.subwords = t->data.subwords.model[SIDE_SRC],
                          .alpha = cfg->data.subword_alpha};
    const Splitter tgt = {.subwords = t->data.subwords.model[SIDE_TGT],
                          .alpha = cfg->data.subword_alpha};
    job->fell_back = corpus_resplit(&t->data.train, &src, &tgt, &t->data.src_vocab,
                                    &t->data.tgt_vocab);
}

void subword_sampling_epoch(void *ctx, long epoch)
{
    Trainer *t = ctx;
    SplitJob job = {t, 0};
    Pcg32 rng;
    pcg32_seed(&rng, (uint64_t)t->cfg->seed, RNG_STREAM_SUBWORDS);
    pcg32_advance(&rng, (uint64_t)epoch);
    uint32_t seed = pcg32_next(&rng);
    /* SentencePiece reserves the largest seed for "from the clock" */
    subwords_with_generator(seed == UINT32_MAX ? 0 : seed, split_pairs, &job);
    if (t->run.dir.dir[0]) { /* training's own epochs (the setup's come before the log) */
        const Corpus *c = &t->data.train;
        long src = 0, tgt = 0;
        for (int k = 0; k < c->n; k++) {
            src += c->src_len[k];
            tgt += c->tgt_len[k];
        }
        rundir_log(&t->run.dir, "epoch %ld: the training pairs drawn anew (data.subword_alpha): "
                   "%ld source and %ld target pieces; %ld side%s kept the best split (longer "
                   "than any read)", epoch, src, tgt, job.fell_back, plural(job.fell_back));
    }
}
