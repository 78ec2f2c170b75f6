/* fdcheck_model.h: the engine of `s2s gradcheck`: a model of the given sizes in double
 * precision, at a general point (every weight and bias uniform in [-r, r], so no
 * gradient is negligibly small), checked by finite differences on one batch. Built
 * only in the double build; its interface has no floating-point types of the core.
 *
 * r is 0.5 for layers up to 64 wide and 0.5 sqrt(64 / w) for the widest, w, above: a
 * unit then sums about as much as at width 64. At 0.5 and w = 512 the recurrent layers
 * are chaotic (gradients of 1e3 on a loss of 17), and no step of the difference
 * quotient settles on the derivative. */
#ifndef S2S_FDCHECK_MODEL_H
#define S2S_FDCHECK_MODEL_H

#include <stdint.h>

#include "model/batch.h"
#include "model/model.h"

/* Checks every tensor: every element if samples is 0, else up to samples elements of
 * each (those with a non-zero gradient first, chosen by a seeded PCG32, plus two
 * whose gradient is zero). With dropout and label smoothing as reg says (NULL: none;
 * its rng is seeded here), the masks the same at every evaluation. With hard (not NULL:
 * a hard model's training settings, its rng seeded here) the first pass samples the
 * positions and sentences, then every evaluation keeps them and the rewards (R_s - b, or
 * r_i) as that pass left them: the surrogate J is then a function of the weights alone
 * (model/MODEL.md). Prints a row per tensor to stdout and returns the worst relative
 * error. */
double fdcheck_model_run(const Dims *d, const Batch *bt, uint64_t seed, long samples,
                         const Regularization *reg, const HardAttention *hard);

#endif
