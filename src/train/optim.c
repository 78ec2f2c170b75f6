/* optim.c: SGD and Adam updates and global-norm clipping on flat arrays (see optim.h). */
#include "train/optim.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "base/mem.h"
#include "nn/fastmath.h"

void optim_init(Optimizer *opt, OptimKind kind, size_t n, float lr)
{
    *opt = (Optimizer){.kind = kind, .lr = lr, .beta1 = 0.9f, .beta2 = 0.999f,
                       .eps = 1e-8f, .n = n};
    if (kind != OPTIM_SGD) {
        opt->m = xcalloc(n, sizeof(float));
        opt->v = xcalloc(n, sizeof(float));
    }
}

void optim_free(Optimizer *opt)
{
    free(opt->m);
    free(opt->v);
    *opt = (Optimizer){0};
}

void optim_begin_step(Optimizer *opt)
{
    opt->step++;
    if (opt->kind == OPTIM_ADAM) {
        /* Bias corrections of the moments, folded into the step size and the
         * denominator (the same arithmetic as torch.optim.Adam). */
        const double correction1 = 1.0 - pow(opt->beta1, (double)opt->step);
        const double correction2 = 1.0 - pow(opt->beta2, (double)opt->step);
        opt->step_size = (float)(opt->lr / correction1);
        opt->inv_sqrt_correction2 = (float)(1.0 / sqrt(correction2));
    }
}

/* One parameter's update: inlined into loops over a gradient and over zeros. */
static inline void adam_one(const Optimizer *opt, float *p, float *m, float *v, float g)
{
    const float b1 = opt->beta1, b2 = opt->beta2;
    *m = b1 * *m + (1 - b1) * g;
    *v = b2 * *v + (1 - b2) * g * g;
    *p -= opt->step_size * *m / (sqrtf(*v) * opt->inv_sqrt_correction2 + opt->eps);
}

static inline void adadelta_one(const Optimizer *opt, float *p, float *sq_update,
                                float *sq_grad, float g)
{
    const float rho = opt->beta2, eps = opt->eps;
    *sq_grad = rho * *sq_grad + (1 - rho) * g * g;
    /* the update's unit comes from the running size of past updates */
    float delta = sqrtf(*sq_update + eps) / sqrtf(*sq_grad + eps) * g;
    *sq_update = rho * *sq_update + (1 - rho) * delta * delta;
    *p -= opt->lr * delta;
}

SIMD_CLONES void optim_update(Optimizer *opt, size_t offset, size_t count, float *params,
                              const float *grads)
{
    assert(offset + count <= opt->n);
    float *m = opt->m ? opt->m + offset : NULL, *v = opt->v ? opt->v + offset : NULL;
    switch (opt->kind) {
    case OPTIM_SGD:
        if (grads)
            for (size_t k = 0; k < count; k++)
                params[k] -= opt->lr * grads[k];
        break;
    case OPTIM_ADAM:
        if (grads)
            for (size_t k = 0; k < count; k++)
                adam_one(opt, &params[k], &m[k], &v[k], grads[k]);
        else
            for (size_t k = 0; k < count; k++)
                adam_one(opt, &params[k], &m[k], &v[k], 0.0f);
        break;
    case OPTIM_ADADELTA:
        /* m holds the running squared updates, v the running squared gradients */
        if (grads)
            for (size_t k = 0; k < count; k++)
                adadelta_one(opt, &params[k], &m[k], &v[k], grads[k]);
        else
            for (size_t k = 0; k < count; k++)
                adadelta_one(opt, &params[k], &m[k], &v[k], 0.0f);
        break;
    }
}

void optim_update_rows(Optimizer *opt, size_t offset, float *table, const EmbeddingGrad *g)
{
    const size_t dim = (size_t)g->dim;
    for (int t = 0; t < g->vocab; t++)
        optim_update(opt, offset + t * dim, dim, table + t * dim, embedding_grad_row(g, t));
}

void optim_step(Optimizer *opt, float *params, const float *grads)
{
    optim_begin_step(opt);
    optim_update(opt, 0, opt->n, params, grads);
}

double grad_add_squares(double sum, const float *grads, size_t n)
{
    for (size_t k = 0; k < n; k++)
        sum += (double)grads[k] * grads[k];
    return sum;
}

double grad_global_norm(const float *grads, size_t n)
{
    return sqrt(grad_add_squares(0, grads, n));
}

void grad_scale(float *grads, size_t n, float factor)
{
    for (size_t k = 0; k < n; k++)
        grads[k] *= factor;
}

double grad_clip_global_norm(float *grads, size_t n, double max_norm)
{
    double norm = grad_global_norm(grads, n);
    if (max_norm > 0 && norm > max_norm)
        grad_scale(grads, n, (float)(max_norm / norm));
    return norm;
}
