/* picture.h: where a caption's words look (issue 28, Show, Attend and Tell's figure):
 * per word, the picture with that word's attention over it -- the G x G weights of the
 * grid's cells upsampled bilinearly to the picture's size, the picture darkened where
 * the word attends little and left as it is where it attends most -- in one
 * self-contained SVG file (the picture and the overlays embedded as PNG data URIs), or
 * an SVG element of an HTML page. */
#ifndef S2S_PICTURE_H
#define S2S_PICTURE_H

#include <stddef.h>
#include <stdio.h>

#include "base/error.h"
#include "data/image.h"
#include "report/alignlog.h"

/* The side pictures are shown at unless a caller asks otherwise (the paper's 224). */
enum { PICTURE_DISPLAY_SIZE = 224, PICTURE_MAX_DISPLAY_SIZE = 2048 };

/* A picture to show: size x size RGB bytes, row by row. */
typedef struct {
    int size;
    unsigned char *rgb; /* size * size * 3 bytes: R, G, B of pixel (x, y) at (y * size + x) * 3 */
    ImageSize orig;     /* its size in the file */
    char *path;         /* the file it came from */
} Picture;

/* Reads path (as data/image.h's image_load does: PNG, JPEG, PPM/PGM, resized
 * bilinearly to size x size, the aspect not kept: the square the encoder sees). Returns
 * 0, or -1 with err as image_load's, or "PATH: display size N (expected 1 to 2048)". */
int picture_load(Picture *p, const char *path, int size, Error *err);
/* Frees what picture_load allocated; safe on a zeroed Picture, and twice. */
void picture_free(Picture *p);

/* The length of n bytes in base64 (RFC 4648, padded with '='), without a NUL. */
#define PICTURE_BASE64_LEN(n) (((n) + 2) / 3 * 4)
/* Writes n bytes as base64 (RFC 4648's alphabet, padded) and a NUL to out, which holds
 * PICTURE_BASE64_LEN(n) + 1 chars. Returns PICTURE_BASE64_LEN(n). */
size_t picture_base64(char *out, const unsigned char *in, size_t n);

/* The picture as "data:image/png;base64,..." (what an HTML page embeds). Returns 0, or
 * -1 with err set (it cannot be encoded: out of memory). */
int picture_png_uri(FILE *f, const Picture *p, Error *err);

/* One word's attention as the overlay reads it: the G x G weights w (cell r * G + c is
 * row r, column c of the grid over the picture) upsampled bilinearly to size x size
 * (out[y * size + x]; cell centres at ((c + 0.5) size / G), clamped at the borders, as
 * data/image.h's image_resize maps pixels), then divided by the largest upsampled value,
 * so that a peaked and a flat map both reach 1. A weight that is negative or not finite
 * counts as 0; a map of zeros stays 0. Returns the largest weight of w (0 for none). */
float picture_attention_map(float *out, int size, const float *w, int G);

/* How dark the overlay makes a pixel where the word does not attend at all: the
 * picture's brightness there is 1 - PICTURE_SHADE of its own. */
#define PICTURE_SHADE 0.8f

/* Writes one SVG element: two caption lines saying what the panels show and how each
 * map is scaled, then panels, five to a row: the picture alone under its file's name
 * (its path and size on hover), and per word i (i < n_words) the picture with word i's
 * attention laid over it, the word under it (escaped as heatmap_xml_text does; cut with
 * an ellipsis when longer than its panel) with its largest weight, and on hover the most
 * attended cell (its index, row and column) and its weight. alpha holds n_words rows of
 * G * G weights (G >= 1), row i at alpha + i * row_stride (row_stride >= G * G); the
 * caller includes the </s> row as a last word if it wants it. The picture is embedded
 * once (a PNG data URI, drawn in each panel with <use>) and each word's overlay is an
 * 8-bit gray-and-alpha PNG of size x size: black, with alpha PICTURE_SHADE * (1 - m) for
 * the map m of picture_attention_map, so the picture shows as it is where the word
 * attends most. uid makes the SVG's ids unique within a page; with standalone, an XML
 * declaration first (the namespaces are always written), for a .svg file. Returns 0,
 * or -1 with err set when stb_image_write cannot encode a PNG (out of memory: the SVG
 * is then unfinished); the caller checks the writes to f. */
int picture_heatmap_svg(FILE *f, const Picture *p, const float *alpha, int n_words,
                        long row_stride, int G, const char *const *words, const char *uid,
                        int standalone, Error *err);

/* An image model's record of alignments.jsonl (r->image set) drawn as
 * picture_heatmap_svg draws it: the picture read from r->image at PICTURE_DISPLAY_SIZE,
 * a panel for every row of r->weights (the </s> row included) over the grid of
 * r->n_src cells. Returns 0, or -1 with err set (the picture cannot be read: nothing
 * written). */
int picture_record_svg(FILE *f, const AlignRecord *r, const char *uid, int standalone,
                       Error *err);

#endif
