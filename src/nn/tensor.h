/* tensor.h: named tensors laid out one after another in a flat buffer. Every part of
 * the model (embeddings, encoder, attention, decoder, readout) lists its own tensors
 * through one TensorCarver, in the order of checkpoints and initialisation
 * (nn/MODEL.md, "Initialisation"); a pass with no buffer only counts. */
#ifndef S2S_TENSOR_H
#define S2S_TENSOR_H

#include <stddef.h>

#include "nn/real.h"

/* One named tensor of the flat buffer, for checkpoints, debugging and the checks. */
typedef struct {
    char name[24];
    real *data;
    int rows, cols; /* a vector is (rows, 1) */
    int is_bias;    /* initialised to 0 instead of uniform */
} Tensor;

typedef struct {
    real *base;     /* the buffer; NULL to count only */
    size_t offset;  /* floats taken so far */
    Tensor *list;   /* where each tensor's name and shape go */
    int n, cap;
} TensorCarver;

/* The next tensor: rows x cols floats at the carver's offset, named by the printf-style
 * format. Returns its data (NULL when counting). */
real *tensor_carve(TensorCarver *c, int rows, int cols, int is_bias, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

#endif
