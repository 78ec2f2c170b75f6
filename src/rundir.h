/* rundir.h: the run directory of a training run (INTERFACE.md): creating it, locking
 * it against a second trainer, the effective config.yaml, train.log (everything printed
 * to stderr) and metrics.jsonl (one JSON object a line). On a terminal, progress is one
 * live line that is rewritten in place; off a terminal, only whole lines. */
#ifndef S2S_RUNDIR_H
#define S2S_RUNDIR_H

#include <stdio.h>

#include "error.h"

typedef struct {
    char dir[2048];
    int lock_fd;
    FILE *log, *metrics;
    int tty;         /* stderr is a terminal */
    int live_shown;  /* a live line is on screen */
    int write_failed;
} RunDir;

/* Creates dir and dir/checkpoints as needed and takes the directory's lock. A fresh
 * run (resuming 0) refuses a directory that already holds a checkpoint. Stray
 * temporary checkpoint files of a killed run are removed. Returns 0, -1 with err set
 * for bad input (exit 2: lock held, run exists) or -2 for an I/O failure (exit 3). */
int rundir_open(RunDir *r, const char *dir, int resuming, Error *err);
void rundir_close(RunDir *r);

/* dir/name into out. */
void rundir_path(const RunDir *r, const char *name, char *out, size_t cap);

/* Writes dir/config.yaml atomically. */
int rundir_write_config(RunDir *r, const char *yaml, Error *err);

/* A line for stderr and train.log. */
void rundir_log(RunDir *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line for train.log only (what stderr shows in another form). */
void rundir_note(RunDir *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The live progress line (terminal only; not logged). */
void rundir_live(RunDir *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One JSON object (without newline) for metrics.jsonl, flushed at once. */
void rundir_metrics(RunDir *r, const char *json);

#endif
