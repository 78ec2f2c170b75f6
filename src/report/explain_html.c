/* explain_html.c: a worked attention step as one self-contained HTML page: every tensor an
 * annotated heatmap, as the tutorials draw them (see explain_print.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "report/explain_print.h"
#include "report/heatmap.h"
#include "report/picture.h"

enum { CELL_W = 58, CELL_H = 22, LABEL_W = 90, HEAD_H = 22 };

/* A diverging colour for v in [-1, 1]: white at 0, red for positive, blue for negative;
 * and whether its value reads better in white. */
static void cell_colour(double v, char out[8], int *light_text)
{
    const double t = fmin(1, fabs(v));
    const int fade = (int)lround(255 * (1 - 0.85 * t));
    if (v >= 0)
        snprintf(out, 8, "#ff%02x%02x", fade, fade);
    else
        snprintf(out, 8, "#%02x%02xff", fade, fade);
    *light_text = t > 0.6;
}

/* Opens an SVG of cols x rows cells under their labels; returns the largest magnitude of
 * t's values, which every cell's colour is scaled by. */
static double svg_open(FILE *f, const ExplainTensor *t, int cols, int rows)
{
    double most = 0;
    for (size_t e = 0; e < (size_t)t->rows * t->cols; e++)
        most = fmax(most, fabs(t->values[e]));
    fprintf(f, "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n",
            LABEL_W + cols * CELL_W + 4, HEAD_H + rows * CELL_H + 4);
    return most;
}

/* The cell at column c of the row at y: its colour and its value written in it. */
static void value_cell(FILE *f, int c, int y, double v, double most)
{
    char colour[8];
    int light;
    cell_colour(most > 0 ? v / most : 0, colour, &light);
    const int x = LABEL_W + c * CELL_W;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
            "stroke=\"#fff\"/><text x=\"%d\" y=\"%d\" text-anchor=\"middle\"%s>%.3g</text>\n",
            x, y, CELL_W, CELL_H, colour, x + CELL_W / 2, y + CELL_H / 2 + 4,
            light ? " fill=\"#fff\"" : "", v);
}

/* A row's label: its source word, its head, or its number. */
static void row_label(FILE *f, const ExplainTensor *t, const ExplainWords *w, int r)
{
    char label[1024];
    if (t->rows_are == ROWS_SOURCE) {
        explain_source_label(label, sizeof label, w, r);
        heatmap_xml_text(f, label);
    } else if (t->rows_are == ROWS_PREFIX) {
        explain_prefix_label(label, sizeof label, w, r);
        heatmap_xml_text(f, label);
    } else if (t->rows_are == ROWS_HEADS)
        fprintf(f, "head %d", r + 1);
    else if (t->rows_are == ROWS_INDEX)
        fprintf(f, "row %d", r + 1);
}

/* An image model's values by cell: each row of t (a head, or the one row) as the G x G
 * grid over the picture, one under the other, every cell drawn. */
static void grid_svg(FILE *f, const ExplainTensor *t, const ExplainWords *w)
{
    const int G = w->grid, rows = t->rows * G;
    const double most = svg_open(f, t, G, rows);
    for (int c = 0; c < G; c++)
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">column %d"
                "</text>\n", LABEL_W + c * CELL_W + CELL_W / 2, HEAD_H - 7, c);
    for (int r = 0; r < rows; r++) {
        const int y = HEAD_H + r * CELL_H;
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LABEL_W - 6,
                y + CELL_H / 2 + 4);
        if (t->rows_are == ROWS_HEADS)
            fprintf(f, "head %d, ", r / G + 1);
        fprintf(f, "row %d</text>\n", r % G);
        for (int c = 0; c < G; c++) /* row r / G's cell (r % G) G + c */
            value_cell(f, c, y, t->values[(size_t)r * G + c], most);
    }
    fputs("</svg>\n", f);
}

/* An image model's attention weights over its picture, a panel per row of t (per head,
 * or the word the step emits), as s2s heatmap draws a caption's. */
static void weights_over_picture(FILE *f, const ExplainStep *x, const ExplainTensor *t,
                                 const ExplainWords *w, int uid)
{
    Picture pic;
    Error err;
    if (picture_load(&pic, w->picture, PICTURE_DISPLAY_SIZE, &err) < 0) {
        fputs("<p class=\"more\">The picture cannot be drawn: ", f);
        heatmap_xml_text(f, err.msg);
        fputs("</p>\n", f);
        return;
    }
    float *alpha = xmalloc_array((size_t)t->rows * t->cols, sizeof(float));
    for (size_t e = 0; e < (size_t)t->rows * t->cols; e++)
        alpha[e] = (float)t->values[e];
    char names[ATTN_MAX_HEADS][256], id[32];
    const char *words[ATTN_MAX_HEADS];
    for (int r = 0; r < t->rows && r < ATTN_MAX_HEADS; r++) {
        if (t->rows > 1) {
            snprintf(names[r], sizeof names[r], "head %d", r + 1);
        } else if (x->self_layer) {
            explain_source_label(names[r], sizeof names[r], w, x->step - 1);
        } else {
            explain_target_label(names[r], sizeof names[r], w, x->step - 1);
        }
        words[r] = names[r];
    }
    snprintf(id, sizeof id, "explain%d", uid);
    if (picture_heatmap_svg(f, &pic, alpha, t->rows, t->cols, w->grid, words, id, 0, &err) < 0) {
        fputs("<p class=\"more\">", f);
        heatmap_xml_text(f, err.msg);
        fputs("</p>\n", f);
    }
    free(alpha);
    picture_free(&pic);
}

static void tensor_svg(FILE *f, const ExplainTensor *t, const ExplainWords *w, int max_cols)
{
    const int cols = t->cols < max_cols ? t->cols : max_cols;
    const int by_word = explain_by_position(t, w);
    const int by_target = !strcmp(t->cols_are, "target prefix") ||
                          !strcmp(t->cols_are, "target positions");
    const double most = svg_open(f, t, cols, t->rows);
    for (int c = 0; c < cols; c++) { /* the columns: source words, or dimensions */
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">",
                LABEL_W + c * CELL_W + CELL_W / 2, HEAD_H - 7);
        if (by_word || (by_target && c <= w->n_tgt)) {
            char label[1024];
            if (by_word)
                explain_source_label(label, sizeof label, w, c);
            else /* the target's positions, as far as its words are known */
                explain_prefix_label(label, sizeof label, w, c);
            heatmap_xml_text(f, label);
        } else
            fprintf(f, "%d", c + 1);
        fputs("</text>\n", f);
    }
    for (int r = 0; r < t->rows; r++) {
        const int y = HEAD_H + r * CELL_H;
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LABEL_W - 6, y + CELL_H / 2 + 4);
        row_label(f, t, w, r);
        fputs("</text>\n", f);
        for (int c = 0; c < cols; c++)
            value_cell(f, c, y, t->values[(size_t)r * t->cols + c], most);
    }
    fputs("</svg>\n", f);
}

static void shape_words(FILE *f, const ExplainTensor *t, const ExplainWords *w)
{
    const char *position = w->grid ? "grid cell" : "source word";
    if (t->rows_are == ROWS_ONE)
        fprintf(f, "%d values", t->cols);
    else
        fprintf(f, "%d x %d: one row per %s", t->rows, t->cols,
                t->rows_are == ROWS_SOURCE   ? position
                : t->rows_are == ROWS_HEADS  ? "head"
                : t->rows_are == ROWS_PREFIX ? "target position"
                                             : "row");
    if (t->cols_are[0] && strcmp(t->cols_are, "source words"))
        fprintf(f, ", %s %s", t->cols_are, t->rows_are == ROWS_ONE ? "wide" : "columns");
    else if (!strcmp(t->cols_are, "source words"))
        fprintf(f, ", one %s per %s", t->rows_are == ROWS_ONE ? "value" : "column", position);
    if (w->grid && explain_by_position(t, w))
        fprintf(f, " (drawn as the %d x %d grid over the picture)", w->grid, w->grid);
}

/* The source's (or the target's first n) labels, a space between. */
static void words_line(FILE *f, const ExplainWords *w, int target, int n)
{
    char label[1024];
    for (int k = 0; k < n; k++) {
        if (k)
            fputc(' ', f);
        if (target)
            explain_target_label(label, sizeof label, w, k);
        else
            explain_source_label(label, sizeof label, w, k);
        heatmap_xml_text(f, label);
    }
}

void explain_print_html(FILE *f, const ExplainStep *x, const ExplainWords *w, int max_cols)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>s2s explain"
          "</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:80em}"
          "section{margin:1.5em 0}h2{font-family:monospace;font-size:1.1em;margin:0}"
          ".shape{color:#555;margin:.2em 0}.about{margin:.2em 0 .5em}"
          ".more{color:#555}td{padding:0 1em 0 0}</style></head>\n<body>\n<h1>", f);
    if (x->step == 0)
        fputs("A worked example", f);
    else if (x->self_layer)
        fprintf(f, "Self-attention layer %d at source position %d", x->self_layer, x->step);
    else if (x->dec_self)
        fprintf(f, "The decoder's self-attention, layer %d, at step %d", x->dec_self, x->step);
    else
        fprintf(f, "Attention at step %d", x->step);
    fputs("</h1>\n<p>source: ", f);
    if (w->grid) {
        fputs("the picture ", f);
        heatmap_xml_text(f, w->picture ? w->picture : "");
        fprintf(f, ", seen as a %d x %d grid of %d cells (cell j: row j / %d, column j %% %d, "
                "from 0)", w->grid, w->grid, w->S, w->grid, w->grid);
    } else {
        words_line(f, w, 0, w->S);
    }
    fputs("</p>\n", f);
    if (x->step > 0 && !x->self_layer) {
        fputs("<p>target as far as the step: ", f);
        words_line(f, w, 1, x->step);
        if (x->dec_layers)
            fprintf(f, " (the Transformer decoder's layer %d of %d",
                    x->dec_self ? x->dec_self : x->dec_layers, x->dec_layers);
        else
            fprintf(f, " (score %s", w->score);
        if (x->heads > 1)
            fprintf(f, ", %d heads", x->heads);
        fputs(")</p>\n", f);
    }
    for (int k = 0; k < x->n; k++) {
        const ExplainTensor *t = &x->tensors[k];
        fputs("<section><h2>", f);
        heatmap_xml_text(f, t->title);
        fputs("</h2><p class=\"shape\">", f);
        shape_words(f, t, w);
        fputs("</p><p class=\"about\">", f);
        heatmap_xml_text(f, t->about);
        fputs("</p>\n", f);
        if (w->grid && explain_by_position(t, w)) {
            grid_svg(f, t, w);
            if (w->picture && (!strcmp(t->name, "alpha") || !strcmp(t->name, "alpha mean")))
                weights_over_picture(f, x, t, w, k);
        } else {
            tensor_svg(f, t, w, max_cols);
        }
        if (t->cols > max_cols && !(w->grid && explain_by_position(t, w)))
            fprintf(f, "<p class=\"more\">... and %d more columns (--max-cols)</p>\n",
                    t->cols - max_cols);
        fputs("</section>\n", f);
    }
    if (x->n_next > 0) {
        fputs("<section><h2>the next word</h2><table>\n", f);
        for (int r = 0; r < x->n_next; r++) {
            fputs("<tr><td>", f);
            heatmap_xml_text(f, w->next[r]);
            fprintf(f, "</td><td>%.4f</td></tr>\n", x->next_prob[r]);
        }
        fputs("</table></section>\n", f);
    }
    fputs("<script>document.body.dataset.tensors = "
          "document.querySelectorAll('svg.heatmap').length;</script>\n</body></html>\n", f);
}
