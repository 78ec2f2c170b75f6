/* alignlog.h: reading alignments.jsonl (cli/INTERFACE.md) back: every record checked
 * (shapes, weights finite and in [0, 1]), errors with file:line:col. Used by
 * `s2s heatmap` and the training report. */
#ifndef S2S_ALIGNLOG_H
#define S2S_ALIGNLOG_H

#include <stddef.h>

#include "base/error.h"

typedef struct {
    long step, id;      /* step >= 0; id >= 1: the sentence's line in its file */
    double epoch;
    int has_epoch;      /* records written outside training (s2s align, translate) have none */
    int n_src, n_tgt;
    char **src, **tgt;  /* tokens */
    float *weights;     /* (n_tgt, n_src) row-major */
} AlignRecord;

typedef struct {
    AlignRecord *records;
    int n, cap;
} AlignLog;

/* The longest line alignlog_read takes: 4 MiB, a matrix of some 600 x 600 weights (one
 * of translate.max_source_length's default 250 tokens, 251 x 511, needs 1.5 MiB).
 * Parsing a line takes at most some 20 times its size (json.h): 80 MiB. */
#define ALIGNLOG_MAX_LINE_BYTES ((size_t)4 << 20)

/* Reads every line of path (blank lines skipped) in memory bounded by the records it
 * keeps: lines are read as textfile.h says, one at a time, with lines over
 * ALIGNLOG_MAX_LINE_BYTES, NUL bytes and invalid UTF-8 refused. Returns 0, or -1 with
 * err set; alignlog_free is safe either way. */
int alignlog_read(AlignLog *log, const char *path, Error *err);
/* The same from memory (name for messages). */
int alignlog_parse(AlignLog *log, const char *text, size_t len, const char *name, Error *err);
void alignlog_free(AlignLog *log);

#endif
