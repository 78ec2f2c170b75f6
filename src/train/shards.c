/* shards.c: a step's pass over a batch cut into shards (see shards.h). */
#include "train/shards.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/clock.h"
#include "base/mem.h"
#include "base/ranks.h"

/* A shard's output layer is done: one fewer to wait for. */
static void output_done(void *latch)
{
    latch_count_down(latch);
}

void shards_init(Shards *s, const Dims *d, int n, int threads, int max_batch,
                 int max_src_steps, int max_tgt_steps, int picture_size, int ground_cells)
{
    const int ranks = ranks_size();
    *s = (Shards){.n = n, .local = n / ranks, .first = n / ranks * ranks_rank()};
    const int cols = (max_batch + n - 1) / n, m = s->local;
    s->batch = xcalloc((size_t)m, sizeof(Batch));
    s->ws = xcalloc((size_t)m, sizeof(Workspace));
    s->grad = xcalloc((size_t)m, sizeof(ModelGrad));
    s->mine = xcalloc((size_t)m, sizeof(ShardResult));
    s->all = xcalloc((size_t)n, sizeof(ShardResult));
    for (int k = 0; k < m; k++) {
        /* one shard's pass; grad[0] also takes the others' embedding rows */
        model_workspace_init(&s->ws[k], d, cols, max_src_steps, max_tgt_steps, 1);
        model_grad_init(&s->grad[k], d, k == 0 ? max_batch : cols, max_src_steps, max_tgt_steps);
        if (n == 1)
            continue; /* the whole batch is the shard */
        batch_init(&s->batch[k], cols, max_src_steps, max_tgt_steps);
        if (picture_size)
            batch_init_pictures(&s->batch[k], picture_size);
        if (ground_cells)
            batch_init_ground(&s->batch[k], ground_cells);
    }
    if (ranks == 1) {
        s->workers = workers_start(threads < m ? threads : m);
        return;
    }
    shard_exchange_init(&s->exchange, d, (size_t)max_batch * max_src_steps,
                        (size_t)max_batch * max_tgt_steps);
    /* the threads it was given, up to a seat per shard and one for the exchange during
     * the passes (the overlap, when there is a thread for it) */
    s->workers = workers_start(threads < 1 ? 1 : threads < m + 1 ? threads : m + 1);
    const Params *g = &s->grad[0].dense;
    s->output_from = (size_t)((d->tie_output ? g->b_o : g->W_o) - g->mem); /* a tied E_y is not final */
    s->outputs = latch_new();
    shards_set_overlap(s, 1);
}

void shards_set_overlap(Shards *s, int on)
{
    /* else (or without a thread each): the whole exchange after the passes */
    s->overlap = on && s->outputs && workers_threads(s->workers) == s->local + 1;
    for (int k = 0; k < s->local; k++)
        model_set_output_done(&s->ws[k], s->overlap ? output_done : NULL, s->outputs);
}

void shards_free(Shards *s)
{
    for (int k = 0; k < s->local; k++) {
        batch_free(&s->batch[k]);
        model_workspace_free(&s->ws[k]);
        model_grad_free(&s->grad[k]);
    }
    free(s->batch);
    free(s->ws);
    free(s->grad);
    free(s->mine);
    free(s->all);
    if (s->exchange.sends)
        shard_exchange_free(&s->exchange);
    workers_stop(s->workers);
    latch_free(s->outputs);
    *s = (Shards){0};
}

static void pass(Shards *s, int k)
{
    model_grad_zero(&s->grad[k]);
    s->mine[k] = (ShardResult){.used = s->batch[k].batch_size > 0};
    if (s->mine[k].used) {
        s->mine[k].loss = model_grad_forward_backward(&s->grad[k], &s->ws[k], s->P, &s->batch[k]);
        s->mine[k].hard_stats = s->ws[k].hard_pass.stats;
    } else if (s->overlap) {
        latch_count_down(s->outputs); /* an empty shard has no output layer to wait for */
    }
}

static void pass_task(void *ctx, int k)
{
    pass(ctx, k);
}

/* With overlap: task 0 (the calling thread) exchanges the output layer's gradient as
 * soon as every shard's is final; task k > 0 is shard k - 1's pass. */
static void overlapped_task(void *ctx, int task)
{
    Shards *s = ctx;
    if (task > 0) {
        pass(s, task - 1);
        return;
    }
    latch_wait(s->outputs);
    shard_exchange_dense(&s->exchange, s->grad, s->local, s->output_from, s->grad[0].dense.n);
}

/* Task t of the sum: grad[0] += grad[k], k = 1 .. local - 1 in order, over the t-th of
 * `threads` equal ranges of the dense buffer (each element's additions in shard order,
 * whichever thread makes them). */
static void sum_task(void *ctx, int t)
{
    Shards *s = ctx;
    const int parts = workers_threads(s->workers);
    const size_t n = s->grad[0].dense.n, from = n * (size_t)t / (size_t)parts,
                 to = n * (size_t)(t + 1) / (size_t)parts;
    float *sum = s->grad[0].dense.mem;
    for (int k = 1; k < s->local; k++) {
        const float *g = s->grad[k].dense.mem;
        for (size_t x = from; x < to; x++)
            sum[x] += g[x];
    }
}

static void add_hard_stats(HardStats *sum, const HardStats *st)
{
    sum->surrogate += st->surrogate;
    sum->nll += st->nll;
    sum->reward_sum += st->reward_sum;
    sum->sampled += st->sampled;
    sum->sampled_tokens += st->sampled_tokens;
    sum->entropy_sum += st->entropy_sum;
    sum->entropy_terms += st->entropy_terms;
}

/* The gradients of every shard summed in shard order into grad[0]: here, or across the
 * ranks. */
static void sum_gradients(Shards *s)
{
    if (ranks_size() > 1) {
        const double t0 = now_seconds();
        if (s->overlap) { /* the output layer's part went during the passes */
            shard_exchange_rows(&s->exchange, s->grad, s->local);
            shard_exchange_dense(&s->exchange, s->grad, s->local, 0, s->output_from);
        } else {
            shard_exchange_sum(&s->exchange, s->grad, s->local);
        }
        s->exposed_seconds += now_seconds() - t0;
        return;
    }
    workers_run(s->workers, sum_task, s, workers_threads(s->workers));
    for (int k = 1; k < s->local; k++) {
        embedding_grad_merge(&s->grad[0].src_emb, &s->grad[k].src_emb);
        embedding_grad_merge(&s->grad[0].tgt_emb, &s->grad[k].tgt_emb);
    }
}

double shards_forward_backward(Shards *s, const Params *P, const Batch *batch,
                               const Regularization *reg, const HardAttention *hard)
{
    s->P = P;
    const uint64_t window = ((uint64_t)1 << 32) / (uint64_t)s->n;
    for (int k = 0; k < s->local; k++) {
        const int shard = s->first + k; /* draws and sentences by the shard's number */
        Regularization r = *reg;
        pcg32_advance(&r.rng, window * (uint64_t)shard);
        model_set_regularization(&s->ws[k], &r);
        if (hard) {
            HardAttention h = *hard;
            pcg32_advance(&h.rng, window * (uint64_t)shard);
            model_set_hard(&s->ws[k], &h);
        }
        if (s->n == 1) {
            s->batch[0] = *batch; /* a view: shards_free frees nothing it did not make */
            continue;
        }
        batch_take_shard(&s->batch[k], batch, shard, s->n);
        model_set_loss_counts(&s->ws[k], batch->n_tgt_tokens, batch->batch_size);
    }
    if (s->overlap) {
        latch_set(s->outputs, s->local);
        workers_run(s->workers, overlapped_task, s, s->local + 1);
    } else {
        workers_run(s->workers, pass_task, s, s->local);
    }
    if (s->n == 1)
        s->batch[0] = (Batch){0};
    sum_gradients(s);
    /* the losses and statistics, folded in shard order as the gradients are */
    ranks_gather_all(s->mine, s->all, sizeof(ShardResult) * (size_t)s->local);
    double loss = s->all[0].loss;
    s->hard_stats = s->all[0].hard_stats;
    for (int k = 1; k < s->n; k++) {
        loss += s->all[k].loss;
        if (hard && s->all[k].used)
            add_hard_stats(&s->hard_stats, &s->all[k].hard_stats);
    }
    return loss;
}
