/* corpus.h: reading parallel text: line-aligned source/target files or one TSV file.
 * Strict UTF-8 (errors give file:line:byte), CRLF accepted, a final line without a
 * newline counts, different line counts are an error naming both. Pairs with an empty
 * side, more than max_length tokens or a line over max_line_bytes are skipped and
 * counted; a corpus with no usable pair is an error with the breakdown. Lines over the
 * byte cap are never held in memory. */
#ifndef S2S_CORPUS_H
#define S2S_CORPUS_H

#include <stddef.h>
#include <stdio.h>

#include "base/error.h"
#include "data/pictures.h"
#include "data/vocab.h"
#include "model/batch.h"
#include "text/splitter.h"
#include "text/tokenize.h"

typedef struct {
    const char *src_path, *tgt_path; /* line-aligned files, or: */
    const char *tsv_path;            /* one source<TAB>target file */
    int tsv_reverse;                 /* the TSV's second column is the source */
    TokenLevel level;
    int lowercase;
    /* SentencePiece models (text/subwords.h) whose pieces are a side's tokens instead
     * of level's; NULL: none */
    const Subwords *src_subwords, *tgt_subwords;
    long max_length;                 /* tokens per side; 0: no limit */
    long max_line_bytes;
    int keep_refs;                   /* keep each target as detokenized text, for BLEU */
    int keep_words;                  /* keep the word of each token (splitter_words) */
    int keep_text;                   /* keep each pair's lines, for corpus_resplit */
    int natural;                     /* ... as natural text (detokenize_text) */
    /* an image corpus (model.encoder: image): src_path lists pictures, one path a line
     * (pictures.h), of picture_size pixels square (resized unless picture_resize is 0),
     * decoded once and kept up to cache_bytes; each pair's source is then its grid of
     * picture_cells cells */
    int pictures, picture_size, picture_resize, picture_cells;
    size_t cache_bytes;
    FILE *progress;                  /* where a decode of pictures shows how far it is
                                      * each second (a terminal), or NULL */
} CorpusSpec;

typedef struct {
    long lines;         /* pairs read */
    long empty;         /* skipped: a side without tokens */
    long too_long;      /* skipped: more than max_length tokens on a side */
    long overlong_line; /* skipped: a line over max_line_bytes */
} CorpusCounts;

typedef struct Corpus {
    int n;                        /* pairs kept */
    int *src_start, *src_len;     /* pair k's source ids: ids[src_start[k] ...] */
    int *tgt_start, *tgt_len;
    long *line_no;                /* line of each pair in its file(s) */
    int *ids;
    size_t n_ids, ids_cap;
    char **refs;                  /* with keep_refs: each target, detokenized */
    /* with keep_words: the word of each token, word_of[x] for ids[x] (pair k's source
     * token j is part of its word word_of[src_start[k] + j]), and each pair's number of
     * words on each side; else NULL */
    int *word_of, *src_words, *tgt_words;
    char **src_text, **tgt_text;  /* with keep_text: each pair's lines, else NULL */
    int max_src_len, max_tgt_len; /* in tokens, without </s> */
    int pairs_cap;
    CorpusCounts counts;
    /* an image corpus's pictures, pair k's picture k (pics.n 0 for text); a pair's
     * source ids are picture_cells - 1 <unk>, so that with its </s> a batch has one
     * source position per cell, and what reads source lengths reads the grid's */
    Pictures pics;
    double mean[3];               /* the channel means its batches subtract: the
                                   * training pictures' (the caller sets them) */
} Corpus;

/* Reads and tokenizes the corpus of spec. With counting, every word is counted into
 * src_vocab / tgt_vocab (vocab_count) and the stored ids are those counters' ids, to
 * be mapped with corpus_remap once the vocabularies are built; otherwise words are
 * looked up in them (unknown words become <unk>). name says which corpus it is in
 * messages ("training", "validation"). Returns 0, or -1 with err set; corpus_free is
 * safe either way. */
int corpus_read(Corpus *c, const CorpusSpec *spec, Vocab *src_vocab, Vocab *tgt_vocab,
                int counting, const char *name, Error *err);
void corpus_free(Corpus *c);

/* Splits every pair of c (read with keep_text) anew with src and tgt (whose alpha draws
 * the split: subword sampling) into ids of src_vocab and tgt_vocab (unknown pieces
 * become <unk>). A side whose drawn split is longer than the longest the corpus was read
 * with (c->max_src_len, c->max_tgt_len: what workspaces were made for), or that cannot
 * be drawn, takes its best split. The pairs, their order and lines stay. Returns how many
 * sides took the best split. */
long corpus_resplit(Corpus *c, const Splitter *src, const Splitter *tgt, const Vocab *src_vocab,
                    const Vocab *tgt_vocab);

/* Turns counter ids into ids of the built vocabularies. */
void corpus_remap(Corpus *c, const Vocab *src_counted, const Vocab *src_vocab,
                  const Vocab *tgt_counted, const Vocab *tgt_vocab);

/* Fills out with count pairs of c: pair order[first + k] for k = 0..count-1, or
 * first + k when order is NULL; both sides, or the sources alone (a batch to translate)
 * without with_targets; an image corpus's pictures too (out needs batch_init_pictures).
 * Returns 0, or -1 with err set when a picture past the cache cannot be decoded again;
 * err may be NULL for a corpus kept whole (cache_bytes SIZE_MAX: validation and test
 * sets), where nothing is decoded again. */
int corpus_batch(const Corpus *c, const int *order, int first, int count, int with_targets,
                 Batch *out, Error *err);

/* "read 1000 pairs; kept 990; skipped: 4 empty, 6 too long, 0 over max_line_bytes" */
void corpus_describe(const Corpus *c, char *out, size_t cap);

#endif
