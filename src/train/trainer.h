/* trainer.h: `s2s train`: reads the data, builds the vocabularies and the model (or
 * restores them from a run directory), and runs the training loop: batches, steps,
 * non-finite guard, clipping, optimizer, logging, validation, learning-rate plateau
 * decay, early stopping, and atomic checkpoints (last.ckpt, best.ckpt). */
#ifndef S2S_TRAINER_H
#define S2S_TRAINER_H

#include "base/error.h"
#include "run/config.h"
#include "train/train_outcome.h"


/* Trains as cfg (validated) says; with resume_dir, continues the run saved there
 * (its checkpoints/last.ckpt) exactly where it stopped. The signals of interrupt.h
 * (installed by the caller) stop it at the next point where everything is saved.
 * Returns a TRAIN_ outcome; err is set for every outcome but TRAIN_OK, and for
 * TRAIN_SIGNALLED only when the signal came before training began (it then says what
 * was being read; the run's own log says the rest). */
int train_run(Config *cfg, const char *resume_dir, Error *err);

#endif
