/* explain_html.c: a worked attention step as one self-contained HTML page: every tensor an
 * annotated heatmap, as the tutorials draw them (see explain_print.h). */
#include <math.h>
#include <string.h>

#include "report/explain_print.h"
#include "report/heatmap.h"

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

/* A row's label: its source word, its head, or its number. */
static void row_label(FILE *f, const ExplainTensor *t, const ExplainWords *w, int r)
{
    if (t->rows_are == ROWS_SOURCE)
        heatmap_xml_text(f, w->src[r]);
    else if (t->rows_are == ROWS_HEADS)
        fprintf(f, "head %d", r + 1);
    else if (t->rows_are == ROWS_INDEX)
        fprintf(f, "row %d", r + 1);
}

static void tensor_svg(FILE *f, const ExplainTensor *t, const ExplainWords *w, int max_cols)
{
    const int cols = t->cols < max_cols ? t->cols : max_cols;
    const int by_word = !strcmp(t->cols_are, "source words") && t->cols == w->S;
    double most = 0;
    for (size_t e = 0; e < (size_t)t->rows * t->cols; e++)
        most = fmax(most, fabs(t->values[e]));
    fprintf(f, "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n",
            LABEL_W + cols * CELL_W + 4, HEAD_H + t->rows * CELL_H + 4);
    for (int c = 0; c < cols; c++) { /* the columns: source words, or dimensions */
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">",
                LABEL_W + c * CELL_W + CELL_W / 2, HEAD_H - 7);
        if (by_word)
            heatmap_xml_text(f, w->src[c]);
        else
            fprintf(f, "%d", c + 1);
        fputs("</text>\n", f);
    }
    for (int r = 0; r < t->rows; r++) {
        const int y = HEAD_H + r * CELL_H;
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LABEL_W - 6, y + CELL_H / 2 + 4);
        row_label(f, t, w, r);
        fputs("</text>\n", f);
        for (int c = 0; c < cols; c++) {
            const double v = t->values[(size_t)r * t->cols + c];
            char colour[8];
            int light;
            cell_colour(most > 0 ? v / most : 0, colour, &light);
            const int x = LABEL_W + c * CELL_W;
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                    "stroke=\"#fff\"/><text x=\"%d\" y=\"%d\" text-anchor=\"middle\"%s>%.3g</text>\n",
                    x, y, CELL_W, CELL_H, colour, x + CELL_W / 2, y + CELL_H / 2 + 4,
                    light ? " fill=\"#fff\"" : "", v);
        }
    }
    fputs("</svg>\n", f);
}

static void shape_words(FILE *f, const ExplainTensor *t)
{
    if (t->rows_are == ROWS_ONE)
        fprintf(f, "%d values", t->cols);
    else
        fprintf(f, "%d x %d: one row per %s", t->rows, t->cols,
                t->rows_are == ROWS_SOURCE ? "source word" : t->rows_are == ROWS_HEADS ? "head" : "row");
    if (t->cols_are[0] && strcmp(t->cols_are, "source words"))
        fprintf(f, ", %s %s", t->cols_are, t->rows_are == ROWS_ONE ? "wide" : "columns");
}

static void words_line(FILE *f, const char *const *words, int n)
{
    for (int k = 0; k < n; k++) {
        if (k)
            fputc(' ', f);
        heatmap_xml_text(f, words[k]);
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
    else
        fprintf(f, "Attention at step %d", x->step);
    fputs("</h1>\n<p>source: ", f);
    words_line(f, w->src, w->S);
    fputs("</p>\n", f);
    if (x->step > 0 && !x->self_layer) {
        fputs("<p>target as far as the step: ", f);
        words_line(f, w->tgt, x->step);
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
        shape_words(f, t);
        fputs("</p><p class=\"about\">", f);
        heatmap_xml_text(f, t->about);
        fputs("</p>\n", f);
        tensor_svg(f, t, w, max_cols);
        if (t->cols > max_cols)
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
