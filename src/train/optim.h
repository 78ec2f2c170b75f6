/* optim.h: optimizers and gradient clipping over the flat parameter and gradient
 * buffers (the whole model is one array of n floats). Allocates its state once.
 * A step is optim_begin_step, then optim_update over every span of the buffer (the
 * dense gradient in one span, each embedding table by rows); optim_step does both for
 * one dense gradient. */
#ifndef S2S_OPTIM_H
#define S2S_OPTIM_H

#include <stddef.h>

#include "nn/embedding_grad.h"

typedef enum { OPTIM_ADAM, OPTIM_SGD, OPTIM_ADADELTA } OptimKind;

typedef struct {
    OptimKind kind;
    float lr;
    /* Adam (Kingma & Ba 2015): beta1, beta2, eps; defaults 0.9, 0.999, 1e-8.
     * Adadelta (Zeiler 2012): rho = beta2, eps; lr multiplies the update. */
    float beta1, beta2, eps;
    size_t n;
    /* State, n each: Adam's first and second moments; Adadelta's running averages of
     * squared gradients (v) and squared updates (m). */
    float *m, *v;
    long step;               /* updates done (Adam's bias correction) */
    /* Adam's step size and bias correction of this step, set by optim_begin_step */
    float step_size, inv_sqrt_correction2;
} Optimizer;

/* Sets up an optimizer for n parameters with Adam's defaults for beta1, beta2 and eps
 * (set the fields to change them). optim_free on a zeroed Optimizer is safe. */
void optim_init(Optimizer *opt, OptimKind kind, size_t n, float lr);
void optim_free(Optimizer *opt);

/* One update of params (n) from grads (n). */
void optim_step(Optimizer *opt, float *params, const float *grads);

/* Starts a step: counts it and computes what every parameter's update shares. */
void optim_begin_step(Optimizer *opt);
/* Updates the count parameters at params, which sit at offset in the whole buffer (their
 * state is there), from grads; NULL grads are zeros, which still move Adam's and
 * Adadelta's state and parameters exactly as zeros in a dense buffer would. */
void optim_update(Optimizer *opt, size_t offset, size_t count, float *params,
                  const float *grads);
/* Updates a whole (vocab, dim) embedding table at offset from its gradient by rows. */
void optim_update_rows(Optimizer *opt, size_t offset, float *table, const EmbeddingGrad *g);

/* sum + the squares of n gradients, accumulated in double in order (so that a gradient
 * kept in pieces sums exactly as one buffer would). */
double grad_add_squares(double sum, const float *grads, size_t n);
/* grads *= factor */
void grad_scale(float *grads, size_t n, float factor);
/* L2 norm of all n gradients together, accumulated in double. */
double grad_global_norm(const float *grads, size_t n);
/* Scales grads so that their global norm is at most max_norm (no-op when it is
 * already, or when max_norm <= 0). Returns the norm before clipping. */
double grad_clip_global_norm(float *grads, size_t n, double max_norm);

#endif
