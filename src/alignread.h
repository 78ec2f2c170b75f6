/* alignread.h: reading alignments.jsonl (INTERFACE.md) back: every record checked
 * (shapes, weights finite and in [0, 1]), errors with file:line:col. Used by
 * `s2s heatmap` and the training report. */
#ifndef S2S_ALIGNREAD_H
#define S2S_ALIGNREAD_H

#include <stddef.h>

#include "error.h"

typedef struct {
    long step, id;
    double epoch;
    int n_src, n_tgt;
    char **src, **tgt;  /* tokens */
    float *weights;     /* (n_tgt, n_src) row-major */
} AlignRecord;

typedef struct {
    AlignRecord *records;
    int n, cap;
} AlignLog;

/* Reads every line of path (blank lines skipped). Returns 0, or -1 with err set;
 * alignlog_free is safe either way. */
int alignlog_read(AlignLog *log, const char *path, Error *err);
/* The same from memory (name for messages). */
int alignlog_parse(AlignLog *log, const char *text, size_t len, const char *name, Error *err);
void alignlog_free(AlignLog *log);

#endif
