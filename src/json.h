/* json.h: the little JSON s2s needs: writing strings safely escaped, and a strict
 * reader (RFC 8259) for the alignment dumps, with the line and column of any error.
 * Values are a tree in one arena-like block owned by JsonDoc. */
#ifndef S2S_JSON_H
#define S2S_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"

/* Writes s as a JSON string literal (quotes included). */
void json_write_string(FILE *f, const char *s);

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } JsonType;

typedef struct JsonValue JsonValue;
struct JsonValue {
    JsonType type;
    double number;     /* JSON_NUMBER, JSON_BOOL (0 or 1) */
    char *string;      /* JSON_STRING; the key for object members */
    char *key;         /* set on members of an object */
    JsonValue *items;  /* JSON_ARRAY, JSON_OBJECT: the elements or members */
    int n_items;
};

typedef struct {
    JsonValue *root;
    void *blocks;      /* allocations, freed by json_free */
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
