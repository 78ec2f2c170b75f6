/* trainer_parts.h: what the files of the trainer (trainer.h) share: the Trainer, and the
 * functions each file offers the loop above it. trainer.c runs the loop and calls the
 * parts; trainer_setup.c builds everything before it; progress.c writes the log's lines;
 * align_dumps.c dumps the attention and draws the report; validation.c validates and
 * translates the test set (with the evaluator, evaluator.h); trainer_services.c, below
 * them all, saves checkpoints, sets a phase's threads and gives a step's learning rate.
 * The calls run one way: the loop calls the parts, the parts call the services, never
 * back up (make test checks it: scripts/checks/check-calls.py). Internal to src/train/. */
#ifndef S2S_TRAINER_PARTS_H
#define S2S_TRAINER_PARTS_H

#include "base/clock.h"
#include "base/error.h"
#include "data/corpus.h"
#include "data/epochs.h"
#include "data/vocab.h"
#include "model/batch.h"
#include "model/model.h"
#include "report/links.h"
#include "run/config.h"
#include "train/checkpoint.h"
#include "train/evaluator.h"
#include "train/model_grad.h"
#include "train/shards.h"
#include "train/optim.h"
#include "train/rundir.h"
#include "train/train_outcome.h"
#include "train/weight_average.h"

/* What training reads: the vocabularies, the corpora and the batches drawn from the
 * training pairs. What the config does not name is NULL: the held-out sets, their gold
 * links and their words' boxes. */
typedef struct {
    Vocab src_vocab, tgt_vocab;
    SubwordModels subwords; /* data.subwords: sentencepiece's models, else empty */
    Corpus train;
    GroundFile *train_ground; /* training.attention_supervision: the captions' boxes */
    Corpus *valid, *test;
    GoldAlignments *valid_gold, *test_gold;
    GroundFile *valid_ground, *test_ground; /* an image corpus's word boxes */
    Epochs batcher;        /* the training pairs' shuffled epochs of batches */
    Batch batch;           /* the step's batch */
} TrainData;

/* The model being trained, and what its steps run on. */
typedef struct {
    Dims dims;
    Params P;
    Optimizer opt;
    Shards shards;         /* each step's pass, its batch cut into training.shards */
    int step_blas_threads, eval_blas_threads; /* OpenBLAS threads of the steps (1 when the
                            * shards share the cores) and of validation and translation */
} TrainModel;

/* Validation's own state (with data.valid only). */
typedef struct {
    Evaluator eval;
    WeightAverage average; /* training.average_last > 1: the last validations' weights
                            * (else k 0) ... */
    Params averaged;       /* ... and their mean, which validation scores */
} Validation;

/* The probe pairs of the validation set whose attention is dumped while training. */
typedef struct {
    int n;
    int *pairs;            /* pair index in data.valid of each */
    char **cell_names;     /* an image model's grid cells, "0" to "S-1" (the dumps' sources) */
    int n_cell_names;
    Workspace ws;
    Batch batch;
} Probes;

/* The run directory, and where its logs and checkpoints stand. */
typedef struct {
    RunDir dir;
    RunMarks resume_marks; /* a resumed run's: how much of its logs its checkpoint records */
    int resuming;
    long last_saved;       /* step that checkpoints/last.ckpt holds (-1: none yet) */
    double live_at;        /* training seconds at the last live line on a terminal */
} RunState;

/* The trainer, by role. What the next log line averages over lives in prog (log_loss,
 * log_steps, ...), which the checkpoints save, so a resumed run's next line averages
 * over the same steps as a straight run's. */
typedef struct {
    Config *cfg;
    int lead;              /* this process writes the run: rank 0 of an mpirun, or alone */
    char *config_yaml;
    TrainData data;
    TrainModel model;
    Validation val;
    Probes probes;
    Progress prog;
    RunState run;
} Trainer;

/* ---- trainer_setup.c: before the first step ---- */

/* Builds everything training needs but the run directory, as t->cfg says: with
 * resume_dir, from the checkpoint of the run saved there (its settings compared with
 * t->cfg's); the data, the model, the optimizer, the buffers. It writes nothing. t comes
 * zeroed but for cfg, with run.lock_fd -1. Returns TRAIN_OK when training can begin,
 * else the outcome to return (err set). Either way, trainer_free releases what was
 * built. */
int trainer_setup(Trainer *t, const char *resume_dir, Error *err);
/* Then, once every rank has set up (under mpirun, a rank that could not would leave an
 * empty run behind), the run directory: opened (the lead's: locked, its logs cut back to
 * a resumed checkpoint's marks) and the effective config written. Returns TRAIN_OK, or
 * the outcome with err set. */
int trainer_open_run(Trainer *t, Error *err);
void trainer_free(Trainer *t);

/* ---- trainer_services.c: what the parts share ---- */

/* Saves checkpoints/NAME (last.ckpt, best.ckpt) with the weights of the moment, or with
 * `weights` (best.ckpt of an averaging run holds the average). Returns 0 or -1 (err set). */
int save_checkpoint(Trainer *t, const char *name, Error *err);
int save_checkpoint_with(Trainer *t, const char *name, const Params *weights, Error *err);
/* OpenBLAS's threads for what comes next: the steps' (eval 0: one when the shards share
 * the cores) or those of validation, the dumps and the test translation (1: all). */
void use_blas_threads(Trainer *t, int eval);
/* The learning rate of update k (1-based), warm-up included. */
double learning_rate_at(const Trainer *t, long k);

/* ---- progress.c: what the log says ---- */

/* The log's first lines: the data, the model, and the settings that shape training. */
void log_header(Trainer *t, int resumed);
/* After each step: the live line on a terminal; when line_due, the log line and its
 * metrics record, which average over the steps since the last such line. */
void log_progress(Trainer *t, int line_due);

/* ---- align_dumps.c: the attention of the probe pairs ---- */

int dumps_on(const Trainer *t);
int dumps_due(const Trainer *t);
int dumped_this_step(const Trainer *t);
/* Returns 0 or -1 (err set: alignments.jsonl could not be written). */
int dump_alignments(Trainer *t, Error *err);
/* heatmaps/report.html; a failure is a warning in the log. The loop calls it after a
 * validation, whose scores the report draws. */
void update_heatmap_report(Trainer *t);

/* ---- validation.c: validation and the test set ---- */

/* Validates (the weights of the moment, or their average), keeps best.ckpt when the
 * score improved, logs the line and its record, and decays the learning rate on a
 * plateau. Returns 0 or -1 (err set: best.ckpt could not be written). */
int validate_keep_best(Trainer *t, Error *err);
/* After the validation's last.ckpt: the log line that says early stopping is due. */
void note_early_stopping(Trainer *t);
/* Returns 0, -1 (err set) or 1: a signal stopped it. */
int translate_test_set(Trainer *t, Error *err);

/* ---- subword sampling (subword_sampling.c) ---- */

/* data.subword_alpha > 0 with subwords: the training pairs are drawn anew each epoch. */
int subword_sampling_on(const Config *cfg);
/* Counts every piece of model once into counts (its <unk>, <s>, </s> aside): a drawn
 * split may use pieces no best split of the training text does. */
void subword_sampling_count_pieces(Vocab *counts, const Subwords *model);
/* The Epochs hook (ctx: the Trainer): epoch's split of the training pairs, drawn by
 * SentencePiece from the epoch's own seed (subwords_with_generator), logged from the
 * second epoch on. */
void subword_sampling_epoch(void *ctx, long epoch);

#endif
