/* test_gen.c: the synthetic corpora of `s2s corpus`: determinism, line counts, tokens
 * the tokenizer leaves alone, and gold links that join a word with its translation
 * (checked against hand-written expectations for the words of each phenomenon). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "gen/gen.h"
#include "support/cli.h"
#include "support/suites.h"
#include "text/tokenize.h"

static int count_lines(const char *path)
{
    char *s = read_file(path);
    int n = 0;
    for (char *p = s; *p; p++)
        n += *p == '\n';
    free(s);
    return n;
}

START_TEST(generated_corpora_are_deterministic_and_line_aligned)
{
    char dir[512], a[600], b[600], c[600];
    scratch_dir(dir, sizeof dir, "gen");
    int n;
    const GenTask *tasks = gen_tasks(&n);
    for (int t = 0; t < n; t++) {
        Error err;
        snprintf(a, sizeof a, "%s/%s-a", dir, tasks[t].name);
        snprintf(b, sizeof b, "%s/%s-b", dir, tasks[t].name);
        snprintf(c, sizeof c, "%s/%s-c", dir, tasks[t].name);
        ck_assert_int_eq(gen_write(&tasks[t], a, 500, 7, &err), 0);
        ck_assert_int_eq(gen_write(&tasks[t], b, 500, 7, &err), 0);
        ck_assert_int_eq(gen_write(&tasks[t], c, 500, 8, &err), 0);
        const char *files[] = {"train.src", "train.tgt", "train.align", "valid.src", "valid.tgt",
                               "valid.align", "test.src", "test.tgt", "test.align"};
        for (int f = 0; f < 9; f++) {
            char pa[700], pb[700], pc[700];
            snprintf(pa, sizeof pa, "%s/%s", a, files[f]);
            snprintf(pb, sizeof pb, "%s/%s", b, files[f]);
            snprintf(pc, sizeof pc, "%s/%s", c, files[f]);
            char *xa = read_file(pa), *xb = read_file(pb), *xc = read_file(pc);
            ck_assert_msg(!strcmp(xa, xb), "%s: same seed, different %s", tasks[t].name, files[f]);
            ck_assert_msg(strcmp(xa, xc), "%s: another seed, same %s", tasks[t].name, files[f]);
            ck_assert_int_eq(count_lines(pa), f < 3 ? 500 : 1000);
            free(xa);
            free(xb);
            free(xc);
        }
    }
}
END_TEST

/* Every translation relation seen in n pairs of a task: for each link, "en>fr". */
typedef struct {
    char (*rel)[64];
    int n, cap;
    int unlinked_src[GEN_MAX_TOKENS], unlinked_tgt[GEN_MAX_TOKENS];
} Links;

static void draw_many(const GenTask *task, int n, Links *out, char unlinked_src[][32],
                      int *n_us, char unlinked_tgt[][32], int *n_ut)
{
    Pcg32 rng;
    pcg32_seed(&rng, 3, RNG_STREAM_DATA);
    GenPair *p = malloc(sizeof *p);
    Tokens tokens = {0};
    *n_us = *n_ut = 0;
    for (int k = 0; k < n; k++) {
        memset(p, 0, sizeof *p);
        task->draw(p, &rng);
        /* the tokens are exactly what the word tokenizer makes of the line */
        char line[GEN_MAX_TOKENS * GEN_TOKEN_BYTES] = "";
        for (int j = 0; j < p->n_src; j++) {
            strcat(line, j ? " " : "");
            strcat(line, p->src[j]);
        }
        ck_assert_int_eq(tokenize_line(&tokens, line, strlen(line), LEVEL_WORD, 0, 0), p->n_src);
        for (int j = 0; j < p->n_src; j++)
            ck_assert_str_eq(tokens_get(&tokens, j), p->src[j]);
        int src_linked[GEN_MAX_TOKENS] = {0}, tgt_linked[GEN_MAX_TOKENS] = {0};
        for (int l = 0; l < p->n_links; l++) {
            int j = p->link_src[l], i = p->link_tgt[l];
            ck_assert(j >= 0 && j < p->n_src && i >= 0 && i < p->n_tgt);
            src_linked[j] = tgt_linked[i] = 1;
            if (out->n == out->cap) {
                out->cap = out->cap * 2 + 1024;
                out->rel = realloc(out->rel, sizeof *out->rel * (size_t)out->cap);
            }
            snprintf(out->rel[out->n++], 64, "%s>%s", p->src[j], p->tgt[i]);
        }
        for (int j = 0; j < p->n_src; j++)
            if (!src_linked[j] && *n_us < 64)
                snprintf(unlinked_src[(*n_us)++], 32, "%s", p->src[j]);
        for (int i = 0; i < p->n_tgt; i++)
            if (!tgt_linked[i] && *n_ut < 64)
                snprintf(unlinked_tgt[(*n_ut)++], 32, "%s", p->tgt[i]);
    }
    tokens_free(&tokens);
    free(p);
}

static int has(const Links *l, const char *rel)
{
    for (int k = 0; k < l->n; k++)
        if (!strcmp(l->rel[k], rel))
            return 1;
    return 0;
}

/* No link of the English word `en` goes anywhere but to the listed French words. */
static void only(const Links *l, const char *en, const char *const *fr)
{
    size_t n = strlen(en);
    int seen = 0;
    for (int k = 0; k < l->n; k++) {
        if (strncmp(l->rel[k], en, n) || l->rel[k][n] != '>')
            continue;
        seen++;
        int ok = 0;
        for (const char *const *f = fr; *f; f++)
            ok |= !strcmp(l->rel[k] + n + 1, *f);
        ck_assert_msg(ok, "unexpected link %s", l->rel[k]);
    }
    ck_assert_msg(seen > 0, "no link of `%s`", en);
}

static int in_list(const char *w, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(w, *list))
            return 1;
    return 0;
}

START_TEST(toy_fr_links_join_words_and_their_translations)
{
    Links l = {0};
    char us[64][32], ut[64][32];
    int n_us, n_ut;
    draw_many(gen_find("toy-fr"), 3000, &l, us, &n_us, ut, &n_ut);
    only(&l, "not", (const char *[]){"ne", "pas", NULL});
    only(&l, "the", (const char *[]){"le", "la", "les", "du", "des", NULL});
    only(&l, "a", (const char *[]){"un", "une", NULL});
    only(&l, "an", (const char *[]){"un", "une", NULL});
    only(&l, "that", (const char *[]){"qui", "que", NULL});
    only(&l, "near", (const char *[]){"près", "de", "du", "des", NULL});
    only(&l, "front", (const char *[]){"devant", NULL});
    only(&l, "him", (const char *[]){"le", NULL});
    only(&l, "her", (const char *[]){"la", NULL});
    only(&l, "cat", (const char *[]){"chat", NULL});
    only(&l, "boxes", (const char *[]){"boîtes", NULL});
    only(&l, "heavy", (const char *[]){"lourd", "lourde", "lourds", "lourdes", NULL});
    only(&l, "watches", (const char *[]){"regarde", "regardent", NULL});
    only(&l, "look", (const char *[]){"regarde", "cherche", "cherches", "cherchons", "cherchent", NULL});
    only(&l, "for", (const char *[]){"cherche", "cherches", "cherchons", "cherchent", NULL});
    only(&l, ".", (const char *[]){".", NULL});
    ck_assert(has(&l, "near>du") && has(&l, "the>du")); /* de + le: many-to-one */
    /* only do/does go unaligned; every French word is aligned */
    for (int k = 0; k < n_us; k++)
        ck_assert_msg(in_list(us[k], (const char *[]){"do", "does", NULL}), "unaligned `%s`", us[k]);
    ck_assert_int_eq(n_ut, 0);
    free(l.rel);
}
END_TEST

START_TEST(toy_de_links_join_words_and_their_translations)
{
    Links l = {0};
    char us[64][32], ut[64][32];
    int n_us, n_ut;
    draw_many(gen_find("toy-de"), 3000, &l, us, &n_us, ut, &n_ut);
    only(&l, "picks", (const char *[]){"hebt", "aufhebt", NULL});
    only(&l, "up", (const char *[]){"auf", "an", "aufhebe", "aufhebt", "aufheben", "anrufe",
                                    "anruft", "anrufen", NULL});
    only(&l, "closes", (const char *[]){"macht", "zu", "zumacht", NULL});
    only(&l, "the", (const char *[]){"der", "die", "das", "den", NULL});
    only(&l, "that", (const char *[]){"dass", NULL});
    only(&l, "because", (const char *[]){"weil", NULL});
    only(&l, "today", (const char *[]){"heute", NULL});
    only(&l, "man", (const char *[]){"Mann", NULL});
    ck_assert(has(&l, "house>Haustür") && has(&l, "door>Haustür")); /* compounds: two to one */
    ck_assert_int_eq(n_us, 0);
    for (int k = 0; k < n_ut; k++)
        ck_assert_msg(!strcmp(ut[k], ","), "unaligned `%s`", ut[k]);
    free(l.rel);
}
END_TEST

START_TEST(dates_link_each_part_to_its_value)
{
    Pcg32 rng;
    pcg32_seed(&rng, 4, RNG_STREAM_DATA);
    GenPair p;
    static const char *const MONTH[12] = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
                                          "sep", "oct", "nov", "dec"};
    for (int k = 0; k < 3000; k++) {
        memset(&p, 0, sizeof p);
        gen_dates(&p, &rng);
        ck_assert_int_eq(p.n_tgt, 5);
        int y = atoi(p.tgt[0]), m = atoi(p.tgt[2]), d = atoi(p.tgt[4]);
        ck_assert(y >= 1950 && y < 2050 && m >= 1 && m <= 12 && d >= 1 && d <= 31);
        for (int l = 0; l < p.n_links; l++) {
            const char *w = p.src[p.link_src[l]];
            char want[16];
            if (p.link_tgt[l] == 0) {
                snprintf(want, sizeof want, "%d", strlen(w) == 2 ? y % 100 : y);
                ck_assert_int_eq(atoi(w), atoi(want));
            } else if (p.link_tgt[l] == 2) {
                if (w[0] >= '0' && w[0] <= '9') { /* 6 or 06 */
                    ck_assert_int_eq(atoi(w), m);
                    continue;
                }
                char lower[4] = {(char)(w[0] | 0x20), w[1], w[2], 0};
                ck_assert_str_eq(lower, MONTH[m - 1]);
            } else {
                ck_assert_int_eq(p.link_tgt[l], 4);
                ck_assert_int_eq(atoi(w), d);
            }
        }
    }
}
END_TEST

START_TEST(copy_and_reverse_links_are_the_diagonals)
{
    Pcg32 rng;
    pcg32_seed(&rng, 5, RNG_STREAM_DATA);
    GenPair p;
    for (int k = 0; k < 500; k++) {
        for (int reverse = 0; reverse < 2; reverse++) {
            memset(&p, 0, sizeof p);
            (reverse ? gen_reverse : gen_copy)(&p, &rng);
            ck_assert_int_eq(p.n_links, p.n_src);
            for (int l = 0; l < p.n_links; l++) {
                int j = p.link_src[l], i = p.link_tgt[l];
                ck_assert_int_eq(j, reverse ? p.n_src - 1 - i : i);
                ck_assert_str_eq(p.src[j], p.tgt[i]);
            }
        }
    }
}
END_TEST

/* toy-fr-long: lengths spread over 4 to 50 words (each group of ten holds at least 5%
 * of the pairs), clauses joined by and -> et (linked), one full stop, at the end. */
START_TEST(toy_fr_long_spreads_lengths_to_50_and_links_the_joins)
{
    enum { PAIRS = 2000 };
    Pcg32 rng;
    pcg32_seed(&rng, 5, RNG_STREAM_DATA);
    int groups[5] = {0}, longest = 0, joins = 0;
    static GenPair p;
    for (int k = 0; k < PAIRS; k++) {
        memset(&p, 0, sizeof p);
        gen_toy_fr_long(&p, &rng);
        ck_assert_int_ge(p.n_src, 4);
        ck_assert_int_le(p.n_src, 50);
        groups[(p.n_src - 1) / 10]++;
        longest = p.n_src > longest ? p.n_src : longest;
        ck_assert_str_eq(p.src[p.n_src - 1], ".");
        ck_assert_str_eq(p.tgt[p.n_tgt - 1], ".");
        int n_and = 0, n_et = 0;
        for (int j = 0; j < p.n_src - 1; j++)
            ck_assert_str_ne(p.src[j], ".");
        for (int i = 0; i < p.n_tgt; i++)
            n_et += !strcmp(p.tgt[i], "et");
        for (int j = 0; j < p.n_src; j++) {
            if (strcmp(p.src[j], "and"))
                continue;
            n_and++;
            int linked = 0;
            for (int l = 0; l < p.n_links; l++)
                if (p.link_src[l] == j) {
                    ck_assert_str_eq(p.tgt[p.link_tgt[l]], "et");
                    linked++;
                }
            ck_assert_int_eq(linked, 1);
        }
        ck_assert_int_eq(n_and, n_et);
        joins += n_and;
        for (int l = 0; l < p.n_links; l++) {
            ck_assert(p.link_src[l] >= 0 && p.link_src[l] < p.n_src);
            ck_assert(p.link_tgt[l] >= 0 && p.link_tgt[l] < p.n_tgt);
        }
    }
    printf("toy-fr-long: %d, %d, %d, %d, %d pairs of 1-10 ... 41-50 words; %d joins\n", groups[0],
           groups[1], groups[2], groups[3], groups[4], joins);
    for (int g = 0; g < 5; g++)
        ck_assert_int_ge(groups[g], PAIRS / 20);
    ck_assert_int_eq(longest, 50);
}
END_TEST

Suite *gen_suite(void)
{
    Suite *s = suite_create("gen");
    TCase *tc = tcase_create("corpora");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, generated_corpora_are_deterministic_and_line_aligned);
    tcase_add_test(tc, toy_fr_links_join_words_and_their_translations);
    tcase_add_test(tc, toy_de_links_join_words_and_their_translations);
    tcase_add_test(tc, dates_link_each_part_to_its_value);
    tcase_add_test(tc, copy_and_reverse_links_are_the_diagonals);
    tcase_add_test(tc, toy_fr_long_spreads_lengths_to_50_and_links_the_joins);
    suite_add_tcase(s, tc);
    return s;
}
