/* picture.c: a caption's attention over its picture, drawn as SVG with embedded PNGs
 * (see picture.h). */
#include "report/picture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stb/stb_image_write.h>

#include "base/mem.h"
#include "report/heatmap.h"

int picture_load(Picture *p, const char *path, int size, Error *err)
{
    memset(p, 0, sizeof *p);
    if (size < 1 || size > PICTURE_MAX_DISPLAY_SIZE)
        return error_set(err, "%s: display size %d (expected 1 to %d)", path, size,
                         PICTURE_MAX_DISPLAY_SIZE);
    const size_t pixels = (size_t)size * size;
    float *planes = xmalloc_array(3 * pixels, sizeof(float));
    if (image_load(planes, path, size, 1, &p->orig, err) < 0) {
        free(planes);
        return -1;
    }
    /* planes (3, size, size) in [0, 1] back to interleaved bytes */
    p->rgb = xmalloc(3 * pixels);
    for (size_t k = 0; k < pixels; k++)
        for (int c = 0; c < 3; c++) {
            const float v = planes[(size_t)c * pixels + k];
            p->rgb[k * 3 + c] = (unsigned char)lroundf(255 * (v < 0 ? 0 : v > 1 ? 1 : v));
        }
    free(planes);
    p->size = size;
    p->path = xstrdup(path);
    return 0;
}

void picture_free(Picture *p)
{
    free(p->rgb);
    free(p->path);
    p->rgb = NULL;
    p->path = NULL;
}

/* ---- base64 --------------------------------------------------------------------------------- */

size_t picture_base64(char *out, const unsigned char *in, size_t n)
{
    static const char ALPHABET[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = out;
    size_t k = 0;
    for (; k + 3 <= n; k += 3) { /* each 3 bytes as four 6-bit digits, high bits first */
        const unsigned long v = (unsigned long)in[k] << 16 | (unsigned long)in[k + 1] << 8 | in[k + 2];
        *o++ = ALPHABET[v >> 18 & 63];
        *o++ = ALPHABET[v >> 12 & 63];
        *o++ = ALPHABET[v >> 6 & 63];
        *o++ = ALPHABET[v & 63];
    }
    if (k < n) { /* 1 or 2 bytes left: zero bits after them, '=' for each missing byte */
        const unsigned long v = (unsigned long)in[k] << 16 | (k + 1 < n ? (unsigned long)in[k + 1] << 8 : 0);
        *o++ = ALPHABET[v >> 18 & 63];
        *o++ = ALPHABET[v >> 12 & 63];
        *o++ = k + 1 < n ? ALPHABET[v >> 6 & 63] : '=';
        *o++ = '=';
    }
    *o = '\0';
    return (size_t)(o - out);
}

/* ---- the attention maps --------------------------------------------------------------------- */

/* A weight as the overlay counts it: negative or non-finite ones as 0. */
static float clean(float v)
{
    return isfinite(v) && v > 0 ? v : 0;
}

float picture_attention_map(float *out, int size, const float *w, int G)
{
    float *cells = xmalloc_array((size_t)G * G, sizeof(float));
    float top = 0;
    /* cell r * G + c is row r, column c of the grid: the (1, G, G) plane image_resize
     * reads, y down the picture and x across it */
    for (int r = 0; r < G; r++)
        for (int c = 0; c < G; c++) {
            cells[r * G + c] = clean(w[r * G + c]);
            top = fmaxf(top, cells[r * G + c]);
        }
    image_resize(out, size, cells, 1, G, G);
    free(cells);
    const size_t n = (size_t)size * size;
    float peak = 0;
    for (size_t k = 0; k < n; k++)
        peak = fmaxf(peak, out[k]);
    for (size_t k = 0; k < n && peak > 0; k++)
        out[k] /= peak;
    return top;
}

/* The most attended cell of w (the first of equals) and its weight. */
static int most_attended(const float *w, int G, float *weight)
{
    int best = 0;
    for (int k = 1; k < G * G; k++)
        if (clean(w[k]) > clean(w[best]))
            best = k;
    *weight = clean(w[best]);
    return best;
}

/* ---- PNG data URIs -------------------------------------------------------------------------- */

typedef struct {
    unsigned char *data;
    size_t n, cap;
} Bytes;

/* stb_image_write's sink: the PNG into memory. */
static void bytes_append(void *context, void *data, int size)
{
    Bytes *b = context;
    if (size <= 0)
        return;
    if (b->n + (size_t)size > b->cap) {
        b->cap = (b->n + (size_t)size) * 2;
        b->data = xrealloc_array(b->data, b->cap, 1);
    }
    memcpy(b->data + b->n, data, (size_t)size);
    b->n += (size_t)size;
}

/* A size x size picture of channels bytes a pixel (stb_image_write's "comp": 2 is gray
 * and alpha, 3 RGB) as "data:image/png;base64,...". Returns 0, or -1 with err set. */
static int write_png_uri(FILE *f, const unsigned char *pixels, int size, int channels, Error *err)
{
    Bytes png = {0};
    if (!stbi_write_png_to_func(bytes_append, &png, size, size, channels, pixels, size * channels)) {
        free(png.data);
        return error_set(err, "cannot encode a %d x %d picture as PNG (out of memory)", size, size);
    }
    char *text = xmalloc(PICTURE_BASE64_LEN(png.n) + 1);
    const size_t len = picture_base64(text, png.data, png.n);
    fputs("data:image/png;base64,", f);
    fwrite(text, 1, len, f);
    free(text);
    free(png.data);
    return 0;
}

int picture_png_uri(FILE *f, const Picture *p, Error *err)
{
    return write_png_uri(f, p->rgb, p->size, 3, err);
}

/* ---- SVG ---------------------------------------------------------------------------------- */

enum { PER_ROW = 5, PAD = 12, GAP = 14, LINE = 18, LABEL = 40 };
#define CHAR_W 7.8 /* a monospace character at 13px, as heatmap.c measures */

/* Code points of s. */
static int chars(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* s as XML text, cut to at most max characters (the last one then an ellipsis): a label
 * under a panel must not run into the next. */
static void write_label(FILE *f, const char *s, int max)
{
    if (chars(s) <= max) {
        heatmap_xml_text(f, s);
        return;
    }
    char *cut = xstrdup(s);
    int n = 0;
    size_t k = 0;
    for (; cut[k]; k++) /* the byte where character max - 1 begins */
        if (((unsigned char)cut[k] & 0xC0) != 0x80 && n++ == max - 1)
            break;
    cut[k] = '\0';
    heatmap_xml_text(f, cut);
    fputs("\xe2\x80\xa6", f); /* … */
    free(cut);
}

/* Where panel k stands. */
static void panel_at(int k, int size, int top, int *x, int *y)
{
    *x = PAD + (k % PER_ROW) * (size + GAP);
    *y = top + (k / PER_ROW) * (size + LABEL + GAP);
}

/* The first panel: the picture alone, under its file's name. */
static void picture_panel(FILE *f, const Picture *p, const char *uid, int x, int y, int max_chars)
{
    const char *slash = strrchr(p->path, '/');
    fprintf(f, "<g class=\"panel picture\" transform=\"translate(%d %d)\"><title>", x, y);
    heatmap_xml_text(f, p->path);
    fprintf(f, " (%d x %d pixels, shown at %d x %d)</title>\n<use xlink:href=\"#picture-", p->orig.width,
            p->orig.height, p->size, p->size);
    heatmap_xml_text(f, uid);
    fprintf(f, "\"/><rect width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#bbb\"/>\n", p->size, p->size);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", p->size / 2, p->size + LINE);
    write_label(f, slash ? slash + 1 : p->path, max_chars);
    fprintf(f, "</text><text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#666\" font-size=\"11\">"
            "%d x %d</text></g>\n", p->size / 2, p->size + 2 * LINE - 2, p->orig.width, p->orig.height);
}

/* A word's panel: the picture, its overlay (gray and alpha bytes of size x size) and the
 * word; the most attended cell and its weight on hover. Returns 0, or -1 with err set. */
static int word_panel(FILE *f, const Picture *p, const char *uid, const char *word, const float *w,
                      int G, const unsigned char *overlay, int x, int y, int max_chars, Error *err)
{
    float weight;
    const int cell = most_attended(w, G, &weight);
    fprintf(f, "<g class=\"panel word\" transform=\"translate(%d %d)\"><title>", x, y);
    heatmap_xml_text(f, word);
    fprintf(f, ": most attended cell %d (row %d, column %d, from 0), weight %.3f</title>\n"
            "<use xlink:href=\"#picture-", cell, cell / G, cell % G, weight);
    heatmap_xml_text(f, uid);
    fprintf(f, "\"/><image width=\"%d\" height=\"%d\" xlink:href=\"", p->size, p->size);
    if (write_png_uri(f, overlay, p->size, 2, err) < 0)
        return -1;
    fprintf(f, "\"/><rect width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#bbb\"/>\n", p->size, p->size);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", p->size / 2, p->size + LINE);
    write_label(f, word, max_chars);
    fprintf(f, "</text><text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#666\" font-size=\"11\">"
            "max %.3f</text></g>\n", p->size / 2, p->size + 2 * LINE - 2, weight);
    return 0;
}

/* One word's overlay: black, as opaque as the word attends little. */
static void shade(unsigned char *overlay, const float *map, int size)
{
    for (int y = 0; y < size; y++)
        for (int x = 0; x < size; x++) {
            const size_t k = (size_t)y * size + x;
            overlay[k * 2] = 0;
            overlay[k * 2 + 1] = (unsigned char)lroundf(255 * PICTURE_SHADE * (1 - map[k]));
        }
}

int picture_heatmap_svg(FILE *f, const Picture *p, const float *alpha, int n_words,
                        long row_stride, int G, const char *const *words, const char *uid,
                        int standalone, Error *err)
{
    const int D = p->size, panels = 1 + n_words;
    const int cols = panels < PER_ROW ? panels : PER_ROW, rows = (panels + PER_ROW - 1) / PER_ROW;
    /* the caption: what the panels show, and how each map is scaled */
    char what[160];
    snprintf(what, sizeof what, "Where each word looks: its attention over %d x %d cells of the "
             "picture, upsampled bilinearly.", G, G);
    const char *caption[2] = {what, "Each map is scaled by its own maximum: the picture as it is "
                                    "where the word attends most, darker where less."};
    const int top = PAD + 2 * LINE + 8;
    double width = 2 * PAD + cols * D + (cols - 1) * GAP;
    for (int k = 0; k < 2; k++)
        width = fmax(width, 2 * PAD + CHAR_W * chars(caption[k]));
    const int height = top + rows * (D + LABEL) + (rows - 1) * GAP + PAD;
    /* a label may reach into the gap beside its panel, and keeps at least 4 characters */
    const int max_chars = (int)fmax(4, (D + GAP - 2) / CHAR_W);
    if (standalone)
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f, "<svg class=\"picture-attention\" xmlns=\"http://www.w3.org/2000/svg\" "
            "xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"%.0f\" height=\"%d\" "
            "viewBox=\"0 0 %.0f %d\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" "
            "font-size=\"13\">\n<title>attention over ", width, height, width, height);
    heatmap_xml_text(f, p->path);
    fprintf(f, ", %d word%s</title>\n<defs><image id=\"picture-", n_words, plural(n_words));
    heatmap_xml_text(f, uid);
    fprintf(f, "\" width=\"%d\" height=\"%d\" xlink:href=\"", D, D);
    if (write_png_uri(f, p->rgb, D, 3, err) < 0)
        return -1;
    fputs("\"/></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", f);
    for (int k = 0; k < 2; k++) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#444\">", PAD, PAD + LINE * k + 12);
        heatmap_xml_text(f, caption[k]);
        fputs("</text>\n", f);
    }
    int x, y;
    panel_at(0, D, top, &x, &y);
    picture_panel(f, p, uid, x, y, max_chars);
    float *map = xmalloc_array((size_t)D * D, sizeof(float));
    unsigned char *overlay = xmalloc_array((size_t)D * D, 2);
    int rc = 0;
    for (int i = 0; i < n_words && rc == 0; i++) {
        const float *w = alpha + (size_t)i * (size_t)row_stride;
        picture_attention_map(map, D, w, G);
        shade(overlay, map, D);
        panel_at(1 + i, D, top, &x, &y);
        rc = word_panel(f, p, uid, words[i], w, G, overlay, x, y, max_chars, err);
    }
    free(map);
    free(overlay);
    if (rc == 0)
        fputs("</svg>\n", f);
    return rc;
}

int picture_record_svg(FILE *f, const AlignRecord *r, const char *uid, int standalone,
                       Error *err)
{
    int G = 0;
    while ((G + 1) * (G + 1) <= r->n_src)
        G++;
    Picture p = {0};
    if (picture_load(&p, r->image, PICTURE_DISPLAY_SIZE, err) < 0)
        return -1;
    int rc = picture_heatmap_svg(f, &p, r->weights, r->n_tgt, r->n_src, G,
                                 (const char *const *)r->tgt, uid, standalone, err);
    picture_free(&p);
    return rc;
}
