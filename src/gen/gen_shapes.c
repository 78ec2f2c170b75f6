/* gen_shapes.c: scenes of shapes on a grid, their captions and boxes, written as PNG
 * pictures with stb_image_write (see shapes.h). */
#include "gen/shapes.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stb/stb_image_write.h>

#include "base/mem.h"
#include "data/vocab.h"

static const char *const FORMS[SHAPES_FORMS] = {"square", "circle", "triangle", "diamond",
                                               "cross"};
static const char *const COLOURS[SHAPES_PALETTE] = {"red",    "green",  "blue", "yellow",
                                                    "purple", "orange", "cyan", "white"};
static const char *const SIZES[] = {"small", "big"};
static const unsigned char RGB[SHAPES_PALETTE][3] = {
    {220, 40, 40},  {40, 200, 60},  {50, 80, 230},  {230, 210, 40},
    {150, 60, 210}, {240, 140, 30}, {40, 200, 210}, {235, 235, 235}};

const char *shapes_colour_name(int k)
{
    return k >= 0 && k < SHAPES_PALETTE ? COLOURS[k] : NULL;
}

const char *shapes_form_name(int k)
{
    return k >= 0 && k < SHAPES_FORMS ? FORMS[k] : NULL;
}

void shapes_default_look(ShapesLook *look)
{
    memset(look, 0, sizeof *look);
    look->side = 64, look->grid = 3;
    look->n_colours = 4, look->n_forms = 3;
    for (int k = 0; k < 4; k++)
        look->colours[k] = k;
    for (int k = 0; k < 3; k++)
        look->forms[k] = k;
}

/* Whether list[0..n) holds each of its values once, all in [0, range). */
static int distinct_indices(const int *list, int n, int range)
{
    for (int a = 0; a < n; a++) {
        if (list[a] < 0 || list[a] >= range)
            return 0;
        for (int b = 0; b < a; b++)
            if (list[a] == list[b])
                return 0;
    }
    return 1;
}

int shapes_look_check(const ShapesLook *look, char *why, size_t cap)
{
    if (look->side < 32 || look->side > SHAPES_MAX_SIDE)
        snprintf(why, cap, "a picture side from 32 to %d pixels, got %d", SHAPES_MAX_SIDE,
                 look->side);
    else if (look->grid < 2 || look->grid > SHAPES_MAX_GRID ||
             look->side / look->grid < SHAPES_MIN_CELL)
        snprintf(why, cap, "a grid from 2 to %d with cells of at least %d pixels, got %d "
                 "on %d pixels", SHAPES_MAX_GRID, SHAPES_MIN_CELL, look->grid, look->side);
    else if (look->n_colours < 2 || look->n_colours > SHAPES_PALETTE ||
             !distinct_indices(look->colours, look->n_colours, SHAPES_PALETTE))
        snprintf(why, cap, "2 to %d distinct colours", SHAPES_PALETTE);
    else if (look->n_forms < 2 || look->n_forms > SHAPES_FORMS ||
             !distinct_indices(look->forms, look->n_forms, SHAPES_FORMS))
        snprintf(why, cap, "2 to %d distinct shapes", SHAPES_FORMS);
    else
        return 0;
    return -1;
}

/* A grid cell's side in pixels: the grid takes grid x cell of the picture (the rest of
 * the last row and column stays black; 3 x 21 of 64 by default). */
static int cell_side(const ShapesLook *look)
{
    return look->side / look->grid;
}

static void object_box(ShapeObject *o, const ShapesLook *look)
{
    const int cell = cell_side(look);
    const int row = o->cell / look->grid, col = o->cell % look->grid;
    const int x = col * cell, y = row * cell;
    /* big fills the cell but a margin of a tenth, small keeps 2/7 each side (in 21-pixel
     * cells: 17 x 17 and 9 x 9), in the middle of the cell give or take 2 pixels (so
     * that a one-object scene of the default look is one of 5400, and the held-out
     * scenes leave train most of them) */
    const int margin = o->big ? (cell / 10 > 2 ? cell / 10 : 2) : cell * 2 / 7;
    o->box[0] = x + margin + o->dx, o->box[1] = y + margin + o->dy;
    o->box[2] = x + cell - margin + o->dx, o->box[3] = y + cell - margin + o->dy;
}

/* The caption's words: "a big red circle and right of it a small blue square ...". */
static void caption(ShapeScene *s, const ShapesLook *look)
{
    const int G = look->grid;
    s->n_words = 0;
#define WORD(w, ref) (s->words[s->n_words] = (w), s->refers[s->n_words++] = (ref))
    for (int k = 0; k < s->n; k++) {
        const ShapeObject *o = &s->obj[k];
        if (k > 0) {
            const ShapeObject *before = &s->obj[k - 1];
            const int dr = o->cell / G - before->cell / G;
            const int dc = o->cell % G - before->cell % G;
            WORD("and", -1);
            if (dr == 0) { /* reading order: the same row means further right */
                WORD("right", -1);
                WORD("of", -1);
            } else {
                WORD("below", -1);
                if (dc)
                    WORD(dc < 0 ? "left" : "right", -1);
                if (dc)
                    WORD("of", -1);
            }
            /* "it" carries no box: the grammar decides it (it always follows "of" or a
             * bare "below"), no picture changes it, so its step needs nothing from the
             * picture and what the attention does there says nothing of where the
             * words are (scripts/experiments/shapes-experiment/README.md, issue 45) */
            WORD("it", -1);
        }
        WORD("a", -1);
        WORD(SIZES[o->big], k);
        WORD(COLOURS[look->colours[o->colour]], k);
        WORD(FORMS[look->forms[o->shape]], k);
    }
    WORD(".", -1);
#undef WORD
}

void shapes_draw(ShapeScene *s, const ShapesLook *look, Pcg32 *rng)
{
    const int cells_n = look->grid * look->grid;
    memset(s, 0, sizeof *s);
    s->n = 1 + (int)pcg32_below(rng, SHAPES_MAX_OBJECTS);
    /* distinct cells, then in reading order */
    int cells[SHAPES_MAX_GRID * SHAPES_MAX_GRID];
    for (int c = 0; c < cells_n; c++)
        cells[c] = c;
    for (int k = 0; k < s->n; k++) {
        const int pick = k + (int)pcg32_below(rng, (uint32_t)(cells_n - k));
        const int t = cells[k];
        cells[k] = cells[pick], cells[pick] = t;
    }
    for (int a = 1; a < s->n; a++) /* insertion sort of the few chosen cells */
        for (int b = a; b > 0 && cells[b] < cells[b - 1]; b--) {
            const int t = cells[b];
            cells[b] = cells[b - 1], cells[b - 1] = t;
        }
    for (int k = 0; k < s->n; k++) {
        ShapeObject *o = &s->obj[k];
        o->cell = cells[k];
        o->shape = (int)pcg32_below(rng, (uint32_t)look->n_forms);
        o->colour = (int)pcg32_below(rng, (uint32_t)look->n_colours);
        o->big = (int)pcg32_below(rng, 2);
        o->dx = (int)pcg32_below(rng, 5) - 2;
        o->dy = (int)pcg32_below(rng, 5) - 2;
        object_box(o, look);
    }
    caption(s, look);
}

/* Whether pixel (x, y) of box b belongs to form (FORMS' index): a square fills the box,
 * a circle is inscribed in it, a triangle stands on its bottom edge with its apex at the
 * top middle, a diamond has its corners at the edges' middles, a cross is a plus sign of
 * bars a third of the box wide. */
static int covers(int form, const int *b, int x, int y)
{
    const int w = b[2] - b[0], h = b[3] - b[1];
    const double u = (x - b[0] + 0.5) / w, v = (y - b[1] + 0.5) / h; /* in (0, 1) */
    const double du = fabs(u - 0.5), dv = fabs(v - 0.5);
    switch (form) {
    case 0:
        return 1;
    case 1:
        return du * du + dv * dv <= 0.25;
    case 2:
        return u >= 0.5 - v / 2 && u <= 0.5 + v / 2;
    case 3:
        return du + dv <= 0.5;
    default:
        return du <= 1.0 / 6 || dv <= 1.0 / 6;
    }
}

void shapes_render(unsigned char *rgb, const ShapeScene *s, const ShapesLook *look)
{
    const size_t side = (size_t)look->side;
    memset(rgb, 0, side * side * 3);
    for (int k = 0; k < s->n; k++) {
        const ShapeObject *o = &s->obj[k];
        for (int y = o->box[1]; y < o->box[3]; y++)
            for (int x = o->box[0]; x < o->box[2]; x++)
                if (covers(look->forms[o->shape], o->box, x, y))
                    memcpy(rgb + ((size_t)y * side + x) * 3, RGB[look->colours[o->colour]], 3);
    }
}

/* The scene as one string: the key that keeps held-out scenes out of train. */
static void scene_key(const ShapeScene *s, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; k < s->n && used + 1 < cap; k++)
        used += (size_t)snprintf(out + used, cap - used, "%d:%d:%d:%d:%d:%d ", s->obj[k].cell,
                                 s->obj[k].shape, s->obj[k].colour, s->obj[k].big, s->obj[k].dx,
                                 s->obj[k].dy);
}

/* One scene's picture and its three lines. Returns 0, or -1 with err set. */
static int write_scene(const ShapeScene *s, const ShapesLook *look, const char *dir,
                       const char *split, int k, FILE *const *files, unsigned char *rgb,
                       Error *err)
{
    char rel[64], path[4200];
    snprintf(rel, sizeof rel, "images/%s-%d.png", split, k + 1);
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    shapes_render(rgb, s, look);
    if (!stbi_write_png(path, look->side, look->side, 3, rgb, look->side * 3))
        return error_errno(err, "cannot write", path);
    fprintf(files[0], "%s\n", rel);
    for (int w = 0; w < s->n_words; w++) {
        fprintf(files[1], "%s%s", w ? " " : "", s->words[w]);
        const int r = s->refers[w];
        if (r < 0)
            fprintf(files[2], "%s-", w ? " " : "");
        else
            fprintf(files[2], "%s%d,%d,%d,%d", w ? " " : "", s->obj[r].box[0], s->obj[r].box[1],
                    s->obj[r].box[2], s->obj[r].box[3]);
    }
    fputc('\n', files[1]);
    fputc('\n', files[2]);
    return 0;
}

/* Opens (mode "w") or closes (mode NULL) the split's three text files. */
static int split_files(FILE **files, const char *dir, const char *split, const char *mode,
                       Error *err)
{
    static const char *const EXT[3] = {"src", "tgt", "ground"};
    int rc = 0;
    for (int e = 0; e < 3; e++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.%s", dir, split, EXT[e]);
        if (mode) {
            if (!(files[e] = fopen(path, mode)) && rc == 0)
                rc = error_errno(err, "cannot write", path);
        } else if (files[e]) {
            const int clean = ferror(files[e]) == 0;
            if ((fclose(files[e]) != 0 || !clean) && rc == 0)
                rc = error_errno(err, "cannot write", path);
            files[e] = NULL;
        }
    }
    return rc;
}

int shapes_write(const char *dir, int n_train, uint64_t seed, const ShapesLook *look,
                 Error *err)
{
    ShapesLook default_look;
    if (!look)
        shapes_default_look(&default_look), look = &default_look;
    char images[4200];
    snprintf(images, sizeof images, "%s/images", dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return error_errno(err, "cannot create", dir);
    if (mkdir(images, 0777) != 0 && errno != EEXIST)
        return error_errno(err, "cannot create", images);
    Pcg32 rng;
    pcg32_seed(&rng, seed, RNG_STREAM_DATA);
    ShapeScene *s = xmalloc(sizeof *s);
    unsigned char *rgb = xmalloc((size_t)look->side * look->side * 3);
    Vocab held_out; /* the held-out scenes, kept out of train (and apart) */
    vocab_init(&held_out);
    static const char *const SPLITS[3] = {"valid", "test", "train"};
    const int sizes[3] = {SHAPES_HELD_OUT, SHAPES_HELD_OUT, n_train};
    char key[128];
    int rc = 0;
    for (int sp = 0; sp < 3 && rc == 0; sp++) {
        FILE *files[3] = {NULL, NULL, NULL};
        rc = split_files(files, dir, SPLITS[sp], "w", err);
        for (int k = 0; k < sizes[sp] && rc == 0;) {
            shapes_draw(s, look, &rng);
            scene_key(s, key, sizeof key);
            if (vocab_find(&held_out, key) >= 0)
                continue; /* held-out scenes are distinct, and none is in train */
            if (sp < 2)
                vocab_count(&held_out, key);
            rc = write_scene(s, look, dir, SPLITS[sp], k, files, rgb, err);
            k++;
        }
        Error ignored; /* the first error is the one to report */
        const int closed = split_files(files, dir, SPLITS[sp], NULL, rc ? &ignored : err);
        if (rc == 0)
            rc = closed;
    }
    vocab_free(&held_out);
    free(rgb);
    free(s);
    return rc;
}
