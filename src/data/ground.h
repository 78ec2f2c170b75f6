/* ground.h: the word boxes of a captioning corpus, SPLIT.ground (issue 28; `s2s corpus
 * shapes` writes them): for each caption word, the box of the object it names in the
 * original picture, so that attention can be scored against it (report/grounding.h:
 * Liu et al. 2017, "attention correctness").
 *
 * The file: one line per caption, line k for line k of SPLIT.src and SPLIT.tgt; one
 * field per caption token (</s> excluded), separated by single spaces: `-` for a word
 * that names nothing, or `x0,y0,x1,y1`, the box in pixels of the original picture (x0
 * and y0 inclusive, x1 and y1 exclusive), non-negative decimal integers (digits only)
 * with x0 < x1 and y0 < y1. Lines end at "\n" or "\r\n", a last line without "\n"
 * counts, and an empty line is a caption of no words. */
#ifndef S2S_GROUND_H
#define S2S_GROUND_H

#include <stddef.h>

#include "base/error.h"
#include "data/image.h"

/* One word's box; x0 = GROUND_NONE (and the others 0) for a word that names nothing. */
typedef struct {
    int x0, y0, x1, y1;
} GroundBox;

#define GROUND_NONE (-1)

static inline int ground_names(const GroundBox *b)
{
    return b->x0 != GROUND_NONE;
}

/* A whole file: line k (0-based) has count[k] boxes, boxes[start[k] .. start[k] +
 * count[k]). */
typedef struct {
    GroundBox *boxes;
    long *start;
    int *count;
    long n_lines, n_boxes;
} GroundFile;

/* Reads path whole; a line over max_line_bytes (data.max_line_bytes) is an error, and
 * so is a line that is not text (textfile.h's messages). Every field is checked:
 *   "PATH:LINE: field K: expected '-' or x0,y0,x1,y1 (got 'TEXT')" (TEXT the field, its
 *       control characters as \xHH, cut after 40 bytes with "..."; an empty field, from
 *       two spaces or a space at either end of the line, is got ''),
 *   "PATH:LINE: field K: N is more than 16384, the largest picture side" (IMAGE_MAX_SIDE),
 *   "PATH:LINE: field K: box x0,y0,x1,y1 is empty (expected x0 < x1 and y0 < y1)".
 * Returns 0, or -1 with err set and g empty; ground_free is safe either way, and on a
 * zeroed GroundFile. */
int ground_read(GroundFile *g, const char *path, size_t max_line_bytes, Error *err);
void ground_free(GroundFile *g);

/* Checks one line's n_boxes boxes against its caption's n_words tokens (</s> excluded)
 * and its picture's size in the file. path and line (1-based) name it. Returns 0, or -1
 * with err: "PATH:LINE: N fields, expected M (one per caption word)" or "PATH:LINE:
 * field K: box x0,y0,x1,y1 outside the W x H image" (x1 > W or y1 > H). */
int ground_check_line(const GroundBox *boxes, int n_boxes, int n_words, ImageSize orig,
                      const char *path, long line, Error *err);

/* Checks g (read from path) against an image corpus c, whose pair k came from line
 * c->line_no[k]: that line must be in g ("PATH: N lines, and the captions' file has a
 * caption on line L") and pass ground_check_line with the pair's caption and picture.
 * Returns 0, or -1 with err set. */
struct Corpus;
int ground_check_corpus(const GroundFile *g, const char *path, const struct Corpus *c,
                        Error *err);
/* The boxes of line line_no (1-based) of g, count of them into *count. */
static inline const GroundBox *ground_line(const GroundFile *g, long line_no, int *count)
{
    *count = g->count[line_no - 1];
    return g->boxes + g->start[line_no - 1];
}

#endif
