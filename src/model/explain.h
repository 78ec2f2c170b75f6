/* explain.h: one decoder attention step worked out (`s2s explain`): every tensor the
 * step computes, in the order it computes them, named as model/MODEL.md names them, with
 * its shape in words and one line on what it is for. The values are read from the
 * workspace after the model's own teacher-forced pass (model_forward), never computed a
 * second way: what explain shows is what the model computes. The only values it forms
 * itself are the two that the model folds into one operation -- the additive score's
 * sum before its tanh, and the products alpha_j h_j before their sum, the context --
 * and it says so; and the next words' probabilities, which the output layer's own
 * functions give for the step's readout alone. */
#ifndef S2S_EXPLAIN_H
#define S2S_EXPLAIN_H

#include "model/batch.h"
#include "model/model.h"

/* What a tensor's rows are: they label the rows of its drawing. */
/* ROWS_INDEX: a matrix whose rows are only numbered (a weight matrix of an example).
 * ROWS_PREFIX: the target positions a Transformer decoder step reads, row r the input at
 * position r (<s>, then the words before the step); columns over them say cols_are
 * "target prefix". */
typedef enum { ROWS_ONE, ROWS_SOURCE, ROWS_HEADS, ROWS_INDEX, ROWS_PREFIX } ExplainRows;

typedef struct {
    char name[32];       /* its key in --format json: "alpha", "context", "W_a s", ... */
    char title[64];      /* as MODEL.md writes it: "W_a s_{i-1}", "alpha_i" */
    ExplainRows rows_are;
    int rows, cols;      /* rows 1 with ROWS_ONE: a vector of cols values */
    char cols_are[64];   /* "attention_size (a)", "d_h (the annotation width)" */
    char about[240];     /* what it is for, in plain words */
    double *values;      /* (rows, cols) row-major, owned: the model's floats, exactly */
} ExplainTensor;

enum { EXPLAIN_TOP_WORDS = 5 };

typedef struct {
    ExplainTensor *tensors;
    int n, cap;
    int step;            /* i, from 1 (0: a worked example, not a model's step); with a
                          * self-attention layer, the source position j, from 1 */
    int self_layer;      /* the self-attention layer explained (from 1), 0 for the
                          * decoder's attention */
    int dec_self;        /* the Transformer decoder's layer whose masked self-attention
                          * is explained (from 1; --dec-self), 0 otherwise */
    int dec_layers;      /* a Transformer decoder's layers (its step shows the last), 0 for
                          * a recurrent decoder */
    int float_values;    /* the values are floats (the model's), not doubles */
    int heads, head;     /* H; the one head shown (from 0), or -1 for every head */
    int chosen[ATTN_MAX_HEADS]; /* argmax contexts: the position each head read; -1 soft */
    const char *const *words; /* a worked example's row names (S of them), else NULL */
    int S;
    int n_next;
    int next_word[EXPLAIN_TOP_WORDS];   /* the most probable next words (target ids) */
    double next_prob[EXPLAIN_TOP_WORDS]; /* and their probabilities */
} ExplainStep;

/* Step `step` (from 1 to bt->tgt_len[0]) of the model on a batch of one pair: runs the
 * model's pass over the whole pair on ws (a forward-only workspace for the batch, with
 * model_set_argmax as wanted), keeping what the step computes and then overwrites, and
 * reads the step's tensors into out: the same pass `s2s align` runs on that pair alone.
 * head: -1 every head, or the one head k (from 0) whose slices are shown. The model must
 * have attention weights (model_has_alignments). */
void explain_decoder_step(ExplainStep *out, Workspace *ws, const Params *P, const Batch *bt,
                          int step, int head);
/* A Transformer decoder's step (explain_transformer.c; explain_decoder_step calls it):
 * its last layer at target step `step` (from 1): the layer's input rows X of the prefix,
 * the step's query, the cached keys and values of the prefix, the scores, the causal
 * mask, each head's weights and what they gather, then the cross-attention: the
 * annotations, its query, keys and values, scores, weights ("alpha": the alignment, and
 * with several heads their mean) and context ("context"), and the layer's output. With
 * dec_self > 0, layer dec_self's masked self-attention alone, named as --self names the
 * encoder's. Runs the model's teacher-forced pass on ws (forward-only, for bt: one
 * pair). */
void explain_transformer_step(ExplainStep *out, Workspace *ws, const Params *P, const Batch *bt,
                              int step, int head, int dec_self);
/* Self-attention layer `layer` (from 1 to the model's layers) of the encoder at source
 * position `position` (from 1 to bt->src_len[0]): the layer's input, the position's query
 * and every position's key and value, the scores, the weights each head gives (and
 * their mean, the map alignments.jsonl holds), their weighted values and the layer's
 * output there. Runs the encoder on ws (a forward-only workspace for bt, a batch of one
 * sentence) and reads them from it. head: -1 every head, or the one head k (from 0). */
void explain_self_step(ExplainStep *out, Workspace *ws, const Params *P, const Batch *bt,
                       int layer, int position, int head);
void explain_free(ExplainStep *out);
/* Appends a tensor of rows x cols doubles to out (explain_tensor.c) and returns it, its
 * values to fill: for the readers of a step and of the examples. */
ExplainTensor *explain_add_tensor(ExplainStep *out, const char *name, const char *title,
                                  ExplainRows rows_are, int rows, int cols, const char *cols_are,
                                  const char *about);

/* The tutorials' worked examples through the double build's attention kernels (explain
 * prints them as it prints a model's step, so a learner can check a notebook number for
 * number): "dot", the dot score of s = [5, 1, 20] against four annotations (927, 397,
 * 148, 929); "qkv" (or "general", the tutorial's name for it), scaled dot-product
 * attention of four one-hot words through integer W_Q, W_K, W_V (tests/fixtures/
 * README.md). Fills out (tensors, words) and returns 0, or -1 for another name. The
 * words (out->words, S of them) are the rows' names. */
int explain_example_f64(ExplainStep *out, const char *which);

#endif
