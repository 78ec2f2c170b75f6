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

/* What the model's positions are: words of the source, or cells of a picture's grid. */
static const char *position_name(const ExplainWords *w)
{
    return w->grid ? "grid cell" : "source word";
}

int explain_by_position(const ExplainTensor *t, const ExplainWords *w)
{
    return !strcmp(t->cols_are, "source words") && t->cols == w->S;
}

/* word, or "<unk>(word)" when unknown, into out (cap bytes); a word too long for it is
 * cut at a character's first byte, never inside one. */
static void word_label(char *out, size_t cap, const char *word, int unknown)
{
    const size_t room = cap - (unknown ? sizeof "<unk>()" - 1 : 0) - 1;
    size_t n = strlen(word);
    if (n > room) {
        n = room;
        while (n > 0 && ((unsigned char)word[n] & 0xC0) == 0x80)
            n--;
    }
    snprintf(out, cap, unknown ? "<unk>(%.*s)" : "%.*s", (int)n, word);
}

void explain_source_label(char *out, size_t cap, const ExplainWords *w, int j)
{
    if (w->grid)
        snprintf(out, cap, "%d (%d,%d)", j, j / w->grid, j % w->grid);
    else
        word_label(out, cap, w->src[j], w->src_unk && w->src_unk[j]);
}

void explain_target_label(char *out, size_t cap, const ExplainWords *w, int i)
{
    word_label(out, cap, w->tgt[i], w->tgt_unk && w->tgt_unk[i]);
}

void explain_prefix_label(char *out, size_t cap, const ExplainWords *w, int r)
{
    if (r == 0)
        snprintf(out, cap, "<s>");
    else
        explain_target_label(out, cap, w, r - 1);
}

/* Whether t's columns are the target's positions (the prefix, or every position). */
static int by_target_position(const ExplainTensor *t)
{
    return !strcmp(t->cols_are, "target prefix") || !strcmp(t->cols_are, "target positions");
}

/* "5 x 10: one row per source word, attention_size (a) columns" */
static void print_shape(FILE *f, const ExplainTensor *t, const ExplainWords *w)
{
    const char *position = position_name(w);
    if (t->rows_are == ROWS_ONE) {
        if (!strcmp(t->cols_are, "source words"))
            fprintf(f, "%d: one value per %s", t->cols, position);
        else if (by_target_position(t))
            fprintf(f, "%d: one value per target position", t->cols);
        else if (t->cols_are[0])
            fprintf(f, "%d: %s values", t->cols, t->cols_are);
        else
            fprintf(f, "%d values", t->cols);
    } else if (t->rows_are == ROWS_INDEX) {
        fprintf(f, "%d x %d", t->rows, t->cols);
    } else {
        fprintf(f, "%d x %d: one row per %s, ", t->rows, t->cols,
                t->rows_are == ROWS_SOURCE   ? position
                : t->rows_are == ROWS_PREFIX ? "target position"
                                             : "head");
        if (!strcmp(t->cols_are, "source words"))
            fprintf(f, "one column per %s", position);
        else if (by_target_position(t))
            fprintf(f, "one column per target position");
        else if (t->cols_are[0])
            fprintf(f, "%s columns", t->cols_are);
        else
            fprintf(f, "%d columns", t->cols);
    }
    if (w->grid && explain_by_position(t, w))
        fprintf(f, " (laid out below as the %d x %d grid over the picture)", w->grid, w->grid);
}

/* A row's label: its source word, or its head (from 1). */
static void print_row_label(FILE *f, const ExplainTensor *t, const ExplainWords *w, int r)
{
    char label[64];
    if (t->rows_are == ROWS_SOURCE) {
        char word[1024];
        explain_source_label(word, sizeof word, w, r);
        termtext_escape(label, sizeof label, word);
    } else if (t->rows_are == ROWS_PREFIX) {
        char word[1024];
        explain_prefix_label(word, sizeof word, w, r);
        termtext_escape(label, sizeof label, word);
    } else if (t->rows_are == ROWS_HEADS)
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

/* An image model's values by cell: each row of t as the G x G grid over the picture. */
static void print_grid(FILE *f, const ExplainTensor *t, const ExplainWords *w)
{
    const int G = w->grid;
    for (int r = 0; r < t->rows; r++) {
        if (t->rows_are == ROWS_HEADS)
            fprintf(f, "    head %d\n", r + 1);
        else if (t->rows > 1)
            fprintf(f, "    row %d\n", r + 1);
        fprintf(f, "    %12s", "column");
        for (int c = 0; c < G; c++)
            fprintf(f, " %10d", c);
        fputc('\n', f);
        for (int y = 0; y < G; y++) {
            fprintf(f, "    row %-8d", y);
            for (int c = 0; c < G; c++)
                fprintf(f, " %10.4g", t->values[(size_t)r * t->cols + (size_t)y * G + c]);
            fputc('\n', f);
        }
    }
}

static void print_values(FILE *f, const ExplainTensor *t, const ExplainWords *w, int max_cols)
{
    if (w->grid && explain_by_position(t, w)) {
        print_grid(f, t, w);
        return;
    }
    const int shown = t->cols < max_cols ? t->cols : max_cols;
    /* the columns of a per-head matrix are the source words, or the target prefix's: name
     * them (the target's positions past the step are numbered) */
    if (explain_by_position(t, w) || by_target_position(t)) {
        fprintf(f, "    %12s", "");
        for (int c = 0; c < shown; c++) {
            char word[1024];
            if (!by_target_position(t))
                explain_source_label(word, sizeof word, w, c);
            else if (c <= w->n_tgt)
                explain_prefix_label(word, sizeof word, w, c);
            else
                snprintf(word, sizeof word, "%d", c + 1);
            print_column_word(f, word);
        }
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
    print_shape(f, t, w);
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
    char label[1024];
    if (w->grid) {
        fprintf(f, "source: the picture ");
        termtext_put(f, w->picture ? w->picture : "");
        fprintf(f, ", seen as a %d x %d grid of %d cells (cell j: row j / %d, column j %% %d, "
                "from 0)\n", w->grid, w->grid, w->S, w->grid, w->grid);
    } else {
        fprintf(f, "source: ");
        for (int j = 0; j < w->S; j++) {
            explain_source_label(label, sizeof label, w, j);
            termtext_put(f, label);
            fputc(j + 1 < w->S ? ' ' : '\n', f);
        }
    }
    if (x->self_layer) {
        fprintf(f, "self-attention layer %d of the encoder, at source %s %d (",
                x->self_layer, w->grid ? "cell" : "position", x->step);
        explain_source_label(label, sizeof label, w, x->step - 1);
        termtext_put(f, label);
        fprintf(f, "), %d head%s", x->heads, x->heads == 1 ? "" : "s");
        if (x->head >= 0)
            fprintf(f, ", head %d shown (its slices)", x->head + 1);
        fputs("\n\n", f);
        for (int k = 0; k < x->n; k++)
            print_tensor(f, &x->tensors[k], w, max_cols);
        return;
    }
    fprintf(f, "step %d of the target, the decoder emitting ", x->step);
    explain_target_label(label, sizeof label, w, x->step - 1);
    termtext_put(f, label);
    fprintf(f, " after");
    for (int i = 0; i + 1 < x->step; i++) {
        fputc(' ', f);
        explain_target_label(label, sizeof label, w, i);
        termtext_put(f, label);
    }
    fprintf(f, x->step == 1 ? " <s> alone\n" : "\n");
    if (x->dec_self)
        fprintf(f, "the Transformer decoder's masked self-attention, layer %d of %d",
                x->dec_self, x->dec_layers);
    else if (x->dec_layers)
        fprintf(f, "the Transformer decoder's last layer (%d of %d): its masked "
                "self-attention, then its cross-attention", x->dec_layers, x->dec_layers);
    else
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
            explain_source_label(label, sizeof label, w, x->chosen[k]);
            termtext_put(f, label);
            fputc(')', f);
        }
        fputs("\n\n", f);
    }
    if (x->dec_layers)
        fprintf(f, "the next word (the output layer on the last layer's output), most "
                "probable first:\n");
    else
        fprintf(f, "the next word (the readout and the output layer on s_i, c_i and the word "
            "before), most probable first:\n");
    for (int r = 0; r < x->n_next; r++) {
        fputs("    ", f);
        termtext_put(f, w->next[r]);
        int pad = 12 - termtext_width(w->next[r]);
        fprintf(f, "%*s%.4f\n", pad > 1 ? pad : 1, "", x->next_prob[r]);
    }
}

/* "key":[words...],"key_unk":[the positions of those the model reads as <unk>] */
static void json_words(FILE *f, const char *key, const char *const *words, int n,
                       const unsigned char *unk)
{
    fprintf(f, "\"%s\":[", key);
    for (int k = 0; k < n; k++) {
        if (k)
            fputc(',', f);
        json_write_string(f, words[k]);
    }
    fprintf(f, "],\"%s_unk\":[", key);
    for (int k = 0, listed = 0; unk && k < n; k++)
        if (unk[k])
            fprintf(f, "%s%d", listed++ ? "," : "", k);
    fputc(']', f);
}

void explain_print_json(FILE *f, const ExplainStep *x, const ExplainWords *w)
{
    char num[40];
    fputc('{', f);
    json_words(f, "src", w->src, w->S, w->src_unk);
    fputc(',', f);
    json_words(f, "tgt", w->tgt, w->tgt && !x->self_layer ? x->step : 0, w->tgt_unk);
    if (w->grid) {
        fputs(",\"picture\":", f);
        json_write_string(f, w->picture ? w->picture : "");
        fprintf(f, ",\"grid\":%d", w->grid);
    }
    if (x->self_layer)
        fprintf(f, ",\"self\":%d", x->self_layer);
    if (x->dec_self)
        fprintf(f, ",\"dec_self\":%d", x->dec_self);
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
