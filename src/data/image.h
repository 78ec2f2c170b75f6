/* image.h: pictures for the image encoder (issue 28): PNG (8-bit gray, RGB, RGBA), JPEG
 * and PPM/PGM, read with stb_image (Debian's libstb: a decoder we do not write), checked
 * by their header before a byte is decoded, and resized to size x size (bilinear, the
 * aspect not kept) as floats in [0, 1], one plane per channel: (3, size, size). */
#ifndef S2S_IMAGE_H
#define S2S_IMAGE_H

#include "base/error.h"

/* The largest side accepted: a picture's header says its size, and a larger one is
 * refused before decoding (decoding would allocate width x height x 4 bytes). */
#define IMAGE_MAX_SIDE 16384

typedef struct {
    int width, height;
} ImageSize;

/* The size path's header gives. Returns 0, or -1 with err: "PATH: cannot open ...",
 * "PATH: not an image (expected PNG, JPEG or PPM/PGM): REASON", "PATH: W x H pixels, more
 * than 16384 on a side", "PATH: 0 x H pixels (expected at least 1 x 1)", "PATH: 16 bits
 * a channel (expected 8-bit PNG, JPEG or PPM/PGM)". */
int image_size_of(const char *path, ImageSize *out, Error *err);

/* Decodes path into out (3 * size * size floats in [0, 1], planes R, G, B; a gray
 * picture gives three equal planes, an alpha channel is dropped), resized when resize is
 * set, else refused unless it is size x size already ("PATH: W x H pixels, not S x S
 * (data.image_resize: false)"). *orig gets its size in the file. Returns 0, or -1 with
 * err as image_size_of's, or "PATH: cannot decode: REASON" for a damaged body. */
int image_load(float *out, const char *path, int size, int resize, ImageSize *orig, Error *err);

/* Bilinear resampling of a (channels, h, w) float picture to (channels, size, size):
 * each output pixel's centre mapped to the input's coordinates, (x + 0.5) w / size - 0.5,
 * clamped at the borders. */
void image_resize(float *out, int size, const float *in, int channels, int w, int h);

#endif
