/* model_grad.c: dense + by-row model gradient (see model_grad.h). */
#include "train/model_grad.h"

#include <math.h>
#include <string.h>

void model_grad_init(ModelGrad *g, const Dims *d, int max_batch, int max_src_steps,
                   int max_tgt_steps)
{
    *g = (ModelGrad){0};
    size_t n = params_carve_dense(&g->dense, NULL, d);
    g->dense.mem = xcalloc(n, sizeof(float));
    g->dense.n = n;
    params_carve_dense(&g->dense, g->dense.mem, d);
    Params whole;
    g->offset = params_carve(&whole, NULL, d) - n; /* the embeddings kept by rows */
    embedding_grad_init(&g->src_emb, d->src_vocab, d->emb, max_batch * max_src_steps);
    embedding_grad_init(&g->tgt_emb, d->tgt_vocab, d->emb, max_batch * max_tgt_steps);
}

void model_grad_free(ModelGrad *g)
{
    params_free(&g->dense);
    embedding_grad_free(&g->src_emb);
    embedding_grad_free(&g->tgt_emb);
}

void model_grad_zero(ModelGrad *g)
{
    memset(g->dense.mem, 0, sizeof(float) * g->dense.n);
    embedding_grad_clear(&g->src_emb);
    embedding_grad_clear(&g->tgt_emb);
}

double model_grad_forward_backward(ModelGrad *g, Workspace *ws, const Params *P,
                                 const Batch *batch)
{
    /* a tied E_y is in the dense gradient: the output layer fills every row; shared
     * embeddings (E_x is E_y) take the source's rows there too */
    return model_forward_backward(&g->dense, g->dense.E_x ? NULL : &g->src_emb,
                                  g->dense.E_y ? NULL : &g->tgt_emb, ws, P, batch);
}

/* Adds the squares of a table's rows in token order, as a dense loop would meet them. */
static double rows_sum_of_squares(double sum, const EmbeddingGrad *r)
{
    for (int t = 0; t < r->vocab; t++) {
        const float *row = embedding_grad_row(r, t);
        if (row)
            sum = grad_add_squares(sum, row, (size_t)r->dim);
    }
    return sum;
}

double model_grad_norm(const ModelGrad *g)
{
    double sum = rows_sum_of_squares(0, &g->src_emb);
    sum = rows_sum_of_squares(sum, &g->tgt_emb);
    return sqrt(grad_add_squares(sum, g->dense.mem, g->dense.n));
}

double model_grad_clip(ModelGrad *g, double max_norm)
{
    double norm = model_grad_norm(g);
    if (max_norm > 0 && norm > max_norm) {
        float factor = (float)(max_norm / norm); /* as grad_clip_global_norm */
        grad_scale(g->dense.mem, g->dense.n, factor);
        grad_scale(g->src_emb.rows, (size_t)g->src_emb.count * g->src_emb.dim, factor);
        grad_scale(g->tgt_emb.rows, (size_t)g->tgt_emb.count * g->tgt_emb.dim, factor);
    }
    return norm;
}

void model_grad_apply(Optimizer *opt, Params *P, const ModelGrad *g)
{
    optim_begin_step(opt);
    if (!g->dense.E_x) /* else E_x is E_y (shared), in the dense part */
        optim_update_rows(opt, 0, P->E_x, &g->src_emb);
    if (!g->dense.E_y) /* else E_y is in the dense part (tied or shared), updated once, below */
        optim_update_rows(opt, (size_t)(P->E_y - P->mem), P->E_y, &g->tgt_emb);
    optim_update(opt, g->offset, g->dense.n, P->mem + g->offset, g->dense.mem);
}
