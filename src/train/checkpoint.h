/* checkpoint.h: what an s2s checkpoint holds for training: the model's sections
 * (run/saved_model.h: config, sizes, vocabularies, tensor table, weights), then, for
 * resuming, the optimizer state and the training progress (step, data position, RNG
 * state, learning rate, best score, counters, the logs' marks) and the weight
 * averages. Loading checks every section against the others. */
#ifndef S2S_CHECKPOINT_H
#define S2S_CHECKPOINT_H

#include <stdint.h>

#include "base/error.h"
#include "data/vocab.h"
#include "model/model.h"
#include "run/config.h"
#include "run/saved_model.h"
#include "train/optim.h"
#include "train/weight_average.h"

/* Where training stands; everything needed to continue as if never stopped. */
typedef struct {
    long step;              /* updates done */
    long epoch;             /* the current epoch, from 0 */
    long next_batch;        /* the next batch of this epoch */
    uint64_t rng_state, rng_inc; /* the shuffle stream as it was when this epoch began */
    double lr;              /* the current learning rate */
    double best_score;      /* best validation score so far, higher is better */
    long best_step;         /* step of best_score (0: none yet) */
    long stale;             /* validations since the best (early stopping) */
    long plateau;           /* validations without improvement since the last decay */
    long bad_steps;         /* non-finite steps in a row */
    long skipped_steps;     /* non-finite steps in all */
    long validations;       /* validations done */
    long tokens;            /* target tokens trained on */
    double train_seconds;   /* training time so far, validation excluded */
    /* The run's data logs when this was saved (rundir.h; -1: not recorded, as in the
     * checkpoints of s2s before 0.2), and what the next log line averages over: the
     * training loss, tokens and seconds since the last one. With these a resumed run
     * writes exactly the records a run straight through does. */
    long long metrics_bytes, alignments_bytes;
    double log_loss, log_seconds;
    long log_steps, log_tokens;
    long validated_step;    /* the step the last validation scored (older checkpoints: step) */
    long dumped_step;       /* the step of the last attention dump (-1: none, or unknown) */
    /* Hard attention (model/MODEL.md): the running baselines b and b_tok, and what the next
     * log line averages over: the summed rewards R_s of the sentences that sampled, those
     * sentences and their target tokens, and the attention's entropy and its terms. */
    double hard_baseline, hard_token_baseline;
    double log_reward, log_entropy;
    long log_sampled, log_sampled_tokens, log_entropy_terms;
} Progress;

typedef struct {
    SavedModel model;       /* config, sizes, vocabularies, weights */
    int has_training;       /* optimizer and progress were loaded */
    Optimizer optim;
    Progress progress;
    WeightAverage average;  /* training.average_last's snapshots (k 0: none), room for
                             * only those held (weight_average_make_room) */
} Checkpoint;

/* Saves atomically to path. picture_mean: an image model's 3 channel means (NULL for
 * text). optim and progress may be NULL (a model-only file); average may be NULL (no
 * averaging) and is saved only with progress. */
int checkpoint_save(const char *path, const char *config_yaml, const Dims *dims,
                    const Vocab *src_vocab, const Vocab *tgt_vocab, const Params *params,
                    const double *picture_mean, const SubwordModels *subwords,
                    const Optimizer *optim, const Progress *progress,
                    const WeightAverage *average, Error *err);

/* Loads path; with with_training, also the optimizer and progress (an error if the
 * file has none). checkpoint_free is safe after a failure. */
int checkpoint_load(Checkpoint *ck, const char *path, int with_training, Error *err);
/* The same from bytes in memory (name for messages). */
int checkpoint_load_bytes(Checkpoint *ck, const void *bytes, size_t size, const char *name,
                          int with_training, Error *err);
void checkpoint_free(Checkpoint *ck);

#endif
