/* config.h: a run's configuration, which every command reads (training from its YAML,
 * the others from a checkpoint's copy): YAML (libyaml) -> Config of plain values, with
 * defaults, --set overrides, validation, and writing the effective config back.
 *
 * Every key is described once, in the schema of config_schema.c (type, default, range,
 * doc), which drives parsing, validation, the written config and configs/README.md's table.
 * Errors are one line, FILE:LINE:COL: ... (1-based), and nothing is written to disk
 * before everything is valid. */
#ifndef S2S_CONFIG_H
#define S2S_CONFIG_H

#include <stddef.h>

#include "base/error.h"
#include "model/model.h"
#include "text/tokenize.h"

#define CONFIG_STR_MAX 1024
#define CONFIG_MAX_KEYS 128
#define CONFIG_MAX_LIST 32
/* model.encoder_cell: none and model.decoder_cell: none, after the cells */
#define ENCODER_CELL_NONE N_CELLS
#define DECODER_CELL_NONE N_CELLS

/* A list of integers, e.g. alignments.lines: [3, 17, 42]. */
/* The most shards training.shards allows: beyond the cores of one machine, each shard
 * only costs its gradient and workspace. */
enum { CONFIG_MAX_SHARDS = 64 };

typedef struct {
    long v[CONFIG_MAX_LIST];
    int n;
} ConfigIntList;

/* Choices of the training section, in the order of config_schema.c's name lists. The
 * model's choices are the model's own enums, named by its lists (score_names,
 * cell_names, token_level_names). */
typedef enum { OPTIMIZER_ADAM, OPTIMIZER_SGD, OPTIMIZER_ADADELTA } ConfigOptimizer;
typedef enum { SCHEDULING_NONE, SCHEDULING_PLATEAU, SCHEDULING_INVERSE_SQRT } ConfigScheduling;
typedef enum { METRIC_BLEU, METRIC_LOSS, METRIC_EXACT } ConfigMetric;
typedef enum { SVG_LAST, SVG_ALL, SVG_NONE } ConfigSvg;
typedef enum { ATTENTION_SOFT, ATTENTION_HARD } ConfigAttentionMode;
typedef enum { CONFIG_ENCODER_TEXT, CONFIG_ENCODER_IMAGE } ConfigEncoder;
typedef enum { HARD_REWARD_SENTENCE, HARD_REWARD_TOKEN } ConfigHardReward;
/* translate.attention_mode: auto is argmax for a hard model and soft for a soft one */
typedef enum { DECODE_AUTO, DECODE_SOFT, DECODE_ARGMAX } ConfigDecodeMode;

typedef struct {
    char name[CONFIG_STR_MAX];
    long seed;
    char run_dir[CONFIG_STR_MAX]; /* after validation never empty: runs/<name> by default */
    struct {
        char train_src[CONFIG_STR_MAX], train_tgt[CONFIG_STR_MAX], train_tsv[CONFIG_STR_MAX];
        char valid_src[CONFIG_STR_MAX], valid_tgt[CONFIG_STR_MAX], valid_tsv[CONFIG_STR_MAX];
        char test_src[CONFIG_STR_MAX], test_tgt[CONFIG_STR_MAX], test_tsv[CONFIG_STR_MAX];
        char valid_align[CONFIG_STR_MAX], test_align[CONFIG_STR_MAX];
        /* image corpora: each caption word's box (.ground files), the pictures' size */
        char train_ground[CONFIG_STR_MAX], valid_ground[CONFIG_STR_MAX],
        test_ground[CONFIG_STR_MAX];
        long image_size;
        int image_resize;
        int tsv_reverse;
        TokenLevel level;
        int lowercase;
        int subwords;           /* 1: SentencePiece's pieces (text/subwords.h) */
        long subword_vocab_size;
        int subword_type;       /* a SubwordType */
        int subword_joint;
        double subword_alpha;   /* > 0: a sampled split every epoch (subword regularisation) */
        /* given SentencePiece .model files (both, or none: learned) */
        char subword_src_model[CONFIG_STR_MAX], subword_tgt_model[CONFIG_STR_MAX];
        long max_length;
        long max_line_bytes;
        long src_vocab_size, tgt_vocab_size;
        long src_min_freq, tgt_min_freq;
    } data;
    struct {
        int encoder;        /* ConfigEncoder */
        ConfigIntList conv_channels;
        int grid_positions, grid_position_sines, context_gate;
        int tie_output;     /* W_o is E_y */
        int share_embeddings; /* E_x is E_y: one vocabulary for both sides */
        long embedding_size, encoder_size, decoder_size, attention_size, readout_size;
        ScoreKind attention;
        long attention_heads;
        int encoder_cell; /* a CellKind, or ENCODER_CELL_NONE: the attention-only encoder */
        int decoder_cell; /* a CellKind, or DECODER_CELL_NONE: the Transformer decoder */
        long encoder_layers, decoder_layers;
        long self_attention_layers, self_attention_heads, self_attention_ffn;
        double self_attention_dropout;
        double embedding_dropout, readout_dropout;
        double init_range;
        int attention_mode; /* ConfigAttentionMode */
    } model;
    struct {
        int optimizer;      /* ConfigOptimizer */
        double learning_rate;
        long warmup_steps;  /* linear warm-up of the learning rate (-1: config_warmup_steps) */
        double adam_beta1, adam_beta2, adam_eps;
        double adadelta_rho, adadelta_eps;
        double clip_grad_norm;
        double label_smoothing;
        long batch_size;
        long batch_tokens;
        long bucket_batches;
        int shuffle;
        long max_steps, epochs;
        double max_time;
        int scheduling;     /* ConfigScheduling */
        long patience;
        double decrease_factor, learning_rate_min;
        long early_stopping;
        long average_last;  /* validate the mean of the weights at the last this many */
        int early_stopping_metric; /* ConfigMetric */
        long valid_every, log_every;
        long max_bad_steps;
        long threads;
        long shards; /* 0 until resolved: as many as threads (trainer_setup.c), at most
                      * CONFIG_MAX_SHARDS */
        /* hard attention (model/MODEL.md) */
        double hard_reinforce_weight, hard_entropy_weight, hard_expected_prob;
        double hard_baseline_decay;
        long hard_warmup_steps;
        int hard_reward;    /* ConfigHardReward */
        double doubly_stochastic; /* lambda of Xu et al.'s term (model/MODEL.md) */
        double attention_supervision; /* lambda of Liu et al.'s term (model/MODEL.md) */
    } training;
    struct {
        long every;          /* dump every this many steps (and at step 0); 0: never */
        long probes;         /* the first this many validation pairs, unless lines */
        ConfigIntList lines; /* 1-based lines of the validation files */
        long max_dumps;      /* then the interval doubles (dump_scheduled in align_dumps.c) */
        int svg;             /* ConfigSvg */
    } alignments;
    struct {
        long beam_size;
        double alpha;
        int detokenize;
        long max_source_length;
        double max_output_ratio;
        long max_output_extra;
        int attention_mode; /* ConfigDecodeMode */
    } translate;
    /* Where each key got its value, for messages: line 0 is the default, line -1 a
     * --set override. */
    struct {
        char file[CONFIG_STR_MAX];
        int line[CONFIG_MAX_KEYS], col[CONFIG_MAX_KEYS];
    } origin;
} Config;

/* The model's sizes and architecture as the config gives them, with the vocabularies'
 * sizes: the one place a config becomes model dimensions. */
Dims config_model_dims(const Config *cfg, int src_vocab, int tgt_vocab);

/* The learning rate's warm-up in updates: training.warmup_steps, its -1 resolved by the
 * model (CONFIG_SELF_ATTENTION_WARMUP with self-attention layers, else 0). */
#define CONFIG_SELF_ATTENTION_WARMUP 200
long config_warmup_steps(const Config *cfg);
/* A checkpoint's stored config written by an older s2s lacks the keys added since: each
 * such key takes the value that does what that s2s did (training.warmup_steps 0, where
 * today's default would warm a self-attention model up), so a resume goes on as the run
 * began. Call after loading the stored config. */
void config_keep_older_behaviour(Config *cfg);
/* Key k's value as config_key_value writes it, a -1 that the model resolves (the
 * warm-up) resolved: what a resume compares. */
void config_key_resolved_value(const Config *cfg, int k, char *buf, size_t cap);

/* translate.attention_mode's names in ConfigDecodeMode order, NULL-terminated. */
extern const char *const decode_mode_names[];
/* Whether decoding reads argmax contexts: mode (a ConfigDecodeMode, or -1 for
 * translate.attention_mode), its auto resolved by the model (argmax for a hard model,
 * soft for a soft one). */
int config_decodes_argmax(const Config *cfg, int mode);

/* Fills cfg with every default. */
void config_defaults(Config *cfg);

/* Reads path (YAML) over the defaults in cfg. Returns 0, or -1 with err set. */
int config_load(Config *cfg, const char *path, Error *err);
/* The same from memory; name is the file name used in messages. */
int config_load_buffer(Config *cfg, const char *text, size_t len, const char *name, Error *err);

/* Applies one --set override "section.key=value" (value as in YAML). */
int config_set(Config *cfg, const char *assignment, Error *err);

/* Checks cross-field rules and fills derived values (run_dir). Errors point at the
 * line of the key concerned when it came from the file named at load. */
int config_validate(Config *cfg, Error *err);

/* Writes the effective config as YAML that config_load reads back to the same
 * values. Returns a malloc'd string. */
char *config_to_yaml(const Config *cfg);

/* Why the model and training that cfg configures have no use for key k (say, attention_size
 * with the dot score, the hard_* keys of a soft model), or NULL if they use it. Such a key
 * is no error: it is named (config_unused_keys), and resuming does not compare it. */
const char *config_key_unused(const Config *cfg, int k);
/* The unused keys that cfg sets (in its file or by --set) to other than their defaults,
 * up to cap of them into keys; returns how many. */
int config_unused_keys(const Config *cfg, int *keys, int cap);
/* "FILE:LINE:COL: model.attention_size: 32 is not used: <why>" for such a key k. */
void config_unused_note(const Config *cfg, int k, char *out, size_t cap);

/* Number of schema keys, and key k's dotted path. */
int config_n_keys(void);
const char *config_key_path(int k);
/* The row of configs/README.md's table for key k:
 * "| `path` | type | default | range | description |". Returns a malloc'd string. */
char *config_key_doc_row(int k);
/* 1 if key k may differ between a checkpoint and the config that resumes it (logging,
 * stopping, paths of the run); 0 if it must match. */
int config_key_free_on_resume(int k);
/* Key k's type as messages name it: "integer", "number", "boolean", "string", "choice"
 * or "list of integers". */
const char *config_key_type(int k);
/* The range allowed for key k (for a list: for each entry): min to max, above min but not
 * at it when *min_exclusive, max HUGE_VAL when there is no upper limit. Returns 0, or -1
 * for a key that is not a number or a list of numbers. */
int config_key_range(int k, double *min, double *max, int *min_exclusive);
/* The value of key k as YAML text into buf. */
void config_key_value(const Config *cfg, int k, char *buf, size_t cap);

#endif
