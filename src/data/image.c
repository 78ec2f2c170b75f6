/* image.c: pictures read with stb_image, checked by their header first, resized
 * bilinearly (see image.h). */
#include "data/image.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stb/stb_image.h>

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

static int pnm_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Where a binary PGM or PPM's pixels start, read as stb_image reads its header: P5 or P6,
 * then width, height and maxval, each after whitespace and # comments, and one byte after
 * maxval. Debian's stb (2022-09) does not check that the pixels are all there: a file cut
 * short decodes to a picture whose missing pixels were never written (found by valgrind
 * on the fuzzers' kept corpus). Returns the offset, or -1 for a file of another format;
 * *channels gets 1 (P5) or 3 (P6). */
static long pnm_pixels_at(FILE *f, int *channels)
{
    rewind(f);
    const int p = getc(f), t = getc(f);
    if (p != 'P' || (t != '5' && t != '6'))
        return -1;
    *channels = t == '6' ? 3 : 1;
    int c = getc(f);
    for (int field = 0; field < 3; field++) { /* width, height, maxval */
        for (;;) {
            while (c != EOF && pnm_space(c))
                c = getc(f);
            if (c != '#')
                break;
            while (c != EOF && c != '\n' && c != '\r')
                c = getc(f);
        }
        while (c != EOF && c >= '0' && c <= '9')
            c = getc(f);
    }
    return ftell(f); /* past the byte after maxval, which getc read */
}

/* 0, or -1 with err set when a binary PGM or PPM of w x h holds fewer pixel bytes than
 * that takes. */
static int pnm_check_length(FILE *f, const char *path, int w, int h, Error *err)
{
    int channels;
    const long at = pnm_pixels_at(f, &channels);
    if (at < 0 || fseek(f, 0, SEEK_END) != 0)
        return 0;
    const long long have = (long long)ftell(f) - at, need = (long long)w * h * channels;
    if (have < need)
        return error_set(err, "%s: cut short: %lld bytes of pixels, where %d x %d takes %lld",
                         path, have < 0 ? 0 : have, w, h, need), -1;
    return 0;
}

int image_size_of(const char *path, ImageSize *out, Error *err)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) { /* fopen opens one */
        fclose(f);
        f = NULL;
        errno = EISDIR;
    }
    if (!f)
        return error_errno(err, "cannot open image", path), -1;
    int w = 0, h = 0, channels = 0;
    int ok = stbi_info_from_file(f, &w, &h, &channels);
    /* a PNG stb_image refuses may still say its size, and that size be why */
    const int png_sized = !ok && png_header_size(f, &w, &h);
    if (png_sized && (w > IMAGE_MAX_SIDE || h > IMAGE_MAX_SIDE || w < 1 || h < 1))
        ok = 1; /* judged by its size below */
    /* 16 bits a channel: not an input this tool takes, and the path of Debian's stb
     * (2022-09) that reads beyond a truncated 16-bit PGM's data (found by make fuzz) */
    const int deep = ok && stbi_is_16_bit_from_file(f);
    int rc = -1;
    if (!ok)
        error_set(err, "%s: not an image (expected PNG, JPEG or PPM/PGM): %s", path,
                  stbi_failure_reason());
    else if (deep)
        error_set(err, "%s: 16 bits a channel (expected 8-bit PNG, JPEG or PPM/PGM)", path);
    else if (w > IMAGE_MAX_SIDE || h > IMAGE_MAX_SIDE)
        error_set(err, "%s: %d x %d pixels, more than %d on a side", path, w, h, IMAGE_MAX_SIDE);
    else if (w < 1 || h < 1)
        error_set(err, "%s: %d x %d pixels (expected at least 1 x 1)", path, w, h);
    else
        rc = pnm_check_length(f, path, w, h, err);
    fclose(f);
    if (rc == 0)
        *out = (ImageSize){w, h};
    return rc;
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

/* Where the resampling reads its input: float planes (channels, h, w), or a decoder's
 * interleaved bytes (h, w, n) read as planes R, G, B in [0, 1]. */
typedef struct {
    const float *planes;
    const unsigned char *bytes;
    int n; /* bytes' channels: 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA */
    int w, h;
} Source;

static float source_at(const Source *s, int c, int y, int x)
{
    const size_t at = (size_t)y * s->w + x;
    if (s->planes)
        return s->planes[(size_t)c * s->w * s->h + at];
    /* gray gives each of R, G, B its one value, alpha is dropped: what stb_image's own
     * conversion to RGB does, so the floats are those of a decode to 3 channels */
    return (float)s->bytes[at * s->n + (s->n < 3 ? 0 : c)] / 255.0f;
}

static void resample(float *out, int size, const Source *s, int channels)
{
    const int w = s->w, h = s->h;
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
                const float top = source_at(s, c, y0, x0) * (1 - tx) + source_at(s, c, y0, x1) * tx;
                const float bottom =
                    source_at(s, c, y1, x0) * (1 - tx) + source_at(s, c, y1, x1) * tx;
                out[((size_t)c * size + y) * size + x] = top * (1 - ty) + bottom * ty;
            }
        }
    }
}

void image_resize(float *out, int size, const float *in, int channels, int w, int h)
{
    resample(out, size, &(Source){.planes = in, .w = w, .h = h}, channels);
}

int image_load(float *out, const char *path, int size, int resize, ImageSize *orig, Error *err)
{
    ImageSize s;
    if (image_size_of(path, &s, err) < 0)
        return -1;
    if (!resize && (s.width != size || s.height != size))
        return error_set(err, "%s: %d x %d pixels, not %d x %d (data.image_resize: false)", path,
                         s.width, s.height, size, size), -1;
    /* the channels the file holds, not converted to RGB: a conversion would hold a second
     * copy of the whole picture while stb_image makes it */
    int w, h, n;
    unsigned char *bytes = stbi_load(path, &w, &h, &n, 0);
    if (!bytes)
        return error_set(err, "%s: cannot decode: %s", path, stbi_failure_reason()), -1;
    assert(n >= 1 && n <= 4);
    if (w != s.width || h != s.height) { /* the file changed between the two reads */
        stbi_image_free(bytes);
        return error_set(err, "%s: the header said %d x %d, the pixels are %d x %d", path,
                         s.width, s.height, w, h), -1;
    }
    /* resized straight from the decoder's bytes: a picture at 16384 pixels a side as
     * floats would take 3 GiB beside them */
    resample(out, size, &(Source){.bytes = bytes, .n = n, .w = w, .h = h}, 3);
    stbi_image_free(bytes);
    *orig = s;
    return 0;
}
