/* gen.h: synthetic parallel corpora with gold word alignments (`s2s corpus`). Each
 * generator writes one sentence pair at a time into a GenPair: the source and target
 * tokens and the links between them, all drawn from a PCG32 stream, so a seed gives the
 * same corpus on every machine. Tokens never contain spaces and are already split the
 * way the word tokenizer splits, so the alignment indices are the training tokens. */
#ifndef S2S_GEN_H
#define S2S_GEN_H

#include "base/error.h"
#include "base/rng.h"

enum { GEN_MAX_TOKENS = 96, GEN_MAX_LINKS = 192, GEN_TOKEN_BYTES = 32 };

typedef struct {
    char src[GEN_MAX_TOKENS][GEN_TOKEN_BYTES];
    char tgt[GEN_MAX_TOKENS][GEN_TOKEN_BYTES];
    int n_src, n_tgt;
    int link_src[GEN_MAX_LINKS], link_tgt[GEN_MAX_LINKS]; /* sure links j-i */
    int n_links;
} GenPair;

/* Appends a token; returns its index. */
int gen_src(GenPair *p, const char *token);
int gen_tgt(GenPair *p, const char *token);
/* Links source token j with target token i. */
void gen_link(GenPair *p, int j, int i);

/* One task: its name, one-line description, default training size, and the function
 * that draws one pair. */
typedef struct {
    const char *name;
    const char *about;
    int default_train;
    void (*draw)(GenPair *p, Pcg32 *rng);
} GenTask;

/* The tasks, and their number. */
const GenTask *gen_tasks(int *n);
/* The task called name, or NULL. */
const GenTask *gen_find(const char *name);

/* Writes DIR/{train,valid,test}.{src,tgt,align}: n_train training pairs and 1000
 * validation and test pairs each (pairs of valid and test never occur in train).
 * Returns 0, or -1 with err set (an I/O failure). */
int gen_write(const GenTask *task, const char *dir, int n_train, uint64_t seed, Error *err);

/* The generators, one per task (gen_simple.c, gen_dates.c, gen_fr.c, gen_de.c,
 * gen_long.c). */
void gen_copy(GenPair *p, Pcg32 *rng);
void gen_reverse(GenPair *p, Pcg32 *rng);
void gen_dates(GenPair *p, Pcg32 *rng);
void gen_toy_fr(GenPair *p, Pcg32 *rng);
void gen_toy_de(GenPair *p, Pcg32 *rng);
void gen_toy_fr_long(GenPair *p, Pcg32 *rng);

#endif
