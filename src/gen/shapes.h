/* shapes.h: the synthetic captioning corpus of the image encoder (`s2s corpus shapes`,
 * issue 28): scenes of 1 to 4 objects -- a shape, a colour, a size -- in the cells of a
 * 3 x 3 grid on black, one canonical caption per scene that names each object and where
 * it lies from the one named before it, and for every caption word the pixel box of the
 * object it refers to. Drawn from a PCG32 stream: a seed gives the same corpus
 * everywhere. */
#ifndef S2S_SHAPES_H
#define S2S_SHAPES_H

#include <stdint.h>

#include "base/error.h"
#include "base/rng.h"

enum { SHAPES_MAX_OBJECTS = 4, SHAPES_GRID = 3, SHAPES_MAX_WORDS = 40, SHAPES_SIDE = 64 };

typedef struct {
    int shape, colour, big; /* indices of the words below; big 0 or 1 */
    int cell;               /* row-major cell of the 3 x 3 grid */
    int dx, dy;             /* its place in the cell: -2 to 2 pixels from the middle */
    int box[4];             /* x0, y0 (inclusive), x1, y1 (exclusive), pixels */
} ShapeObject;

typedef struct {
    ShapeObject obj[SHAPES_MAX_OBJECTS]; /* in reading order: by cell, row by row */
    int n;
    const char *words[SHAPES_MAX_WORDS]; /* the caption, without </s> */
    int refers[SHAPES_MAX_WORDS];        /* the object each word names, or -1 */
    int n_words;
} ShapeScene;

/* A scene of 1 to 4 objects in distinct cells, and its caption. */
void shapes_draw(ShapeScene *s, Pcg32 *rng);
/* The scene as RGB bytes (SHAPES_SIDE x SHAPES_SIDE x 3, row-major), black around the
 * objects; every pixel of an object lies in its box. */
void shapes_render(unsigned char *rgb, const ShapeScene *s);

/* Writes DIR/images/{train,valid,test}-K.png and DIR/{train,valid,test}.{src,tgt,ground}
 * (paths relative to DIR; the caption; a box x0,y0,x1,y1 or - per caption word):
 * n_train training scenes and 500 validation and test scenes each, no held-out scene
 * in train. Returns 0, or -1 with err set (an I/O failure). */
int shapes_write(const char *dir, int n_train, uint64_t seed, Error *err);

/* The default training size of `s2s corpus shapes`. */
enum { SHAPES_DEFAULT_TRAIN = 4000, SHAPES_HELD_OUT = 500 };

#endif
