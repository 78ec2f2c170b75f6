/* grounding.h: attention scored against the boxes of the objects caption words name
 * ("attention correctness", Liu et al. 2017), for the image encoder (issue 28). A
 * picture's annotations are the G x G cells of a grid over it, row-major (cell r * G +
 * c); the attention of caption word i is a row of G * G weights; its box comes from
 * SPLIT.ground (data/ground.h).
 *
 * A word's cells: cell (r, c) covers, in the original picture of W x H pixels, x in
 * [c W / G, (c + 1) W / G) and y in [r H / G, (r + 1) H / G) (real bounds: W need not
 * be a multiple of G). A word's cells are those at least half of whose area its box
 * covers; when no cell is, the one cell it overlaps most (ties: the first, row-major).
 * For each word that names a box, pointing counts a hit when the cell the word attends
 * to most (ties: the first) is one of its cells, and mass adds the weight the word puts
 * on its cells. Both are averaged over those words. */
#ifndef S2S_GROUNDING_H
#define S2S_GROUNDING_H

#include <stddef.h>

#include "data/ground.h"
#include "data/image.h"

/* Sets cells[0 .. G * G) to 1 for box's cells in a G x G grid over a picture of size
 * orig, 0 elsewhere. Returns how many. A box that names nothing (`-`) or overlaps no
 * cell (it lies outside the picture) has none. The half-area test is exact: computed in
 * units of 1 / G pixel, where every bound is an integer. */
int grounding_cells(unsigned char *cells, int G, GroundBox box, ImageSize orig);

/* A training batch's word cells, for attention supervision (Batch.ground, which
 * batch_init_ground made room for on the G x G grid): column b holds pair bt->pair[b]
 * of corpus c, whose boxes are line c->line_no[pair] of g (checked against c); each
 * word of its caption in the batch (bt->tgt_len[b] - 1 of them: the first words of the
 * line, when the batch cut the caption) gets its box's cells, </s> and the padding
 * none. */
struct Batch;
struct Corpus;
void grounding_fill_batch(struct Batch *bt, int G, const GroundFile *g, const struct Corpus *c);

/* Sums over captions. */
typedef struct {
    long words;  /* words that name a box */
    long hits;   /* of them, those whose most-attended cell is one of theirs */
    double mass; /* the sum over them of the weight on their cells */
} GroundingCounts;

/* Adds one caption of n_words words (</s> excluded): word i's box boxes[i] and its
 * attention alpha[i * row_stride + cell * col_stride], cell 0 .. G * G - 1. */
void grounding_add(GroundingCounts *c, const float *alpha, long row_stride, long col_stride,
                   int G, const GroundBox *boxes, int n_words, ImageSize orig);

/* pointing = hits / words and mass = mass / words. Returns words; with none, 0 and both
 * scores 0 (not NaN). */
long grounding_scores(const GroundingCounts *c, double *pointing, double *mass);

/* The line "attention_correctness: pointing=0.8750 mass=0.6612 words=40" (4 decimals),
 * or with no word that names a box "attention_correctness: pointing=n/a mass=n/a
 * words=0". */
void grounding_format(const GroundingCounts *c, char *out, size_t cap);

#endif
