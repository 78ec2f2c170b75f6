/* grounding.c: attention correctness against word boxes (see grounding.h). */
#include "report/grounding.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "data/corpus.h"

/* The length of [a0, a1) & [b0, b1), or 0. */
static double overlap(double a0, double a1, double b0, double b1)
{
    const double lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

int grounding_cells(unsigned char *cells, int G, GroundBox box, ImageSize orig)
{
    if (G <= 0)
        return 0;
    const int n = G * G;
    for (int k = 0; k < n; k++)
        cells[k] = 0;
    if (!ground_names(&box))
        return 0;
    /* Units of 1 / G pixel: cell (r, c) is [c W, (c + 1) W) x [r H, (r + 1) H), the box
     * [x0 G, x1 G) x [y0 G, y1 G). Every value is an integer, and for G up to 5000 the
     * products are below 2^53 too: all exact, so a box that covers exactly half a cell
     * is in (in pixels, 5 - 10/3 against half of 10/3 would be decided by rounding). */
    const double W = orig.width, H = orig.height;
    const double area = W * H;
    const double bx0 = (double)box.x0 * G, bx1 = (double)box.x1 * G;
    const double by0 = (double)box.y0 * G, by1 = (double)box.y1 * G;
    int count = 0, best = -1;
    double best_overlap = 0;
    for (int r = 0; r < G; r++)
        for (int c = 0; c < G; c++) {
            const double o = overlap(c * W, (c + 1) * W, bx0, bx1) *
                             overlap(r * H, (r + 1) * H, by0, by1);
            if (2 * o >= area) {
                cells[r * G + c] = 1;
                count++;
            }
            if (o > best_overlap) {
                best_overlap = o;
                best = r * G + c;
            }
        }
    if (count == 0 && best >= 0) {
        cells[best] = 1;
        count = 1;
    }
    return count;
}

void grounding_fill_batch(Batch *bt, int G, const GroundFile *g, const Corpus *c)
{
    const int B = bt->batch_size, cells = bt->ground_cells;
    assert(bt->ground && cells == G * G);
    for (int i = 0; i < bt->tgt_steps; i++)
        for (int b = 0; b < B; b++) {
            unsigned char *out = bt->ground + ((size_t)i * B + b) * cells;
            const int pair = bt->pair[b];
            int n_boxes;
            const GroundBox *boxes = ground_line(g, c->line_no[pair], &n_boxes);
            if (i < bt->tgt_len[b] - 1 && i < n_boxes)
                grounding_cells(out, G, boxes[i], c->pics.orig[pair]);
            else /* </s>, and the steps past the caption */
                memset(out, 0, (size_t)cells);
        }
}

void grounding_add(GroundingCounts *c, const float *alpha, long row_stride, long col_stride,
                   int G, const GroundBox *boxes, int n_words, ImageSize orig)
{
    if (G <= 0)
        return;
    const int n = G * G;
    unsigned char *cells = xmalloc((size_t)n);
    for (int i = 0; i < n_words; i++) {
        if (!ground_names(&boxes[i]))
            continue;
        const float *row = alpha + (long)i * row_stride;
        grounding_cells(cells, G, boxes[i], orig);
        int most = 0;
        double mass = 0;
        for (int k = 0; k < n; k++) {
            if (row[k * col_stride] > row[most * col_stride])
                most = k;
            if (cells[k])
                mass += row[k * col_stride];
        }
        c->words++;
        c->hits += cells[most];
        c->mass += mass;
    }
    free(cells);
}

long grounding_scores(const GroundingCounts *c, double *pointing, double *mass)
{
    *pointing = c->words ? (double)c->hits / (double)c->words : 0;
    *mass = c->words ? c->mass / (double)c->words : 0;
    return c->words;
}

void grounding_format(const GroundingCounts *c, char *out, size_t cap)
{
    double pointing, mass;
    if (grounding_scores(c, &pointing, &mass) == 0)
        snprintf(out, cap, "attention_correctness: pointing=n/a mass=n/a words=0");
    else
        snprintf(out, cap, "attention_correctness: pointing=%.4f mass=%.4f words=%ld", pointing,
                 mass, c->words);
}
