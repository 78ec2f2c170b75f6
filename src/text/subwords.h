/* subwords.h: subword units by SentencePiece (Kudo and Richardson 2018), s2s's one seam
 * to Debian's libsentencepiece: learning a model from text, and splitting a line into
 * pieces and joining pieces back into text with it. The library is C++; this header is
 * all the rest of s2s sees of it (subwords.cc).
 *
 * A model is SentencePiece's own serialized proto, bytes that s2s stores in its
 * checkpoints, so that a trained s2s model translates raw text with nothing else at
 * hand. Pieces are shown as SentencePiece shows them: a piece that starts a word begins
 * with "▁" (U+2581). SentencePiece normalises text first (NFKC and whitespace, its
 * "nmt_nfkc" rule): decoding a line's pieces gives the normalised line. */
#ifndef S2S_SUBWORDS_H
#define S2S_SUBWORDS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "text/tokenize.h"

typedef enum { SUBWORD_UNIGRAM, SUBWORD_BPE } SubwordType;

/* The types' names in SubwordType order, NULL-terminated: "unigram", "bpe". */
extern const char *const subword_type_names[3];

/* How to learn a model: from the lines of the files in paths (n_paths of them), a
 * vocabulary of vocab_size pieces (SentencePiece's <unk>, <s> and </s> among them) of
 * the given type, every character of the text kept (character coverage 1), one thread
 * and the generator seeded with seed, so that the same text and settings give the same
 * model byte for byte. */
typedef struct {
    const char *const *paths;
    int n_paths;
    int vocab_size;
    SubwordType type;
    uint32_t seed;
} SubwordTraining;

/* Learns a model. On success *model (malloc'd, the serialized proto) and *size are set
 * and 0 is returned; else -1 with err naming what failed (SentencePiece's own message). */
int subwords_train(const SubwordTraining *t, char **model, size_t *size, Error *err);

typedef struct Subwords Subwords;

/* A model from its serialized bytes (name for messages: the file or checkpoint they come
 * from). Returns NULL with err set when the bytes are not a SentencePiece model. */
Subwords *subwords_load(const void *model, size_t size, const char *name, Error *err);
void subwords_free(Subwords *s);

/* Splits line[0..n) into pieces, the tokens of out (text/tokenize.h; emptied first): the
 * most likely split, or with alpha > 0 one drawn from the model's distribution over
 * splits (SentencePiece's subword regularisation, unigram models only; the draw from
 * SentencePiece's generator, seeded by subwords_seed). Returns the number of pieces, or
 * -1 with err set. */
int subwords_encode(const Subwords *s, Tokens *out, const char *line, size_t n, double alpha,
                    Error *err);

/* Joins pieces back into text (SentencePiece's decoding: "▁" becomes a space, the
 * leading one dropped). Writes at most cap bytes including the NUL; returns the length
 * the whole text needs (like snprintf), or -1 if SentencePiece refused the pieces. */
long subwords_decode(const Subwords *s, char *out, size_t cap, const char *const *pieces, int n);

/* The model's vocabulary size, and its piece k. */
int subwords_vocab_size(const Subwords *s);
const char *subwords_piece(const Subwords *s, int k);

/* Seeds SentencePiece's own generator (process-wide): the sampling of subwords_encode
 * and training's. */
void subwords_seed(uint32_t seed);

/* Runs fn(arg) on a new thread whose SentencePiece draws start from seed, and waits for
 * it. SentencePiece keeps one generator per thread, seeded from subwords_seed's value
 * when the thread first samples, and never again: a fresh thread is the only way to
 * start its draws over from a given seed (an epoch's sampled splits, the same in a
 * resumed run and in every process of an MPI run). Should no thread be had, fn runs on
 * the caller's, its draws not started over. */
void subwords_with_generator(uint32_t seed, void (*fn)(void *), void *arg);

#endif
