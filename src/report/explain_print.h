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
 * teacher forcing), and the words of out->next_word; the words are as typed, and
 * src_unk / tgt_unk (NULL: none) mark the ones the model reads as <unk>. An image
 * model's source is the G x G grid of cells over its picture (S = G * G; src names them
 * by number, row by row from 0). */
typedef struct {
    const char *const *src;
    int S;
    const char *const *tgt;
    int n_tgt;          /* the words in tgt (the step's; 0 without a target) */
    const char *const *next;
    const char *score;  /* the score's name (model.attention) */
    const unsigned char *src_unk, *tgt_unk; /* per position: 1 where the vocabulary lacks it */
    int grid;           /* an image model's G, else 0 */
    const char *picture; /* an image model's picture file (html draws the weights over it) */
} ExplainWords;

/* Source position j's label as the text and the page show it: the word, "<unk>(word)"
 * for one the model reads as <unk>, or an image model's cell "j (row,column)". The same
 * for target position i. */
void explain_source_label(char *out, size_t cap, const ExplainWords *w, int j);
void explain_target_label(char *out, size_t cap, const ExplainWords *w, int i);
/* Row r of a ROWS_PREFIX tensor (and column r of one over the "target prefix"): the
 * decoder's input at position r, <s> and then the target's words. */
void explain_prefix_label(char *out, size_t cap, const ExplainWords *w, int r);

/* Whether t's columns are the source's positions (every one of them): an image model
 * lays such a tensor out as its grid. */
int explain_by_position(const ExplainTensor *t, const ExplainWords *w);

/* Text: at most max_cols columns of a matrix (or values of a vector) are printed, the
 * rest counted ("... 56 more columns"), but for an image model the values by cell, which
 * are laid out as the grid over the picture, G rows of G, whole. A word the model reads
 * as <unk> is shown as "<unk>(word)". */
void explain_print_text(FILE *f, const ExplainStep *x, const ExplainWords *w, int max_cols);
/* {"src": [...], "src_unk": [positions from 0], "tgt": [...], "tgt_unk": [...], "step":
 * i, "tensors": [{"name", "shape", "values"}, ...], "next": [{"word", "p"}, ...]} on one
 * line; an image model's also "picture": its file and "grid": G. */
void explain_print_json(FILE *f, const ExplainStep *x, const ExplainWords *w);
/* One self-contained HTML page (no network): each tensor drawn as a heatmap with its
 * values in the cells, the source words (or heads) and the columns on its axes, its
 * equation, shape and purpose beside it; at most max_cols columns a tensor, the rest
 * counted. An image model's values by cell are drawn as the grid over the picture, and
 * its weights (alpha) over the picture itself, as s2s heatmap draws them. A small script marks the page drawn (data-tensors on <body>), which a test
 * reads to know it ran. */
void explain_print_html(FILE *f, const ExplainStep *x, const ExplainWords *w, int max_cols);

#endif
