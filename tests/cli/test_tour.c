/* test_tour.c: every command of s2s once, and every model variant through every command
 * that runs a model, each run short: the tour `make valgrind` takes under valgrind
 * memcheck, CI's look at what AddressSanitizer cannot see -- reads of uninitialised
 * memory in the optimised build (src/README.md, "Where each check runs"). What the runs
 * compute is the other suites' to check; here each must exit 0 and write what it says.
 * Two tests hold the tour to its name: it runs every command `s2s --help` lists, and
 * every value of every choice and switch of the model (`s2s config --doc`) in some
 * variant. Three suites, so that they run side by side: tour_text, tour_image,
 * tour_commands. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "gen/shapes.h"
#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"

/* A model variant: --set overrides of the tour's tiny text or image setup. */
typedef struct {
    const char *sets[8];
} TourVariant;

/* Every score, cell, depth, head count, self-attention, the attention-only encoder, hard
 * attention with both rewards, dropout and label smoothing, the gate and the doubly
 * stochastic term, the tied output layer, every optimizer, averaging, shards on two
 * threads, characters and lowercasing. */
static const TourVariant TEXT[] = {
    {{NULL}},
    {{"model.attention=dot", NULL}},
    {{"model.attention=general", "model.attention_heads=2", "model.encoder_cell=lstm", NULL}},
    {{"model.attention=scaled_dot", "model.attention_heads=4", NULL}},
    {{"model.attention=none", NULL}},
    {{"model.encoder_cell=lstm", "model.decoder_cell=lstm", NULL}},
    {{"model.encoder_cell=rnn", "model.decoder_cell=rnn", "model.encoder_layers=2", NULL}},
    {{"model.self_attention_layers=2", "model.self_attention_heads=2", "model.decoder_cell=lstm",
      NULL}},
    {{"model.encoder_cell=none", "model.self_attention_layers=1", "model.attention=scaled_dot",
      NULL}},
    {{"model.encoder_cell=none", "model.self_attention_layers=1", "model.decoder_cell=none",
      "model.decoder_layers=2", "model.attention_heads=2", "model.self_attention_dropout=0.2",
      "model.embedding_dropout=0.1", NULL}},
    {{"model.attention_mode=hard", "model.attention_heads=2", "training.hard_reward=token",
      "training.hard_warmup_steps=2", NULL}},
    {{"model.attention_mode=hard", "training.hard_reward=sentence", "training.hard_warmup_steps=2",
      NULL}},
    {{"model.embedding_dropout=0.2", "model.readout_dropout=0.3", "training.label_smoothing=0.1",
      "model.self_attention_layers=1", "model.self_attention_dropout=0.2", NULL}},
    {{"model.context_gate=true", "training.doubly_stochastic=0.5", NULL}},
    {{"model.tie_output=true", "model.readout_size=8", NULL}},
    {{"training.optimizer=sgd", "training.average_last=3", "training.scheduling=none", NULL}},
    {{"training.optimizer=adadelta", "training.shards=2", "training.threads=2", NULL}},
    {{"data.level=char", "data.lowercase=true", NULL}},
    {{"data.subwords=sentencepiece", "data.subword_vocab_size=20", "data.subword_type=bpe",
      "data.subword_joint=false", NULL}},
    {{"data.subwords=sentencepiece", "data.subword_vocab_size=24", "model.share_embeddings=true",
      NULL}},
};
enum { N_TEXT = sizeof TEXT / sizeof *TEXT };

/* The image encoder: with and without grid positions (learned, and fixed sines), every
 * score's kind of key (dot needs d_h = 8 here), hard attention, a self-attention layer
 * over the cells, the gate, attention supervision on the boxes. */
static const TourVariant IMAGE[] = {
    {{"training.attention_supervision=0.5", "training.doubly_stochastic=0.5", NULL}},
    {{"model.grid_positions=false", "model.attention=dot", "model.decoder_size=8", NULL}},
    {{"model.attention_mode=hard", "training.hard_warmup_steps=2", "model.self_attention_layers=1",
      "model.context_gate=true", "model.attention_heads=2", "model.grid_position_sines=true",
      NULL}},
    {{"model.decoder_cell=none", "model.attention_heads=2", NULL}},
};
enum { N_IMAGE = sizeof IMAGE / sizeof *IMAGE };

/* The value a variant sets for key (e.g. "model.attention"), or NULL. */
static const char *value_set(const TourVariant *v, const char *key)
{
    size_t n = strlen(key);
    for (int k = 0; v->sets[k]; k++)
        if (!strncmp(v->sets[k], key, n) && v->sets[k][n] == '=')
            return v->sets[k] + n + 1;
    return NULL;
}

/* Where a command reads the sources it is given: an image model's picture paths are
 * relative to the working directory (NULL: the tests' own). */
static const char *sources_dir;

/* Runs argv (stdin from in_path, or nothing; stdout to dir/out_name, or nowhere) and fails
 * the test, with the command's stderr, unless it exits 0. */
static void run_ok(const char *dir, const char *const *argv, const char *in_path,
                   const char *out_name)
{
    char out[700], err[700];
    snprintf(out, sizeof out, "%s/%s", dir, out_name ? out_name : "out.txt");
    snprintf(err, sizeof err, "%s/err.txt", dir);
    int rc = run_command_with(argv, out_name ? out : NULL, err,
                              &(RunOptions){.in_path = in_path, .cwd = sources_dir}, NULL);
    if (rc != 0) {
        char *said = read_file(err);
        ck_abort_msg("s2s %s exited %d: %s", argv[1], rc, said);
    }
}

/* Fails unless dir/name exists and is not empty. */
static void assert_written(const char *dir, const char *name)
{
    char path[800];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = read_file(path);
    ck_assert_msg(text[0] != '\0', "%s is missing or empty", path);
    free(text);
}

/* What every model goes through after training: greedy decoding with hard links, unknown
 * words replaced and the matrices written; beam search with n-best lists, soft links and
 * the attention drawn on stderr; teacher-forced alignment (scored against gold links or
 * boxes); one step explained (and, with self-attention layers, one position of the
 * first); the training dumps drawn as text and as a page. */
static void use_the_model(const char *dir, const char *src, const char *tgt, const char *gold_opt,
                          const char *gold, bool attention, bool self_attention, bool transformer)
{
    char model[700], jsonl[700], aligned[700], dumps[700], pages[700];
    snprintf(model, sizeof model, "%s/run/checkpoints/best.ckpt", dir);
    snprintf(jsonl, sizeof jsonl, "%s/greedy.jsonl", dir);
    snprintf(aligned, sizeof aligned, "%s/forced.jsonl", dir);
    snprintf(dumps, sizeof dumps, "%s/run/alignments.jsonl", dir);
    snprintf(pages, sizeof pages, "%s/pages", dir);
    const char *s2s = s2s_absolute(); /* for a run in sources_dir */
    if (!attention) {
        const char *beam[] = {s2s, "translate", "--model", model, "--beam", "3", "--n-best", "2",
                              NULL};
        run_ok(dir, beam, src, "beam.txt");
        assert_written(dir, "beam.txt");
        return;
    }
    /* words only: a picture has no word to put for <unk> */
    const char *greedy[] = {s2s, "translate", "--model", model, "--beam", "1", "--alignment",
                            "hard", "--out-alignments", jsonl, sources_dir ? NULL : "--unk-replace",
                            NULL};
    run_ok(dir, greedy, src, "greedy.txt");
    assert_written(dir, "greedy.jsonl");
    const char *beam[] = {s2s, "translate", "--model", model, "--beam", "3", "--n-best", "2",
                          "--alignment", "soft", "--show-attention", NULL};
    run_ok(dir, beam, src, "beam.txt");
    assert_written(dir, "beam.txt");
    const char *align[] = {s2s, "align", "--model", model, "--src", src, "--tgt", tgt, gold_opt,
                           gold, "--out", aligned, NULL};
    const char *cwd = sources_dir;
    sources_dir = NULL; /* align reads pictures relative to its --src file */
    run_ok(dir, align, NULL, "links.txt");
    sources_dir = cwd;
    assert_written(dir, "forced.jsonl");
    const char *explain[] = {s2s, "explain", "--model", model, "--step", "1", "--format", "json",
                             NULL};
    run_ok(dir, explain, src, "explain.json");
    assert_written(dir, "explain.json");
    if (self_attention) {
        const char *self[] = {s2s, "explain", "--model", model, "--self", "1", "--step", "1",
                              "--format", "html", NULL};
        run_ok(dir, self, src, "explain.html");
        assert_written(dir, "explain.html");
    }
    if (transformer) {
        const char *dec_self[] = {s2s, "explain", "--model", model, "--dec-self", "2", "--step",
                                  "1", "--format", "html", NULL};
        run_ok(dir, dec_self, src, "explain-dec.html");
        assert_written(dir, "explain-dec.html");
    }
    const char *text[] = {s2s, "heatmap", dumps, "--format", "txt", NULL};
    run_ok(dir, text, NULL, "heatmap.txt");
    assert_written(dir, "heatmap.txt");
    const char *page[] = {s2s, "heatmap", dumps, "--format", "html", "--out", pages, NULL};
    run_ok(dir, page, NULL, NULL);
    assert_written(pages, "report.html");
}

/* s2s train on config with the variant's overrides and the tour's own (short: six steps,
 * validated, dumped and drawn every three, the test set translated). */
static void train_ok(const char *dir, const char *config, const TourVariant *v,
                     const char *const *tour)
{
    const char *argv[48] = {S2S, "train", config};
    int a = 3;
    for (int k = 0; tour[k]; k++) {
        argv[a++] = "--set";
        argv[a++] = tour[k];
    }
    for (int k = 0; v->sets[k]; k++) {
        argv[a++] = "--set";
        argv[a++] = v->sets[k];
    }
    argv[a] = NULL;
    run_ok(dir, argv, NULL, NULL);
    assert_written(dir, "run/test.hyp");
    assert_written(dir, "run/checkpoints/best.ckpt");
}

START_TEST(every_text_variant_trains_translates_aligns_and_explains)
{
    const TourVariant *v = &TEXT[_i];
    char dir[512], name[32], config[600], src[600], tgt[600], gold[600], sets[4][640];
    snprintf(name, sizeof name, "tour-text%d", _i);
    scratch_dir(dir, sizeof dir, name);
    write_tiny_setup(dir);
    snprintf(config, sizeof config, "%s/tiny.yaml", dir);
    snprintf(src, sizeof src, "%s/valid.src", dir);
    snprintf(tgt, sizeof tgt, "%s/valid.tgt", dir);
    snprintf(gold, sizeof gold, "%s/valid.align", dir);
    snprintf(sets[0], sizeof sets[0], "data.test_src=%s", src);
    snprintf(sets[1], sizeof sets[1], "data.test_tgt=%s", tgt);
    snprintf(sets[2], sizeof sets[2], "data.valid_align=%s", gold);
    snprintf(sets[3], sizeof sets[3], "data.test_align=%s", gold);
    const char *tour[] = {"training.max_steps=6", "training.valid_every=3", "alignments.every=3",
                          sets[0], sets[1], sets[2], sets[3], NULL};
    train_ok(dir, config, v, tour);
    const char *score = value_set(v, "model.attention"), *layers = value_set(v, "model.self_attention_layers");
    /* gold links are for words: a character model aligns without them */
    const bool chars = value_set(v, "data.level") != NULL;
    use_the_model(dir, src, tgt, chars ? "--threshold" : "--gold", chars ? "0.3" : gold,
                  !score || strcmp(score, "none"), layers != NULL,
                  value_set(v, "model.decoder_cell") && !strcmp(value_set(v, "model.decoder_cell"), "none"));
}
END_TEST

/* dir/shapes: 24 training scenes; its first 4 validation scenes as dir/v.*; dir/img.yaml
 * a tiny image model on them. */
static void write_image_tour(const char *dir)
{
    char shapes[600], path[700], text[8192];
    snprintf(shapes, sizeof shapes, "%s/shapes", dir);
    Error err;
    ck_assert_msg(shapes_write(shapes, 24, 7, NULL, &err) == 0, "%s", err.msg);
    static const char *const ext[] = {"src", "tgt", "ground"};
    for (int e = 0; e < 3; e++) {
        snprintf(path, sizeof path, "%s/valid.%s", shapes, ext[e]);
        char *lines = read_file(path), *end = lines;
        for (int k = 0; k < 4; k++)
            end = strchr(end, '\n') + 1;
        *end = '\0';
        snprintf(path, sizeof path, "%s/v.%s", shapes, ext[e]);
        write_file(path, lines);
        free(lines);
    }
    snprintf(path, sizeof path, "%s/img.yaml", dir);
    snprintf(text, sizeof text,
             "name: img\nrun_dir: %s/run\n"
             "data:\n  train_src: %s/train.src\n  train_tgt: %s/train.tgt\n"
             "  train_ground: %s/train.ground\n"
             "  valid_src: %s/v.src\n  valid_tgt: %s/v.tgt\n  valid_ground: %s/v.ground\n"
             "  test_src: %s/v.src\n  test_tgt: %s/v.tgt\n  test_ground: %s/v.ground\n"
             "  image_size: 16\n"
             "model:\n  encoder: image\n  conv_channels: [4, 8]\n  embedding_size: 8\n"
             "  decoder_size: 16\n  attention_size: 8\n  readout_size: 16\n"
             "training:\n  batch_size: 8\n  epochs: 0\n  log_every: 1\n  threads: 1\n"
             "  learning_rate: 0.01\n"
             "alignments:\n  probes: 2\n"
             "translate:\n  beam_size: 2\n",
             dir, shapes, shapes, shapes, shapes, shapes, shapes, shapes, shapes, shapes);
    write_file(path, text);
}

START_TEST(every_image_variant_trains_captions_aligns_and_explains)
{
    const TourVariant *v = &IMAGE[_i];
    char dir[512], name[32], config[600], src[600], tgt[600], ground[600];
    snprintf(name, sizeof name, "tour-image%d", _i);
    scratch_dir(dir, sizeof dir, name);
    write_image_tour(dir);
    snprintf(config, sizeof config, "%s/img.yaml", dir);
    snprintf(src, sizeof src, "%s/shapes/v.src", dir);
    snprintf(tgt, sizeof tgt, "%s/shapes/v.tgt", dir);
    snprintf(ground, sizeof ground, "%s/shapes/v.ground", dir);
    const char *tour[] = {"training.max_steps=4", "training.valid_every=2", "alignments.every=2",
                          NULL};
    train_ok(dir, config, v, tour);
    char shapes[600];
    snprintf(shapes, sizeof shapes, "%s/shapes", dir);
    sources_dir = shapes; /* translate and explain read the pictures v.src names from there */
    use_the_model(dir, src, tgt, "--ground", ground, true,
                  value_set(v, "model.self_attention_layers") != NULL, false);
    sources_dir = NULL;
}
END_TEST

/* Every value of every choice and switch of the model section (and the data level, the
 * subword units and the optimizer), as `s2s config --doc` lists them, is one some variant of the tour
 * trains: a new kind of model cannot escape the tour. */
START_TEST(the_tour_trains_every_choice_of_the_model)
{
    char dir[512], doc_path[600];
    scratch_dir(dir, sizeof dir, "tour-choices");
    const char *argv[] = {S2S, "config", "--doc", NULL};
    run_ok(dir, argv, NULL, "doc.md");
    snprintf(doc_path, sizeof doc_path, "%s/doc.md", dir);
    char *doc = read_file(doc_path);
    int keys = 0;
    for (char *line = strtok(doc, "\n"); line; line = strtok(NULL, "\n")) {
        /* | `model.attention` | choice | `additive` | additive,dot,... | what it is | */
        char key[64], type[32], def[64], values[256];
        if (sscanf(line, "| `%63[^`]` | %31[^ |] | `%63[^`]` | %255[^ |] |", key, type, def,
                   values) < 3)
            continue;
        const bool choice = !strcmp(type, "choice"), boolean = !strcmp(type, "boolean");
        if ((!choice && !boolean) ||
            (strncmp(key, "model.", 6) && strcmp(key, "data.level") &&
             strncmp(key, "data.subword", 12) &&
             strcmp(key, "training.optimizer") && strcmp(key, "training.hard_reward")))
            continue;
        if (boolean)
            strcpy(values, "true,false");
        keys++;
        for (char *value = values, *next; value; value = next) {
            next = strchr(value, ',');
            if (next)
                *next++ = '\0';
            bool found = false;
            for (int t = 0; t < N_TEXT + N_IMAGE && !found; t++) {
                const TourVariant *v = t < N_TEXT ? &TEXT[t] : &IMAGE[t - N_TEXT];
                const char *set = value_set(v, key);
                const char *image_default = !strcmp(key, "model.encoder") ? "image" : NULL;
                const char *is = set ? set : t >= N_TEXT && image_default ? image_default : def;
                found = !strcmp(is, value);
            }
            ck_assert_msg(found, "no variant of the tour trains %s: %s (tests/cli/test_tour.c)",
                          key, value);
        }
    }
    ck_assert_int_ge(keys, 10); /* the table was read */
    free(doc);
}
END_TEST

/* Each command `s2s --help` lists, and the help of each. */
START_TEST(every_command_runs)
{
    char dir[512], path[700], config[600], corpus[600], run[600];
    scratch_dir(dir, sizeof dir, "tour-commands");
    const char *version[] = {S2S, "--version", NULL};
    run_ok(dir, version, NULL, "version.txt");
    const char *help[] = {S2S, "--help", NULL};
    run_ok(dir, help, NULL, "help.txt");
    snprintf(path, sizeof path, "%s/help.txt", dir);
    char *listed = read_file(path);
    char *at = strstr(listed, "commands:\n");
    ck_assert_ptr_nonnull(at);
    int commands = 0;
    /* "  train      train a model: ..." up to the blank line */
    for (at = strchr(at, '\n') + 1; at[0] == ' ' && at[1] == ' '; at = strchr(at, '\n') + 1) {
        char command[32];
        ck_assert_int_eq(sscanf(at, " %31s", command), 1);
        const char *its_help[] = {S2S, command, "--help", NULL};
        run_ok(dir, its_help, NULL, "command-help.txt");
        assert_written(dir, "command-help.txt");
        ck_assert_msg(strstr("train gradcheck corpus translate align heatmap explain eval bench "
                             "config tokenize", command) != NULL,
                      "`s2s %s` is not in the tour (tests/cli/test_tour.c): give it a run", command);
        commands++;
    }
    ck_assert_int_eq(commands, 11);
    free(listed);

    /* corpus: a text task; the pictures' one is tour_image's (shapes_write) */
    snprintf(corpus, sizeof corpus, "%s/toy", dir);
    const char *make_corpus[] = {S2S, "corpus", "toy-fr", "--out", corpus, "--size", "50", NULL};
    run_ok(dir, make_corpus, NULL, NULL);
    assert_written(corpus, "train.align");
    /* tokenize, words and characters */
    snprintf(path, sizeof path, "%s/train.src", corpus);
    const char *words[] = {S2S, "tokenize", "--lowercase", NULL};
    run_ok(dir, words, path, "tokens.txt");
    assert_written(dir, "tokens.txt");
    const char *chars[] = {S2S, "tokenize", "--level", "char", NULL};
    run_ok(dir, chars, path, "chars.txt");
    /* eval: every metric, by length (the test set's references against the validation's:
     * any lines do) */
    char hyp[700], ref[700];
    snprintf(hyp, sizeof hyp, "%s/valid.tgt", corpus);
    snprintf(ref, sizeof ref, "%s/test.tgt", corpus);
    snprintf(path, sizeof path, "%s/valid.src", corpus);
    const char *eval[] = {S2S, "eval", "--hyp", hyp, "--ref", ref, "--metric", "bleu", "--metric",
                          "chrf", "--metric", "exact", "--lowercase", "--src", path,
                          "--by-length", "5", NULL};
    run_ok(dir, eval, NULL, "scores.txt");
    assert_written(dir, "scores.txt");
    /* config: the defaults (the table is tour_text's) */
    write_tiny_setup(dir);
    snprintf(config, sizeof config, "%s/tiny.yaml", dir);
    const char *defaults[] = {S2S, "config", NULL};
    run_ok(dir, defaults, NULL, "config.yaml");
    assert_written(dir, "config.yaml");
    /* gradcheck on the tiny model */
    const char *gradcheck[] = {S2S, "gradcheck", config, "--samples", "4", NULL};
    run_ok(dir, gradcheck, NULL, "gradcheck.txt");
    /* train, then resume it to more steps */
    const char *first[] = {S2S, "train", config, "--set", "training.max_steps=4", NULL};
    run_ok(dir, first, NULL, NULL);
    snprintf(run, sizeof run, "%s/run", dir);
    const char *resume[] = {S2S, "train", config, "--resume", run, "--set",
                            "training.max_steps=8", NULL};
    run_ok(dir, resume, NULL, NULL);
    /* heatmap's SVGs of every step */
    snprintf(path, sizeof path, "%s/run/alignments.jsonl", dir);
    snprintf(corpus, sizeof corpus, "%s/svg", dir);
    const char *svg[] = {S2S, "heatmap", path, "--step", "all", "--out", corpus, NULL};
    run_ok(dir, svg, NULL, NULL);
    /* explain's worked examples */
    static const char *const examples[] = {"dot", "general", "qkv"};
    for (int k = 0; k < 3; k++) {
        const char *example[] = {S2S, "explain", "--example", examples[k], "--format",
                                 k == 2 ? "html" : "text", NULL};
        run_ok(dir, example, NULL, "example.txt");
        assert_written(dir, "example.txt");
    }
    /* bench: a few training steps, and decoding */
    const char *bench[] = {S2S, "bench", "--steps", "2", "--warmup", "1", "--batch", "4",
                           "--threads", "1", NULL};
    run_ok(dir, bench, NULL, "bench.txt");
    const char *decode[] = {S2S, "bench", "--translate", "--beam", "2", "--steps", "1", "--batch",
                            "2", "--threads", "1", NULL};
    run_ok(dir, decode, NULL, "bench-translate.txt");
}
END_TEST

/* three suites: the text models (~150 processes), the image models, the commands */
Suite *tour_text_suite(void)
{
    Suite *s = suite_create("tour_text");
    TCase *tc = tcase_create("text");
    tcase_set_timeout(tc, 120); /* a variant: about 2 s, a minute under valgrind */
    tcase_add_loop_test(tc, every_text_variant_trains_translates_aligns_and_explains, 0, N_TEXT);
    tcase_add_test(tc, the_tour_trains_every_choice_of_the_model);
    suite_add_tcase(s, tc);
    return s;
}

Suite *tour_image_suite(void)
{
    Suite *s = suite_create("tour_image");
    TCase *tc = tcase_create("image");
    tcase_set_timeout(tc, 180);
    tcase_add_loop_test(tc, every_image_variant_trains_captions_aligns_and_explains, 0, N_IMAGE);
    suite_add_tcase(s, tc);
    return s;
}

Suite *tour_commands_suite(void)
{
    Suite *s = suite_create("tour_commands");
    TCase *tc = tcase_create("commands");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, every_command_runs);
    suite_add_tcase(s, tc);
    return s;
}
