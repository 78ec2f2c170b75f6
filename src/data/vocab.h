/* vocab.h: token <-> id maps. The four specials come first, at the fixed ids of
 * batch.h (<pad> <unk> <s> </s>); then the training words by frequency. Lookups are a
 * hash table; an unknown word maps to <unk>. */
#ifndef S2S_VOCAB_H
#define S2S_VOCAB_H

#include <stddef.h>

typedef struct {
    char **words;   /* id -> word, owned */
    long *counts;   /* id -> occurrences (only while counting) */
    int size, cap;
    int *slots;     /* open-addressing hash table of ids; -1 empty */
    size_t n_slots; /* a power of two, at least twice size */
} Vocab;

/* An empty vocabulary (no specials): for counting words. vocab_free on a zeroed Vocab
 * is safe. */
void vocab_init(Vocab *v);
void vocab_free(Vocab *v);

/* Adds one occurrence of word (copying it the first time) and returns its id. */
int vocab_count(Vocab *v, const char *word);
/* Adds every word of counted with its count, in counted's id order (a word new to into
 * comes after into's own): one vocabulary of two sides' counts. */
void vocab_add_counts(Vocab *into, const Vocab *counted);
/* The id of word, or -1 if absent. */
int vocab_find(const Vocab *v, const char *word);
/* The id of word, or TOK_UNK. */
int vocab_id(const Vocab *v, const char *word);
/* Word of an id; valid until vocab_free. */
const char *vocab_word(const Vocab *v, int id);

/* Builds out from counted words: the specials, then every word seen at least min_freq
 * times, most frequent first, ties in order of first occurrence, cut to max_size
 * entries in all (0: no cap). Words spelled like a special are left out. */
void vocab_build(Vocab *out, const Vocab *counted, int max_size, int min_freq);

/* A side's limits, as vocab_build takes them. */
typedef struct {
    int max_size, min_freq;
} VocabLimits;

/* The source and target vocabularies from each side's counts, each by vocab_build with
 * its limits; with `joint`, both from the two sides' counts added together (source words
 * first), so that with equal limits they are one vocabulary (shared embeddings). */
void vocab_build_sides(Vocab *src, Vocab *tgt, const Vocab *src_counted,
                       const Vocab *tgt_counted, const VocabLimits *src_limits,
                       const VocabLimits *tgt_limits, int joint);

/* Builds out from a list of n words given in id order (the specials included), as
 * stored in a checkpoint. Returns -1 if a word repeats or the specials are not first;
 * out must be freed either way. */
int vocab_from_list(Vocab *out, const char *const *words, int n);

#endif
