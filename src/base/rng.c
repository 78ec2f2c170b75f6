/* rng.c: PCG32, written from the algorithm in O'Neill's paper (see rng.h). */
#include "base/rng.h"

#include <assert.h>

/* The 64-bit LCG multiplier of the PCG paper (Knuth's MMIX constant). */
#define PCG32_MULTIPLIER 6364136223846793005ULL

uint32_t pcg32_next(Pcg32 *rng)
{
    uint64_t old = rng->state;
    rng->state = old * PCG32_MULTIPLIER + rng->inc;
    /* XSH-RR: xorshift the high bits down, keep 32 of them, rotate by the top 5 bits. */
    uint32_t xorshifted = (uint32_t)(((old >> 18) ^ old) >> 27);
    uint32_t rot = (uint32_t)(old >> 59);
    return (xorshifted >> rot) | (xorshifted << ((32 - rot) & 31));
}

void pcg32_seed(Pcg32 *rng, uint64_t initstate, uint64_t initseq)
{
    rng->state = 0;
    rng->inc = (initseq << 1) | 1u;
    pcg32_next(rng);
    rng->state += initstate;
    pcg32_next(rng);
}

void pcg32_advance(Pcg32 *rng, uint64_t delta)
{
    /* One LCG step is x -> a x + c; delta steps are x -> A x + C. Square-and-multiply
     * over the bits of delta, all modulo 2^64: (a, c) composed with itself is
     * (a^2, (a + 1) c). */
    uint64_t a = PCG32_MULTIPLIER, c = rng->inc, acc_a = 1, acc_c = 0;
    for (; delta; delta >>= 1) {
        if (delta & 1) {
            acc_a *= a;
            acc_c = acc_c * a + c;
        }
        c *= a + 1;
        a *= a;
    }
    rng->state = acc_a * rng->state + acc_c;
}

uint32_t pcg32_below(Pcg32 *rng, uint32_t bound)
{
    assert(bound > 0);
    /* Reject the lowest (2^32 mod bound) values so every residue is equally likely. */
    uint32_t threshold = (0u - bound) % bound;
    for (;;) {
        uint32_t r = pcg32_next(rng);
        if (r >= threshold)
            return r % bound;
    }
}

float pcg32_unit(Pcg32 *rng)
{
    return (float)(pcg32_next(rng) >> 8) * (1.0f / 16777216.0f);
}

float pcg32_uniform(Pcg32 *rng, float lo, float hi)
{
    return lo + (hi - lo) * pcg32_unit(rng);
}

void pcg32_shuffle(Pcg32 *rng, int *items, size_t n)
{
    for (size_t k = n; k > 1; k--) {
        size_t pick = pcg32_below(rng, (uint32_t)k);
        int tmp = items[k - 1];
        items[k - 1] = items[pick];
        items[pick] = tmp;
    }
}
