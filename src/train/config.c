/* config.c: the schema of every config key, the libyaml event walker that reads a
 * config into it, --set overrides, validation and the YAML writer (see config.h).
 * Reads files; never writes any. */
#include "train/config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/mem.h"
#include "text/tokenize.h"

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

/* Choice fields are enums stored and read as int. */
_Static_assert(sizeof(ScoreKind) == sizeof(int) && sizeof(CellKind) == sizeof(int) &&
               sizeof(TokenLevel) == sizeof(int), "choices are ints");

static const char *const optimizer_names[] = {"adam", "sgd", "adadelta", NULL};
static const char *const scheduling_names[] = {"none", "plateau", NULL};
static const char *const metric_names[] = {"bleu", "loss", "exact", NULL};

#define OFF(field) offsetof(Config, field)
#define BIG 1e18
#define FREE KEY_FREE_ON_RESUME

/* The schema: every key of the config, once. */
static const KeySpec KEYS[] = {
    {"name", T_STR, OFF(name), "s2s", 0, 0, NULL, FREE, "name of the run; the default run_dir is runs/<name>"},
    {"seed", T_INT, OFF(seed), "1", 0, 4294967295.0, NULL, 0, "seed of every random number (PCG32 streams: init, shuffle)"},
    {"run_dir", T_STR, OFF(run_dir), "", 0, 0, NULL, FREE, "where checkpoints, logs and alignments go (empty: runs/<name>)"},

    {"data.train_src", T_STR, OFF(data.train_src), "", 0, 0, NULL, 0, "training source, one sentence a line (with train_tgt)"},
    {"data.train_tgt", T_STR, OFF(data.train_tgt), "", 0, 0, NULL, 0, "training target, line-aligned with train_src"},
    {"data.train_tsv", T_STR, OFF(data.train_tsv), "", 0, 0, NULL, 0, "or: one file of source<TAB>target lines"},
    {"data.valid_src", T_STR, OFF(data.valid_src), "", 0, 0, NULL, 0, "validation source (optional; with valid_tgt)"},
    {"data.valid_tgt", T_STR, OFF(data.valid_tgt), "", 0, 0, NULL, 0, "validation target"},
    {"data.valid_tsv", T_STR, OFF(data.valid_tsv), "", 0, 0, NULL, 0, "or: validation pairs as one TSV file"},
    {"data.test_src", T_STR, OFF(data.test_src), "", 0, 0, NULL, FREE, "test source (optional; translated by make demo and scripts)"},
    {"data.test_tgt", T_STR, OFF(data.test_tgt), "", 0, 0, NULL, FREE, "test target"},
    {"data.test_tsv", T_STR, OFF(data.test_tsv), "", 0, 0, NULL, FREE, "or: test pairs as one TSV file"},
    {"data.valid_align", T_STR, OFF(data.valid_align), "", 0, 0, NULL, FREE, "gold alignments of the validation pairs (Pharaoh j-i, j?i possible), for AER"},
    {"data.test_align", T_STR, OFF(data.test_align), "", 0, 0, NULL, FREE, "gold alignments of the test pairs, for the final AER"},
    {"data.tsv_reverse", T_BOOL, OFF(data.tsv_reverse), "false", 0, 0, NULL, 0, "in TSV files, the second column is the source"},
    {"data.level", T_ENUM, OFF(data.level), "word", 0, 0, token_level_names, 0, "tokens are words (punctuation split off) or characters"},
    {"data.lowercase", T_BOOL, OFF(data.lowercase), "false", 0, 0, NULL, 0, "lowercase both sides (full Unicode case mapping)"},
    {"data.max_length", T_INT, OFF(data.max_length), "50", 1, 1000, NULL, 0, "training pairs with more tokens on a side are skipped"},
    {"data.max_line_bytes", T_INT, OFF(data.max_line_bytes), "1048576", 64, 1073741824, NULL, 0, "lines longer than this are skipped without being held in memory"},
    {"data.src_vocab_size", T_INT, OFF(data.src_vocab_size), "0", 0, 10000000, NULL, 0, "most entries of the source vocabulary, specials included (0: no limit)"},
    {"data.tgt_vocab_size", T_INT, OFF(data.tgt_vocab_size), "0", 0, 10000000, NULL, 0, "most entries of the target vocabulary (0: no limit)"},
    {"data.src_min_freq", T_INT, OFF(data.src_min_freq), "1", 1, 1000000, NULL, 0, "source words seen fewer times become <unk>"},
    {"data.tgt_min_freq", T_INT, OFF(data.tgt_min_freq), "1", 1, 1000000, NULL, 0, "target words seen fewer times become <unk>"},

    {"model.embedding_size", T_INT, OFF(model.embedding_size), "64", 1, 8192, NULL, 0, "m: word embedding size, both sides"},
    {"model.encoder_size", T_INT, OFF(model.encoder_size), "64", 1, 8192, NULL, 0, "n: encoder units per direction"},
    {"model.decoder_size", T_INT, OFF(model.decoder_size), "128", 1, 8192, NULL, 0, "p: decoder units"},
    {"model.attention_size", T_INT, OFF(model.attention_size), "64", 1, 8192, NULL, 0, "a: attention layer size (additive and scaled_dot)"},
    {"model.readout_size", T_INT, OFF(model.readout_size), "128", 1, 8192, NULL, 0, "l: readout layer size"},
    {"model.attention", T_ENUM, OFF(model.attention), "additive", 0, 0, score_names, 0, "attention score (src/nn/MODEL.md): v_a.tanh(W_a s + U_a h), s.h (needs decoder_size = 2 encoder_size), s.W_g h, W_q s.W_k h / sqrt(a), or none: a fixed context [fwd_h_S; bwd_h_1]"},
    {"model.encoder_cell", T_ENUM, OFF(model.encoder_cell), "gru", 0, 0, cell_names, 0, "encoder cell, in torch.nn's gate layout (rnn: tanh)"},
    {"model.decoder_cell", T_ENUM, OFF(model.decoder_cell), "gru", 0, 0, cell_names, 0, "decoder cell (an LSTM decoder starts from cell state 0)"},
    {"model.encoder_layers", T_INT, OFF(model.encoder_layers), "1", 1, 4, NULL, 0, "stacked bidirectional encoder layers; each above the first reads [fwd_h; bwd_h] of the one below"},
    {"model.embedding_dropout", T_REAL, OFF(model.embedding_dropout), "0", 0, 0.9, NULL, 0, "in training, zero each embedding value (source and target) with this probability"},
    {"model.readout_dropout", T_REAL, OFF(model.readout_dropout), "0", 0, 0.9, NULL, 0, "in training, zero each readout value t_i with this probability"},
    {"model.init_range", T_REAL, OFF(model.init_range), "0.1", 0, 10, NULL, KEY_MIN_EXCLUSIVE, "weights start uniform in [-init_range, init_range], biases at 0"},

    {"training.optimizer", T_ENUM, OFF(training.optimizer), "adam", 0, 0, optimizer_names, 0, "the update rule"},
    {"training.learning_rate", T_REAL, OFF(training.learning_rate), "0.001", 0, 100, NULL, KEY_MIN_EXCLUSIVE, "initial learning rate (Adadelta: a multiplier, usually 1)"},
    {"training.adam_beta1", T_REAL, OFF(training.adam_beta1), "0.9", 0, 1, NULL, 0, "Adam's first-moment decay"},
    {"training.adam_beta2", T_REAL, OFF(training.adam_beta2), "0.999", 0, 1, NULL, 0, "Adam's second-moment decay"},
    {"training.adam_eps", T_REAL, OFF(training.adam_eps), "1e-08", 0, 1, NULL, KEY_MIN_EXCLUSIVE, "Adam's epsilon"},
    {"training.adadelta_rho", T_REAL, OFF(training.adadelta_rho), "0.95", 0, 1, NULL, 0, "Adadelta's decay (Zeiler 2012)"},
    {"training.adadelta_eps", T_REAL, OFF(training.adadelta_eps), "1e-06", 0, 1, NULL, KEY_MIN_EXCLUSIVE, "Adadelta's epsilon"},
    {"training.clip_grad_norm", T_REAL, OFF(training.clip_grad_norm), "5", 0, 1e6, NULL, 0, "rescale gradients whose global L2 norm exceeds this (0: off)"},
    {"training.label_smoothing", T_REAL, OFF(training.label_smoothing), "0", 0, 0.9, NULL, 0, "train towards (1 - eps) on the reference word and eps spread over the vocabulary"},
    {"training.batch_size", T_INT, OFF(training.batch_size), "32", 1, 65536, NULL, 0, "sentence pairs per step"},
    {"training.bucket_batches", T_INT, OFF(training.bucket_batches), "100", 1, 1000000, NULL, 0, "pairs are sorted by length within pools of this many batches (1: no bucketing)"},
    {"training.shuffle", T_BOOL, OFF(training.shuffle), "true", 0, 0, NULL, 0, "shuffle the pairs and the batch order every epoch"},
    {"training.max_steps", T_INT, OFF(training.max_steps), "0", 0, BIG, NULL, FREE, "stop after this many updates (0: no limit)"},
    {"training.epochs", T_INT, OFF(training.epochs), "10", 0, 1000000, NULL, FREE, "stop after this many passes over the data (0: no limit)"},
    {"training.max_time", T_REAL, OFF(training.max_time), "0", 0, 1e9, NULL, FREE, "stop after this many seconds of training, validation not counted (0: no limit)"},
    {"training.scheduling", T_ENUM, OFF(training.scheduling), "plateau", 0, 0, scheduling_names, 0, "plateau: multiply the learning rate by decrease_factor after patience validations without improvement"},
    {"training.patience", T_INT, OFF(training.patience), "3", 1, 1000000, NULL, 0, "validations without improvement before the learning rate decays"},
    {"training.decrease_factor", T_REAL, OFF(training.decrease_factor), "0.5", 0, 1, NULL, KEY_MIN_EXCLUSIVE, "learning rate decay factor"},
    {"training.learning_rate_min", T_REAL, OFF(training.learning_rate_min), "1e-06", 0, 100, NULL, 0, "the learning rate never decays below this"},
    {"training.early_stopping", T_INT, OFF(training.early_stopping), "0", 0, 1000000, NULL, FREE, "stop after this many validations without improvement (0: never)"},
    {"training.early_stopping_metric", T_ENUM, OFF(training.early_stopping_metric), "bleu", 0, 0, metric_names, 0, "the validation score that picks best.ckpt and drives scheduling and early stopping"},
    {"training.valid_every", T_INT, OFF(training.valid_every), "1000", 1, BIG, NULL, FREE, "validate (and save last.ckpt) every this many steps"},
    {"training.log_every", T_INT, OFF(training.log_every), "100", 1, BIG, NULL, FREE, "log a progress line every this many steps (off a terminal)"},
    {"training.max_bad_steps", T_INT, OFF(training.max_bad_steps), "5", 1, 1000000, NULL, FREE, "stop (exit 4) after this many non-finite steps in a row"},
    {"training.threads", T_INT, OFF(training.threads), "0", 0, 1024, NULL, FREE, "OpenBLAS threads (0: one for batches of up to 4 sentences, else one per core)"},

    {"alignments.every", T_INT, OFF(alignments.every), "500", 0, BIG, NULL, FREE, "append the attention of the probe pairs to alignments.jsonl at step 0 and every this many steps (0: never)"},
    {"alignments.probes", T_INT, OFF(alignments.probes), "4", 0, 100, NULL, FREE, "the probe pairs are the first this many validation pairs..."},
    {"alignments.lines", T_INTLIST, OFF(alignments.lines), "[]", 1, 1e9, NULL, FREE, "... or these lines (1-based) of the validation files, e.g. [3, 17]"},

    {"translate.beam_size", T_INT, OFF(translate.beam_size), "5", 1, 100, NULL, FREE, "hypotheses kept by beam search in s2s translate (1: greedy)"},
    {"translate.alpha", T_REAL, OFF(translate.alpha), "0.6", 0, 10, NULL, FREE, "length normalisation of beam scores, ((5 + length) / 6)^alpha (Wu et al. 2016; 0: none)"},
    {"translate.detokenize", T_BOOL, OFF(translate.detokenize), "true", 0, 0, NULL, FREE, "write translations as text (\"j'ai froid.\"), not as tokens (\"j' ai froid .\")"},
    {"translate.max_source_length", T_INT, OFF(translate.max_source_length), "250", 1, 100000, NULL, FREE, "s2s translate cuts longer sources (with a warning)"},
    {"translate.max_output_ratio", T_REAL, OFF(translate.max_output_ratio), "2", 0, 1000, NULL, KEY_MIN_EXCLUSIVE, "a translation stops after max_output_ratio * (source tokens) + max_output_extra tokens"},
    {"translate.max_output_extra", T_INT, OFF(translate.max_output_extra), "10", 0, 100000, NULL, 0, "see max_output_ratio"},
};

#undef OFF
#undef FREE

enum { N_KEYS = sizeof KEYS / sizeof *KEYS };
_Static_assert(N_KEYS <= CONFIG_MAX_KEYS, "raise CONFIG_MAX_KEYS");

int config_n_keys(void)
{
    return N_KEYS;
}

const char *config_key_path(int k)
{
    return KEYS[k].path;
}

int config_key_free_on_resume(int k)
{
    return (KEYS[k].flags & KEY_FREE_ON_RESUME) != 0;
}

static int find_key(const char *path)
{
    for (int k = 0; k < N_KEYS; k++)
        if (!strcmp(KEYS[k].path, path))
            return k;
    return -1;
}

/* ---- values -------------------------------------------------------------------------- */

static const char *type_name(const KeySpec *ks)
{
    switch (ks->type) {
    case T_INT: return "integer";
    case T_REAL: return "number";
    case T_BOOL: return "boolean";
    case T_STR: return "string";
    case T_ENUM: return "choice";
    case T_INTLIST: return "list of integers";
    }
    return "?";
}

const char *config_key_type(int k)
{
    return type_name(&KEYS[k]);
}

int config_key_range(int k, double *min, double *max, int *min_exclusive)
{
    const KeySpec *ks = &KEYS[k];
    if (ks->type != T_INT && ks->type != T_REAL && ks->type != T_INTLIST)
        return -1;
    *min = ks->min;
    *max = ks->max >= BIG ? HUGE_VAL : ks->max;
    *min_exclusive = (ks->flags & KEY_MIN_EXCLUSIVE) != 0;
    return 0;
}

/* The index of word in a NULL-terminated list of names, or -1. */
static int choice_index(const char *const *choices, const char *word)
{
    for (int k = 0; choices[k]; k++)
        if (!strcmp(choices[k], word))
            return k;
    return -1;
}

/* "a,b,c": the choices for messages and the docs. */
static void choice_list(const char *const *choices, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (int k = 0; choices[k] && at < cap; k++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s", k ? "," : "", choices[k]);
}

/* "1 to 4096", "> 0 and at most 10", ... */
static void range_text(const KeySpec *ks, char *out, size_t cap)
{
    char lo[32], hi[32];
    snprintf(lo, sizeof lo, "%.15g", ks->min);
    snprintf(hi, sizeof hi, "%.15g", ks->max);
    if (ks->max >= BIG)
        snprintf(out, cap, "%s %s", ks->flags & KEY_MIN_EXCLUSIVE ? ">" : ">=", lo);
    else if (ks->flags & KEY_MIN_EXCLUSIVE)
        snprintf(out, cap, "> %s and <= %s", lo, hi);
    else
        snprintf(out, cap, "%s to %s", lo, hi);
}

/* Parses text as a value of key ks into cfg. quoted: the YAML scalar was quoted
 * (only strings may be). On failure writes "path: expected ..., got ..." into err
 * (without position) and returns -1. */
static int parse_value(Config *cfg, const KeySpec *ks, const char *text, int quoted, Error *err)
{
    char *field = (char *)cfg + ks->offset;
    char range[96];
    if (ks->type == T_STR) {
        if (strlen(text) >= CONFIG_STR_MAX)
            return error_set(err, "%s: expected a string of at most %d bytes, got %zu", ks->path,
                             CONFIG_STR_MAX - 1, strlen(text));
        /* libyaml checks a file's text, not --set's: YAML could not write it back */
        size_t bad_at, bad_len;
        if (utf8_validate(text, strlen(text), &bad_at, &bad_len) < 0)
            return error_set(err, "%s: expected UTF-8 text, got byte 0x%02x at byte %zu", ks->path,
                             (unsigned char)text[bad_at], bad_at + 1);
        snprintf(field, CONFIG_STR_MAX, "%s", text);
        return 0;
    }
    if (quoted)
        return error_set(err, "%s: expected %s %s, got the string \"%s\"", ks->path,
                         ks->type == T_INT ? "an" : "a", type_name(ks), text);
    if (ks->type == T_BOOL) {
        /* YAML 1.2's core schema spellings only: "yes", "on" and friends are errors. */
        if (!strcmp(text, "true") || !strcmp(text, "True") || !strcmp(text, "TRUE"))
            *(int *)field = 1;
        else if (!strcmp(text, "false") || !strcmp(text, "False") || !strcmp(text, "FALSE"))
            *(int *)field = 0;
        else
            return error_set(err, "%s: expected true or false, got \"%s\"", ks->path, text);
        return 0;
    }
    if (ks->type == T_ENUM) {
        int index = choice_index(ks->choices, text);
        if (index < 0) {
            char list[256];
            choice_list(ks->choices, list, sizeof list);
            return error_set(err, "%s: expected one of {%s}, got \"%s\"", ks->path, list, text);
        }
        *(int *)field = index;
        return 0;
    }
    range_text(ks, range, sizeof range);
    char *end;
    errno = 0;
    if (ks->type == T_INTLIST) {
        /* from --set or a default: "[3, 17]" or "3,17" */
        ConfigIntList *list = (ConfigIntList *)field;
        list->n = 0;
        const char *p = text;
        while (*p == ' ' || *p == '[')
            p++;
        while (*p && *p != ']') {
            long long v = strtoll(p, &end, 10);
            if (end == p || errno == ERANGE || (double)v < ks->min || (double)v > ks->max)
                return error_set(err, "%s: expected a list of integers (each %s), got \"%s\"",
                                 ks->path, range, text);
            if (list->n == CONFIG_MAX_LIST)
                return error_set(err, "%s: at most %d entries", ks->path, CONFIG_MAX_LIST);
            list->v[list->n++] = (long)v;
            p = end;
            while (*p == ' ' || *p == ',')
                p++;
        }
        return 0;
    }
    if (ks->type == T_INT) {
        long long v = strtoll(text, &end, 10);
        if (end == text || *end || errno == ERANGE || !*text)
            return error_set(err, "%s: expected an integer (%s), got \"%s\"", ks->path, range, text);
        /* BIG marks "no upper limit" (the message says only ">= min"), so it is no cap */
        if ((double)v < ks->min || (ks->max < BIG && (double)v > ks->max))
            return error_set(err, "%s: %lld is out of range (expected %s)", ks->path, v, range);
        *(long *)field = (long)v;
        return 0;
    }
    double v = strtod(text, &end);
    if (end == text || *end || errno == ERANGE || !isfinite(v) || !*text)
        return error_set(err, "%s: expected a finite number (%s), got \"%s\"", ks->path, range, text);
    if (v < ks->min || v > ks->max || (ks->flags & KEY_MIN_EXCLUSIVE && v <= ks->min))
        return error_set(err, "%s: %s is out of range (expected %s)", ks->path, text, range);
    *(double *)field = v;
    return 0;
}

void config_key_value(const Config *cfg, int k, char *buf, size_t cap)
{
    const KeySpec *ks = &KEYS[k];
    const char *field = (const char *)cfg + ks->offset;
    switch (ks->type) {
    case T_INT: snprintf(buf, cap, "%ld", *(const long *)field); break;
    case T_REAL: snprintf(buf, cap, "%.17g", *(const double *)field); break;
    case T_BOOL: snprintf(buf, cap, "%s", *(const int *)field ? "true" : "false"); break;
    case T_STR: snprintf(buf, cap, "%s", field); break;
    case T_ENUM: snprintf(buf, cap, "%s", ks->choices[*(const int *)field]); break;
    case T_INTLIST: {
        const ConfigIntList *list = (const ConfigIntList *)field;
        size_t used = (size_t)snprintf(buf, cap, "[");
        for (int e = 0; e < list->n && used < cap; e++)
            used += (size_t)snprintf(buf + used, cap - used, "%s%ld", e ? ", " : "", list->v[e]);
        if (used < cap)
            snprintf(buf + used, cap - used, "]");
        break;
    }
    }
}

void config_defaults(Config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (int k = 0; k < N_KEYS; k++) {
        Error err;
        int rc = parse_value(cfg, &KEYS[k], KEYS[k].def, 0, &err);
        (void)rc; /* the schema's defaults are valid (a test loads them) */
    }
}

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

static const char *last_part(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot ? dot + 1 : path;
}

/* The known key closest to path: same name in another section first, then the
 * nearest name (at most about a third of its letters wrong). NULL if none is close. */
static const char *suggest_key(const char *path)
{
    const char *name = last_part(path);
    for (int k = 0; k < N_KEYS; k++)
        if (!strcmp(last_part(KEYS[k].path), name))
            return KEYS[k].path;
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (int k = 0; k < N_KEYS; k++) {
        size_t d = edit_distance(path, KEYS[k].path);
        size_t d_name = edit_distance(name, last_part(KEYS[k].path));
        /* a wrong section with the right-ish name also counts */
        if (d_name + 1 < d)
            d = d_name + 1;
        if (d < best_d) {
            best_d = d;
            best = KEYS[k].path;
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
    int seen_line[N_KEYS]; /* 0 = not set by this file */
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
    const KeySpec *ks = &KEYS[k];
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
                            "list, got %s", ks->path, w->event.type == YAML_SCALAR_EVENT ? "a string" :
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
    if (parse_value(w->cfg, ks, text, 0, &inner) < 0)
        return error_at(w->err, w->file, line, col, "%s", inner.msg);
    w->cfg->origin.line[k] = (int)line;
    w->cfg->origin.col[k] = (int)col;
    return 0;
}

static int take_value(Walker *w, int k)
{
    const KeySpec *ks = &KEYS[k];
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
                        ks->path, ks->type == T_INT ? "an" : "a", type_name(ks), event_kind(e));
    if (reject_anchor(w, e->data.scalar.anchor) < 0)
        return -1;
    const char *text = (const char *)e->data.scalar.value;
    if (strlen(text) != e->data.scalar.length)
        return error_at(w->err, w->file, ev_line(w), ev_col(w), "%s: NUL byte in the value", ks->path);
    int quoted = e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
    Error inner;
    if (parse_value(w->cfg, ks, text, quoted, &inner) < 0)
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
        int k = find_key(path);
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
        int k = find_key(path);
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
    int k = find_key(path);
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
    if (parse_value(cfg, &KEYS[k], eq + 1, 0, &inner) < 0)
        return error_set(err, "--set %s: %s", assignment, inner.msg);
    cfg->origin.line[k] = -1;
    cfg->origin.col[k] = 0;
    return 0;
}

/* ---- validation ---------------------------------------------------------------------- */

/* An error about key k, located where k was set. */
static int key_error(const Config *cfg, Error *err, const char *path, const char *fmt, ...)
    S2S_PRINTF(4, 5);

static int key_error(const Config *cfg, Error *err, const char *path, const char *fmt, ...)
{
    char msg[ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int k = find_key(path);
    if (k >= 0 && cfg->origin.line[k] > 0)
        return error_at(err, cfg->origin.file, cfg->origin.line[k], cfg->origin.col[k], "%s", msg);
    if (k >= 0 && cfg->origin.line[k] < 0) { /* "--set KEY: ...", KEY said once */
        size_t n = strlen(path);
        const char *rest = !strncmp(msg, path, n) && !strncmp(msg + n, ": ", 2) ? msg + n + 2 : msg;
        return error_set(err, "--set %s: %s", path, rest);
    }
    if (cfg->origin.file[0])
        return error_at(err, cfg->origin.file, 0, 0, "%s", msg);
    return error_set(err, "%s", msg);
}

/* One of: src and tgt files, or one TSV file (or, if optional, nothing). */
static int check_pair(const Config *cfg, Error *err, const char *what, const char *src,
                      const char *tgt, const char *tsv, int optional)
{
    char src_key[64], tgt_key[64], tsv_key[64];
    snprintf(src_key, sizeof src_key, "data.%s_src", what);
    snprintf(tgt_key, sizeof tgt_key, "data.%s_tgt", what);
    snprintf(tsv_key, sizeof tsv_key, "data.%s_tsv", what);
    int files = src[0] || tgt[0];
    if (files && tsv[0])
        return key_error(cfg, err, tsv_key, "%s: give either %s_src and %s_tgt or %s_tsv, not both",
                         tsv_key, what, what, what);
    if (files && !(src[0] && tgt[0]))
        return key_error(cfg, err, src[0] ? src_key : tgt_key, "%s: needs %s too",
                         src[0] ? src_key : tgt_key, src[0] ? tgt_key : src_key);
    if (!files && !tsv[0] && !optional)
        return key_error(cfg, err, src_key, "no training data: set data.%s_src and data.%s_tgt, "
                         "or data.%s_tsv", what, what, what);
    return 0;
}

int config_validate(Config *cfg, Error *err)
{
#define D (&cfg->data)
#define T (&cfg->training)
    if (check_pair(cfg, err, "train", D->train_src, D->train_tgt, D->train_tsv, 0) < 0 ||
        check_pair(cfg, err, "valid", D->valid_src, D->valid_tgt, D->valid_tsv, 1) < 0 ||
        check_pair(cfg, err, "test", D->test_src, D->test_tgt, D->test_tsv, 1) < 0)
        return -1;
    if (!T->max_steps && !T->epochs && T->max_time <= 0)
        return key_error(cfg, err, "training.epochs", "training.epochs: training would never stop: "
                         "set training.max_steps, training.epochs or training.max_time");
    int has_valid = D->valid_src[0] || D->valid_tsv[0];
    /* plateau scheduling is the default and simply idles without validation; asked for
     * explicitly, it is an error there */
    int plateau_asked = T->scheduling == SCHEDULING_PLATEAU &&
                        cfg->origin.line[find_key("training.scheduling")] != 0;
    if (!has_valid && (T->early_stopping > 0 || plateau_asked)) {
        const char *key = T->early_stopping > 0 ? "training.early_stopping" : "training.scheduling";
        return key_error(cfg, err, key, "%s needs a validation set (data.valid_src and "
                         "data.valid_tgt, or data.valid_tsv)",
                         T->early_stopping > 0 ? key : "training.scheduling: plateau");
    }
    /* Idling, the default plateau does what none says. Say none: the effective config
     * (in every checkpoint) names every key, so a plateau there would count as asked
     * for, and the checkpoint would be refused when loaded. */
    if (!has_valid)
        T->scheduling = SCHEDULING_NONE;
    if (T->learning_rate_min > T->learning_rate)
        return key_error(cfg, err, "training.learning_rate_min",
                         "training.learning_rate_min (%g) is above training.learning_rate (%g)",
                         T->learning_rate_min, T->learning_rate);
    /* s_{i-1} . h_j needs the two to be the same size: p = 2n (nn/MODEL.md) */
    if (cfg->model.attention == SCORE_DOT && cfg->model.decoder_size != 2 * cfg->model.encoder_size)
        return key_error(cfg, err, "model.attention", "model.attention: dot needs model.decoder_size "
                         "= 2 x model.encoder_size (s_{i-1} . h_j), got %ld and %ld",
                         cfg->model.decoder_size, cfg->model.encoder_size);
#undef D
#undef T
    if (!cfg->name[0])
        return key_error(cfg, err, "name", "name: must not be empty");
    if (!cfg->run_dir[0]) {
        if (strlen(cfg->name) + 6 >= CONFIG_STR_MAX)
            return key_error(cfg, err, "name", "name: too long");
        snprintf(cfg->run_dir, CONFIG_STR_MAX, "runs/%s", cfg->name);
    }
    return 0;
}

/* ---- writing --------------------------------------------------------------------------- */

/* Appends s to a growing buffer. */
static void put(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *buf = xrealloc_array(*buf, *cap, 1);
    }
    memcpy(*buf + *len, s, n + 1);
    *len += n;
}

/* A YAML double-quoted scalar of UTF-8 text: the escapes keep any text intact. Escaped
 * are the characters YAML does not allow as they are (control characters, U+FEFF,
 * U+FFFE, U+FFFF) and those it would read as line breaks and fold into a space inside
 * the quotes (U+0085, U+2028, U+2029). */
static void put_quoted(char **buf, size_t *len, size_t *cap, const char *s)
{
    put(buf, len, cap, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = *p < 0xC0 ? 1 : *p < 0xE0 ? 2 : *p < 0xF0 ? 3 : 4;
        uint32_t c = n == 1 ? *p : *p & (0x7Fu >> n);
        size_t k = 1;
        for (; k < n && (p[k] & 0xC0) == 0x80; k++)
            c = c << 6 | (p[k] & 0x3Fu);
        n = k;
        char piece[16];
        if (c == '"' || c == '\\')
            snprintf(piece, sizeof piece, "\\%c", (char)c);
        else if (c < 0x20 || (c >= 0x7F && c <= 0x9F))
            snprintf(piece, sizeof piece, "\\x%02x", (unsigned)c);
        else if (c == 0x2028 || c == 0x2029 || c == 0xFEFF || c == 0xFFFE || c == 0xFFFF)
            snprintf(piece, sizeof piece, "\\u%04x", (unsigned)c);
        else
            snprintf(piece, sizeof piece, "%.*s", (int)n, (const char *)p);
        put(buf, len, cap, piece);
        p += n;
    }
    put(buf, len, cap, "\"");
}

char *config_to_yaml(const Config *cfg)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    put(&buf, &len, &cap, "# The effective config of this run: the file, its --set overrides and the\n"
                          "# defaults. `s2s train` on this file trains the same way.\n");
    char section[64] = "";
    for (int k = 0; k < N_KEYS; k++) {
        const KeySpec *ks = &KEYS[k];
        const char *dot = strchr(ks->path, '.');
        char this_section[64];
        snprintf(this_section, sizeof this_section, "%.*s", dot ? (int)(dot - ks->path) : 0,
                 ks->path);
        if (strcmp(this_section, section)) {
            snprintf(section, sizeof section, "%s", this_section);
            put(&buf, &len, &cap, "\n");
            put(&buf, &len, &cap, section);
            put(&buf, &len, &cap, ":\n");
        }
        char value[CONFIG_STR_MAX + 64];
        config_key_value(cfg, k, value, sizeof value);
        put(&buf, &len, &cap, dot ? "  " : "");
        put(&buf, &len, &cap, last_part(ks->path));
        put(&buf, &len, &cap, ": ");
        if (ks->type == T_STR)
            put_quoted(&buf, &len, &cap, value);
        else
            put(&buf, &len, &cap, value);
        put(&buf, &len, &cap, "\n");
    }
    return buf;
}

char *config_key_doc_row(int k)
{
    const KeySpec *ks = &KEYS[k];
    char range[128] = "", def[128];
    if (ks->type == T_INT || ks->type == T_REAL || ks->type == T_INTLIST)
        range_text(ks, range, sizeof range);
    else if (ks->type == T_ENUM)
        choice_list(ks->choices, range, sizeof range);
    snprintf(def, sizeof def, "%s", ks->def[0] ? ks->def : "\"\"");
    size_t cap = strlen(ks->path) + strlen(range) + strlen(def) + strlen(ks->doc) + 96;
    char *row = xmalloc(cap);
    snprintf(row, cap, "| `%s` | %s | `%s` | %s | %s%s |", ks->path, type_name(ks), def, range,
             ks->doc, ks->flags & KEY_FREE_ON_RESUME ? " (may change on resume)" : "");
    return row;
}

Dims config_model_dims(const Config *cfg, int src_vocab, int tgt_vocab)
{
    return (Dims){.src_vocab = src_vocab, .tgt_vocab = tgt_vocab,
                  .emb = (int)cfg->model.embedding_size, .enc_hidden = (int)cfg->model.encoder_size,
                  .dec_hidden = (int)cfg->model.decoder_size, .attn = (int)cfg->model.attention_size,
                  .readout = (int)cfg->model.readout_size, .score = cfg->model.attention,
                  .enc_cell = cfg->model.encoder_cell, .dec_cell = cfg->model.decoder_cell,
                  .enc_layers = (int)cfg->model.encoder_layers};
}
