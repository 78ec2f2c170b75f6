/* image.c: pictures read with stb_image, checked by their header first, resized
 * bilinearly (see image.h). */
#include "data/image.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stb/stb_image.h>

#include "base/mem.h"

/* A PNG's size from its header (the signature, then IHDR's width and height, big-endian)
 * when stb_image will not give it: stbi_info refuses a PNG whose pixels would take over
 * 2^30 bytes with a reason the formats it tries next overwrite ("unknown image type").
 * Returns 1 with the size, or 0 for a file that does not start as a PNG. */
static int png_header_size(FILE *f, int *w, int *h)
{
    static const unsigned char SIGNATURE[12] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n',
                                                0, 0, 0, 13};
    unsigned char b[24];
    rewind(f);
    if (fread(b, 1, sizeof b, f) != sizeof b || memcmp(b, SIGNATURE, sizeof SIGNATURE) ||
        memcmp(b + 12, "IHDR", 4))
        return 0;
    unsigned long x = 0, y = 0;
    for (int k = 0; k < 4; k++) {
        x = x << 8 | b[16 + k];
        y = y << 8 | b[20 + k];
    }
    /* past the largest side allowed is all a caller needs to know of a larger one */
    *w = x > (unsigned long)INT32_MAX ? INT32_MAX : (int)x;
    *h = y > (unsigned long)INT32_MAX ? INT32_MAX : (int)y;
    return 1;
}

int image_size_of(const char *path, ImageSize *out, Error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return error_errno(err, "cannot open image", path), -1;
    int w = 0, h = 0, channels = 0;
    int ok = stbi_info_from_file(f, &w, &h, &channels);
    if (!ok && png_header_size(f, &w, &h) && (w > IMAGE_MAX_SIDE || h > IMAGE_MAX_SIDE)) {
        fclose(f);
        return error_set(err, "%s: %d x %d pixels, more than %d on a side", path, w, h,
                         IMAGE_MAX_SIDE), -1;
    }
    /* 16 bits a channel: not an input this tool takes, and the path of Debian's stb
     * (2022-09) that reads beyond a truncated 16-bit PGM's data (found by make fuzz) */
    const int deep = ok && stbi_is_16_bit_from_file(f);
    fclose(f);
    if (!ok)
        return error_set(err, "%s: not an image (expected PNG, JPEG or PPM/PGM): %s", path,
                         stbi_failure_reason()), -1;
    if (deep)
        return error_set(err, "%s: 16 bits a channel (expected 8-bit PNG, JPEG or PPM/PGM)",
                         path), -1;
    if (w > IMAGE_MAX_SIDE || h > IMAGE_MAX_SIDE)
        return error_set(err, "%s: %d x %d pixels, more than %d on a side", path, w, h,
                         IMAGE_MAX_SIDE), -1;
    if (w < 1 || h < 1)
        return error_set(err, "%s: %d x %d pixels (expected at least 1 x 1)", path, w, h), -1;
    *out = (ImageSize){w, h};
    return 0;
}

/* One coordinate of bilinear resampling: the input's lower index and the weight of the
 * upper one, for output index x of `size` over an input of n. */
static void source_of(int x, int size, int n, int *lo, float *t)
{
    float at = ((float)x + 0.5f) * (float)n / (float)size - 0.5f;
    if (at < 0)
        at = 0;
    if (at > (float)(n - 1))
        at = (float)(n - 1);
    *lo = (int)at;
    if (*lo > n - 2)
        *lo = n > 1 ? n - 2 : 0;
    *t = n > 1 ? at - (float)*lo : 0;
}

void image_resize(float *out, int size, const float *in, int channels, int w, int h)
{
    for (int y = 0; y < size; y++) {
        int y0;
        float ty;
        source_of(y, size, h, &y0, &ty);
        const int y1 = h > 1 ? y0 + 1 : y0;
        for (int x = 0; x < size; x++) {
            int x0;
            float tx;
            source_of(x, size, w, &x0, &tx);
            const int x1 = w > 1 ? x0 + 1 : x0;
            for (int c = 0; c < channels; c++) {
                const float *p = in + (size_t)c * w * h;
                const float top = p[(size_t)y0 * w + x0] * (1 - tx) + p[(size_t)y0 * w + x1] * tx;
                const float bottom = p[(size_t)y1 * w + x0] * (1 - tx) + p[(size_t)y1 * w + x1] * tx;
                out[((size_t)c * size + y) * size + x] = top * (1 - ty) + bottom * ty;
            }
        }
    }
}

int image_load(float *out, const char *path, int size, int resize, ImageSize *orig, Error *err)
{
    ImageSize s;
    if (image_size_of(path, &s, err) < 0)
        return -1;
    if (!resize && (s.width != size || s.height != size))
        return error_set(err, "%s: %d x %d pixels, not %d x %d (data.image_resize: false)", path,
                         s.width, s.height, size, size), -1;
    int w, h, channels;
    unsigned char *pixels = stbi_load(path, &w, &h, &channels, 3); /* RGB whatever it holds */
    if (!pixels)
        return error_set(err, "%s: cannot decode: %s", path, stbi_failure_reason()), -1;
    if (w != s.width || h != s.height) { /* the file changed between the two reads */
        stbi_image_free(pixels);
        return error_set(err, "%s: the header said %d x %d, the pixels are %d x %d", path,
                         s.width, s.height, w, h), -1;
    }
    /* (h, w, 3) bytes into planes (3, h, w) of [0, 1], then to (3, size, size) */
    float *planes = xmalloc_array((size_t)3 * w * h, sizeof(float));
    for (size_t k = 0; k < (size_t)w * h; k++)
        for (int c = 0; c < 3; c++)
            planes[(size_t)c * w * h + k] = (float)pixels[k * 3 + c] / 255.0f;
    stbi_image_free(pixels);
    image_resize(out, size, planes, 3, w, h);
    free(planes);
    *orig = s;
    return 0;
}
