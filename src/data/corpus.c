/* corpus.c: streaming parallel text into token ids (see corpus.h). Reads files; never
 * writes any. */
#include "data/corpus.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "text/linereader.h"

/* ---- lines ---------------------------------------------------------------------------- */

/* Counts the lines left in r (for the line-count mismatch message). */
static long count_rest(LineReader *r, Error *err)
{
    size_t len;
    int too_long, rc;
    while ((rc = linereader_next(r, 0, &len, &too_long, err)) == 1)
        ;
    return rc < 0 ? -1 : r->line_no;
}

/* ---- one side of a pair ------------------------------------------------------------------- */

static void push_id(Corpus *c, int id)
{
    if (c->n_ids == c->ids_cap) {
        c->ids_cap = c->ids_cap * 2 + 1024;
        c->ids = xrealloc_array(c->ids, c->ids_cap, sizeof(int));
    }
    c->ids[c->n_ids++] = id;
}

static void push_pair_slot(Corpus *c)
{
    if (c->n == c->pairs_cap) {
        c->pairs_cap = c->pairs_cap * 2 + 256;
        size_t cap = (size_t)c->pairs_cap;
        c->src_start = xrealloc_array(c->src_start, cap, sizeof(int));
        c->src_len = xrealloc_array(c->src_len, cap, sizeof(int));
        c->tgt_start = xrealloc_array(c->tgt_start, cap, sizeof(int));
        c->tgt_len = xrealloc_array(c->tgt_len, cap, sizeof(int));
        c->line_no = xrealloc_array(c->line_no, cap, sizeof(long));
        c->refs = xrealloc_array(c->refs, cap, sizeof(char *));
        c->src_words = xrealloc_array(c->src_words, cap, sizeof(int));
        c->tgt_words = xrealloc_array(c->tgt_words, cap, sizeof(int));
        c->src_text = xrealloc_array(c->src_text, cap, sizeof(char *));
        c->tgt_text = xrealloc_array(c->tgt_text, cap, sizeof(char *));
    }
    /* what only some corpora keep starts empty, so that any pair frees cleanly */
    c->refs[c->n] = c->src_text[c->n] = c->tgt_text[c->n] = NULL;
    c->src_words[c->n] = c->tgt_words[c->n] = 0;
}

/* Tokens to ids: counted into v, or looked up in it. */
static void store_tokens(Corpus *c, const Tokens *t, int n, Vocab *v, int counting)
{
    for (int k = 0; k < n; k++)
        push_id(c, counting ? vocab_count(v, tokens_get(t, k)) : vocab_id(v, tokens_get(t, k)));
}

/* A copy of text[0..n) with a NUL after it. */
static char *copy_line(const char *text, size_t n)
{
    char *s = xmalloc(n + 1);
    memcpy(s, text, n);
    s[n] = '\0';
    return s;
}

/* With keep_words: the words of the n tokens just stored (splitter_words), their
 * indices into word_of beside the ids; returns the number of words (0 without). */
static int store_words(Corpus *c, const CorpusSpec *spec, const Splitter *sp, const Tokens *t,
                       int n)
{
    if (!spec->keep_words)
        return 0;
    c->word_of = xrealloc_array(c->word_of, c->ids_cap, sizeof(int));
    const char **tokens = xmalloc_array((size_t)n, sizeof(char *));
    for (int k = 0; k < n; k++)
        tokens[k] = tokens_get(t, k);
    int words = splitter_words(sp, tokens, n, c->word_of + c->n_ids - n);
    free(tokens);
    return words;
}

/* The target as text: its tokens joined, as translations are written. */
static char *reference_text(const Splitter *sp, const Tokens *t, int n, int natural)
{
    const char **words = xmalloc_array((size_t)n, sizeof(char *));
    for (int k = 0; k < n; k++)
        words[k] = tokens_get(t, k);
    size_t len = splitter_join(sp, NULL, 0, words, n, natural);
    char *s = xmalloc(len + 1);
    splitter_join(sp, s, len + 1, words, n, natural);
    free(words);
    return s;
}

typedef struct {
    Tokens src, tgt;
    Splitter src_split, tgt_split; /* how each side's lines become tokens */
} Scratch;

/* An image corpus's pair: the picture named on the source line (its header checked
 * now), and the caption, kept unless empty or too long. The pair's source ids are the
 * block of picture_cells - 1 <unk> the first pair put at ids[0]. */
static int add_picture_pair(Corpus *c, Scratch *s, const CorpusSpec *spec, const char *src,
                            size_t n_src, const char *tgt, size_t n_tgt, long line_no, Vocab *tv,
                            int counting, Error *err)
{
    int nt = splitter_split(&s->tgt_split, &s->tgt, tgt, n_tgt, (int)spec->max_length, err);
    if (nt < 0)
        return -1;
    if (nt == 0 || (spec->max_length > 0 && nt > spec->max_length)) {
        c->counts.empty += nt == 0;
        c->counts.too_long += nt != 0;
        return 0;
    }
    if (pictures_add(&c->pics, spec->src_path, line_no, src, n_src, err) < 0)
        return -1;
    if (c->n_ids == 0)
        for (int j = 0; j < spec->picture_cells - 1; j++)
            push_id(c, TOK_UNK);
    push_pair_slot(c);
    int k = c->n++;
    c->src_start[k] = 0;
    c->src_len[k] = spec->picture_cells - 1;
    c->tgt_start[k] = (int)c->n_ids;
    c->tgt_len[k] = nt;
    store_tokens(c, &s->tgt, nt, tv, counting);
    c->line_no[k] = line_no;
    c->refs[k] = spec->keep_refs ? reference_text(&s->tgt_split, &s->tgt, nt, spec->natural) : NULL;
    c->max_src_len = spec->picture_cells - 1;
    if (nt > c->max_tgt_len)
        c->max_tgt_len = nt;
    return 0;
}

/* Tokenizes one pair and keeps it unless a filter drops it. Returns 0, or -1 with err
 * set if a subword model failed. */
static int add_pair(Corpus *c, Scratch *s, const CorpusSpec *spec, const char *src, size_t n_src,
                    const char *tgt, size_t n_tgt, long line_no, Vocab *sv, Vocab *tv, int counting,
                    Error *err)
{
    /* a side over max_length is dropped: its tokens past that are never made */
    int ns = splitter_split(&s->src_split, &s->src, src, n_src, (int)spec->max_length, err);
    int nt = ns < 0 ? -1 : splitter_split(&s->tgt_split, &s->tgt, tgt, n_tgt,
                                          (int)spec->max_length, err);
    if (nt < 0)
        return -1;
    if (ns == 0 || nt == 0) {
        c->counts.empty++;
        return 0;
    }
    if (spec->max_length > 0 && (ns > spec->max_length || nt > spec->max_length)) {
        c->counts.too_long++;
        return 0;
    }
    push_pair_slot(c);
    int k = c->n++;
    c->src_start[k] = (int)c->n_ids;
    c->src_len[k] = ns;
    store_tokens(c, &s->src, ns, sv, counting);
    c->src_words[k] = store_words(c, spec, &s->src_split, &s->src, ns);
    c->tgt_start[k] = (int)c->n_ids;
    c->tgt_len[k] = nt;
    store_tokens(c, &s->tgt, nt, tv, counting);
    c->tgt_words[k] = store_words(c, spec, &s->tgt_split, &s->tgt, nt);
    c->src_text[k] = spec->keep_text ? copy_line(src, n_src) : NULL;
    c->tgt_text[k] = spec->keep_text ? copy_line(tgt, n_tgt) : NULL;
    c->line_no[k] = line_no;
    c->refs[k] = spec->keep_refs ? reference_text(&s->tgt_split, &s->tgt, nt, spec->natural) : NULL;
    if (ns > c->max_src_len)
        c->max_src_len = ns;
    if (nt > c->max_tgt_len)
        c->max_tgt_len = nt;
    return 0;
}

/* ---- the two layouts ------------------------------------------------------------------------ */

static int read_two_files(Corpus *c, const CorpusSpec *spec, Scratch *s, Vocab *sv, Vocab *tv,
                          int counting, Error *err)
{
    LineReader a, b;
    if (linereader_open(&a, spec->src_path, "corpus", err) < 0)
        return -1;
    if (linereader_open(&b, spec->tgt_path, "corpus", err) < 0) {
        linereader_close(&a);
        return -1;
    }
    a.refuse_nul = b.refuse_nul = 1;
    int rc = -1;
    size_t max = (size_t)spec->max_line_bytes;
    for (;;) {
        size_t la, lb;
        int long_a, long_b;
        int ra = linereader_next(&a, max, &la, &long_a, err);
        if (ra < 0)
            goto done;
        int rb = linereader_next(&b, max, &lb, &long_b, err);
        if (rb < 0)
            goto done;
        if (ra == 0 || rb == 0) {
            if (ra == rb) {
                rc = 0;
                goto done;
            }
            long na = ra ? count_rest(&a, err) : a.line_no;
            long nb = rb ? count_rest(&b, err) : b.line_no;
            if (na >= 0 && nb >= 0)
                error_set(err, "source `%s` has %ld line%s, target `%s` has %ld", spec->src_path,
                          na, plural(na), spec->tgt_path, nb);
            goto done;
        }
        c->counts.lines++;
        if (long_a || long_b) {
            c->counts.overlong_line++;
            continue;
        }
        if (linereader_check_utf8(&a, la, err) < 0 || linereader_check_utf8(&b, lb, err) < 0)
            goto done;
        if (spec->pictures) {
            if (add_picture_pair(c, s, spec, a.line, la, b.line, lb, a.line_no, tv, counting,
                                 err) < 0)
                goto done;
        } else if (add_pair(c, s, spec, a.line, la, b.line, lb, a.line_no, sv, tv, counting,
                            err) < 0) {
            goto done;
        }
    }
done:
    linereader_close(&a);
    linereader_close(&b);
    return rc;
}

static int read_tsv(Corpus *c, const CorpusSpec *spec, Scratch *s, Vocab *sv, Vocab *tv,
                    int counting, Error *err)
{
    LineReader r;
    if (linereader_open(&r, spec->tsv_path, "corpus", err) < 0)
        return -1;
    r.refuse_nul = 1;
    int rc = -1;
    for (;;) {
        size_t len;
        int too_long;
        int got = linereader_next(&r, (size_t)spec->max_line_bytes, &len, &too_long, err);
        if (got <= 0) {
            rc = got;
            break;
        }
        c->counts.lines++;
        if (too_long) {
            c->counts.overlong_line++;
            continue;
        }
        if (linereader_check_utf8(&r, len, err) < 0)
            break;
        char *tab = memchr(r.line, '\t', len);
        if (!tab) {
            error_at(err, r.name, r.line_no, 0, "expected source<TAB>target, found no tab");
            break;
        }
        const char *first = r.line, *second = tab + 1;
        size_t n_first = (size_t)(tab - r.line);
        const char *end = memchr(second, '\t', len - n_first - 1); /* more columns: ignored */
        size_t n_second = end ? (size_t)(end - second) : len - n_first - 1;
        if (spec->tsv_reverse ? add_pair(c, s, spec, second, n_second, first, n_first, r.line_no,
                                         sv, tv, counting, err)
                              : add_pair(c, s, spec, first, n_first, second, n_second, r.line_no,
                                         sv, tv, counting, err)) {
            rc = -1;
            break;
        }
    }
    linereader_close(&r);
    return rc;
}

int corpus_read(Corpus *c, const CorpusSpec *spec, Vocab *src_vocab, Vocab *tgt_vocab,
                int counting, const char *name, Error *err)
{
    memset(c, 0, sizeof *c);
    if (spec->pictures)
        pictures_init(&c->pics, spec->picture_size, spec->picture_resize);
    Scratch s = {.src_split = {spec->level, spec->lowercase, spec->src_subwords, 0},
                 .tgt_split = {spec->level, spec->lowercase, spec->tgt_subwords, 0}};
    int rc = spec->tsv_path ? read_tsv(c, spec, &s, src_vocab, tgt_vocab, counting, err)
                            : read_two_files(c, spec, &s, src_vocab, tgt_vocab, counting, err);
    tokens_free(&s.src);
    tokens_free(&s.tgt);
    if (rc < 0)
        return -1;
    if (c->n == 0) {
        char counts[256];
        corpus_describe(c, counts, sizeof counts);
        return error_set(err, "no usable sentence pairs in the %s corpus `%s` (%s)", name,
                         spec->tsv_path ? spec->tsv_path : spec->src_path, counts);
    }
    if (spec->pictures) {
        if (pictures_load(&c->pics, spec->src_path, c->line_no, spec->cache_bytes,
                          (PicturesProgress){spec->progress, 1.0}, err) < 0)
            return -1;
        memcpy(c->mean, c->pics.mean, sizeof c->mean);
    }
    return 0;
}

void corpus_free(Corpus *c)
{
    if (c->refs)
        for (int k = 0; k < c->n; k++)
            free(c->refs[k]);
    if (c->src_text)
        for (int k = 0; k < c->n; k++) {
            free(c->src_text[k]);
            free(c->tgt_text[k]);
        }
    free(c->src_text);
    free(c->tgt_text);
    free(c->refs);
    free(c->src_start);
    free(c->src_len);
    free(c->tgt_start);
    free(c->tgt_len);
    free(c->line_no);
    free(c->ids);
    free(c->word_of);
    free(c->src_words);
    free(c->tgt_words);
    pictures_free(&c->pics);
    memset(c, 0, sizeof *c);
}

void corpus_remap(Corpus *c, const Vocab *src_counted, const Vocab *src_vocab,
                  const Vocab *tgt_counted, const Vocab *tgt_vocab)
{
    int *src_map = xmalloc_array((size_t)src_counted->size + 1, sizeof(int));
    int *tgt_map = xmalloc_array((size_t)tgt_counted->size + 1, sizeof(int));
    for (int id = 0; id < src_counted->size; id++)
        src_map[id] = vocab_id(src_vocab, vocab_word(src_counted, id));
    for (int id = 0; id < tgt_counted->size; id++)
        tgt_map[id] = vocab_id(tgt_vocab, vocab_word(tgt_counted, id));
    for (int k = 0; k < c->n; k++) {
        for (int j = 0; j < c->src_len[k] && !c->pics.n; j++) /* pictures' <unk> stay */
            c->ids[c->src_start[k] + j] = src_map[c->ids[c->src_start[k] + j]];
        for (int i = 0; i < c->tgt_len[k]; i++)
            c->ids[c->tgt_start[k] + i] = tgt_map[c->ids[c->tgt_start[k] + i]];
    }
    free(src_map);
    free(tgt_map);
}

void corpus_describe(const Corpus *c, char *out, size_t cap)
{
    snprintf(out, cap, "read %ld pair%s, kept %d; skipped: %ld empty, %ld too long, %ld over "
             "max_line_bytes", c->counts.lines, plural(c->counts.lines), c->n, c->counts.empty,
             c->counts.too_long, c->counts.overlong_line);
}

int corpus_batch(const Corpus *c, const int *order, int first, int count, int with_targets,
                 Batch *out, Error *err)
{
    for (int k = 0; k < count; k++) {
        int pair = order ? order[first + k] : first + k;
        out->pair_src[k] = c->ids + c->src_start[pair];
        out->pair_src_n[k] = c->src_len[pair];
        out->pair_tgt[k] = c->ids + c->tgt_start[pair];
        out->pair_tgt_n[k] = c->tgt_len[pair];
    }
    batch_fill(out, count, out->pair_src, out->pair_src_n, with_targets ? out->pair_tgt : NULL,
               out->pair_tgt_n);
    for (int k = 0; k < count; k++)
        out->pair[k] = order ? order[first + k] : first + k;
    if (!c->pics.n)
        return 0;
    const size_t one = (size_t)c->pics.size * c->pics.size * 3;
    assert(out->pixels && out->picture_size == c->pics.size);
    for (int k = 0; k < count; k++) {
        const int pair = order ? order[first + k] : first + k;
        assert(err || pair < c->pics.cached);
        if (pictures_get(&c->pics, pair, c->mean, out->pixels + (size_t)k * one, err) < 0)
            return -1;
    }
    return 0;
}

/* ---- a new split of every pair (subword sampling) ---------------------------------------- */

/* One side of pair k split by sp into ids of v appended to ids (*n of *cap used): the
 * drawn split, or the best one (best) if the drawn is longer than bound or fails; if
 * that fails too, the pair's current ids (old, old_n). Returns 1 if it fell back. */
static int resplit_side(Tokens *t, const Splitter *sp, const Splitter *best, const char *text,
                        int bound, const Vocab *v, const int *old, int old_n, int **ids,
                        size_t *n, size_t *cap, int *len)
{
    Error err;
    int fell_back = 0;
    int count = splitter_split(sp, t, text, strlen(text), 0, &err);
    if (count <= 0 || count > bound) {
        fell_back = 1;
        count = splitter_split(best, t, text, strlen(text), 0, &err);
    }
    const int keep_old = count <= 0 || count > bound;
    const int m = keep_old ? old_n : count;
    if (*n + (size_t)m > *cap) {
        *cap = (*n + (size_t)m) * 2;
        *ids = xrealloc_array(*ids, *cap, sizeof(int));
    }
    for (int k = 0; k < m; k++)
        (*ids)[*n + (size_t)k] = keep_old ? old[k] : vocab_id(v, tokens_get(t, k));
    *n += (size_t)m;
    *len = m;
    return fell_back;
}

long corpus_resplit(Corpus *c, const Splitter *src, const Splitter *tgt, const Vocab *src_vocab,
                    const Vocab *tgt_vocab)
{
    Splitter src_best = *src, tgt_best = *tgt;
    src_best.alpha = tgt_best.alpha = 0;
    Tokens t = {0};
    size_t cap = c->ids_cap, n = 0;
    int *ids = xmalloc_array(cap, sizeof(int));
    long fell_back = 0;
    for (int k = 0; k < c->n; k++) {
        const int src_start = (int)n;
        fell_back += resplit_side(&t, src, &src_best, c->src_text[k], c->max_src_len, src_vocab,
                                  c->ids + c->src_start[k], c->src_len[k], &ids, &n, &cap,
                                  &c->src_len[k]);
        const int tgt_start = (int)n;
        fell_back += resplit_side(&t, tgt, &tgt_best, c->tgt_text[k], c->max_tgt_len, tgt_vocab,
                                  c->ids + c->tgt_start[k], c->tgt_len[k], &ids, &n, &cap,
                                  &c->tgt_len[k]);
        c->src_start[k] = src_start;
        c->tgt_start[k] = tgt_start;
    }
    tokens_free(&t);
    free(c->ids);
    c->ids = ids;
    c->n_ids = n;
    c->ids_cap = cap;
    return fell_back;
}
