/* config_yaml.c: reading a config: libyaml's events walked key by key against the
 * schema, every error with its file, line and column, "did you mean" for unknown keys
 * and sections, and --set overrides. Reads files; never writes any. */
#include "run/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/mem.h"
#include "run/config_schema.h"

/* ---- did you mean ---------------------------------------------------------------- */

static size_t edit_distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na > 64 || nb > 64)
        return 64;
    size_t row[65];
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

/* The known key closest to path: same name in another section first, then the
 * nearest name (at most about a third of its letters wrong). NULL if none is close. */
static const char *suggest_key(const char *path)
{
    const char *name = config_key_name(path);
    for (int k = 0; k < config_n_keys(); k++)
        if (!strcmp(config_key_name(config_keys[k].path), name))
            return config_keys[k].path;
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (int k = 0; k < config_n_keys(); k++) {
        size_t d = edit_distance(path, config_keys[k].path);
        size_t d_name = edit_distance(name, config_key_name(config_keys[k].path));
        /* a wrong section with the right-ish name also counts */
        if (d_name + 1 < d)
            d = d_name + 1;
        if (d < best_d) {
            best_d = d;
            best = config_keys[k].path;
        }
    }
    size_t limit = strlen(name) / 3 + 1;
    return best_d <= limit ? best : NULL;
}

static const char *const SECTIONS[] = {"data", "model", "training", "alignments", "translate"};

static int is_section(const char *name)
{
    for (size_t s = 0; s < sizeof SECTIONS / sizeof *SECTIONS; s++)
        if (!strcmp(SECTIONS[s], name))
            return 1;
    return 0;
}

static const char *suggest_section(const char *name)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t s = 0; s < sizeof SECTIONS / sizeof *SECTIONS; s++) {
        size_t d = edit_distance(name, SECTIONS[s]);
        if (d < best_d) {
            best_d = d;
            best = SECTIONS[s];
        }
    }
    return best_d <= strlen(name) / 3 + 1 ? best : NULL;
}

static int unknown_key(Error *err, const char *file, long line, long col, const char *path)
{
    const char *hint = suggest_key(path);
    if (hint)
        return error_at(err, file, line, col, "unknown key `%s` (did you mean `%s`?)", path, hint);
    return error_at(err, file, line, col, "unknown key `%s`", path);
}

/* ---- the YAML walker ----------------------------------------------------------------- */

typedef struct {
    yaml_parser_t parser;
    yaml_event_t event;
    int have_event;
    const char *file;
    const char *text;
    size_t len;
    Config *cfg;
    Error *err;
    int seen_line[CONFIG_MAX_KEYS]; /* 0 = not set by this file */
    int sections_seen[sizeof SECTIONS / sizeof *SECTIONS];
    int section_line[sizeof SECTIONS / sizeof *SECTIONS];
} Walker;

/* Line and column (1-based) of a byte offset, for libyaml's reader errors, which
 * give only an offset. */
static void offset_position(const char *text, size_t len, size_t offset, long *line, long *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < offset && i < len; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            ++*col;
        }
    }
}

static int parser_error(Walker *w)
{
    yaml_parser_t *p = &w->parser;
    const char *problem = p->problem ? p->problem : "malformed YAML";
    long line, col;
    if (p->error == YAML_READER_ERROR) {
        offset_position(w->text, w->len, p->problem_offset, &line, &col);
        /* libyaml's value is the bad byte for the UTF-8 octet problems, but the code
         * point for "invalid Unicode character" and "control characters are not allowed" */
        if (p->problem_value != -1 && strstr(problem, "octet"))
            return error_at(w->err, w->file, line, col, "%s (byte 0x%02x)", problem,
                            (unsigned)p->problem_value & 0xff);
        if (p->problem_value != -1)
            return error_at(w->err, w->file, line, col, "%s (U+%04X)", problem,
                            (unsigned)p->problem_value);
        return error_at(w->err, w->file, line, col, "%s", problem);
    }
    line = (long)p->problem_mark.line + 1;
    col = (long)p->problem_mark.column + 1;
    if (p->context)
        return error_at(w->err, w->file, line, col, "%s (%s at line %ld)", problem, p->context,
                        (long)p->context_mark.line + 1);
    return error_at(w->err, w->file, line, col, "%s", problem);
}

/* Advances to the next event. Returns 0 or -1 with err set. */
static int next_event(Walker *w)
{
    if (w->have_event)
        yaml_event_delete(&w->event);
    w->have_event = 0;
    if (!yaml_parser_parse(&w->parser, &w->event))
        return parser_error(w);
    w->have_event = 1;
    return 0;
}

static long ev_line(const Walker *w)
{
    return (long)w->event.start_mark.line + 1;
}

static long ev_col(const Walker *w)
{
    return (long)w->event.start_mark.column + 1;
}

static const char *event_kind(const yaml_event_t *e)
{
    switch (e->type) {
    case YAML_SEQUENCE_START_EVENT: return "a list";
    case YAML_MAPPING_START_EVENT: return "a mapping";
    case YAML_ALIAS_EVENT: return "an alias";
    default: return "something else";
    }
}

/* Anchors and aliases make one value appear in two places; a config gains nothing
 * from them and a reader would have to guess, so they are refused. */
static int reject_anchor(Walker *w, const yaml_char_t *anchor)
{
    if (anchor)
        return error_at(w->err, w->file, ev_line(w), ev_col(w),
                        "anchors (&%s) are not allowed in a config", (const char *)anchor);
    if (w->event.type == YAML_ALIAS_EVENT)
        return error_at(w->err, w->file, ev_line(w), ev_col(w),
                        "aliases (*%s) are not allowed in a config",
                        (const char *)w->event.data.alias.anchor);
    return 0;
}

/* The current event is the value of key k (a scalar is expected). */
/* A list value: a sequence of plain integer scalars. */
static int take_list(Walker *w, int k)
{
    const KeySpec *ks = &config_keys[k];
    long line = ev_line(w), col = ev_col(w);
    if (reject_anchor(w, w->event.data.sequence_start.anchor) < 0)
        return -1;
    char text[CONFIG_MAX_LIST * 24] = "";
    int n = 0;
    for (;;) {
        if (next_event(w) < 0)
            return -1;
        if (w->event.type == YAML_SEQUENCE_END_EVENT)
            break;
        if (w->event.type != YAML_SCALAR_EVENT || w->event.data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
            return error_at(w->err, w->file, ev_line(w), ev_col(w), "%s: expected integers in the "
                            "list, got %s", ks->path,
                            w->event.type == YAML_SCALAR_EVENT ? "a string" :
                            event_kind(&w->event));
        if (++n > CONFIG_MAX_LIST)
            return error_at(w->err, w->file, ev_line(w), ev_col(w), "%s: at most %d entries",
                            ks->path, CONFIG_MAX_LIST);
        const char *item = (const char *)w->event.data.scalar.value;
        char *endp;
        errno = 0;
        long long v = strtoll(item, &endp, 10);
        if (endp == item || *endp || errno == ERANGE || (double)v < ks->min || (double)v > ks->max)
            return error_at(w->err, w->file, ev_line(w), ev_col(w), "%s: expected an integer from "
                            "%.0f to %.0f, got \"%s\"", ks->path, ks->min, ks->max, item);
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%lld", n > 1 ? "," : "", v);
    }
    Error inner;
    if (config_parse_value(w->cfg, ks, text, 0, &inner) < 0)
        return error_at(w->err, w->file, line, col, "%s", inner.msg);
    w->cfg->origin.line[k] = (int)line;
    w->cfg->origin.col[k] = (int)col;
    return 0;
}

static int take_value(Walker *w, int k)
{
    const KeySpec *ks = &config_keys[k];
    yaml_event_t *e = &w->event;
    if (e->type == YAML_ALIAS_EVENT)
        return reject_anchor(w, NULL);
    if (ks->type == T_INTLIST) {
        if (e->type == YAML_SEQUENCE_START_EVENT)
            return take_list(w, k);
        return error_at(w->err, w->file, ev_line(w), ev_col(w), "%s: expected a list of integers "
                        "such as [3, 17], got %s", ks->path,
                        e->type == YAML_SCALAR_EVENT ? "a scalar" : event_kind(e));
    }
    if (e->type != YAML_SCALAR_EVENT)
        return error_at(w->err, w->file, ev_line(w), ev_col(w), "%s: expected %s %s, got %s",
                        ks->path, ks->type == T_INT ? "an" : "a", config_type_name(ks),
                        event_kind(e));
    if (reject_anchor(w, e->data.scalar.anchor) < 0)
        return -1;
    const char *text = (const char *)e->data.scalar.value;
    if (strlen(text) != e->data.scalar.length)
        return error_at(w->err, w->file, ev_line(w), ev_col(w), "%s: NUL byte in the value",
                        ks->path);
    int quoted = e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
    Error inner;
    if (config_parse_value(w->cfg, ks, text, quoted, &inner) < 0)
        return error_at(w->err, w->file, ev_line(w), ev_col(w), "%s", inner.msg);
    w->cfg->origin.line[k] = (int)ev_line(w);
    w->cfg->origin.col[k] = (int)ev_col(w);
    return 0;
}

/* The current event is a mapping key (a scalar). Copies its text into key. */
static int take_key(Walker *w, const char *section, char *key, size_t cap)
{
    yaml_event_t *e = &w->event;
    if (e->type == YAML_ALIAS_EVENT)
        return reject_anchor(w, NULL);
    if (e->type != YAML_SCALAR_EVENT)
        return error_at(w->err, w->file, ev_line(w), ev_col(w), "expected a key%s%s, got %s",
                        section ? " of section " : "", section ? section : "", event_kind(e));
    if (reject_anchor(w, e->data.scalar.anchor) < 0)
        return -1;
    snprintf(key, cap, "%s%s%s", section ? section : "", section ? "." : "",
             (const char *)e->data.scalar.value);
    return 0;
}

/* Registers that key k is set here; refuses a second time. */
static int mark_seen(Walker *w, int k, const char *path)
{
    if (w->seen_line[k])
        return error_at(w->err, w->file, ev_line(w), ev_col(w),
                        "duplicate key `%s` (first set at line %d)", path, w->seen_line[k]);
    w->seen_line[k] = (int)ev_line(w);
    return 0;
}

static int walk_section(Walker *w, const char *section)
{
    char path[256];
    for (;;) {
        if (next_event(w) < 0)
            return -1;
        if (w->event.type == YAML_MAPPING_END_EVENT)
            return 0;
        if (take_key(w, section, path, sizeof path) < 0)
            return -1;
        int k = config_find_key(path);
        if (k < 0)
            return unknown_key(w->err, w->file, ev_line(w), ev_col(w), path);
        if (mark_seen(w, k, path) < 0)
            return -1;
        if (next_event(w) < 0 || take_value(w, k) < 0)
            return -1;
    }
}

static int walk_document(Walker *w)
{
    char path[256];
    if (next_event(w) < 0 || next_event(w) < 0) /* STREAM-START, then a document or the end */
        return -1;
    if (w->event.type == YAML_STREAM_END_EVENT)
        return error_at(w->err, w->file, 1, 1, "the config is empty (expected a mapping of "
                        "sections such as model: and training:)");
    if (next_event(w) < 0) /* the top-level node */
        return -1;
    if (w->event.type != YAML_MAPPING_START_EVENT) {
        if (w->event.type == YAML_SCALAR_EVENT && w->event.data.scalar.length == 0)
            return error_at(w->err, w->file, 1, 1, "the config is empty (expected a mapping "
                            "of sections such as model: and training:)");
        return error_at(w->err, w->file, ev_line(w), ev_col(w),
                        "expected a mapping of sections at the top level, got %s",
                        w->event.type == YAML_SCALAR_EVENT ? "a scalar" : event_kind(&w->event));
    }
    if (reject_anchor(w, w->event.data.mapping_start.anchor) < 0)
        return -1;
    for (;;) {
        if (next_event(w) < 0)
            return -1;
        if (w->event.type == YAML_MAPPING_END_EVENT)
            break;
        if (take_key(w, NULL, path, sizeof path) < 0)
            return -1;
        long line = ev_line(w), col = ev_col(w);
        int k = config_find_key(path);
        if (k >= 0) {
            if (mark_seen(w, k, path) < 0 || next_event(w) < 0 || take_value(w, k) < 0)
                return -1;
            continue;
        }
        if (!is_section(path)) {
            const char *hint = suggest_section(path);
            if (!hint)
                return unknown_key(w->err, w->file, line, col, path);
            return error_at(w->err, w->file, line, col,
                            "unknown section `%s` (did you mean `%s`?)", path, hint);
        }
        size_t s = 0;
        while (strcmp(SECTIONS[s], path))
            s++;
        if (w->sections_seen[s])
            return error_at(w->err, w->file, line, col,
                            "duplicate section `%s` (first at line %d)", path, w->section_line[s]);
        w->sections_seen[s] = 1;
        w->section_line[s] = (int)line;
        if (next_event(w) < 0)
            return -1;
        if (w->event.type == YAML_SCALAR_EVENT && w->event.data.scalar.length == 0 &&
            w->event.data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
            continue; /* "model:" with nothing under it */
        if (w->event.type != YAML_MAPPING_START_EVENT)
            return error_at(w->err, w->file, ev_line(w), ev_col(w),
                            "section `%s`: expected a mapping of keys, got %s", path,
                            w->event.type == YAML_SCALAR_EVENT ? "a scalar" : event_kind(&w->event));
        if (reject_anchor(w, w->event.data.mapping_start.anchor) < 0)
            return -1;
        if (walk_section(w, path) < 0)
            return -1;
    }
    if (next_event(w) < 0) /* DOCUMENT-END */
        return -1;
    if (next_event(w) < 0)
        return -1;
    if (w->event.type != YAML_STREAM_END_EVENT)
        return error_at(w->err, w->file, ev_line(w), ev_col(w),
                        "expected one YAML document, found a second one");
    return 0;
}

int config_load_buffer(Config *cfg, const char *text, size_t len, const char *name, Error *err)
{
    Walker w = {.file = name, .text = text, .len = len, .cfg = cfg, .err = err};
    if (!yaml_parser_initialize(&w.parser))
        return error_at(err, name, 0, 0, "cannot initialise the YAML parser");
    yaml_parser_set_input_string(&w.parser, (const unsigned char *)text, len);
    int rc = walk_document(&w);
    if (w.have_event)
        yaml_event_delete(&w.event);
    yaml_parser_delete(&w.parser);
    snprintf(cfg->origin.file, sizeof cfg->origin.file, "%s", name);
    return rc;
}

int config_load(Config *cfg, const char *path, Error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return error_errno(err, "cannot open config", path);
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap * 2 + 4096;
            if (cap > (size_t)64 << 20) {
                fclose(f);
                free(text);
                return error_at(err, path, 0, 0, "too large for a config (over 64 MiB)");
            }
            text = xrealloc_array(text, cap, 1);
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int read_error = ferror(f);
    fclose(f);
    if (read_error) {
        free(text);
        return error_errno(err, "cannot read config", path);
    }
    int rc = config_load_buffer(cfg, text, len, path, err);
    free(text);
    return rc;
}

int config_set(Config *cfg, const char *assignment, Error *err)
{
    const char *eq = strchr(assignment, '=');
    if (!eq)
        return error_set(err, "--set %s: expected KEY=VALUE, e.g. --set training.batch_size=64",
                         assignment);
    char path[256];
    snprintf(path, sizeof path, "%.*s", (int)(eq - assignment), assignment);
    int k = config_find_key(path);
    if (k < 0) {
        const char *hint = suggest_key(path);
        if (hint)
            return error_set(err, "--set %s: unknown key `%s` (did you mean `%s`?)", assignment,
                             path, hint);
        return error_set(err, "--set %s: unknown key `%s`", assignment, path);
    }
    /* The value is read as a YAML plain scalar would be: quotes are not needed (and
     * a string value may contain anything after the first '='). */
    Error inner;
    if (config_parse_value(cfg, &config_keys[k], eq + 1, 0, &inner) < 0)
        return error_set(err, "--set %s: %s", assignment, inner.msg);
    cfg->origin.line[k] = -1;
    cfg->origin.col[k] = 0;
    return 0;
}

