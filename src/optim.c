/* optim.c: SGD and Adam updates and global-norm clipping on flat arrays (see optim.h). */
#include "optim.h"

#include <math.h>
#include <stdlib.h>

#include "fastmath.h"
#include "mem.h"

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

SIMD_CLONES static void adam_step(Optimizer *opt, float *params, const float *grads)
{
    opt->step++;
    const float b1 = opt->beta1, b2 = opt->beta2;
    /* Bias corrections of the moments, folded into the step size and the denominator
     * (the same arithmetic as torch.optim.Adam). */
    const double correction1 = 1.0 - pow(b1, (double)opt->step);
    const double correction2 = 1.0 - pow(b2, (double)opt->step);
    const float step_size = (float)(opt->lr / correction1);
    const float inv_sqrt_c2 = (float)(1.0 / sqrt(correction2));
    float *m = opt->m, *v = opt->v;
    for (size_t k = 0; k < opt->n; k++) {
        float g = grads[k];
        m[k] = b1 * m[k] + (1 - b1) * g;
        v[k] = b2 * v[k] + (1 - b2) * g * g;
        params[k] -= step_size * m[k] / (sqrtf(v[k]) * inv_sqrt_c2 + opt->eps);
    }
}

SIMD_CLONES static void adadelta_step(Optimizer *opt, float *params, const float *grads)
{
    opt->step++;
    const float rho = opt->beta2, eps = opt->eps;
    float *sq_update = opt->m, *sq_grad = opt->v;
    for (size_t k = 0; k < opt->n; k++) {
        float g = grads[k];
        sq_grad[k] = rho * sq_grad[k] + (1 - rho) * g * g;
        /* the update's unit comes from the running size of past updates */
        float delta = sqrtf(sq_update[k] + eps) / sqrtf(sq_grad[k] + eps) * g;
        sq_update[k] = rho * sq_update[k] + (1 - rho) * delta * delta;
        params[k] -= opt->lr * delta;
    }
}

void optim_step(Optimizer *opt, float *params, const float *grads)
{
    switch (opt->kind) {
    case OPTIM_SGD:
        opt->step++;
        for (size_t k = 0; k < opt->n; k++)
            params[k] -= opt->lr * grads[k];
        break;
    case OPTIM_ADAM:
        adam_step(opt, params, grads);
        break;
    case OPTIM_ADADELTA:
        adadelta_step(opt, params, grads);
        break;
    }
}

double grad_global_norm(const float *grads, size_t n)
{
    double sum = 0;
    for (size_t k = 0; k < n; k++)
        sum += (double)grads[k] * grads[k];
    return sqrt(sum);
}

double grad_clip_global_norm(float *grads, size_t n, double max_norm)
{
    double norm = grad_global_norm(grads, n);
    if (max_norm > 0 && norm > max_norm) {
        float scale = (float)(max_norm / norm);
        for (size_t k = 0; k < n; k++)
            grads[k] *= scale;
    }
    return norm;
}
