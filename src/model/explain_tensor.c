/* explain_tensor.c: the list of tensors of a worked step (explain.h), grown one named
 * tensor at a time; the same for a model's step (explain.c, float) and the tutorials'
 * examples (explain_examples.c, double): its values are doubles either way. */
#include <stdio.h>
#include <stdlib.h>

#include "base/mem.h"
#include "model/explain.h"

ExplainTensor *explain_add_tensor(ExplainStep *out, const char *name, const char *title,
                                  ExplainRows rows_are, int rows, int cols, const char *cols_are,
                                  const char *about)
{
    if (out->n == out->cap) {
        out->cap = out->cap ? 2 * out->cap : 16;
        out->tensors = xrealloc_array(out->tensors, (size_t)out->cap, sizeof(ExplainTensor));
    }
    ExplainTensor *t = &out->tensors[out->n++];
    *t = (ExplainTensor){.rows_are = rows_are, .rows = rows, .cols = cols};
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->title, sizeof t->title, "%s", title);
    snprintf(t->cols_are, sizeof t->cols_are, "%s", cols_are);
    snprintf(t->about, sizeof t->about, "%s", about);
    t->values = xmalloc_array((size_t)rows * cols, sizeof(double));
    return t;
}

void explain_free(ExplainStep *out)
{
    for (int k = 0; k < out->n; k++)
        free(out->tensors[k].values);
    free(out->tensors);
    *out = (ExplainStep){0};
}
