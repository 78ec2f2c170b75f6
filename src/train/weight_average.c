/* weight_average.c: a ring of the last k weight snapshots and their mean (see
 * weight_average.h). */
#include "train/weight_average.h"

#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

void weight_average_init(WeightAverage *a, int k, size_t n)
{
    memset(a, 0, sizeof *a);
    a->k = k;
    a->n = n;
    a->ring = xmalloc_array((size_t)k * n, sizeof(float));
}

void weight_average_make_room(WeightAverage *a)
{
    a->ring = xrealloc_array(a->ring, (size_t)a->k * a->n, sizeof(float));
}

void weight_average_free(WeightAverage *a)
{
    free(a->ring);
    memset(a, 0, sizeof *a);
}

const float *weight_average_snapshot(const WeightAverage *a, int i)
{
    return a->ring + (size_t)((a->oldest + i) % a->k) * a->n;
}

void weight_average_push(WeightAverage *a, const float *w)
{
    int slot = (a->oldest + a->count) % a->k;
    if (a->count == a->k) /* full: the newest takes the oldest's slot */
        a->oldest = (a->oldest + 1) % a->k;
    else
        a->count++;
    memcpy(a->ring + (size_t)slot * a->n, w, a->n * sizeof(float));
}

void weight_average_mean(const WeightAverage *a, float *out)
{
    enum { BLOCK = 2048 }; /* a block's sums stay in the cache while every snapshot adds */
    double sum[BLOCK];
    const double inv = 1.0 / a->count;
    for (size_t start = 0; start < a->n; start += BLOCK) {
        size_t len = a->n - start < BLOCK ? a->n - start : BLOCK;
        memset(sum, 0, len * sizeof *sum);
        for (int i = 0; i < a->count; i++) {
            const float *w = weight_average_snapshot(a, i) + start;
            for (size_t j = 0; j < len; j++)
                sum[j] += w[j];
        }
        for (size_t j = 0; j < len; j++)
            out[start + j] = (float)(sum[j] * inv);
    }
}
