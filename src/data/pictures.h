/* pictures.h: the pictures of an image corpus (model.encoder: image), one per pair:
 * where each is (a .src line's path, relative to the .src file's folder unless absolute),
 * its size in the file, and the pictures decoded and resized once, kept in memory up to
 * a budget. Those past the budget are decoded again each time a batch needs them, so a
 * corpus of any size trains in bounded memory: at 64 x 64 pixels a picture takes 48 KiB,
 * and the default budget (PICTURES_CACHE_BYTES) holds some 43,000 of them. */
#ifndef S2S_PICTURES_H
#define S2S_PICTURES_H

#include <stddef.h>
#include <stdio.h>

#include "base/error.h"
#include "data/image.h"

/* 2 GiB of decoded pictures at most, by default. */
#define PICTURES_CACHE_BYTES ((size_t)2 << 30)

typedef struct {
    int n, cap;
    char **paths;        /* (n) each picture's file, as an absolute path */
    ImageSize *orig;     /* (n) its size in the file */
    int size, resize;    /* data.image_size, data.image_resize */
    int cached;          /* the first `cached` pictures are in cache */
    float *cache;        /* (cached, 3, size, size) planes R, G, B in [0, 1] */
    double mean[3];      /* each channel's mean over every pixel of every picture */
} Pictures;

/* An empty set for pictures resized (or, without resize, required to be) size x size. */
void pictures_init(Pictures *p, int size, int resize);
void pictures_free(Pictures *p);

/* Adds the picture named on line line_no of list_path (its text `path`, len bytes),
 * after checking its header: exists, is an image, of a size allowed. Errors are
 * "LIST:LINE: PICTURE: what is wrong". Returns 0, or -1 with err set. */
int pictures_add(Pictures *p, const char *list_path, long line_no, const char *path, size_t len,
                 Error *err);

/* Where and how often a long decode shows how far it is: on to (a terminal; NULL: not
 * at all), every `every` seconds. */
typedef struct {
    FILE *to;
    double every;
} PicturesProgress;

/* Decodes every picture once: the first ones up to cache_bytes are kept, the channel
 * means are taken over all. An error names the list's line (line_no[k] for picture k);
 * a signal (interrupt_pending) stops it between two pictures: "LIST:LINE: decoding the
 * pictures stopped by signal N (K of M decoded)". Shows its progress as `progress` says.
 * Returns 0, or -1 with err set. */
int pictures_load(Pictures *p, const char *list_path, const long *line_no, size_t cache_bytes,
                  PicturesProgress progress, Error *err);

/* Picture k as the model reads it: out (size, size, 3) channels last, each channel less
 * mean[c]. Decodes it again if it is past the cache; returns 0, or -1 with err set if
 * that fails (the file changed since pictures_load). */
int pictures_get(const Pictures *p, int k, const double mean[3], float *out, Error *err);

/* A picture's planes (3, size, size) as the model reads them: out (size, size, 3),
 * channels last, each channel less mean[c]. */
void picture_channels_last(float *out, const float *planes, int size, const double mean[3]);

/* The picture at path as a model of this size reads it (image_load's resizing or
 * refusal, then picture_channels_last): out holds size * size * 3. Returns 0, or -1 with
 * image_load's err. For pictures read one at a time (translate, explain). */
int picture_read_input(float *out, const char *path, int size, int resize, const double mean[3],
                       Error *err);

#endif
