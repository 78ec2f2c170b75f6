/* gen.c: the task table, and writing a generated corpus with its splits (see gen.h).
 * The generators build their pairs with gen_pair.c, below this file. */
#include "gen/gen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/mem.h"
#include "data/vocab.h"

static const GenTask TASKS[] = {
    {"copy", "copy a sequence of 1-25 numbers (0-50); the diagonal alignment", 20000, gen_copy},
    {"reverse", "reverse a sequence of 1-25 numbers (0-50), Joey NMT's toy task", 20000, gen_reverse},
    {"dates", "dates written in many ways -> ISO 8601 (year - month - day)", 20000, gen_dates},
    {"toy-fr", "an English -> French-like grammar: gender, agreement, adjectives after the noun, "
               "pronouns before the verb, ne ... pas, relative clauses", 20000, gen_toy_fr},
    {"toy-de", "an English -> German-like grammar: verb-final subordinate clauses, separable "
               "verbs, verb second, compounds", 20000, gen_toy_de},
    {"toy-fr-long", "toy-fr clauses joined by and -> et, 4 to 50 words a sentence: BLEU by "
                    "sentence length (scripts/experiments/length-experiment.sh)", 40000,
                    gen_toy_fr_long},
};

const GenTask *gen_tasks(int *n)
{
    *n = (int)(sizeof TASKS / sizeof *TASKS);
    return TASKS;
}

const GenTask *gen_find(const char *name)
{
    for (size_t k = 0; k < sizeof TASKS / sizeof *TASKS; k++)
        if (!strcmp(TASKS[k].name, name))
            return &TASKS[k];
    return NULL;
}

/* The source sentence as one string (the key for keeping test pairs out of train). */
static void source_key(const GenPair *p, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int j = 0; j < p->n_src && used + 1 < cap; j++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s", j ? " " : "", p->src[j]);
}

typedef struct {
    FILE *src, *tgt, *align;
} SplitFiles;

static int open_split(SplitFiles *f, const char *dir, const char *split, Error *err)
{
    const char *ext[3] = {"src", "tgt", "align"};
    FILE **slot[3] = {&f->src, &f->tgt, &f->align};
    for (int k = 0; k < 3; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.%s", dir, split, ext[k]);
        *slot[k] = fopen(path, "w");
        if (!*slot[k])
            return error_errno(err, "cannot write", path);
    }
    return 0;
}

static int close_split(SplitFiles *f, const char *dir, Error *err)
{
    int ok = 1;
    FILE *all[3] = {f->src, f->tgt, f->align};
    for (int k = 0; k < 3; k++)
        if (all[k]) {
            int clean = ferror(all[k]) == 0; /* asked before fclose, which is always called */
            if (fclose(all[k]) != 0 || !clean)
                ok = 0;
        }
    memset(f, 0, sizeof *f);
    if (!ok)
        return error_errno(err, "cannot write the corpus in", dir);
    return 0;
}

static void write_pair(SplitFiles *f, const GenPair *p)
{
    for (int j = 0; j < p->n_src; j++)
        fprintf(f->src, "%s%s", j ? " " : "", p->src[j]);
    fputc('\n', f->src);
    for (int i = 0; i < p->n_tgt; i++)
        fprintf(f->tgt, "%s%s", i ? " " : "", p->tgt[i]);
    fputc('\n', f->tgt);
    for (int k = 0; k < p->n_links; k++)
        fprintf(f->align, "%s%d-%d", k ? " " : "", p->link_src[k], p->link_tgt[k]);
    fputc('\n', f->align);
}

enum { HELD_OUT = 1000 };

int gen_write(const GenTask *task, const char *dir, int n_train, uint64_t seed, Error *err)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return error_errno(err, "cannot create", dir);
    Pcg32 rng;
    pcg32_seed(&rng, seed, RNG_STREAM_DATA);
    GenPair *p = xmalloc(sizeof *p);
    Vocab held_out; /* the sources of valid and test: kept out of train */
    vocab_init(&held_out);
    const char *splits[3] = {"valid", "test", "train"};
    const int sizes[3] = {HELD_OUT, HELD_OUT, n_train};
    char key[GEN_MAX_TOKENS * GEN_TOKEN_BYTES];
    int rc = 0;
    for (int s = 0; s < 3 && rc == 0; s++) {
        SplitFiles f = {0};
        if (open_split(&f, dir, splits[s], err) < 0) {
            close_split(&f, dir, err);
            rc = -1;
            break;
        }
        for (int k = 0; k < sizes[s];) {
            memset(p, 0, sizeof *p);
            task->draw(p, &rng);
            source_key(p, key, sizeof key);
            if (s < 2) {
                if (vocab_find(&held_out, key) >= 0)
                    continue; /* held-out sentences are distinct */
                vocab_count(&held_out, key);
            } else if (vocab_find(&held_out, key) >= 0) {
                continue;
            }
            write_pair(&f, p);
            k++;
        }
        rc = close_split(&f, dir, err);
    }
    vocab_free(&held_out);
    free(p);
    return rc;
}
