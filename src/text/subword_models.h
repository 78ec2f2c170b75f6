/* subword_models.h: a model's two SentencePiece models (text/subwords.h), one per side,
 * as training learns them and checkpoints keep them: their bytes (what is saved) and
 * their loaded form (what splits text). With data.subword_joint both sides hold the same
 * model; an image model's source has none. */
#ifndef S2S_SUBWORD_MODELS_H
#define S2S_SUBWORD_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "text/subwords.h"

enum { SIDE_SRC, SIDE_TGT };

typedef struct {
    char *bytes[2];      /* the serialized models, source and target (NULL: none) */
    size_t size[2];
    Subwords *model[2];  /* loaded from bytes */
} SubwordModels;

/* Learns the models from the training files: src_path (NULL for an image model's
 * pictures) and tgt_path, jointly (one model from both files, for both sides) or one
 * per side; vocab_size pieces each, of the given type, seeded by seed. Returns 0, or -1
 * with err set; m comes zeroed, subword_models_free is safe either way. */
int subword_models_learn(SubwordModels *m, const char *src_path, const char *tgt_path, int joint,
                         int vocab_size, SubwordType type, uint32_t seed, Error *err);

/* Reads the models from SentencePiece .model files, src_path (NULL for an image model's
 * pictures) and tgt_path (the same path twice: a joint model). Returns 0, or -1 with err
 * naming the file that cannot be read or is not a model; m comes zeroed,
 * subword_models_free is safe either way. */
int subword_models_read(SubwordModels *m, const char *src_path, const char *tgt_path, Error *err);

/* Takes side's model from bytes[0..size) (copied), loading it (name for messages:
 * "checkpoint `X`, section SPMT"). Returns 0, or -1 with err set. */
int subword_models_set(SubwordModels *m, int side, const void *bytes, size_t size,
                       const char *name, Error *err);

void subword_models_free(SubwordModels *m);

#endif
