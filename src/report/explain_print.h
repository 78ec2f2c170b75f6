/* explain_print.h: a worked attention step (model/explain.h) as a reader sees it: text
 * for a terminal, every tensor under its name with its shape in words, the line that
 * says what it is for, and its values, columns past a limit elided with their count; or
 * one JSON object, every value as the shortest text that reads back as the same float. */
#ifndef S2S_EXPLAIN_PRINT_H
#define S2S_EXPLAIN_PRINT_H

#include <stdio.h>

#include "model/explain.h"

/* The words around the step: the source (S tokens, </s> included), the target as far
 * as the step (its first `step` tokens, the last being the word the step emits under
 * teacher forcing), and the words of out->next_word. */
typedef struct {
    const char *const *src;
    int S;
    const char *const *tgt;
    const char *const *next;
    const char *score;  /* the score's name (model.attention) */
} ExplainWords;

/* Text: at most max_cols columns of a matrix (or values of a vector) are printed, the
 * rest counted ("... 56 more columns"). */
void explain_print_text(FILE *f, const ExplainStep *x, const ExplainWords *w, int max_cols);
/* {"src": [...], "tgt": [...], "step": i, "tensors": [{"name", "shape", "values"}, ...],
 * "next": [{"word", "p"}, ...]} on one line. */
void explain_print_json(FILE *f, const ExplainStep *x, const ExplainWords *w);
/* One self-contained HTML page (no network): each tensor drawn as a heatmap with its
 * values in the cells, the source words (or heads) and the columns on its axes, its
 * equation, shape and purpose beside it; at most max_cols columns a tensor, the rest
 * counted. A small script marks the page drawn (data-tensors on <body>), which a test
 * reads to know it ran. */
void explain_print_html(FILE *f, const ExplainStep *x, const ExplainWords *w, int max_cols);

#endif
