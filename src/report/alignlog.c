/* alignlog.c: alignments.jsonl into records (see alignread.h). */
#include "report/alignlog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "text/number.h"
#include "text/json.h"
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
    if (!w || w->type != JSON_ARRAY || w->n_items != tgt->n_items)
        return error_at(err, name, line, 1, "expected \"weights\": %d rows, one per target token",
                        tgt->n_items);
    for (int i = 0; i < w->n_items; i++) {
        const JsonValue *row = &w->items[i];
        if (row->type != JSON_ARRAY || row->n_items != src->n_items)
            return error_at(err, name, line, 1, "weights row %d: expected %d numbers, one per "
                            "source token", i + 1, src->n_items);
        for (int j = 0; j < row->n_items; j++)
            if (row->items[j].type != JSON_NUMBER || !(row->items[j].number >= 0) ||
                row->items[j].number > 1)
                return error_at(err, name, line, 1, "weights row %d, column %d: expected a "
                                "number from 0 to 1", i + 1, j + 1);
    }
    if (log->n == log->cap) {
        log->cap = log->cap * 2 + 16;
        log->records = xrealloc_array(log->records, (size_t)log->cap, sizeof(AlignRecord));
    }
    AlignRecord *r = &log->records[log->n++];
    memset(r, 0, sizeof *r);
    r->step = (long)step->number;
    r->id = (long)id->number;
    r->epoch = epoch ? epoch->number : 0;
    r->has_epoch = epoch != NULL;
    r->src = copy_tokens(src, &r->n_src);
    r->tgt = copy_tokens(tgt, &r->n_tgt);
    r->weights = xmalloc_array((size_t)r->n_src * (size_t)r->n_tgt, sizeof(float));
    for (int i = 0; i < r->n_tgt; i++)
        for (int j = 0; j < r->n_src; j++)
            r->weights[(size_t)i * r->n_src + j] = (float)w->items[i].items[j].number;
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
    }
    free(log->records);
    memset(log, 0, sizeof *log);
}
