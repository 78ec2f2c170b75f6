/* tokenize.c: UTF-8 validation and word/character tokenization (see tokenize.h).
 * Unicode normalisation (NFC) and case mapping are libunistring's; the splitting
 * rules are ours (tokenize.h), which scripts/torch_reference.py restates in Python. */
#include "text/tokenize.h"

#include <stdlib.h>
#include <string.h>
#include <unicase.h>
#include <unictype.h>
#include <uninorm.h>
#include <unistr.h>

#include "base/mem.h"

const char *const token_level_names[3] = {"word", "char", NULL};

/* ---- UTF-8 validation -------------------------------------------------------- */

static int is_continuation(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

int utf8_validate(const char *str, size_t n, size_t *bad_at, size_t *bad_len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c >= 0x01 && c < 0x80) {
            i++;
            continue;
        }
        /* Length of the sequence this lead byte starts, and the allowed range of its
         * second byte (which is what excludes overlongs, surrogates and > U+10FFFF). */
        size_t need = 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            need = 2;
        else if (c >= 0xE0 && c <= 0xEF) {
            need = 3;
            if (c == 0xE0)
                lo = 0xA0; /* overlong below U+0800 */
            if (c == 0xED)
                hi = 0x9F; /* surrogates U+D800..U+DFFF */
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 4;
            if (c == 0xF0)
                lo = 0x90; /* overlong below U+10000 */
            if (c == 0xF4)
                hi = 0x8F; /* above U+10FFFF */
        }
        int ok = need > 0 && i + need <= n && s[i + 1] >= lo && s[i + 1] <= hi;
        for (size_t k = 2; ok && k < need; k++)
            ok = is_continuation(s[i + k]);
        if (ok) {
            i += need;
            continue;
        }
        /* Report the lead byte with the continuation bytes that follow it. */
        size_t len = 1, want = need ? need : (c >= 0xC0 && c < 0xC2 ? 2 : 1);
        while (len < want && i + len < n && is_continuation(s[i + len]))
            len++;
        *bad_at = i;
        *bad_len = len;
        return -1;
    }
    return 0;
}

/* ---- character classes ----------------------------------------------------------- */

/* Python's str.isspace(): bidirectional classes WS, B, S and category Zs. */
int char_is_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Punctuation that is always a token of its own. */
static int is_split_punct(uint32_t c)
{
    switch (c) {
    case '!': case '?': case ';': case ':': case '"': case '(': case ')':
    case 0xBF: case 0xA1: case 0xAB: case 0xBB: /* ¿ ¡ « » */
    case 0x2026: case 0x201C: case 0x201D:      /* … “ ” */
        return 1;
    default:
        return 0;
    }
}

static int is_digit(uint32_t c)
{
    return uc_is_general_category(c, UC_CATEGORY_Nd);
}

/* Python's str.isalnum() for one character: a letter or a number. */
static int is_alnum(uint32_t c)
{
    return uc_is_general_category(c, UC_CATEGORY_L) || uc_is_general_category(c, UC_CATEGORY_N);
}

/* French elision prefixes, compared without case: the apostrophe stays with them. */
static int is_elision(const uint32_t *w, size_t n)
{
    static const char *const elisions[] = {"c", "d", "j", "l", "m", "n", "s", "t", "qu",
                                           "jusqu", "lorsqu", "puisqu", "quoiqu"};
    for (size_t e = 0; e < sizeof elisions / sizeof *elisions; e++) {
        const char *x = elisions[e];
        if (strlen(x) != n)
            continue;
        size_t k = 0;
        while (k < n && w[k] < 0x80 && (w[k] | 0x20) == (uint32_t)x[k])
            k++;
        if (k == n)
            return 1;
    }
    return 0;
}

/* ---- token output ------------------------------------------------------------------ */

static void text_reserve(Tokens *t, size_t extra)
{
    if (t->text_len + extra > t->text_cap) {
        t->text_cap = (t->text_len + extra) * 2 + 64;
        t->text = xrealloc_array(t->text, t->text_cap, 1);
    }
}

static void begin_token(Tokens *t)
{
    if (t->count == t->start_cap) {
        t->start_cap = t->start_cap * 2 + 16;
        t->start = xrealloc_array(t->start, (size_t)t->start_cap, sizeof(size_t));
    }
    t->start[t->count++] = t->text_len;
}

static void append_chars(Tokens *t, const uint32_t *c, size_t n)
{
    text_reserve(t, 4 * n + 1);
    for (size_t k = 0; k < n; k++) {
        int len = u8_uctomb((uint8_t *)t->text + t->text_len, c[k], 4);
        t->text_len += len > 0 ? (size_t)len : 0;
    }
}

static void end_token(Tokens *t)
{
    text_reserve(t, 1);
    t->text[t->text_len++] = '\0';
}

static void emit(Tokens *t, const uint32_t *c, size_t n, int apostrophe_first)
{
    const uint32_t apostrophe = '\'';
    begin_token(t);
    if (apostrophe_first)
        append_chars(t, &apostrophe, 1);
    append_chars(t, c, n);
    end_token(t);
}

/* Step 4 of tokenize.h on one word w[0..n). With prefix, the first token emitted gets
 * an apostrophe in front (the "'t" of "don't"). A loop over the apostrophes, not a
 * recursion: a word may hold a million of them. */
static void split_apostrophes(Tokens *t, const uint32_t *w, size_t n, int prefix)
{
    for (;;) {
        size_t i = 0;
        while (i < n && w[i] != '\'')
            i++;
        if (i == n) {
            emit(t, w, n, prefix);
            return;
        }
        const uint32_t *right = w + i + 1;
        size_t n_right = n - i - 1;
        if (i > 0 && n_right > 0 && is_alnum(w[i - 1]) && is_alnum(right[0])) {
            if (is_elision(w, i)) {
                emit(t, w, i + 1, prefix); /* j'ai -> j' + ai */
                prefix = 0;
            } else {
                emit(t, w, i, prefix);     /* don't -> don + 't */
                prefix = 1;
            }
        } else {
            /* An apostrophe not inside a word is a token of its own. */
            int first = prefix;
            if (i > 0) {
                emit(t, w, i, first);
                first = 0;
            }
            const uint32_t apostrophe = '\'';
            emit(t, &apostrophe, 1, first);
            if (n_right == 0)
                return;
            prefix = 0;
        }
        w = right;
        n = n_right;
    }
}

/* ---- the line --------------------------------------------------------------------- */

/* Adopts a libunistring result: the functions write into *buf when it is big enough
 * and return a fresh malloc'd array otherwise. */
static void adopt(uint32_t **buf, size_t *cap, uint32_t *result, size_t len)
{
    if (result != *buf) {
        free(*buf);
        *buf = result;
        *cap = len;
    }
}

/* Step 1 of tokenize.h: the line as NFC code points with apostrophes unified,
 * invisible characters removed and, if asked, lowercased. Leaves them in t->chars
 * and returns their number. */
static size_t normalize(Tokens *t, const char *line, size_t n, int lowercase)
{
    size_t len = t->chars_cap;
    uint32_t *r = u8_to_u32((const uint8_t *)line, n, t->chars, &len);
    if (!r)
        return 0; /* only on invalid input, which callers have rejected */
    adopt(&t->chars, &t->chars_cap, r, len);
    size_t len2 = t->work_cap;
    r = u32_normalize(UNINORM_NFC, t->chars, len, t->work, &len2);
    if (!r)
        return 0;
    adopt(&t->work, &t->work_cap, r, len2);
    size_t kept = 0;
    for (size_t k = 0; k < len2; k++) {
        uint32_t c = t->work[k];
        if (c == 0x200B || c == 0xAD || c == 0xFEFF)
            continue;
        t->work[kept++] = (c == 0x2019 || c == 0x2018) ? '\'' : c;
    }
    if (!lowercase) {
        uint32_t *swap = t->chars;
        size_t swap_cap = t->chars_cap;
        t->chars = t->work, t->chars_cap = t->work_cap;
        t->work = swap, t->work_cap = swap_cap;
        return kept;
    }
    size_t len3 = t->chars_cap;
    r = u32_tolower(t->work, kept, NULL, NULL, t->chars, &len3);
    if (!r)
        return 0;
    adopt(&t->chars, &t->chars_cap, r, len3);
    return len3;
}

/* Steps 2-4 (or the character level) on normalized code points c[0..L), which begin
 * at a whitespace boundary of the line. *pending_space: at character level, whether
 * whitespace has been seen since the last token (it carries over between pieces). */
static void split_chars(Tokens *t, const uint32_t *c, size_t L, TokenLevel level,
                        int *pending_space)
{
    if (level == LEVEL_CHAR) {
        for (size_t i = 0; i < L; i++) {
            if (char_is_space(c[i])) {
                *pending_space = t->count > 0;
                continue;
            }
            if (*pending_space) {
                const uint32_t space = 0x2581;
                emit(t, &space, 1, 0);
                *pending_space = 0;
            }
            emit(t, c + i, 1, 0);
        }
        return;
    }
    size_t word = 0; /* start of the current word */
    for (size_t i = 0; i <= L; i++) {
        int boundary = i == L || char_is_space(c[i]);
        int alone = !boundary && is_split_punct(c[i]);
        if (!boundary && !alone && (c[i] == '.' || c[i] == ','))
            alone = !(i > 0 && is_digit(c[i - 1]) && i + 1 < L && is_digit(c[i + 1]));
        if (boundary || alone) {
            if (i > word)
                split_apostrophes(t, c + word, i - word, 0);
            if (alone)
                emit(t, c + i, 1, 0);
            word = i + 1;
        }
    }
}

/* Lines are tokenized in pieces of about this many bytes, so that a long line costs
 * memory for one piece at a time and the tokenizer can stop once it has max_tokens. */
#define PIECE_BYTES 65536

/* Where the piece of line[at..n) ends: at the first whitespace character at least
 * PIECE_BYTES in, or at n. Whitespace is a safe cut: no step of tokenize.h looks across
 * it (NFC composes no whitespace; case mapping's contexts, like the final sigma, stop
 * at it; words and runs of spaces end there). */
static size_t piece_end(const char *line, size_t n, size_t at)
{
    if (n - at <= PIECE_BYTES)
        return n;
    size_t k = at + PIECE_BYTES;
    while (k < n && is_continuation((unsigned char)line[k]))
        k++;
    while (k < n) {
        ucs4_t c;
        int len = u8_mbtouc(&c, (const uint8_t *)line + k, n - k);
        if (char_is_space(c))
            return k;
        k += (size_t)len;
    }
    return n;
}

int tokenize_line(Tokens *t, const char *line, size_t n, TokenLevel level, int lowercase,
                  int max_tokens)
{
    tokens_clear(t);
    int pending_space = 0;
    for (size_t at = 0; at < n;) {
        size_t end = piece_end(line, n, at);
        size_t L = normalize(t, line + at, end - at, lowercase);
        split_chars(t, t->chars, L, level, &pending_space);
        if (max_tokens > 0 && t->count > max_tokens)
            break;
        at = end;
    }
    return t->count;
}

void tokens_clear(Tokens *t)
{
    t->count = 0;
    t->text_len = 0;
}

void tokens_add(Tokens *t, const char *s, size_t len)
{
    begin_token(t);
    text_reserve(t, len + 1);
    memcpy(t->text + t->text_len, s, len);
    t->text_len += len;
    end_token(t);
}

void tokens_free(Tokens *t)
{
    free(t->text);
    free(t->start);
    free(t->chars);
    free(t->work);
    *t = (Tokens){0};
}

size_t detokenize(char *out, size_t cap, const char *const *tokens, int n, TokenLevel level)
{
    size_t len = 0;
    for (int k = 0; k < n; k++) {
        const char *piece = tokens[k];
        if (level == LEVEL_CHAR && !strcmp(piece, CHAR_SPACE_TOKEN))
            piece = " ";
        else if (level == LEVEL_WORD && k > 0) {
            if (len + 1 < cap)
                out[len] = ' ';
            len++;
        }
        size_t m = strlen(piece);
        for (size_t i = 0; i < m; i++, len++)
            if (len + 1 < cap)
                out[len] = piece[i];
    }
    if (cap > 0)
        out[len < cap ? len : cap - 1] = '\0';
    return len;
}

/* Tokens written against the word before them, and those the next word is written
 * against. */
static int attaches_left(const char *t)
{
    static const char *const list[] = {".", ",", "!", "?", ";", ":", ")", "]", "}",
                                       "\xe2\x80\xa6", "\xe2\x80\x9d", NULL};
    for (const char *const *l = list; *l; l++)
        if (!strcmp(t, *l))
            return 1;
    return t[0] == '\'' && t[1] != '\0';
}

static int attaches_right(const char *t)
{
    static const char *const list[] = {"(", "[", "{", "\xe2\x80\x9c", "\xc2\xbf", "\xc2\xa1", NULL};
    for (const char *const *l = list; *l; l++)
        if (!strcmp(t, *l))
            return 1;
    size_t n = strlen(t);
    return n > 1 && t[n - 1] == '\'';
}

size_t detokenize_text(char *out, size_t cap, const char *const *tokens, int n, TokenLevel level)
{
    if (level == LEVEL_CHAR)
        return detokenize(out, cap, tokens, n, level);
    size_t len = 0;
    int glue_next = 1, quote_open = 0; /* nothing before the first token */
    for (int k = 0; k < n; k++) {
        const char *t = tokens[k];
        int glue = glue_next || attaches_left(t);
        glue_next = attaches_right(t);
        if (!strcmp(t, "\"")) { /* an opening quote binds right, a closing one left */
            glue = glue_next || quote_open;
            glue_next = !quote_open;
            quote_open = !quote_open;
        }
        if (!glue) {
            if (len + 1 < cap)
                out[len] = ' ';
            len++;
        }
        for (size_t i = 0; t[i]; i++, len++)
            if (len + 1 < cap)
                out[len] = t[i];
    }
    if (cap > 0)
        out[len < cap ? len : cap - 1] = '\0';
    return len;
}
