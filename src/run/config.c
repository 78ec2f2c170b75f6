/* config.c: the config after reading (see config.h): cross-key validation, the
 * effective config written back as YAML, the rows of configs/README.md, and the model's
 * dimensions. The schema is config_schema.c's, the reader config_yaml.c's. */
#include "run/config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "text/number.h"
#include "run/config_schema.h"

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
    int k = config_find_key(path);
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

/* An image model's own rules: 1 to CONV_MAX_LAYERS conv blocks, each halving the
 * picture, and its corpora given as .src/.tgt files (the .src lines are paths). */
/* The Transformer decoder's own conditions: heads that split the embedding width, sine and
 * cosine positions in pairs, and none of what only a recurrent decoder's attention has. */
static int check_transformer_decoder(Config *cfg, Error *err)
{
    const long m = cfg->model.embedding_size, H = cfg->model.attention_heads;
    if (m % H != 0)
        return key_error(cfg, err, "model.attention_heads", "model.attention_heads: %ld heads "
                         "split the Transformer decoder's width model.embedding_size = %ld in "
                         "equal slices, and %ld is not divisible by %ld", H, m, m, H);
    if (m % 2 != 0)
        return key_error(cfg, err, "model.embedding_size", "model.embedding_size: %ld, but "
                         "model.decoder_cell none adds sine and cosine positions in pairs: it "
                         "must be even", m);
    if (cfg->model.attention_mode == ATTENTION_HARD)
        return key_error(cfg, err, "model.attention_mode", "model.attention_mode: hard samples "
                         "a recurrent decoder's attention; the Transformer decoder's "
                         "(model.decoder_cell none) is soft");
    if (cfg->model.context_gate)
        return key_error(cfg, err, "model.context_gate", "model.context_gate: the gate scales "
                         "a recurrent decoder's context; the Transformer decoder "
                         "(model.decoder_cell none) has none");
    if (cfg->training.doubly_stochastic > 0)
        return key_error(cfg, err, "training.doubly_stochastic", "training.doubly_stochastic: "
                         "not available with the Transformer decoder (model.decoder_cell none)");
    if (cfg->training.attention_supervision > 0)
        return key_error(cfg, err, "training.attention_supervision",
                         "training.attention_supervision: not available with the Transformer "
                         "decoder (model.decoder_cell none)");
    return 0;
}

static int check_image_model(Config *cfg, Error *err)
{
    const ConfigIntList *ch = &cfg->model.conv_channels;
    if (ch->n < 1 || ch->n > CONV_MAX_LAYERS)
        return key_error(cfg, err, "model.conv_channels", "model.conv_channels: %d blocks, "
                         "expected 1 to %d", ch->n, CONV_MAX_LAYERS);
    const long step = 1L << ch->n;
    if (cfg->data.image_size % step != 0 || cfg->data.image_size / step < 1)
        return key_error(cfg, err, "data.image_size", "data.image_size: %ld is not divisible "
                         "by 2^%d = %ld (each of model.conv_channels' %d blocks halves the "
                         "picture)", cfg->data.image_size, ch->n, step, ch->n);
    if (cfg->model.grid_position_sines && !cfg->model.grid_positions)
        return key_error(cfg, err, "model.grid_position_sines", "model.grid_position_sines: "
                         "needs model.grid_positions: true (the sines are the positions)");
    const char *tsv = cfg->data.train_tsv[0]   ? "data.train_tsv"
                      : cfg->data.valid_tsv[0] ? "data.valid_tsv"
                      : cfg->data.test_tsv[0]  ? "data.test_tsv"
                                               : NULL;
    if (tsv)
        return key_error(cfg, err, tsv, "%s: an image model reads .src files of picture paths "
                         "and .tgt files of captions, not TSV", tsv);
    /* (without attention weights the key is only unused: config_usage.c says so) */
    if (cfg->training.attention_supervision > 0 && cfg->model.attention != SCORE_NONE &&
        !cfg->data.train_ground[0])
        return key_error(cfg, err, "training.attention_supervision", "training."
                         "attention_supervision: needs data.train_ground, the training "
                         "captions' word boxes");
    return 0;
}

/* model.share_embeddings: one table for the words of both sides, so one vocabulary. */
static int check_shared_embeddings(Config *cfg, Error *err)
{
    if (cfg->model.encoder == CONFIG_ENCODER_IMAGE)
        return key_error(cfg, err, "model.share_embeddings", "model.share_embeddings: an image "
                         "model has no source words to share E_y with");
    if (cfg->data.subwords && !cfg->data.subword_joint && !cfg->data.subword_tgt_model[0])
        return key_error(cfg, err, "model.share_embeddings", "model.share_embeddings: needs "
                         "data.subword_joint: true (one SentencePiece model for both sides: "
                         "separate ones would give the same piece two meanings)");
    /* the limits of the one vocabulary, named where the config sets them */
    const struct {
        const char *src, *tgt;
        long src_value, tgt_value;
    } limits[] = {{"data.src_vocab_size", "data.tgt_vocab_size", cfg->data.src_vocab_size,
                   cfg->data.tgt_vocab_size},
                  {"data.src_min_freq", "data.tgt_min_freq", cfg->data.src_min_freq,
                   cfg->data.tgt_min_freq}};
    for (size_t k = 0; k < sizeof limits / sizeof *limits; k++)
        if (limits[k].src_value != limits[k].tgt_value)
            return key_error(cfg, err,
                             cfg->origin.line[config_find_key(limits[k].src)] ? limits[k].src
                                                                             : limits[k].tgt,
                             "%s (%ld) and %s (%ld) must agree with model.share_embeddings (one "
                             "vocabulary of both sides)", limits[k].src, limits[k].src_value,
                             limits[k].tgt, limits[k].tgt_value);
    return 0;
}

/* data.subwords: sentencepiece replaces the tokenizer, whose settings then have no say
 * (SentencePiece normalises the text itself). */
static int check_subwords(Config *cfg, Error *err)
{
    const int asked_level = cfg->origin.line[config_find_key("data.level")] != 0;
    if (asked_level && cfg->data.level != LEVEL_WORD)
        return key_error(cfg, err, "data.level", "data.level: %s does not go with data.subwords: "
                         "sentencepiece (its pieces are the tokens)",
                         token_level_names[cfg->data.level]);
    if (cfg->data.train_tsv[0])
        return key_error(cfg, err, "data.train_tsv", "data.subwords: sentencepiece learns its "
                         "models from data.train_src and data.train_tgt, not yet from a TSV file");
    const int image = cfg->model.encoder == CONFIG_ENCODER_IMAGE; /* no source text */
    if (!cfg->data.subword_src_model[0] != !cfg->data.subword_tgt_model[0] &&
        !(image && cfg->data.subword_tgt_model[0])) {
        const char *missing = cfg->data.subword_src_model[0] ? "data.subword_tgt_model"
                                                             : "data.subword_src_model";
        const char *given = cfg->data.subword_src_model[0] ? "data.subword_src_model"
                                                           : "data.subword_tgt_model";
        return key_error(cfg, err, given, "%s needs %s too (the same file twice for a joint "
                         "model)", given, missing);
    }
    if (cfg->data.subword_alpha > 0 && image)
        return key_error(cfg, err, "data.subword_alpha", "data.subword_alpha: the captions of an "
                         "image model are split by their best split (sampling not yet)");
    if (cfg->data.lowercase)
        return key_error(cfg, err, "data.lowercase", "data.lowercase does not go with "
                         "data.subwords: sentencepiece (it normalises the text itself; the "
                         "translations keep their case)");
    return 0;
}

int config_validate(Config *cfg, Error *err)
{
    if (!cfg->name[0])
        return key_error(cfg, err, "name", "name: must not be empty");
    /* the default run directory is runs/<name>: a name that is a path would put it
     * anywhere (run_dir is the key for a path) */
    if (strchr(cfg->name, '/') || !strcmp(cfg->name, ".") || !strcmp(cfg->name, ".."))
        return key_error(cfg, err, "name", "name: expected a name, not a path (no `/`, not `.` "
                         "or `..`; run_dir sets where the run goes), got \"%s\"", cfg->name);
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
                        cfg->origin.line[config_find_key("training.scheduling")] != 0;
    if (!has_valid && (T->early_stopping > 0 || plateau_asked)) {
        const char *key = T->early_stopping > 0 ? "training.early_stopping" : "training.scheduling";
        return key_error(cfg, err, key, "%s needs a validation set (data.valid_src and "
                         "data.valid_tgt, or data.valid_tsv)",
                         T->early_stopping > 0 ? key : "training.scheduling: plateau");
    }
    /* Idling, the default plateau does what none says. Say none: the effective config
     * (in every checkpoint) names every key, so a plateau there would count as asked
     * for, and the checkpoint would be refused when loaded. */
    if (!has_valid && T->scheduling == SCHEDULING_PLATEAU)
        T->scheduling = SCHEDULING_NONE;
    if (T->scheduling == SCHEDULING_PLATEAU && T->learning_rate_min > T->learning_rate) {
        char min[32], lr[32];
        return key_error(cfg, err, "training.learning_rate_min",
                         "training.learning_rate_min (%s) is above training.learning_rate (%s)",
                         number_shortest(min, sizeof min, T->learning_rate_min),
                         number_shortest(lr, sizeof lr, T->learning_rate));
    }
    if (T->scheduling == SCHEDULING_INVERSE_SQRT && config_warmup_steps(cfg) < 1)
        return key_error(cfg, err, "training.warmup_steps", "training.scheduling: inverse_sqrt "
                         "needs training.warmup_steps >= 1 (the rate falls as sqrt(W / k) after "
                         "the W warm-up updates)");
    if (D->subwords && check_subwords(cfg, err) < 0)
        return -1;
    if (cfg->model.encoder == CONFIG_ENCODER_IMAGE && check_image_model(cfg, err) < 0)
        return -1;
    if (cfg->model.decoder_cell == DECODER_CELL_NONE && check_transformer_decoder(cfg, err) < 0)
        return -1;
    if (cfg->model.share_embeddings && check_shared_embeddings(cfg, err) < 0)
        return -1;
    /* the dot score, s_{i-1} . h_j, needs p = d_h = 2n; heads split vectors evenly
     * (model/MODEL.md) */
    const Dims dims = config_model_dims(cfg, 1, 1);
    const AttnDims attn = model_attn_dims(&dims);
    const int problems = model_is_transformer(&dims) ? 0 : attn_size_problems(&attn);
    /* d_h, the annotations' width, in the keys that set it */
    const char *d_h_keys = dims.encoder == ENCODER_ATTN    ? "model.embedding_size"
                           : dims.encoder == ENCODER_IMAGE ? "the last of model.conv_channels"
                                                           : "2 x model.encoder_size";
    if (problems & ATTN_DOT_WIDTHS)
        return key_error(cfg, err, "model.attention",
                         "model.attention: %s needs model.decoder_size "
                         "= %s (s_{i-1} . h_j), got %ld and %d", score_names[cfg->model.attention],
                         d_h_keys, cfg->model.decoder_size,
                         dims.encoder == ENCODER_BIRNN ? dims.enc_hidden
                                                       : model_annotation_width(&dims));
    if (problems) {
        char sizes[256] = "";
        int n = 0;
        const struct {
            int flag;
            const char *what;
            long size;
        } split[] = {{ATTN_SPLIT_VALUES, d_h_keys, attn.value_width},
                     {ATTN_SPLIT_ATTN, "model.attention_size", attn.attn},
                     {ATTN_SPLIT_QUERY, "model.decoder_size", attn.query_width}};
        for (size_t k = 0; k < sizeof split / sizeof *split; k++)
            if (problems & split[k].flag)
                snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s%s = %ld",
                         n++ ? " and " : "", split[k].what, split[k].size);
        return key_error(cfg, err, "model.attention_heads", "model.attention_heads: %d heads "
                         "split each vector they read in %d equal slices, and %s %s not "
                         "divisible by %d", attn.heads, attn.heads, sizes, n > 1 ? "are" : "is",
                         attn.heads);
    }
    if (dims.encoder == ENCODER_ATTN) {
        if (dims.sa_layers == 0)
            return key_error(cfg, err, "model.encoder_cell", "model.encoder_cell: none is made of "
                             "self-attention layers, and model.self_attention_layers is 0: set at "
                             "least 1 (with none, each word would stay alone with its position)");
        if (dims.emb % 2 != 0)
            return key_error(cfg, err, "model.embedding_size", "model.embedding_size: %d, but "
                             "model.encoder_cell none adds sine and cosine positions in pairs: it "
                             "must be even", dims.emb);
    }
    if (dims.sa_layers > 0 && model_annotation_width(&dims) % dims.sa_heads != 0)
        return key_error(cfg, err, "model.self_attention_heads", "model.self_attention_heads: %d "
                         "heads split the annotations in %d equal slices, and their width d_h = "
                         "%s = %d is not divisible by %d", dims.sa_heads, dims.sa_heads, d_h_keys,
                         model_annotation_width(&dims), dims.sa_heads);
    if (dims.tie_output && dims.readout != dims.emb)
        return key_error(cfg, err, "model.tie_output", "model.tie_output: the output layer's W_o "
                         "(V_y x readout_size) is E_y (V_y x embedding_size), so "
                         "model.readout_size = model.embedding_size is needed, got %d and %d",
                         dims.readout, dims.emb);
#undef D
#undef T
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
    put(&buf, &len, &cap,
        "# The effective config of this run: the file, its --set overrides and the\n"
                          "# defaults. `s2s train` on this file trains the same way.\n");
    char section[64] = "";
    for (int k = 0; k < config_n_keys(); k++) {
        const KeySpec *ks = &config_keys[k];
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
        put(&buf, &len, &cap, config_key_name(ks->path));
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
    const KeySpec *ks = &config_keys[k];
    char range[128] = "", def[128];
    if (ks->type == T_INT || ks->type == T_REAL || ks->type == T_INTLIST)
        config_range_text(ks, range, sizeof range);
    else if (ks->type == T_ENUM)
        config_choice_list(ks->choices, range, sizeof range);
    snprintf(def, sizeof def, "%s", ks->def[0] ? ks->def : "\"\"");
    size_t cap = strlen(ks->path) + strlen(range) + strlen(def) + strlen(ks->doc) + 96;
    char *row = xmalloc(cap);
    snprintf(row, cap, "| `%s` | %s | `%s` | %s | %s%s |", ks->path, config_type_name(ks), def,
             range,
             ks->doc, ks->flags & KEY_FREE_ON_RESUME ? " (may change on resume)" : "");
    return row;
}

long config_warmup_steps(const Config *cfg)
{
    if (cfg->training.warmup_steps >= 0)
        return cfg->training.warmup_steps;
    /* post-LN layers at Adam's usual rates start learning late, later on some CPUs than
     * others (issue 25: the demo with 2 layers at 66% exact after 120 s where it reaches
     * 98%); a linear warm-up is the standard cure (Xiong et al. 2020) */
    const Dims d = config_model_dims(cfg, 1, 1);
    return d.sa_layers > 0 || model_is_transformer(&d) ? CONFIG_SELF_ATTENTION_WARMUP : 0;
}

void config_keep_older_behaviour(Config *cfg)
{
    /* keys added after checkpoints were first written, with the value that does what an
     * s2s without the key did */
    static const char *const older[][2] = {{"training.warmup_steps", "0"},
                                           {"training.shards", "1"}};
    for (size_t k = 0; k < sizeof older / sizeof *older; k++) {
        const int key = config_find_key(older[k][0]);
        Error ignored;
        if (cfg->origin.line[key] == 0) /* not in the stored config */
            config_parse_value(cfg, &config_keys[key], older[k][1], 0, &ignored);
    }
}

void config_key_resolved_value(const Config *cfg, int k, char *buf, size_t cap)
{
    if (!strcmp(config_key_path(k), "training.warmup_steps"))
        snprintf(buf, cap, "%ld", config_warmup_steps(cfg));
    else
        config_key_value(cfg, k, buf, cap);
}

int config_decodes_argmax(const Config *cfg, int mode)
{
    if (mode < 0)
        mode = cfg->translate.attention_mode;
    if (cfg->model.attention == SCORE_NONE) /* no weights to choose from */
        return 0;
    if (cfg->model.decoder_cell == DECODER_CELL_NONE) /* its attention is always soft */
        return 0;
    if (mode == DECODE_AUTO)
        return cfg->model.attention_mode == ATTENTION_HARD;
    return mode == DECODE_ARGMAX;
}

Dims config_model_dims(const Config *cfg, int src_vocab, int tgt_vocab)
{
    Dims d = {.src_vocab = src_vocab, .tgt_vocab = tgt_vocab,
              .emb = (int)cfg->model.embedding_size, .enc_hidden = (int)cfg->model.encoder_size,
              .dec_hidden = (int)cfg->model.decoder_size, .attn = (int)cfg->model.attention_size,
              .readout = (int)cfg->model.readout_size, .score = cfg->model.attention,
              .heads = (int)cfg->model.attention_heads,
              .encoder = cfg->model.encoder_cell == ENCODER_CELL_NONE ? ENCODER_ATTN : ENCODER_BIRNN,
              .enc_cell = cfg->model.encoder_cell == ENCODER_CELL_NONE ? CELL_GRU
                                                                       : (CellKind)cfg->model.encoder_cell,
              .dec_cell = cfg->model.decoder_cell == DECODER_CELL_NONE ? CELL_GRU
                                                                       : (CellKind)cfg->model.decoder_cell,
              .enc_layers = (int)cfg->model.encoder_layers,
              .sa_layers = (int)cfg->model.self_attention_layers,
              .sa_heads = (int)cfg->model.self_attention_heads,
              .sa_ffn = (int)cfg->model.self_attention_ffn,
              .hard = cfg->model.attention_mode == ATTENTION_HARD,
              .context_gate = cfg->model.context_gate,
              .tie_output = cfg->model.tie_output,
              .share_embeddings = cfg->model.share_embeddings};
    if (cfg->model.encoder == CONFIG_ENCODER_IMAGE) {
        d.encoder = ENCODER_IMAGE;
        d.share_embeddings = 0; /* no source words (config_validate refuses the key) */
        d.enc_cell = CELL_GRU; /* none: the keys of the recurrent encoder mean nothing here */
        d.image_size = (int)cfg->data.image_size;
        d.conv_layers = cfg->model.conv_channels.n < CONV_MAX_LAYERS ? cfg->model.conv_channels.n
                                                                     : CONV_MAX_LAYERS;
        for (int l = 0; l < d.conv_layers; l++)
            d.conv_channels[l] = (int)cfg->model.conv_channels.v[l];
        d.grid_positions = !cfg->model.grid_positions      ? GRID_POSITIONS_NONE
                           : cfg->model.grid_position_sines ? GRID_POSITIONS_SINES
                                                            : GRID_POSITIONS_LEARNED;
    }
    if (cfg->model.decoder_cell == DECODER_CELL_NONE) {
        /* its widths: embedding_size through every layer, the output layer reading the
         * last one's; its attention is its own (no score, no gate, soft) */
        d.decoder = DECODER_TRANSFORMER;
        d.dec_layers = (int)cfg->model.decoder_layers;
        d.dec_ffn = cfg->model.self_attention_ffn ? (int)cfg->model.self_attention_ffn : 4 * d.emb;
        d.readout = d.emb;
        d.score = SCORE_DOT; /* unused: model_attn_dims speaks for the cross-attention */
        d.hard = 0;
        d.context_gate = 0;
    }
    /* what the configured model has no use for (config_usage.c) takes no part in it */
    if (d.score == SCORE_NONE) {
        d.heads = 1;
        d.hard = 0;
        d.context_gate = 0;
        if (d.encoder == ENCODER_BIRNN) /* it reads the final states, not the annotations */
            d.sa_layers = 0;
    }
    if (d.encoder != ENCODER_BIRNN)
        d.enc_layers = 1;
    if (d.sa_ffn == 0) /* torch's and the Transformer's choice: four times the width */
        d.sa_ffn = 4 * model_annotation_width(&d);
    return d;
}
