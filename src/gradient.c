/* gradient.c: dense + by-row model gradient (see gradient.h). */
#include "gradient.h"

#include <math.h>
#include <string.h>

void gradient_init(Gradient *g, const Dims *d, int max_batch, int max_src_steps,
                   int max_tgt_steps)
{
    *g = (Gradient){0};
    size_t n = params_carve_dense(&g->dense, NULL, d);
    g->dense.mem = xcalloc(n, sizeof(float));
    g->dense.n = n;
    params_carve_dense(&g->dense, g->dense.mem, d);
    g->offset = (size_t)(d->src_vocab + d->tgt_vocab) * d->emb;
    rowgrad_init(&g->src_emb, d->src_vocab, d->emb, max_batch * max_src_steps);
    rowgrad_init(&g->tgt_emb, d->tgt_vocab, d->emb, max_batch * max_tgt_steps);
}

void gradient_free(Gradient *g)
{
    params_free(&g->dense);
    rowgrad_free(&g->src_emb);
    rowgrad_free(&g->tgt_emb);
}

void gradient_zero(Gradient *g)
{
    memset(g->dense.mem, 0, sizeof(float) * g->dense.n);
    rowgrad_clear(&g->src_emb);
    rowgrad_clear(&g->tgt_emb);
}

double gradient_forward_backward(Gradient *g, Workspace *ws, const Params *P,
                                 const Batch *batch)
{
    return model_forward_backward(&g->dense, &g->src_emb, &g->tgt_emb, ws, P, batch);
}

/* Adds the squares of a table's rows in token order, as a dense loop would meet them. */
static double rows_sum_of_squares(double sum, const RowGrad *r)
{
    for (int t = 0; t < r->vocab; t++) {
        const float *row = rowgrad_row(r, t);
        if (row)
            sum = grad_add_squares(sum, row, (size_t)r->dim);
    }
    return sum;
}

double gradient_norm(const Gradient *g)
{
    double sum = rows_sum_of_squares(0, &g->src_emb);
    sum = rows_sum_of_squares(sum, &g->tgt_emb);
    return sqrt(grad_add_squares(sum, g->dense.mem, g->dense.n));
}

double gradient_clip(Gradient *g, double max_norm)
{
    double norm = gradient_norm(g);
    if (max_norm > 0 && norm > max_norm) {
        float factor = (float)(max_norm / norm); /* as grad_clip_global_norm */
        grad_scale(g->dense.mem, g->dense.n, factor);
        grad_scale(g->src_emb.rows, (size_t)g->src_emb.count * g->src_emb.dim, factor);
        grad_scale(g->tgt_emb.rows, (size_t)g->tgt_emb.count * g->tgt_emb.dim, factor);
    }
    return norm;
}

void gradient_apply(Optimizer *opt, Params *P, const Gradient *g)
{
    optim_begin_step(opt);
    optim_update_rows(opt, 0, P->E_x, &g->src_emb);
    optim_update_rows(opt, (size_t)(P->E_y - P->mem), P->E_y, &g->tgt_emb);
    optim_update(opt, g->offset, g->dense.n, P->mem + g->offset, g->dense.mem);
}
