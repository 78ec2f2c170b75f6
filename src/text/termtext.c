/* termtext.c: control characters shown, never acted on (see termtext.h). */
#include "text/termtext.h"

#include <string.h>
#include <unistr.h>
#include <uniwidth.h>

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

static int is_control(ucs4_t c)
{
    return c < 0x20 || (c >= 0x7F && c <= 0x9F);
}

/* The character at s (NUL-terminated, not at its end): its length in bytes, and
 * whether it may be printed as it is. A byte that starts no UTF-8 character is a
 * character of one byte, not printable. */
static size_t next_char(const char *s, ucs4_t *c, int *printable)
{
    const uint8_t *u = (const uint8_t *)s;
    int n = u8_mbtoucr(c, u, strnlen(s, 4));
    if (n <= 0) {
        *c = u[0];
        *printable = 0;
        return 1;
    }
    *printable = !is_control(*c);
    return (size_t)n;
}

void termtext_put(FILE *f, const char *s)
{
    while (*s) {
        ucs4_t c;
        int printable;
        size_t n = next_char(s, &c, &printable);
        if (printable)
            fwrite(s, 1, n, f);
        else
            fputs(REPLACEMENT, f);
        s += n;
    }
}

int termtext_width(const char *s)
{
    int width = 0;
    while (*s) {
        ucs4_t c;
        int printable;
        s += next_char(s, &c, &printable);
        int w = printable ? uc_width(c, "UTF-8") : 1;
        width += w < 0 ? 1 : w; /* other unprintables: as wide as the U+FFFD a terminal shows */
    }
    return width;
}

char *termtext_escape(char *out, size_t cap, const char *s)
{
    size_t used = 0;
    while (*s && cap > 0) {
        ucs4_t c;
        int printable;
        size_t n = next_char(s, &c, &printable);
        size_t need = printable ? n : 4 * n; /* \xHH per byte */
        if (used + need >= cap)
            break;
        if (printable) {
            memcpy(out + used, s, n);
        } else {
            static const char HEX[] = "0123456789abcdef";
            for (size_t k = 0; k < n; k++) {
                unsigned char b = (unsigned char)s[k];
                char *e = out + used + 4 * k;
                e[0] = '\\';
                e[1] = 'x';
                e[2] = HEX[b >> 4];
                e[3] = HEX[b & 15];
            }
        }
        used += need;
        s += n;
    }
    if (cap > 0)
        out[used] = '\0';
    return out;
}
