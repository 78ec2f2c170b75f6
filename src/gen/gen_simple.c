/* gen_simple.c: the copy and reverse tasks (Joey NMT's toy tasks): 1 to 25 numbers
 * from 0 to 50; the gold alignment is the diagonal, or the anti-diagonal. */
#include <stdio.h>

#include "gen/gen.h"

static void numbers(GenPair *p, Pcg32 *rng, int reverse)
{
    int n = 1 + (int)pcg32_below(rng, 25);
    for (int j = 0; j < n; j++) {
        char word[8];
        snprintf(word, sizeof word, "%u", pcg32_below(rng, 51));
        gen_src(p, word);
    }
    for (int i = 0; i < n; i++) {
        int j = reverse ? n - 1 - i : i;
        gen_tgt(p, p->src[j]);
        gen_link(p, j, i);
    }
}

void gen_copy(GenPair *p, Pcg32 *rng)
{
    numbers(p, rng, 0);
}

void gen_reverse(GenPair *p, Pcg32 *rng)
{
    numbers(p, rng, 1);
}
