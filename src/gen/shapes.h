/* shapes.h: the synthetic captioning corpus of the image encoder (`s2s corpus shapes`,
 * issue 28): scenes of 1 to 4 objects -- a shape, a colour, a size -- in the cells of a
 * grid on black (by default 3 x 3 on 64 x 64 pixels, three shapes and four colours; the
 * look is a choice, ShapesLook, so that what the attention learns is measured on scenes
 * it was not tuned on), one canonical caption per scene that names each object and where
 * it lies from the one named before it, and for every caption word that names an object
 * (its size, colour and shape words) the pixel box of that object. Drawn from a PCG32
 * stream: a seed and a look give the same corpus everywhere. */
#ifndef S2S_SHAPES_H
#define S2S_SHAPES_H

#include <stdint.h>

#include "base/error.h"
#include "base/rng.h"

enum {
    SHAPES_MAX_OBJECTS = 4,
    SHAPES_MAX_WORDS = 40,
    SHAPES_PALETTE = 8,    /* colours a look may choose from (shapes_colour_name) */
    SHAPES_FORMS = 5,      /* shapes likewise (shapes_form_name) */
    SHAPES_MIN_CELL = 12,  /* pixels: a small object of at least 6 */
    SHAPES_MAX_SIDE = 512,
    SHAPES_MAX_GRID = 8
};

/* What the scenes look like: the picture's side, the grid's, and the colours and shapes
 * drawn, as indices into the palette and the forms (each at most once). */
typedef struct {
    int side, grid;
    int n_colours, colours[SHAPES_PALETTE];
    int n_forms, forms[SHAPES_FORMS];
} ShapesLook;

/* The default look: 64 x 64, a 3 x 3 grid of 21-pixel cells, square, circle and
 * triangle in red, green, blue and yellow. */
void shapes_default_look(ShapesLook *look);
/* The names, NULL past the end: red green blue yellow purple orange cyan white; square
 * circle triangle diamond cross. */
const char *shapes_colour_name(int k);
const char *shapes_form_name(int k);
/* Checks a look: side 32 to SHAPES_MAX_SIDE, grid 2 to SHAPES_MAX_GRID with cells of at
 * least SHAPES_MIN_CELL pixels, 2 or more colours and shapes, none twice. Returns 0, or
 * -1 with what was expected in why. */
int shapes_look_check(const ShapesLook *look, char *why, size_t cap);

typedef struct {
    int shape, colour, big; /* indices into the look's forms and colours; big 0 or 1 */
    int cell;               /* row-major cell of the grid */
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
void shapes_draw(ShapeScene *s, const ShapesLook *look, Pcg32 *rng);
/* The scene as RGB bytes (side x side x 3, row-major), black around the objects; every
 * pixel of an object lies in its box. */
void shapes_render(unsigned char *rgb, const ShapeScene *s, const ShapesLook *look);

/* Writes DIR/images/{train,valid,test}-K.png and DIR/{train,valid,test}.{src,tgt,ground}
 * (paths relative to DIR; the caption; a box x0,y0,x1,y1 or - per caption word):
 * n_train training scenes and 500 validation and test scenes each, no held-out scene
 * in train; look NULL for the default. Returns 0, or -1 with err set (an I/O failure). */
int shapes_write(const char *dir, int n_train, uint64_t seed, const ShapesLook *look,
                 Error *err);

/* The default training size of `s2s corpus shapes`. */
enum { SHAPES_DEFAULT_TRAIN = 4000, SHAPES_HELD_OUT = 500 };

#endif
