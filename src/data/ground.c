/* ground.c: reading and checking the word boxes of a captioning corpus (see ground.h). */
#include "data/ground.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "data/corpus.h"
#include "text/termtext.h"
#include "text/textfile.h"

/* How much of a bad field a message quotes. */
enum { SHOWN_BYTES = 40 };

/* The field s[0..n) for a message, in out: at most SHOWN_BYTES bytes of it, never cut
 * inside a UTF-8 character, then "..." if it was cut; control characters as \xHH. */
static const char *shown(char *out, size_t cap, const char *s, size_t n)
{
    char part[SHOWN_BYTES + 1];
    size_t keep = n;
    if (n > SHOWN_BYTES) {
        keep = SHOWN_BYTES;
        while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
            keep--; /* s[keep], the first byte left out, continues a character */
    }
    memcpy(part, s, keep);
    part[keep] = '\0';
    termtext_escape(out, cap - 3, part);
    if (keep < n)
        strcat(out, "...");
    return out;
}

/* One number of a box: digits only, at least one. Returns the bytes it took (0: none
 * there); *v gets its value, or IMAGE_MAX_SIDE + 1 for any larger number. */
static size_t read_number(const char *s, size_t n, int *v)
{
    size_t k = 0;
    long value = 0;
    for (; k < n && s[k] >= '0' && s[k] <= '9'; k++)
        if ((value = value * 10 + (s[k] - '0')) > IMAGE_MAX_SIDE)
            value = IMAGE_MAX_SIDE + 1;
    *v = (int)value;
    return k;
}

/* Parses field K (1-based) of a line, s[0..n), into *b. Returns 0, or -1 with err set
 * (naming path and line). */
static int parse_field(const char *s, size_t n, GroundBox *b, const char *path, long line,
                       int field, Error *err)
{
    char text[4 * SHOWN_BYTES + 8];
    if (n == 1 && s[0] == '-') {
        *b = (GroundBox){GROUND_NONE, 0, 0, 0};
        return 0;
    }
    int v[4], got = 0;
    size_t at = 0, starts[4];
    while (got < 4 && (got == 0 || (at < n && s[at++] == ','))) {
        starts[got] = at;
        const size_t took = read_number(s + at, n - at, &v[got]);
        if (!took)
            break;
        at += took;
        got++;
    }
    if (got < 4 || at != n)
        return error_at(err, path, line, 0, "field %d: expected '-' or x0,y0,x1,y1 (got '%s')",
                        field, shown(text, sizeof text, s, n));
    for (int k = 0; k < 4; k++)
        if (v[k] > IMAGE_MAX_SIDE) {
            const char *end = memchr(s + starts[k], ',', n - starts[k]);
            const size_t len = end ? (size_t)(end - s) - starts[k] : n - starts[k];
            return error_at(err, path, line, 0, "field %d: %s is more than %d, the largest "
                            "picture side", field, shown(text, sizeof text, s + starts[k], len),
                            IMAGE_MAX_SIDE);
        }
    *b = (GroundBox){v[0], v[1], v[2], v[3]};
    if (b->x0 >= b->x1 || b->y0 >= b->y1)
        return error_at(err, path, line, 0, "field %d: box %d,%d,%d,%d is empty (expected x0 < "
                        "x1 and y0 < y1)", field, b->x0, b->y0, b->x1, b->y1);
    return 0;
}

/* Appends line k's fields (s[0..n), the line just read) to g; cap is g->boxes'
 * capacity. Returns 0, or -1 with err set. */
static int parse_line(GroundFile *g, long *cap, const char *s, size_t n, const char *path,
                      long line, Error *err)
{
    long k = g->n_lines;
    g->start[k] = g->n_boxes;
    g->count[k] = 0;
    for (size_t at = 0; n > 0 && at <= n;) { /* an empty line has no field */
        const char *space = memchr(s + at, ' ', n - at);
        const size_t end = space ? (size_t)(space - s) : n;
        if (g->n_boxes == *cap) {
            *cap *= 2;
            g->boxes = xrealloc_array(g->boxes, (size_t)*cap, sizeof *g->boxes);
        }
        GroundBox *b = &g->boxes[g->n_boxes];
        if (parse_field(s + at, end - at, b, path, line, g->count[k] + 1, err) < 0)
            return -1;
        g->n_boxes++;
        g->count[k]++;
        at = end + 1; /* past the end of the line after its last field */
    }
    g->n_lines++;
    return 0;
}

int ground_read(GroundFile *g, const char *path, size_t max_line_bytes, Error *err)
{
    memset(g, 0, sizeof *g);
    long cap = 256, line_cap = 64;
    g->boxes = xmalloc_array((size_t)cap, sizeof *g->boxes);
    g->start = xmalloc_array((size_t)line_cap, sizeof *g->start);
    g->count = xmalloc_array((size_t)line_cap, sizeof *g->count);
    TextReader t;
    int rc = textreader_open(&t, path, "word boxes", max_line_bytes, err);
    t.limit_name = "data.max_line_bytes";
    const char *line;
    size_t len;
    while (rc == 0 && (rc = textreader_next(&t, &line, &len, err)) == 1) {
        if (g->n_lines == line_cap) {
            line_cap *= 2;
            g->start = xrealloc_array(g->start, (size_t)line_cap, sizeof *g->start);
            g->count = xrealloc_array(g->count, (size_t)line_cap, sizeof *g->count);
        }
        rc = parse_line(g, &cap, line, len, path, t.in.line_no, err);
    }
    textreader_close(&t);
    if (rc < 0) {
        ground_free(g);
        return -1;
    }
    return 0;
}

void ground_free(GroundFile *g)
{
    free(g->boxes);
    free(g->start);
    free(g->count);
    memset(g, 0, sizeof *g);
}

int ground_check_line(const GroundBox *boxes, int n_boxes, int n_words, ImageSize orig,
                      const char *path, long line, Error *err)
{
    if (n_boxes != n_words)
        return error_at(err, path, line, 0, "%d field%s, expected %d (one per caption word)",
                        n_boxes, plural(n_boxes), n_words);
    for (int k = 0; k < n_boxes; k++) {
        const GroundBox *b = &boxes[k];
        if (ground_names(b) && (b->x1 > orig.width || b->y1 > orig.height))
            return error_at(err, path, line, 0, "field %d: box %d,%d,%d,%d outside the %d x %d "
                            "image", k + 1, b->x0, b->y0, b->x1, b->y1, orig.width, orig.height);
    }
    return 0;
}

int ground_check_corpus(const GroundFile *g, const char *path, const Corpus *c, Error *err)
{
    for (int k = 0; k < c->n; k++) {
        const long line = c->line_no[k];
        if (line > g->n_lines)
            return error_set(err, "%s: %ld line%s, and the captions' file has a caption on line "
                             "%ld", path, g->n_lines, g->n_lines == 1 ? "" : "s", line);
        int n;
        const GroundBox *boxes = ground_line(g, line, &n);
        if (ground_check_line(boxes, n, c->tgt_len[k], c->pics.orig[k], path, line, err) < 0)
            return -1;
    }
    return 0;
}
