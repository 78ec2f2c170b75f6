/* explain_print.c: a worked attention step as text and as JSON (see explain_print.h). */
#include "report/explain_print.h"

#include <string.h>

#include "text/json.h"
#include "text/number.h"
#include "text/termtext.h"

/* text at most `width` columns a line, each line indented by two spaces */
static void print_wrapped(FILE *f, const char *text, int width)
{
    const char *p = text;
    while (*p) {
        int n = (int)strlen(p);
        if (n > width - 2) {
            n = width - 2;
            while (n > 0 && p[n] != ' ')
                n--;
            if (n == 0)
                n = width - 2;
        }
        fprintf(f, "  %.*s\n", n, p);
        p += n;
        while (*p == ' ')
            p++;
    }
}

/* "5 x 10: one row per source word, attention_size (a) columns" */
static void print_shape(FILE *f, const ExplainTensor *t)
{
    if (t->rows_are == ROWS_ONE) {
        if (!strcmp(t->cols_are, "source words"))
            fprintf(f, "%d: one value per source word", t->cols);
        else if (t->cols_are[0])
            fprintf(f, "%d: %s values", t->cols, t->cols_are);
        else
            fprintf(f, "%d values", t->cols);
        return;
    }
    if (t->rows_are == ROWS_INDEX) {
        fprintf(f, "%d x %d", t->rows, t->cols);
        return;
    }
    fprintf(f, "%d x %d: one row per %s, ", t->rows, t->cols,
            t->rows_are == ROWS_SOURCE ? "source word" : "head");
    if (!strcmp(t->cols_are, "source words"))
        fprintf(f, "one column per source word");
    else if (t->cols_are[0])
        fprintf(f, "%s columns", t->cols_are);
    else
        fprintf(f, "%d columns", t->cols);
}

/* A row's label: its source word, or its head (from 1). */
static void print_row_label(FILE *f, const ExplainTensor *t, const ExplainWords *w, int r)
{
    char label[64];
    if (t->rows_are == ROWS_SOURCE)
        termtext_escape(label, sizeof label, w->src[r]);
    else if (t->rows_are == ROWS_HEADS)
        snprintf(label, sizeof label, "head %d", r + 1);
    else if (t->rows_are == ROWS_INDEX)
        snprintf(label, sizeof label, "row %d", r + 1);
    else
        label[0] = '\0';
    int pad = 12 - termtext_width(label);
    fprintf(f, "    ");
    termtext_put(f, label);
    fprintf(f, "%*s", pad > 1 ? pad : 1, "");
}

/* A source word over a column of values: right-aligned in 10 columns, or its first 9
 * characters and an ellipsis, so that a cut word is seen to be cut. */
static void print_column_word(FILE *f, const char *word)
{
    char text[256];
    termtext_escape(text, sizeof text, word);
    const int width = termtext_width(text);
    if (width <= 10) {
        fprintf(f, " %*s%s", 10 - width, "", text);
        return;
    }
    /* the first 9 characters: the bytes before the 10th character's first byte */
    size_t end = 0;
    for (int chars = 0; text[end]; end++)
        if (((unsigned char)text[end] & 0xC0) != 0x80 && ++chars == 10)
            break;
    fprintf(f, " %.*s\xe2\x80\xa6", (int)end, text); /* U+2026 */
}

static void print_values(FILE *f, const ExplainTensor *t, const ExplainWords *w, int max_cols)
{
    const int shown = t->cols < max_cols ? t->cols : max_cols;
    /* the columns of a per-head matrix are the source words: name them */
    if (!strcmp(t->cols_are, "source words") && t->cols == w->S) {
        fprintf(f, "    %12s", "");
        for (int c = 0; c < shown; c++)
            print_column_word(f, w->src[c]);
        fputc('\n', f);
    }
    for (int r = 0; r < t->rows; r++) {
        print_row_label(f, t, w, r);
        for (int c = 0; c < shown; c++)
            fprintf(f, " %10.4g", t->values[(size_t)r * t->cols + c]);
        if (shown < t->cols)
            fprintf(f, "  ... %d more", t->cols - shown);
        fputc('\n', f);
    }
}

/* A tensor: its title and shape, what it is for, its values. */
static void print_tensor(FILE *f, const ExplainTensor *t, const ExplainWords *w, int max_cols)
{
    fprintf(f, "%s    ", t->title);
    print_shape(f, t);
    fputc('\n', f);
    print_wrapped(f, t->about, 88);
    print_values(f, t, w, max_cols);
    fputc('\n', f);
}

void explain_print_text(FILE *f, const ExplainStep *x, const ExplainWords *w, int max_cols)
{
    if (x->step == 0) { /* a worked example: its tensors alone */
        for (int k = 0; k < x->n; k++)
            print_tensor(f, &x->tensors[k], w, max_cols);
        return;
    }
    fprintf(f, "source: ");
    for (int j = 0; j < w->S; j++) {
        termtext_put(f, w->src[j]);
        fputc(j + 1 < w->S ? ' ' : '\n', f);
    }
    if (x->self_layer) {
        fprintf(f, "self-attention layer %d of the encoder, at source position %d (", x->self_layer,
                x->step);
        termtext_put(f, w->src[x->step - 1]);
        fprintf(f, "), %d head%s", x->heads, x->heads == 1 ? "" : "s");
        if (x->head >= 0)
            fprintf(f, ", head %d shown (its slices)", x->head + 1);
        fputs("\n\n", f);
        for (int k = 0; k < x->n; k++)
            print_tensor(f, &x->tensors[k], w, max_cols);
        return;
    }
    fprintf(f, "step %d of the target, the decoder emitting ", x->step);
    termtext_put(f, w->tgt[x->step - 1]);
    fprintf(f, " after");
    for (int i = 0; i + 1 < x->step; i++) {
        fputc(' ', f);
        termtext_put(f, w->tgt[i]);
    }
    fprintf(f, x->step == 1 ? " <s> alone\n" : "\n");
    fprintf(f, "score: %s", w->score);
    if (x->heads > 1)
        fprintf(f, ", %d heads%s", x->heads, x->head >= 0 ? "" : " (each its own slice of "
                "every vector it splits: --head K shows one)");
    if (x->head >= 0)
        fprintf(f, ", head %d of %d (its slices)", x->head + 1, x->heads);
    fputs("\n\n", f);
    for (int k = 0; k < x->n; k++)
        print_tensor(f, &x->tensors[k], w, max_cols);
    if (x->chosen[0] >= 0) {
        fprintf(f, "argmax attention: ");
        for (int k = 0; k < x->heads; k++) {
            fprintf(f, "%shead %d read position %d (", k ? ", " : "", k + 1, x->chosen[k] + 1);
            termtext_put(f, w->src[x->chosen[k]]);
            fputc(')', f);
        }
        fputs("\n\n", f);
    }
    fprintf(f, "the next word (the readout and the output layer on s_i, c_i and the word "
            "before), most probable first:\n");
    for (int r = 0; r < x->n_next; r++) {
        fputs("    ", f);
        termtext_put(f, w->next[r]);
        int pad = 12 - termtext_width(w->next[r]);
        fprintf(f, "%*s%.4f\n", pad > 1 ? pad : 1, "", x->next_prob[r]);
    }
}

static void json_words(FILE *f, const char *key, const char *const *words, int n)
{
    fprintf(f, "\"%s\":[", key);
    for (int k = 0; k < n; k++) {
        if (k)
            fputc(',', f);
        json_write_string(f, words[k]);
    }
    fputc(']', f);
}

void explain_print_json(FILE *f, const ExplainStep *x, const ExplainWords *w)
{
    char num[40];
    fputc('{', f);
    json_words(f, "src", w->src, w->S);
    fputc(',', f);
    json_words(f, "tgt", w->tgt, w->tgt && !x->self_layer ? x->step : 0);
    if (x->self_layer)
        fprintf(f, ",\"self\":%d", x->self_layer);
    fprintf(f, ",\"step\":%d,\"score\":", x->step);
    json_write_string(f, w->score);
    fprintf(f, ",\"heads\":%d,\"tensors\":[", x->heads);
    for (int k = 0; k < x->n; k++) {
        const ExplainTensor *t = &x->tensors[k];
        fprintf(f, "%s{\"name\":", k ? "," : "");
        json_write_string(f, t->name);
        if (t->rows_are == ROWS_ONE)
            fprintf(f, ",\"shape\":[%d],\"values\":[", t->cols);
        else
            fprintf(f, ",\"shape\":[%d,%d],\"values\":[", t->rows, t->cols);
        for (size_t e = 0; e < (size_t)t->rows * t->cols; e++)
            fprintf(f, "%s%s", e ? "," : "",
                    x->float_values ? number_shortest_float(num, sizeof num, (float)t->values[e])
                                    : number_shortest(num, sizeof num, t->values[e]));
        fputs("]}", f);
    }
    fputc(']', f);
    if (x->chosen[0] >= 0) {
        fputs(",\"chosen\":[", f);
        for (int k = 0; k < x->heads; k++)
            fprintf(f, "%s%d", k ? "," : "", x->chosen[k]);
        fputc(']', f);
    }
    fputs(",\"next\":[", f);
    for (int r = 0; r < x->n_next; r++) {
        fprintf(f, "%s{\"word\":", r ? "," : "");
        json_write_string(f, w->next[r]);
        fprintf(f, ",\"p\":%s}", number_shortest_float(num, sizeof num, (float)x->next_prob[r]));
    }
    fputs("]}\n", f);
}
