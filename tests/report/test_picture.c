/* test_picture.c: attention over a picture (report/picture.h): base64 against RFC 4648's
 * vectors, the bilinear upsampling of a grid's cells exactly and the right way round,
 * each map scaled by its own maximum, and the SVG: well-formed XML (xmllint), a panel
 * per word with its word escaped, and embedded PNGs that decode back (stb_image) to the
 * picture and to overlays that leave it as it is where the word attends most; two of
 * them inlined in one HTML page keep their own ids in headless Chromium. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include "report/picture.h"
#include "support/cli.h"
#include "support/suites.h"

/* ---- base64 --------------------------------------------------------------------------------- */

/* The test's own decoder: base64 text (no whitespace) of len chars into out; returns the
 * bytes written, or -1 for a character outside the alphabet. */
static long base64_decode(unsigned char *out, const char *in, size_t len)
{
    static const char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    long n = 0;
    unsigned long bits = 0;
    int have = 0;
    for (size_t k = 0; k < len && in[k] != '='; k++) {
        const char *at = strchr(ALPHABET, in[k]);
        if (!at || !in[k])
            return -1;
        bits = bits << 6 | (unsigned long)(at - ALPHABET);
        have += 6;
        if (have >= 8) {
            have -= 8;
            out[n++] = (unsigned char)(bits >> have & 0xFF);
        }
    }
    return n;
}

START_TEST(base64_gives_rfc4648_test_vectors)
{
    /* RFC 4648, section 10 */
    static const char *const VECTORS[][2] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                             {"foo", "Zm9v"},  {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                             {"foobar", "Zm9vYmFy"}};
    char out[64];
    for (size_t v = 0; v < sizeof VECTORS / sizeof *VECTORS; v++) {
        const size_t n = strlen(VECTORS[v][0]);
        memset(out, '#', sizeof out);
        ck_assert_uint_eq(picture_base64(out, (const unsigned char *)VECTORS[v][0], n),
                          strlen(VECTORS[v][1]));
        ck_assert_str_eq(out, VECTORS[v][1]);
        ck_assert_uint_eq(PICTURE_BASE64_LEN(n), strlen(VECTORS[v][1]));
    }
    /* the last two digits of the alphabet, and the high bits of a byte */
    const unsigned char high[] = {0xfb, 0xff, 0xbf, 0x00, 0xff};
    picture_base64(out, high, 3);
    ck_assert_str_eq(out, "+/+/");
    picture_base64(out, high, 5);
    ck_assert_str_eq(out, "+/+/AP8=");
    /* every byte value, at each of the three places of a group, back through the decoder */
    unsigned char all[258], back[258];
    char text[PICTURE_BASE64_LEN(258) + 1];
    for (int k = 0; k < 258; k++)
        all[k] = (unsigned char)(k * 7 + 3);
    for (size_t n = 256; n <= 258; n++) {
        const size_t len = picture_base64(text, all, n);
        ck_assert_uint_eq(len, PICTURE_BASE64_LEN(n));
        ck_assert_int_eq(base64_decode(back, text, len), (long)n);
        ck_assert_mem_eq(back, all, n);
    }
}
END_TEST

/* ---- the maps ------------------------------------------------------------------------------- */

/* Bilinear interpolation of a 2 x 2 grid at pixel (x, y) of size x size, as picture.h
 * defines it, written out in double: cell centres at (c + 0.5) size / 2, clamped. */
static double bilinear_2x2(const float *w, int size, int x, int y)
{
    double u = (x + 0.5) * 2 / size - 0.5, v = (y + 0.5) * 2 / size - 0.5;
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    return (1 - v) * ((1 - u) * w[0] + u * w[1]) + v * ((1 - u) * w[2] + u * w[3]);
}

START_TEST(a_2x2_grid_is_upsampled_bilinearly_and_exactly)
{
    /* row 0: 0, 1/8; row 1: 1/4, 1/2. Dyadic weights and an 8-pixel side keep every
     * product exact in float, so the values below are exact, not approximate. */
    const float w[4] = {0, 0.125f, 0.25f, 0.5f};
    float map[8 * 8];
    ck_assert_float_eq(picture_attention_map(map, 8, w, 2), 0.5f);
    /* scaled by the largest value, 0.5 in the corner below right */
    ck_assert_float_eq(map[0 * 8 + 0], 0);       /* above left: cell 0 */
    ck_assert_float_eq(map[0 * 8 + 7], 0.25f);   /* above right: cell 1 (row 0, column 1) */
    ck_assert_float_eq(map[7 * 8 + 0], 0.5f);    /* below left: cell 2 (row 1, column 0) */
    ck_assert_float_eq(map[7 * 8 + 7], 1);       /* below right: cell 3 */
    ck_assert_float_eq(map[1 * 8 + 1], 0);       /* still clamped to cell 0 */
    /* y = 2, x = 3: 3/8 of the way across, 1/8 down: (7/8 (5/8 0 + 3/8 1/8) + 1/8 (5/8 1/4
     * + 3/8 1/2)) / (1/2) */
    ck_assert_float_eq(map[2 * 8 + 3], 0.16796875f);
    /* y = 5, x = 2: 1/8 across, 7/8 down */
    ck_assert_float_eq(map[5 * 8 + 2], 0.49609375f);
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++)
            ck_assert_msg(map[y * 8 + x] == (float)(bilinear_2x2(w, 8, x, y) / 0.5),
                          "pixel (%d, %d): %.9g", x, y, map[y * 8 + x]);
}
END_TEST

START_TEST(each_map_is_scaled_by_its_own_maximum)
{
    enum { G = 3, D = 12 };
    float map[D * D];
    /* flat: 1 everywhere, whatever the weight */
    float flat[G * G];
    for (int k = 0; k < G * G; k++)
        flat[k] = 1.0f / (G * G);
    ck_assert_float_eq(picture_attention_map(map, D, flat, G), 1.0f / (G * G));
    for (int k = 0; k < D * D; k++) /* (1 - t) w + t w is w to the rounding */
        ck_assert_float_eq_tol(map[k], 1, 1e-6);
    /* peaked: 1 on the peak's own pixels (a border cell: clamped), less elsewhere */
    float peaked[G * G] = {0.01f, 0.01f, 0.9f, 0.01f, 0.01f, 0.01f, 0.02f, 0.02f, 0.01f};
    ck_assert_float_eq(picture_attention_map(map, D, peaked, G), 0.9f);
    ck_assert_float_eq(map[0 * D + D - 1], 1); /* above right: cell 2 */
    float low = 1;
    for (int k = 0; k < D * D; k++) {
        ck_assert(map[k] >= 0 && map[k] <= 1);
        low = fminf(low, map[k]);
    }
    ck_assert_float_eq_tol(low, 0.01f / 0.9f, 1e-6);
    /* zeros stay zeros; NaN, infinities and negative weights count as 0 */
    float bad[G * G] = {0, NAN, -1, INFINITY, 0, -INFINITY, 0, 0, 0};
    ck_assert_float_eq(picture_attention_map(map, D, bad, G), 0);
    for (int k = 0; k < D * D; k++)
        ck_assert_float_eq(map[k], 0);
}
END_TEST

/* ---- loading -------------------------------------------------------------------------------- */

/* A 16 x 16 RGB pattern written as a PNG under dir; its bytes in rgb. */
static void write_pattern(const char *path, unsigned char *rgb)
{
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < 16; x++) {
            unsigned char *q = rgb + (y * 16 + x) * 3;
            q[0] = (unsigned char)(16 * x), q[1] = (unsigned char)(16 * y), q[2] = (unsigned char)(x ^ y) * 9;
        }
    ck_assert(stbi_write_png(path, 16, 16, 3, rgb, 16 * 3));
}

START_TEST(pictures_load_at_their_display_size)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "picture-load");
    snprintf(path, sizeof path, "%s/p.png", dir);
    unsigned char rgb[16 * 16 * 3];
    write_pattern(path, rgb);
    Picture p;
    Error err;
    ck_assert_msg(picture_load(&p, path, 16, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(p.size, 16);
    ck_assert_int_eq(p.orig.width, 16);
    ck_assert_str_eq(p.path, path);
    ck_assert_mem_eq(p.rgb, rgb, sizeof rgb); /* at its own size, the bytes it holds */
    picture_free(&p);
    picture_free(&p);
    ck_assert_msg(picture_load(&p, path, 40, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(p.size, 40);
    ck_assert_int_eq(p.orig.height, 16);
    ck_assert_int_eq(p.rgb[0], rgb[0]); /* a corner is clamped to the corner pixel */
    picture_free(&p);
    char want[800];
    ck_assert_int_eq(picture_load(&p, path, 0, &err), -1);
    snprintf(want, sizeof want, "%s: display size 0 (expected 1 to 2048)", path);
    ck_assert_str_eq(err.msg, want);
    snprintf(path, sizeof path, "%s/no.png", dir);
    write_file(path, "no picture");
    ck_assert_int_eq(picture_load(&p, path, 16, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "not an image"));
    picture_free(&p);
}
END_TEST

/* ---- the SVG -------------------------------------------------------------------------------- */

/* The n-th PNG data URI of svg decoded: its pixels (stbi_image_free them), its size and
 * channels. */
static unsigned char *nth_png(const char *svg, int n, int *w, int *h, int *channels)
{
    static const char URI[] = "data:image/png;base64,";
    const char *at = svg;
    for (int k = 0; k <= n; k++) {
        at = strstr(at, URI);
        ck_assert_msg(at != NULL, "no PNG number %d", n);
        at += strlen(URI);
    }
    const size_t len = strcspn(at, "\"");
    unsigned char *png = malloc(len);
    const long bytes = base64_decode(png, at, len);
    ck_assert_int_gt(bytes, 0);
    unsigned char *px = stbi_load_from_memory(png, (int)bytes, w, h, channels, 0);
    ck_assert_msg(px != NULL, "PNG number %d: %s", n, stbi_failure_reason());
    free(png);
    return px;
}

enum { SIDE = 64, STRIDE = 6 };

/* The case of the SVG tests: a 16 x 16 picture shown at 64 x 64 on a 2 x 2 grid, three words whose rows
 * lie 6 floats apart (the 2 between them hold garbage). */
static const float ALPHA[3 * STRIDE] = {
    0.1f,  0.7f,  0.1f,  0.1f,  9, 9, /* "red": cell 1, above right */
    0.25f, 0.25f, 0.25f, 0.25f, 9, 9, /* flat */
    0.05f, 0.05f, 0.85f, 0.05f, 9, 9, /* "</s>": cell 2, below left */
};
static const char *const WORDS[3] = {"red", "<b & \"c\">", "</s>"};

static void picture_case(Picture *p, const char *dir, unsigned char *rgb)
{
    char path[700];
    snprintf(path, sizeof path, "%s/scene.png", dir);
    write_pattern(path, rgb);
    Error err;
    ck_assert_msg(picture_load(p, path, SIDE, &err) == 0, "%s", err.msg);
}

START_TEST(svg_shows_each_word_over_the_picture)
{
    char dir[512], path[700], cmd[900];
    scratch_dir(dir, sizeof dir, "picture-svg");
    Picture p;
    unsigned char rgb[16 * 16 * 3];
    picture_case(&p, dir, rgb);
    snprintf(path, sizeof path, "%s/attention.svg", dir);
    FILE *f = fopen(path, "w");
    Error err;
    ck_assert_msg(picture_heatmap_svg(f, &p, ALPHA, 3, STRIDE, 2, WORDS, "x", 1, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(fclose(f), 0);
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", path);
    ck_assert_int_eq(system(cmd), 0);
    char *svg = read_file(path);
    ck_assert(strncmp(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 44) == 0);
    ck_assert_int_eq(count_of(svg, "<g class=\"panel picture\""), 1);
    ck_assert_int_eq(count_of(svg, "<g class=\"panel word\""), 3);
    ck_assert_int_eq(count_of(svg, "data:image/png;base64,"), 1 + 3);
    ck_assert_int_eq(count_of(svg, "<use xlink:href=\"#picture-x\"/>"), 1 + 3);
    ck_assert_int_eq(count_of(svg, "id=\"picture-x\""), 1);
    /* the scaling is said; the words escaped, under their panels and on hover, with the
     * most attended cell */
    ck_assert_ptr_nonnull(strstr(svg, "Each map is scaled by its own maximum"));
    ck_assert_ptr_nonnull(strstr(svg, "over 2 x 2 cells"));
    ck_assert_ptr_nonnull(strstr(svg, "<title>red: most attended cell 1 (row 0, column 1, from 0), "
                                      "weight 0.700</title>"));
    ck_assert_ptr_nonnull(strstr(svg, "<title>&lt;b &amp; &quot;c&quot;&gt;: most attended cell 0 "
                                      "(row 0, column 0, from 0), weight 0.250</title>"));
    ck_assert_ptr_nonnull(strstr(svg, "<title>&lt;/s&gt;: most attended cell 2 (row 1, column 0, "
                                      "from 0), weight 0.850</title>"));
    ck_assert_ptr_nonnull(strstr(svg, ">max 0.850</text>"));
    /* the picture's panel: its file's name, and its path on hover */
    ck_assert_ptr_nonnull(strstr(svg, ">scene.png</text>"));
    snprintf(cmd, sizeof cmd, "<title>%s (16 x 16 pixels, shown at 64 x 64)</title>", p.path);
    ck_assert_ptr_nonnull(strstr(svg, cmd));
    ck_assert_int_eq(count_of(svg, "&lt;b &amp; &quot;c&quot;&gt;"), 2);
    /* the picture, embedded as it was loaded */
    int w, h, channels;
    unsigned char *px = nth_png(svg, 0, &w, &h, &channels);
    ck_assert_int_eq(w, SIDE);
    ck_assert_int_eq(h, SIDE);
    ck_assert_int_eq(channels, 3);
    ck_assert_mem_eq(px, p.rgb, SIDE * SIDE * 3);
    stbi_image_free(px);
    /* each overlay: black, transparent where the word attends most (the picture shows as
     * it is), most opaque at the far corner */
    const struct {
        int peak_x, peak_y;
        float low; /* the smallest weight over the largest */
    } want[3] = {{SIDE - 1, 0, 0.1f / 0.7f}, {-1, -1, 1}, {0, SIDE - 1, 0.05f / 0.85f}};
    for (int i = 0; i < 3; i++) {
        px = nth_png(svg, 1 + i, &w, &h, &channels);
        ck_assert_int_eq(w, SIDE);
        ck_assert_int_eq(h, SIDE);
        ck_assert_int_eq(channels, 2);
        int least = 255, most = 0;
        for (int k = 0; k < SIDE * SIDE; k++) {
            ck_assert_int_eq(px[k * 2], 0);
            least = px[k * 2 + 1] < least ? px[k * 2 + 1] : least;
            most = px[k * 2 + 1] > most ? px[k * 2 + 1] : most;
        }
        ck_assert_int_eq(least, 0);
        ck_assert_int_eq(most, (int)lroundf(255 * PICTURE_SHADE * (1 - want[i].low)));
        if (want[i].peak_x >= 0) {
            ck_assert_int_eq(px[(want[i].peak_y * SIDE + want[i].peak_x) * 2 + 1], 0);
            const int far_x = SIDE - 1 - want[i].peak_x, far_y = SIDE - 1 - want[i].peak_y;
            ck_assert_int_eq(px[(far_y * SIDE + far_x) * 2 + 1], most);
        }
        stbi_image_free(px);
    }
    free(svg);
    picture_free(&p);
}
END_TEST

/* A word longer than its panel is cut with an ellipsis (whole on hover); a caption of no
 * word is the picture alone. */
START_TEST(long_words_are_cut_under_their_panel)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "picture-cut");
    Picture p;
    unsigned char rgb[16 * 16 * 3];
    picture_case(&p, dir, rgb);
    snprintf(path, sizeof path, "%s/long.svg", dir);
    FILE *f = fopen(path, "w");
    const char *long_word[] = {"\xc3\xa9tablissements"}; /* établissements: 14 characters */
    Error err;
    ck_assert(picture_heatmap_svg(f, &p, ALPHA, 1, STRIDE, 2, long_word, "y", 0, &err) == 0);
    ck_assert(picture_heatmap_svg(f, &p, ALPHA, 0, STRIDE, 2, NULL, "z", 0, &err) == 0);
    ck_assert_int_eq(fclose(f), 0);
    char *svg = read_file(path);
    ck_assert(strncmp(svg, "<svg ", 5) == 0); /* no XML declaration in a page */
    /* a 64-pixel panel takes 9 characters: 8 and the ellipsis */
    ck_assert_ptr_nonnull(strstr(svg, ">\xc3\xa9tabliss\xe2\x80\xa6</text>"));
    ck_assert_ptr_nonnull(strstr(svg, "<title>\xc3\xa9tablissements: most attended"));
    ck_assert_int_eq(count_of(svg, "<g class=\"panel word\""), 1);
    ck_assert_int_eq(count_of(svg, "<g class=\"panel picture\""), 2);
    ck_assert_ptr_nonnull(strstr(svg, ", 0 words</title>"));
    free(svg);
    picture_free(&p);
}
END_TEST

/* Two of them inlined in one HTML page: Chromium parses both, and each panel's picture
 * is its own SVG's. */
START_TEST(svgs_inlined_in_a_page_keep_their_own_ids)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "picture-page");
    Picture p;
    unsigned char rgb[16 * 16 * 3];
    picture_case(&p, dir, rgb);
    snprintf(path, sizeof path, "%s/page.html", dir);
    FILE *f = fopen(path, "w");
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>t</title></head><body>\n", f);
    Error err;
    ck_assert(picture_heatmap_svg(f, &p, ALPHA, 3, STRIDE, 2, WORDS, "1", 0, &err) == 0);
    ck_assert(picture_heatmap_svg(f, &p, ALPHA + STRIDE, 2, STRIDE, 2, WORDS + 1, "2", 0, &err) == 0);
    /* each <use> names a picture of its own SVG */
    fputs("<script>var own=0,svgs=document.querySelectorAll('svg.picture-attention');"
          "document.querySelectorAll('use').forEach(function(u){"
          "var t=document.getElementById(u.getAttribute('xlink:href').slice(1));"
          "if(t&&t.closest('svg')===u.closest('svg'))own++;});"
          "document.body.dataset.svgs=svgs.length;document.body.dataset.own=own;</script>\n"
          "</body></html>\n", f);
    ck_assert_int_eq(fclose(f), 0);
    char *dom = chromium_dom(path, dir);
    ck_assert_msg(strstr(dom, "data-svgs=\"2\"") && strstr(dom, "data-own=\"7\""),
                  "Chromium's DOM: %.300s", strstr(dom, "<body") ? strstr(dom, "<body") : dom);
    ck_assert_int_eq(count_of(dom, "<g class=\"panel word\""), 3 + 2);
    free(dom);
    picture_free(&p);
}
END_TEST

Suite *picture_suite(void)
{
    Suite *s = suite_create("picture");
    TCase *tc = tcase_create("picture");
    tcase_add_test(tc, base64_gives_rfc4648_test_vectors);
    tcase_add_test(tc, a_2x2_grid_is_upsampled_bilinearly_and_exactly);
    tcase_add_test(tc, each_map_is_scaled_by_its_own_maximum);
    tcase_add_test(tc, pictures_load_at_their_display_size);
    tcase_add_test(tc, svg_shows_each_word_over_the_picture);
    tcase_add_test(tc, long_words_are_cut_under_their_panel);
    tcase_add_test(tc, svgs_inlined_in_a_page_keep_their_own_ids);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
