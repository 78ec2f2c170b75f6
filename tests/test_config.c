/* test_config.c: the config loader: every kind of error with its exact message and
 * position, defaults, --set, the round trip through the written config, and the
 * sync between the schema and configs/README.md. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "suites.h"

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
    ck_assert_str_eq(load("- a\n- b\n"), "c.yaml:1:1: expected a mapping of sections at the top level, got a list");
    ck_assert_str_eq(load("hello\n"), "c.yaml:1:1: expected a mapping of sections at the top level, got a scalar");
    ck_assert_str_eq(load(BASE "---\nseed: 2\n"), "c.yaml:6:1: expected one YAML document, found a second one");
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
    ck_assert_str_eq(load(BASE "model:\n  zzzzzzzz: 1\n"), "c.yaml:7:3: unknown key `model.zzzzzzzz`");
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
    ck_assert_str_eq(load("data:\n  train_src: a\n"), "c.yaml:2:14: data.train_src: needs data.train_tgt too");
    ck_assert_str_eq(load(BASE "  train_tsv: x.tsv\n"),
                     "c.yaml:6:14: data.train_tsv: give either train_src and train_tgt or train_tsv, not both");
    ck_assert_str_eq(load(BASE "training:\n  epochs: 0\n"),
                     "c.yaml:7:11: training.epochs: training would never stop: set training.max_steps, "
                     "training.epochs or training.max_time");
    ck_assert_str_eq(load("data:\n  train_tsv: t.tsv\ntraining:\n  early_stopping: 3\n"),
                     "c.yaml:4:19: training.early_stopping needs a validation set (data.valid_src and "
                     "data.valid_tgt, or data.valid_tsv)");
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
    ck_assert_str_eq(err.msg, "--set training: expected KEY=VALUE, e.g. --set training.batch_size=64");
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
    free(yaml);
}
END_TEST

START_TEST(config_errors_name_the_file_on_disk)
{
    Config cfg;
    Error err;
    config_defaults(&cfg);
    ck_assert_int_eq(config_load(&cfg, "tests/data/bad_hidden.yaml", &err), -1);
    ck_assert_str_eq(err.msg, "tests/data/bad_hidden.yaml:9:17: model.encoder_size: expected an "
                              "integer (1 to 8192), got \"abc\"");
    ck_assert_int_eq(config_load(&cfg, "tests/data/missing.yaml", &err), -1);
    ck_assert_str_eq(err.msg, "cannot open config `tests/data/missing.yaml`: No such file or directory");
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

/* Every shipped config loads and validates. */
START_TEST(shipped_configs_load_cleanly)
{
    const char *shipped[] = {"configs/tatoeba-fr-en.yaml"};
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
    tcase_add_test(tc, config_rejects_anchors_and_aliases);
    tcase_add_test(tc, config_set_overrides_and_reports_errors);
    tcase_add_test(tc, written_config_loads_back_to_the_same_values);
    tcase_add_test(tc, config_errors_name_the_file_on_disk);
    tcase_add_test(tc, config_docs_match_the_schema);
    tcase_add_test(tc, shipped_configs_load_cleanly);
    suite_add_tcase(s, tc);
    return s;
}
