/* batch.c: padding sentence pairs into time-major id matrices (see batch.h). */
#include "model/batch.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

void batch_init(Batch *batch, int max_batch, int max_src_steps, int max_tgt_steps)
{
    assert(max_batch > 0 && max_src_steps > 0 && max_tgt_steps >= 0);
    *batch = (Batch){0};
    batch->max_batch = max_batch;
    batch->max_src_steps = max_src_steps;
    batch->max_tgt_steps = max_tgt_steps;
    batch->src = xmalloc_array((size_t)max_batch * max_src_steps, sizeof(int));
    batch->tgt_in = xmalloc_array((size_t)max_batch * max_tgt_steps, sizeof(int));
    batch->tgt_out = xmalloc_array((size_t)max_batch * max_tgt_steps, sizeof(int));
    batch->src_len = xmalloc_array((size_t)max_batch, sizeof(int));
    batch->tgt_len = xmalloc_array((size_t)max_batch, sizeof(int));
    int steps = max_src_steps > max_tgt_steps ? max_src_steps : max_tgt_steps;
    batch->scratch = xmalloc_array((size_t)max_batch * (size_t)(steps + 2), sizeof(int));
    batch->pair_src = xmalloc_array((size_t)max_batch, sizeof(int *));
    batch->pair_tgt = xmalloc_array((size_t)max_batch, sizeof(int *));
    batch->pair_src_n = xmalloc_array((size_t)max_batch, sizeof(int));
    batch->pair_tgt_n = xmalloc_array((size_t)max_batch, sizeof(int));
    batch->pair = xmalloc_array((size_t)max_batch, sizeof(int));
}

void batch_free(Batch *batch)
{
    free(batch->src);
    free(batch->tgt_in);
    free(batch->tgt_out);
    free(batch->src_len);
    free(batch->tgt_len);
    free(batch->scratch);
    free(batch->pair_src);
    free(batch->pair_tgt);
    free(batch->pair_src_n);
    free(batch->pair_tgt_n);
    free(batch->pixels);
    free(batch->pixel_scratch);
    free(batch->pair);
    free(batch->ground);
    *batch = (Batch){0};
}

void batch_init_pictures(Batch *batch, int size)
{
    assert(size > 0 && !batch->pixels);
    const size_t floats = (size_t)batch->max_batch * size * size * 3;
    batch->picture_size = size;
    batch->pixels = xmalloc_array(floats, sizeof(float));
    batch->pixel_scratch = xmalloc_array(floats, sizeof(float));
}

void batch_init_ground(Batch *batch, int cells)
{
    assert(cells > 0 && !batch->ground);
    batch->ground_cells = cells;
    /* and after them one step's cells of every pair: batch_sort_by_target's scratch */
    batch->ground = xcalloc((size_t)batch->max_batch * (batch->max_tgt_steps + 1) * cells, 1);
}

void batch_fill_pictures(Batch *batch, int n, int cells, const int *const *tgt, const int *tgt_n)
{
    assert(batch->pixels && cells > 0 && cells <= batch->max_src_steps);
    /* a caption's token ids as batch_fill lays them out, with sources of cells - 1 ids
     * and their </s>; then every position a cell */
    for (int j = 0; j < cells; j++)
        batch->scratch[j] = TOK_UNK;
    for (int b = 0; b < n; b++) {
        batch->pair_src[b] = batch->scratch;
        batch->pair_src_n[b] = cells - 1;
    }
    batch_fill(batch, n, batch->pair_src, batch->pair_src_n, tgt, tgt_n);
    for (size_t x = 0; x < (size_t)cells * n; x++)
        batch->src[x] = TOK_UNK;
}

void batch_fill(Batch *batch, int n, const int *const *src, const int *src_n,
                const int *const *tgt, const int *tgt_n)
{
    assert(n > 0 && n <= batch->max_batch);
    int S = 0, T = 0;
    for (int b = 0; b < n; b++) {
        if (src_n[b] + 1 > S)
            S = src_n[b] + 1;
        if (tgt && tgt_n[b] + 1 > T)
            T = tgt_n[b] + 1;
    }
    assert(S <= batch->max_src_steps && T <= batch->max_tgt_steps);
    batch->batch_size = n;
    batch->src_steps = S;
    batch->tgt_steps = T;
    batch->n_src_tokens = batch->n_tgt_tokens = 0;
    for (int b = 0; b < n; b++) {
        int len = src_n[b] + 1;
        batch->pair[b] = b;
        batch->src_len[b] = len;
        batch->n_src_tokens += len;
        for (int j = 0; j < S; j++)
            batch->src[j * n + b] = j < len - 1 ? src[b][j] : j == len - 1 ? TOK_EOS : TOK_PAD;
        if (!tgt) {
            batch->tgt_len[b] = 0;
            continue;
        }
        len = tgt_n[b] + 1;
        batch->tgt_len[b] = len;
        batch->n_tgt_tokens += len;
        for (int i = 0; i < T; i++) {
            batch->tgt_in[i * n + b] = i == 0 ? TOK_BOS : i < len ? tgt[b][i - 1] : TOK_PAD;
            batch->tgt_out[i * n + b] = i < len - 1 ? tgt[b][i] : i == len - 1 ? TOK_EOS : TOK_PAD;
        }
    }
}

/* Applies the column permutation order to a (steps, B) matrix. */
static void permute_columns(int *m, int steps, int B, const int *order, int *tmp)
{
    for (int t = 0; t < steps; t++) {
        int *row = m + (size_t)t * B;
        for (int b = 0; b < B; b++)
            tmp[b] = row[order[b]];
        memcpy(row, tmp, sizeof(int) * (size_t)B);
    }
}

int batch_is_sorted_by_target(const Batch *batch)
{
    for (int b = 1; b < batch->batch_size; b++)
        if (batch->tgt_len[b] > batch->tgt_len[b - 1])
            return 0;
    return 1;
}

void batch_sort_by_target(Batch *batch)
{
    const int B = batch->batch_size;
    int *order = batch->scratch, *tmp = batch->scratch + B;
    /* insertion sort: stable, and batches are small */
    for (int b = 0; b < B; b++) {
        int k = b;
        while (k > 0 && batch->tgt_len[order[k - 1]] < batch->tgt_len[b]) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = b;
    }
    permute_columns(batch->src, batch->src_steps, B, order, tmp);
    permute_columns(batch->tgt_in, batch->tgt_steps, B, order, tmp);
    permute_columns(batch->tgt_out, batch->tgt_steps, B, order, tmp);
    permute_columns(batch->src_len, 1, B, order, tmp);
    permute_columns(batch->tgt_len, 1, B, order, tmp);
    permute_columns(batch->pair, 1, B, order, tmp);
    if (batch->ground) { /* and each word's cells, step by step */
        const size_t step = (size_t)batch->ground_cells * B;
        unsigned char *tmp_cells = batch->ground + (size_t)batch->max_batch *
                                                       batch->max_tgt_steps * batch->ground_cells;
        for (int i = 0; i < batch->tgt_steps; i++) {
            unsigned char *block = batch->ground + (size_t)i * step;
            memcpy(tmp_cells, block, step);
            for (int b = 0; b < B; b++)
                memcpy(block + (size_t)b * batch->ground_cells,
                       tmp_cells + (size_t)order[b] * batch->ground_cells, batch->ground_cells);
        }
    }
    if (batch->pixels) { /* each picture moves with its caption */
        const size_t one = (size_t)batch->picture_size * batch->picture_size * 3;
        memcpy(batch->pixel_scratch, batch->pixels, sizeof(float) * one * B);
        for (int b = 0; b < B; b++)
            memcpy(batch->pixels + one * b, batch->pixel_scratch + one * order[b],
                   sizeof(float) * one);
    }
}

int batch_take_shard(Batch *shard, const Batch *whole, int k, int n)
{
    assert(n > 0 && k >= 0 && k < n);
    const int B = whole->batch_size, cols = B > k ? (B - k + n - 1) / n : 0;
    assert(cols <= shard->max_batch);
    int S = 0, T = 0, src_tokens = 0, tgt_tokens = 0;
    for (int c = 0; c < cols; c++) {
        const int b = k + c * n;
        shard->src_len[c] = whole->src_len[b];
        shard->tgt_len[c] = whole->tgt_len[b];
        shard->pair[c] = whole->pair[b];
        S = whole->src_len[b] > S ? whole->src_len[b] : S;
        T = whole->tgt_len[b] > T ? whole->tgt_len[b] : T;
        src_tokens += whole->src_len[b];
        tgt_tokens += whole->tgt_len[b];
    }
    assert(S <= shard->max_src_steps && T <= shard->max_tgt_steps);
    shard->batch_size = cols;
    shard->src_steps = S;
    shard->tgt_steps = whole->tgt_steps ? T : 0;
    shard->n_src_tokens = src_tokens;
    shard->n_tgt_tokens = tgt_tokens;
    for (int j = 0; j < S; j++)
        for (int c = 0; c < cols; c++)
            shard->src[j * cols + c] = whole->src[j * B + k + c * n];
    for (int i = 0; i < shard->tgt_steps; i++)
        for (int c = 0; c < cols; c++) {
            shard->tgt_in[i * cols + c] = whole->tgt_in[i * B + k + c * n];
            shard->tgt_out[i * cols + c] = whole->tgt_out[i * B + k + c * n];
        }
    if (whole->pixels) {
        assert(shard->pixels && shard->picture_size == whole->picture_size);
        const size_t floats = (size_t)whole->picture_size * whole->picture_size * 3;
        for (int c = 0; c < cols; c++)
            memcpy(shard->pixels + c * floats, whole->pixels + (size_t)(k + c * n) * floats,
                   floats * sizeof(float));
    }
    if (whole->ground) {
        assert(shard->ground && shard->ground_cells == whole->ground_cells);
        const size_t cells = (size_t)whole->ground_cells;
        for (int i = 0; i < shard->tgt_steps; i++)
            for (int c = 0; c < cols; c++)
                memcpy(shard->ground + ((size_t)i * cols + c) * cells,
                       whole->ground + ((size_t)i * B + k + c * n) * cells, cells);
    }
    return cols;
}
