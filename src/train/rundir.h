/* rundir.h: the run directory of a training run (cli/INTERFACE.md): creating it, locking
 * it against a second trainer, the effective config.yaml, and its three logs: train.log
 * (everything printed to stderr), metrics.jsonl and alignments.jsonl (one JSON object a
 * line). On a terminal, progress is one live line that is rewritten in place; off a
 * terminal, only whole lines.
 *
 * The logs hold whole lines only (appendlog.h). metrics.jsonl and alignments.jsonl are
 * the run's data: a checkpoint records their lengths, and a resume cuts them back to
 * those, so a resumed run's files are exactly a straight run's. train.log is the story
 * of every process that ran here, stops and resumes included; it is only ever repaired
 * (a torn last line cut off), never cut back. */
#ifndef S2S_RUNDIR_H
#define S2S_RUNDIR_H

#include <stdio.h>

#include "base/appendlog.h"
#include "base/error.h"

/* The lengths of the data logs when a checkpoint was saved (-1: not recorded). */
typedef struct {
    long long metrics_bytes, alignments_bytes;
} RunMarks;

typedef struct {
    char dir[2048];
    int lock_fd;
    AppendLog log, metrics, alignments;
    int tty;         /* stderr is a terminal */
    int live_shown;  /* a live line is on screen */
    int metrics_failed;
    int quiet;       /* another rank's view of the lead's directory: writes nothing */
} RunDir;

/* Creates dir and dir/checkpoints as needed and takes the directory's lock, then opens
 * the logs. A fresh run (resume NULL) refuses a directory that holds a checkpoint, and
 * moves the files of a run that saved none aside (NAME.old.N, said on stderr); a
 * resumed one cuts the data logs back to resume's lengths. Temporary files of a killed
 * run are removed. Returns 0, -1 with err set for bad input (exit 2: lock held, run
 * exists) or -2 for an I/O failure (exit 3). */
int rundir_open(RunDir *r, const char *dir, const RunMarks *resume, Error *err);
void rundir_close(RunDir *r);
/* Under mpirun, every rank but the lead (rank 0): a RunDir on which every function
 * below writes and prints nothing, so that one process alone writes the run. */
void rundir_open_quiet(RunDir *r, const char *dir);

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
/* One JSON object (without newline) for metrics.jsonl. A failure is a warning, once. */
void rundir_metrics(RunDir *r, const char *json);
/* One line (without newline) for alignments.jsonl. Returns 0, or -1 with err set. */
int rundir_alignments(RunDir *r, const char *line, size_t len, Error *err);

/* Makes the data logs durable and returns their lengths, for a checkpoint to record
 * (so that a resume from it finds them at least that long). */
RunMarks rundir_marks(RunDir *r);

#endif
