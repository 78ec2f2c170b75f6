/* json.h: the little JSON s2s needs: writing strings safely escaped, and a strict
 * reader (RFC 8259) for the alignment dumps, with the line and column of any error.
 * Values are a tree in blocks owned by JsonDoc. */
#ifndef S2S_JSON_H
#define S2S_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "base/error.h"

/* Writes s as a JSON string literal (quotes included). */
void json_write_string(FILE *f, const char *s);
/* The same with <, > and & escaped too (\u003c ...): a literal that can stand inside an
 * HTML <script> element. */
void json_write_string_in_html(FILE *f, const char *s);

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } JsonType;

/* 24 bytes, and every allocation sized to fit (json.c): the parse of any text takes at
 * most some 20 times its length ("[0],[0],..." is the worst; "0,0,..." takes 12). */
typedef struct JsonValue JsonValue;
struct JsonValue {
    JsonType type;
    int n_items;           /* JSON_ARRAY, JSON_OBJECT */
    char *key;             /* set on members of an object */
    union {                /* which one: type says */
        double number;     /* JSON_NUMBER, JSON_BOOL (0 or 1), JSON_NULL (0) */
        char *string;      /* JSON_STRING */
        JsonValue *items;  /* JSON_ARRAY, JSON_OBJECT: the elements or members */
    };
};

typedef struct {
    JsonValue *root;
    void *blocks;      /* allocations, freed by json_free */
    char *free_at;     /* the room left in the newest block for small allocations */
    size_t free_left, chunk;
} JsonDoc;

/* Parses text[0..len) as one JSON value (whitespace around it allowed; nesting at most
 * 64 deep). Returns 0, or -1 with err = "name:line:col: what". json_free is safe either
 * way. */
int json_parse(JsonDoc *doc, const char *text, size_t len, const char *name, long line,
               Error *err);
void json_free(JsonDoc *doc);

/* The member of an object called key, or NULL. */
const JsonValue *json_get(const JsonValue *object, const char *key);

#endif
