/* explain_examples.c: the tutorials' worked examples of attention (explain.h), computed
 * by the attention kernels of the double build, the ones the model's steps run on. Built
 * in double only (-DS2S_REAL_DOUBLE): the published numbers are exact there. */
#ifndef S2S_REAL_DOUBLE
#error "explain_examples.c is for the double build (-DS2S_REAL_DOUBLE)"
#endif
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/explain.h"
#include "nn/attn_kernels.h"
#include "nn/ops.h"

/* A tensor of out from values (rows, cols) of the double build. */
static void add(ExplainStep *out, const char *name, const char *title, ExplainRows rows_are,
                int rows, int cols, const char *cols_are, const double *values, const char *about)
{
    ExplainTensor *t = explain_add_tensor(out, name, title, rows_are, rows, cols, cols_are, about);
    memcpy(t->values, values, sizeof(double) * (size_t)rows * cols);
}

static const char *const DOT_ROWS[] = {"h_1", "h_2", "h_3", "h_4"};
static const char *const QKV_ROWS[] = {"word 1", "word 2", "word 3", "word 4"};

/* The dot score: s = [5, 1, 20] against h_1..h_4; the scores are whole numbers. */
static void dot_example(ExplainStep *out)
{
    const double s[3] = {5, 1, 20};
    const double h[4 * 3] = {3, 12, 45, 59, 2, 5, 1, 43, 5, 4, 3, 45.3};
    double e[4], alpha[4], c[3], weighted[4 * 3];
    attn_dot_scores_forward(e, s, 3, h, 3, 1, NULL, 4, 1, 3);
    attn_softmax_forward(alpha, e, NULL, 4, 1);
    attn_context_forward(c, 3, alpha, h, 3, NULL, 4, 1, 3);
    for (int j = 0; j < 4; j++)
        for (int u = 0; u < 3; u++)
            weighted[j * 3 + u] = alpha[j] * h[j * 3 + u];
    out->words = DOT_ROWS;
    out->S = 4;
    add(out, "H", "H = h_1 .. h_4", ROWS_SOURCE, 4, 3, "", h,
        "the annotations: four vectors of 3 numbers, one per source word");
    add(out, "s_prev", "s_{i-1}", ROWS_ONE, 1, 3, "", s,
        "the decoder's state: the query the annotations are scored against");
    add(out, "scores", "e_j = s_{i-1} . h_j", ROWS_ONE, 1, 4, "source words", e,
        "the scores: one dot product per annotation (the tutorial's 927, 397, 148, 929)");
    add(out, "alpha", "alpha_j = softmax_j(e_j)", ROWS_ONE, 1, 4, "source words", alpha,
        "the weights: exp(e_j) over their sum; e = 929 and 927 take nearly all of it, 397 "
        "leaves 8e-232, and 148 leaves exactly 0 (e^-781 is below the smallest double)");
    add(out, "alpha h", "alpha_j h_j", ROWS_SOURCE, 4, 3, "", weighted,
        "each annotation scaled by its weight");
    add(out, "context", "c = sum_j alpha_j h_j", ROWS_ONE, 1, 3, "", c,
        "the context: the weighted sum, nearly h_4 with a little of h_1");
}

/* Scaled dot-product attention of four one-hot words X through W_Q, W_K, W_V: every
 * word's query against every word's key, row by row. */
static void qkv_example(ExplainStep *out)
{
    const double X[4 * 3] = {1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1};
    const double W_Q[3 * 3] = {2, 0, 2, 2, 0, 0, 2, 1, 2};
    const double W_K[3 * 3] = {2, 2, 2, 0, 2, 1, 0, 1, 1};
    const double W_V[3 * 3] = {1, 1, 0, 0, 1, 1, 0, 0, 0};
    double Q[4 * 3], K[4 * 3], V[4 * 3], e[4 * 4], alpha[4 * 4], Z[4 * 3];
    /* Q (4, 3) = X (4, 3) . W_Q (3, 3), and K and V likewise */
    matmul(CblasNoTrans, CblasNoTrans, 4, 3, 3, 1, X, 3, W_Q, 3, 0, Q, 3);
    matmul(CblasNoTrans, CblasNoTrans, 4, 3, 3, 1, X, 3, W_K, 3, 0, K, 3);
    matmul(CblasNoTrans, CblasNoTrans, 4, 3, 3, 1, X, 3, W_V, 3, 0, V, 3);
    for (int i = 0; i < 4; i++) { /* query i, as one decoder step over the four keys */
        attn_dot_scores_forward(e + i * 4, Q + i * 3, 3, K, 3, 1 / sqrt(3.0), NULL, 4, 1, 3);
        attn_softmax_forward(alpha + i * 4, e + i * 4, NULL, 4, 1);
        attn_context_forward(Z + i * 3, 3, alpha + i * 4, V, 3, NULL, 4, 1, 3);
    }
    out->words = QKV_ROWS;
    out->S = 4;
    add(out, "X", "X", ROWS_SOURCE, 4, 3, "", X, "the four words, one-hot");
    add(out, "W_Q", "W_Q", ROWS_INDEX, 3, 3, "", W_Q, "the query weights (3 x 3)");
    add(out, "W_K", "W_K", ROWS_INDEX, 3, 3, "", W_K, "the key weights (3 x 3)");
    add(out, "W_V", "W_V", ROWS_INDEX, 3, 3, "", W_V, "the value weights (3 x 3)");
    add(out, "Q", "Q = X W_Q", ROWS_SOURCE, 4, 3, "", Q, "each word's query: what it looks for");
    add(out, "K", "K = X W_K", ROWS_SOURCE, 4, 3, "", K, "each word's key: what it offers");
    add(out, "V", "V = X W_V", ROWS_SOURCE, 4, 3, "", V, "each word's value: what it gives");
    add(out, "scores", "Q K^T / sqrt(3)", ROWS_SOURCE, 4, 4, "source words", e,
        "the scores: each word's query (a row) against every word's key (a column), "
        "divided by the square root of the width");
    add(out, "alpha", "softmax(Q K^T / sqrt(3))", ROWS_SOURCE, 4, 4, "source words", alpha,
        "the weights, row by row: how much each word (row) reads of each other (column)");
    add(out, "context", "softmax(Q K^T / sqrt(3)) V", ROWS_SOURCE, 4, 3, "", Z,
        "the output: each word's weighted sum of the values");
}

int explain_example_f64(ExplainStep *out, const char *which)
{
    *out = (ExplainStep){.heads = 1, .head = -1};
    for (int k = 0; k < ATTN_MAX_HEADS; k++)
        out->chosen[k] = -1;
    if (!strcmp(which, "dot"))
        dot_example(out);
    else if (!strcmp(which, "qkv") || !strcmp(which, "general"))
        qkv_example(out);
    else
        return -1;
    return 0;
}
