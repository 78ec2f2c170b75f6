/* alignlog.h: reading alignments.jsonl (cli/INTERFACE.md) back: every record checked
 * (shapes, weights finite and in [0, 1], the optional "heads", "self" and "chosen" too), errors
 * with file:line:col. Fields a record may have beyond these are passed over. Used by
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
    float *weights;     /* (n_tgt, n_src) row-major: the alignment (the heads' mean) */
    int n_heads;        /* 0, or each head's weights in heads */
    float *heads;       /* (n_heads, n_tgt, n_src) */
    int n_self;         /* self-attention layers, 0 if none */
    float *self;        /* (n_self, n_src, n_src): each layer's weights (its heads' mean),
                         * a row per query position, a column per key position */
    int n_layers, layer_heads; /* a Transformer decoder's record: its layers' */
    float *layers;      /* (n_layers, layer_heads, n_tgt, n_src) cross-attention, head by head */
    int n_dec_self;     /* and its layers' masked self-attention (heads' mean): */
    float *dec_self;    /* (n_dec_self, n_tgt, n_tgt) a row per target position, a column
                         * per position it reads (<s> and the words before) */
    int n_chosen;       /* 0, or the heads of a hard-attention record's "chosen": */
    int *chosen;        /* (n_tgt, n_chosen) the source position each head read */
    char *image;        /* an image model's record: its picture's path ("image"; NULL for
                         * text), src then naming the cells of a square grid */
    char view[40];      /* which matrix weights holds, when not the alignment: "head 2",
                         * "self-attention layer 1" (alignrecord_select) */
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

/* Makes r's weights the matrix to draw instead of the alignment: head `head` (from 1),
 * keeping only that head's chosen positions, or with self_layer (from 1) that
 * self-attention layer's source-by-source weights (its tgt then the source tokens; no
 * chosen positions); or a Transformer decoder's: with layer (from 1) that layer's
 * cross-attention, its heads' mean or with head (from 1; 0: the mean) that head; with
 * dec_self (from 1) that layer's masked self-attention, target by target (its src then
 * the positions the rows read: <s> and the words before). Returns 0, or -1 if r has no
 * such head or layer. */
int alignrecord_select(AlignRecord *r, int head, int self_layer, int layer, int dec_self);

#endif
