/* saved_model.h: the model's part of an s2s checkpoint, what every command that runs a
 * trained model reads: the effective config (CONF), the model sizes (DIMS), both
 * vocabularies (VSRC, VTGT), the tensor table (TNSR), the weights (PARM) and an image
 * model's channel means (IMGM), in sections of the container of sectionfile.h. Loading
 * checks every section against the others and that every weight is finite. The trainer
 * writes its own state into the same file after these (train/checkpoint.h); a model
 * reader skips it but for the first field of PROG, the step it was saved at. */
#ifndef S2S_SAVED_MODEL_H
#define S2S_SAVED_MODEL_H

#include "base/error.h"
#include "data/vocab.h"
#include "model/model.h"
#include "run/config.h"
#include "run/sectionfile.h"
#include "text/subword_models.h"

typedef struct {
    Config config;          /* from the stored effective config */
    char *config_yaml;
    Dims dims;
    Vocab src_vocab, tgt_vocab;
    Params params;
    double picture_mean[3]; /* an image model's channel means (0 for text) */
    SubwordModels subwords; /* data.subwords: sentencepiece's models (SPMS, SPMT) */
    long step;              /* the training step it was saved at (0 if unknown) */
} SavedModel;

/* Appends the model's sections to w. picture_mean: an image model's 3 channel means
 * (NULL for text); subwords: its SentencePiece models (NULL, or sides without one: none).
 * Returns 0, or -1 with err set. */
int saved_model_write(SectionWriter *w, const char *config_yaml, const Dims *dims,
                      const Vocab *src_vocab, const Vocab *tgt_vocab, const Params *params,
                      const double *picture_mean, const SubwordModels *subwords, Error *err);
/* Reads the model's sections of a parsed file (name for messages). m comes zeroed;
 * saved_model_free is safe after a failure. */
int saved_model_read(SavedModel *m, const SectionFile *f, const char *name, Error *err);

/* Loads the model of the checkpoint at path. */
int saved_model_load(SavedModel *m, const char *path, Error *err);
/* The same from bytes in memory (name for messages). */
int saved_model_load_bytes(SavedModel *m, const void *bytes, size_t size, const char *name,
                           Error *err);
void saved_model_free(SavedModel *m);

#endif
