/* fdcheck.h: finite-difference checking of analytic gradients, shared by every
 * layer test, the whole-model test and `s2s gradcheck`. Built only against the double
 * core: the checks need double precision to resolve 1e-6 relative error. */
#ifndef S2S_FDCHECK_H
#define S2S_FDCHECK_H

#ifndef S2S_REAL_DOUBLE
#error "fdcheck.h is for the double build (-DS2S_REAL_DOUBLE)"
#endif

#include <stddef.h>

#include "base/rng.h"
#include "nn/real.h"

/* The relative error every gradient must reach. */
#define GRADCHECK_TOLERANCE 1e-6

/* Returns the scalar loss at the current values of the inputs. */
typedef double (*LossFn)(void *ctx);

/* Checks only the elements listed in which[0..n_which), or all if which is NULL. */
double fdcheck_elements(const char *name, real *x, const real *grad, size_t count,
                          const size_t *which, size_t n_which, LossFn loss, void *ctx);

/* Compares grad (count) with the sixth-order central difference
 *   (L(x+3h) - 9 L(x+2h) + 45 L(x+h) - 45 L(x-h) + 9 L(x-2h) - L(x-3h)) / 60h,  h = 1e-2,
 * of loss() with respect to every element of x, restoring x; every loss is taken with
 * the relu pattern of the point frozen (ops.h: relu_freeze), so no step measures a kink.
 * An element whose estimate disagrees with its gradient is estimated again at steps 5,
 * 25, 125 times smaller, until one agrees with it or two agree with each other (the
 * gradient is then wrong). Returns the worst relative error
 * |g - fd| / max(|g|, |fd|, 1e-7 max(1, |L(x)|)) of the last estimates and prints one
 * table row with the tensor name, its size, the largest gradient and the worst errors,
 * then a line for each of the first elements that needed smaller steps. */
double fdcheck_tensor(const char *name, real *x, const real *grad, size_t count,
                        LossFn loss, void *ctx);

/* Fills x (count) with uniform values in [lo, hi) from rng. */
void fill_uniform(real *x, size_t count, Pcg32 *rng, double lo, double hi);

/* sum_k out[k] * weights[k] in double: the scalar loss of a layer test, whose
 * gradient with respect to out is weights. */
double weighted_sum(const real *out, const real *weights, size_t count);

#endif
