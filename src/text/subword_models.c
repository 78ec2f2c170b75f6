/* subword_models.c: a model's SentencePiece models (see subword_models.h). */
#include "text/subword_models.h"

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

void subword_models_free(SubwordModels *m)
{
    for (int side = 0; side < 2; side++) {
        subwords_free(m->model[side]);
        free(m->bytes[side]);
    }
    memset(m, 0, sizeof *m);
}
