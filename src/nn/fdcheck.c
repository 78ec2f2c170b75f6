/* fdcheck.c: the finite-difference helper of the gradient tests (see fdcheck.h). */
#include "nn/fdcheck.h"

#include <math.h>
#include <stdio.h>

/* Sixth-order central differences with h = 1e-2: truncation error ~h^6 / 140 times the
 * seventh derivative along the element, and rounding error ~(110 / 60h) * 1e-16 ~ 2e-14
 * (times the loss's size). A fourth-order stencil with h = 1e-3 left absolute errors of
 * ~5e-13, too coarse for the attention weights, whose gradients can be as small as 1e-7.
 * The seventh derivative is not small along every parameter of a model of the demo's
 * size (a bias of the 4-head demo: 2.3e-6 relative at 1e-2): such elements are measured
 * again at smaller steps (FD_REFINE). */
#define FD_STEP 1e-2
/* Below this size times the loss (when the loss is above 1) a gradient counts as zero:
 * the differences' rounding error grows with the loss they subtract, ~2e-14 |L| (some
 * gradients are exactly 0, as b_K's: a softmax ignores a shift common to every key), so
 * an absolute error of 1e-13 |L| on it is a relative error of 1e-6. */
#define FD_FLOOR 1e-7
/* An element whose estimate disagrees with its gradient is measured again at steps this
 * many times smaller, up to this many times (2e-3, 4e-4, 8e-5 after 1e-2): each cuts the
 * truncation error 5^6 = 15625-fold, and at 8e-5 the rounding error is still ~3e-12
 * times the loss. */
#define FD_REFINE 5
#define FD_REFINE_STEPS 3

#include "base/error.h"
#include "nn/ops.h"

/* The sixth-order difference quotient of loss along element k of x with step h. Every
 * loss is taken with the relu pattern frozen as it was at the point (ops.h): a step
 * that would carry some relu input across its kink measures the smooth loss whose
 * derivative the analytic gradient is, not the kink. (Shrinking the step until no relu
 * crossed, as s2s did before, left steps of 1e-5 on a model with thousands of relu
 * units, whose rounding error then failed correct gradients on some CPUs' kernels.) */
static double difference(real *x, size_t k, double h, LossFn loss, void *ctx)
{
    const real saved = x[k];
    const double offsets[6] = {3, 2, 1, -1, -2, -3};
    double l[6];
    for (int s = 0; s < 6; s++) {
        x[k] = saved + (real)(offsets[s] * h);
        relu_freeze(RELU_REPLAY);
        l[s] = loss(ctx);
    }
    x[k] = saved;
    /* symmetric pairs first: each difference of two nearby losses is exact, and a loss
     * that does not move (a padding row's embedding) gives exactly 0, where summing
     * 45 l_2 - 45 l_3 ... term by term would leave ~ulp(45 L) / 60h */
    return ((l[0] - l[5]) - 9 * (l[1] - l[4]) + 45 * (l[2] - l[3])) / (60 * h);
}

double fdcheck_tensor(const char *name, real *x, const real *grad, size_t count,
                        LossFn loss, void *ctx)
{
    return fdcheck_elements(name, x, grad, count, NULL, count, loss, ctx);
}

/* |a - b| relative to the larger of the two (or to floor, for gradients near zero). */
static double relative_difference(double a, double b, double floor)
{
    return fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), floor);
}

/* An element the first step could not confirm, and what the smaller ones said. */
typedef struct {
    size_t at;
    double first_err, first_h, err, h;
    int settled; /* the last estimate agreed with g, or with the estimate before it */
} Refined;

enum { REFINED_SHOWN = 4 };

/* Richardson's way of telling truncation from a wrong gradient: the step's own error
 * shrinks as h^6, a wrong gradient's does not. So element k, whose estimate *fd at the
 * first step disagrees with g by *err, is measured again at steps FD_REFINE times
 * smaller until an estimate agrees with g (the first step was too coarse here) or two
 * successive estimates agree with each other and not with g (the gradient is wrong).
 * Leaves the last estimate and its error in *fd and *err. */
static Refined refine(real *x, size_t k, double g, double *fd, double *err, double floor,
                      LossFn loss, void *ctx)
{
    double h = FD_STEP;
    Refined r = {.at = k, .first_err = *err, .first_h = h};
    for (int m = 0; m < FD_REFINE_STEPS && *err > GRADCHECK_TOLERANCE && !r.settled; m++) {
        h /= FD_REFINE;
        const double next = difference(x, k, h, loss, ctx);
        r.settled = relative_difference(*fd, next, floor) <= GRADCHECK_TOLERANCE;
        *fd = next;
        *err = relative_difference(g, *fd, floor);
    }
    r.settled |= *err <= GRADCHECK_TOLERANCE;
    r.err = *err;
    r.h = h;
    return r;
}

/* What a tensor's check found: the worst element, and the first few refined ones
 * (those that still fail first). */
typedef struct {
    double worst, worst_abs, max_grad, worst_g, worst_fd;
    size_t worst_at, n_refined, n_failed, n_passed;
    Refined failed[REFINED_SHOWN], passed[REFINED_SHOWN];
} Findings;

static void keep_refined(Findings *f, const Refined *r)
{
    if (r->err > GRADCHECK_TOLERANCE && f->n_failed < REFINED_SHOWN)
        f->failed[f->n_failed++] = *r;
    else if (r->err <= GRADCHECK_TOLERANCE && f->n_passed < REFINED_SHOWN)
        f->passed[f->n_passed++] = *r;
    f->n_refined++;
}

static void keep_worst(Findings *f, size_t k, double g, double fd, double err)
{
    f->max_grad = fmax(f->max_grad, fabs(g));
    f->worst_abs = fmax(f->worst_abs, fabs(g - fd));
    if (err > f->worst) {
        f->worst = err;
        f->worst_at = k;
        f->worst_g = g;
        f->worst_fd = fd;
    }
}

/* The tensor's line, then a line for each of the first refined elements. */
static void print_findings(const char *name, size_t count, const size_t *which, size_t n_which,
                           const Findings *f)
{
    if (which)
        printf("  %-16s %6zu of %-9zu", name, n_which, count);
    else
        printf("  %-16s %6zu", name, count);
    printf("  max|g| %.3e  max abs err %.3e  worst rel err %.3e", f->max_grad, f->worst_abs,
           f->worst);
    if (f->worst > GRADCHECK_TOLERANCE)
        printf("  FAIL at [%zu]: analytic %.12g, numeric %.12g", f->worst_at, f->worst_g,
               f->worst_fd);
    printf("\n");
    size_t n_shown = 0;
    for (size_t r = 0; r < f->n_failed + f->n_passed && n_shown < REFINED_SHOWN; r++, n_shown++) {
        const Refined *m = r < f->n_failed ? &f->failed[r] : &f->passed[r - f->n_failed];
        printf("    %s[%zu]: rel err %.3e at step %g; %.3e at step %g%s\n", name, m->at,
               m->first_err, m->first_h, m->err, m->h,
               m->err <= GRADCHECK_TOLERANCE ? ""
               : m->settled ? " (the estimates agree: the gradient is wrong)"
                            : " (the estimates did not settle)");
    }
    if (f->n_refined > n_shown)
        printf("    and %zu more element%s measured at smaller steps\n", f->n_refined - n_shown,
               plural((long)(f->n_refined - n_shown)));
}

double fdcheck_elements(const char *name, real *x, const real *grad, size_t count,
                          const size_t *which, size_t n_which, LossFn loss, void *ctx)
{
    Findings f = {0};
    relu_freeze(RELU_RECORD); /* the relu pattern at the point itself */
    const double floor = FD_FLOOR * fmax(1, fabs(loss(ctx)));
    for (size_t e = 0; e < n_which; e++) {
        const size_t k = which ? which[e] : e;
        const double g = grad[k];
        double fd = difference(x, k, FD_STEP, loss, ctx);
        double err = relative_difference(g, fd, floor);
        if (err > GRADCHECK_TOLERANCE) {
            const Refined r = refine(x, k, g, &fd, &err, floor, loss, ctx);
            keep_refined(&f, &r);
        }
        keep_worst(&f, k, g, fd, err);
    }
    print_findings(name, count, which, n_which, &f);
    relu_freeze(RELU_FREE);
    fflush(stdout);
    return f.worst;
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
