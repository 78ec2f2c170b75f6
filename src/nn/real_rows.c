/* real_rows.c: a padded batch's real rows, sentence by sentence (see real_rows.h). */
#include "nn/real_rows.h"

#include <assert.h>
#include <string.h>

void real_rows_carve(RealRows *r, Arena *ar, int P, int B)
{
    memset(r, 0, sizeof *r);
    r->start = arena_alloc(ar, (size_t)B, sizeof(int));
    r->padded = arena_alloc(ar, (size_t)P * B, sizeof(int));
}

void real_rows_set(RealRows *r, const int *len, int P, int B)
{
    r->P = P, r->B = B, r->len = len;
    int n = 0;
    for (int b = 0; b < B; b++) {
        assert(len[b] >= 0 && len[b] <= P);
        r->start[b] = n;
        for (int p = 0; p < len[b]; p++)
            r->padded[n + p] = p * B + b;
        n += len[b];
    }
    r->n = n;
}

void real_rows_gather(real *to, const real *from, const RealRows *r, int cols)
{
    for (int k = 0; k < r->n; k++)
        memcpy(to + (size_t)k * cols, from + (size_t)r->padded[k] * cols, sizeof(real) * cols);
}

void real_rows_scatter(real *to, const real *from, const RealRows *r, int cols)
{
    memset(to, 0, sizeof(real) * (size_t)r->P * r->B * cols);
    for (int k = 0; k < r->n; k++)
        memcpy(to + (size_t)r->padded[k] * cols, from + (size_t)k * cols, sizeof(real) * cols);
}

void real_rows_scatter_add(real *to, const real *from, const RealRows *r, int cols)
{
    for (int k = 0; k < r->n; k++) {
        real *row = to + (size_t)r->padded[k] * cols;
        const real *add = from + (size_t)k * cols;
        for (int c = 0; c < cols; c++)
            row[c] += add[c];
    }
}

void real_rows_dropout_forward(real *x, real *mask, const RealRows *r, int cols, double rate,
                               Pcg32 *rng)
{
    const real keep = (real)(1 / (1 - rate));
    const size_t all = (size_t)r->P * r->B * cols;
    for (size_t k = 0; k < all; k++)
        mask[k] = pcg32_unit(rng) < rate ? 0 : keep;
    real_rows_dropout_backward(x, mask, r, cols);
}

void real_rows_dropout_backward(real *dx, const real *mask, const RealRows *r, int cols)
{
    for (int k = 0; k < r->n; k++) {
        real *row = dx + (size_t)k * cols;
        const real *f = mask + (size_t)r->padded[k] * cols;
        for (int c = 0; c < cols; c++)
            row[c] *= f[c];
    }
}
