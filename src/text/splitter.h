/* splitter.h: one side's text into tokens and tokens back into text, whatever the unit:
 * the tokenizer's words or characters (text/tokenize.h), or a SentencePiece model's
 * subword pieces (text/subwords.h). Everything that reads or writes a side's text
 * (corpora, translate, explain) goes through a Splitter, so a model's unit is chosen in
 * one place. */
#ifndef S2S_SPLITTER_H
#define S2S_SPLITTER_H

#include <stddef.h>

#include "base/error.h"
#include "text/subwords.h"
#include "text/tokenize.h"

typedef struct {
    TokenLevel level;         /* words or characters, without subwords */
    int lowercase;            /* lowercase first (words and characters only) */
    const Subwords *subwords; /* a SentencePiece model: its pieces are the tokens */
    double alpha;             /* > 0: a sampled split of the pieces (training only) */
} Splitter;

/* The tokens of line[0..n) (valid UTF-8 without a line break) into t. Returns their
 * count: with max_tokens > 0 it may stop past max_tokens (see tokenize_line); -1 with err
 * set if the subword model failed. */
int splitter_split(const Splitter *s, Tokens *t, const char *line, size_t n, int max_tokens,
                   Error *err);

/* Joins tokens into text, at most cap bytes with the NUL; returns the length the whole
 * text needs (like snprintf). Subword pieces are decoded by their model (its "▁" are the
 * spaces); words and characters as detokenize does, or with natural as detokenize_text. */
size_t splitter_join(const Splitter *s, char *out, size_t cap, const char *const *tokens, int n,
                     int natural);

/* The word each of tokens[0..n) belongs to, into word (n): with subwords, a piece that
 * begins with "▁" (SentencePiece's mark of a space before it) starts the next word, so
 * the words are the line's space-separated words; without, each token is its own word.
 * Returns the number of words. */
int splitter_words(const Splitter *s, const char *const *tokens, int n, int *word);

#endif
