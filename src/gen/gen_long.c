/* gen_long.c: toy-fr-long, toy-fr sentences (gen_fr.c) joined into long ones, for the
 * experiment that motivated attention (BLEU by sentence length, Bahdanau et al. 2014,
 * Fig. 2): each pair first draws a length from 5 to 50 source tokens, then strings
 * toy-fr clauses together with "and" -> "et" (linked) while they fit, so that lengths
 * from short to long are all common (4 to 50 tokens: a first clause of 4 may stand
 * alone). Each clause keeps its gold links; only the last keeps its full stop. */
#include <string.h>

#include "gen/gen.h"

enum { SHORTEST = 5, LONGEST = 50, TRIES = 8 };

/* Appends clause c to p, its tokens and links shifted past what p holds; without its
 * final "." unless last. */
static void append_clause(GenPair *p, const GenPair *c, int last)
{
    const int n_src = c->n_src - (last ? 0 : 1), n_tgt = c->n_tgt - (last ? 0 : 1);
    const int src0 = p->n_src, tgt0 = p->n_tgt;
    for (int j = 0; j < n_src; j++)
        gen_src(p, c->src[j]);
    for (int i = 0; i < n_tgt; i++)
        gen_tgt(p, c->tgt[i]);
    for (int k = 0; k < c->n_links; k++)
        if (c->link_src[k] < n_src && c->link_tgt[k] < n_tgt)
            gen_link(p, src0 + c->link_src[k], tgt0 + c->link_tgt[k]);
}

void gen_toy_fr_long(GenPair *p, Pcg32 *rng)
{
    const int want = SHORTEST + (int)pcg32_below(rng, LONGEST - SHORTEST + 1);
    GenPair clauses[LONGEST / 4 + 1];
    int n = 0, length = 0;
    /* clauses of toy-fr are 4 to 29 tokens: draw until one fits, a few times each */
    for (int tries = 0; tries < TRIES && n < (int)(sizeof clauses / sizeof *clauses); tries++) {
        GenPair *c = &clauses[n];
        memset(c, 0, sizeof *c);
        gen_toy_fr(c, rng);
        /* joined, the "." of the clause before becomes "and": each adds its own length */
        if (length + c->n_src > want && n > 0)
            continue;
        length += c->n_src;
        n++;
        tries = 0;
        if (length >= want - 3) /* no clause is shorter than 4 */
            break;
    }
    for (int k = 0; k < n; k++) {
        if (k > 0)
            gen_link(p, gen_src(p, "and"), gen_tgt(p, "et"));
        append_clause(p, &clauses[k], k == n - 1);
    }
}
