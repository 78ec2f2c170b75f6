/* tensor.c: carving named tensors from a flat buffer (see tensor.h). */
#include "nn/tensor.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>

real *tensor_carve(TensorCarver *c, int rows, int cols, TensorInit init, const char *format, ...)
{
    assert(c->n < c->cap);
    Tensor *x = &c->list[c->n++];
    va_list ap;
    va_start(ap, format);
    vsnprintf(x->name, sizeof x->name, format, ap);
    va_end(ap);
    x->data = c->base ? c->base + c->offset : NULL;
    x->rows = rows;
    x->cols = cols;
    x->init = init;
    c->offset += (size_t)rows * (size_t)cols;
    return x->data;
}
