/* test_config.c: the config loader: every kind of error with its exact message and
 * position, defaults, --set, the round trip through the written config, and the
 * sync between the schema and configs/README.md. */
#include <check.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/suites.h"
#include "text/number.h"
#include "run/config.h"
#include "run/config_schema.h"

/* A config with the required training data, followed by extra lines. */
#define BASE "data:\n  train_src: a.src\n  train_tgt: a.tgt\n  valid_src: v.src\n  valid_tgt: v.tgt\n"

/* Loads text as c.yaml and validates it; returns the error message ("" if none). */
static const char *load(const char *text)
{
    static Error err;
    Config cfg;
    config_defaults(&cfg);
    err.msg[0] = '\0';
    if (config_load_buffer(&cfg, text, strlen(text), "c.yaml", &err) == 0)
        config_validate(&cfg, &err);
    return err.msg;
}

START_TEST(config_accepts_a_minimal_file_and_fills_defaults)
{
    Config cfg;
    Error err;
    config_defaults(&cfg);
    const char *text = BASE "model:\n  attention_size: 32\n";
    ck_assert_int_eq(config_load_buffer(&cfg, text, strlen(text), "c.yaml", &err), 0);
    ck_assert_int_eq(config_validate(&cfg, &err), 0);
    ck_assert_int_eq(cfg.model.attention_size, 32);
    ck_assert_int_eq(cfg.model.embedding_size, 64);
    ck_assert_int_eq(cfg.training.optimizer, OPTIMIZER_ADAM);
    ck_assert_double_eq(cfg.training.learning_rate, 0.001);
    ck_assert_str_eq(cfg.run_dir, "runs/s2s");
    ck_assert_str_eq(cfg.data.train_src, "a.src");
}
END_TEST

START_TEST(config_rejects_malformed_yaml_with_position)
{
    ck_assert_str_eq(load(BASE "model: {readout_size: 8\n"),
                     "c.yaml:7:1: did not find expected ',' or '}' (while parsing a flow mapping at line 6)");
    ck_assert_str_eq(load("data:\n\ttrain_src: x\n"),
                     "c.yaml:2:1: found character that cannot start any token (while scanning for the next token at line 2)");
    ck_assert_str_eq(load("data:\n  train_src: x\n bad: 1\n"),
                     "c.yaml:3:2: did not find expected key (while parsing a block mapping at line 1)");
    ck_assert_str_eq(load("model:\n  readout_size: 3\xff\n"),
                     "c.yaml:2:18: invalid leading UTF-8 octet (byte 0xff)");
}
END_TEST

START_TEST(config_rejects_empty_and_non_mapping_documents)
{
    const char *empty = "the config is empty (expected a mapping of sections such as model: and training:)";
    char expected[256];
    snprintf(expected, sizeof expected, "c.yaml:1:1: %s", empty);
    ck_assert_str_eq(load(""), expected);
    ck_assert_str_eq(load("# only a comment\n"), expected);
    ck_assert_str_eq(load("- a\n- b\n"),
                     "c.yaml:1:1: expected a mapping of sections at the top level, got a list");
    ck_assert_str_eq(load("hello\n"),
                     "c.yaml:1:1: expected a mapping of sections at the top level, got a scalar");
    ck_assert_str_eq(load(BASE "---\nseed: 2\n"),
                     "c.yaml:6:1: expected one YAML document, found a second one");
}
END_TEST

START_TEST(config_rejects_unknown_keys_with_a_suggestion)
{
    ck_assert_str_eq(load(BASE "model:\n  atention_size: 8\n"),
                     "c.yaml:7:3: unknown key `model.atention_size` (did you mean `model.attention_size`?)");
    ck_assert_str_eq(load(BASE "training:\n  embedding_size: 8\n"),
                     "c.yaml:7:3: unknown key `training.embedding_size` (did you mean `model.embedding_size`?)");
    ck_assert_str_eq(load(BASE "modle:\n  readout_size: 8\n"),
                     "c.yaml:6:1: unknown section `modle` (did you mean `model`?)");
    ck_assert_str_eq(load(BASE "sed: 3\n"), "c.yaml:6:1: unknown key `sed` (did you mean `seed`?)");
    ck_assert_str_eq(load(BASE "model:\n  zzzzzzzz: 1\n"),
                     "c.yaml:7:3: unknown key `model.zzzzzzzz`");
}
END_TEST

START_TEST(config_rejects_duplicate_keys_and_sections)
{
    ck_assert_str_eq(load(BASE "model:\n  readout_size: 8\n  readout_size: 9\n"),
                     "c.yaml:8:3: duplicate key `model.readout_size` (first set at line 7)");
    ck_assert_str_eq(load(BASE "model:\n  readout_size: 8\nmodel:\n  embedding_size: 9\n"),
                     "c.yaml:8:1: duplicate section `model` (first at line 6)");
}
END_TEST

START_TEST(config_rejects_wrong_types)
{
    ck_assert_str_eq(load(BASE "model:\n  attention_size: abc\n"),
                     "c.yaml:7:19: model.attention_size: expected an integer (1 to 8192), got \"abc\"");
    ck_assert_str_eq(load(BASE "model:\n  attention_size: 1.5\n"),
                     "c.yaml:7:19: model.attention_size: expected an integer (1 to 8192), got \"1.5\"");
    ck_assert_str_eq(load(BASE "model:\n  attention_size: [1]\n"),
                     "c.yaml:7:19: model.attention_size: expected an integer, got a list");
    ck_assert_str_eq(load(BASE "model:\n  attention_size: {a: 1}\n"),
                     "c.yaml:7:19: model.attention_size: expected an integer, got a mapping");
    ck_assert_str_eq(load(BASE "model:\n  attention_size: \"32\"\n"),
                     "c.yaml:7:19: model.attention_size: expected an integer, got the string \"32\"");
    ck_assert_str_eq(load(BASE "model:\n  attention_size:\n"),
                     "c.yaml:7:18: model.attention_size: expected an integer (1 to 8192), got \"\"");
    ck_assert_str_eq(load(BASE "model:\n  attention_size: 99999999999999999999\n"),
                     "c.yaml:7:19: model.attention_size: expected an integer (1 to 8192), got \"99999999999999999999\"");
    ck_assert_str_eq(load(BASE "training:\n  learning_rate: 0.1x\n"),
                     "c.yaml:7:18: training.learning_rate: expected a finite number (> 0 and <= 100), got \"0.1x\"");
    ck_assert_str_eq(load(BASE "training:\n  learning_rate: .nan\n"),
                     "c.yaml:7:18: training.learning_rate: expected a finite number (> 0 and <= 100), got \".nan\"");
    ck_assert_str_eq(load(BASE "training:\n  shuffle: yes\n"),
                     "c.yaml:7:12: training.shuffle: expected true or false, got \"yes\"");
    ck_assert_str_eq(load(BASE "training:\n  optimizer: adamw\n"),
                     "c.yaml:7:14: training.optimizer: expected one of {adam,sgd,adadelta}, got \"adamw\"");
    ck_assert_str_eq(load(BASE "model: 3\n"),
                     "c.yaml:6:8: section `model`: expected a mapping of keys, got a scalar");
}
END_TEST

START_TEST(config_rejects_out_of_range_values_at_the_boundaries)
{
    ck_assert_str_eq(load(BASE "model:\n  attention_size: 0\n"),
                     "c.yaml:7:19: model.attention_size: 0 is out of range (expected 1 to 8192)");
    ck_assert_str_eq(load(BASE "model:\n  attention_size: 1\n"), "");
    ck_assert_str_eq(load(BASE "model:\n  attention_size: 8192\n"), "");
    ck_assert_str_eq(load(BASE "model:\n  attention_size: 8193\n"),
                     "c.yaml:7:19: model.attention_size: 8193 is out of range (expected 1 to 8192)");
    ck_assert_str_eq(load(BASE "training:\n  learning_rate: 0\n"),
                     "c.yaml:7:18: training.learning_rate: 0 is out of range (expected > 0 and <= 100)");
    ck_assert_str_eq(load(BASE "training:\n  learning_rate: -1e-3\n"),
                     "c.yaml:7:18: training.learning_rate: -1e-3 is out of range (expected > 0 and <= 100)");
    ck_assert_str_eq(load(BASE "training:\n  adam_beta1: 1\n"), "");
    ck_assert_str_eq(load(BASE "training:\n  adam_beta1: 1.0001\n"),
                     "c.yaml:7:15: training.adam_beta1: 1.0001 is out of range (expected 0 to 1)");
}
END_TEST

START_TEST(config_rejects_impossible_combinations)
{
    ck_assert_str_eq(load("model:\n  readout_size: 8\n"),
                     "c.yaml: no training data: set data.train_src and data.train_tgt, or data.train_tsv");
    ck_assert_str_eq(load("data:\n  train_src: a\n"),
                     "c.yaml:2:14: data.train_src: needs data.train_tgt too");
    ck_assert_str_eq(load(BASE "  train_tsv: x.tsv\n"),
                     "c.yaml:6:14: data.train_tsv: give either train_src and train_tgt or train_tsv, not both");
    ck_assert_str_eq(load(BASE "training:\n  epochs: 0\n"),
                     "c.yaml:7:11: training.epochs: training would never stop: set training.max_steps, "
                     "training.epochs or training.max_time");
    ck_assert_str_eq(load("data:\n  train_tsv: t.tsv\ntraining:\n  early_stopping: 3\n"),
                     "c.yaml:4:19: training.early_stopping needs a validation set (data.valid_src and "
                     "data.valid_tgt, or data.valid_tsv)");
    /* fixed grid positions are a kind of grid positions: without them, a contradiction */
    ck_assert_str_eq(load(BASE "model:\n  encoder: image\n  grid_position_sines: true\n"), "");
    ck_assert_str_eq(load(BASE "model:\n  encoder: image\n  grid_positions: false\n"
                               "  grid_position_sines: true\n"),
                     "c.yaml:9:24: model.grid_position_sines: needs model.grid_positions: true "
                     "(the sines are the positions)");
}
END_TEST

/* model.share_embeddings: one table, so one vocabulary of both sides: an image model has
 * no source words, separate SentencePiece models would give a piece two meanings, and the
 * two sides' limits must be one; each named where the config sets it. */
START_TEST(config_rejects_shared_embeddings_without_one_vocabulary)
{
    ck_assert_str_eq(load(BASE "model:\n  share_embeddings: true\n"), "");
    ck_assert_str_eq(load(BASE "  subwords: sentencepiece\nmodel:\n  share_embeddings: true\n"),
                     "");
    ck_assert_str_eq(load(BASE "model:\n  encoder: image\n  share_embeddings: true\n"),
                     "c.yaml:8:21: model.share_embeddings: an image model has no source words "
                     "to share E_y with");
    ck_assert_str_eq(load(BASE "  subwords: sentencepiece\n  subword_joint: false\nmodel:\n"
                               "  share_embeddings: true\n"),
                     "c.yaml:9:21: model.share_embeddings: needs data.subword_joint: true (one "
                     "SentencePiece model for both sides: separate ones would give the same "
                     "piece two meanings)");
    ck_assert_str_eq(load(BASE "  src_vocab_size: 100\nmodel:\n  share_embeddings: true\n"),
                     "c.yaml:6:19: data.src_vocab_size (100) and data.tgt_vocab_size (0) must "
                     "agree with model.share_embeddings (one vocabulary of both sides)");
    ck_assert_str_eq(load(BASE "  tgt_min_freq: 2\nmodel:\n  share_embeddings: true\n"),
                     "c.yaml:6:17: data.src_min_freq (1) and data.tgt_min_freq (2) must agree "
                     "with model.share_embeddings (one vocabulary of both sides)");
    ck_assert_str_eq(load(BASE "  src_vocab_size: 100\n  tgt_vocab_size: 100\n  src_min_freq: 2\n"
                               "  tgt_min_freq: 2\nmodel:\n  share_embeddings: true\n"),
                     "");
}
END_TEST

/* data.subwords: sentencepiece replaces the tokenizer: its level and lowercasing are
 * refused beside it, at the key that sets them, and so is a TSV training file (the
 * models are learned from the two files). */
START_TEST(config_rejects_what_subwords_cannot_go_with)
{
    ck_assert_str_eq(load(BASE "  subwords: sentencepiece\n  level: char\n"),
                     "c.yaml:7:10: data.level: char does not go with data.subwords: "
                     "sentencepiece (its pieces are the tokens)");
    ck_assert_str_eq(load(BASE "  subwords: sentencepiece\n  lowercase: true\n"),
                     "c.yaml:7:14: data.lowercase does not go with data.subwords: "
                     "sentencepiece (it normalises the text itself; the translations keep "
                     "their case)");
    ck_assert_str_eq(load("data:\n  train_tsv: t.tsv\n  subwords: sentencepiece\n"),
                     "c.yaml:2:14: data.subwords: sentencepiece learns its models from "
                     "data.train_src and data.train_tgt, not yet from a TSV file");
    ck_assert_str_eq(load(BASE "  subwords: sentencepiece\n  level: word\n"), "");
}
END_TEST

/* Issue 18's sizes and combinations: heads that must split what they read, layers the
 * attention-only encoder cannot do without. */
START_TEST(config_rejects_heads_and_layers_that_do_not_fit)
{
    static const char *const cases[][2] = {
        {"model:\n  encoder_size: 5\n  attention_heads: 4\n",
         "c.yaml:8:20: model.attention_heads: 4 heads split each vector they read in 4 equal "
         "slices, and 2 x model.encoder_size = 10 is not divisible by 4"},
        {"model:\n  self_attention_layers: 1\n  self_attention_heads: 5\n",
         "c.yaml:8:25: model.self_attention_heads: 5 heads split the annotations in 5 equal "
         "slices, and their width d_h = 2 x model.encoder_size = 128 is not divisible by 5"},
        {"model:\n  encoder_cell: none\n",
         "c.yaml:7:17: model.encoder_cell: none is made of self-attention layers, and "
         "model.self_attention_layers is 0: set at least 1 (with none, each word would stay "
         "alone with its position)"},
        {"model:\n  encoder_cell: none\n  self_attention_layers: 1\n  embedding_size: 63\n",
         "c.yaml:9:19: model.embedding_size: 63, but model.encoder_cell none adds sine and "
         "cosine positions in pairs: it must be even"},
        {"model:\n  encoder_cell: none\n  self_attention_layers: 1\n  self_attention_heads: 3\n",
         "c.yaml:9:25: model.self_attention_heads: 3 heads split the annotations in 3 equal "
         "slices, and their width d_h = model.embedding_size = 64 is not divisible by 3"},
        {"model:\n  encoder_cell: none\n  self_attention_layers: 1\n  attention: dot\n",
         "c.yaml:9:14: model.attention: dot needs model.decoder_size = model.embedding_size "
         "(s_{i-1} . h_j), got 128 and 64"},
        /* the Transformer decoder's own conditions (model.decoder_cell none) */
        {"model:\n  decoder_cell: none\n  embedding_size: 62\n  attention_heads: 4\n",
         "c.yaml:9:20: model.attention_heads: 4 heads split the Transformer decoder's width "
         "model.embedding_size = 62 in equal slices, and 62 is not divisible by 4"},
        {"model:\n  decoder_cell: none\n  embedding_size: 63\n",
         "c.yaml:8:19: model.embedding_size: 63, but model.decoder_cell none adds sine and "
         "cosine positions in pairs: it must be even"},
        {"model:\n  decoder_cell: none\n  attention_mode: hard\n",
         "c.yaml:8:19: model.attention_mode: hard samples a recurrent decoder's attention; the "
         "Transformer decoder's (model.decoder_cell none) is soft"},
        {"model:\n  decoder_cell: none\n  context_gate: true\n",
         "c.yaml:8:17: model.context_gate: the gate scales a recurrent decoder's context; the "
         "Transformer decoder (model.decoder_cell none) has none"},
        {"model:\n  decoder_cell: none\ntraining:\n  doubly_stochastic: 0.5\n",
         "c.yaml:9:22: training.doubly_stochastic: not available with the Transformer decoder "
         "(model.decoder_cell none)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char text[512];
        snprintf(text, sizeof text, BASE "%s", cases[k][0]);
        ck_assert_str_eq(load(text), cases[k][1]);
    }
    /* and what fits: the attention-only encoder at the defaults, with one layer; the
     * Transformer decoder at the defaults, with 4 heads, over an odd d_h (2 x 33) */
    ck_assert_str_eq(load(BASE "model:\n  encoder_cell: none\n  self_attention_layers: 1\n"), "");
    ck_assert_str_eq(load(BASE "model:\n  decoder_cell: none\n  attention_heads: 4\n"
                               "  encoder_size: 33\n"), "");
}
END_TEST

/* A name is a name: runs/<name> stays under runs/ (issue 25) */
START_TEST(config_rejects_a_name_that_is_a_path)
{
    static const char *const names[] = {"a/../../outside", "/etc", "..", ".", "a/b"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char text[512], expected[512];
        snprintf(text, sizeof text, "name: \"%s\"\n" BASE, names[k]);
        snprintf(expected, sizeof expected, "c.yaml:1:7: name: expected a name, not a path (no "
                 "`/`, not `.` or `..`; run_dir sets where the run goes), got \"%s\"", names[k]);
        ck_assert_str_eq(load(text), expected);
    }
    ck_assert_str_eq(load("name: a..b\n" BASE), "");
    ck_assert_str_eq(load("name: .hidden\n" BASE), "");
}
END_TEST

/* One rule for what the configured model has no use for (issue 25): accepted, each key set
 * to other than its default named once with why, its place in the model taken by
 * nothing (the dimensions say so); a key at its default, or used, is not named. */
START_TEST(config_accepts_unused_keys_and_names_each)
{
    static const struct {
        const char *text, *notes, *model;
    } cases[] = {
        {"model:\n  attention: none\n  attention_heads: 2\n",
         "c.yaml:8:20: model.attention_heads: 2 is not used: model.attention none has no "
         "attention weights\n", "gru encoder (1 layer), gru decoder, attention none"},
        {"model:\n  self_attention_layers: 1\n  attention: none\n",
         "c.yaml:7:26: model.self_attention_layers: 1 is not used: model.attention none reads no "
         "annotations, only the encoder's final states\n",
         "gru encoder (1 layer), gru decoder, attention none"},
        {"model:\n  encoder_cell: none\n  self_attention_layers: 1\n  encoder_layers: 2\n"
         "  encoder_size: 32\n",
         "c.yaml:10:17: model.encoder_size: 32 is not used: model.encoder_cell none has no "
         "recurrent encoder\nc.yaml:9:19: model.encoder_layers: 2 is not used: "
         "model.encoder_cell none has no recurrent encoder\n",
         "attention-only encoder (positions) and 1 self-attention layer (4 heads, ffn 256), gru "
         "decoder, attention additive"},
        {"model:\n  attention: none\n  attention_mode: hard\ntraining:\n  hard_reward: sentence\n",
         "c.yaml:8:19: model.attention_mode: hard is not used: model.attention none has no "
         "attention weights\nc.yaml:10:16: training.hard_reward: sentence is not used: only hard "
         "attention samples (model.attention_mode: hard)\n",
         "gru encoder (1 layer), gru decoder, attention none"},
        {"model:\n  self_attention_heads: 3\n  self_attention_ffn: 10\n",
         "c.yaml:7:25: model.self_attention_heads: 3 is not used: the model has no self-attention "
         "layers\nc.yaml:8:23: model.self_attention_ffn: 10 is not used: the model has no "
         "self-attention layers\n", "gru encoder (1 layer), gru decoder, attention additive"},
        {"model:\n  attention: dot\n  decoder_size: 128\n  attention_size: 32\n",
         "c.yaml:9:19: model.attention_size: 32 is not used: only the additive and scaled_dot "
         "scores have an attention layer\n", "gru encoder (1 layer), gru decoder, attention dot"},
        {"model:\n  decoder_cell: none\n  decoder_layers: 2\n  decoder_size: 32\n"
         "  readout_size: 64\n  attention: general\n",
         "c.yaml:9:17: model.decoder_size: 32 is not used: the Transformer decoder "
         "(model.decoder_cell none) is embedding_size wide and attends through its own "
         "layers\nc.yaml:10:17: model.readout_size: 64 is not used: the Transformer decoder "
         "(model.decoder_cell none) is embedding_size wide and attends through its own "
         "layers\nc.yaml:11:14: model.attention: general is not used: the Transformer decoder "
         "(model.decoder_cell none) is embedding_size wide and attends through its own "
         "layers\n",
         "gru encoder (1 layer), Transformer decoder (2 layers, 1 head, ffn 256)"},
        {"model:\n  decoder_layers: 3\n",
         "c.yaml:7:19: model.decoder_layers: 3 is not used: a recurrent decoder has one layer "
         "(model.decoder_layers counts the Transformer decoder's)\n",
         "gru encoder (1 layer), gru decoder, attention additive"},
        {"training:\n  optimizer: sgd\n  adam_beta1: 0.5\n  scheduling: none\n"
         "  learning_rate_min: 0.5\n  hard_warmup_steps: 1000\n",
         "c.yaml:8:15: training.adam_beta1: 0.5 is not used: the optimizer is not adam\n"
         "c.yaml:10:22: training.learning_rate_min: 0.5 is not used: training.scheduling is not "
         "plateau\n", "gru encoder (1 layer), gru decoder, attention additive"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char text[512];
        snprintf(text, sizeof text, BASE "%s", cases[c].text);
        Config cfg;
        Error err;
        config_defaults(&cfg);
        ck_assert_int_eq(config_load_buffer(&cfg, text, strlen(text), "c.yaml", &err), 0);
        ck_assert_msg(config_validate(&cfg, &err) == 0, "%s", err.msg);
        int keys[CONFIG_MAX_KEYS];
        int n = config_unused_keys(&cfg, keys, CONFIG_MAX_KEYS);
        char notes[1024] = "";
        for (int k = 0; k < n; k++) {
            char note[256];
            config_unused_note(&cfg, keys[k], note, sizeof note);
            snprintf(notes + strlen(notes), sizeof notes - strlen(notes), "%s\n", note);
        }
        ck_assert_str_eq(notes, cases[c].notes);
        char model[200];
        const Dims d = config_model_dims(&cfg, 10, 10);
        model_describe(&d, model, sizeof model);
        ck_assert_str_eq(model, cases[c].model);
    }
    /* --set places its note on the command line */
    Config cfg;
    Error err;
    config_defaults(&cfg);
    ck_assert_int_eq(config_set(&cfg, "training.adadelta_rho=0.5", &err), 0);
    int k = config_find_key("training.adadelta_rho");
    char note[256];
    config_unused_note(&cfg, k, note, sizeof note);
    ck_assert_str_eq(note, "--set training.adadelta_rho: 0.5 is not used: the optimizer is not "
                           "adadelta");
    /* every key is used by some model: the rule never hides a key for good */
    Config other;
    config_defaults(&other);
    other.training.optimizer = OPTIMIZER_ADADELTA;
    other.model.attention_mode = ATTENTION_HARD;
    other.model.self_attention_layers = 1;
    ck_assert_ptr_null(config_key_unused(&other, config_find_key("training.adadelta_rho")));
    ck_assert_ptr_null(config_key_unused(&other, config_find_key("training.hard_reward")));
    ck_assert_ptr_null(config_key_unused(&other, config_find_key("model.self_attention_heads")));
    ck_assert_ptr_null(config_key_unused(&cfg, config_find_key("model.attention_size")));
    other.model.decoder_cell = DECODER_CELL_NONE;
    ck_assert_ptr_null(config_key_unused(&other, config_find_key("model.decoder_layers")));
    ck_assert_ptr_null(config_key_unused(&other, config_find_key("model.self_attention_dropout")));
}
END_TEST

/* training.warmup_steps -1 is 200 updates for a model with self-attention layers (that
 * it uses: attention none on a recurrent encoder has none), 0 otherwise; a number is
 * itself; a checkpoint's config written before the key had none (older behaviour). */
START_TEST(the_default_warmup_follows_the_self_attention_layers)
{
    static const struct {
        const char *text;
        long warmup;
    } cases[] = {
        {"", 0},
        {"model:\n  self_attention_layers: 2\n", 200},
        {"model:\n  self_attention_layers: 2\ntraining:\n  warmup_steps: 0\n", 0},
        {"model:\n  self_attention_layers: 1\n  attention: none\n", 0},
        {"model:\n  encoder_cell: none\n  self_attention_layers: 1\n", 200},
        {"model:\n  decoder_cell: none\n", 200},
        {"training:\n  warmup_steps: 50\n", 50},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char text[512];
        snprintf(text, sizeof text, BASE "%s", cases[c].text);
        Config cfg;
        Error err;
        config_defaults(&cfg);
        ck_assert_int_eq(config_load_buffer(&cfg, text, strlen(text), "c.yaml", &err), 0);
        ck_assert_msg(config_validate(&cfg, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(config_warmup_steps(&cfg), cases[c].warmup);
        /* as a checkpoint's stored config: a key it does not name did not exist */
        config_keep_older_behaviour(&cfg);
        ck_assert_int_eq(config_warmup_steps(&cfg), strstr(cases[c].text, "warmup_steps")
                                                        ? cases[c].warmup : 0);
    }
}
END_TEST

START_TEST(config_rejects_anchors_and_aliases)
{
    ck_assert_str_eq(load(BASE "model:\n  embedding_size: &m 16\n  readout_size: *m\n"),
                     "c.yaml:7:19: anchors (&m) are not allowed in a config");
}
END_TEST

START_TEST(config_set_overrides_and_reports_errors)
{
    Config cfg;
    Error err;
    config_defaults(&cfg);
    ck_assert_int_eq(config_set(&cfg, "model.attention_size=32", &err), 0);
    ck_assert_int_eq(cfg.model.attention_size, 32);
    ck_assert_int_eq(config_set(&cfg, "name=a=b", &err), 0);
    ck_assert_str_eq(cfg.name, "a=b");
    ck_assert_int_eq(config_set(&cfg, "model.atention_size=3", &err), -1);
    ck_assert_str_eq(err.msg, "--set model.atention_size=3: unknown key `model.atention_size` "
                              "(did you mean `model.attention_size`?)");
    ck_assert_int_eq(config_set(&cfg, "training.batch_size=0", &err), -1);
    ck_assert_str_eq(err.msg, "--set training.batch_size=0: training.batch_size: 0 is out of range "
                              "(expected 1 to 65536)");
    ck_assert_int_eq(config_set(&cfg, "training", &err), -1);
    ck_assert_str_eq(err.msg,
                     "--set training: expected KEY=VALUE, e.g. --set training.batch_size=64");
}
END_TEST

START_TEST(written_config_loads_back_to_the_same_values)
{
    Config a, b;
    Error err;
    config_defaults(&a);
    const char *text = BASE "name: \"quote\\\" and \\\\ back\"\nseed: 7\ntraining:\n"
                       "  learning_rate: 0.0003\n  optimizer: sgd\n  shuffle: false\n";
    ck_assert_int_eq(config_load_buffer(&a, text, strlen(text), "c.yaml", &err), 0);
    ck_assert_int_eq(config_validate(&a, &err), 0);
    char *yaml = config_to_yaml(&a);
    config_defaults(&b);
    ck_assert_msg(config_load_buffer(&b, yaml, strlen(yaml), "w.yaml", &err) == 0, "%s", err.msg);
    ck_assert_int_eq(config_validate(&b, &err), 0);
    for (int k = 0; k < config_n_keys(); k++) {
        char va[CONFIG_STR_MAX + 64], vb[CONFIG_STR_MAX + 64];
        config_key_value(&a, k, va, sizeof va);
        config_key_value(&b, k, vb, sizeof vb);
        ck_assert_str_eq(va, vb);
    }
    ck_assert_str_eq(b.name, "quote\" and \\ back");
    ck_assert_double_eq(b.training.learning_rate, 0.0003);
    /* numbers as a person writes them: the shortest text of the same double */
    ck_assert_ptr_nonnull(strstr(yaml, "\n  learning_rate: 0.0003\n"));
    ck_assert_ptr_nonnull(strstr(yaml, "\n  adam_beta1: 0.9\n"));
    ck_assert_ptr_nonnull(strstr(yaml, "\n  adam_eps: 1e-8\n"));
    ck_assert_ptr_nonnull(strstr(yaml, "\n  init_range: 0.1\n"));
    free(yaml);
}
END_TEST

START_TEST(config_errors_name_the_file_on_disk)
{
    Config cfg;
    Error err;
    config_defaults(&cfg);
    ck_assert_int_eq(config_load(&cfg, "tests/fixtures/bad_hidden.yaml", &err), -1);
    ck_assert_str_eq(err.msg,
                     "tests/fixtures/bad_hidden.yaml:9:17: model.encoder_size: expected an "
                              "integer (1 to 8192), got \"abc\"");
    ck_assert_int_eq(config_load(&cfg, "tests/fixtures/missing.yaml", &err), -1);
    ck_assert_str_eq(err.msg,
                     "cannot open config `tests/fixtures/missing.yaml`: No such file or directory");
}
END_TEST

/* ---- the bad-input rows of the fault matrix (src/README.md, "Reliability"), as tables --- */

/* Parses text[0..len) as c.yaml without validating it; returns the error ("" if none). */
static const char *parse_n(const char *text, size_t len)
{
    static Error err;
    Config cfg;
    config_defaults(&cfg);
    err.msg[0] = '\0';
    config_load_buffer(&cfg, text, len, "c.yaml", &err);
    return err.msg;
}

static const char *parse(const char *text)
{
    return parse_n(text, strlen(text));
}

/* "section:\n  name: value\n", or "name: value\n" for a top-level key, into out; *line
 * and *col get the value's position. */
static void key_yaml(int k, const char *value, char *out, size_t cap, int *line, int *col)
{
    const char *path = config_key_path(k), *dot = strchr(path, '.');
    if (dot) {
        snprintf(out, cap, "%.*s:\n  %s: %s\n", (int)(dot - path), path, dot + 1, value);
        *line = 2;
        *col = 3 + (int)strlen(dot + 1) + 2;
    } else {
        snprintf(out, cap, "%s: %s\n", path, value);
        *line = 1;
        *col = (int)strlen(path) + 3;
    }
}

/* The range as messages write it: "1 to 8192", "> 0 and <= 100", ">= 1", "0 to 1e6": a
 * number's bounds as the config writes numbers, a count's as an integer. */
static void range_text(int k, double min, double max, int min_exclusive, char *out, size_t cap)
{
    char lo[32], hi[32];
    const int is_real = !strcmp(config_key_type(k), "number");
    if (is_real) {
        number_shortest(lo, sizeof lo, min);
        number_shortest(hi, sizeof hi, max);
    } else {
        snprintf(lo, sizeof lo, "%.0f", min);
        snprintf(hi, sizeof hi, "%.0f", max);
    }
    if (max == HUGE_VAL)
        snprintf(out, cap, "%s %s", min_exclusive ? ">" : ">=", lo);
    else if (min_exclusive)
        snprintf(out, cap, "> %s and <= %s", lo, hi);
    else
        snprintf(out, cap, "%s to %s", lo, hi);
}

START_TEST(config_rejects_each_malformed_yaml_of_the_fault_matrix)
{
    static const struct {
        const char *what, *text;
        size_t len; /* 0: strlen */
        const char *expected;
    } table[] = {
        {"unclosed [", BASE "alignments:\n  lines: [1, 2\n", 0,
         "c.yaml:8:1: did not find expected ',' or ']' (while parsing a flow sequence at line 7)"},
        {"unclosed {", BASE "model: {readout_size: 8\n", 0,
         "c.yaml:7:1: did not find expected ',' or '}' (while parsing a flow mapping at line 6)"},
        {"unclosed quote", BASE "name: \"abc\n", 0,
         "c.yaml:7:1: found unexpected end of stream (while scanning a quoted scalar at line 6)"},
        {"bad indentation", BASE "model:\n  readout_size: 8\n embedding_size: 8\n", 0,
         "c.yaml:8:2: did not find expected key (while parsing a block mapping at line 1)"},
        {"tab indentation", BASE "model:\n\treadout_size: 8\n", 0,
         "c.yaml:7:1: found character that cannot start any token (while scanning for the next "
         "token at line 7)"},
        {"tab after spaces", BASE "model:\n  readout_size: 8\n\tembedding_size: 8\n", 0,
         "c.yaml:8:1: found a tab character that violates indentation (while scanning a plain "
         "scalar at line 7)"},
        {"invalid leading byte", BASE "name: \x80\n", 0,
         "c.yaml:6:7: invalid leading UTF-8 octet (byte 0x80)"},
        {"truncated sequence", BASE "name: r\xc3\n", 0,
         "c.yaml:6:9: invalid trailing UTF-8 octet (byte 0x0a)"},
        {"overlong", BASE "name: \xc0\x80\n", 0, "c.yaml:6:7: invalid length of a UTF-8 sequence"},
        {"surrogate", BASE "name: \xed\xa0\x80\n", 0,
        "c.yaml:6:7: invalid Unicode character (U+D800)"},
        {"noncharacter", BASE "name: \xef\xbf\xbe\n", 0,
         "c.yaml:6:7: control characters are not allowed (U+FFFE)"},
        {"NUL byte", BASE "name: a\0b\n", sizeof BASE + 9,
         "c.yaml:6:8: control characters are not allowed (U+0000)"},
        {"empty file", "", 0,
         "c.yaml:1:1: the config is empty (expected a mapping of sections such as model: and training:)"},
        {"comments only", "# one\n\n# two\n", 0,
         "c.yaml:1:1: the config is empty (expected a mapping of sections such as model: and training:)"},
        {"top-level list", "- data\n- model\n", 0,
         "c.yaml:1:1: expected a mapping of sections at the top level, got a list"},
        {"top-level scalar", "42\n", 0,
         "c.yaml:1:1: expected a mapping of sections at the top level, got a scalar"},
        {"anchor", BASE "model:\n  embedding_size: &m 16\n", 0,
         "c.yaml:7:19: anchors (&m) are not allowed in a config"},
        {"alias", BASE "model:\n  readout_size: *m\n", 0,
         "c.yaml:7:17: aliases (*m) are not allowed in a config"},
        {"anchored section", BASE "model: &s\n  readout_size: 8\n", 0,
         "c.yaml:6:8: anchors (&s) are not allowed in a config"},
        {"duplicate key", BASE "seed: 1\nseed: 2\n", 0,
         "c.yaml:7:1: duplicate key `seed` (first set at line 6)"},
        {"multi-document stream", BASE "---\nseed: 2\n", 0,
         "c.yaml:6:1: expected one YAML document, found a second one"},
    };
    for (size_t k = 0; k < sizeof table / sizeof *table; k++) {
        size_t len = table[k].len ? table[k].len : strlen(table[k].text);
        Error err;
        Config cfg;
        config_defaults(&cfg);
        ck_assert_msg(config_load_buffer(&cfg, table[k].text, len, "c.yaml", &err) == -1,
                      "%s: accepted", table[k].what);
        ck_assert_msg(!strcmp(err.msg, table[k].expected), "%s:\n  got      %s\n  expected %s",
                      table[k].what, err.msg, table[k].expected);
    }
}
END_TEST

/* Flow collections 10 000 deep, where a key's value, a section or the document should
 * be: refused at the first level, before libyaml reads the rest. */
START_TEST(config_rejects_nesting_ten_thousand_deep_at_its_first_level)
{
    enum { DEPTH = 10000 };
    char *text = malloc(64 + 4 * DEPTH + 2);
    char *p = text + sprintf(text, "alignments:\n  lines: ");
    for (int k = 0; k < DEPTH; k++)
        *p++ = '[';
    for (int k = 0; k < DEPTH; k++)
        *p++ = ']';
    strcpy(p, "\n");
    ck_assert_str_eq(parse(text),
                     "c.yaml:2:11: alignments.lines: expected integers in the list, got a list");
    p = text + sprintf(text, "model: ");
    for (int k = 0; k < DEPTH; k++)
        p += sprintf(p, "{a: ");
    ck_assert_str_eq(parse(text), "c.yaml:1:9: unknown key `model.a`");
    memset(text, '[', DEPTH);
    text[DEPTH] = '\0';
    ck_assert_str_eq(parse(text),
                     "c.yaml:1:1: expected a mapping of sections at the top level, got a list");
    free(text);
}
END_TEST

/* Every key, misspelt in its own section, and placed in another section. */
START_TEST(config_names_the_intended_key_for_a_typo_in_any_section)
{
    static const char *const sections[] = {"data", "model", "training", "alignments", "translate"};
    enum { N_SECTIONS = sizeof sections / sizeof *sections };
    int seen[N_SECTIONS] = {0};
    for (int k = 0; k < config_n_keys(); k++) {
        const char *path = config_key_path(k), *dot = strchr(path, '.');
        const char *name = dot ? dot + 1 : path;
        /* the typo: the second letter left out ("nme", "mx_length") */
        char typo[128], typo_path[160], text[256], expected[512];
        snprintf(typo, sizeof typo, "%c%s", name[0], name + 2);
        snprintf(typo_path, sizeof typo_path, "%.*s%s", dot ? (int)(dot - path + 1) : 0, path,
                 typo);
        if (dot)
            snprintf(text, sizeof text, "%.*s:\n  %s: 1\n", (int)(dot - path), path, typo);
        else
            snprintf(text, sizeof text, "%s: 1\n", typo);
        snprintf(expected, sizeof expected, "c.yaml:%d:%d: unknown key `%s` (did you mean `%s`?)",
                 dot ? 2 : 1, dot ? 3 : 1, typo_path, path);
        ck_assert_str_eq(parse(text), expected);
        if (!dot)
            continue;
        /* the right name in the next section */
        int s = 0;
        while (strncmp(sections[s], path, (size_t)(dot - path)) || sections[s][dot - path])
            s++;
        seen[s] = 1;
        const char *other = sections[(s + 1) % N_SECTIONS];
        snprintf(text, sizeof text, "%s:\n  %s: 1\n", other, name);
        /* a name two sections share (model.attention_mode, translate.attention_mode): the
         * first of them in the schema's order */
        const char *meant = path;
        for (int j = 0; j < k && meant == path; j++) {
            const char *pj = config_key_path(j), *dj = strchr(pj, '.');
            if (dj && !strcmp(dj + 1, name) && strncmp(pj, other, strlen(other)))
                meant = pj;
        }
        snprintf(expected, sizeof expected, "c.yaml:2:3: unknown key `%s.%s` (did you mean `%s`?)",
                 other, name, meant);
        ck_assert_str_eq(parse(text), expected);
    }
    for (int s = 0; s < N_SECTIONS; s++)
        ck_assert_msg(seen[s], "no key of section %s", sections[s]);
    ck_assert_str_eq(parse("optimizer:\n  name: adam\n"),
                     "c.yaml:1:1: unknown key `optimizer` (did you mean `training.optimizer`?)");
    ck_assert_str_eq(parse("lexicon:\n  size: 8\n"), "c.yaml:1:1: unknown key `lexicon`");
    ck_assert_str_eq(parse("trainig:\n  seed: 1\n"),
                     "c.yaml:1:1: unknown section `trainig` (did you mean `training`?)");
}
END_TEST

/* Every key given each kind of wrong value its type can meet. */
START_TEST(config_rejects_a_value_of_the_wrong_type_for_every_key)
{
    for (int k = 0; k < config_n_keys(); k++) {
        const char *path = config_key_path(k), *type = config_key_type(k);
        double min, max;
        int exclusive;
        char range[96] = "";
        if (config_key_range(k, &min, &max, &exclusive) == 0)
            range_text(k, min, max, exclusive, range, sizeof range);
        const char *values[8] = {0};
        char expected[8][512], text[256];
        const char *an = !strcmp(type, "integer") ? "an" : "a";
        int n = 0, line, col;
        key_yaml(k, "", text, sizeof text, &line, &col); /* the position is the same for all */
#define CASE(value, fmt, ...) (values[n] = (value), \
    snprintf(expected[n++], 512, "c.yaml:%d:%d: " fmt, line, col, __VA_ARGS__))
        if (!strcmp(type, "integer")) {
            CASE("abc", "%s: expected an integer (%s), got \"abc\"", path, range);
            CASE("1.5", "%s: expected an integer (%s), got \"1.5\"", path, range);
            CASE("\"\"", "%s: expected an integer, got the string \"\"", path);
            CASE("99999999999999999999",
                 "%s: expected an integer (%s), got \"99999999999999999999\"",
                 path, range);
            CASE("true", "%s: expected an integer (%s), got \"true\"", path, range);
        } else if (!strcmp(type, "number")) {
            CASE("0.1x", "%s: expected a finite number (%s), got \"0.1x\"", path, range);
            CASE(".nan", "%s: expected a finite number (%s), got \".nan\"", path, range);
            CASE("nan", "%s: expected a finite number (%s), got \"nan\"", path, range);
            CASE(".inf", "%s: expected a finite number (%s), got \".inf\"", path, range);
            CASE("1e999", "%s: expected a finite number (%s), got \"1e999\"", path, range);
            CASE("false", "%s: expected a finite number (%s), got \"false\"", path, range);
        } else if (!strcmp(type, "boolean")) {
            CASE("maybe", "%s: expected true or false, got \"maybe\"", path);
            CASE("yes", "%s: expected true or false, got \"yes\"", path);
            CASE("1", "%s: expected true or false, got \"1\"", path);
            CASE("\"true\"", "%s: expected a boolean, got the string \"true\"", path);
        } else if (!strcmp(type, "choice")) {
            CASE("\"\"", "%s: expected a choice, got the string \"\"", path);
        } else if (!strcmp(type, "list of integers")) {
            CASE("3", "%s: expected a list of integers such as [3, 17], got a scalar", path);
            CASE("{a: 1}", "%s: expected a list of integers such as [3, 17], got a mapping", path);
        }
        if (strcmp(type, "list of integers")) {
            CASE("[1]", "%s: expected %s %s, got a list", path, an, type);
            CASE("{a: 1}", "%s: expected %s %s, got a mapping", path, an, type);
        }
#undef CASE
        for (int c = 0; c < n; c++) {
            key_yaml(k, values[c], text, sizeof text, &line, &col);
            ck_assert_str_eq(parse(text), expected[c]);
        }
    }
    /* a choice outside its list names the list */
    ck_assert_str_eq(parse("data:\n  level: byte\n"),
                     "c.yaml:2:10: data.level: expected one of {word,char}, got \"byte\"");
}
END_TEST

/* Loads value for key k (from a file, and with --set) and checks the outcome: accepted,
 * or refused with the range in the message. */
static void check_boundary(int k, const char *value, int valid, const char *range)
{
    const char *path = config_key_path(k);
    char text[256], expected[700], set[256];
    int line, col;
    key_yaml(k, value, text, sizeof text, &line, &col);
    snprintf(set, sizeof set, "%s=%s", path, value);
    Config cfg;
    Error err;
    config_defaults(&cfg);
    int set_rc = config_set(&cfg, set, &err);
    if (valid) {
        ck_assert_msg(!strcmp(parse(text), ""), "%s: %s refused: %s", path, value, parse(text));
        ck_assert_msg(set_rc == 0, "--set %s refused: %s", set, err.msg);
        return;
    }
    snprintf(expected, sizeof expected, "c.yaml:%d:%d: %s: %s is out of range (expected %s)",
             line, col, path, value, range);
    ck_assert_str_eq(parse(text), expected);
    ck_assert_int_eq(set_rc, -1);
    snprintf(expected, sizeof expected, "--set %s: %s: %s is out of range (expected %s)", set, path,
             value, range);
    ck_assert_str_eq(err.msg, expected);
}

/* Every ranged key at min-1, min, max and max+1 (for numbers: the next double past each
 * end), from the schema itself, so a new key is covered when it is added. */
START_TEST(config_checks_every_range_at_both_ends)
{
    int n_ranged = 0;
    for (int k = 0; k < config_n_keys(); k++) {
        double min, max;
        int exclusive;
        if (config_key_range(k, &min, &max, &exclusive) < 0)
            continue;
        n_ranged++;
        char range[96], below[64], at_min[64], at_max[64], above[64];
        range_text(k, min, max, exclusive, range, sizeof range);
        const char *type = config_key_type(k);
        if (!strcmp(type, "list of integers")) {
            /* "section:\n  leaf: [a, b]\n": the first value at column 2 + |leaf| + 4 */
            const char *path = config_key_path(k), *leaf = strchr(path, '.') + 1;
            const int section = (int)(leaf - 1 - path), col = 2 + (int)strlen(leaf) + 4;
            char text[160], expected[300], first[32];
            snprintf(text, sizeof text, "%.*s:\n  %s: [%.0f, %.0f]\n", section, path, leaf, min,
                     max);
            ck_assert_str_eq(parse(text), "");
            snprintf(text, sizeof text, "%.*s:\n  %s: [%.0f]\n", section, path, leaf, min - 1);
            snprintf(expected, sizeof expected, "c.yaml:2:%d: %s: expected an integer from %.0f to "
                     "%.0f, got \"%.0f\"", col, path, min, max, min - 1);
            ck_assert_str_eq(parse(text), expected);
            snprintf(text, sizeof text, "%.*s:\n  %s: [%.0f, %.0f]\n", section, path, leaf, min,
                     max + 1);
            const int second = col + snprintf(first, sizeof first, "%.0f", min) + 2;
            snprintf(expected, sizeof expected, "c.yaml:2:%d: %s: expected an integer from %.0f to "
                     "%.0f, got \"%.0f\"", second, path, min, max, max + 1);
            ck_assert_str_eq(parse(text), expected);
            continue;
        }
        if (!strcmp(type, "integer")) {
            snprintf(below, sizeof below, "%.0f", min - 1);
            snprintf(at_min, sizeof at_min, "%.0f", min);
            if (max == HUGE_VAL) /* no upper limit: the largest integer is valid */
                snprintf(at_max, sizeof at_max, "%lld", LLONG_MAX);
            else
                snprintf(at_max, sizeof at_max, "%.0f", max);
            snprintf(above, sizeof above, "%.0f", max + 1);
        } else {
            /* the closest doubles outside; a subnormal would fail as "not finite" (ERANGE) */
            snprintf(below, sizeof below, "%.17g", min == 0 ? -DBL_MIN : nextafter(min, -HUGE_VAL));
            snprintf(at_min, sizeof at_min, "%.17g",
                     exclusive ? (min == 0 ? DBL_MIN : nextafter(min, HUGE_VAL)) : min);
            snprintf(at_max, sizeof at_max, "%.17g", max);
            snprintf(above, sizeof above, "%.17g", nextafter(max, HUGE_VAL));
            if (exclusive) { /* min itself is refused too */
                char exact[64];
                snprintf(exact, sizeof exact, "%.17g", min);
                check_boundary(k, exact, 0, range);
            }
        }
        check_boundary(k, below, 0, range);
        check_boundary(k, at_min, 1, range);
        check_boundary(k, at_max, 1, range);
        if (max != HUGE_VAL)
            check_boundary(k, above, 0, range);
    }
    ck_assert_int_ge(n_ranged, 40);
}
END_TEST

/* configs/README.md documents every key with the schema's own row, and nothing else. */
START_TEST(config_docs_match_the_schema)
{
    FILE *f = fopen("configs/README.md", "r");
    ck_assert_msg(f != NULL, "configs/README.md is missing");
    static char doc[1 << 16];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    doc[n] = '\0';
    fclose(f);
    int rows = 0;
    for (char *p = doc; (p = strstr(p, "\n| `")); p++)
        rows++;
    for (int k = 0; k < config_n_keys(); k++) {
        char *row = config_key_doc_row(k);
        ck_assert_msg(strstr(doc, row) != NULL, "configs/README.md lacks the row\n%s", row);
        free(row);
    }
    ck_assert_int_eq(rows, config_n_keys());
}
END_TEST

/* The fuzzer's dictionary (tests/fuzz/yaml.dict) says it holds every key and choice of
 * the schema; a key added without its entry would go unfuzzed, so hold it to that. */
START_TEST(fuzz_dictionary_names_every_key_and_choice)
{
    FILE *f = fopen("tests/fuzz/yaml.dict", "r");
    ck_assert_msg(f != NULL, "tests/fuzz/yaml.dict is missing");
    static char dict[1 << 16];
    size_t n = fread(dict, 1, sizeof dict - 1, f);
    dict[n] = '\0';
    fclose(f);
    char want[256];
    int n_choices = 0;
    for (int k = 0; k < config_n_keys(); k++) {
        const char *path = config_key_path(k);
        const char *leaf = strrchr(path, '.') ? strrchr(path, '.') + 1 : path;
        snprintf(want, sizeof want, "\"%s: \"\n", leaf);
        ck_assert_msg(strstr(dict, want), "yaml.dict lacks the key %s", path);
        snprintf(want, sizeof want, "\"%s=\"\n", path);
        ck_assert_msg(strstr(dict, want), "yaml.dict lacks the --set form %s=", path);
        if (strcmp(config_key_type(k), "choice") != 0)
            continue;
        /* the row's fourth cell lists the choices: "| `key` | choice | `def` | a,b,c | ..." */
        char *row = config_key_doc_row(k);
        char *cell = row;
        for (int bars = 0; bars < 4; bars++)
            cell = strchr(cell, '|') + 1;
        char *end = strchr(cell, '|');
        *end = '\0';
        for (char *c = strtok(cell, " ,"); c; c = strtok(NULL, " ,")) {
            snprintf(want, sizeof want, "=\"%s\"\n", c);
            ck_assert_msg(strstr(dict, want), "yaml.dict lacks the choice %s of %s", c, path);
            n_choices++;
        }
        free(row);
    }
    ck_assert_int_ge(n_choices, 10);
}
END_TEST

/* Every shipped config loads and validates. */
START_TEST(shipped_configs_load_cleanly)
{
    const char *shipped[] = {"configs/tatoeba-fr-en.yaml", "configs/tatoeba-full-fr-en.yaml",
                             "configs/multi30k-en-de.yaml", "configs/multi30k-de-en.yaml"};
    for (size_t s = 0; s < sizeof shipped / sizeof *shipped; s++) {
        Config cfg;
        Error err;
        config_defaults(&cfg);
        ck_assert_msg(config_load(&cfg, shipped[s], &err) == 0, "%s", err.msg);
        ck_assert_msg(config_validate(&cfg, &err) == 0, "%s", err.msg);
    }
}
END_TEST

Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, config_accepts_a_minimal_file_and_fills_defaults);
    tcase_add_test(tc, config_rejects_malformed_yaml_with_position);
    tcase_add_test(tc, config_rejects_empty_and_non_mapping_documents);
    tcase_add_test(tc, config_rejects_unknown_keys_with_a_suggestion);
    tcase_add_test(tc, config_rejects_duplicate_keys_and_sections);
    tcase_add_test(tc, config_rejects_wrong_types);
    tcase_add_test(tc, config_rejects_out_of_range_values_at_the_boundaries);
    tcase_add_test(tc, config_rejects_impossible_combinations);
    tcase_add_test(tc, config_rejects_shared_embeddings_without_one_vocabulary);
    tcase_add_test(tc, config_rejects_what_subwords_cannot_go_with);
    tcase_add_test(tc, config_rejects_heads_and_layers_that_do_not_fit);
    tcase_add_test(tc, config_rejects_a_name_that_is_a_path);
    tcase_add_test(tc, config_accepts_unused_keys_and_names_each);
    tcase_add_test(tc, the_default_warmup_follows_the_self_attention_layers);
    tcase_add_test(tc, config_rejects_anchors_and_aliases);
    tcase_add_test(tc, config_set_overrides_and_reports_errors);
    tcase_add_test(tc, written_config_loads_back_to_the_same_values);
    tcase_add_test(tc, config_errors_name_the_file_on_disk);
    tcase_add_test(tc, config_rejects_each_malformed_yaml_of_the_fault_matrix);
    tcase_add_test(tc, config_rejects_nesting_ten_thousand_deep_at_its_first_level);
    tcase_add_test(tc, config_names_the_intended_key_for_a_typo_in_any_section);
    tcase_add_test(tc, config_rejects_a_value_of_the_wrong_type_for_every_key);
    tcase_add_test(tc, config_checks_every_range_at_both_ends);
    tcase_add_test(tc, config_docs_match_the_schema);
    tcase_add_test(tc, fuzz_dictionary_names_every_key_and_choice);
    tcase_add_test(tc, shipped_configs_load_cleanly);
    suite_add_tcase(s, tc);
    return s;
}
