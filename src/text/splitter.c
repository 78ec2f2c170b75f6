/* splitter.c: a side's unit of text (see splitter.h). */
#include "text/splitter.h"

#include <string.h>

int splitter_split(const Splitter *s, Tokens *t, const char *line, size_t n, int max_tokens,
                   Error *err)
{
    if (!s->subwords)
        return tokenize_line(t, line, n, s->level, s->lowercase, max_tokens);
    return subwords_encode(s->subwords, t, line, n, s->alpha, err);
}

size_t splitter_join(const Splitter *s, char *out, size_t cap, const char *const *tokens, int n,
                     int natural)
{
    if (!s->subwords)
        return (natural ? detokenize_text : detokenize)(out, cap, tokens, n, s->level);
    const long len = subwords_decode(s->subwords, out, cap, tokens, n);
    if (len >= 0)
        return (size_t)len;
    /* SentencePiece refuses nothing our vocabularies hold; joined plainly all the same */
    return detokenize(out, cap, tokens, n, LEVEL_CHAR);
}

int splitter_words(const Splitter *s, const char *const *tokens, int n, int *word)
{
    static const char SPACE_MARK[] = "\xE2\x96\x81"; /* U+2581, what SentencePiece writes */
    int words = 0;
    for (int k = 0; k < n; k++) {
        int starts = !s->subwords || k == 0 ||
                     strncmp(tokens[k], SPACE_MARK, sizeof SPACE_MARK - 1) == 0;
        words += starts;
        word[k] = words - 1;
    }
    return words;
}
