/* vocab.c: counting words, building vocabularies and looking words up (see vocab.h). */
#include "data/vocab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "model/batch.h"

static const char *const SPECIALS[N_SPECIAL_TOKENS] = {"<pad>", "<unk>", "<s>", "</s>"};

void vocab_init(Vocab *v)
{
    *v = (Vocab){0};
    v->n_slots = 64;
    v->slots = xmalloc_array(v->n_slots, sizeof(int));
    memset(v->slots, 0xff, v->n_slots * sizeof(int));
}

void vocab_free(Vocab *v)
{
    for (int k = 0; k < v->size; k++)
        free(v->words[k]);
    free(v->words);
    free(v->counts);
    free(v->slots);
    *v = (Vocab){0};
}

/* FNV-1a, 64 bits. */
static uint64_t hash_word(const char *s)
{
    uint64_t h = 14695981039346656037ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The slot holding word, or the empty slot where it would go. */
static size_t find_slot(const Vocab *v, const char *word)
{
    size_t mask = v->n_slots - 1;
    for (size_t i = hash_word(word) & mask;; i = (i + 1) & mask)
        if (v->slots[i] < 0 || !strcmp(v->words[v->slots[i]], word))
            return i;
}

static void grow_table(Vocab *v)
{
    free(v->slots);
    v->n_slots *= 2;
    v->slots = xmalloc_array(v->n_slots, sizeof(int));
    memset(v->slots, 0xff, v->n_slots * sizeof(int));
    for (int id = 0; id < v->size; id++)
        v->slots[find_slot(v, v->words[id])] = id;
}

static int add_word(Vocab *v, const char *word, size_t slot)
{
    if (v->size == v->cap) {
        v->cap = v->cap * 2 + 64;
        v->words = xrealloc_array(v->words, (size_t)v->cap, sizeof(char *));
        v->counts = xrealloc_array(v->counts, (size_t)v->cap, sizeof(long));
    }
    int id = v->size++;
    v->words[id] = xstrdup(word);
    v->counts[id] = 0;
    v->slots[slot] = id;
    if ((size_t)v->size * 2 > v->n_slots)
        grow_table(v);
    return id;
}

int vocab_count(Vocab *v, const char *word)
{
    size_t slot = find_slot(v, word);
    int id = v->slots[slot] >= 0 ? v->slots[slot] : add_word(v, word, slot);
    v->counts[id]++;
    return id;
}

void vocab_add_counts(Vocab *into, const Vocab *counted)
{
    for (int id = 0; id < counted->size; id++) {
        const char *word = counted->words[id];
        size_t slot = find_slot(into, word);
        int to = into->slots[slot] >= 0 ? into->slots[slot] : add_word(into, word, slot);
        into->counts[to] += counted->counts[id];
    }
}

void vocab_build_sides(Vocab *src, Vocab *tgt, const Vocab *src_counted,
                       const Vocab *tgt_counted, const VocabLimits *src_limits,
                       const VocabLimits *tgt_limits, int joint)
{
    if (!joint) {
        vocab_build(src, src_counted, src_limits->max_size, src_limits->min_freq);
        vocab_build(tgt, tgt_counted, tgt_limits->max_size, tgt_limits->min_freq);
        return;
    }
    Vocab both;
    vocab_init(&both);
    vocab_add_counts(&both, src_counted);
    vocab_add_counts(&both, tgt_counted);
    vocab_build(src, &both, src_limits->max_size, src_limits->min_freq);
    vocab_build(tgt, &both, tgt_limits->max_size, tgt_limits->min_freq);
    vocab_free(&both);
}

int vocab_find(const Vocab *v, const char *word)
{
    return v->slots[find_slot(v, word)];
}

int vocab_id(const Vocab *v, const char *word)
{
    int id = vocab_find(v, word);
    return id >= 0 ? id : TOK_UNK;
}

const char *vocab_word(const Vocab *v, int id)
{
    return v->words[id];
}

typedef struct {
    long count;
    int id;
} Counted;

/* Most frequent first; ties by first occurrence (the smaller id). */
static int by_count(const void *a, const void *b)
{
    const Counted *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

void vocab_build(Vocab *out, const Vocab *counted, int max_size, int min_freq)
{
    vocab_init(out);
    for (int k = 0; k < N_SPECIAL_TOKENS; k++)
        add_word(out, SPECIALS[k], find_slot(out, SPECIALS[k]));
    Counted *order = xmalloc_array((size_t)counted->size + 1, sizeof(Counted));
    int n = 0;
    for (int id = 0; id < counted->size; id++) {
        int special = 0;
        for (int k = 0; k < N_SPECIAL_TOKENS; k++)
            special |= !strcmp(counted->words[id], SPECIALS[k]);
        if (!special && counted->counts[id] >= min_freq)
            order[n++] = (Counted){counted->counts[id], id};
    }
    qsort(order, (size_t)n, sizeof(Counted), by_count);
    for (int k = 0; k < n && (max_size <= 0 || out->size < max_size); k++) {
        const char *w = counted->words[order[k].id];
        int id = add_word(out, w, find_slot(out, w));
        out->counts[id] = order[k].count;
    }
    free(order);
}

int vocab_from_list(Vocab *out, const char *const *words, int n)
{
    vocab_init(out);
    for (int k = 0; k < n; k++) {
        if (k < N_SPECIAL_TOKENS && strcmp(words[k], SPECIALS[k]))
            return -1;
        size_t slot = find_slot(out, words[k]);
        if (out->slots[slot] >= 0)
            return -1;
        add_word(out, words[k], slot);
    }
    return n >= N_SPECIAL_TOKENS ? 0 : -1;
}
