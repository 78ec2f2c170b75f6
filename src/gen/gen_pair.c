/* gen_pair.c: a generated sentence pair built token by token, with its links (see
 * gen.h): what every generator calls. */
#include <stdio.h>
#include <stdlib.h>

#include "gen/gen.h"

static int add_token(char (*tokens)[GEN_TOKEN_BYTES], int *n, const char *token)
{
    if (*n >= GEN_MAX_TOKENS)
        abort(); /* a generator bug: sentences are bounded far below this */
    snprintf(tokens[*n], GEN_TOKEN_BYTES, "%s", token);
    return (*n)++;
}

int gen_src(GenPair *p, const char *token)
{
    return add_token(p->src, &p->n_src, token);
}

int gen_tgt(GenPair *p, const char *token)
{
    return add_token(p->tgt, &p->n_tgt, token);
}

void gen_link(GenPair *p, int j, int i)
{
    if (p->n_links >= GEN_MAX_LINKS)
        abort();
    p->link_src[p->n_links] = j;
    p->link_tgt[p->n_links] = i;
    p->n_links++;
}
