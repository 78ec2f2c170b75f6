/* subword_models.c: a model's SentencePiece models (see subword_models.h). */
#include "text/subword_models.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

int subword_models_set(SubwordModels *m, int side, const void *bytes, size_t size,
                       const char *name, Error *err)
{
    Subwords *loaded = subwords_load(bytes, size, name, err);
    if (!loaded)
        return -1;
    subwords_free(m->model[side]);
    free(m->bytes[side]);
    m->model[side] = loaded;
    m->bytes[side] = xmalloc(size ? size : 1);
    memcpy(m->bytes[side], bytes, size);
    m->size[side] = size;
    return 0;
}

/* Learns one model from paths[0..n) into side. */
static int learn_side(SubwordModels *m, int side, const char *const *paths, int n, int vocab_size,
                      SubwordType type, uint32_t seed, Error *err)
{
    const SubwordTraining t = {paths, n, vocab_size, type, seed};
    char *bytes = NULL;
    size_t size = 0;
    if (subwords_train(&t, &bytes, &size, err) < 0)
        return -1;
    int rc = subword_models_set(m, side, bytes, size, "the model just learned", err);
    free(bytes);
    return rc;
}

int subword_models_learn(SubwordModels *m, const char *src_path, const char *tgt_path, int joint,
                         int vocab_size, SubwordType type, uint32_t seed, Error *err)
{
    memset(m, 0, sizeof *m);
    if (joint && src_path) {
        const char *both[] = {src_path, tgt_path};
        if (learn_side(m, SIDE_TGT, both, 2, vocab_size, type, seed, err) < 0)
            return -1;
        return subword_models_set(m, SIDE_SRC, m->bytes[SIDE_TGT], m->size[SIDE_TGT],
                                  "the model just learned", err);
    }
    if (src_path && learn_side(m, SIDE_SRC, &src_path, 1, vocab_size, type, seed, err) < 0)
        return -1;
    return learn_side(m, SIDE_TGT, &tgt_path, 1, vocab_size, type, seed, err);
}

/* The whole of the file at path, at most SUBWORD_MODEL_MAX bytes, into a new buffer
 * (*size bytes). Returns NULL with err set if it cannot be read or is larger. */
enum { SUBWORD_MODEL_MAX = 256 << 20 };
static char *read_model_file(const char *path, size_t *size, Error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        error_errno(err, "cannot read the SentencePiece model", path);
        return NULL;
    }
    size_t cap = 1 << 16, used = 0;
    char *bytes = xmalloc(cap);
    for (;;) {
        if (used == cap) {
            if (cap >= SUBWORD_MODEL_MAX) {
                error_set(err, "`%s`: larger than %d MiB, not a SentencePiece model", path,
                          SUBWORD_MODEL_MAX >> 20);
                break;
            }
            cap *= 2;
            bytes = xrealloc_array(bytes, cap, 1);
        }
        size_t got = fread(bytes + used, 1, cap - used, f);
        used += got;
        if (got == 0) {
            if (!ferror(f)) {
                fclose(f);
                *size = used;
                return bytes;
            }
            error_errno(err, "cannot read the SentencePiece model", path);
            break;
        }
    }
    fclose(f);
    free(bytes);
    return NULL;
}

static int read_side(SubwordModels *m, int side, const char *path, Error *err)
{
    size_t size = 0;
    char *bytes = read_model_file(path, &size, err);
    if (!bytes)
        return -1;
    char name[4200];
    snprintf(name, sizeof name, "`%s`", path);
    int rc = subword_models_set(m, side, bytes, size, name, err);
    free(bytes);
    return rc;
}

int subword_models_read(SubwordModels *m, const char *src_path, const char *tgt_path, Error *err)
{
    memset(m, 0, sizeof *m);
    if (src_path && read_side(m, SIDE_SRC, src_path, err) < 0)
        return -1;
    return read_side(m, SIDE_TGT, tgt_path, err);
}

void subword_models_free(SubwordModels *m)
{
    for (int side = 0; side < 2; side++) {
        subwords_free(m->model[side]);
        free(m->bytes[side]);
    }
    memset(m, 0, sizeof *m);
}
