/* test_image.c: the picture loader of the image encoder (data/image.h): each format it
 * reads gives the pixels it holds, resizing is bilinear and exact at the same size, and
 * every kind of bad file is refused by name, a giant one from its header alone. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stb/stb_image_write.h>

#include "data/image.h"
#include "data/pictures.h"
#include "support/cli.h"
#include "support/suites.h"

/* A w x h RGB picture whose pixel (x, y) is (10x + 3y, 200 - 7x, 5y) (bytes). */
static unsigned char *pattern(int w, int h)
{
    unsigned char *p = malloc((size_t)w * h * 3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned char *q = p + ((size_t)y * w + x) * 3;
            q[0] = (unsigned char)(10 * x + 3 * y);
            q[1] = (unsigned char)(200 - 7 * x);
            q[2] = (unsigned char)(5 * y);
        }
    return p;
}

/* Loads path at its own size (no resizing) and checks every value against pattern. */
static void assert_pattern(const char *path, int w, int gray)
{
    float out[3 * 16 * 16];
    ImageSize orig;
    Error err;
    ck_assert_msg(image_load(out, path, w, 0, &orig, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(orig.width, w);
    ck_assert_int_eq(orig.height, w);
    unsigned char *want = pattern(w, w);
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < w * w; k++) {
            /* a gray picture holds the first channel in all three */
            const float v = want[k * 3 + (gray ? 0 : c)] / 255.0f;
            ck_assert_float_eq(out[c * w * w + k], v);
        }
    free(want);
}

START_TEST(png_ppm_and_pgm_give_the_pixels_they_hold)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "image-formats");
    enum { W = 6 };
    unsigned char *rgb = pattern(W, W);
    snprintf(path, sizeof path, "%s/rgb.png", dir);
    ck_assert(stbi_write_png(path, W, W, 3, rgb, W * 3));
    assert_pattern(path, W, 0);
    /* RGBA: the alpha channel is dropped */
    unsigned char rgba[W * W * 4], gray[W * W];
    for (int k = 0; k < W * W; k++) {
        memcpy(rgba + k * 4, rgb + k * 3, 3);
        rgba[k * 4 + 3] = (unsigned char)(k * 7);
        gray[k] = rgb[k * 3];
    }
    snprintf(path, sizeof path, "%s/rgba.png", dir);
    ck_assert(stbi_write_png(path, W, W, 4, rgba, W * 4));
    assert_pattern(path, W, 0);
    snprintf(path, sizeof path, "%s/gray.png", dir);
    ck_assert(stbi_write_png(path, W, W, 1, gray, W));
    assert_pattern(path, W, 1);
    /* gray + alpha: the gray in all three, the alpha dropped */
    unsigned char gray_alpha[W * W * 2];
    for (int k = 0; k < W * W; k++)
        gray_alpha[k * 2] = gray[k], gray_alpha[k * 2 + 1] = (unsigned char)(255 - k);
    snprintf(path, sizeof path, "%s/gray-alpha.png", dir);
    ck_assert(stbi_write_png(path, W, W, 2, gray_alpha, W * 2));
    assert_pattern(path, W, 1);
    /* PPM (P6) and PGM (P5), written by hand */
    snprintf(path, sizeof path, "%s/rgb.ppm", dir);
    FILE *f = fopen(path, "wb");
    fprintf(f, "P6\n%d %d\n255\n", W, W);
    fwrite(rgb, 1, W * W * 3, f);
    fclose(f);
    assert_pattern(path, W, 0);
    snprintf(path, sizeof path, "%s/gray.pgm", dir);
    f = fopen(path, "wb");
    fprintf(f, "P5\n%d %d\n255\n", W, W);
    fwrite(gray, 1, W * W, f);
    fclose(f);
    assert_pattern(path, W, 1);
    /* JPEG is lossy: a flat colour comes back within a few levels */
    unsigned char flat[16 * 16 * 3];
    for (int k = 0; k < 16 * 16; k++)
        flat[k * 3] = 200, flat[k * 3 + 1] = 40, flat[k * 3 + 2] = 90;
    snprintf(path, sizeof path, "%s/flat.jpg", dir);
    ck_assert(stbi_write_jpg(path, 16, 16, 3, flat, 95));
    float out[3 * 16 * 16];
    ImageSize orig;
    Error err;
    ck_assert_msg(image_load(out, path, 16, 0, &orig, &err) == 0, "%s", err.msg);
    for (int k = 0; k < 16 * 16; k++) {
        ck_assert_float_eq_tol(out[k], 200 / 255.0f, 4 / 255.0f);
        ck_assert_float_eq_tol(out[256 + k], 40 / 255.0f, 4 / 255.0f);
        ck_assert_float_eq_tol(out[512 + k], 90 / 255.0f, 4 / 255.0f);
    }
    free(rgb);
}
END_TEST

/* Bilinear: the same size is the identity; an affine picture stays affine; half size
 * averages each 2 x 2 block (centres fall between pixels). */
START_TEST(resizing_is_bilinear)
{
    enum { N = 8 };
    float in[N * N], out[N * N], small[4 * 4], big[16 * 16];
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++)
            in[y * N + x] = 0.1f * x + 0.02f * y;
    image_resize(out, N, in, 1, N, N);
    for (int k = 0; k < N * N; k++)
        ck_assert(out[k] == in[k]);
    image_resize(small, 4, in, 1, N, N);
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++) {
            const float want = (in[2 * y * N + 2 * x] + in[2 * y * N + 2 * x + 1] +
                                in[(2 * y + 1) * N + 2 * x] + in[(2 * y + 1) * N + 2 * x + 1]) / 4;
            ck_assert_float_eq_tol(small[y * 4 + x], want, 1e-6);
        }
    /* doubling: output centre (x + 0.5) / 2 - 0.5 in input coordinates, clamped */
    image_resize(big, 16, in, 1, N, N);
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < 16; x++) {
            const float sx = fminf(fmaxf((x + 0.5f) / 2 - 0.5f, 0), N - 1);
            const float sy = fminf(fmaxf((y + 0.5f) / 2 - 0.5f, 0), N - 1);
            ck_assert_float_eq_tol(big[y * 16 + x], 0.1f * sx + 0.02f * sy, 1e-6);
        }
}
END_TEST

/* Loads path and returns the error message, failing the test if it loads. */
static const char *refused(const char *path, int size, int resize, Error *err)
{
    float out[3 * 8 * 8];
    ImageSize orig;
    ck_assert_int_eq(image_load(out, path, size, resize, &orig, err), -1);
    return err->msg;
}

/* dir/name, holding text, is refused (resizing to 8 x 8) with "DIR/NAME: reason". */
static void refused_as(const char *dir, const char *name, const char *text, const char *reason)
{
    char path[700], want[1024];
    Error err;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_file(path, text);
    snprintf(want, sizeof want, "%s: %s", path, reason);
    ck_assert_str_eq(refused(path, 8, 1, &err), want);
}

START_TEST(bad_pictures_are_refused_by_name)
{
    char dir[512], path[700], want[1024];
    Error err;
    scratch_dir(dir, sizeof dir, "image-bad");
    /* missing */
    snprintf(path, sizeof path, "%s/none.png", dir);
    snprintf(want, sizeof want, "cannot open image `%s`: No such file or directory", path);
    ck_assert_str_eq(refused(path, 8, 1, &err), want);
    /* not an image; empty */
    snprintf(path, sizeof path, "%s/text.png", dir);
    write_file(path, "just words\n");
    snprintf(want, sizeof want, "%s: not an image (expected PNG, JPEG or PPM/PGM): ", path);
    ck_assert_ptr_nonnull(strstr(refused(path, 8, 1, &err), want));
    snprintf(path, sizeof path, "%s/empty.png", dir);
    write_file(path, "");
    ck_assert_ptr_nonnull(strstr(refused(path, 8, 1, &err), ": not an image (expected PNG, JPEG"));
    /* 100000 x 100000 by its header alone: refused before any pixel is read */
    refused_as(dir, "giant.ppm", "P6\n100000 100000\n255\n",
               "100000 x 100000 pixels, more than 16384 on a side");
    /* a PNG of 100000 x 100000, its header alone (stb_image's own check of such a header
     * fails with another format's reason: the size is read from IHDR then) */
    snprintf(path, sizeof path, "%s/giant.png", dir);
    unsigned char ihdr[33] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D',
                              'R', 0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0, 8, 2};
    FILE *giant = fopen(path, "wb");
    ck_assert(giant && fwrite(ihdr, 1, sizeof ihdr, giant) == sizeof ihdr && fclose(giant) == 0);
    snprintf(want, sizeof want, "%s: 100000 x 100000 pixels, more than 16384 on a side", path);
    ck_assert_str_eq(refused(path, 8, 1, &err), want);
    /* one side alone over the limit */
    refused_as(dir, "tall.pgm", "P5\n10 20000\n255\n",
               "10 x 20000 pixels, more than 16384 on a side");
    /* zero-size, and a PNG whose header says 0 pixels wide (stb_image refuses it as
     * "unknown image type": its size is read from IHDR then, as the docs promise) */
    refused_as(dir, "zero.ppm", "P6\n0 4\n255\n", "0 x 4 pixels (expected at least 1 x 1)");
    snprintf(path, sizeof path, "%s/zero.png", dir);
    ihdr[16] = ihdr[17] = ihdr[18] = ihdr[19] = 0;
    ihdr[20] = ihdr[21] = ihdr[22] = 0, ihdr[23] = 5;
    FILE *zero = fopen(path, "wb");
    ck_assert(zero && fwrite(ihdr, 1, sizeof ihdr, zero) == sizeof ihdr && fclose(zero) == 0);
    snprintf(want, sizeof want, "%s: 0 x 5 pixels (expected at least 1 x 1)", path);
    ck_assert_str_eq(refused(path, 8, 1, &err), want);
    /* a directory: it opens as a file does, and reads as none */
    snprintf(want, sizeof want, "cannot open image `%s`: Is a directory", dir);
    ck_assert_str_eq(refused(dir, 8, 1, &err), want);
    /* truncated: a PNG cut in the middle of its data */
    unsigned char *rgb = pattern(8, 8);
    snprintf(path, sizeof path, "%s/cut.png", dir);
    ck_assert(stbi_write_png(path, 8, 8, 3, rgb, 24));
    char *whole = read_file(path);
    FILE *f = fopen(path, "wb");
    fwrite(whole, 1, 60, f);
    fclose(f);
    free(whole);
    /* its header is whole: the size passes, the pixels do not (stb's reason after) */
    snprintf(want, sizeof want, "%s: cannot decode: ", path);
    ck_assert_ptr_nonnull(strstr(refused(path, 8, 1, &err), want));
    /* a PPM or PGM cut short in its pixels: Debian's stb decodes it, leaving the missing
     * pixels unwritten (valgrind on the fuzzers' kept corpus), so the length is checked;
     * whole, with a comment in the header, it loads */
    snprintf(path, sizeof path, "%s/comment.ppm", dir);
    write_file(path, "P6\n# two pixels\n2 1\n255\n\x01\x02\x03\x04\x05\x06");
    float two[3 * 2 * 2];
    ImageSize orig;
    ck_assert_int_eq(image_load(two, path, 2, 1, &orig, &err), 0);
    ck_assert_int_eq(orig.width, 2);
    refused_as(dir, "short.ppm", "P6\n# two pixels\n2 1\n255\n\x01\x02\x03\x04\x05",
               "cut short: 5 bytes of pixels, where 2 x 1 takes 6");
    refused_as(dir, "short.pgm", "P5 3 3 255",
               "cut short: 0 bytes of pixels, where 3 x 3 takes 9");
    /* 16 bits a channel: refused by its header (a truncated 16-bit PGM made Debian's stb
     * read beyond its data: tests/regress/image/) */
    refused_as(dir, "deep.pgm", "P5\n2 2\n65535\n\x01\x02\x03\x04\x05\x06\x07\x08",
               "16 bits a channel (expected 8-bit PNG, JPEG or PPM/PGM)");
    /* the wrong size without resizing */
    snprintf(path, sizeof path, "%s/six.png", dir);
    ck_assert(stbi_write_png(path, 6, 4, 3, rgb, 18));
    snprintf(want, sizeof want, "%s: 6 x 4 pixels, not 8 x 8 (data.image_resize: false)", path);
    ck_assert_str_eq(refused(path, 8, 0, &err), want);
    free(rgb);
}
END_TEST

/* Resizing on loading is the bilinear resampling of the picture's planes of [0, 1],
 * bit for bit, whatever channels the file holds. */
START_TEST(loading_resizes_the_pictures_planes)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "image-loading-resizes");
    enum { W = 13, H = 7, S = 5 };
    unsigned char *rgb = pattern(W, H);
    float planes[3 * W * H], want[3 * S * S], got[3 * S * S];
    for (int k = 0; k < W * H; k++)
        for (int c = 0; c < 3; c++)
            planes[c * W * H + k] = rgb[k * 3 + c] / 255.0f;
    image_resize(want, S, planes, 3, W, H);
    snprintf(path, sizeof path, "%s/rgb.png", dir);
    ck_assert(stbi_write_png(path, W, H, 3, rgb, W * 3));
    ImageSize orig;
    Error err;
    ck_assert_msg(image_load(got, path, S, 1, &orig, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(orig.width, W);
    ck_assert_int_eq(orig.height, H);
    for (int k = 0; k < 3 * S * S; k++)
        ck_assert_msg(got[k] == want[k], "value %d: %.9g, where the planes give %.9g", k,
                      got[k], want[k]);
    free(rgb);
}
END_TEST

/* The process's peak resident memory (VmHWM) since the last reset_peak, in bytes. */
static long peak_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    ck_assert(f);
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
            break;
    fclose(f);
    ck_assert(kib >= 0);
    return kib * 1024;
}

static void reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w"); /* "5": the peak back to the current */
    ck_assert(f);
    ck_assert(fputs("5", f) >= 0);
    ck_assert(fclose(f) == 0);
}

/* A large picture is resized from the decoder's bytes: loading it takes about the bytes
 * stb_image decodes (3 a pixel for this PPM), not floats of the whole picture beside them
 * (12 more a pixel: 4 GB for a picture at the size limit, issue 41). */
START_TEST(a_large_picture_is_resized_from_its_bytes)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "image-large");
    enum { W = 3000, H = 2000 };
    const size_t decoded = (size_t)W * H * 3;
    snprintf(path, sizeof path, "%s/large.ppm", dir);
    FILE *f = fopen(path, "wb");
    fprintf(f, "P6\n%d %d\n255\n", W, H);
    unsigned char row[W * 3];
    for (int y = 0; y < H; y++) {
        for (int k = 0; k < W * 3; k++)
            row[k] = (unsigned char)(k + y);
        fwrite(row, 1, sizeof row, f);
    }
    ck_assert(fclose(f) == 0);
    float out[3 * 8 * 8];
    ImageSize orig;
    Error err;
    reset_peak();
    const long before = peak_bytes();
    ck_assert_msg(image_load(out, path, 8, 1, &orig, &err) == 0, "%s", err.msg);
    const long grew = peak_bytes() - before;
    ck_assert_msg(grew < 2 * (long)decoded, "loading a %d x %d picture took %ld bytes at its "
                  "peak, where decoding takes %zu", W, H, grew, decoded);
}
END_TEST

/* A decode of a list's pictures shows how far it is, redrawing one line ("every" 0 here:
 * at each picture; training draws once a second on a terminal), and ends it with a
 * newline; without a place to show it, nothing is drawn. */
START_TEST(decoding_a_list_of_pictures_shows_its_progress)
{
    char dir[512], path[700], list[700];
    scratch_dir(dir, sizeof dir, "pictures-progress");
    unsigned char *rgb = pattern(4, 4);
    snprintf(path, sizeof path, "%s/p.png", dir);
    ck_assert(stbi_write_png(path, 4, 4, 3, rgb, 12));
    free(rgb);
    snprintf(list, sizeof list, "%s/list.src", dir);
    Pictures p;
    pictures_init(&p, 4, 1);
    Error err;
    const long line_no[3] = {1, 2, 3};
    for (int k = 0; k < 3; k++)
        ck_assert_msg(pictures_add(&p, list, line_no[k], "p.png", 5, &err) == 0, "%s", err.msg);
    FILE *shown = tmpfile();
    ck_assert(shown);
    ck_assert_msg(pictures_load(&p, list, line_no, 1 << 20, (PicturesProgress){shown, 0}, &err) == 0,
                  "%s", err.msg);
    char want[3000], got[3000] = "";
    snprintf(want, sizeof want, "\rdecoding the pictures of %s: 1 of 3\rdecoding the pictures "
             "of %s: 2 of 3\rdecoding the pictures of %s: 3 of 3\n", list, list, list);
    rewind(shown);
    got[fread(got, 1, sizeof got - 1, shown)] = '\0';
    ck_assert_str_eq(got, want);
    fclose(shown);
    ck_assert_int_eq(pictures_load(&p, list, line_no, 1 << 20, (PicturesProgress){NULL, 0}, &err), 0);
    pictures_free(&p);
}
END_TEST

Suite *image_suite(void)
{
    Suite *s = suite_create("image");
    TCase *tc = tcase_create("image");
    tcase_add_test(tc, png_ppm_and_pgm_give_the_pixels_they_hold);
    tcase_add_test(tc, resizing_is_bilinear);
    tcase_add_test(tc, bad_pictures_are_refused_by_name);
    tcase_add_test(tc, loading_resizes_the_pictures_planes);
    tcase_add_test(tc, a_large_picture_is_resized_from_its_bytes);
    tcase_add_test(tc, decoding_a_list_of_pictures_shows_its_progress);
    suite_add_tcase(s, tc);
    return s;
}
