/* tokenize.h: strict UTF-8 validation and the tokenizer shared by training and
 * translation, so that a sentence is split the same way wherever it comes from.
 *
 * Word level follows the rules below, which scripts/torch_reference.py's tokenize()
 * states again in Python (make crosscheck compares the two), so BLEU scores of s2s and
 * of the PyTorch baseline are computed on the same tokens:
 *   1. NFC; U+2019/U+2018 -> '; U+200B, U+00AD and U+FEFF (a byte-order mark, or a
 *      zero-width no-break space) removed; lowercase if asked (full Unicode case
 *      mapping, like Python's str.lower()).
 *   2. Each of ! ? ; : " ( ) ¿ ¡ « » … “ ” is a token of its own; so are . and , except
 *      between two digits (3.5 and 1,000 stay whole).
 *   3. Split on whitespace, Unicode's included: the no-break spaces French puts before
 *      ? ! : ; (U+00A0, U+202F, U+2009) separate tokens like a space.
 *   4. Apostrophes inside a word cut it: after a French elision (c d j l m n s t qu
 *      jusqu lorsqu puisqu quoiqu) the apostrophe stays left (j'ai -> j' ai), otherwise
 *      it goes right (don't -> don 't); any other apostrophe is a token of its own.
 * Character level: every character is a token, and each run of whitespace one "▁".
 * Normalisation and case mapping come from libunistring. */
#ifndef S2S_TOKENIZE_H
#define S2S_TOKENIZE_H

#include <stddef.h>
#include <stdint.h>

typedef enum { LEVEL_WORD, LEVEL_CHAR } TokenLevel;

/* The levels' names in TokenLevel order, NULL-terminated: "word", "char". */
extern const char *const token_level_names[3];

/* The token standing for a run of whitespace at character level (U+2581). */
#define CHAR_SPACE_TOKEN "\xe2\x96\x81"

/* Checks that s[0..n) is strict UTF-8: no overlong forms, surrogates, code points
 * above U+10FFFF, truncated sequences, stray continuation bytes or NUL bytes. Returns
 * 0, or -1 with *bad_at set to the offset of the first bad byte and *bad_len to the
 * number of bytes that make up the bad sequence (1 to 4). */
int utf8_validate(const char *s, size_t n, size_t *bad_at, size_t *bad_len);

/* 1 if code point c is whitespace in Python's sense (str.isspace()). */
int char_is_space(uint32_t c);

/* The tokens of one line: NUL-terminated strings in one buffer. Reused from line to
 * line; tokens_free on a zeroed Tokens is safe. */
typedef struct {
    char *text;          /* the tokens, each followed by a NUL */
    size_t text_len, text_cap;
    size_t *start;       /* offset of token k in text */
    int count, start_cap;
    uint32_t *chars, *work; /* scratch: the line as code points */
    size_t chars_cap, work_cap;
} Tokens;

/* Token k of t, valid until the next tokenize_line or tokens_free. */
static inline const char *tokens_get(const Tokens *t, int k)
{
    return t->text + t->start[k];
}

/* Tokenizes line[0..n), which must be valid UTF-8 without a line break. Returns the
 * number of tokens (0 for an empty or all-space line). With max_tokens > 0 it may stop
 * once it has more than max_tokens (a line that long is not used whole): the count is
 * then over max_tokens but not the line's. */
int tokenize_line(Tokens *t, const char *line, size_t n, TokenLevel level, int lowercase,
                  int max_tokens);
void tokens_free(Tokens *t);
/* Empties t, and appends the token s[0..len): for tokens that come from elsewhere (a
 * subword model's pieces, text/splitter.h). */
void tokens_clear(Tokens *t);
void tokens_add(Tokens *t, const char *s, size_t len);

/* Joins tokens back into text: word level with single spaces, character level by
 * concatenation with "▁" turned back into a space. Writes at most cap bytes including
 * the NUL; returns the length the whole text needs (like snprintf). */
size_t detokenize(char *out, size_t cap, const char *const *tokens, int n, TokenLevel level);

/* As detokenize, but at word level as natural text: no space before . , ! ? ; : ) ] }
 * … ” and before tokens that start with an apostrophe ('s, 't); none after ( [ { “ ¿ ¡
 * and after tokens that end with one (j', qu'); straight double quotes alternate
 * between opening and closing; « » keep their French spaces. "j' ai froid ." ->
 * "j'ai froid." */
size_t detokenize_text(char *out, size_t cap, const char *const *tokens, int n, TokenLevel level);

#endif
