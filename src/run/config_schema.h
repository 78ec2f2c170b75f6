/* config_schema.h: the schema of the config, for the files of the config module
 * (config.c, config_schema.c, config_yaml.c) only: every key once -- its type, field,
 * default, range and doc -- and reading one value of a key from text. */
#ifndef S2S_CONFIG_SCHEMA_H
#define S2S_CONFIG_SCHEMA_H

#include <stddef.h>

#include "base/error.h"
#include "run/config.h"

typedef enum { T_INT, T_REAL, T_BOOL, T_STR, T_ENUM, T_INTLIST } ValueType;

enum {
    KEY_FREE_ON_RESUME = 1, /* may change when resuming (logging, stopping, paths) */
    KEY_MIN_EXCLUSIVE = 2,  /* the value must be > min, not >= min */
};

typedef struct {
    const char *path;    /* dotted: "model.attention_size", or "seed" at top level */
    ValueType type;
    size_t offset;       /* of the field in Config */
    const char *def;     /* the default, as YAML text */
    double min, max;     /* inclusive range of numbers (see KEY_MIN_EXCLUSIVE) */
    const char *const *choices; /* for T_ENUM: the names, in enum order, NULL-terminated */
    unsigned flags;
    const char *doc;
} KeySpec;

/* The keys in the order of the written config: config_n_keys() of them, at most
 * CONFIG_MAX_KEYS. */
extern const KeySpec config_keys[];

/* The index of the key at path, or -1. */
int config_find_key(const char *path);
/* The part of a dotted path after its section ("attention_size"). */
const char *config_key_name(const char *path);
/* "integer", "number", ... as messages name a key's type. */
const char *config_type_name(const KeySpec *ks);
/* "a,b,c": the choices, for messages and the docs. */
void config_choice_list(const char *const *choices, char *out, size_t cap);
/* "1 to 4096", "> 0 and <= 10", ...: a key's range in words. */
void config_range_text(const KeySpec *ks, char *out, size_t cap);
/* Parses text as a value of key ks into cfg. quoted: the YAML scalar was quoted (only
 * strings may be). On failure writes "path: expected ..., got ..." into err (without
 * position) and returns -1. */
int config_parse_value(Config *cfg, const KeySpec *ks, const char *text, int quoted, Error *err);

#endif
