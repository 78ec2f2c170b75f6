/* json.c: JSON string output and a strict recursive-descent reader (see json.h). */
#include "text/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "text/tokenize.h"

/* in_html: also <, > and & as \u escapes, so that the text can stand inside an HTML
 * <script> element (no "</script>" can end it) */
static void write_string(FILE *f, const char *s, int in_html)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (in_html && (*p == '<' || *p == '>' || *p == '&'))
            fprintf(f, "\\u%04x", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void json_write_string(FILE *f, const char *s)
{
    write_string(f, s, 0);
}

void json_write_string_in_html(FILE *f, const char *s)
{
    write_string(f, s, 1);
}

/* ---- reading ----------------------------------------------------------------------------- */

typedef struct Block {
    struct Block *next;
} Block;

typedef struct {
    const char *s;
    size_t len, at;
    const char *name;
    long line;
    JsonDoc *doc;
    Error *err;
    int depth;
} Parser;

/* size bytes (8-aligned) owned by doc: small ones (strings, the root) cut from chunks
 * that grow from 1 KiB to 64 KiB, so a string costs its length, not a malloc each. */
static void *doc_alloc(JsonDoc *doc, size_t size)
{
    size = (size + 7) & ~(size_t)7;
    if (size > doc->free_left) {
        doc->chunk = doc->chunk ? (doc->chunk < 65536 ? doc->chunk * 2 : 65536) : 1024;
        size_t room = size > doc->chunk ? size : doc->chunk;
        Block *b = xmalloc(sizeof(Block) + room);
        b->next = doc->blocks;
        doc->blocks = b;
        doc->free_at = (char *)(b + 1);
        doc->free_left = room;
    }
    void *out = doc->free_at;
    doc->free_at += size;
    doc->free_left -= size;
    return out;
}

static int fail(Parser *p, const char *what)
{
    /* column: characters (not bytes) before the position on its line */
    long line = p->line, col = 1;
    for (size_t k = 0; k < p->at && k < p->len; k++) {
        if (p->s[k] == '\n') {
            line++;
            col = 1;
        } else if (((unsigned char)p->s[k] & 0xC0) != 0x80) {
            col++;
        }
    }
    return error_at(p->err, p->name, line, col, "%s", what);
}

static void skip_space(Parser *p)
{
    while (p->at < p->len && strchr(" \t\r\n", p->s[p->at]) && p->s[p->at])
        p->at++;
}

static int parse_value(Parser *p, JsonValue *v);

static int parse_hex4(Parser *p, unsigned *out)
{
    if (p->len - p->at < 4)
        return fail(p, "truncated \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p->s[p->at++];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return fail(p, "bad hex digit in \\u escape");
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *out, unsigned c)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | c >> 12);
        out[1] = (char)(0x80 | (c >> 6 & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | c >> 18);
    out[1] = (char)(0x80 | (c >> 12 & 0x3F));
    out[2] = (char)(0x80 | (c >> 6 & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

static int parse_string(Parser *p, char **out)
{
    p->at++; /* the opening quote */
    size_t start = p->at;
    /* the decoded string is never longer than its source */
    size_t end = start;
    while (end < p->len && p->s[end] != '"') {
        if (p->s[end] == '\\')
            end++;
        end++;
    }
    if (end >= p->len)
        return fail(p, "unterminated string");
    char *s = doc_alloc(p->doc, end - start + 1);
    size_t n = 0;
    while (p->s[p->at] != '"') {
        unsigned char c = (unsigned char)p->s[p->at];
        if (c < 0x20)
            return fail(p, "control character in a string");
        if (c != '\\') {
            s[n++] = (char)c;
            p->at++;
            continue;
        }
        p->at++;
        char e = p->s[p->at++];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            static const char decoded[] = "\"\\/\b\f\n\r\t";
            s[n++] = decoded[simple - "\"\\/bfnrt"];
        } else if (e == 'u') {
            unsigned c1, c2;
            if (parse_hex4(p, &c1) < 0)
                return -1;
            if (c1 >= 0xD800 && c1 <= 0xDBFF) { /* a surrogate pair */
                if (p->len - p->at < 6 || p->s[p->at] != '\\' || p->s[p->at + 1] != 'u')
                    return fail(p, "lone surrogate in \\u escape");
                p->at += 2;
                if (parse_hex4(p, &c2) < 0)
                    return -1;
                if (c2 < 0xDC00 || c2 > 0xDFFF)
                    return fail(p, "bad surrogate pair in \\u escape");
                c1 = 0x10000 + ((c1 - 0xD800) << 10) + (c2 - 0xDC00);
            } else if (c1 >= 0xDC00 && c1 <= 0xDFFF) {
                return fail(p, "lone surrogate in \\u escape");
            }
            if (c1 == 0)
                return fail(p, "NUL in a string");
            n += put_utf8(s + n, c1);
        } else {
            p->at--;
            return fail(p, "bad escape in a string");
        }
    }
    p->at++;
    s[n] = '\0';
    size_t bad_at, bad_len;
    if (utf8_validate(s, n, &bad_at, &bad_len) < 0)
        return fail(p, "invalid UTF-8 in a string");
    *out = s;
    return 0;
}

static int parse_number(Parser *p, JsonValue *v)
{
    size_t start = p->at;
    if (p->s[p->at] == '-')
        p->at++;
    if (p->at >= p->len || p->s[p->at] < '0' || p->s[p->at] > '9')
        return fail(p, "bad number");
    if (p->s[p->at] == '0' && p->at + 1 < p->len && p->s[p->at + 1] >= '0' && p->s[p->at + 1] <= '9')
        return fail(p, "leading zero in a number");
    while (p->at < p->len && strchr("0123456789+-.eE", p->s[p->at]) && p->s[p->at])
        p->at++;
    char buf[64];
    size_t n = p->at - start;
    if (n >= sizeof buf) {
        p->at = start;
        return fail(p, "number too long");
    }
    memcpy(buf, p->s + start, n);
    buf[n] = '\0';
    char *end;
    v->number = strtod(buf, &end);
    if (*end || buf[n - 1] == '.' || strstr(buf, ".e") || strstr(buf, ".E")) {
        p->at = start;
        return fail(p, "bad number");
    }
    /* Only overflow is out of range. strtod says ERANGE on underflow too, but the
     * subnormal or zero it returns then is the nearest double: 1e-320 is a number. */
    if (!isfinite(v->number)) {
        p->at = start;
        return fail(p, "number out of range");
    }
    v->type = JSON_NUMBER;
    return 0;
}

/* Elements of an array or members of an object, collected in place: the block they
 * grow in becomes one of the document's when they are complete (no copy, so a long
 * array takes its size once, not twice). */
static int parse_items(Parser *p, JsonValue *v, int object)
{
    char close = object ? '}' : ']';
    p->at++;
    size_t cap = 0, n = 0; /* nothing allocated for an empty one */
    Block *block = NULL;
    JsonValue *items = NULL;
    skip_space(p);
    if (p->at < p->len && p->s[p->at] == close) {
        p->at++;
    } else {
        for (;;) {
            if (n == cap) { /* cap <= the text's length: no overflow */
                cap = cap ? cap * 2 : 1;
                block = xrealloc_array(block, 1, sizeof(Block) + cap * sizeof(JsonValue));
                items = (JsonValue *)(block + 1);
            }
            JsonValue *item = &items[n];
            memset(item, 0, sizeof *item);
            skip_space(p);
            if (object) {
                if (p->at >= p->len || p->s[p->at] != '"') {
                    free(block);
                    return fail(p, "expected a string key");
                }
                if (parse_string(p, &item->key) < 0) {
                    free(block);
                    return -1;
                }
                skip_space(p);
                if (p->at >= p->len || p->s[p->at] != ':') {
                    free(block);
                    return fail(p, "expected ':'");
                }
                p->at++;
            }
            char *key = item->key;
            if (parse_value(p, item) < 0) {
                free(block);
                return -1;
            }
            item->key = key;
            n++;
            skip_space(p);
            if (p->at < p->len && p->s[p->at] == ',') {
                p->at++;
                continue;
            }
            if (p->at < p->len && p->s[p->at] == close) {
                p->at++;
                break;
            }
            free(block);
            return fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
    if (block) {
        block->next = p->doc->blocks;
        p->doc->blocks = block;
    }
    v->type = object ? JSON_OBJECT : JSON_ARRAY;
    v->n_items = (int)n;
    v->items = items;
    return 0;
}

static int parse_value(Parser *p, JsonValue *v)
{
    skip_space(p);
    if (p->at >= p->len)
        return fail(p, "unexpected end of input");
    char c = p->s[p->at];
    if (c == '{' || c == '[') {
        if (++p->depth > 64)
            return fail(p, "nested more than 64 deep");
        int rc = parse_items(p, v, c == '{');
        p->depth--;
        return rc;
    }
    if (c == '"') {
        v->type = JSON_STRING;
        return parse_string(p, &v->string);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return parse_number(p, v);
    static const struct {
        const char *word;
        JsonType type;
        double value;
    } words[] = {{"true", JSON_BOOL, 1}, {"false", JSON_BOOL, 0}, {"null", JSON_NULL, 0}};
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(words[k].word);
        if (p->len - p->at >= n && !memcmp(p->s + p->at, words[k].word, n)) {
            p->at += n;
            v->type = words[k].type;
            v->number = words[k].value;
            return 0;
        }
    }
    return fail(p, "unexpected character");
}

int json_parse(JsonDoc *doc, const char *text, size_t len, const char *name, long line,
               Error *err)
{
    memset(doc, 0, sizeof *doc);
    Parser p = {.s = text, .len = len, .name = name, .line = line, .doc = doc, .err = err};
    JsonValue *root = doc_alloc(doc, sizeof *root);
    memset(root, 0, sizeof *root);
    if (memchr(text, '\0', len))
        return error_at(err, name, line, 0, "NUL byte in JSON");
    if (parse_value(&p, root) < 0)
        return -1;
    skip_space(&p);
    if (p.at != len)
        return fail(&p, "text after the JSON value");
    doc->root = root;
    return 0;
}

void json_free(JsonDoc *doc)
{
    Block *b = doc->blocks;
    while (b) {
        Block *next = b->next;
        free(b);
        b = next;
    }
    memset(doc, 0, sizeof *doc);
}

const JsonValue *json_get(const JsonValue *object, const char *key)
{
    if (!object || object->type != JSON_OBJECT)
        return NULL;
    for (int k = 0; k < object->n_items; k++)
        if (!strcmp(object->items[k].key, key))
            return &object->items[k];
    return NULL;
}
