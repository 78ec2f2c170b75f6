/* shard_exchange.c: the ranks' shard gradients summed in shard order (see shard_exchange.h). */
#include "train/shard_exchange.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

/* The streams between two ranks: partial sums travel to the next rank, the final sum
 * around the ring. MPI keeps the messages of one tag between two ranks in order. */
enum { TAG_PARTIAL_ROWS = 1, TAG_PARTIAL_DENSE, TAG_FINAL_ROWS, TAG_FINAL_DENSE };

/* 1 MiB messages: small enough that the next rank starts adding while the rest of the
 * gradient is on the wire, large enough that a message's latency is small beside its
 * transfer (10 us against 0.8 ms at 10 Gbit/s). */
enum { CHUNK_FLOATS = 1 << 18 };

static size_t wire_bytes(const EmbeddingGrad *g)
{
    return sizeof(int32_t) + (size_t)g->capacity * (sizeof(int32_t) + sizeof(float) * g->dim);
}

void shard_exchange_init(ShardExchange *x, const Dims *d, size_t max_src_positions,
                         size_t max_tgt_positions)
{
    *x = (ShardExchange){.chunk = CHUNK_FLOATS};
    Params dense;
    const size_t n = params_carve_dense(&dense, NULL, d);
    x->n_chunks = (int)((n + x->chunk - 1) / x->chunk);
    x->incoming = xmalloc_array(x->chunk, sizeof(float));
    embedding_grad_init(&x->merged[0], d->src_vocab, d->emb, (int)max_src_positions);
    embedding_grad_init(&x->merged[1], d->tgt_vocab, d->emb, (int)max_tgt_positions);
    for (int t = 0; t < 2; t++) {
        x->wire_cap[t] = wire_bytes(&x->merged[t]);
        x->wire_out[t] = xmalloc_array(x->wire_cap[t], 1);
        x->wire_in[t] = xmalloc_array(x->wire_cap[t], 1);
    }
    /* each chunk (of a range split in two, one more) or table: a partial sum sent on,
     * and the final sum passed on */
    x->max_sends = 2 * (x->n_chunks + 2);
    x->sends = xcalloc((size_t)x->max_sends, sizeof(RanksSend));
}

void shard_exchange_free(ShardExchange *x)
{
    free(x->incoming);
    for (int t = 0; t < 2; t++) {
        embedding_grad_free(&x->merged[t]);
        free(x->wire_out[t]);
        free(x->wire_in[t]);
    }
    free(x->sends);
    *x = (ShardExchange){0};
}

static EmbeddingGrad *table(ModelGrad *g, int t)
{
    return t == 0 ? &g->src_emb : &g->tgt_emb;
}

/* A table's rows as a message: their count, their tokens, their values, in row order. */
static size_t rows_to_wire(unsigned char *w, const EmbeddingGrad *g)
{
    const int32_t count = g->count;
    size_t at = 0;
    memcpy(w, &count, sizeof count);
    at += sizeof count;
    for (int r = 0; r < g->count; r++) {
        const int32_t token = g->tokens[r];
        memcpy(w + at, &token, sizeof token);
        at += sizeof token;
    }
    memcpy(w + at, g->rows, sizeof(float) * (size_t)g->count * g->dim);
    return at + sizeof(float) * (size_t)g->count * g->dim;
}

/* The rows of a message into g, emptied first, in the message's order. */
static void rows_from_wire(EmbeddingGrad *g, const unsigned char *w)
{
    embedding_grad_clear(g);
    int32_t count;
    memcpy(&count, w, sizeof count);
    assert(count >= 0 && count <= g->capacity);
    const unsigned char *values = w + sizeof count + sizeof(int32_t) * (size_t)count;
    for (int r = 0; r < count; r++) {
        int32_t token;
        memcpy(&token, w + sizeof count + sizeof token * (size_t)r, sizeof token);
        assert(token >= 0 && token < g->vocab);
        g->slot[token] = r;
        g->tokens[r] = token;
    }
    memcpy(g->rows, values, sizeof(float) * (size_t)count * g->dim);
    g->count = count;
}

static RanksSend *next_send(ShardExchange *x)
{
    assert(x->n_sends < x->max_sends);
    return &x->sends[x->n_sends++];
}

/* The embedding rows: the partial sum from rank r - 1 (none on rank 0), then this rank's
 * shards merged into it in order, sent on (the last rank's sum is final: to rank 0). */
static void rows_partial(ShardExchange *x, ModelGrad *local, int m, int r, int n)
{
    for (int t = 0; t < 2; t++) {
        EmbeddingGrad *mine = table(&local[0], t);
        if (r == 0) {
            for (int k = 1; k < m; k++)
                embedding_grad_merge(mine, table(&local[k], t));
        } else {
            ranks_receive(x->wire_in[t], x->wire_cap[t], r - 1, TAG_PARTIAL_ROWS);
            rows_from_wire(&x->merged[t], x->wire_in[t]);
            for (int k = 0; k < m; k++)
                embedding_grad_merge(&x->merged[t], table(&local[k], t));
            EmbeddingGrad swap = *mine; /* same capacity: the whole batch's positions */
            *mine = x->merged[t];
            x->merged[t] = swap;
        }
        const size_t bytes = rows_to_wire(x->wire_out[t], mine);
        const int last = r == n - 1;
        ranks_post_send(next_send(x), x->wire_out[t], bytes, last ? 0 : r + 1,
                        last ? TAG_FINAL_ROWS : TAG_PARTIAL_ROWS);
    }
}

/* Ranks 0 .. n-2: the final rows arrive (rank 0's from the last rank, the others' from
 * the rank before) and are passed on to the next rank below the last. */
static void rows_final(ShardExchange *x, ModelGrad *local, int r, int n)
{
    const int from = r == 0 ? n - 1 : r - 1, on = r + 1 <= n - 2 ? r + 1 : -1;
    for (int t = 0; t < 2; t++) {
        size_t bytes = ranks_receive(x->wire_in[t], x->wire_cap[t], from, TAG_FINAL_ROWS);
        rows_from_wire(table(&local[0], t), x->wire_in[t]);
        if (on >= 0)
            ranks_post_send(next_send(x), x->wire_in[t], bytes, on, TAG_FINAL_ROWS);
    }
}

/* Chunk c of the dense range [from, to): its first element, and *end its end. */
static size_t chunk_at(const ShardExchange *x, size_t from, size_t to, int c, size_t *end)
{
    const size_t first = from + (size_t)c * x->chunk;
    *end = first + x->chunk < to ? first + x->chunk : to;
    return first;
}

/* The dense range, chunk by chunk: rank 0 sums its shards and sends; rank r > 0 adds
 * its shards to the partial sum from r - 1 (float addition commutes, so p + g_k is
 * g_k + p bit for bit) and sends it on; sends[c] is chunk c's send. */
static void dense_partial(ShardExchange *x, ModelGrad *local, int m, int r, int n, size_t from,
                          size_t to, int chunks)
{
    float *sum = local[0].dense.mem;
    for (int c = 0; c < chunks; c++) {
        size_t end, first = chunk_at(x, from, to, c, &end);
        if (r > 0) {
            ranks_receive(x->incoming, sizeof(float) * (end - first), r - 1, TAG_PARTIAL_DENSE);
            for (size_t e = first; e < end; e++)
                sum[e] = x->incoming[e - first] + sum[e];
        }
        for (int k = 1; k < m; k++) {
            const float *g = local[k].dense.mem;
            for (size_t e = first; e < end; e++)
                sum[e] += g[e];
        }
        const int last = r == n - 1;
        ranks_post_send(next_send(x), sum + first, sizeof(float) * (end - first),
                        last ? 0 : r + 1, last ? TAG_FINAL_DENSE : TAG_PARTIAL_DENSE);
    }
}

/* Ranks 0 .. n-2: the final sum of the range, chunk by chunk, as rows_final. */
static void dense_final(ShardExchange *x, ModelGrad *local, int r, int n, size_t from,
                        size_t to, int chunks)
{
    const int source = r == 0 ? n - 1 : r - 1, on = r + 1 <= n - 2 ? r + 1 : -1;
    float *sum = local[0].dense.mem;
    for (int c = 0; c < chunks; c++) {
        size_t end, first = chunk_at(x, from, to, c, &end);
        ranks_wait(&x->sends[c]); /* chunk c's partial sum has left this buffer */
        ranks_receive(sum + first, sizeof(float) * (end - first), source, TAG_FINAL_DENSE);
        if (on >= 0)
            ranks_post_send(next_send(x), sum + first, sizeof(float) * (end - first), on,
                            TAG_FINAL_DENSE);
    }
}

static void wait_sends(ShardExchange *x)
{
    for (int k = 0; k < x->n_sends; k++)
        ranks_wait(&x->sends[k]);
    x->n_sends = 0;
}

void shard_exchange_rows(ShardExchange *x, ModelGrad *local, int m)
{
    const int r = ranks_rank(), n = ranks_size();
    rows_partial(x, local, m, r, n);
    if (r < n - 1)
        rows_final(x, local, r, n);
    wait_sends(x);
}

void shard_exchange_dense(ShardExchange *x, ModelGrad *local, int m, size_t from, size_t to)
{
    const int r = ranks_rank(), n = ranks_size();
    const int chunks = (int)((to - from + x->chunk - 1) / x->chunk);
    assert(x->n_sends == 0 && 2 * chunks <= x->max_sends);
    dense_partial(x, local, m, r, n, from, to, chunks); /* sends[c] */
    if (r < n - 1)
        dense_final(x, local, r, n, from, to, chunks);
    wait_sends(x);
}

void shard_exchange_sum(ShardExchange *x, ModelGrad *local, int m)
{
    shard_exchange_rows(x, local, m);
    shard_exchange_dense(x, local, m, 0, local[0].dense.n);
}
