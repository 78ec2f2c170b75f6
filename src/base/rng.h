/* rng.h: PCG32 (O'Neill 2014, "PCG: A Family of Simple Fast Space-Efficient
 * Statistically Good Algorithms for Random Number Generation"): a 64-bit LCG whose
 * state is output through a xorshift and a random rotation (XSH-RR). Every random
 * number of s2s comes from here, one stream per purpose, so adding a new use (say,
 * dropout) never changes the numbers another use draws. */
#ifndef S2S_RNG_H
#define S2S_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t state;
    uint64_t inc; /* stream selector; always odd */
} Pcg32;

/* Stream numbers (PCG's initseq) for each purpose, all seeded with the run's seed. */
enum { RNG_STREAM_INIT = 1, RNG_STREAM_SHUFFLE = 2, RNG_STREAM_DROPOUT = 3, RNG_STREAM_DATA = 4,
       RNG_STREAM_HARD = 5, RNG_STREAM_SUBWORDS = 6 };

/* Seeds as the reference pcg32_srandom_r does: state 0, inc = 2 * initseq + 1, one
 * step, add initstate, one step. */
void pcg32_seed(Pcg32 *rng, uint64_t initstate, uint64_t initseq);
/* Next 32 uniform bits. */
uint32_t pcg32_next(Pcg32 *rng);
/* Uniform integer in [0, bound), without modulo bias; bound > 0. */
uint32_t pcg32_below(Pcg32 *rng, uint32_t bound);
/* Uniform float in [0, 1) with 24 random bits (every value exactly representable). */
float pcg32_unit(Pcg32 *rng);
/* Uniform float in [lo, hi). */
float pcg32_uniform(Pcg32 *rng, float lo, float hi);
/* Jumps the generator delta draws ahead in O(log delta) steps (Brown 1994, "Random
 * Number Generation with Arbitrary Strides", the method of PCG's pcg32_advance): the
 * same state as delta calls of pcg32_next. */
void pcg32_advance(Pcg32 *rng, uint64_t delta);
/* Fisher-Yates shuffle of n ints. */
void pcg32_shuffle(Pcg32 *rng, int *items, size_t n);

#endif
