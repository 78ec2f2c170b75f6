/* alignlog.c: alignments.jsonl into records (see alignlog.h). */
#include "report/alignlog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "model/attention.h"
#include "nn/transformer_decoder.h"
#include "text/json.h"
#include "text/number.h"
#include "text/textfile.h"

static char **copy_tokens(const JsonValue *v, int *n)
{
    *n = v->n_items;
    char **out = xcalloc((size_t)(*n ? *n : 1), sizeof(char *));
    for (int k = 0; k < *n; k++)
        out[k] = xstrdup(v->items[k].string);
    return out;
}

/* Whether v is a whole number from min to 1e15 (past that, doubles skip integers). */
static int is_whole(const JsonValue *v, double min)
{
    return v && v->type == JSON_NUMBER && v->number == floor(v->number) && v->number >= min &&
           v->number < 1e15;
}

/* What v is, for messages: its number, or its kind. */
static const char *describe(const JsonValue *v, char *out, size_t cap)
{
    static const char *const KINDS[] = {"null", "a boolean", "a number", "a string", "a list",
                                        "an object"};
    if (!v)
        return "nothing";
    if (v->type != JSON_NUMBER)
        return KINDS[v->type];
    number_shortest(out, cap, v->number);
    return out;
}

static int token_list(const JsonValue *v)
{
    if (!v || v->type != JSON_ARRAY || v->n_items < 1 || v->n_items > 100000)
        return 0;
    for (int k = 0; k < v->n_items; k++)
        if (v->items[k].type != JSON_STRING)
            return 0;
    return 1;
}

/* A matrix of rows x cols weights in [0, 1]: "weights", or matrix k (from 1) of the list
 * key ("heads", "self", "layers", "dec_self"; k 0 for weights). Checks it and, with out,
 * copies it row-major. rows_of names what a row stands for in messages ("target",
 * "source"); a column is a source token, but in "dec_self" a target position. */
static int take_matrix(const JsonValue *m, int rows, int cols, float *out, const char *key,
                       int k, const char *rows_of, const char *name, long line, Error *err)
{
    char what[48], quoted[48];
    if (k)
        snprintf(what, sizeof what, "%s %d", key, k);
    else
        snprintf(what, sizeof what, "%s", key);
    snprintf(quoted, sizeof quoted, k ? "\"%s\" %d" : "\"%s\"", key, k);
    if (!m || m->type != JSON_ARRAY || m->n_items != rows)
        return error_at(err, name, line, 1, "expected %s: %d row%s, one per %s token", quoted, rows,
                        plural(rows), rows_of);
    for (int i = 0; i < rows; i++) {
        const JsonValue *row = &m->items[i];
        if (row->type != JSON_ARRAY || row->n_items != cols)
            return error_at(err, name, line, 1, "%s row %d: expected %d number%s, one per %s",
                            what, i + 1, cols, plural(cols),
                            strcmp(key, "dec_self") ? "source token" : "target position");
        for (int j = 0; j < cols; j++) {
            if (row->items[j].type != JSON_NUMBER || !(row->items[j].number >= 0) ||
                row->items[j].number > 1)
                return error_at(err, name, line, 1, "%s row %d, column %d: expected a "
                                "number from 0 to 1", what, i + 1, j + 1);
            if (out)
                out[(size_t)i * cols + j] = (float)row->items[j].number;
        }
    }
    return 0;
}

/* A list of matrices (the optional "heads", "self", "layers", "dec_self"): at most most
 * of rows x cols each. Returns their number (0 if the key is absent), or -1 with err set. */
static int take_matrices(const JsonValue *list, const char *key, int most, int rows, int cols,
                         const char *rows_of, float **out, const char *name, long line,
                         Error *err)
{
    *out = NULL;
    if (!list)
        return 0;
    if (list->type != JSON_ARRAY || list->n_items < 1 || list->n_items > most)
        return error_at(err, name, line, 1, "expected \"%s\": a list of 1 to %d matrices", key,
                        most);
    const size_t size = (size_t)rows * cols;
    float *m = xmalloc_array((size_t)list->n_items * size, sizeof(float));
    for (int k = 0; k < list->n_items; k++) {
        if (take_matrix(&list->items[k], rows, cols, m + k * size, key, k + 1, rows_of, name, line,
                        err) < 0) {
            free(m);
            return -1;
        }
    }
    *out = m;
    return list->n_items;
}

/* The optional "chosen": rows lists of 1 to 64 source positions (0 to cols - 1), the
 * same number in each. Returns that number (0 if the key is absent), or -1. */
static int take_chosen(const JsonValue *v, int rows, int cols, int **out, const char *name,
                       long line, Error *err)
{
    *out = NULL;
    if (!v)
        return 0;
    if (v->type != JSON_ARRAY || v->n_items != rows || rows < 1 || v->items[0].type != JSON_ARRAY ||
        v->items[0].n_items < 1 || v->items[0].n_items > 64)
        return error_at(err, name, line, 1, "expected \"chosen\": %d row%s, one per target token, "
                        "of 1 to 64 source positions", rows, plural(rows));
    const int H = v->items[0].n_items;
    int *c = xmalloc_array((size_t)rows * H, sizeof(int));
    for (int i = 0; i < rows; i++) {
        const JsonValue *row = &v->items[i];
        for (int k = 0; k < H; k++) {
            const JsonValue *x = row->type == JSON_ARRAY && row->n_items == H ? &row->items[k] : NULL;
            if (!is_whole(x, 0) || x->number >= cols) {
                free(c);
                return error_at(err, name, line, 1, "\"chosen\" row %d: expected %d source "
                                "positions from 0 to %d", i + 1, H, cols - 1);
            }
            c[(size_t)i * H + k] = (int)x->number;
        }
    }
    *out = c;
    return H;
}

static void free_parts(AlignRecord *p)
{
    free(p->heads);
    free(p->self);
    free(p->chosen);
    free(p->layers);
    free(p->dec_self);
}

/* A record's optional matrices, of a target of T tokens and a source of S, into p (the
 * rest of p zeroed): "heads", "self", "chosen", and a Transformer decoder's "layers" (with
 * "layer_heads": the heads of each) and "dec_self". Returns 0, or -1 with err set and
 * nothing kept. */
static int take_parts(AlignRecord *p, const JsonValue *root, int T, int S, const char *name,
                      long line, Error *err)
{
    memset(p, 0, sizeof *p);
    const JsonValue *lh = json_get(root, "layer_heads");
    int rc = (p->n_heads = take_matrices(json_get(root, "heads"), "heads", ATTN_MAX_HEADS, T, S,
                                         "target", &p->heads, name, line, err));
    if (rc >= 0)
        rc = (p->n_self = take_matrices(json_get(root, "self"), "self", 64, S, S,
                                        "source", &p->self, name, line, err));
    if (rc >= 0)
        rc = (p->n_chosen = take_chosen(json_get(root, "chosen"), T, S, &p->chosen, name, line,
                                        err));
    if (rc >= 0 && lh && !is_whole(lh, 1))
        rc = error_at(err, name, line, 1, "expected \"layer_heads\": a whole number >= 1");
    if (rc >= 0) {
        p->layer_heads = lh ? (int)lh->number : 1;
        rc = take_matrices(json_get(root, "layers"), "layers", DEC_MAX_LAYERS * ATTN_MAX_HEADS, T,
                           S, "target", &p->layers, name, line, err);
        if (rc > 0 && (!lh || rc % p->layer_heads != 0))
            rc = error_at(err, name, line, 1, "\"layers\": %d matrices are not \"layer_heads\" "
                          "(%d) for each layer", rc, p->layer_heads);
        p->n_layers = rc > 0 ? rc / p->layer_heads : 0;
    }
    if (rc >= 0)
        rc = (p->n_dec_self = take_matrices(json_get(root, "dec_self"), "dec_self", DEC_MAX_LAYERS,
                                            T, T, "target", &p->dec_self, name, line, err));
    if (rc < 0) {
        free_parts(p);
        return -1;
    }
    return 0;
}

/* One record from a parsed line. */
static int take_record(AlignLog *log, const JsonValue *root, const char *name, long line, Error *err)
{
    const JsonValue *step = json_get(root, "step"), *id = json_get(root, "id");
    const JsonValue *epoch = json_get(root, "epoch"), *src = json_get(root, "src");
    const JsonValue *tgt = json_get(root, "tgt"), *w = json_get(root, "weights");
    if (!root || root->type != JSON_OBJECT)
        return error_at(err, name, line, 1, "expected a JSON object");
    /* ids name files (heatmap-ID-STEP.svg) and lines: whole numbers, and positive */
    char got[64];
    if (!is_whole(step, 0))
        return error_at(err, name, line, 1, "expected \"step\": a whole number >= 0 (the "
                        "training step), got %s", describe(step, got, sizeof got));
    if (!is_whole(id, 1))
        return error_at(err, name, line, 1, "expected \"id\": a whole number >= 1 (the "
                        "sentence's line in its file), got %s", describe(id, got, sizeof got));
    if (epoch && epoch->type != JSON_NUMBER)
        return error_at(err, name, line, 1, "\"epoch\" must be a number");
    if (!token_list(src) || !token_list(tgt))
        return error_at(err, name, line, 1, "expected \"src\" and \"tgt\": non-empty lists of "
                        "token strings");
    if (take_matrix(w, tgt->n_items, src->n_items, NULL, "weights", 0, "target", name, line,
                    err) < 0)
        return -1;
    AlignRecord parts;
    if (take_parts(&parts, root, tgt->n_items, src->n_items, name, line, err) < 0)
        return -1;
    /* an image model's record: its picture, and a square grid of cells */
    const JsonValue *image = json_get(root, "image");
    int G = 0;
    while ((G + 1) * (G + 1) <= src->n_items)
        G++;
    if (image && (image->type != JSON_STRING || !image->string[0] || G * G != src->n_items)) {
        free_parts(&parts);
        return error_at(err, name, line, 1, "\"image\" must be a picture's path, with \"src\" "
                        "the cells of a square grid (got %d cells)", src->n_items);
    }
    if (log->n == log->cap) {
        log->cap = log->cap * 2 + 16;
        log->records = xrealloc_array(log->records, (size_t)log->cap, sizeof(AlignRecord));
    }
    AlignRecord *r = &log->records[log->n++];
    *r = parts; /* the optional matrices; the rest follows */
    r->step = (long)step->number;
    r->id = (long)id->number;
    r->epoch = epoch ? epoch->number : 0;
    r->has_epoch = epoch != NULL;
    r->src = copy_tokens(src, &r->n_src);
    r->tgt = copy_tokens(tgt, &r->n_tgt);
    r->weights = xmalloc_array((size_t)r->n_src * (size_t)r->n_tgt, sizeof(float));
    take_matrix(w, r->n_tgt, r->n_src, r->weights, "weights", 0, "target", name, line, err);
    r->image = image ? xstrdup(image->string) : NULL;
    return 0;
}

/* One line of the log: a record, or nothing for a blank line. */
static int take_line(AlignLog *log, const char *text, size_t n, const char *name, long line,
                     Error *err)
{
    size_t k = 0;
    while (k < n && strchr(" \t\r", text[k]) && text[k])
        k++;
    if (k == n)
        return 0;
    JsonDoc doc;
    int rc = json_parse(&doc, text, n, name, line, err);
    if (rc == 0)
        rc = take_record(log, doc.root, name, line, err);
    json_free(&doc);
    return rc;
}

int alignlog_parse(AlignLog *log, const char *text, size_t len, const char *name, Error *err)
{
    memset(log, 0, sizeof *log);
    long line = 0;
    for (size_t at = 0; at < len;) {
        const char *start = text + at;
        const char *nl = memchr(start, '\n', len - at);
        size_t n = nl ? (size_t)(nl - start) : len - at;
        at += n + (nl ? 1 : 0);
        if (take_line(log, start, n, name, ++line, err) < 0)
            return -1;
    }
    return 0;
}

int alignlog_read(AlignLog *log, const char *path, Error *err)
{
    memset(log, 0, sizeof *log);
    /* line by line: only the records are kept, each line's text and JSON tree just
     * while it is read */
    TextReader t;
    int got = textreader_open(&t, path, "alignments", ALIGNLOG_MAX_LINE_BYTES, err);
    /* in training this is the run's own log, read for the report, which a signal waits
     * for; `s2s heatmap` installs no handler, so a signal ends it as it always did */
    t.in.finish_on_signal = 1;
    const char *line;
    size_t len;
    while (got == 0 && (got = textreader_next(&t, &line, &len, err)) == 1)
        got = take_line(log, line, len, path, t.in.line_no, err);
    textreader_close(&t);
    return got < 0 ? -1 : 0;
}

void alignlog_free(AlignLog *log)
{
    for (int k = 0; k < log->n; k++) {
        AlignRecord *r = &log->records[k];
        for (int j = 0; j < r->n_src; j++)
            free(r->src[j]);
        for (int i = 0; i < r->n_tgt; i++)
            free(r->tgt[i]);
        free(r->src);
        free(r->tgt);
        free(r->weights);
        free_parts(r);
        free(r->image);
    }
    free(log->records);
    memset(log, 0, sizeof *log);
}

/* r's tokens of one side replaced by n copies of words (freed and allocated). */
static void replace_tokens(char ***side, int *n_side, char *const *words, int n)
{
    char **fresh = xmalloc_array((size_t)n, sizeof(char *));
    for (int k = 0; k < n; k++)
        fresh[k] = xstrdup(words[k]);
    for (int k = 0; k < *n_side; k++)
        free((*side)[k]);
    free(*side);
    *side = fresh;
    *n_side = n;
}

/* A Transformer decoder's layer (cross-attention, its heads' mean or one head) or its
 * masked self-attention (dec_self), as r's weights. */
static int select_decoder_layer(AlignRecord *r, int head, int layer, int dec_self)
{
    const size_t S = (size_t)r->n_src, T = (size_t)r->n_tgt;
    free(r->chosen); /* the choices of a hard pass are not these maps' */
    r->chosen = NULL;
    r->n_chosen = 0;
    if (dec_self) {
        if (dec_self > r->n_dec_self || head)
            return -1;
        /* its columns are the positions it reads: <s> and the words before each */
        char **inputs = xmalloc_array(T, sizeof(char *));
        inputs[0] = "<s>";
        for (size_t i = 1; i < T; i++)
            inputs[i] = r->tgt[i - 1];
        replace_tokens(&r->src, &r->n_src, inputs, (int)T);
        free(inputs);
        free(r->weights);
        r->weights = xmalloc_array(T * T, sizeof(float));
        memcpy(r->weights, r->dec_self + (size_t)(dec_self - 1) * T * T, sizeof(float) * T * T);
        snprintf(r->view, sizeof r->view, "decoder self-attention layer %d", dec_self);
        return 0;
    }
    const int H = r->layer_heads;
    if (layer > r->n_layers || head < 0 || head > H)
        return -1;
    const float *first = r->layers + (size_t)(layer - 1) * H * T * S;
    for (size_t e = 0; e < T * S; e++) {
        float sum = 0;
        for (int h = head ? head - 1 : 0; h < (head ? head : H); h++)
            sum += first[(size_t)h * T * S + e];
        r->weights[e] = head ? sum : sum / (float)H;
    }
    if (head)
        snprintf(r->view, sizeof r->view, "decoder layer %d, head %d", layer, head);
    else
        snprintf(r->view, sizeof r->view, "decoder layer %d", layer);
    return 0;
}

int alignrecord_select(AlignRecord *r, int head, int self_layer, int layer, int dec_self)
{
    if (layer || dec_self)
        return select_decoder_layer(r, head, layer, dec_self);
    const size_t S = (size_t)r->n_src, T = (size_t)r->n_tgt;
    if (self_layer) {
        if (self_layer > r->n_self)
            return -1;
        /* queries and keys are both the source: its tokens become the rows' too */
        for (size_t i = 0; i < T; i++)
            free(r->tgt[i]);
        free(r->tgt);
        r->tgt = xmalloc_array(S, sizeof(char *));
        for (size_t j = 0; j < S; j++)
            r->tgt[j] = xstrdup(r->src[j]);
        r->n_tgt = (int)S;
        free(r->weights);
        r->weights = xmalloc_array(S * S, sizeof(float));
        memcpy(r->weights, r->self + (size_t)(self_layer - 1) * S * S, sizeof(float) * S * S);
        snprintf(r->view, sizeof r->view, "self-attention layer %d", self_layer);
        free(r->chosen); /* the decoder's choices do not belong on the source's map */
        r->chosen = NULL;
        r->n_chosen = 0;
        return 0;
    }
    if (head < 1 || head > (r->n_heads ? r->n_heads : 1))
        return -1;
    if (r->n_heads) /* one head is the alignment itself */
        memcpy(r->weights, r->heads + (size_t)(head - 1) * T * S, sizeof(float) * T * S);
    if (r->n_chosen > 1) { /* that head's choices only */
        for (size_t i = 0; i < T; i++)
            r->chosen[i] = r->chosen[i * r->n_chosen + (head - 1)];
        r->n_chosen = 1;
    }
    snprintf(r->view, sizeof r->view, "head %d", head);
    return 0;
}
