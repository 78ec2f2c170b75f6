/* metrics.c: BLEU as sacreBLEU computes it (13a tokenizer, clipped n-gram precisions,
 * exp smoothing, brevity penalty) and exact match (see metrics.h). */
#include "report/metrics.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicase.h>
#include <unistr.h>

#include "base/mem.h"
#include "data/vocab.h"
#include "text/tokenize.h"

/* ---- 13a tokenization ------------------------------------------------------------ */

typedef struct {
    char *s;
    size_t len, cap;
} Buf;

static void buf_put(Buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = xrealloc_array(b->s, b->cap, 1);
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void buf_putc(Buf *b, char c)
{
    buf_put(b, &c, 1);
}

/* Replaces every occurrence of from in *text by to (left to right, no rescanning). */
static void replace_all(Buf *text, const char *from, const char *to)
{
    if (!strstr(text->s, from))
        return;
    Buf out = {0};
    size_t n_from = strlen(from), n_to = strlen(to);
    const char *p = text->s;
    for (const char *hit; (hit = strstr(p, from)); p = hit + n_from) {
        buf_put(&out, p, (size_t)(hit - p));
        buf_put(&out, to, n_to);
    }
    buf_put(&out, p, strlen(p));
    free(text->s);
    *text = out;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* mteval-v13a's first rule: these ASCII symbols are always tokens of their own:
 * { | } ~  [ \ ] ^ _ `  space ! " # $ % &  ( ) * +  : ; < = > ? @  / */
static int is_13a_symbol(unsigned char c)
{
    return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
           (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == 0x2F;
}

/* One rewriting pass in the manner of a regular expression substitution: matches
 * are found left to right and do not overlap. */
static void pass(Buf *text, int rule)
{
    Buf out = {0};
    const char *s = text->s;
    size_t n = text->len;
    for (size_t i = 0; i < n;) {
        char c = s[i], next = i + 1 < n ? s[i + 1] : '\0';
        int has_next = i + 1 < n;
        if (rule == 1 && is_13a_symbol((unsigned char)c)) {
            buf_putc(&out, ' ');
            buf_putc(&out, c);
            buf_putc(&out, ' ');
            i++;
        } else if (rule == 2 && has_next && !is_digit(c) && (next == '.' || next == ',')) {
            /* ([^0-9])([\.,]) -> \1 \2 */
            buf_putc(&out, c);
            buf_putc(&out, ' ');
            buf_putc(&out, next);
            buf_putc(&out, ' ');
            i += 2;
        } else if (rule == 3 && has_next && (c == '.' || c == ',') && !is_digit(next)) {
            /* ([\.,])([^0-9]) -> ' \1 \2' */
            buf_putc(&out, ' ');
            buf_putc(&out, c);
            buf_putc(&out, ' ');
            buf_putc(&out, next);
            i += 2;
        } else if (rule == 4 && has_next && is_digit(c) && next == '-') {
            /* ([0-9])(-) -> \1 \2 */
            buf_putc(&out, c);
            buf_putc(&out, ' ');
            buf_putc(&out, '-');
            buf_putc(&out, ' ');
            i += 2;
        } else {
            buf_putc(&out, c);
            i++;
        }
    }
    if (!out.s)
        buf_put(&out, "", 0);
    free(text->s);
    *text = out;
}

char *tokenize_13a(const char *line)
{
    Buf text = {0};
    buf_put(&text, " ", 1);
    buf_put(&text, line, strlen(line));
    buf_put(&text, " ", 1);
    replace_all(&text, "<skipped>", "");
    replace_all(&text, "-\n", "");
    replace_all(&text, "\n", " ");
    if (strchr(text.s, '&')) {
        replace_all(&text, "&quot;", "\"");
        replace_all(&text, "&amp;", "&");
        replace_all(&text, "&lt;", "<");
        replace_all(&text, "&gt;", ">");
    }
    for (int rule = 1; rule <= 4; rule++)
        pass(&text, rule);
    /* Split on whitespace as Python's str.split() does (Unicode's included), join with
     * single spaces. */
    Buf out = {0};
    buf_put(&out, "", 0);
    const uint8_t *s = (const uint8_t *)text.s;
    size_t n = text.len, word = 0;
    int in_word = 0;
    for (size_t i = 0; i <= n;) {
        ucs4_t c = 0;
        int len = 1;
        if (i < n) {
            len = u8_mbtouc(&c, s + i, n - i);
        }
        int space = i == n || char_is_space(c);
        if (space && in_word) {
            if (out.len)
                buf_putc(&out, ' ');
            buf_put(&out, text.s + word, i - word);
            in_word = 0;
        } else if (!space && !in_word) {
            word = i;
            in_word = 1;
        }
        i += (size_t)(len > 0 ? len : 1);
    }
    free(text.s);
    return out.s;
}

/* ---- what BLEU and chrF share --------------------------------------------------------- */

/* The clipped matches of a hypothesis's n-grams with its reference's: each hypothesis
 * n-gram counts at most as often as it occurs in the reference. Both lists (n_hyp and
 * n_ref items of `size` bytes) are sorted by cmp, so this is a merge. */
static size_t clipped_matches(const void *hyp, size_t n_hyp, const void *ref, size_t n_ref,
                              size_t size, int (*cmp)(const void *, const void *))
{
    const char *h = hyp, *r = ref;
    size_t matches = 0;
    for (size_t i = 0, j = 0; i < n_hyp && j < n_ref;) {
        int c = cmp(h + i * size, r + j * size);
        if (c == 0) {
            matches++;
            i++;
            j++;
        } else if (c < 0) {
            i++;
        } else {
            j++;
        }
    }
    return matches;
}

/* ---- BLEU ---------------------------------------------------------------------------- */

typedef struct {
    int t[4];
} Gram;


static int gram_cmp4(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(Gram));
}

/* line's tokens separated by single spaces: cut at each run of whitespace (Python's
 * str.isspace, as str.split() cuts), the ends trimmed. Returns a malloc'd string. */
static char *tokenize_none(const char *line)
{
    const size_t n = strlen(line);
    char *out = xmalloc(n + 1);
    size_t k = 0, o = 0;
    int gap = 0;
    while (k < n) {
        ucs4_t c;
        int len = u8_mbtouc(&c, (const uint8_t *)line + k, n - k);
        len = len > 0 ? len : 1;
        if (char_is_space(c)) {
            gap = o > 0;
        } else {
            if (gap)
                out[o++] = ' ';
            gap = 0;
            memcpy(out + o, line + k, (size_t)len);
            o += (size_t)len;
        }
        k += (size_t)len;
    }
    out[o] = '\0';
    return out;
}

/* The token ids of a tokenized, optionally lowercased line. */
static int segment_ids(Vocab *v, const char *line, int lowercase, BleuTokenize tokenize,
                       int **ids, int *cap)
{
    char *tok = tokenize == BLEU_TOKENIZE_NONE ? tokenize_none(line) : tokenize_13a(line);
    if (lowercase) {
        size_t len = 0;
        uint8_t *lower = u8_tolower((const uint8_t *)tok, strlen(tok) + 1, NULL, NULL, NULL, &len);
        if (lower) {
            free(tok);
            tok = (char *)lower;
        }
    }
    int n = 0;
    for (char *save = NULL, *w = strtok_r(tok, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (n == *cap) {
            *cap = *cap * 2 + 32;
            *ids = xrealloc_array(*ids, (size_t)*cap, sizeof(int));
        }
        (*ids)[n++] = vocab_count(v, w);
    }
    free(tok);
    return n;
}

/* The sorted n-grams of ids[0..len), padded with -1 beyond n. */
static int make_grams(Gram *g, const int *ids, int len, int n)
{
    int count = len - n + 1 > 0 ? len - n + 1 : 0;
    for (int k = 0; k < count; k++)
        for (int u = 0; u < 4; u++)
            g[k].t[u] = u < n ? ids[k + u] : -1;
    qsort(g, (size_t)count, sizeof(Gram), gram_cmp4);
    return count;
}

void bleu_corpus(Bleu *b, const char *const *hyps, const char *const *refs, int n, int lowercase)
{
    bleu_corpus_tokenized(b, hyps, refs, n, lowercase, BLEU_TOKENIZE_13A);
}

void bleu_corpus_tokenized(Bleu *b, const char *const *hyps, const char *const *refs, int n,
                           int lowercase, BleuTokenize tokenize)
{
    memset(b, 0, sizeof *b);
    Vocab v;
    vocab_init(&v);
    int *hyp = NULL, *ref = NULL, hyp_cap = 0, ref_cap = 0;
    Gram *gh = NULL, *gr = NULL;
    size_t gram_cap = 0;
    for (int s = 0; s < n; s++) {
        int nh = segment_ids(&v, hyps[s], lowercase, tokenize, &hyp, &hyp_cap);
        int nr = segment_ids(&v, refs[s], lowercase, tokenize, &ref, &ref_cap);
        b->hyp_len += nh;
        b->ref_len += nr;
        size_t need = (size_t)(nh > nr ? nh : nr) + 1;
        if (need > gram_cap) {
            gram_cap = need * 2;
            gh = xrealloc_array(gh, gram_cap, sizeof(Gram));
            gr = xrealloc_array(gr, gram_cap, sizeof(Gram));
        }
        for (int order = 1; order <= 4; order++) {
            int ch = make_grams(gh, hyp, nh, order);
            int cr = make_grams(gr, ref, nr, order);
            b->total[order - 1] += ch;
            b->correct[order - 1] += (long)clipped_matches(gh, (size_t)ch, gr, (size_t)cr,
                                                           sizeof(Gram), gram_cmp4);
        }
    }
    free(hyp);
    free(ref);
    free(gh);
    free(gr);
    vocab_free(&v);

    /* sacreBLEU's exp smoothing: the k-th order without a match gets 1 / (2^k total). */
    double smooth = 1, log_sum = 0;
    int broken = 0;
    for (int order = 0; order < 4; order++) {
        if (b->total[order] == 0)
            broken = 1; /* no n-grams of this order at all: BLEU is 0 */
        if (broken) {
            b->precision[order] = 0;
            continue;
        }
        if (b->correct[order] == 0) {
            smooth *= 2;
            b->precision[order] = 100.0 / (smooth * (double)b->total[order]);
        } else {
            b->precision[order] = 100.0 * (double)b->correct[order] / (double)b->total[order];
        }
        log_sum += log(b->precision[order]);
    }
    if (b->hyp_len < b->ref_len)
        b->bp = b->hyp_len > 0 ? exp(1.0 - (double)b->ref_len / (double)b->hyp_len) : 0.0;
    else
        b->bp = 1.0;
    b->score = broken || b->bp == 0 ? 0.0 : b->bp * exp(log_sum / 4);
}

void bleu_format(const Bleu *b, char *out, size_t cap)
{
    double ratio = b->ref_len > 0 ? (double)b->hyp_len / (double)b->ref_len : 0.0;
    snprintf(out, cap, "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %ld "
             "ref_len = %ld)", b->score, b->precision[0], b->precision[1], b->precision[2],
             b->precision[3], b->bp, ratio, b->hyp_len, b->ref_len);
}

/* ---- chrF ------------------------------------------------------------------------------- */

enum { CHRF_ORDER = 6 };

typedef struct {
    uint32_t c[CHRF_ORDER];
} CharGram;

static int chargram_cmp(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(CharGram));
}

/* The code points of line without whitespace (lowercased if asked). */
static size_t chars_of(const char *line, int lowercase, uint32_t **out)
{
    const uint8_t *s = (const uint8_t *)line;
    size_t n = strlen(line), len = 0;
    uint8_t *lower = NULL;
    if (lowercase) {
        size_t lower_len = 0;
        lower = u8_tolower(s, n, NULL, NULL, NULL, &lower_len);
        if (lower) {
            s = lower;
            n = lower_len;
        }
    }
    *out = xmalloc_array(n + 1, sizeof(uint32_t));
    for (size_t i = 0; i < n;) {
        ucs4_t c;
        int k = u8_mbtouc(&c, s + i, n - i);
        i += (size_t)(k > 0 ? k : 1);
        if (!char_is_space(c))
            (*out)[len++] = c;
    }
    free(lower);
    return len;
}

static size_t make_chargrams(CharGram *g, const uint32_t *c, size_t len, int order)
{
    size_t count = len >= (size_t)order ? len - (size_t)order + 1 : 0;
    for (size_t k = 0; k < count; k++) {
        memset(&g[k], 0, sizeof g[k]);
        memcpy(g[k].c, c + k, sizeof(uint32_t) * (size_t)order);
    }
    qsort(g, count, sizeof(CharGram), chargram_cmp);
    return count;
}

double chrf_corpus(const char *const *hyps, const char *const *refs, int n, int lowercase)
{
    double hyp_total[CHRF_ORDER] = {0}, ref_total[CHRF_ORDER] = {0}, match[CHRF_ORDER] = {0};
    for (int s = 0; s < n; s++) {
        uint32_t *h, *r;
        size_t nh = chars_of(hyps[s], lowercase, &h), nr = chars_of(refs[s], lowercase, &r);
        CharGram *gh = xmalloc_array(nh + 1, sizeof(CharGram)), *gr = xmalloc_array(nr + 1, sizeof(CharGram));
        for (int order = 1; order <= CHRF_ORDER; order++) {
            size_t ch = make_chargrams(gh, h, nh, order), cr = make_chargrams(gr, r, nr, order);
            hyp_total[order - 1] += (double)ch;
            ref_total[order - 1] += (double)cr;
            match[order - 1] += (double)clipped_matches(gh, ch, gr, cr, sizeof(CharGram),
                                                        chargram_cmp);
        }
        free(h);
        free(r);
        free(gh);
        free(gr);
    }
    /* precision and recall averaged over the orders seen on both sides, then F-beta */
    const double beta2 = 4; /* beta = 2: recall weighs twice as much */
    double precision = 0, recall = 0;
    int effective = 0;
    for (int k = 0; k < CHRF_ORDER; k++) {
        precision += hyp_total[k] > 0 ? match[k] / hyp_total[k] : 1e-16;
        recall += ref_total[k] > 0 ? match[k] / ref_total[k] : 1e-16;
        effective += hyp_total[k] > 0 && ref_total[k] > 0;
    }
    if (!effective)
        return 0;
    precision /= effective;
    recall /= effective;
    if (precision + recall == 0)
        return 0;
    return 100 * (1 + beta2) * precision * recall / (beta2 * precision + recall);
}

/* Whether a and b are the same text, or with lowercase the same once lowercased. */
static int same_text(const char *a, const char *b, int lowercase)
{
    if (!lowercase)
        return !strcmp(a, b);
    size_t la = 0, lb = 0;
    uint8_t *x = u8_tolower((const uint8_t *)a, strlen(a), NULL, NULL, NULL, &la);
    uint8_t *y = u8_tolower((const uint8_t *)b, strlen(b), NULL, NULL, NULL, &lb);
    int same = x && y ? la == lb && !memcmp(x, y, la) : !strcmp(a, b);
    free(x);
    free(y);
    return same;
}

double exact_match(const char *const *hyps, const char *const *refs, int n, int lowercase)
{
    if (n == 0)
        return 0;
    int same = 0;
    for (int s = 0; s < n; s++)
        same += same_text(hyps[s], refs[s], lowercase);
    return 100.0 * same / n;
}

/* ---- alignment error rate ------------------------------------------------------------- */

int pharaoh_parse(const char *line, Link *links, int cap, int *bad_at)
{
    int n = 0;
    const char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            return n;
        char *end;
        long j = strtol(p, &end, 10);
        if (end == p || j < 0 || (*end != '-' && *end != '?') || end[1] < '0' || end[1] > '9') {
            *bad_at = (int)(p - line);
            return -1;
        }
        int possible = *end == '?';
        const char *q = end + 1;
        long i = strtol(q, &end, 10);
        if (end == q || i < 0 || (*end && *end != ' ' && *end != '\t') || j > 1000000 || i > 1000000) {
            *bad_at = (int)(q - line);
            return -1;
        }
        if (n == cap) {
            *bad_at = (int)(p - line);
            return -1;
        }
        links[n++] = (Link){(int)j, (int)i, possible};
        p = end;
    }
}

void aer_add(AerCounts *c, const Link *hyp, int n_hyp, const Link *gold, int n_gold)
{
    for (int g = 0; g < n_gold; g++)
        c->sure += !gold[g].possible;
    for (int h = 0; h < n_hyp; h++) {
        /* a repeated hypothesis link counts once */
        int repeated = 0;
        for (int k = 0; k < h && !repeated; k++)
            repeated = hyp[k].j == hyp[h].j && hyp[k].i == hyp[h].i;
        if (repeated)
            continue;
        c->hyp++;
        for (int g = 0; g < n_gold; g++) {
            if (gold[g].j != hyp[h].j || gold[g].i != hyp[h].i)
                continue;
            c->hyp_possible++; /* P includes S */
            c->hyp_sure += !gold[g].possible;
            break;
        }
    }
}

double aer_rate(const AerCounts *c)
{
    long denom = c->hyp + c->sure;
    return denom ? 1.0 - (double)(c->hyp_sure + c->hyp_possible) / (double)denom : 0.0;
}

double aer_precision(const AerCounts *c)
{
    return c->hyp ? (double)c->hyp_possible / (double)c->hyp : 0.0;
}

double aer_recall(const AerCounts *c)
{
    return c->sure ? (double)c->hyp_sure / (double)c->sure : 0.0;
}
