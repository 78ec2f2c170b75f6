/* train_outcome.h: how training ended, as train_run (trainer.h) and the parts of the
 * trainer (trainer_parts.h) report it; main turns it into cli/INTERFACE.md's exit codes. */
#ifndef S2S_TRAIN_OUTCOME_H
#define S2S_TRAIN_OUTCOME_H

enum {
    TRAIN_OK = 0,
    TRAIN_BAD_INPUT = 2, /* config, corpus, checkpoint or run directory refused */
    TRAIN_IO_ERROR = 3,  /* writing failed; earlier files intact */
    TRAIN_DIVERGED = 4,  /* non-finite steps kept coming; last checkpoint untouched */
    TRAIN_SIGNALLED = 5, /* stopped by a signal (interrupt.h) once everything was saved */
};

#endif
