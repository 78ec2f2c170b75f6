/* tensor.h: named tensors laid out one after another in a flat buffer. Every part of
 * the model (embeddings, encoder, attention, decoder, readout) lists its own tensors
 * through one TensorCarver, in the order of checkpoints and initialisation
 * (model/MODEL.md, "Initialisation"); a pass with no buffer only counts. */
#ifndef S2S_TENSOR_H
#define S2S_TENSOR_H

#include <stddef.h>

#include "nn/real.h"

/* How a tensor starts (model/MODEL.md, "Initialisation"): weights uniform in [-r, r],
 * biases 0, a layer norm's gains 1. */
typedef enum { TENSOR_UNIFORM = 0, TENSOR_ZEROS = 1, TENSOR_ONES = 2 } TensorInit;

/* One named tensor of the flat buffer, for checkpoints, debugging and the checks. */
typedef struct {
    char name[24];
    real *data;
    int rows, cols;  /* a vector is (rows, 1) */
    TensorInit init;
} Tensor;

typedef struct {
    real *base;     /* the buffer; NULL to count only */
    size_t offset;  /* floats taken so far */
    Tensor *list;   /* where each tensor's name and shape go */
    int n, cap;
} TensorCarver;

/* The next tensor: rows x cols floats at the carver's offset, named by the printf-style
 * format, starting as init says (0: uniform, 1: zeros, as the weights and biases of
 * the model pass them). Returns its data (NULL when counting). */
real *tensor_carve(TensorCarver *c, int rows, int cols, TensorInit init, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

#endif
