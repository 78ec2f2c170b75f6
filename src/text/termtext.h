/* termtext.h: text from outside -- corpus tokens, paths, words of a checkpoint's
 * vocabulary -- made safe to print where a terminal may read it. A terminal acts on
 * control characters instead of showing them: ESC starts sequences that clear the
 * screen, move the cursor, retitle the window or make some terminals answer as if
 * typed; BEL rings; the C1 controls (U+0080-U+009F, CSI among them) do the same in one
 * character, and a byte 0x9B that is no UTF-8 is CSI to a terminal in an 8-bit mode.
 * What s2s prints shows such characters; it never lets the terminal act on them.
 *
 * Two forms: drawings (the heatmaps of `s2s heatmap --format txt` and `s2s translate
 * --show-attention`) put U+FFFD in their place, one column each, so the drawing keeps
 * its columns; messages (errors and warnings) write them as \xHH, so the user can
 * still tell which bytes a path or word holds. */
#ifndef S2S_TERMTEXT_H
#define S2S_TERMTEXT_H

#include <stddef.h>
#include <stdio.h>

/* Writes s for a drawing: each control character (C0, DEL, C1) and each byte that is
 * not part of a UTF-8 character becomes U+FFFD. */
void termtext_put(FILE *f, const char *s);

/* The columns s takes as termtext_put writes it: wide characters count 2, combining
 * marks 0, every replaced character 1. */
int termtext_width(const char *s);

/* s for a message, into out (NUL-terminated, cut at cap - 1 bytes but never inside a
 * character or an escape): control characters (C0, DEL, C1) and bytes that are not
 * UTF-8 become \xHH, a C1 character by its two UTF-8 bytes (U+009B: \xc2\x9b).
 * Returns out. */
char *termtext_escape(char *out, size_t cap, const char *s);

#endif
