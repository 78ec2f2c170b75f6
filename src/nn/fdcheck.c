/* fdcheck.c: the finite-difference helper of the gradient tests (see gradcheck.h). */
#include "nn/fdcheck.h"

#include <math.h>
#include <stdio.h>

/* Sixth-order central differences with h = 1e-2: truncation error ~h^6 / 140 ~ 1e-14
 * and rounding error ~(110 / 60h) * 1e-16 ~ 2e-14 (times the loss's size). A fourth-
 * order stencil with h = 1e-3 left absolute errors of ~5e-13, too coarse for the
 * attention weights, whose gradients can be as small as 1e-7. */
#define FD_STEP 1e-2
/* Below this size times the loss (when the loss is above 1) a gradient counts as zero:
 * the differences' rounding error grows with the loss they subtract, ~2e-14 |L| (some
 * gradients are exactly 0, as b_K's: a softmax ignores a shift common to every key), so
 * an absolute error of 1e-13 |L| on it is a relative error of 1e-6. */
#define FD_FLOOR 1e-7
/* A step that moves some relu input across 0 measures the kink, not the gradient: the
 * element is measured again with a step 10 times smaller, down to this one (rounding
 * error ~2e-10 times the loss; relu units have gradients far above that). The loss is
 * smooth in a neighbourhood of any point off the kinks, so a small enough step stays in
 * it. */
#define FD_STEP_MIN 1e-6

#include "nn/ops.h"

/* The sixth-order difference quotient of loss along element k of x with step h, and
 * whether any of its points saw other relu signs than `signs`. */
static double difference(real *x, size_t k, double h, uint64_t signs, int *crossed, LossFn loss,
                         void *ctx)
{
    const real saved = x[k];
    const double offsets[6] = {3, 2, 1, -1, -2, -3};
    double l[6];
    *crossed = 0;
    for (int s = 0; s < 6; s++) {
        x[k] = saved + (real)(offsets[s] * h);
        relu_signs = 0;
        l[s] = loss(ctx);
        *crossed |= relu_signs != signs;
    }
    x[k] = saved;
    /* symmetric pairs first: each difference of two nearby losses is exact, and a loss
     * that does not move (a padding row's embedding) gives exactly 0, where summing
     * 45 l_2 - 45 l_3 ... term by term would leave ~ulp(45 L) / 60h (8e-12 at h = 1e-5) */
    return ((l[0] - l[5]) - 9 * (l[1] - l[4]) + 45 * (l[2] - l[3])) / (60 * h);
}

double fdcheck_tensor(const char *name, real *x, const real *grad, size_t count,
                        LossFn loss, void *ctx)
{
    return fdcheck_elements(name, x, grad, count, NULL, count, loss, ctx);
}

double fdcheck_elements(const char *name, real *x, const real *grad, size_t count,
                          const size_t *which, size_t n_which, LossFn loss, void *ctx)
{
    double worst = 0, worst_abs = 0, max_grad = 0;
    size_t worst_at = 0, smaller_steps = 0, still_across = 0;
    double worst_g = 0, worst_fd = 0;
    relu_signs = 0;
    const double floor = FD_FLOOR * fmax(1, fabs(loss(ctx)));
    const uint64_t signs = relu_signs; /* at the point itself */
    for (size_t e = 0; e < n_which; e++) {
        size_t k = which ? which[e] : e;
        int crossed;
        double h = FD_STEP, fd = difference(x, k, h, signs, &crossed, loss, ctx);
        if (crossed)
            smaller_steps++;
        while (crossed && h / 10 >= FD_STEP_MIN) {
            h /= 10;
            fd = difference(x, k, h, signs, &crossed, loss, ctx);
        }
        if (crossed) /* a kink within 3e-6 of the point: the estimate may be off, say so */
            still_across++;
        double g = grad[k];
        double err = fabs(g - fd);
        double scale = fmax(fmax(fabs(g), fabs(fd)), floor);
        if (fabs(g) > max_grad)
            max_grad = fabs(g);
        if (err > worst_abs)
            worst_abs = err;
        if (err / scale > worst) {
            worst = err / scale;
            worst_at = k;
            worst_g = g;
            worst_fd = fd;
        }
    }
    if (which)
        printf("  %-16s %6zu of %-9zu", name, n_which, count);
    else
        printf("  %-16s %6zu", name, count);
    printf("  max|g| %.3e  max abs err %.3e  worst rel err %.3e", max_grad, worst_abs, worst);
    if (smaller_steps)
        printf("  (%zu across a relu kink: smaller steps)", smaller_steps);
    if (still_across)
        printf("  (%zu still across at step %g)", still_across, FD_STEP_MIN);
    if (worst > GRADCHECK_TOLERANCE)
        printf("  FAIL at [%zu]: analytic %.12g, numeric %.12g", worst_at, worst_g, worst_fd);
    printf("\n");
    fflush(stdout);
    return worst;
}

void fill_uniform(real *x, size_t count, Pcg32 *rng, double lo, double hi)
{
    for (size_t k = 0; k < count; k++)
        x[k] = (real)(lo + (hi - lo) * ((double)pcg32_next(rng) / 4294967296.0));
}

double weighted_sum(const real *out, const real *weights, size_t count)
{
    double sum = 0;
    for (size_t k = 0; k < count; k++)
        sum += (double)out[k] * weights[k];
    return sum;
}
