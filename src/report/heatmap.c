/* heatmap.c: SVG and text renderings of attention matrices (see heatmap.h; the HTML report
 * is heatmap_report.c). */
#include "report/heatmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text/termtext.h"

/* ---- colour ------------------------------------------------------------------------------ */

/* viridis (matplotlib's default colour map) at ten even stops: perceptually uniform,
 * readable in grey, and the map people know from seaborn heatmaps */
static const unsigned char VIRIDIS[10][3] = {
    {0x44, 0x01, 0x54}, {0x48, 0x28, 0x78}, {0x3e, 0x49, 0x89}, {0x31, 0x68, 0x8e}, {0x26, 0x82, 0x8e},
    {0x1f, 0x9e, 0x89}, {0x35, 0xb7, 0x79}, {0x6e, 0xce, 0x58}, {0xb5, 0xde, 0x2b}, {0xfd, 0xe7, 0x25}};

static void colour(double w, char *out)
{
    w = w < 0 ? 0 : w > 1 ? 1 : w;
    double x = w * 9;
    int k = (int)x < 9 ? (int)x : 8;
    double t = x - k;
    int rgb[3];
    for (int c = 0; c < 3; c++)
        rgb[c] = (int)lround(VIRIDIS[k][c] + t * (VIRIDIS[k + 1][c] - VIRIDIS[k][c]));
    sprintf(out, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

/* ---- SVG ---------------------------------------------------------------------------------- */

/* s as XML text. The characters XML 1.0 forbids even as references (control characters
 * but tab, line feed and carriage return; U+FFFE, U+FFFF), which tokens may hold, become
 * U+FFFD: one of them would make the whole SVG unreadable. */
void heatmap_xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == 0xEF && (unsigned char)s[1] == 0xBF &&
            ((unsigned char)s[2] == 0xBE || (unsigned char)s[2] == 0xBF)) {
            fputs("\xef\xbf\xbd", f);
            s += 2;
            continue;
        }
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
                fputs("\xef\xbf\xbd", f);
            else
                fputc(c, f);
        }
    }
}

/* Display width of a token in characters (code points). */
static int chars(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

enum { CELL = 24 };
#define CHAR_W 7.8 /* a monospace character at 13px */

void heatmap_svg(FILE *f, const AlignRecord *r, const char *uid, int standalone)
{
    int max_src = 1, max_tgt = 1;
    for (int j = 0; j < r->n_src; j++)
        max_src = chars(r->src[j]) > max_src ? chars(r->src[j]) : max_src;
    for (int i = 0; i < r->n_tgt; i++)
        max_tgt = chars(r->tgt[i]) > max_tgt ? chars(r->tgt[i]) : max_tgt;
    /* source labels stand at -60 degrees above their columns */
    double left = 12 + CHAR_W * max_tgt, top = 16 + CHAR_W * max_src * 0.87 + 8;
    double grid_w = CELL * r->n_src, grid_h = CELL * r->n_tgt;
    /* the caption under the grid: "step N · epoch E · sentence ID · view" (each part in a
     * buffer of its own: a record's epoch may be any number) */
    char epoch[48] = "", caption[160];
    if (r->has_epoch)
        snprintf(epoch, sizeof epoch, " \xc2\xb7 epoch %.2f", r->epoch);
    snprintf(caption, sizeof caption, "step %ld%s \xc2\xb7 sentence %ld%s%s", r->step, epoch, r->id,
             r->view[0] ? " \xc2\xb7 " : "", r->view);
    /* wide enough for the grid with its colour scale, the caption, and each source label,
     * which reaches right of its column by half its length (cos 60 degrees) */
    double width = fmax(left + grid_w + 90, left + CHAR_W * chars(caption) + 12);
    for (int j = 0; j < r->n_src; j++)
        width = fmax(width, left + CELL * (j + 0.5) + 4 + 0.5 * CHAR_W * chars(r->src[j]) + 8);
    double height = top + grid_h + 36;
    if (standalone)
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f, "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans Mono, Menlo, "
            "Consolas, monospace\" font-size=\"13\">\n", width, height, width, height);
    fprintf(f, "<title>attention, step %ld, sentence %ld", r->step, r->id);
    if (r->view[0])
        fprintf(f, ", %s", r->view);
    fputs("</title>\n", f);
    fprintf(f, "<defs><linearGradient id=\"scale-%s\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">", uid);
    for (int k = 0; k < 10; k++) {
        char c[8];
        colour(k / 9.0, c);
        fprintf(f, "<stop offset=\"%.3f\" stop-color=\"%s\"/>", k / 9.0, c);
    }
    fputs("</linearGradient></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", f);
    for (int j = 0; j < r->n_src; j++) {
        double x = left + CELL * (j + 0.5);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" transform=\"rotate(-60 %.1f %.1f)\">", x + 4, top - 6,
                x + 4, top - 6);
        heatmap_xml_text(f, r->src[j]);
        fputs("</text>\n", f);
    }
    for (int i = 0; i < r->n_tgt; i++) {
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", left - 6, top + CELL * (i + 0.5) + 4);
        heatmap_xml_text(f, r->tgt[i]);
        fputs("</text>\n", f);
    }
    for (int i = 0; i < r->n_tgt; i++)
        for (int j = 0; j < r->n_src; j++) {
            double w = r->weights[(size_t)i * r->n_src + j];
            char c[8];
            colour(w, c);
            fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>",
                    left + CELL * j, top + CELL * i, CELL, CELL, c);
            heatmap_xml_text(f, r->tgt[i]);
            fputs(" \xe2\x86\x90 ", f); /* ← */
            heatmap_xml_text(f, r->src[j]);
            fprintf(f, ": %.3f</title></rect>\n", w);
        }
    /* a hard-attention pass: each head's chosen position outlined (the weights are the
     * distribution it chose from) */
    for (int i = 0; i < r->n_tgt && r->chosen; i++)
        for (int k = 0; k < r->n_chosen; k++)
            fprintf(f, "<rect class=\"chosen\" x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" "
                    "fill=\"none\" stroke=\"#d62728\" stroke-width=\"2.5\"/>\n",
                    left + CELL * r->chosen[(size_t)i * r->n_chosen + k] + 1.5, top + CELL * i + 1.5,
                    CELL - 3, CELL - 3);
    /* the colour scale */
    double sx = left + grid_w + 24;
    fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"%.0f\" fill=\"url(#scale-%s)\"/>\n",
            sx, top, grid_h, uid);
    const double ticks[3] = {0, 0.5, 1};
    for (int k = 0; k < 3; k++)
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\">%.1f</text>\n", sx + 20, top + grid_h * (1 - ticks[k]) + 4,
                ticks[k]);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" fill=\"#444\">", left, top + grid_h + 24);
    heatmap_xml_text(f, caption);
    fputs("</text>\n", f);
    fputs("</svg>\n", f);
}

/* ---- text ------------------------------------------------------------------------------------ */

/* "step N (epoch E), sentence ID", the epoch only when the record has one. */
static void default_title(const AlignRecord *r, char *out, size_t cap)
{
    if (r->has_epoch)
        snprintf(out, cap, "step %ld (epoch %.2f), sentence %ld%s%s", r->step, r->epoch, r->id,
                 r->view[0] ? ", " : "", r->view);
    else
        snprintf(out, cap, "step %ld, sentence %ld%s%s", r->step, r->id, r->view[0] ? ", " : "",
                 r->view);
}

void heatmap_txt(FILE *f, const AlignRecord *r, int color)
{
    heatmap_txt_titled(f, r, NULL, color);
}

void heatmap_txt_titled(FILE *f, const AlignRecord *r, const char *title, int color)
{
    static const char *const SHADES[5] = {"\xc2\xb7", "\xe2\x96\x91", "\xe2\x96\x92", "\xe2\x96\x93",
                                          "\xe2\x96\x88"}; /* · ░ ▒ ▓ █ */
    /* tokens through termtext: their control characters must not reach the terminal,
     * and their widths are the columns they take there */
    int label = 1;
    for (int i = 0; i < r->n_tgt; i++)
        label = termtext_width(r->tgt[i]) > label ? termtext_width(r->tgt[i]) : label;
    /* columns two characters wide, three from ten columns on (for their numbers) */
    int width = r->n_src > 10 ? 3 : 2;
    char own_title[128];
    if (!title) {
        default_title(r, own_title, sizeof own_title);
        title = own_title;
    }
    termtext_put(f, title);
    fputc('\n', f);
    fprintf(f, "%*s ", label, "");
    for (int j = 0; j < r->n_src; j++)
        fprintf(f, "%*d", width, j);
    fputc('\n', f);
    for (int i = 0; i < r->n_tgt; i++) {
        termtext_put(f, r->tgt[i]);
        fprintf(f, "%*s ", label - termtext_width(r->tgt[i]), "");
        for (int j = 0; j < r->n_src; j++) {
            double w = r->weights[(size_t)i * r->n_src + j];
            int shade = w < 0.05 ? 0 : w < 0.25 ? 1 : w < 0.5 ? 2 : w < 0.75 ? 3 : 4;
            /* a position a head chose (hard attention) is marked left of its shade */
            int chosen = 0;
            for (int k = 0; k < r->n_chosen; k++)
                chosen |= r->chosen[(size_t)i * r->n_chosen + k] == j;
            if (color)
                fprintf(f, "\033[38;5;%dm", 236 + (int)lround(w * 19)); /* grey ramp */
            fprintf(f, "%*s%s%s", width - 2, "", chosen ? ">" : " ", SHADES[shade]);
            if (color)
                fputs("\033[0m", f);
        }
        fputc('\n', f);
    }
    fprintf(f, "%*s ", label, "");
    for (int j = 0; j < r->n_src; j++) {
        fprintf(f, "%s%d:", j ? "  " : "", j);
        termtext_put(f, r->src[j]);
    }
    fputs("\n\n", f);
}
